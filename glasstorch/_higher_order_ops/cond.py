"""``torch.cond`` and ``torch.ops.higher_order.cond``.

The operator's layers, in the order PyTorch's dispatch reaches them:

* autograd: an operand needs a gradient, so the call is one autograd node
  (``_CondAutograd``) whose backward is again a ``cond``, over the branches'
  backward functions (each computes its branch's vector-Jacobian product);
* make_fx tracing (``ProxyTorchDispatchMode`` on the stack, as AOTAutograd
  traces): both branches are traced into subgraphs ``true_graph_0`` /
  ``false_graph_0`` on the graph's root, and one ``cond`` node calls them;
* FakeTensors: no value to choose by, so the true branch gives the outputs'
  metadata (both branches return alike, as Dynamo checked);
* real tensors: an ``if``.
"""
from __future__ import annotations

from . import HigherOrderOperator

__all__ = ["cond", "cond_op"]


def _cond_op(pred, true_fn, false_fn, operands):
    """The graph's form: the chosen branch (a function returning a tuple) on the operands."""
    from ..autograd.grad_mode import is_grad_enabled
    from .._tensor import Tensor
    if not isinstance(pred, Tensor):
        return (true_fn if pred else false_fn)(*operands)
    if is_grad_enabled() and any(isinstance(o, Tensor) and o.requires_grad for o in operands):
        return _CondAutograd.apply(pred, true_fn, false_fn, *operands)
    tracer = _proxy_mode()
    if tracer is not None:
        return _trace(tracer, pred, true_fn, false_fn, operands)
    if _is_fake(pred):
        return true_fn(*operands)
    return (true_fn if bool(pred) else false_fn)(*operands)


cond_op = HigherOrderOperator("cond", _cond_op)


def cond(pred, true_fn, false_fn, operands=()):
    """``torch.cond``: ``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``."""
    from .._tensor import Tensor
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
    elif not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    return (true_fn if bool(pred) else false_fn)(*operands)


# -- autograd -----------------------------------------------------------------------

def _backward_of(branch, count: int):
    """The branch's backward: ``(*operands, *grads) -> [d operands]`` for its
    ``count`` operands, the branch run again with autograd and differentiated
    (a zero where an operand does not reach the outputs)."""
    def backward(*args):
        from .. import autograd, zeros_like
        from ..autograd.grad_mode import enable_grad
        operands, grads = args[:count], args[count:]
        with enable_grad():
            inputs = [o.detach().requires_grad_() if not o.requires_grad else o
                      for o in operands]
            outputs = [o for o in branch(*inputs)]
            found = autograd.grad(outputs, inputs, grads, allow_unused=True)
        return [g if g is not None else zeros_like(o) for g, o in zip(found, operands)]
    return backward


def _make_autograd():
    from ..autograd.function import Function
    from ..autograd.grad_mode import no_grad

    class CondAutogradOp(Function):
        """``cond`` as one autograd node: its backward is a ``cond`` too."""

        @staticmethod
        def forward(ctx, pred, true_fn, false_fn, *operands):
            ctx.pred, ctx.branches = pred, (true_fn, false_fn)
            ctx.save_for_backward(*operands)
            with no_grad():
                return tuple(cond_op(pred, true_fn, false_fn, operands))

        @staticmethod
        def backward(ctx, *grads):
            operands = ctx.saved_tensors
            true_fn, false_fn = ctx.branches
            count = len(operands)
            found = cond_op(ctx.pred, _backward_of(true_fn, count),
                            _backward_of(false_fn, count), (*operands, *grads))
            return (None, None, None, *found)
    return CondAutogradOp


class _LazyAutograd:
    """The autograd.Function, made on first use (the autograd package imports
    this module's parents)."""

    def apply(self, *args):
        global _CondAutograd
        _CondAutograd = _make_autograd()
        return _CondAutograd.apply(*args)


_CondAutograd = _LazyAutograd()


# -- tracing --------------------------------------------------------------------------

def _proxy_mode():
    """make_fx's tracer when its mode is on the dispatch stack, else None."""
    from ..fx.experimental.proxy_tensor import ProxyTorchDispatchMode
    from ..utils._python_dispatch import _get_current_dispatch_mode_stack
    for mode in reversed(_get_current_dispatch_mode_stack()):
        if isinstance(mode, ProxyTorchDispatchMode):
            return mode.tracer
    return None


def _is_fake(tensor) -> bool:
    from .._subclasses.fake_tensor import FakeTensor
    return isinstance(tensor, FakeTensor)


def _trace(tracer, pred, true_fn, false_fn, operands):
    """Both branches as subgraphs of the graph being traced, and one ``cond``
    node; the outputs are the true branch's, on FakeTensors."""
    from ..fx.experimental.proxy_tensor import _track_outputs, make_fx
    from ..utils._python_dispatch import _disable_current_modes
    with _disable_current_modes():           # the branches are traced on their own
        graphs = [make_fx(_positional(fn))(*operands) for fn in (true_fn, false_fn)]
    for gm in graphs:
        gm.graph.eliminate_dead_code()
        _clone_returned_inputs(gm)
        gm.recompile()
    i = 0
    while hasattr(tracer.root, f"true_graph_{i}") or hasattr(tracer.root, f"false_graph_{i}"):
        i += 1
    attrs = []
    for name, gm in zip((f"true_graph_{i}", f"false_graph_{i}"), graphs):
        setattr(tracer.root, name, gm)
        attrs.append(tracer.graph.get_attr(name))
    node = tracer.graph.create_node(
        "call_function", cond_op, (tracer.to_arg(pred), *attrs, tuple(tracer.to_arg(operands))),
        name="cond")
    with _disable_current_modes(), tracer.fake_mode:
        out = graphs[0](*operands)
    _track_outputs(tracer, out, node)
    return out


def _clone_returned_inputs(gm) -> None:
    """A branch returning one of its inputs returns a copy: a cond's outputs
    never alias its operands (PyTorch's branches clone them the same way)."""
    from .. import ops
    graph = gm.graph
    output = next(n for n in graph.nodes if n.op == "output")
    values = list(output.args[0])
    with graph.inserting_before(output):
        for i, value in enumerate(values):
            if getattr(value, "op", None) == "placeholder":
                values[i] = graph.create_node("call_function", ops.aten.clone.default,
                                              (value,), name="clone")
                values[i].meta = dict(value.meta)
    output.args = (type(output.args[0])(values),)


def _positional(fn):
    """``fn`` taking ``*args``, so its traced placeholders are ``arg0_1, arg1_1...``."""
    def branch(*args):
        return fn(*args)
    return branch
