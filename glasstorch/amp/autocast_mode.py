"""``torch.autocast`` / ``torch.amp.autocast``: the context manager and
decorator that turns autocast on for a region (torch/amp/autocast_mode.py).

    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = model(x)          # mm, linear, conv... run in bfloat16; losses in float32

Entering saves this thread's autocast settings for the device, enables the
device's Autocast key (``autocast_state``), sets the dtype, increments the
nesting depth and sets the cache flag; exiting clears the weight-cast cache
if it leaves the outermost region and restores the saved settings.  So regions
nest, and an inner ``autocast(..., enabled=False)`` switches autocast off for
its own extent only.  The kernels that do the casting are in
``autocast_kernels.py``.
"""
from __future__ import annotations

import collections.abc
import functools
import warnings

import numpy as np

from .._core.dtype import bfloat16, float16, float64
from .._tensor import Tensor
from ..fx.node import has_side_effect
from . import autocast_state as _state
from .autocast_state import is_autocast_available

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd",
           "custom_bwd"]


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


class autocast:
    """Run a region (``with``) or a function (decorator) in mixed precision on
    ``device_type``: ops on the autocast lists run in ``dtype`` (default
    ``torch.get_autocast_dtype(device_type)``: bfloat16 on CPU, float16 on CUDA)
    or in float32, as their policy says.  The state is thread-local."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = _state.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{self.device}'")
        self._cache_enabled = (_state.is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled:
            if self.device == "cuda":
                from .cuda_amp import amp_definitely_not_available
                if amp_definitely_not_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in (bfloat16, float16):
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _state.is_autocast_cache_enabled()
        self.prev = _state.is_autocast_enabled(self.device)
        self.prev_fastdtype = _state.get_autocast_dtype(self.device)
        _state.set_autocast_enabled(self.device, self._enabled)
        _state.set_autocast_dtype(self.device, self.fast_dtype)
        _state.autocast_increment_nesting()
        _state.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if _state.autocast_decrement_nesting() == 0:
            _state.clear_autocast_cache()
        _state.set_autocast_enabled(self.device, self.prev)
        _state.set_autocast_dtype(self.device, self.prev_fastdtype)
        _state.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")
        return autocast_decorator(self, func)


@has_side_effect
def _enter_autocast(*args):
    """Enter an autocast region and return it: how a graph captured from a
    ``with torch.autocast(...)`` block opens it (``_exit_autocast`` closes it)."""
    mode = autocast(*args)
    mode.__enter__()
    return mode


@has_side_effect
def _exit_autocast(mode) -> None:
    mode.__exit__(None, None, None)


def _cast(value, device_type: str, dtype):
    """Cast the eligible floating tensors found in ``value`` (nested lists,
    tuples, dicts) to ``dtype``; strings and arrays pass through."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def warn_deprecated_alias(old: str, new: str) -> None:
    """The FutureWarning of a ``torch.cpu.amp`` / ``torch.cuda.amp`` spelling,
    attributed to the line that called the deprecated constructor or function."""
    warnings.warn(f"`{old}` is deprecated. Please use `{new}` instead.", FutureWarning,
                  stacklevel=3)


def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate a custom ``Function.forward``: with ``cast_inputs`` set and
    autocast on, the inputs are cast to it and ``forward`` runs with autocast off;
    either way ``custom_bwd`` will rerun backward under forward's autocast state."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _state.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _state.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = _state.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom ``Function.backward`` to run under the autocast state
    its ``forward`` ran under (recorded by ``custom_fwd``)."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
