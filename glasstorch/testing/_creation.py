"""``torch.testing.make_tensor``: a random tensor for tests.

Values are uniform in ``[low, high)`` (integers: ``randint``), with defaults
``[-9, 9)`` for floating/complex and ``[-9, 10)`` for integral dtypes, clamped
to what the dtype can hold.  ``noncontiguous`` draws a last dimension twice as
long and keeps every other element; ``exclude_zero`` replaces zeros by 1 (or
the dtype's smallest normal number).  Drawn with the same generator calls as
PyTorch's, so the same seed gives the same values.
"""
from __future__ import annotations

import collections.abc
import math
import warnings

from .._core import dtype as _dt

__all__ = ["make_tensor"]

_BOOLEAN_OR_INTEGRAL = (_dt.bool_, _dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64,
                        _dt.uint16, _dt.uint32, _dt.uint64)
_COMPLEX = (_dt.complex64, _dt.complex128)
_FLOATING_OR_COMPLEX = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64) + _COMPLEX


def _uniform_random_(t, low, high):
    """``t.uniform_(low, high)``; a range wider than the dtype's max is drawn halved and doubled."""
    from .. import finfo
    if high - low >= finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def _low_high(low, high, dtype, *, lowest_inclusive, highest_exclusive, default_low,
              default_high):
    """The checked, clamped ``[low, high)`` (rounded up to integers for integral dtypes)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING_OR_COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
                      "types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest_inclusive or low >= highest_exclusive:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest_inclusive}, {highest_exclusive})")
    low = min(max(low, lowest_inclusive), highest_exclusive)
    high = min(max(high, lowest_inclusive), highest_exclusive)
    if dtype in _BOOLEAN_OR_INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` (sizes, or one sequence of them) filled with random values."""
    from .. import empty, finfo, iinfo, randint, view_as_real
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if requires_grad and dtype in _BOOLEAN_OR_INTEGRAL:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _dt.bool_:
        low, high = _low_high(low, high, dtype, lowest_inclusive=0, highest_exclusive=2,
                              default_low=0, default_high=2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _BOOLEAN_OR_INTEGRAL:
        info = iinfo(dtype)
        low, high = _low_high(low, high, dtype, lowest_inclusive=info.min,
                              highest_exclusive=info.max + (dtype is not _dt.int64),
                              default_low=-9, default_high=10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_OR_COMPLEX:
        info = finfo(dtype)
        low, high = _low_high(low, high, dtype, lowest_inclusive=info.min,
                              highest_exclusive=info.max, default_low=-9, default_high=9)
        result = empty(shape, device=device, dtype=dtype)
        _uniform_random_(view_as_real(result) if dtype in _COMPLEX else result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in _BOOLEAN_OR_INTEGRAL else finfo(dtype).tiny
    if dtype in _FLOATING_OR_COMPLEX:
        result.requires_grad = requires_grad
    return result
