"""Samples for svdvals and the matrix norms (glasstorch/_ops/kernels/matrix_norm.py)."""
from ..opinfo import sample


@sample("aten::linalg_svdvals")
def svdvals_batch(make, lib):
    return (make(2, 3, 4, dtype="float64"),), {}


@sample("aten::linalg_matrix_norm")
def matrix_norm_inf_keepdim(make, lib):
    return (make(3, 2, 4), float("inf")), {"dim": [2, 0], "keepdim": True}


@sample("aten::linalg_matrix_norm.str_ord")
def matrix_norm_nuc(make, lib):
    return (make(2, 3, 3, dtype="float64", noncontiguous=True), "nuc"), {}


@sample("aten::linalg_norm")
def norm_matrix_two(make, lib):
    return (make(4, 3, dtype="float64"), 2), {}


@sample("aten::linalg_norm.ord_str")
def norm_fro_dims(make, lib):
    return (make(2, 3, 4), "fro"), {"dim": [0, 2]}

