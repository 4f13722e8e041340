"""``torch.cuda``: availability and the lazy-init check.

glasstorch's CUDA backend is optional: it is considered available only when
CuPy can see a GPU.  Otherwise every CUDA request raises the AssertionError
PyTorch's CPU-only build raises.
"""
from __future__ import annotations

import sys

__all__ = ["amp", "is_available", "device_count", "is_initialized", "current_device",
           "manual_seed", "manual_seed_all", "synchronize"]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"
_count = None
_initialized = False


def _probe() -> int:
    global _count
    if _count is None:
        try:
            import cupy  # noqa: F401  (optional dependency)
            _count = int(cupy.cuda.runtime.getDeviceCount())
        except Exception:
            _count = 0
    return _count


def is_available() -> bool:
    return _probe() > 0


def device_count() -> int:
    return _probe()


def is_initialized() -> bool:
    return _initialized


def _lazy_init() -> None:
    global _initialized
    if _initialized:
        return
    if not is_available():
        raise AssertionError(_NOT_COMPILED)
    _initialized = True


def current_device() -> int:
    _lazy_init()
    return 0


def synchronize(device=None) -> None:
    _lazy_init()


def manual_seed(seed) -> None:
    """No-op without CUDA (PyTorch's CPU build silently ignores it too)."""


def manual_seed_all(seed) -> None:
    """No-op without CUDA."""


# torch.cuda.amp: the deprecated CUDA spellings of torch.amp.  This module is not a
# package, so the submodule is registered by name for ``import torch.cuda.amp``.
from .amp import cuda_amp as amp  # noqa: E402
sys.modules[__name__ + ".amp"] = amp
