"""Autocast's state: on/off, dtype, nesting, the weight-cast cache (the
``at::autocast`` functions of ``aten/src/ATen/autocast_mode.cpp``, bound in
PyTorch as ``torch.is_autocast_enabled``, ``torch.set_autocast_dtype`` ...).

"Autocast is enabled for device D" means nothing more than: D's Autocast key
(AutocastCPU, AutocastCUDA ...) is *not* in this thread's excluded key set.
Every tensor carries its device's Autocast key, and the key is excluded by
default, so turning autocast on is removing one bit from ``tls.excluded``;
from then on ops with an autocast kernel dispatch to it first.

Per thread, as in PyTorch: the enabled flags (the TLS key sets), the dtype per
device, the nesting depth of ``autocast`` regions and the cache flag.  The
cast cache itself is one process-wide dict, as in 2.13 (there behind a mutex;
here each dict operation is atomic already): a weight cast in one thread can be
reused by another, and any thread leaving its outermost region clears it.
"""
from __future__ import annotations

import threading
import warnings

from .._core import dispatch_key as dk
from .._core.device import device as _device
from .._core.dtype import bfloat16, dtype as _dtype, float16
from .._core.tls import state as _tls

__all__ = ["is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
           "is_autocast_available"]

# The device types autocast supports (torch._C._autocast_supported_devices()),
# with the Autocast dispatch key each one toggles.
AUTOCAST_KEYS = {
    "cpu": "AutocastCPU", "cuda": "AutocastCUDA", "mtia": "AutocastMTIA",
    "maia": "AutocastMAIA", "xpu": "AutocastXPU", "ipu": "AutocastIPU", "hpu": "AutocastHPU",
    "xla": "AutocastXLA", "privateuseone": "AutocastPrivateUse1", "mps": "AutocastMPS",
}
KEY_BITS = {dev: dk.key_bits(dk.DispatchKey[key]) for dev, key in AUTOCAST_KEYS.items()}

# Each thread starts from these lower-precision dtypes (c10's per-DeviceType table;
# hip has a dtype but no autocast key).  Other device types have none until one is set.
DEFAULT_DTYPES = {
    "cpu": bfloat16, "cuda": float16, "hip": float16, "xla": bfloat16, "xpu": float16,
    "mps": float16, "hpu": bfloat16, "ipu": float16, "mtia": float16, "maia": bfloat16,
    "privateuseone": float16,
}


class _AutocastTLS(threading.local):
    """This thread's autocast settings (the enabled flags live in ``tls.excluded``)."""

    nesting = 0
    cache_enabled = True

    def __init__(self):
        self.dtypes = dict(DEFAULT_DTYPES)


state = _AutocastTLS()

# The weight-cast cache: id(source) -> (weakref to the source, cast tensor).  An id can be
# reused once its tensor dies, so a hit also checks the weakref still names the same
# tensor (PyTorch's weakref to the TensorImpl keeps its address from being reused).
cast_cache: dict = {}


def _device_type(device_type, fn_name: str, position: int = 1) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"{fn_name}(): argument 'device_type' (position {position}) must be "
                        f"str, not {type(device_type).__name__}")
    return _device(device_type).type


def _key_bit(device_type: str) -> int:
    bit = KEY_BITS.get(device_type)
    if bit is None:
        raise RuntimeError("unknown device type for autocast in "
                           "get_autocast_dispatch_key_from_device_type")
    return bit


def is_autocast_available(device_type: str) -> bool:
    """``torch.amp.is_autocast_available``: whether autocast exists for this device type."""
    return _device_type(device_type, "_is_autocast_available") in AUTOCAST_KEYS


def is_autocast_enabled(device_type=None) -> bool:
    """``torch.is_autocast_enabled(device_type)``; with no argument, CUDA (the old API)."""
    if device_type is None:
        device_type = "cuda"
    return not _tls.excluded & _key_bit(_device_type(device_type, "is_autocast_enabled"))


def set_autocast_enabled(*args, **kwargs) -> None:
    """``torch.set_autocast_enabled(device_type, enabled)``, or ``(enabled)`` for CUDA."""
    names = ("device_type", "enabled") if len(args) + len(kwargs) == 2 else ("enabled",)
    bound = dict(zip(names, args), **kwargs)
    if sorted(bound) != sorted(names):
        raise TypeError("set_autocast_enabled() received an invalid combination of arguments - "
                        "expected (str device_type, bool enabled) or (bool enabled)")
    enabled = bound["enabled"]
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' (position {len(names)}) must "
                        f"be bool, not {type(enabled).__name__}")
    device_type = "cuda"
    if "device_type" in bound:
        device_type = _device_type(bound["device_type"], "set_autocast_enabled")
    bit = _key_bit(device_type)
    _tls.excluded = _tls.excluded & ~bit if enabled else _tls.excluded | bit


def get_autocast_dtype(device_type):
    """``torch.get_autocast_dtype``: the lower-precision dtype this thread uses for the device."""
    result = state.dtypes.get(_device_type(device_type, "get_autocast_dtype"))
    if result is None:
        raise RuntimeError("unsupported scalarType")
    return result


def set_autocast_dtype(device_type, dtype) -> None:
    device_type = _device_type(device_type, "set_autocast_dtype")
    if not isinstance(dtype, _dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    state.dtypes[device_type] = dtype


def is_autocast_cache_enabled() -> bool:
    return state.cache_enabled


def set_autocast_cache_enabled(enabled) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    state.cache_enabled = enabled


def clear_autocast_cache() -> None:
    """Drop every cached weight cast (done when the outermost ``autocast`` exits)."""
    cast_cache.clear()


def autocast_increment_nesting() -> int:
    state.nesting += 1
    return state.nesting


def autocast_decrement_nesting() -> int:
    state.nesting -= 1
    return state.nesting


# -- the per-device spellings PyTorch still ships, each warning once per call --------

def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def _deprecated_device_functions(device_type: str, name: str) -> dict:
    """``is_autocast_<name>_enabled`` and friends for one device type."""
    def is_enabled() -> bool:
        _deprecated(f"is_autocast_{name}_enabled()", f"is_autocast_enabled('{device_type}')")
        return is_autocast_enabled(device_type)

    def set_enabled(enabled) -> None:
        _deprecated(f"set_autocast_{name}_enabled(enabled)",
                    f"set_autocast_enabled('{device_type}', enabled)")
        set_autocast_enabled(device_type, enabled)

    def get_dtype():
        _deprecated(f"get_autocast_{name}_dtype()", f"get_autocast_dtype('{device_type}')")
        return get_autocast_dtype(device_type)

    def set_dtype(dtype) -> None:
        _deprecated(f"set_autocast_{name}_dtype(dtype)",
                    f"set_autocast_dtype('{device_type}', dtype)")
        set_autocast_dtype(device_type, dtype)

    functions = {f"is_autocast_{name}_enabled": is_enabled,
                 f"set_autocast_{name}_enabled": set_enabled,
                 f"get_autocast_{name}_dtype": get_dtype,
                 f"set_autocast_{name}_dtype": set_dtype}
    if name == "gpu":   # CUDA's enabled flag keeps its own old spelling: is_autocast_enabled()
        del functions["is_autocast_gpu_enabled"], functions["set_autocast_gpu_enabled"]
    for fn_name, fn in functions.items():
        fn.__name__ = fn.__qualname__ = fn_name
    return functions


DEPRECATED_FUNCTIONS = {}
for _dev, _name in (("cpu", "cpu"), ("cuda", "gpu"), ("ipu", "ipu"), ("xla", "xla")):
    DEPRECATED_FUNCTIONS.update(_deprecated_device_functions(_dev, _name))
globals().update(DEPRECATED_FUNCTIONS)
__all__ += list(DEPRECATED_FUNCTIONS)
