"""Samples for histc (glasstorch/_ops/kernels/histogram.py)."""
from ..opinfo import sample


@sample("aten::histc")
def histc_data_range(make, lib):
    return (make(4, 5),), {"bins": 7}


@sample("aten::histc")
def histc_given_range(make, lib):
    return (make(3, 6, dtype="float64", noncontiguous=True),), {"bins": 4, "min": -1, "max": 2}
