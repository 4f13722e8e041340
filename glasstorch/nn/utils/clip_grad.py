"""``torch.nn.utils.clip_grad``: gradient clipping by total norm or by value.

As PyTorch, by default (``foreach=None``) and with ``foreach=True`` the norms
and the scaling are one ``_foreach_norm`` / ``_foreach_mul_`` per device and
dtype (kernels/foreach.py: one op per tensor underneath); ``foreach=False``
calls ``linalg.vector_norm`` and ``mul_`` per gradient.  The values are the same.
"""
from __future__ import annotations

import functools
import types
import warnings

from ... import clamp, stack, tensor
from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...linalg import vector_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with no_grad():
            return func(*args, **kwargs)
    return wrapper


def _grads_of(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _grouped_by_device_and_dtype(tensors) -> list:
    """The tensors in groups of one (device, dtype), groups in order of first appearance."""
    groups: dict = {}
    for t in tensors:
        groups.setdefault((t.device, t.dtype), []).append(t)
    return list(groups.values())


def _foreach(foreach, device) -> bool:
    """PyTorch's choice: the foreach ops by default and when asked, where the
    device has them (CPU does: one op per tensor)."""
    if device.type != "cpu":
        if foreach:
            raise RuntimeError(f"foreach=True was passed, but can't use the foreach API on "
                               f"{device.type} tensors")
        return False
    return foreach is None or bool(foreach)


@_no_grad
def _get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """The ``norm_type``-norm of all the tensors' values taken together."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    first_device = tensors[0].device
    norms = []
    for group in _grouped_by_device_and_dtype(tensors):
        if _foreach(foreach, group[0].device):
            norms.extend(ops.aten._foreach_norm.Scalar(group, norm_type))
        else:
            norms.extend(vector_norm(t, norm_type) for t in group)
    total_norm = vector_norm(stack([norm.to(first_device) for norm in norms]), norm_type)
    if error_if_nonfinite and (total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def _clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None) -> None:
    """Scale the gradients by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = _grads_of(parameters)
    max_norm = float(max_norm)
    if not grads:
        return
    clip_coef_clamped = clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for group in _grouped_by_device_and_dtype(grads):
        coef = clip_coef_clamped.to(group[0].device)
        if _foreach(foreach, group[0].device):
            ops.aten._foreach_mul_.Tensor(group, coef)
        else:
            for g in group:
                g.mul_(coef)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None) -> Tensor:
    """Scale the gradients so that their total norm is at most ``max_norm``;
    returns the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    total_norm = _get_total_norm(_grads_of(parameters), norm_type, error_if_nonfinite, foreach)
    _clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for grad in _grads_of(parameters):
        grad.clamp_(min=-clip_value, max=clip_value)
