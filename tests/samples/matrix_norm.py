"""Samples for svdvals and the matrix norms (glasstorch/_ops/kernels/linalg.py)."""
from ..opinfo import EXEMPT, sample

EXEMPT["aten::_linalg_svd"] = (
    "only its S output is differentiable in glasstorch (PyTorch's U and Vh are too): sampled "
    "through linalg_svdvals and the matrix norms")


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



@sample("aten::linalg_matrix_norm.out")
def matrix_norm_one_out(make, lib):
    return (make(2, 3, 4), 1), {"out": make(0)}


@sample("aten::linalg_matrix_norm.str_ord_out")
def matrix_norm_fro_out(make, lib):
    return (make(3, 4, dtype="float64"), "fro"), {"out": make(0, dtype="float64")}


@sample("aten::linalg_norm.out")
def norm_vector_out(make, lib):
    return (make(3, 4),), {"dim": [1], "out": make(0)}


@sample("aten::linalg_norm.ord_str_out")
def norm_nuc_out(make, lib):
    return (make(3, 4, dtype="float64"), "nuc"), {"out": make(0, dtype="float64")}
