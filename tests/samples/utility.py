"""Samples for the tensor utilities (glasstorch/_ops/kernels/utility.py)."""
from ..opinfo import EXEMPT, sample

_DATA_DEPENDENT = ("data-dependent result: no Meta kernel in PyTorch either (tested in "
                   "tests/test_utility_ops.py)")
for _name in ("aten::equal", "aten::allclose", "aten::_unique2", "aten::unique_dim",
              "aten::bincount"):
    EXEMPT[_name] = _DATA_DEPENDENT


# -- comparison, casting, summing to a shape -------------------------------------------

@sample("aten::is_same_size")
def is_same_size_true(make, lib):
    return (make(3, 4), make(3, 4, noncontiguous=True)), {}


@sample("aten::is_same_size")
def is_same_size_false(make, lib):
    return (make(3, 4), make(4, 3)), {}


@sample("aten::type_as")
def type_as_other_dtype(make, lib):
    return (make(3, 4), make(2, dtype="int64")), {}


@sample("aten::type_as")
def type_as_float64(make, lib):
    return (make(3, 4), make(2, dtype="float64")), {}


@sample("aten::type_as")
def type_as_same_dtype(make, lib):
    return (make(3, 4), make(2)), {}


@sample("aten::sum_to_size")
def sum_to_size_keepdim(make, lib):
    return (make(2, 3, 4), [3, 1]), {}


@sample("aten::sum_to_size")
def sum_to_size_leading(make, lib):
    return (make(2, 3, 4, noncontiguous=True), [1, 4]), {}


@sample("aten::sum_to_size")
def sum_to_size_same(make, lib):
    return (make(3, 4), [3, 4]), {}


# -- repeating and broadcasting ----------------------------------------------------------

@sample("aten::repeat_interleave.Tensor")
def repeat_interleave_index(make, lib):
    return (lib.tensor([1, 0, 2, 3]),), {"output_size": 6}


@sample("aten::repeat_interleave.Tensor")
def repeat_interleave_index_int32(make, lib):
    return (lib.tensor([2, 1], dtype=lib.int32),), {"output_size": 3}


@sample("aten::repeat_interleave.self_Tensor")
def repeat_interleave_tensor_dim(make, lib):
    return (make(3, 4), lib.tensor([1, 0, 2]), 0), {"output_size": 3}


@sample("aten::repeat_interleave.self_Tensor")
def repeat_interleave_tensor_scalar_repeats(make, lib):
    return (make(2, 3, noncontiguous=True), lib.tensor(2)), {"output_size": 12}


@sample("aten::repeat_interleave.self_int")
def repeat_interleave_int_dim(make, lib):
    return (make(3, 4), 2, 1), {}


@sample("aten::repeat_interleave.self_int")
def repeat_interleave_int_flat(make, lib):
    return (make(2, 3, noncontiguous=True), 3), {}


@sample("aten::tile")
def tile_fewer_dims(make, lib):
    return (make(3, 4), [2]), {}


@sample("aten::tile")
def tile_more_dims(make, lib):
    return (make(3, 4), [2, 1, 3]), {}


@sample("aten::broadcast_to")
def broadcast_to_new_dims(make, lib):
    return (make(4), [3, 4]), {}


@sample("aten::broadcast_to")
def broadcast_to_ones(make, lib):
    return (make(3, 1), [2, 3, 5]), {}


@sample("aten::meshgrid")
def meshgrid_default(make, lib):
    return ([make(3), make(4)],), {}


@sample("aten::meshgrid.indexing")
def meshgrid_xy(make, lib):
    return ([make(3), make(4), make(2)],), {"indexing": "xy"}


@sample("aten::meshgrid.indexing")
def meshgrid_ij(make, lib):
    return ([make(()), make(4)],), {"indexing": "ij"}


@sample("aten::cartesian_prod")
def cartesian_prod_two(make, lib):
    return ([make(3), make(2)],), {}


@sample("aten::cartesian_prod")
def cartesian_prod_three(make, lib):
    return ([make(2), make(3, noncontiguous=True), make(2)],), {}


@sample("aten::kron")
def kron_matrices(make, lib):
    return (make(2, 3), make(3, 2)), {}


@sample("aten::kron")
def kron_mixed_rank(make, lib):
    return (make(3), make(2, 2)), {}


@sample("aten::tensordot")
def tensordot_two_dims(make, lib):
    return (make(3, 4, 5), make(4, 5, 2), [1, 2], [0, 1]), {}


@sample("aten::tensordot")
def tensordot_size_one(make, lib):
    return (make(3, 4), make(1, 2), [1], [0]), {}


# -- diagonals, trace, block_diag -----------------------------------------------------------

@sample("aten::diag")
def diag_embed_vector(make, lib):
    return (make(4), 1), {}


@sample("aten::diag")
def diag_of_matrix(make, lib):
    return (make(3, 4), -1), {}


@sample("aten::diagonal_copy")
def diagonal_copy(make, lib):
    return (make(3, 4, 5), 1, 0, 2), {}


@sample("aten::diag_embed")
def diag_embed_dims(make, lib):
    return (make(2, 3), 1, 0, 2), {}


@sample("aten::diag_embed")
def diag_embed_default(make, lib):
    return (make(3),), {}


@sample("aten::trace")
def trace_float(make, lib):
    return (make(3, 4),), {}


@sample("aten::trace")
def trace_int(make, lib):
    return (make(3, 3, dtype="int32"),), {}


@sample("aten::trace_backward")
def trace_backward(make, lib):
    return (make(()), [3, 4]), {}


@sample("aten::block_diag")
def block_diag_mixed_ranks(make, lib):
    return ([make(2, 3), make(3), make(())],), {}


@sample("aten::block_diag")
def block_diag_promotes(make, lib):
    return ([make(2, 2, dtype="int64"), make(1, 2)],), {}


# -- cross, rotation, flattening, differences ---------------------------------------------

@sample("aten::cross")
def cross_dim(make, lib):
    return (make(4, 3), make(4, 3)), {"dim": 1}


@sample("aten::cross")
def cross_default_dim(make, lib):
    return (make(3, 5), make(3, 5)), {}


@sample("aten::linalg_cross")
def linalg_cross_broadcast(make, lib):
    return (make(2, 3), make(1, 3)), {}


@sample("aten::linalg_cross")
def linalg_cross_dim0(make, lib):
    return (make(3, 4, noncontiguous=True), make(3, 4)), {"dim": 0}


@sample("aten::rot90")
def rot90_once(make, lib):
    return (make(3, 4), 1, [0, 1]), {}


@sample("aten::rot90")
def rot90_twice(make, lib):
    return (make(2, 3, 4), 2, [1, 2]), {}


@sample("aten::rot90")
def rot90_backwards(make, lib):
    return (make(3, 4), -1, [1, 0]), {}


@sample("aten::rot90")
def rot90_full_turn(make, lib):
    return (make(3, 4), 4), {}


@sample("aten::ravel")
def ravel_contiguous(make, lib):
    return (make(3, 4),), {}


@sample("aten::ravel")
def ravel_noncontiguous(make, lib):
    return (make(3, 4, noncontiguous=True),), {}


for _n in (1, 2, 3):
    sample(f"aten::atleast_{_n}d")(lambda make, lib: ((make(()),), {}))
    sample(f"aten::atleast_{_n}d")(lambda make, lib: ((make(4),), {}))
    sample(f"aten::atleast_{_n}d")(lambda make, lib: ((make(2, 3),), {}))
    sample(f"aten::atleast_{_n}d.Sequence")(
        lambda make, lib: (([make(()), make(3), make(2, 3), make(2, 1, 2)],), {}))


@sample("aten::diff")
def diff_default(make, lib):
    return (make(3, 5),), {}


@sample("aten::diff")
def diff_prepend_append(make, lib):
    return (make(3, 5), 2, 0, make(1, 5), make(2, 5)), {}


@sample("aten::diff")
def diff_bool(make, lib):
    return (make(6, dtype="bool"),), {}


@sample("aten::diff")
def diff_order_zero(make, lib):
    return (make(2, 3), 0), {}


# -- indexed fills ------------------------------------------------------------------------

@sample("aten::index_fill.int_Scalar")
def index_fill_scalar(make, lib):
    return (make(3, 4), 1, lib.tensor([0, 2, -1])), {"value": -1.5}


@sample("aten::index_fill.int_Scalar")
def index_fill_scalar_int(make, lib):
    return (make(3, 4, dtype="int64", noncontiguous=True), 0, lib.tensor(1), 7), {}


@sample("aten::index_fill.int_Tensor")
def index_fill_tensor(make, lib):
    return (make(3, 4), 0, lib.tensor([2, 0, 2]), make(())), {}


@sample("aten::index_fill_.int_Scalar", inplace=True)
def index_fill_inplace_scalar(make, lib):
    return (make(2, 3, 4), -1, lib.tensor([3])), {"value": 2.0}


@sample("aten::index_fill_.int_Tensor", inplace=True)
def index_fill_inplace_tensor(make, lib):
    return (make(4, 3), 0, lib.tensor([1, 3]), make(())), {}
