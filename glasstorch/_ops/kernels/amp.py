"""GradScaler's two ops (aten/src/ATen/native/cpu/AmpGradScalerKernels.cpp,
and the meta rules of torch/_meta_registrations.py).

    _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        every grad *= inv_scale, in place; found_inf = 1.0 if any element of any
        grad was inf or NaN (found_inf is never reset here: the caller zeroes it)
    _amp_update_scale_(scale, growth_tracker, found_inf, growth, backoff, interval)
        after an inf/NaN: scale *= backoff, tracker = 0; else tracker += 1, and on
        reaching ``interval``: scale *= growth (kept only if finite), tracker = 0

float16/bfloat16 grads are unscaled in float32 and rounded back, as PyTorch's
CPU loop does; an ``inv_scale`` of exactly 1.0 leaves the values untouched.
"""
from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from . import kernel
from ._common import _not_implemented


def _check(condition, message: str) -> None:
    """TORCH_CHECK: PyTorch's RuntimeError when ``condition`` fails."""
    if not condition:
        raise RuntimeError(message)


@kernel("amp_foreach_non_finite_check_and_unscale_cpu")
def amp_foreach_non_finite_check_and_unscale_cpu(self, found_inf, inv_scale):
    if len(self) == 0:
        return None
    _check(inv_scale.device.type == "cpu", "inv_scale must be a CPU tensor.")
    _check(found_inf.device.type == "cpu", "found_inf must be a CPU tensor.")
    _check(inv_scale.numel() == 1, "inv_scale must be a 1-element tensor.")
    _check(found_inf.numel() == 1, "found_inf must be a 1-element tensor.")
    _check(inv_scale.dtype is dt.float32, "inv_scale must be a float tensor.")
    _check(found_inf.dtype is dt.float32, "found_inf must be a float tensor.")
    inv = inv_scale._np().reshape(-1)[0]          # a float32 scalar
    for grad in self:
        _check(grad.device.type == "cpu", "one of scaled_grads was not a CPU tensor.")
        if not grad.dtype.is_floating_point:
            raise _not_implemented("_amp_foreach_non_finite_check_and_unscale_cpu", grad.dtype)
        values = grad._np()
        opmath = values.astype(np.float32) if grad.dtype in (dt.float16, dt.bfloat16) else values
        if not np.isfinite(opmath).all():
            found_inf._np().flat[0] = 1.0
        if inv != 1.0:
            with np.errstate(over="ignore", invalid="ignore"):
                values[...] = opmath * inv.astype(opmath.dtype)
    return None


@kernel("amp_foreach_non_finite_check_and_unscale_meta")
def amp_foreach_non_finite_check_and_unscale_meta(self, found_inf, inv_scale):
    _check(found_inf.numel() == 1, "found_inf must be a 1-element tensor.")
    _check(inv_scale.numel() == 1, "inv_scale must be a 1-element tensor.")
    _check(found_inf.dtype.is_floating_point, "found_inf must be a float tensor.")
    _check(inv_scale.dtype.is_floating_point, "inv_scale must be a float tensor.")
    return None


@kernel("amp_update_scale_cpu")
def amp_update_scale_cpu(self, growth_tracker, found_inf, scale_growth_factor,
                         scale_backoff_factor, growth_interval):
    _check(growth_tracker.device.type == "cpu", "growth_tracker must be a CPU tensor.")
    _check(self.device.type == "cpu", "current_scale must be a CPU tensor.")
    _check(found_inf.device.type == "cpu", "found_inf must be a CPU tensor.")
    _check(growth_tracker.numel() == 1, "growth_tracker must be a 1-element tensor.")
    _check(self.numel() == 1, "current_scale must be a 1-element tensor.")
    _check(found_inf.numel() == 1, "found_inf must be a 1-element tensor.")
    _check(growth_tracker.dtype is dt.int32, "growth_tracker must be an int tensor.")
    _check(self.dtype is dt.float32, "current_scale must be a float tensor.")
    _check(found_inf.dtype is dt.float32, "found_inf must be a float tensor.")
    scale, tracker = self._np(), growth_tracker._np()
    # The products are taken in double and rounded to float when stored, as in C++.
    with np.errstate(over="ignore"):
        if found_inf._np().flat[0]:
            scale.flat[0] = np.float32(float(scale.flat[0]) * scale_backoff_factor)
            tracker.flat[0] = 0
        else:
            successful = int(tracker.flat[0]) + 1
            if successful == growth_interval:
                new_scale = np.float32(float(scale.flat[0]) * scale_growth_factor)
                if np.isfinite(new_scale):
                    scale.flat[0] = new_scale
                tracker.flat[0] = 0
            else:
                tracker.flat[0] = successful
    return self


@kernel("amp_update_scale_meta")
def amp_update_scale_meta(self, growth_tracker, found_inf, scale_growth_factor,
                          scale_backoff_factor, growth_interval):
    return self
