"""Samples for reductions, scans, sorting and softmax (one or more per overload)."""
from ..opinfo import sample

SUM_TOL = {"atol": 1e-4, "rtol": 1e-5}


# -- sum / mean / prod --------------------------------------------------------------

@sample("aten::sum", **SUM_TOL)
def sum_all(make, lib):
    return (make(3, 4),), {}


@sample("aten::sum")
def sum_bool_to_int64(make, lib):
    return (make(5, 3, dtype="bool"),), {}


@sample("aten::sum", **SUM_TOL)
def sum_int_with_dtype(make, lib):
    return (make(4, 5, dtype="int32"),), {"dtype": lib.float64}


@sample("aten::sum.out", **SUM_TOL)
def sum_out(make, lib):
    return (make(3, 4),), {"out": make((), dtype="float32")}


@sample("aten::sum.dim_IntList", **SUM_TOL)
def sum_dims_keepdim(make, lib):
    return (make(2, 3, 4), [0, -1], True), {}


@sample("aten::sum.dim_IntList", **SUM_TOL)
def sum_dim_transposed(make, lib):
    return (make(4, 3).t(), [1]), {}


@sample("aten::sum.dim_IntList", atol=1e-2, rtol=1e-2)
def sum_dim_half(make, lib):
    return (make(3, 5, dtype="float16"), [1]), {}


@sample("aten::sum.dim_IntList")
def sum_empty_dim(make, lib):
    return (make(0, 3), [0]), {}


@sample("aten::sum.IntList_out", **SUM_TOL)
def sum_intlist_out(make, lib):
    return (make(3, 4), [1]), {"out": make(3)}


@sample("aten::mean", **SUM_TOL)
def mean_all(make, lib):
    return (make(3, 4),), {}


@sample("aten::mean.dim", **SUM_TOL)
def mean_dim(make, lib):
    return (make(2, 3, 4), [1, 2], True), {"dtype": lib.float64}


@sample("aten::mean.dtype_out", **SUM_TOL)
def mean_dtype_out(make, lib):
    return (make(3, 4),), {"out": make(())}


@sample("aten::mean.out", **SUM_TOL)
def mean_out(make, lib):
    return (make(3, 4), [0]), {"out": make(4)}


@sample("aten::prod", **SUM_TOL)
def prod_all(make, lib):
    return (make(2, 3, low=-2, high=2),), {}


@sample("aten::prod")
def prod_int(make, lib):
    return (make(2, 3, dtype="int16", low=-4, high=4),), {}


@sample("aten::prod.dim_int", **SUM_TOL)
def prod_dim(make, lib):
    return (make(3, 4), -1, True), {}


@sample("aten::prod.out", **SUM_TOL)
def prod_out(make, lib):
    return (make(2, 3),), {"out": make(())}


@sample("aten::prod.int_out", **SUM_TOL)
def prod_int_out(make, lib):
    return (make(3, 4), 0), {"out": make(4)}


# -- max / min / amax / amin / argmax / argmin / aminmax --------------------------------

for _name in ("max", "min"):
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 4),), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(2, 5, dtype="int32"),), {}))
    sample(f"aten::{_name}.unary_out")(lambda make, lib: ((make(3, 4),), {"out": make(())}))
    sample(f"aten::{_name}.dim")(lambda make, lib: ((make(3, 4), 1), {}))
    sample(f"aten::{_name}.dim")(lambda make, lib: ((make(3, 4, dtype="int64", low=0, high=2),
                                                     0, True), {}))
    sample(f"aten::{_name}.other")(lambda make, lib: ((make(3, 4), make(4)), {}))

sample("aten::max.dim_max")(lambda make, lib: (
    (make(3, 4), 1), {"max": make(3), "max_values": make(3, dtype="int64")}))
sample("aten::min.dim_min")(lambda make, lib: (
    (make(3, 4), 0), {"min": make(4), "min_indices": make(4, dtype="int64")}))

for _name in ("amax", "amin"):
    sample(f"aten::{_name}")(lambda make, lib: ((make(2, 3, 4), [0, 2]), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(2, 3, 4), [], True), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 2, dtype="bool"), [1]), {}))
    sample(f"aten::{_name}.out")(lambda make, lib: ((make(3, 4), [-1]), {"out": make(3)}))

for _name in ("argmax", "argmin"):
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 4),), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 4, dtype="int32", low=0, high=3), 1,
                                                 True), {}))
    sample(f"aten::{_name}.out")(lambda make, lib: ((make(3, 4), 0),
                                                    {"out": make(4, dtype="int64")}))


def _index(make, lib, values, dtype="int64"):
    t = lib.tensor(values, dtype=getattr(lib, dtype))
    return t if make.device == "cpu" else t.to(make.device)


@sample("aten::segment_reduce")
def segment_reduce_lengths(make, lib):
    return (make(6, 2), "max"), {"lengths": _index(make, lib, [2, 1, 2, 1])}


@sample("aten::segment_reduce")
def segment_reduce_empty_segment(make, lib):
    return (make(6, 2), "sum"), {"lengths": _index(make, lib, [2, 0, 3, 1])}


@sample("aten::segment_reduce")
def segment_reduce_offsets_axis1(make, lib):
    return (make(2, 5, 3), "mean"), {"offsets": _index(make, lib, [[0, 2, 2, 5], [0, 1, 4, 5]],
                                                          "int32"), "axis": 1, "initial": 1.5}


@sample("aten::segment_reduce")
def segment_reduce_prod_bf16(make, lib):
    return (make(7, dtype="bfloat16"), "prod"), {"lengths": _index(make, lib, [3, 4])}


@sample("aten::_segment_reduce_backward")
def segment_reduce_backward_sum(make, lib):
    return (make(4, 2), make(4, 2), make(6, 2), "sum"), {
        "lengths": _index(make, lib, [2, 0, 3, 1])}


@sample("aten::_segment_reduce_backward")
def segment_reduce_backward_min(make, lib):
    data = make(5)
    lengths = _index(make, lib, [2, 3])
    output = lib.segment_reduce(data, "min", lengths=lengths)
    return (make(2), output, data, "min"), {"lengths": lengths}


@sample("aten::hash_tensor")
def hash_tensor_all(make, lib):
    return (make(3, 4, noncontiguous=True),), {}


@sample("aten::hash_tensor")
def hash_tensor_dims(make, lib):
    return (make(2, 3, 4, dtype="int16"), [0, -1]), {"keepdim": True}


@sample("aten::hash_tensor")
def hash_tensor_bf16(make, lib):
    return (make(5, 2, dtype="bfloat16"), 1), {}


@sample("aten::hash_tensor.out")
def hash_tensor_out(make, lib):
    return (make(3, 4, dtype="bool"), 0), {"out": make(4, dtype="uint64", low=0)}


@sample("aten::aminmax")
def aminmax_all(make, lib):
    return (make(3, 4),), {}


@sample("aten::aminmax")
def aminmax_dim(make, lib):
    return (make(3, 4),), {"dim": -1, "keepdim": True}


@sample("aten::aminmax.out")
def aminmax_out(make, lib):
    return (make(3, 4),), {"dim": 0, "min": make(4), "max": make(4)}


# -- var / std ------------------------------------------------------------------------

for _name in ("var", "std"):
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 4),), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 4), False), {}))
    sample(f"aten::{_name}.dim")(lambda make, lib: ((make(3, 4), [1], False, True), {}))
    sample(f"aten::{_name}.correction")(lambda make, lib: ((make(2, 3, 4), [0, 2]),
                                                          {"correction": 0}))
    sample(f"aten::{_name}.correction")(lambda make, lib: ((make(3, 4, dtype="float64"),),
                                                          {"correction": 2, "keepdim": True}))
    sample(f"aten::{_name}.correction_out")(lambda make, lib: ((make(3, 4), [1]),
                                                              {"out": make(3)}))

for _name in ("var_mean", "std_mean"):
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 4),), {}))
    sample(f"aten::{_name}.dim")(lambda make, lib: ((make(3, 4), [0], False), {}))
    sample(f"aten::{_name}.correction")(lambda make, lib: ((make(3, 4), [1]),
                                                          {"correction": 0, "keepdim": True}))
    sample(f"aten::{_name}.correction_out")(lambda make, lib: (
        (make(3, 4), [1]), {"out0": make(3), "out1": make(3)}))


# -- norms ------------------------------------------------------------------------

@sample("aten::linalg_vector_norm")
def vector_norm_2(make, lib):
    return (make(3, 4),), {}


@sample("aten::linalg_vector_norm")
def vector_norm_p_dim(make, lib):
    return (make(3, 4), 3, [1], True), {"dtype": lib.float64}


@sample("aten::linalg_vector_norm")
def vector_norm_inf(make, lib):
    return (make(3, 4), float("inf"), [0]), {}


@sample("aten::linalg_vector_norm")
def vector_norm_zero(make, lib):
    return (make(3, 4), 0), {}


@sample("aten::linalg_vector_norm.out")
def vector_norm_out(make, lib):
    return (make(3, 4), 1, [0]), {"out": make(4)}


@sample("aten::norm.Scalar")
def norm_scalar(make, lib):
    return (make(3, 4), 1), {}


@sample("aten::norm.Scalar_out")
def norm_scalar_out(make, lib):
    return (make(3, 4),), {"out": make(())}


@sample("aten::norm.ScalarOpt_dim")
def norm_dim(make, lib):
    return (make(3, 4), None, [1]), {}


@sample("aten::norm.out")
def norm_out(make, lib):
    return (make(3, 4), 2, [0]), {"out": make(4)}


@sample("aten::norm.ScalarOpt_dim_dtype")
def norm_dim_dtype(make, lib):
    return (make(3, 4), 2, [1], True), {"dtype": lib.float64}


@sample("aten::norm.dtype_out")
def norm_dtype_out(make, lib):
    return (make(3, 4), 2, [1], False), {"dtype": lib.float64, "out": make(3, dtype="float64")}


@sample("aten::norm.ScalarOpt_dtype")
def norm_dtype(make, lib):
    return (make(3, 4), 2), {"dtype": lib.float64}


@sample("aten::norm.ScalarOpt_dtype_out")
def norm_dtype_only_out(make, lib):
    return (make(3, 4), 2), {"dtype": lib.float64, "out": make((), dtype="float64")}


# -- logsumexp / scans ---------------------------------------------------------------

@sample("aten::logsumexp")
def logsumexp_dim(make, lib):
    return (make(3, 4), [1]), {}


@sample("aten::logsumexp")
def logsumexp_int(make, lib):
    return (make(3, 4, dtype="int64"), [0, 1], True), {}


@sample("aten::logsumexp.out")
def logsumexp_out(make, lib):
    return (make(3, 4), [0]), {"out": make(4)}


@sample("aten::cumsum", **SUM_TOL)
def cumsum_dim(make, lib):
    return (make(3, 4), 1), {}


@sample("aten::cumsum")
def cumsum_int(make, lib):
    return (make(3, 4, dtype="int32"), 0), {}


@sample("aten::cumsum.out", **SUM_TOL)
def cumsum_out(make, lib):
    return (make(3, 4), -1), {"dtype": lib.float64, "out": make(3, 4, dtype="float64")}


@sample("aten::cumprod", **SUM_TOL)
def cumprod_dim(make, lib):
    return (make(3, 4, low=-2, high=2), 1), {}


@sample("aten::cumprod.out")
def cumprod_out(make, lib):
    return (make(3, 4, dtype="int64"), 0), {"out": make(3, 4, dtype="int64")}


# -- all / any / count_nonzero ------------------------------------------------------------

for _name in ("all", "any"):
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 4, dtype="bool"),), {}))
    sample(f"aten::{_name}")(lambda make, lib: ((make(3, 4, dtype="uint8", low=0, high=2),), {}))
    sample(f"aten::{_name}.all_out")(lambda make, lib: ((make(3, 4),),
                                                        {"out": make((), dtype="bool")}))
    sample(f"aten::{_name}.dim")(lambda make, lib: ((make(3, 4, dtype="int32", low=0, high=2),
                                                     1, True), {}))
    sample(f"aten::{_name}.out")(lambda make, lib: ((make(3, 4, dtype="bool"), 0),
                                                    {"out": make(4, dtype="bool")}))
    sample(f"aten::{_name}.dims")(lambda make, lib: ((make(2, 3, 4, dtype="bool"), [0, -1]), {}))
    sample(f"aten::{_name}.dims")(lambda make, lib: ((make(2, 3, dtype="bool"), []), {}))
    sample(f"aten::{_name}.dims_out")(lambda make, lib: ((make(2, 3, dtype="bool"), [1]),
                                                         {"out": make(2, dtype="bool")}))


@sample("aten::count_nonzero")
def count_nonzero_all(make, lib):
    return (make(3, 4, dtype="int64", low=0, high=2),), {}


@sample("aten::count_nonzero.out")
def count_nonzero_out(make, lib):
    return (make(3, 4, dtype="bool"), 1), {"out": make(3, dtype="int64")}


@sample("aten::count_nonzero.dim_IntList")
def count_nonzero_dims(make, lib):
    return (make(2, 3, 4, dtype="int32", low=0, high=2), [0, 2]), {}


@sample("aten::count_nonzero.dim_IntList_out")
def count_nonzero_dims_out(make, lib):
    return (make(2, 3, dtype="bool"), [0]), {"out": make(3, dtype="int64")}


# -- sort / argsort / topk ----------------------------------------------------------------

@sample("aten::sort")
def sort_last(make, lib):
    return (make(3, 5),), {}


@sample("aten::sort")
def sort_dim0_descending_transposed(make, lib):
    return (make(5, 3).t(), 0, True), {}


@sample("aten::sort.values")
def sort_values(make, lib):
    return (make(3, 4), 1), {"values": make(3, 4), "indices": make(3, 4, dtype="int64")}


@sample("aten::sort.stable")
def sort_stable_ties(make, lib):
    return (make(4, 6, dtype="int64", low=0, high=3),), {"stable": True, "descending": True}


@sample("aten::sort.values_stable")
def sort_values_stable(make, lib):
    return (make(6, dtype="int32", low=0, high=2),), {
        "stable": True, "values": make(6, dtype="int32"), "indices": make(6, dtype="int64")}


@sample("aten::argsort")
def argsort_default(make, lib):
    return (make(3, 5), 0), {}


@sample("aten::argsort.stable")
def argsort_stable(make, lib):
    return (make(8, dtype="int64", low=0, high=3),), {"stable": True}


@sample("aten::topk")
def topk_largest(make, lib):
    return (make(3, 6), 2), {}


@sample("aten::topk")
def topk_smallest_dim0(make, lib):
    return (make(5, 3), 3, 0, False), {}


@sample("aten::topk.values")
def topk_values(make, lib):
    return (make(3, 6), 1), {"values": make(3, 1), "indices": make(3, 1, dtype="int64")}


# -- median / mode --------------------------------------------------------------------

@sample("aten::median")
def median_all(make, lib):
    return (make(3, 4),), {}


@sample("aten::median")
def median_int(make, lib):
    return (make(2, 3, dtype="int64"),), {}


@sample("aten::median.out")
def median_out(make, lib):
    return (make(3, 5),), {"out": make(())}


@sample("aten::median.dim")
def median_dim(make, lib):
    return (make(3, 5), 1, True), {}


@sample("aten::median.dim_values")
def median_dim_values(make, lib):
    return (make(4, 3), 0), {"values": make(3), "indices": make(3, dtype="int64")}


@sample("aten::mode")
def mode_last(make, lib):
    return (make(3, 7, dtype="int64", low=0, high=3),), {}


@sample("aten::mode.values")
def mode_values(make, lib):
    return (make(6, 2, dtype="int32", low=0, high=3), 0), {
        "values": make(2, dtype="int32"), "indices": make(2, dtype="int64")}


# -- softmax --------------------------------------------------------------------------

@sample("aten::softmax.int")
def softmax_int(make, lib):
    return (make(3, 4), 1), {}


@sample("aten::softmax.int")
def softmax_int_dtype(make, lib):
    return (make(3, 4), 0, lib.float64), {}


@sample("aten::log_softmax.int")
def log_softmax_int(make, lib):
    return (make(3, 4), -1), {}


@sample("aten::_softmax")
def _softmax_dim0(make, lib):
    return (make(3, 4), 0, False), {}


@sample("aten::_softmax", atol=1e-3, rtol=1e-3)
def _softmax_half(make, lib):
    return (make(3, 4, dtype="float16"), 1, False), {}


@sample("aten::_softmax.out")
def _softmax_out(make, lib):
    return (make(3, 4), 1, False), {"out": make(3, 4)}


@sample("aten::_log_softmax")
def _log_softmax_dim1(make, lib):
    return (make(2, 3, 4), 1, False), {}


@sample("aten::_log_softmax.out")
def _log_softmax_out(make, lib):
    return (make(3, 4), 0, False), {"out": make(3, 4)}



# -- gradient edge cases (tests/test_autograd_registry.py) ------------------------------
# Names say "ties"/"zeros" where the function is not differentiable at the
# sample, which keeps those out of the finite-difference gradcheck.

def _ties(lib):
    return lib.tensor([[1., 3., 3., 0.], [3., 0., 2., 3.], [-1., 2., 2., 2.]])


def _zeros(lib):
    return lib.tensor([[1., 0., 2., 3.], [0., 0., 1., 2.], [1., 2., 3., 4.]])


@sample("aten::max")
def max_ties_share_grad(make, lib):
    return (_ties(lib),), {}


@sample("aten::min")
def min_ties_share_grad(make, lib):
    return (_ties(lib),), {}


@sample("aten::max.dim")
def max_dim_ties_keepdim(make, lib):
    return (_ties(lib), 0, True), {}


@sample("aten::min.dim")
def min_dim_ties(make, lib):
    return (_ties(lib), -1), {}


@sample("aten::amax")
def amax_ties(make, lib):
    return (_ties(lib), [1]), {}


@sample("aten::amin")
def amin_ties_all_dims_keepdim(make, lib):
    return (_ties(lib), [0, 1], True), {}


@sample("aten::aminmax")
def aminmax_ties(make, lib):
    return (_ties(lib),), {"dim": 0}


@sample("aten::median")
def median_ties(make, lib):
    return (_ties(lib),), {}


@sample("aten::mode")
def mode_float_ties(make, lib):
    return (_ties(lib), 1, True), {}


@sample("aten::sort.stable")
def sort_stable_float_ties(make, lib):
    return (_ties(lib),), {"stable": True, "dim": 0}


@sample("aten::prod")
def prod_one_zero(make, lib):
    return (lib.tensor([[1., 2.], [0., 3.]]),), {}


@sample("aten::prod")
def prod_several_zeros(make, lib):
    return (_zeros(lib),), {}


@sample("aten::prod")
def prod_0d(make, lib):
    return (make(()),), {}


@sample("aten::prod.dim_int")
def prod_dim_zeros(make, lib):
    return (_zeros(lib), 1), {}


@sample("aten::prod.dim_int")
def prod_dim_zeros_keepdim_dtype(make, lib):
    return (_zeros(lib), 0, True), {"dtype": lib.float64}


@sample("aten::cumprod")
def cumprod_zeros(make, lib):
    return (_zeros(lib), 1), {}


@sample("aten::cumprod")
def cumprod_zeros_dtype(make, lib):
    return (_zeros(lib), 0), {"dtype": lib.float64}


@sample("aten::cumsum")
def cumsum_0d(make, lib):
    return (make(()), 0), {}


@sample("aten::sum")
def sum_0d(make, lib):
    return (make(()),), {}


@sample("aten::sum.dim_IntList")
def sum_empty_dim_list(make, lib):
    return (make(2, 3), []), {}


@sample("aten::mean.dim")
def mean_size0_keepdim(make, lib):
    return (make(0, 3), [0], True), {}


@sample("aten::mean.dim")
def mean_two_dims(make, lib):
    return (make(2, 3, 4), [-1, 0]), {}


@sample("aten::logsumexp")
def logsumexp_two_dims_keepdim(make, lib):
    return (make(2, 3, 4), [0, 2], True), {}


@sample("aten::norm.Scalar")
def norm_zero_vector(make, lib):                 # gradient 0 where the norm is 0
    return (lib.zeros(3, 2), 3), {}


@sample("aten::norm.Scalar")
def norm_half_with_zeros(make, lib):
    return (_zeros(lib), 0.5), {}


@sample("aten::norm.ScalarOpt_dim")
def norm_dim_p_1_5(make, lib):
    return (make(3, 4), 1.5, [0], True), {}


@sample("aten::linalg_vector_norm")
def vector_norm_inf_ties(make, lib):
    return (_ties(lib), float("inf"), [1]), {}


@sample("aten::linalg_vector_norm")
def vector_norm_zero_rows(make, lib):
    return (lib.zeros(2, 3), 2, [1]), {}


@sample("aten::std.correction")
def std_zero_row(make, lib):                     # std 0 -> gradient 0
    return (lib.tensor([[1., 1., 1.], [1., 2., 4.]]), [1]), {}


@sample("aten::var_mean.correction")
def var_mean_two_dims_correction(make, lib):
    return (make(2, 3, 4), [0, 2]), {"correction": 2}


@sample("aten::std_mean.correction")
def std_mean_all(make, lib):
    return (make(3, 4),), {}


@sample("aten::kthvalue")
def kthvalue_ties(make, lib):
    return (make(4, 7, dtype="int64", low=0, high=3), 3, 1, True), {}


@sample("aten::kthvalue.values")
def kthvalue_values(make, lib):
    return (make(5, 3), 2, 0), {"values": make(0), "indices": make(0, dtype="int64")}


@sample("aten::msort")
def msort_columns(make, lib):
    return (make(6, 3, dtype="int64", low=0, high=3),), {}


@sample("aten::nanmedian")
def nanmedian_all(make, lib):
    x = make(4, 5)
    return (lib.where(x > 1, lib.tensor(float("nan")), x),), {}


@sample("aten::nanmedian.dim")
def nanmedian_dim(make, lib):
    x = make(4, 5)
    return (lib.where(x > 1, lib.tensor(float("nan")), x), 1, True), {}


@sample("aten::nanmedian.dim_values")
def nanmedian_dim_values(make, lib):
    return (make(6, dtype="int64", low=0, high=2), 0), {
        "values": make(0, dtype="int64"), "indices": make(0, dtype="int64")}
