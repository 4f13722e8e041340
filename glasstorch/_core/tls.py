"""Thread-local dispatch state (c10/core/impl/LocalDispatchKeySet.h, GradMode).

Every thread has its own included/excluded key sets and mode flags; two
threads never see each other's state.  The defaults mirror PyTorch:

    included  = {BackendSelect, ADInplaceOrView}
    excluded  = {every Autocast key}      (autocast is opt-in per thread)

A call's key set is ``((union of tensor keys) | included) & ~excluded``; the
excluded set never holds backend bits (removal clears functionality bits
only), so a backend can never be excluded.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from . import dispatch_key as dk

DEFAULT_INCLUDED = dk.BACKEND_SELECT | dk.ADINPLACEORVIEW
DEFAULT_EXCLUDED = dk.AUTOCAST_KEYS


class _State(threading.local):
    """Per-thread fields; class attributes are each new thread's defaults."""

    included = DEFAULT_INCLUDED
    excluded = DEFAULT_EXCLUDED
    grad_enabled = True
    grad_layout_enforced = True  # autograd.enforce_grad_layout_policy
    inference_mode = False
    default_devices = ()
    # Python extension points (torch/csrc/utils/torch_dispatch_mode.h,
    # torch_function_mode.h, DisableTorchFunction): the mode stacks, innermost last,
    # and whether __torch_function__ handling is on (ENABLED), off for subclasses
    # only (SUBCLASSES_DISABLED) or off entirely (ALL_DISABLED).
    function_modes = ()
    dispatch_modes = ()
    pre_dispatch_modes = ()      # export's tracer at the PreDispatch key
    functorch_layers = ()        # the active transforms, innermost last (_functorch/pyfunctorch.py)
    torch_function = 0


TORCH_FUNCTION_ENABLED, SUBCLASSES_DISABLED, ALL_DISABLED = 0, 1, 2


class _Overrides:
    """Process-wide: can any ``__torch_function__`` override be live?  True once
    a Tensor subclass with its own handler exists or a TorchFunctionMode is on
    some thread's stack.  Until then public functions skip the per-argument
    check (the same answer, found without looking)."""

    on = False
    subclasses = False
    modes = 0

    def refresh(self) -> None:
        self.on = self.subclasses or self.modes > 0


overrides = _Overrides()


state = _State()


@contextmanager
def include_keys(bits: int):
    """``c10::impl::IncludeDispatchKeyGuard``: add keys to this thread's included set."""
    prev = state.included
    state.included = prev | bits
    try:
        yield
    finally:
        state.included = prev


@contextmanager
def exclude_keys(bits: int):
    """``c10::impl::ExcludeDispatchKeyGuard``: add keys to this thread's excluded set."""
    prev = state.excluded
    state.excluded = prev | (bits & ~dk.BACKEND_MASK)   # backends can't be excluded
    try:
        yield
    finally:
        state.excluded = prev


def push_default_device(device) -> None:
    state.default_devices = state.default_devices + (device,)


def pop_default_device() -> None:
    state.default_devices = state.default_devices[:-1]


def default_device():
    """The device factories use when none is given (``with torch.device(...)``)."""
    devices = state.default_devices
    return devices[-1] if devices else None
