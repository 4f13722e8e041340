"""Samples for the top-level functions and Tensor methods added with issue 16
(elementwise: gcd, lcm, heaviside, nextafter, ldexp, float_power, isin, isreal;
views and shape ops: imag, adjoint, fliplr, flipud, diagflat, column_stack,
dstack; indexing: take_along_dim, argwhere; products: inner; scans in place:
cumsum_, cumprod_; the conjugate/negative bits: is_conj, is_neg, resolve_neg,
conj_physical_)."""
from ..opinfo import EXEMPT, sample


def _s(name, fn, **kwargs):
    fn.__name__ = name.split("::")[1].replace(".", "_")
    sample(name, **kwargs)(fn)


# -- elementwise ---------------------------------------------------------------------------

for _op in ("gcd", "lcm"):
    _s(f"aten::{_op}", lambda make, lib: ((make(3, 4, dtype="int64", low=-20, high=20),
                                           make(4, dtype="int32", low=-9, high=9)), {}))
    _s(f"aten::{_op}", lambda make, lib: ((make(2, 3, dtype="int16", low=0, high=30,
                                                noncontiguous=True),
                                           make(2, 3, dtype="int16", low=0, high=30)), {}))
    _s(f"aten::{_op}_", lambda make, lib: ((make(3, 4, dtype="int64", low=-20, high=20),
                                            make(3, 4, dtype="int64", low=0, high=9)), {}),
       inplace=True)

_s("aten::heaviside", lambda make, lib: ((make(3, 4, low=-1, high=2).round(), make(4)), {}))
_s("aten::heaviside", lambda make, lib: ((make(3, 4, dtype="int64", low=-2, high=2),
                                          make((), dtype="int64")), {}))
_s("aten::heaviside_", lambda make, lib: ((make(3, 4, low=-1, high=2).round(), make(3, 4)), {}),
   inplace=True)
_s("aten::nextafter", lambda make, lib: ((make(3, 4), make(4)), {}))
_s("aten::nextafter", lambda make, lib: ((make(3, 4, dtype="float64"), make(3, 4, dtype="float64")
                                          .sign()), {}))
_s("aten::nextafter", lambda make, lib: ((make(2, 3, dtype="float16", low=-1, high=1).round(),
                                          make(2, 3, dtype="float16")), {}))
_s("aten::nextafter", lambda make, lib: ((make(2, 3, dtype="bfloat16"),
                                          -make(2, 3, dtype="bfloat16")), {}))
_s("aten::nextafter_", lambda make, lib: ((make(3, 4), make(3, 4)), {}), inplace=True)
# (non-negative exponents: PyTorch's gradient raises 2 to an integer power, 0 below 0)
_s("aten::ldexp.Tensor", lambda make, lib: ((make(3, 4), make(4, dtype="int64", low=0, high=4)),
                                            {}))
_s("aten::ldexp.Tensor", lambda make, lib: ((make(3, 4, dtype="int32"),
                                             make(3, 4, dtype="int32", low=0, high=5)), {}))
_s("aten::ldexp_", lambda make, lib: ((make(3, 4), make(3, 4, dtype="int64", low=0, high=4)), {}),
   inplace=True)
_s("aten::ldexp.out", lambda make, lib: ((make(3, 4), make(3, 4, low=0, high=4)),
                                         {"out": make(3, 4)}))

_s("aten::float_power.Tensor_Tensor", lambda make, lib: ((make(3, 4, low=0, high=3),
                                                          make(4, dtype="int64", low=-2, high=3)),
                                                         {}))
_s("aten::float_power.Tensor_Scalar", lambda make, lib: ((make(3, 4, dtype="int32"), 2), {}))
_s("aten::float_power.Tensor_Scalar", lambda make, lib: ((make(3, 4), 1.5j), {}))
_s("aten::float_power.Scalar", lambda make, lib: ((2, make(3, 4)), {}))
_s("aten::float_power.Tensor_Tensor_out",
   lambda make, lib: ((make(3, 4, low=0, high=3), make(4)), {"out": make(3, 4, dtype="float64")}))
_s("aten::float_power.Tensor_Scalar_out",
   lambda make, lib: ((make(3, 4, low=0, high=3), -0.5), {"out": make(3, 4, dtype="float64")}))
_s("aten::float_power.Scalar_out",
   lambda make, lib: ((3, make(3, 4)), {"out": make(3, 4, dtype="float64")}))
_s("aten::float_power_.Tensor", lambda make, lib: ((make(3, 4, dtype="float64", low=0, high=3),
                                                   make(4)), {}), inplace=True)
_s("aten::float_power_.Scalar", lambda make, lib: ((make(3, 4, dtype="float64", low=0, high=3),
                                                   3), {}), inplace=True)

_s("aten::isin.Tensor_Tensor", lambda make, lib: ((make(3, 4, dtype="int64", low=0, high=6),
                                                   make(5, dtype="int64", low=0, high=6)), {}))
_s("aten::isin.Tensor_Tensor", lambda make, lib: ((make(3, 4, low=-2, high=2).round(),
                                                   make(2, 2, dtype="int32", low=-2, high=2)),
                                                  {"invert": True}))
_s("aten::isin.Tensor_Scalar", lambda make, lib: ((make(3, 4, dtype="int64", low=0, high=4), 2),
                                                  {}))
_s("aten::isin.Scalar_Tensor", lambda make, lib: ((2, make(5, dtype="int64", low=0, high=4)), {}))
_s("aten::isreal", lambda make, lib: ((make(3, 4),), {}))
_s("aten::isreal", lambda make, lib: ((make(3, 4).to(lib.complex64) * make(3, 4, low=0, high=2)
                                      .round().to(lib.complex64) ** 0.5,), {}))

_s("aten::conj_physical_", lambda make, lib: ((make(3, 4, dtype="complex64"),), {}), inplace=True)
_s("aten::conj_physical_", lambda make, lib: ((make(3, 4),), {}), inplace=True)
_s("aten::is_conj", lambda make, lib: ((make(3, 4, dtype="complex64"),), {}))
_s("aten::is_neg", lambda make, lib: ((make(3, 4),), {}))
_s("aten::resolve_neg", lambda make, lib: ((make(3, 4),), {}))

# -- views, shape ops, indexing, products, scans ------------------------------------------------

_s("aten::imag", lambda make, lib: ((make(3, 4, dtype="complex64"),), {}))
# (complex adjoint: conj copies here, PyTorch's is a view; values in test_toplevel_api.py)
_s("aten::adjoint", lambda make, lib: ((make(3, 4),), {}))
_s("aten::fliplr", lambda make, lib: ((make(3, 4, 2),), {}))
_s("aten::flipud", lambda make, lib: ((make(3, 4, noncontiguous=True),), {}))
_s("aten::diagflat", lambda make, lib: ((make(2, 3),), {"offset": -1}))
_s("aten::diagflat", lambda make, lib: ((make(4, dtype="int64"), 2), {}))
_s("aten::column_stack", lambda make, lib: (([make(3), make(3, 2), make(3, 1)],), {}))
_s("aten::column_stack", lambda make, lib: (([make(()), make((), dtype="float64")],), {}))
_s("aten::dstack", lambda make, lib: (([make(3), make(1, 3, 2)],), {}))
_s("aten::dstack", lambda make, lib: (([make(2, 3), make(2, 3, dtype="int64")],), {}))
_s("aten::take_along_dim", lambda make, lib: ((make(3, 4), make(3, 2, dtype="int64", low=0,
                                                                high=4)), {"dim": 1}))
_s("aten::take_along_dim", lambda make, lib: ((make(3, 4), make(5, 1, dtype="int64", low=0,
                                                                high=3)), {"dim": 0}))
_s("aten::take_along_dim", lambda make, lib: ((make(3, 4), make(5, dtype="int64", low=0,
                                                                high=12)), {}))
_s("aten::take_along_dim.out", lambda make, lib: ((make(3, 4), make(3, 2, dtype="int64", low=0,
                                                                    high=4), -1),
                                                  {"out": make(3, 2)}))
EXEMPT["aten::argwhere"] = ("data-dependent output shape: no Meta kernel in PyTorch either "
                            "(tests/test_toplevel_api.py compares values)")
_s("aten::inner", lambda make, lib: ((make(2, 3), make(4, 3)), {}))
_s("aten::inner", lambda make, lib: ((make(2, 5, 3), make(3)), {}))
_s("aten::inner", lambda make, lib: ((make(()), make(2, 3)), {}))
_s("aten::cumsum_", lambda make, lib: ((make(3, 4), 1), {}), inplace=True)
_s("aten::cumsum_", lambda make, lib: ((make(3, 4, dtype="int64"), 0), {"dtype": lib.int64}),
   inplace=True)
_s("aten::cumprod_", lambda make, lib: ((make(3, 4, low=-1, high=2), -1), {}), inplace=True)
