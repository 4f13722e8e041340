"""``torch.cuda`` as PyTorch's CPU-only build answers it.

glasstorch has no CUDA backend yet: no allocator, no kernels, so no CUDA tensor
can exist.  ``is_available()`` therefore says False even when a GPU and CuPy are
present (a True there would send the usual ``"cuda" if is_available() else
"cpu"`` straight into an error), the memory counters read 0, and everything
that needs a device raises the AssertionError of PyTorch's CPU-only build.
"""
from __future__ import annotations

import collections
import sys

__all__ = ["amp", "is_available", "device_count", "is_initialized", "init", "current_device",
           "synchronize", "get_device_name", "get_device_properties",
           "get_device_capability", "mem_get_info", "is_bf16_supported", "get_arch_list",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "empty_cache", "manual_seed",
           "manual_seed_all"]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def is_available() -> bool:
    """False: a CUDA device is only available once glasstorch can put tensors on it."""
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def _lazy_init() -> None:
    """What every CUDA request goes through first: PyTorch's CPU-only build refuses."""
    raise AssertionError(_NOT_COMPILED)


def init() -> None:
    _lazy_init()


def current_device() -> int:
    _lazy_init()
    return 0


def synchronize(device=None) -> None:
    _lazy_init()


def get_device_name(device=None) -> str:
    _lazy_init()


def get_device_properties(device=None):
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def mem_get_info(device=None):
    _lazy_init()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def get_arch_list() -> list:
    return []


def memory_allocated(device=None) -> int:
    """0: no CUDA memory exists (PyTorch's CPU build answers the same, without error)."""
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def memory_stats(device=None) -> collections.OrderedDict:
    return collections.OrderedDict()


def empty_cache() -> None:
    """No-op: there is no cache to empty."""


def manual_seed(seed) -> None:
    """No-op without CUDA (PyTorch's CPU build silently ignores it too)."""


def manual_seed_all(seed) -> None:
    """No-op without CUDA."""


# torch.cuda.amp: the deprecated CUDA spellings of torch.amp.  This module is not a
# package, so the submodule is registered by name for ``import torch.cuda.amp``.
from .amp import cuda_amp as amp  # noqa: E402
sys.modules[__name__ + ".amp"] = amp
