"""``torch.signal``: signal-processing helpers; so far the ``windows`` module."""
from . import windows

__all__ = ["windows"]
