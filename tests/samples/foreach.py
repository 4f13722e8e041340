"""Samples for the _foreach_* ops (kernels/foreach.py)."""
from __future__ import annotations

from ..opinfo import sample


@sample("aten::_foreach_norm.Scalar")
def foreach_norm_two(make, lib):
    return ([make(3, 4), make(5, noncontiguous=True), make(())],), {}


@sample("aten::_foreach_norm.Scalar")
def foreach_norm_one_float64(make, lib):
    return ([make(7, dtype="float64"), make(2, 3, dtype="float64")], 1), {}


@sample("aten::_foreach_mul_.Tensor", inplace=True)
def foreach_mul_scalar_tensor(make, lib):
    return ([make(3, 4), make(5, noncontiguous=True)], make(())), {}
