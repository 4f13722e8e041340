"""Allocators (c10::Allocator): every tensor byte comes from one of these.

An allocator hands out raw memory and keeps the books PyTorch keeps: bytes
allocated now and at peak, and the number of allocations.  On CPU the raw
memory is a numpy array; we let the caller ask for it already typed and shaped
(``np.empty(shape, dtype)``) because a fresh output's array then *is* its
tensor's view, saving one view construction on the hot path.  The bytes are
the same either way: storage only ever treats them as a flat buffer.
"""
from __future__ import annotations

import math

import numpy as np

_INT64_MAX = 2**63 - 1    # c10's storage_max(): byte counts and strides are int64
_UINT64_MAX = 2**64 - 1   # products of sizes are taken in uint64 first


def storage_nbytes(shape, itemsize: int, stride=None) -> int:
    """Bytes a tensor of ``shape`` (and ``stride``, else contiguous) needs from offset 0.

    ATen's computeStorageNbytes / computeStorageNbytesContiguous, with their
    overflow checks (PyTorch computes in 64-bit integers, Python's ints would not
    overflow); a contiguous layout's strides must fit int64 as well."""
    if stride is None:
        count, overflowed = 1, False
        for n in shape:
            count *= n
            overflowed |= count > _UINT64_MAX
        if overflowed or count * itemsize > _INT64_MAX:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
        step = 1
        for n in reversed(shape[1:]):
            step *= max(n, 1)
            if step > _INT64_MAX:
                raise RuntimeError("Stride calculation overflowed")
        return count * itemsize
    if 0 in shape:
        return 0
    nbytes = (1 + sum((n - 1) * s for n, s in zip(shape, stride))) * itemsize
    if nbytes > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} "
                           f"and strides={list(stride)}")
    return nbytes


def _keep_freed_memory() -> None:
    """Ask glibc's malloc to keep freed blocks below 64 MB for reuse instead of
    handing them back to the system (``mallopt``: no mmap below the size, no
    trimming below twice it), as a caching allocator would: a training step
    frees and allocates the same sizes every iteration, and memory fresh from
    the system costs a page fault per 4 KB page on first touch, which on a VM
    made a kernel writing a new 0.5 MB output ten times slower.  Skipped off
    glibc, and when ``GLASSTORCH_CPU_KEEP_FREED=0``."""
    import ctypes
    import os
    if os.environ.get("GLASSTORCH_CPU_KEEP_FREED", "1") == "0":
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    mallopt(m_mmap_threshold, 64 << 20)
    mallopt(m_trim_threshold, 128 << 20)


# c10's alloc_cpu aligns every allocation to 64 bytes; numpy's malloc gives 16.
# Off a 64-byte boundary, a vectorized loop splits every AVX-512 load across two
# cache lines, which Intel's cores pay for (on this AMD machine a compiled
# softmax measured the same either way).  Aligning costs ~3 us (a second numpy
# call and an address lookup), so only allocations big enough for that to be
# noise get it; smaller ones stay one np.empty (the eager hot path).
ALIGNMENT = 64
ALIGNED_FROM = 1 << 20


def _aligned_empty(shape, count: int, dtype: np.dtype) -> np.ndarray:
    raw = np.empty(count * dtype.itemsize + ALIGNMENT, np.uint8)
    skip = -raw.__array_interface__["data"][0] % ALIGNMENT   # (C; .ctypes runs Python)
    return raw[skip:skip + count * dtype.itemsize].view(dtype).reshape(shape)


def out_of_memory(nbytes: int) -> RuntimeError:
    """The error of PyTorch's DefaultCPUAllocator when the system refuses ``nbytes``."""
    return RuntimeError(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)")


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
        _keep_freed_memory()

    def allocate(self, shape, np_dtype) -> np.ndarray:
        """Fresh, uninitialized, C-contiguous memory for ``shape`` elements of ``np_dtype``,
        at a multiple of ALIGNMENT bytes when it is ALIGNED_FROM bytes or more.

        A size numpy refuses gets PyTorch's errors instead (the checks only run
        then: the hot path stays one ``np.empty``)."""
        try:
            count = shape if type(shape) is int else math.prod(shape)
            if count * np.dtype(np_dtype).itemsize >= ALIGNED_FROM:
                array = _aligned_empty(shape, count, np.dtype(np_dtype))
            else:
                array = np.empty(shape, np_dtype)
        except (MemoryError, ValueError):
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            raise out_of_memory(storage_nbytes(shape, np.dtype(np_dtype).itemsize)) from None
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

    def allocate(self, nbytes) -> None:
        self.stats.allocations += 1
        self.stats.current += _hint(nbytes)

    def resize(self, old_nbytes, nbytes) -> None:
        self.stats.current += _hint(nbytes) - _hint(old_nbytes)

    def free(self, nbytes) -> None:
        self.stats.frees += 1
        self.stats.current -= _hint(nbytes)


def _hint(nbytes) -> int:
    """A symbolic size (a SymInt, under make_fx's symbolic mode) counts as the
    value it has in the traced run, so the global counters stay plain ints."""
    node = getattr(nbytes, "node", None)
    return nbytes if node is None else node.hint


cpu_allocator = CPUAllocator()
meta_allocator = MetaAllocator()
