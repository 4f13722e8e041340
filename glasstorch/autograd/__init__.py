"""``torch.autograd``: reverse-mode automatic differentiation.

Where things live:

    variable_type.py  the autograd kernels generated from derivatives.yaml (record)
    graph.py          Node, AccumulateGrad, SavedVariable, saved-tensor hooks
    engine.py         the backward pass (dependency counting, ready queue)
    variable.py       a tensor's autograd state: requires_grad, grad_fn, views, hooks
    view_nodes.py     CopySlices and view grad_fn regeneration
    formulas/         helpers the derivatives.yaml formulas call
    grad_mode.py      no_grad, enable_grad, set_grad_enabled, inference_mode
    function.py       custom autograd.Function
    anomaly_mode.py   detect_anomaly
    gradcheck.py      finite-difference checks
    functional.py     jacobian, hessian, vjp, jvp, hvp, vhp of whole functions
    graph_viz.py      make_dot: the graph drawn as DOT and SVG (torchviz's API, built in)

``backward`` and ``grad`` below turn tensors into root edges and seeds and hand
them to the engine.
"""
from __future__ import annotations

from .._tensor import Tensor
from . import graph  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled, \
    is_anomaly_check_nan_enabled  # noqa: F401
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                        is_grad_enabled, is_inference_mode_enabled, set_multithreading_enabled,
                        enforce_grad_layout_policy)
from .variable import gradient_edge, requires_grad as _requires_grad

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "detect_anomaly", "set_detect_anomaly", "Variable"]


class _ImperativeEngine:
    """``torch._C._ImperativeEngine``: the engine as Python code reaches it,
    ``Variable._execution_engine``."""

    @staticmethod
    def queue_callback(callback) -> None:
        from .engine import queue_callback
        queue_callback(callback)


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``torch.autograd.Variable``: the pre-0.4 wrapper.  Every tensor is an
    instance; calling it returns ``data.detach()`` with ``requires_grad`` set."""

    _execution_engine = _ImperativeEngine()

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        import warnings
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        if data is None:
            from .. import empty
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            from .variable import _set_requires_grad
            _set_requires_grad(out, True, "requires_grad")
        return out


def _tensor_or_tensors_to_tuple(tensors, length):
    if tensors is None:
        return (None,) * length
    if isinstance(tensors, Tensor):
        return (tensors,)
    return tuple(tensors)


def _make_grads(outputs, grads, is_grads_batched=False):
    """Seeds for the roots: ``ones_like`` for one-element outputs, checked
    shapes for given ones (PyTorch's errors otherwise)."""
    from .. import ones_like, preserve_format
    new_grads = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        if isinstance(grad, Tensor):
            if (grad._shape[1:] if is_grads_batched else grad._shape) != out._shape:
                if is_grads_batched:
                    # (sic: PyTorch's message drops the first two dims of the grad's shape)
                    raise RuntimeError(
                        f"If `is_grads_batched=True`, we interpret the first dimension of each "
                        f"grad_output as the batch dimension. The sizes of the remaining "
                        f"dimensions are expected to match the shape of corresponding output, "
                        f"but a mismatch was detected: grad_output[{i}] has a shape of "
                        f"{grad.shape[2:]} and output[{i}] has a shape of {out.shape}. If you only "
                        f"want some tensors in `grad_output` to be considered batched, consider "
                        f"using vmap.")
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {grad.shape} and "
                    f"output[{i}] has a shape of {out.shape}.")
            if out.dtype.is_complex != grad.dtype.is_complex:
                raise RuntimeError(
                    f"For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {grad.dtype} "
                    f"and output[{i}] has a dtype of {out.dtype}.")
            new_grads.append(grad)
        elif grad is None:
            if _requires_grad(out):
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out.dtype.category < 2:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                       f"outputs but got {out.dtype}")
                new_grads.append(ones_like(out, memory_format=preserve_format))
            else:
                new_grads.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(grad).__name__}")
    return tuple(new_grads)


def _root_edges(outputs):
    edges = []
    for i, out in enumerate(outputs):
        if not _requires_grad(out):
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               f"a grad_fn")
        edges.append(gradient_edge(out))
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves."""
    from .engine import execute
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _make_grads(tensors, _tensor_or_tensors_to_tuple(grad_tensors, len(tensors)))
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_edges(tensors)
    input_edges = None
    if inputs is not None:
        input_edges = []
        for t in inputs:
            t.retain_grad()     # a non-leaf input's .grad is filled as retain_grad does
            input_edges.append(_input_edge(t))
    if create_graph:
        _warn_create_graph_cycle()
    execute(roots, list(grads), retain_graph, create_graph, input_edges, accumulate_grad=True)


_warned_create_graph = []


def _warn_create_graph_cycle() -> None:
    """PyTorch warns once per process (TORCH_WARN_ONCE in Engine::execute)."""
    if not _warned_create_graph:
        _warned_create_graph.append(True)
        import warnings
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak. (Triggered internally at "
            "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)", UserWarning,
            stacklevel=3)


def _input_edge(t):
    if not _requires_grad(t):
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return gradient_edge(t)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad``
    untouched)."""
    from .engine import execute
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    is_tensor_input = isinstance(inputs, Tensor)
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    inputs = (inputs,) if is_tensor_input else tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _make_grads(outputs, _tensor_or_tensors_to_tuple(grad_outputs, len(outputs)),
                        is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_edges(outputs)
    input_edges = [_input_edge(t) for t in inputs]

    def run_backward(seeds):
        return execute(roots, list(seeds), retain_graph, create_graph, input_edges,
                       accumulate_grad=False)

    result = list(_vmap_backward(run_backward, grads) if is_grads_batched
                  else run_backward(grads))
    for i, g in enumerate(result):
        if g is None:
            if materialize_grads:
                from .. import zeros_like
                result[i] = zeros_like(inputs[i])
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   f"been used in the graph. Set allow_unused=True if this is "
                                   f"the desired behavior.")
    return tuple(result)


def _vmap_backward(run_backward, grads):
    """``is_grads_batched=True``: one backward pass under vmap, the first dim of
    every grad_output being the batch dim (PyTorch vmaps its engine call the
    same way).  vmap returns only tensors, so the unused inputs' ``None`` are
    noted during the call and put back after it."""
    from .._functorch.apis import vmap
    unused = []

    def vjp(batched_grads):
        result = run_backward(batched_grads)
        unused[:] = [g is None for g in result]
        return tuple(g for g in result if g is not None)

    used = iter(vmap(vjp)(grads))
    return tuple(None if is_unused else next(used) for is_unused in unused)


from .function import (Function, FunctionCtx, InplaceFunction, NestedIOFunction,  # noqa: E402,F401
                       once_differentiable)
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: E402,F401
from .engine import is_checkpoint_valid as _is_checkpoint_valid  # noqa: E402,F401
from . import function  # noqa: E402,F401
from . import forward_ad  # noqa: E402,F401
from . import functional  # noqa: E402,F401


def __getattr__(name):
    """``make_dot`` (graph_viz.py) is loaded on first use: most programs never draw."""
    if name == "make_dot":
        from .graph_viz import make_dot
        return make_dot
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
