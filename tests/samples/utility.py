"""Samples for the tensor utilities (glasstorch/_ops/kernels/shape.py, sorting.py, indexing.py, linalg.py, distance.py ...)."""
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


# -- elementwise: logit, isposinf / isneginf, deg2rad / rad2deg -----------------------------

@sample("aten::logit")
def logit_no_eps(make, lib):
    return (make(3, 4, low=0.05, high=0.95),), {}


@sample("aten::logit")
def logit_eps_outside(make, lib):
    return (make(3, 4, low=-0.5, high=1.5, noncontiguous=True), 0.2), {}


@sample("aten::logit")
def logit_int(make, lib):
    return (make(5, dtype="int64", low=0, high=2),), {}


@sample("aten::logit_", inplace=True)
def logit_inplace(make, lib):
    return (make(3, 4, low=0.1, high=0.9),), {"eps": 0.25}


@sample("aten::logit_backward")
def logit_backward_no_eps(make, lib):
    return (make(3, 4), make(3, 4, low=-0.5, high=1.5)), {}


@sample("aten::logit_backward")
def logit_backward_eps(make, lib):
    return (make(3, 4), make(4, low=0, high=1, dtype="float64"), 0.3), {}


@sample("aten::logit_backward.grad_input")
def logit_backward_out(make, lib):
    return (make(3, 4), make(3, 4, low=0.1, high=0.9)), {"grad_input": make(3, 4)}


for _name in ("isposinf", "isneginf"):
    sample(f"aten::{_name}")(lambda make, lib: (
        (lib.tensor([[1.0, float("inf"), -float("inf")], [float("nan"), 0.0, -2.0]]).t(),), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, dtype="int64"),), {}))
    sample(f"aten::{_name}.out")(lambda make, lib: (
        (lib.tensor([float("inf"), -float("inf")], dtype=lib.float16),),
        {"out": lib.empty(2, dtype=lib.bool)}))

for _name in ("deg2rad", "rad2deg"):
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 4, noncontiguous=True),), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(5, dtype="int64"),), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(2, 3, dtype="float64"),), {}))
    sample(f"aten::{_name}_", inplace=True)(lambda make, lib: ((make(3, 4),), {}))
    sample(f"aten::{_name}.out")(lambda make, lib: ((make(5, dtype="int64"),),
                                                    {"out": lib.empty(5, dtype=lib.float64)}))


# -- NaN-ignoring reductions ------------------------------------------------------------

def _with_nans(make, lib, *shape, **options):
    x = make(*shape, **options)
    return lib.where(x > 1.5, lib.tensor(float("nan"), dtype=x.dtype), x)


@sample("aten::nansum")
def nansum_all(make, lib):
    return (_with_nans(make, lib, 3, 4),), {}


@sample("aten::nansum")
def nansum_dims_keepdim(make, lib):
    return (_with_nans(make, lib, 2, 3, 4, noncontiguous=True), [0, -1], True), {}


@sample("aten::nansum")
def nansum_dtype(make, lib):
    return (_with_nans(make, lib, 3, 4), 1), {"dtype": lib.float64}


@sample("aten::nansum")
def nansum_int(make, lib):
    return (make(3, 4, dtype="int32"), 0), {}


@sample("aten::nansum.out")
def nansum_out(make, lib):
    return (_with_nans(make, lib, 3, 4), 1), {"out": make(3)}


@sample("aten::nanmean")
def nanmean_all(make, lib):
    return (_with_nans(make, lib, 3, 4),), {}


@sample("aten::nanmean")
def nanmean_dim_dtype(make, lib):
    return (_with_nans(make, lib, 3, 4, noncontiguous=True), 1, True), {"dtype": lib.float64}


# -- running extrema ----------------------------------------------------------------------

for _name in ("cummax", "cummin"):
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 5), 1), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(4, 3, noncontiguous=True), 0), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(()), 0), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(2, 6, dtype="int64"), -1), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(2, 0), 1), {}))
    sample(f"aten::{_name}")(lambda make, lib: (
        (lib.tensor([1.0, float("nan"), 3.0, float("nan")], dtype=lib.float64), 0), {}))
    sample(f"aten::{_name}.out")(lambda make, lib: (
        (make(3, 4), 1), {"values": make(3, 4), "indices": make(3, 4, dtype="int64")}))

sample("aten::cummaxmin_backward")(lambda make, lib: (
    (make(2, 3), make(2, 3), lib.tensor([[0, 0, 2], [0, 1, 1]]), 1), {}))


# -- binary search ------------------------------------------------------------------------

def _sorted(make, lib, *shape, **options):
    return make(*shape, **options).sort(-1).values


@sample("aten::searchsorted.Tensor")
def searchsorted_1d(make, lib):
    return (_sorted(make, lib, 6), make(3, 4)), {}


@sample("aten::searchsorted.Tensor")
def searchsorted_batched_right(make, lib):
    return (_sorted(make, lib, 2, 5), make(2, 3, noncontiguous=True)), {"right": True}


@sample("aten::searchsorted.Tensor")
def searchsorted_sorter_side(make, lib):
    return (lib.tensor([3.0, -1.0, 2.0, 0.5]), make(5)), {
        "side": "right", "sorter": lib.tensor([1, 3, 2, 0]), "out_int32": True}


@sample("aten::searchsorted.Tensor")
def searchsorted_mixed_dtypes(make, lib):
    return (_sorted(make, lib, 5, dtype="int64"), make(4, dtype="float64")), {}


@sample("aten::searchsorted.Tensor_out")
def searchsorted_out(make, lib):
    return (_sorted(make, lib, 5), make(4)), {"out": lib.empty(4, dtype=lib.int64)}


@sample("aten::searchsorted.Scalar")
def searchsorted_scalar(make, lib):
    return (_sorted(make, lib, 6), 0.5), {"side": "left"}


@sample("aten::searchsorted.Scalar")
def searchsorted_scalar_int(make, lib):
    return (_sorted(make, lib, 6, dtype="int32"), 1), {"right": True, "out_int32": True}


@sample("aten::bucketize.Tensor")
def bucketize_tensor(make, lib):
    return (make(3, 4, noncontiguous=True), _sorted(make, lib, 5)), {}


@sample("aten::bucketize.Tensor")
def bucketize_right_int32(make, lib):
    return (make(6, dtype="int64"), _sorted(make, lib, 4, dtype="int64")), {
        "right": True, "out_int32": True}


@sample("aten::bucketize.Tensor_out")
def bucketize_out(make, lib):
    return (make(4), _sorted(make, lib, 5)), {"out": lib.empty(4, dtype=lib.int32),
                                              "out_int32": True}


@sample("aten::bucketize.Scalar")
def bucketize_scalar(make, lib):
    return (1.25, _sorted(make, lib, 5)), {"right": True}


# -- index_copy ----------------------------------------------------------------------------

@sample("aten::index_copy")
def index_copy_columns(make, lib):
    return (make(3, 4), 1, lib.tensor([2, 0]), make(3, 2)), {}


@sample("aten::index_copy")
def index_copy_rows_noncontiguous(make, lib):
    return (make(4, 3, noncontiguous=True), 0, lib.tensor([3, 1, 0]), make(3, 3)), {}


@sample("aten::index_copy")
def index_copy_scalar_source(make, lib):
    return (make(5), 0, lib.tensor([2]), make(())), {}


@sample("aten::index_copy")
def index_copy_int_scalar_index(make, lib):
    return (make(2, 3, dtype="int64"), -1, lib.tensor(1), make(2, 1, dtype="int64")), {}


@sample("aten::index_copy_", inplace=True)
def index_copy_inplace(make, lib):
    return (make(3, 4), 0, lib.tensor([1]), make(1, 4)), {}


@sample("aten::index_copy.out")
def index_copy_out(make, lib):
    return (make(3, 4), 1, lib.tensor([3]), make(3, 1)), {"out": make(3, 4)}


# -- scatter_reduce ---------------------------------------------------------------------------

_SCATTER_INDEX = [[0, 1, 0, 2], [2, 2, 0, 1]]
for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    sample("aten::scatter_reduce.two")(lambda make, lib, _r=_reduce: (
        (make(3, 4), 0, lib.tensor(_SCATTER_INDEX), make(2, 5), _r), {}))
    sample("aten::scatter_reduce.two")(lambda make, lib, _r=_reduce: (
        (make(4, 3, noncontiguous=True), 1, lib.tensor(_SCATTER_INDEX), make(3, 4), _r),
        {"include_self": False}))

sample("aten::scatter_reduce.two")(lambda make, lib: (
    (make(5, dtype="int64"), 0, lib.tensor([0, 0, 4, 0]), make(4, dtype="int64"), "mean"),
    {"include_self": False}))
sample("aten::scatter_reduce_.two", inplace=True)(lambda make, lib: (
    (make(3, 4), 1, lib.tensor(_SCATTER_INDEX), make(2, 4), "amax"), {}))
sample("aten::scatter_reduce.two_out")(lambda make, lib: (
    (make(3, 4), 0, lib.tensor(_SCATTER_INDEX), make(2, 4), "sum"), {"out": make(3, 4)}))


# -- pairwise distances ---------------------------------------------------------------------

for _p in (0.0, 1.0, 1.5, 2.0, 3.0, float("inf")):
    sample("aten::cdist")(lambda make, lib, _p=_p: ((make(4, 3), make(5, 3), _p), {}))
sample("aten::cdist")(lambda make, lib: ((make(2, 1, 4, 3), make(3, 5, 3, noncontiguous=True)),
                                         {"p": 0.5}))
sample("aten::cdist")(lambda make, lib: ((make(30, 3), make(4, 3)), {}))
sample("aten::cdist")(lambda make, lib: ((make(2, 4, 3, dtype="float64"),
                                          make(1, 3, 3, dtype="float64")), {"compute_mode": 1}))
sample("aten::cdist")(lambda make, lib: ((make(4, 3), make(28, 3)), {"compute_mode": 2}))
sample("aten::cdist")(lambda make, lib: ((make(0, 3), make(4, 3)), {}))
sample("aten::cdist")(lambda make, lib: ((make(3, 0), make(2, 0)), {}))

sample("aten::_euclidean_dist")(lambda make, lib: ((make(4, 3), make(5, 3)), {}))
sample("aten::_euclidean_dist")(lambda make, lib: ((make(2, 4, 3), make(2, 1, 3)), {}))

sample("aten::_cdist_forward")(lambda make, lib: ((make(4, 3), make(5, 3), 1.0, None), {}))
sample("aten::_cdist_forward")(lambda make, lib: ((make(2, 4, 3), make(5, 3), 2.0, 1), {}))
sample("aten::_cdist_forward.out")(lambda make, lib: (
    (make(4, 3), make(5, 3), 2.0, None), {"out": make(4, 5)}))


def _cdist_backward_args(make, lib, p, *batch):
    """(grad, x1, x2, p, the forward's distances)."""
    x1, x2 = make(*batch, 4, 3), make(5, 3)
    dist = lib.ops.aten._cdist_forward.default(x1, x2, p, None)
    return (make(*batch, 4, 5), x1, x2, p, dist), {}


for _p in (1.0, 0.5, 2.0, 3.0, float("inf"), 0.0):
    sample("aten::_cdist_backward")(lambda make, lib, _p=_p: _cdist_backward_args(make, lib, _p))
sample("aten::_cdist_backward")(lambda make, lib: _cdist_backward_args(make, lib, 1.5, 2))
sample("aten::_cdist_backward.out")(lambda make, lib: (
    _cdist_backward_args(make, lib, 2.0)[0], {"out": make(4, 3)}))
