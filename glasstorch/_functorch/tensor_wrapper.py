"""TensorWrapper: what a function under ``grad`` (or ``vjp``, ``jacrev`` ...) sees
(functorch's TensorWrapper; it prints as ``GradTrackingTensor``).

A wrapper holds a ``value`` from the level below and carries *its own*
autograd metadata: ``requires_grad``, ``grad_fn``, the graph recorded at its
level.  Nested ``grad(grad(f))`` gives each level its own wrappers, so each
level's autograd graph is separate and the inner one can be differentiated by
the outer one, which is how functorch avoids confusing its levels.

    grad(f)(x):  level 1 wraps x -> w (requires_grad);  f(w) is recorded on
                 wrappers; the values below are computed by the next level.

A wrapper whose level has ended is *dead*: ops on it see its value (the
FuncTorchGradWrapper fallback unwraps it).
"""
from __future__ import annotations

from .._core import dispatch_key as dk
from .._core.dispatch_key import DispatchKey
from .._tensor import Tensor, _disabled_torch_function_impl
from .batched_tensor import make_transform_tensor

__all__ = ["TensorWrapper", "wrap_at", "unwrap_at", "is_wrapped_at"]

_GRAD_WRAPPER_KEY = dk.key_bits(DispatchKey.FuncTorchGradWrapper)


class TensorWrapper(Tensor):
    """``value`` seen from grad level ``level``, with its own autograd metadata.
    ``immutable``: a tensor the function captured rather than received (in-place
    ops on it are refused)."""

    __torch_function__ = _disabled_torch_function_impl   # a C++ tensor in PyTorch: no override

    def __repr__(self, *, tensor_contents=None):
        inner = repr(self._value).replace("\n", "\n    ")
        return f"GradTrackingTensor(lvl={self._level}, value=\n    {inner}\n)"


def wrap_at(value: Tensor, interpreter, immutable: bool = False) -> TensorWrapper:
    """``value`` as a tensor of ``interpreter``'s grad level (alive while it is)."""
    out = make_transform_tensor(TensorWrapper, value, value._shape, value._stride,
                                _GRAD_WRAPPER_KEY)
    out._value = value
    out._level = interpreter.level()
    out._immutable = immutable
    out._alive = interpreter.alive
    return out


def is_wrapped_at(tensor, level: int) -> bool:
    return isinstance(tensor, TensorWrapper) and tensor._level == level


def unwrap_at(tensor, level: int):
    """The value under a wrapper of ``level``; anything else unchanged."""
    if isinstance(tensor, TensorWrapper) and tensor._level == level:
        return tensor._value
    return tensor
