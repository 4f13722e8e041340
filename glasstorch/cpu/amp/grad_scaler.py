"""``torch.cpu.amp.GradScaler``: deprecated, ``torch.amp.GradScaler("cpu", ...)``
(torch/cpu/amp/grad_scaler.py)."""
from __future__ import annotations

from ...amp import grad_scaler
from ...amp.autocast_mode import warn_deprecated_alias

__all__ = ["GradScaler"]


class GradScaler(grad_scaler.GradScaler):
    """``torch.cpu.amp.GradScaler(args...)``: warns, then a CPU ``torch.amp.GradScaler``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warn_deprecated_alias("torch.cpu.amp.GradScaler(args...)",
                              "torch.amp.GradScaler('cpu', args...)")
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
