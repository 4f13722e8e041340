"""Scalar types and type promotion (c10's ScalarType and ATen's ResultType).

A `dtype` names how the bytes of a storage are read.  Each one knows its numpy
counterpart (ml_dtypes supplies bfloat16) so kernels can build array views, and
its "opmath" type: the type CPU kernels compute in.  PyTorch computes float16
and bfloat16 arithmetic in float32 on CPU and rounds when it writes the
result; numpy's generic loops for ml_dtypes are also ~100x slower than float32,
so we do the same.

Promotion follows PyTorch, not numpy:

    promote_types(a, b)   the pairwise table (bool < integer < floating < complex)
    result_type(...)      three tiers, highest first: tensors with dim >= 1,
                          zero-dim tensors, Python scalars ("wrapped numbers").
                          A lower tier only matters when its category is
                          higher than every tier above it.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "promote_types", "can_cast", "get_default_dtype", "set_default_dtype",
    "scalar_dtype", "result_type_of", "ALL_DTYPES",
]

# Category ranks: the order PyTorch uses to decide which operand wins.
BOOL, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, printed as PyTorch prints it (``torch.float32``)."""

    __slots__ = ("name", "itemsize", "category", "is_signed", "numpy", "opmath",
                 "scalar_type", "_short", "__weakref__")

    def __init__(self, name, np_type, category, scalar_type, short, opmath=None):
        self.name = name
        self.numpy = np.dtype(np_type)
        self.itemsize = self.numpy.itemsize
        self.category = category
        self.is_signed = category != BOOL and not name.startswith("uint")
        self.scalar_type = scalar_type  # c10::ScalarType's number (printed in schemas)
        self._short = short              # the C++ name used in error messages ("Float")
        self.opmath = np.dtype(opmath) if opmath is not None else self.numpy

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOATING

    @property
    def is_complex(self) -> bool:
        return self.category == COMPLEX

    def to_real(self) -> "dtype":
        return _COMPLEX_TO_REAL.get(self, self)

    def to_complex(self) -> "dtype":
        return _REAL_TO_COMPLEX.get(self, self)

    def __repr__(self) -> str:
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


def _dtype_by_name(name: str) -> dtype:
    return BY_NAME[name]


bool_ = dtype("bool", np.bool_, BOOL, 11, "Bool")
uint8 = dtype("uint8", np.uint8, INTEGRAL, 0, "Byte")
int8 = dtype("int8", np.int8, INTEGRAL, 1, "Char")
int16 = dtype("int16", np.int16, INTEGRAL, 2, "Short")
int32 = dtype("int32", np.int32, INTEGRAL, 3, "Int")
int64 = dtype("int64", np.int64, INTEGRAL, 4, "Long")
float16 = dtype("float16", np.float16, FLOATING, 5, "Half", opmath=np.float32)
float32 = dtype("float32", np.float32, FLOATING, 6, "Float")
float64 = dtype("float64", np.float64, FLOATING, 7, "Double")
complex64 = dtype("complex64", np.complex64, COMPLEX, 9, "ComplexFloat")
complex128 = dtype("complex128", np.complex128, COMPLEX, 10, "ComplexDouble")
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, FLOATING, 15, "BFloat16", opmath=np.float32)
# The "barebones" unsigned types: storage, casts and few ops; they promote only with
# themselves and floating types.
uint16 = dtype("uint16", np.uint16, INTEGRAL, 27, "UInt16")
uint32 = dtype("uint32", np.uint32, INTEGRAL, 28, "UInt32")
uint64 = dtype("uint64", np.uint64, INTEGRAL, 29, "UInt64")
BAREBONES_UNSIGNED = (uint16, uint32, uint64)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16,
              float32, float64, complex64, complex128) + BAREBONES_UNSIGNED
BY_NAME = {d.name: d for d in ALL_DTYPES}
BY_SCALAR_TYPE = {d.scalar_type: d for d in ALL_DTYPES}
FROM_NUMPY = {d.numpy: d for d in ALL_DTYPES}
# The aliases torch exposes (torch.float is torch.float32, torch.long is torch.int64 ...).
ALIASES = {"float": float32, "double": float64, "half": float16, "long": int64,
           "int": int32, "short": int16, "cfloat": complex64, "cdouble": complex128,
           "bool": bool_}

_COMPLEX_TO_REAL = {complex64: float32, complex128: float64}
_REAL_TO_COMPLEX = {float16: complex64, bfloat16: complex64, float32: complex64,
                    float64: complex128}


def _promote_pair(a: dtype, b: dtype) -> dtype | None:
    """PyTorch's promotion lattice, derived from categories and widths (None: a pair
    PyTorch refuses to promote)."""
    if a is b:
        return a
    if a in BAREBONES_UNSIGNED or b in BAREBONES_UNSIGNED:
        other = b if a in BAREBONES_UNSIGNED else a
        return other if other.category == FLOATING else None
    if a.category != b.category:
        lo, hi = (a, b) if a.category < b.category else (b, a)
        if hi.category == COMPLEX and lo.category == FLOATING:
            # complex wins but keeps at least the float's precision
            return complex128 if (lo is float64 or hi is complex128) else complex64
        return hi
    if a.category == INTEGRAL:
        if uint8 in (a, b):  # the only unsigned type: needs a wider signed one
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a.itemsize > b.itemsize else b
    if {a, b} == {float16, bfloat16}:
        return float32
    return a if a.itemsize > b.itemsize else b


_PROMOTE = {(a, b): p for a in ALL_DTYPES for b in ALL_DTYPES
            if (p := _promote_pair(a, b)) is not None}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """``torch.promote_types``: the smallest type both operands convert to."""
    result = _PROMOTE.get((type1, type2))
    if result is None:
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {type1._short} and {type2._short}")
    return result


def can_cast(from_: dtype, to: dtype) -> bool:
    """``torch.can_cast``: casting never lowers the category (float -> int is refused)."""
    if from_.category == COMPLEX and to.category != COMPLEX:
        return False
    return not (from_.category > to.category)


# -- default dtype -------------------------------------------------------------

class _DefaultDtype:
    """Process-wide, as in PyTorch (``torch.set_default_dtype`` is not thread-local)."""
    value = None  # filled below with float32


_DEFAULT = _DefaultDtype()
_DEFAULT.value = float32


def get_default_dtype() -> dtype:
    """The dtype of Python floats turned into tensors (float32 unless changed)."""
    return _DEFAULT.value


def set_default_dtype(d: dtype) -> None:
    """Only floating types may be the default, as in PyTorch."""
    if not isinstance(d, dtype) or d.category != FLOATING:
        raise TypeError("only floating-point types are supported as the default type")
    _DEFAULT.value = d


def default_complex_dtype() -> dtype:
    return complex128 if _DEFAULT.value is float64 else complex64


def scalar_dtype(value) -> dtype:
    """The dtype a Python scalar becomes as a tensor (``torch.tensor(value).dtype``)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _DEFAULT.value
    if isinstance(value, complex):
        return default_complex_dtype()
    raise TypeError(f"not a number: {type(value).__name__}")


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Let a lower tier win only when its category is above the higher tier's."""
    if higher is None:
        return lower
    if lower is None or higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        return higher.to_complex() if higher.category == FLOATING else lower
    if higher.category == FLOATING:
        return higher
    if higher is bool_ or lower.category == FLOATING:
        return promote_types(higher, lower)
    return higher


def result_type_of(dimensioned, zero_dim, scalars) -> dtype:
    """Combine dtypes of the three tiers (each an iterable of dtypes / Python scalars).

    ``dimensioned`` and ``zero_dim`` hold dtypes; ``scalars`` holds Python numbers.
    """
    tiers = []
    for group in (dimensioned, zero_dim):
        acc = None
        for d in group:
            acc = d if acc is None else promote_types(acc, d)
        tiers.append(acc)
    acc = None
    for s in scalars:
        d = scalar_dtype(s)
        acc = d if acc is None else promote_types(acc, d)
    return _combine_categories(tiers[0], _combine_categories(tiers[1], acc))


# caffe2::TypeMeta's names of the dtypes: PyTorch's messages print a tensor's
# dtype this way ("Expected out tensor to have dtype float, but got long int").
_TYPE_META_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "uint16": "short unsigned int", "uint32": "unsigned int",
    "uint64": "long unsigned int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>"}


def type_meta_name(d: dtype) -> str:
    return _TYPE_META_NAMES.get(d.name, d.name)
