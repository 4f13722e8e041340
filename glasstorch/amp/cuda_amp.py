"""``torch.cuda.amp``: the deprecated CUDA spellings of ``torch.amp``
(torch/cuda/amp/).  ``glasstorch.cuda`` is a single module rather than a
package, so this module lives here and ``cuda.py`` registers it as
``glasstorch.cuda.amp``.

    torch.cuda.amp.autocast(...)     == torch.amp.autocast("cuda", ...)
    torch.cuda.amp.GradScaler(...)   == torch.amp.GradScaler("cuda", ...)

Each warns (FutureWarning) when used, as in PyTorch.
"""
from __future__ import annotations

import functools
import importlib.util

from .._core.dtype import float16
from . import autocast_mode
from .autocast_mode import warn_deprecated_alias
from .grad_scaler import GradScaler as _GradScaler
from .grad_scaler import OptState  # noqa: F401  (torch.cuda.amp.grad_scaler re-exports it)

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def amp_definitely_not_available() -> bool:
    """No CUDA device and no torch_xla: CUDA autocast and GradScaler disable themselves."""
    from .. import cuda
    return not (cuda.is_available() or importlib.util.find_spec("torch_xla"))


class autocast(autocast_mode.autocast):
    """``torch.cuda.amp.autocast(args...)``: deprecated, see ``torch.autocast``."""

    def __init__(self, enabled: bool = True, dtype=float16, cache_enabled: bool = True):
        warn_deprecated_alias("torch.cuda.amp.autocast(args...)",
                              "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``torch.cuda.amp.GradScaler(args...)``: deprecated, see ``torch.amp.GradScaler``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warn_deprecated_alias("torch.cuda.amp.GradScaler(args...)",
                              "torch.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: ``torch.amp.custom_fwd(args..., device_type='cuda')``."""
    warn_deprecated_alias("torch.cuda.amp.custom_fwd(args...)",
                "torch.amp.custom_fwd(args..., device_type='cuda')")
    return functools.partial(autocast_mode.custom_fwd, device_type="cuda")(
        fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated: ``torch.amp.custom_bwd(args..., device_type='cuda')``."""
    warn_deprecated_alias("torch.cuda.amp.custom_bwd(args...)",
                "torch.amp.custom_bwd(args..., device_type='cuda')")
    return functools.partial(autocast_mode.custom_bwd, device_type="cuda")(bwd)
