"""Samples of the sparse family's ops (kernels/sparse.py).

The registry-wide tests compare strided results (values, strides, storage
sharing) and rebuild their inputs as leaves, on Meta and under modes; a sparse
tensor has no strides or storage, and PyTorch has no Meta kernel for most
sparse ops (``_to_sparse``, ``_coalesce``, ``_to_dense`` ... raise "Could not
run ... from the 'Meta' backend"; a sparse tensor moved to meta keeps no
elements).  So the ops whose inputs or results are sparse are exempt here,
and tests/test_sparse.py compares them with PyTorch instead: components, nnz,
coalesced state, printing, gradients and errors.  The ops that also take
strided tensors to strided results have samples."""
from ..opinfo import EXEMPT, sample

_REASON = ("sparse layout: no strides, storage or (in PyTorch) Meta kernel for the generic "
           "sample tests; compared with PyTorch in tests/test_sparse.py and "
           "tests/test_sparse_compressed.py")

for _name in (
        "_coalesce", "_coalesced_", "_indices", "_nnz", "_sparse_addmm", "_sparse_coo_tensor_unsafe",
        "_sparse_coo_tensor_with_dims_and_tensors", "_sparse_log_softmax",
        "_sparse_log_softmax.int", "_sparse_log_softmax_backward_data", "_sparse_mm",
        "_sparse_softmax", "_sparse_softmax.int", "_sparse_softmax_backward_data", "_sparse_sum",
        "_sparse_sum.dim", "_sparse_sum.dim_dtype", "_sparse_sum.dtype", "_sparse_sum_backward",
        "_to_dense", "_to_sparse", "_to_sparse.sparse_dim", "_to_sparse_csr",
        "_validate_sparse_csr_tensor_args", "_values", "coalesce", "col_indices", "crow_indices",
        "embedding_sparse_backward", "hspmm", "indices", "is_coalesced", "smm",
        "sparse_compressed_tensor.comp_plain_value_size", "sparse_coo_tensor.indices",
        "sparse_coo_tensor.indices_size", "sparse_coo_tensor.size", "sparse_mask",
        "sparse_resize_", "sparse_resize_and_clear_", "sspaddmm", "to_dense_backward",
        "to_sparse", "to_sparse.sparse_dim", "to_sparse_csr", "values", "_to_sparse_csc",
        "_validate_sparse_csc_tensor_args", "ccol_indices", "row_indices", "to_sparse_csc",
        "ccol_indices_copy", "col_indices_copy", "crow_indices_copy", "indices_copy",
        "row_indices_copy", "values_copy"):
    EXEMPT["aten::" + _name] = _REASON


@sample("aten::to_dense")
def _(make, lib):
    return (make(3, 4),), {}


@sample("aten::sparse_dim")
def _(make, lib):
    return (make(3, 4),), {}


@sample("aten::dense_dim")
def _(make, lib):
    return (make(2, 3, 4),), {}


@sample("aten::_validate_sparse_coo_tensor_args")
def _(make, lib):
    return (make(2, 3, dtype="int64", low=0, high=4), make(3, 2), [4, 4, 2]), {}
