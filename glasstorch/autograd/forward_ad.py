"""``torch.autograd.forward_ad``: forward-mode automatic differentiation
(torch/autograd/forward_ad.py over the C++ halves forward_grad.cpp,
autograd_meta.cpp and VariableTypeManual's ``_make_dual``/``_fw_primal``).

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)

A dual tensor is a tensor with a tangent stored in its autograd metadata for
the current level (``variable.ForwardGrad``).  The autograd kernels
(``variable_type._dual``) give each op's outputs the tangent its forward
formula computes from the inputs' (``derivatives.yaml``'s ``result:`` entries).
Exiting the level forgets every tangent made in it.  As in PyTorch 2.13,
only one level can be active at a time.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from .._tensor import Tensor
from . import variable
from .grad_mode import _DecoratorContextManager
from .variable import fw_grad, fw_grad_mode, has_fw_grad, set_fw_grad

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current_level = -1


def enter_dual_level() -> int:
    """Enter a new forward grad level; it becomes the default level."""
    global _current_level
    new_level = variable.enter_dual_level()
    if new_level != _current_level + 1:
        raise RuntimeError("Entering a new forward AD level but the current level is not valid. "
                           "Make sure you did not modify it directly.")
    _current_level = new_level
    return new_level


def exit_dual_level(*, level=None) -> None:
    """Exit the last level entered, deleting the tangents it holds."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    variable.exit_dual_level(level)
    _current_level = level - 1


def make_dual(tensor, tangent, *, level=None):
    """A new tensor aliasing ``tensor`` whose tangent is ``tangent`` (kept
    as-is when laid out as ``tensor``, copied otherwise).  Backward
    differentiable: gradients reach ``tensor``."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if level != 0:
        raise RuntimeError("Invalid level given to _make_dual")
    if fw_grad(tensor, level) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    dual = tensor.view(tensor.shape)
    with _set_fwd_grad_enabled(False):
        set_fw_grad(dual, tangent, level, False)
    return dual


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal and the tangent (or None)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    """``(primal, tangent)``: the primal is a view of ``tensor`` carrying no
    tangent (backward differentiable), the tangent is stored one as-is."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if level != 0 and has_fw_grad(tensor):
        raise RuntimeError("Invalid level given to _fw_primal")
    tangent = fw_grad(tensor, level)
    with _set_fwd_grad_enabled(False):
        primal = tensor.view(tensor.shape)
    primal._meta_for_write().no_fw_view = True
    return UnpackedDualTensor(primal, tangent)


class dual_level(_DecoratorContextManager):
    """``with dual_level():`` enter a forward AD level, exit it afterwards
    (its tangents are then forgotten).  Levels do not nest."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        exit_dual_level()


def _is_fwd_grad_enabled() -> bool:
    """``torch._C._is_fwd_grad_enabled``: this thread's forward grad mode."""
    return fw_grad_mode.enabled


class _set_fwd_grad_enabled(_DecoratorContextManager):
    """Turn forward AD on or off in this thread (custom Functions and
    functorch use it; off, tensors read as having no tangent)."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = fw_grad_mode.enabled
        fw_grad_mode.enabled = self.mode

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        fw_grad_mode.enabled = self.prev
