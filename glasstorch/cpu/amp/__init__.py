"""``torch.cpu.amp``: deprecated spellings of ``torch.amp`` for the CPU."""
from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler"]
