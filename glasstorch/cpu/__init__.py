"""``torch.cpu``: the CPU counterpart of ``torch.cuda``'s device API, and the
deprecated ``torch.cpu.amp`` spellings of ``torch.amp`` (torch/cpu/__init__.py)."""
from __future__ import annotations

from . import amp

__all__ = ["is_available", "device_count", "current_device", "synchronize", "amp"]


def is_available() -> bool:
    """Always True: glasstorch always has a CPU."""
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """CPU work is synchronous: nothing to wait for."""
