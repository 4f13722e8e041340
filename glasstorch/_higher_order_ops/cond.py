"""``torch.cond`` and ``torch.ops.higher_order.cond``.

The operator's layers, in the order PyTorch's dispatch reaches them:

* autograd: an operand needs a gradient, so the call is one autograd node
  (``CondAutogradOp``) whose backward is again a ``cond``, over the branches'
  backward functions (each computes its branch's vector-Jacobian product);
* make_fx tracing (``ProxyTorchDispatchMode`` on the stack, as AOTAutograd
  traces): both branches are traced into subgraphs ``true_graph_0`` /
  ``false_graph_0`` on the graph's root, and one ``cond`` node calls them;
* FakeTensors: no value to choose by, so the true branch gives the outputs'
  metadata (both branches return alike, as Dynamo checked);
* real tensors: an ``if``.
"""
from __future__ import annotations

import functools

from . import HigherOrderOperator

__all__ = ["cond", "cond_op"]


def _cond_op(pred, true_fn, false_fn, operands):
    """The graph's form: the chosen branch (a function returning a tuple) on the operands."""
    from ..autograd.grad_mode import is_grad_enabled
    from .._tensor import Tensor
    if not isinstance(pred, Tensor):
        return (true_fn if pred else false_fn)(*operands)
    if is_grad_enabled() and any(isinstance(o, Tensor) and o.requires_grad for o in operands):
        return _cond_autograd().apply(pred, true_fn, false_fn, *operands)
    tracer, pre_dispatch = _proxy_mode()
    if tracer is not None:
        return _trace(tracer, pre_dispatch, pred, true_fn, false_fn, operands)
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
    return cond_op(pred, true_fn, false_fn, tuple(operands))


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
            outputs = _as_tuple(branch(*inputs))
            found = autograd.grad(outputs, inputs, grads, allow_unused=True)
        return [g if g is not None else zeros_like(o) for g, o in zip(found, operands)]
    return backward


def _as_tuple(out) -> tuple:
    from .._tensor import Tensor
    return (out,) if isinstance(out, Tensor) else tuple(out)


@functools.cache
def _cond_autograd():
    """The autograd.Function, made on first use (the autograd package imports
    this module's parents)."""
    from .._tensor import Tensor
    from ..autograd.function import Function
    from ..autograd.grad_mode import no_grad

    class CondAutogradOp(Function):
        """``cond`` as one autograd node: its backward is a ``cond`` too."""

        @staticmethod
        def forward(ctx, pred, true_fn, false_fn, *operands):
            ctx.pred, ctx.branches = pred, (true_fn, false_fn)
            ctx.save_for_backward(*operands)
            with no_grad():
                out = cond_op(pred, true_fn, false_fn, operands)
            return out if isinstance(out, Tensor) else tuple(out)

        @staticmethod
        def backward(ctx, *grads):
            operands = ctx.saved_tensors
            true_fn, false_fn = ctx.branches
            count = len(operands)
            found = cond_op(ctx.pred, _backward_of(true_fn, count),
                            _backward_of(false_fn, count), (*operands, *grads))
            return (None, None, None, *found)
    return CondAutogradOp


# -- tracing --------------------------------------------------------------------------

def _proxy_mode():
    """(make_fx's tracer, whether it traces at the PreDispatch key) when its
    mode is active (export's pre-dispatch stack first), else (None, False)."""
    from .._dispatcher.pre_dispatch import current_pre_dispatch_modes
    from ..fx.experimental.proxy_tensor import ProxyTorchDispatchMode
    from ..utils._python_dispatch import _get_current_dispatch_mode_stack
    for modes, pre_dispatch in ((current_pre_dispatch_modes(), True),
                                (_get_current_dispatch_mode_stack(), False)):
        for mode in reversed(modes):
            if isinstance(mode, ProxyTorchDispatchMode):
                return mode.tracer, pre_dispatch
    return None, False


def _is_fake(tensor) -> bool:
    from .._subclasses.fake_tensor import FakeTensor
    return isinstance(tensor, FakeTensor)


def _trace(tracer, pre_dispatch: bool, pred, true_fn, false_fn, operands):
    """Both branches as subgraphs of the graph being traced (at the same level:
    pre-dispatch for export), and one ``cond`` node; the outputs are the true
    branch's, on FakeTensors."""
    from .._dispatcher.pre_dispatch import no_pre_dispatch_modes
    from ..fx.experimental.proxy_tensor import _track_outputs, make_fx
    from ..utils._python_dispatch import _disable_current_modes
    single = []
    with _disable_current_modes(), no_pre_dispatch_modes():   # traced on their own
        graphs = [make_fx(_positional(fn, single), pre_dispatch=pre_dispatch)(*operands)
                  for fn in (true_fn, false_fn)]
    operands = tuple(operands) + _lift_closures(graphs, tracer)
    names = [tracer.node_of(o).name for o in operands]
    for gm in graphs:
        gm.graph.eliminate_dead_code()
        _clone_returned_inputs(gm)
        if pre_dispatch:      # export names a branch's inputs after the operands
            for node, name in zip([n for n in gm.graph.nodes if n.op == "placeholder"], names):
                node.target = name
                node._rename(name)
        gm.recompile()
    i = 0
    while hasattr(tracer.root, f"true_graph_{i}") or hasattr(tracer.root, f"false_graph_{i}"):
        i += 1
    with _disable_current_modes(), no_pre_dispatch_modes():    # recorded by hand here
        attrs = []
        for name, gm in zip((f"true_graph_{i}", f"false_graph_{i}"), graphs):
            setattr(tracer.root, name, gm)
            attrs.append(tracer.graph.get_attr(name))
        node = tracer.graph.create_node(
            "call_function", cond_op, (tracer.to_arg(pred), *attrs,
                                       tuple(tracer.to_arg(operands))), name="cond")
        with tracer.fake_mode:
            out = graphs[0](*operands)
        _track_outputs(tracer, out, node)
    return out[0] if single[0] else out


def _lift_closures(graphs, tracer) -> tuple:
    """Tensors a branch reads from outside its operands (a module's parameters,
    under export) that the outer trace knows: each becomes one more operand and
    a placeholder of every branch, instead of a constant of the subgraph."""
    lifted = []
    for gm in graphs:
        for node in gm.graph.nodes:
            if node.op == "get_attr":
                value = getattr(gm, node.target)
                known = tracer.tensor_tracker.get(id(value))
                if known is not None and known[0]() is value and \
                        all(v is not value for v in lifted):
                    lifted.append(value)
    lifted.sort(key=lambda t: tracer.node_of(t).name)     # in name order, as PyTorch lifts
    for gm in graphs:
        graph = gm.graph
        last = [n for n in graph.nodes if n.op == "placeholder"][-1]
        count = sum(1 for n in graph.nodes if n.op == "placeholder")
        added = []
        with graph.inserting_after(last):
            for k in reversed(range(len(lifted))):
                added.insert(0, graph.placeholder(f"arg{count + k}_1"))
        for node in list(graph.nodes):
            if node.op == "get_attr":
                value = getattr(gm, node.target)
                index = next((k for k, v in enumerate(lifted) if v is value), None)
                if index is not None:
                    added[index].meta = dict(node.meta)
                    node.replace_all_uses_with(added[index])
                    graph.erase_node(node)
                    delattr(gm, node.target)
    return tuple(lifted)


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


def _positional(fn, single: list):
    """``fn`` taking ``*args`` (its traced placeholders are ``arg0_1, arg1_1...``)
    and returning a tuple; ``single`` notes whether ``fn`` returned one tensor."""
    def branch(*args):
        from .._tensor import Tensor
        out = fn(*args)
        single.append(isinstance(out, Tensor))
        return (out,) if single[-1] else out      # a list stays a list, as PyTorch's
    return branch
