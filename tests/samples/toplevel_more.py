"""Samples for the second batch of issue 16's top-level functions and Tensor
methods: products (addbmm, addr), elementwise (angle, frexp, complex, polar),
scans and norms (logcumsumexp, dist, renorm), shape ops (combinations, vander,
cov, corrcoef, trapezoid rules, unsafe splits, narrow_copy, slice_inverse),
indexing (masked_scatter_, fill_diagonal_, index_reduce), random samplers
(geometric_, log_normal_ and the out-of-place cauchy / geometric / log_normal)
and factories (range, tril_indices, triu_indices, empty_permuted)."""
from ..opinfo import EXEMPT, sample


def _s(name, fn, **kwargs):
    fn.__name__ = name.split("::")[1].replace(".", "_")
    sample(name, **kwargs)(fn)


# -- products --------------------------------------------------------------------------------

_s("aten::addbmm", lambda make, lib: ((make(2, 3), make(4, 2, 5), make(4, 5, 3)), {}))
_s("aten::addbmm", lambda make, lib: ((make(3), make(2, 2, 4), make(2, 4, 3)),
                                      {"beta": 0.5, "alpha": 2}))
_s("aten::addbmm", lambda make, lib: ((make(2, 3, dtype="float64"), make(0, 2, 5, dtype="float64"),
                                       make(0, 5, 3, dtype="float64")), {"beta": 2}))
_s("aten::addbmm_", lambda make, lib: ((make(2, 3), make(3, 2, 4), make(3, 4, 3)), {"alpha": 3}),
   inplace=True)
_s("aten::addr", lambda make, lib: ((make(3, 4), make(3), make(4)), {}))
_s("aten::addr", lambda make, lib: ((make(4), make(3, dtype="float64"), make(4, dtype="float64")),
                                    {"beta": 2, "alpha": -1}))
_s("aten::addr", lambda make, lib: ((make(3, 4, dtype="int64"), make(3, dtype="int64"),
                                     make(4, dtype="int64")), {"beta": 0, "alpha": 2}))
_s("aten::addr", lambda make, lib: ((make(3, 4, dtype="bool"), make(3, dtype="bool"),
                                     make(4, dtype="bool")), {}))
_s("aten::addr_", lambda make, lib: ((make(3, 4), make(3), make(4)), {"beta": 0.5}),
   inplace=True)

# -- elementwise -----------------------------------------------------------------------------

_s("aten::angle", lambda make, lib: ((make(3, 4),), {}))
_s("aten::angle", lambda make, lib: ((make(3, 4, dtype="complex64"),), {}))
_s("aten::angle", lambda make, lib: ((make(2, 3, dtype="int64", noncontiguous=True),), {}))
_s("aten::frexp.Tensor", lambda make, lib: ((make(3, 4, low=-100, high=100),), {}))
_s("aten::frexp.Tensor", lambda make, lib: ((make(2, 3, dtype="float16"),), {}))
_s("aten::frexp.Tensor_out", lambda make, lib: ((make(3, 4, dtype="float64"),),
                                                {"mantissa": make(3, 4, dtype="float64"),
                                                 "exponent": make(3, 4, dtype="int32")}))
_s("aten::complex", lambda make, lib: ((make(3, 4), make(4)), {}))
_s("aten::complex", lambda make, lib: ((make(2, 3, dtype="float64", noncontiguous=True),
                                        make(2, 3, dtype="float64")), {}))
_s("aten::complex.out", lambda make, lib: ((make(3), make(3)),
                                           {"out": make(3, dtype="complex64")}))
_s("aten::polar", lambda make, lib: ((make(3, 4, low=0, high=2), make(3, 4)), {}))
_s("aten::polar", lambda make, lib: ((make(3, dtype="float64", low=0, high=2),
                                      make(2, 1, dtype="float64")), {}))
_s("aten::polar.out", lambda make, lib: ((make(3, low=0), make(3)),
                                         {"out": make(3, dtype="complex64")}))

# -- scans and norms --------------------------------------------------------------------------

_s("aten::_logcumsumexp", lambda make, lib: ((make(3, 4), 1), {}))
_s("aten::logcumsumexp", lambda make, lib: ((make(3, 4), 0), {}))
_s("aten::logcumsumexp", lambda make, lib: ((make(2, 5, dtype="float64", noncontiguous=True), -1),
                                            {}))
_s("aten::logcumsumexp", lambda make, lib: ((make((), dtype="float64"), 0), {}))
_s("aten::logcumsumexp", lambda make, lib: ((make(2, 3, dtype="complex64", low=-1, high=1), 1),
                                            {}), atol=1e-4)
_s("aten::logcumsumexp.out", lambda make, lib: ((make(3, 4), 1), {"out": make(3, 4)}))
_s("aten::dist", lambda make, lib: ((make(3, 4), make(4)), {}))
_s("aten::dist", lambda make, lib: ((make(3, 4, dtype="float64"), make(3, 4, dtype="float64")),
                                    {"p": 3}))
_s("aten::dist", lambda make, lib: ((make(5), make(5)), {"p": float("inf")}))
_s("aten::renorm", lambda make, lib: ((make(3, 4), 2, 0, 2.5), {}))
_s("aten::renorm", lambda make, lib: ((make(2, 3, 4, dtype="float64"), 1.5, -1, 1.0), {}))
_s("aten::renorm_", lambda make, lib: ((make(3, 4), 1, 1, 2.0), {}), inplace=True)

# -- shape ops ---------------------------------------------------------------------------------

EXEMPT["aten::combinations"] = ("masked_select inside: data-dependent output shape, no Meta "
                                 "kernel in PyTorch either (tests/test_toplevel_more.py "
                                 "compares values)")
# (integers only: PyTorch's vander writes into a tensor its cumprod saved, so its
# gradient fails in both libraries; tests/test_toplevel_more.py checks that error)
_s("aten::vander", lambda make, lib: ((make(4, dtype="int64"),), {}))
_s("aten::vander", lambda make, lib: ((make(3, dtype="int32"),), {"N": 5, "increasing": True}))
for _op in ("cov", "corrcoef"):
    EXEMPT[f"aten::{_op}"] = ("reads the weights' sums to check them (is_scalar_tensor_true): no "
                              "Meta in PyTorch either; values and gradients in "
                              "tests/test_toplevel_more.py")
_s("aten::trapezoid.x", lambda make, lib: ((make(3, 4), make(4)), {}))
_s("aten::trapezoid.x", lambda make, lib: ((make(3, 4, dtype="float64"), make(3, 4,
                                                                             dtype="float64")),
                                           {"dim": 0}))
_s("aten::trapezoid.dx", lambda make, lib: ((make(3, 4),), {"dx": 0.5}))
_s("aten::trapezoid.dx", lambda make, lib: ((make(3, 4, dtype="int64"),), {"dim": 0}))
_s("aten::trapz.x", lambda make, lib: ((make(2, 5), make(5)), {}))
_s("aten::trapz.dx", lambda make, lib: ((make(2, 5),), {"dx": 2.0, "dim": 0}))
_s("aten::cumulative_trapezoid.x", lambda make, lib: ((make(3, 4), make(4)), {}))
_s("aten::cumulative_trapezoid.dx", lambda make, lib: ((make(3, 4),), {"dx": 0.25, "dim": 0}))
_s("aten::unsafe_split.Tensor", lambda make, lib: ((make(5, 3), 2), {}))
_s("aten::unsafe_split.Tensor", lambda make, lib: ((make(2, 6, dtype="float64"), 4, 1), {}))
_s("aten::unsafe_split_with_sizes", lambda make, lib: ((make(5, 3), [1, 4]), {}))
_s("aten::unsafe_split_with_sizes", lambda make, lib: ((make(3, 6), [2, 0, 4], -1), {}))
# (their out= overloads return nothing: these check both libraries and Meta accept the call)
_s("aten::unsafe_split.Tensor_out",
   lambda make, lib: ((make(5, 4), 2), {"out": [make(2, 4), make(2, 4), make(1, 4)]}))
_s("aten::unsafe_split_with_sizes.out",
   lambda make, lib: ((make(3, 6), [4, 2], 1), {"out": [make(0), make(3, 2)]}))
_s("aten::unsafe_chunk", lambda make, lib: ((make(7, 2), 3), {}))
_s("aten::narrow_copy", lambda make, lib: ((make(4, 5), 1, 1, 3), {}))
_s("aten::narrow_copy", lambda make, lib: ((make(4, 5, noncontiguous=True), 0, 1, 2), {}))
_s("aten::narrow_copy.out", lambda make, lib: ((make(4, 5), 0, 0, 2), {"out": make(2, 5)}))
EXEMPT["aten::slice_inverse"] = ("a view of its first argument's storage with the second's "
                                 "geometry (functionalization's inverse of slice): values in "
                                 "tests/test_toplevel_more.py")

# -- indexing -----------------------------------------------------------------------------------

_s("aten::masked_scatter_", lambda make, lib: ((make(3, 4), make(4, dtype="bool"), make(12)), {}),
   inplace=True)
_s("aten::masked_scatter_", lambda make, lib: ((make(2, 3, dtype="int64"), make(2, 3, dtype="bool"),
                                                make(8, dtype="int64")), {}), inplace=True)
_s("aten::fill_diagonal_", lambda make, lib: ((make(4, 3), 2.5), {}), inplace=True)
_s("aten::fill_diagonal_", lambda make, lib: ((make(7, 2), -1), {"wrap": True}), inplace=True)
_s("aten::fill_diagonal_", lambda make, lib: ((make(3, 3, 3, dtype="int64"), 5), {}),
   inplace=True)
for _reduce in ("prod", "mean", "amax", "amin"):
    _s("aten::index_reduce", lambda make, lib, r=_reduce: (
        (make(3, 4), 0, lib.tensor([0, 2, 0, 1, 2]), make(5, 4), r), {}))
    _s("aten::index_reduce", lambda make, lib, r=_reduce: (
        (make(3, 4, dtype="float64"), 1, lib.tensor([3, 0, 3]), make(3, 3, dtype="float64"), r),
        {"include_self": False}))
_s("aten::index_reduce_", lambda make, lib: ((make(4, 2), 0, lib.tensor([1, 1, 3]), make(3, 2),
                                              "mean"), {}), inplace=True)

# -- random samplers -------------------------------------------------------------------------

_s("aten::geometric_", lambda make, lib: ((make(3, 4), 0.3), {}), inplace=True, random=True)
_s("aten::geometric_", lambda make, lib: ((make(5, dtype="int64"), 0.8), {}), inplace=True,
   random=True)
_s("aten::log_normal_", lambda make, lib: ((make(3, 4),), {}), inplace=True, random=True)
_s("aten::log_normal_", lambda make, lib: ((make(6, dtype="float64"), 0.5, 0.25), {}),
   inplace=True, random=True)
_s("aten::cauchy", lambda make, lib: ((make(3, 4),), {"median": 1.0}), random=True)
_s("aten::geometric", lambda make, lib: ((make(3, 4), 0.5), {}), random=True)
_s("aten::log_normal", lambda make, lib: ((make(3, 4),), {"std": 0.5}), random=True)

# -- factories --------------------------------------------------------------------------------

_s("aten::range.step", lambda make, lib: ((1, 4, 0.5), {}))
_s("aten::range.step", lambda make, lib: ((5, -1, -2), {"dtype": lib.int64}))
_s("aten::range", lambda make, lib: ((0, 3), {"dtype": lib.float64}))
_s("aten::range.out", lambda make, lib: ((0, 1, 0.25), {"out": make(5)}))
_s("aten::range.out_", lambda make, lib: ((2, 6), {"out": make(0, dtype="int64")}))
_s("aten::tril_indices", lambda make, lib: ((4, 3), {}))
_s("aten::tril_indices", lambda make, lib: ((3, 5, 1), {}))
_s("aten::triu_indices", lambda make, lib: ((4, 4, -1), {}))
_s("aten::triu_indices", lambda make, lib: ((0, 3), {}))
EXEMPT["aten::empty_permuted"] = ("uninitialized values: strides and dtype compared in "
                                  "tests/test_toplevel_more.py")
