"""``torch.amp.GradScaler``: loss scaling for mixed-precision training
(torch/amp/grad_scaler.py).

float16 gradients underflow; multiplying the loss by a large scale S before
backward keeps them representable, and dividing them by S before the step
gives the true gradients back.  One iteration::

    scaler.scale(loss).backward()   # loss * S
    scaler.unscale_(opt)            # optional: grads * (1/S), found_inf if any inf/NaN
    clip_grad_norm_(...)            #   (so clipping sees true gradients)
    scaler.step(opt)                # unscale_ if not done; opt.step() only if no inf/NaN
    scaler.update()                 # S * backoff after an inf/NaN; S * growth after
                                    # growth_interval clean steps in a row

The two steps that touch every gradient or the scale are aten ops,
``_amp_foreach_non_finite_check_and_unscale_`` and ``_amp_update_scale_``
(kernels in ``_ops/kernels/amp.py``), so the dispatcher sees them.  The scale
lives in a 0-dim float32 tensor and the count of clean steps in a 0-dim int32
tensor, created on the first ``scale()`` call on the outputs' device.
"""
from __future__ import annotations

import inspect
import warnings
from collections import abc, defaultdict
from enum import Enum

import glasstorch as torch

__all__ = ["OptState", "GradScaler"]


class _MultiDeviceReplicator:
    """One tensor, copied lazily to each device that asks for it."""

    def __init__(self, master_tensor) -> None:
        self.master = master_tensor
        self._per_device_tensors: dict = {}

    def get(self, device):
        retval = self._per_device_tensors.get(device)
        if retval is None:
            retval = self.master.to(device=device, non_blocking=True, copy=True)
            self._per_device_tensors[device] = retval
        return retval


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale the loss, unscale and check the gradients, skip steps whose gradients
    overflowed, and adapt the scale (see the module docstring)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and torch.cuda.amp.amp_definitely_not_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev) -> None:
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = torch.full((), self._init_scale, dtype=torch.float32, device=dev)
        self._growth_tracker = torch.full((), self._init_growth_tracker, dtype=torch.int32,
                                          device=dev)

    def scale(self, outputs):
        """Multiply a tensor, or the tensors of nested lists/tuples/iterables, by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, torch.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        stash: list = []   # one replicator of the scale, made on the first tensor met

        def apply_scale(val):
            if isinstance(val, torch.Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                return type(val)(iterable) if isinstance(val, (list, tuple)) else iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16: bool) -> dict:
        """Unscale every gradient of ``optimizer`` in place, one op call per
        (device, dtype) group; returns found_inf per device."""
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        grads_by_device_dtype = defaultdict(lambda: defaultdict(list))
        with torch.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, torch.Tensor):
                        raise AssertionError(
                            f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype == torch.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grad = param.grad
                    grads_by_device_dtype[grad.device][grad.dtype].append(grad)
            for device, grads_by_dtype in grads_by_device_dtype.items():
                for grads in grads_by_dtype.values():
                    torch._amp_foreach_non_finite_check_and_unscale_(
                        grads, per_device_found_inf.get(device), per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale (at most once per ``update()``)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, then rounded once to float32
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = torch.full((), 0.0, dtype=torch.float32, device=self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` on unscaled gradients, skipped if any was inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._step_with_optimizer_scaling(optimizer, optimizer_state, args, kwargs)
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def _step_with_optimizer_scaling(self, optimizer, optimizer_state, args, kwargs):
        """An optimizer that unscales and skips by itself (``_step_supports_amp_scaling``,
        fused optimizers) gets ``grad_scale`` and ``found_inf`` attributes for one step
        (or, old protocol, the scaler as a ``grad_scaler`` keyword)."""
        has_grad_scaler_kwarg = "grad_scaler" in inspect.signature(optimizer.step).parameters
        if has_grad_scaler_kwarg:
            warnings.warn(
                "GradScaler is going to stop passing itself as a keyword argument to the passed "
                "optimizer. In the near future GradScaler registers `grad_scale: Tensor` and "
                "`found_inf: Tensor` to the passed optimizer and let the optimizer use them "
                "directly.", FutureWarning, stacklevel=3)
            kwargs.update({"grad_scaler": self})
        else:
            if optimizer_state["stage"] is OptState.READY:
                self._check_inf_per_device(optimizer)
            scaler = self._get_scale_async()
            found_inf = sum(t.to(scaler.device, non_blocking=True)
                            for t in optimizer_state["found_inf_per_device"].values())
            optimizer.grad_scale = (getattr(optimizer, "grad_scale", None)
                                    if optimizer_state["stage"] == OptState.UNSCALED
                                    else scaler * getattr(optimizer, "grad_scale", 1))
            optimizer.found_inf = found_inf
        retval = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        if not has_grad_scaler_kwarg:
            del optimizer.grad_scale
            del optimizer.found_inf
        return retval

    def update(self, new_scale=None) -> None:
        """Adapt the scale from this iteration's inf checks (or set it to ``new_scale``)
        and forget the per-optimizer state."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=_scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for found_inf in found_infs[1:]:
                found_inf_combined += found_inf
            torch._amp_update_scale_(_scale, _growth_tracker, found_inf_combined,
                                     self._growth_factor, self._backoff_factor,
                                     self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self) -> float:
        """The scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            scale = self._get_scale_async()
            return self._init_scale if scale is None else scale.item()
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else self._growth_tracker.item())
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval``,
        ``_growth_tracker`` (empty when disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            # Pickling the tensors would drag their device along; store the numbers.
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer) -> dict:
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = torch.full((), 1.0, dtype=torch.float32, device=_scale.device)
        found_inf = torch.full((), 0.0, dtype=torch.float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = \
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer) -> dict:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
