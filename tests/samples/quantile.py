"""Samples for quantile and nanquantile (glasstorch/_ops/kernels/quantile.py)."""
from ..opinfo import sample


@sample("aten::quantile")
def quantile_rows(make, lib):
    return (make(3, 5), make(3, low=0, high=1)), {"dim": 1, "keepdim": True}


@sample("aten::quantile.scalar")
def quantile_all(make, lib):
    return (make(4, 2, dtype="float64", noncontiguous=True), 0.4), {"interpolation": "midpoint"}


@sample("aten::nanquantile")
def nanquantile_columns(make, lib):
    return (make(4, 3), make(2, low=0, high=1)), {"dim": 0, "interpolation": "nearest"}


@sample("aten::nanquantile.scalar")
def nanquantile_all(make, lib):
    return (make(5), 0.9), {}


@sample("aten::quantile.out")
def quantile_rows_out(make, lib):
    return (make(3, 5), make(2, low=0, high=1)), {"dim": 1, "out": make(0)}


@sample("aten::quantile.scalar_out")
def quantile_all_out(make, lib):
    return (make(4, 2, dtype="float64"), 0.4), {"out": make(0, dtype="float64")}


@sample("aten::nanquantile.out")
def nanquantile_columns_out(make, lib):
    return (make(4, 3), make(2, low=0, high=1)), {"dim": 0, "out": make(0)}


@sample("aten::nanquantile.scalar_out")
def nanquantile_all_out(make, lib):
    return (make(5), 0.9), {"out": make(0)}
