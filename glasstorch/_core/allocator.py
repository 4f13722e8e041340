"""Allocators (c10::Allocator): every tensor byte comes from one of these.

An allocator hands out raw memory and keeps the books PyTorch keeps: bytes
allocated now and at peak, and the number of allocations.  On CPU the raw
memory is a numpy array; we let the caller ask for it already typed and shaped
(``np.empty(shape, dtype)``) because a fresh output's array then *is* its
tensor's view, saving one view construction on the hot path.  The bytes are
the same either way: storage only ever treats them as a flat buffer.
"""
from __future__ import annotations

import numpy as np


class AllocatorStats:
    """Counters named as ``torch.cuda.memory_stats()`` names them."""

    __slots__ = ("current", "peak", "allocations", "frees")

    def __init__(self):
        self.current = self.peak = self.allocations = self.frees = 0

    def as_dict(self) -> dict:
        return {
            "allocated_bytes.all.current": self.current,
            "allocated_bytes.all.peak": self.peak,
            "allocation.all.allocated": self.allocations,
            "allocation.all.freed": self.frees,
            "allocation.all.current": self.allocations - self.frees,
        }


class CPUAllocator:
    """Host memory from numpy, with statistics."""

    device_type = "cpu"

    def __init__(self):
        self.stats = AllocatorStats()

    def allocate(self, shape, np_dtype) -> np.ndarray:
        """Fresh, uninitialized, C-contiguous memory for ``shape`` elements of ``np_dtype``."""
        array = np.empty(shape, np_dtype)
        self._count(array.nbytes)
        return array

    def adopt(self, array: np.ndarray) -> np.ndarray:
        """Take ownership of memory numpy already allocated (e.g. a kernel's result)."""
        self._count(array.nbytes)
        return array

    def _count(self, nbytes: int) -> None:
        stats = self.stats
        stats.allocations += 1
        stats.current += nbytes
        if stats.current > stats.peak:
            stats.peak = stats.current

    def free(self, nbytes: int) -> None:
        stats = self.stats
        stats.frees += 1
        stats.current -= nbytes

    def reset_peak(self) -> None:
        self.stats.peak = self.stats.current


class MetaAllocator:
    """The meta device has sizes but no bytes; it still counts what it would hold."""

    device_type = "meta"

    def __init__(self):
        self.stats = AllocatorStats()

    def free(self, nbytes: int) -> None:
        self.stats.frees += 1
        self.stats.current -= nbytes


cpu_allocator = CPUAllocator()
meta_allocator = MetaAllocator()
