"""``torch.cpu.amp.autocast``: deprecated, ``torch.amp.autocast("cpu", ...)``
(torch/cpu/amp/autocast_mode.py)."""
from __future__ import annotations

from ..._core.dtype import bfloat16
from ...amp import autocast_mode
from ...amp.autocast_mode import warn_deprecated_alias

__all__ = ["autocast"]


class autocast(autocast_mode.autocast):
    """``torch.cpu.amp.autocast(args...)``: warns, then behaves as ``torch.autocast("cpu")``."""

    def __init__(self, enabled: bool = True, dtype=bfloat16, cache_enabled: bool = True):
        warn_deprecated_alias("torch.cpu.amp.autocast(args...)",
                              "torch.amp.autocast('cpu', args...)")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
