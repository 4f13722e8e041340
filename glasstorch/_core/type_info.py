"""``torch.finfo`` and ``torch.iinfo`` (PyTorch's torch/csrc/TypeInfo.cpp): the numeric
limits of a floating or integer dtype.

    finfo(torch.float16).eps == 2**-10        finfo(torch.complex64) describes float32
    iinfo(torch.int8).min == -128             finfo() describes the default dtype

The values come from numpy's (and ml_dtypes' for bfloat16) limits of the dtype's
numpy type; ``resolution`` is 10**-precision, with precision the number of exact
decimal digits, as PyTorch computes it.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from . import dtype as dt

__all__ = ["finfo", "iinfo"]


def _argument_dtype(kind, value):
    if not isinstance(value, dt.dtype):
        raise TypeError(f"{kind}(): argument 'type' (position 1) must be torch.dtype, not "
                        f"{type(value).__name__}")
    return value


class _TypeInfo:
    """Shared by finfo and iinfo: equality by value, PyTorch's repr (``%g`` numbers)."""

    _shown: tuple = ()

    def __eq__(self, other):
        return type(other) is type(self) and other.dtype == self.dtype

    __hash__ = None   # as PyTorch's: comparable, not hashable

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name):g}" for name in self._shown)
        return f"{type(self).__name__}({fields}, dtype={self.dtype})"

    __str__ = __repr__


class finfo(_TypeInfo):
    """Limits of a floating-point dtype (a complex dtype's real part)."""

    _shown = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")

    def __init__(self, type=None):
        d = dt.get_default_dtype() if type is None else _argument_dtype("finfo", type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        real = d.to_real()
        info = ml_dtypes.finfo(real.numpy) if real is dt.bfloat16 else np.finfo(real.numpy)
        self.bits = real.itemsize * 8
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = self.tiny = float(info.smallest_normal)
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype = real.name


class iinfo(_TypeInfo):
    """Limits of an integer dtype."""

    _shown = ("min", "max")

    def __init__(self, type):
        d = _argument_dtype("iinfo", type)
        if d is dt.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.category != dt.INTEGRAL:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(d.numpy)
        self.bits = d.itemsize * 8
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = d.name
