"""Samples for elementwise ops (kernels/pointwise.py, kernels/activation.py).

Most ops come in families that share a sample shape, so samples are registered
by small loops: for each overload, a functional sample (broadcasting, a
non-contiguous or transposed input, an integer or half dtype), and one each for
the derived in-place and ``out=`` overloads.
"""
import numpy as np

from ..opinfo import sample

HALF = {"atol": 1e-2, "rtol": 1e-2}      # float16/bfloat16 transcendental ops may differ by an ulp


def _reg(name, fn, **kwargs):
    """Register ``fn`` under a readable name (pytest ids use the function's name)."""
    def wrapper(make, lib):
        return fn(make, lib)
    wrapper.__name__ = fn.__name__ if fn.__name__ != "<lambda>" else name.split("::")[1]
    sample(name, **kwargs)(wrapper)


NUMBERS_OK = {"add", "sub", "mul", "div", "true_divide", "floor_divide"}


def _special(make, lib, values, dtype="float32"):
    """A tensor with chosen values (nan, inf ...) on the sample's device."""
    t = lib.tensor(np.array(values, dtype=np.float32), dtype=getattr(lib, dtype))
    return t.to(make.device) if make.device != "cpu" else t


# -- binary arithmetic -----------------------------------------------------------------

def _binary_family(op, tensor_ov, scalar_ov, inplace, out, scalar_inplace=None, scalar_out=None,
                   int_ok=True, low=-3, high=3, divisor=False, scalar=2.5, kwargs=None):
    kw = kwargs or {}
    dlow, dhigh = (1, 5) if divisor else (low, high)

    def broadcast(make, lib):
        return (make(3, 4, low=low, high=high), make(4, low=dlow, high=dhigh)), dict(kw)

    def transposed_half(make, lib):
        return (make(4, 3, dtype="float16", low=low, high=high).t(),
                make(3, 4, dtype="float16", low=dlow, high=dhigh)), dict(kw)

    def noncontig_int(make, lib):
        return (make(2, 3, dtype="int32", low=low, high=high, noncontiguous=True),
                make(2, 3, dtype="int64", low=dlow, high=dhigh)), dict(kw)

    def zero_dim_bf16(make, lib):
        return (make(2, 3, dtype="bfloat16", low=low, high=high),
                make((), dtype="float64", low=dlow, high=dhigh)), dict(kw)

    def with_scalar(make, lib):
        return (make(2, 3, low=low, high=high), scalar), dict(kw)

    def in_place(make, lib):
        return (make(3, 4, low=low, high=high), make(3, 4, low=dlow, high=dhigh,
                                                     noncontiguous=True)), dict(kw)

    def out_variant(make, lib):
        return (make(3, 4, low=low, high=high), make(1, 4, low=dlow, high=dhigh)), \
            dict(kw, out=make(3, 4))

    def scalar_in_place(make, lib):
        return (make(3, 4, low=low, high=high), scalar), dict(kw)

    def scalar_out_variant(make, lib):
        return (make(3, 4, low=low, high=high), scalar), dict(kw, out=make(3, 4))

    name = f"aten::{op}.{tensor_ov}" if tensor_ov else f"aten::{op}"
    for fn in (broadcast, transposed_half, zero_dim_bf16) + ((noncontig_int,) if int_ok else ()):
        _reg(name, fn, **HALF)
    if op in NUMBERS_OK:   # torch.ops.aten.<op>.Tensor only takes a number for these
        _reg(name, with_scalar)
    if inplace:
        _reg(f"aten::{inplace}", in_place, inplace=True)
    if out:
        _reg(f"aten::{out}", out_variant)
    if scalar_ov:
        _reg(f"aten::{op}.{scalar_ov}", with_scalar)
        _reg(f"aten::{op}.{scalar_ov}", lambda make, lib: ((make(2, 3, dtype="int64"), 3), dict(kw))
             if int_ok else ((make(2, 3, dtype="float16"), 3), dict(kw)))
    if scalar_inplace:
        _reg(f"aten::{scalar_inplace}", scalar_in_place, inplace=True)
    if scalar_out:
        _reg(f"aten::{scalar_out}", scalar_out_variant)


for _op in ("add", "sub"):
    _binary_family(_op, "Tensor", "Scalar", f"{_op}_.Tensor", f"{_op}.out", f"{_op}_.Scalar",
                   f"{_op}.Scalar_out")
    _binary_family(_op, "Tensor", None, None, None, kwargs={"alpha": 2})
_binary_family("rsub", "Tensor", "Scalar", None, "rsub.Tensor_out", None, "rsub.Scalar_out")
_binary_family("mul", "Tensor", "Scalar", "mul_.Tensor", "mul.out", "mul_.Scalar",
               "mul.Scalar_out")
_binary_family("div", "Tensor", "Scalar", "div_.Tensor", "div.out", "div_.Scalar",
               "div.Scalar_out", divisor=True)
for _mode in ("trunc", "floor"):
    _binary_family("div", "Tensor_mode", "Scalar_mode", "div_.Tensor_mode", "div.out_mode",
                   "div_.Scalar_mode", "div.Scalar_mode_out", divisor=True,
                   kwargs={"rounding_mode": _mode})
_binary_family("true_divide", "Tensor", "Scalar", "true_divide_.Tensor", "true_divide.out",
               "true_divide_.Scalar", None, divisor=True)
_binary_family("floor_divide", None, "Scalar", "floor_divide_.Tensor", "floor_divide.out",
               "floor_divide_.Scalar", "floor_divide.Scalar_out", divisor=True)
for _op in ("remainder", "fmod"):
    _binary_family(_op, "Tensor", "Scalar", f"{_op}_.Tensor", f"{_op}.Tensor_out",
                   f"{_op}_.Scalar", f"{_op}.Scalar_out", divisor=True, low=-9, high=9)
_binary_family("pow", "Tensor_Tensor", "Tensor_Scalar", "pow_.Tensor", "pow.Tensor_Tensor_out",
               "pow_.Scalar", "pow.Tensor_Scalar_out", low=0, high=3, divisor=True)
for _op in ("atan2", "hypot"):
    _binary_family(_op, None, None, f"{_op}_", f"{_op}.out", int_ok=(_op == "atan2"))
for _op in ("maximum", "minimum", "fmax", "fmin"):
    _binary_family(_op, None, None, None, f"{_op}.out")
for _op in ("logaddexp", "logaddexp2"):
    _binary_family(_op, None, None, None, f"{_op}.out", int_ok=False)
_binary_family("xlogy", "Tensor", "Scalar_Other", "xlogy_.Tensor", "xlogy.OutTensor",
               "xlogy_.Scalar_Other", "xlogy.OutScalar_Other", low=0, high=3)
_binary_family("copysign", "Tensor", "Scalar", "copysign_.Tensor", "copysign.out",
               "copysign_.Scalar", "copysign.Scalar_out")


@sample("aten::div.Tensor")
def div_int_by_int(make, lib):
    return (make(3, 4, dtype="int64"), make(4, dtype="int32", low=1, high=4)), {}


@sample("aten::pow.Tensor_Tensor")
def pow_int_negative_exponent(make, lib):
    return (make(3, 4, dtype="int64", low=-2, high=3), make(4, dtype="int64", low=-2, high=3)), {}


@sample("aten::pow.Tensor_Scalar")
def pow_float_exponent(make, lib):
    return (make(3, 4, low=0, high=3), -1.5), {}


@sample("aten::pow.Scalar")
def pow_scalar_base(make, lib):
    return (2, make(3, 4, dtype="int64", low=0, high=6)), {}


@sample("aten::pow.Scalar")
def pow_float_scalar_base(make, lib):
    return (1.5, make(3, 4)), {}


@sample("aten::pow.Scalar_out")
def pow_scalar_base_out(make, lib):
    return (2.5, make(3, 4)), {"out": make(3, 4)}


@sample("aten::remainder.Scalar_Tensor")
def remainder_scalar_dividend(make, lib):
    return (-7, make(3, 4, dtype="int64", low=1, high=5)), {}


@sample("aten::remainder.Scalar_Tensor_out")
def remainder_scalar_dividend_out(make, lib):
    return (7.5, make(3, 4, low=1, high=5)), {"out": make(3, 4)}


@sample("aten::xlogy.Scalar_Self")
def xlogy_scalar_self(make, lib):
    return (2, make(3, 4, low=0, high=3)), {}


@sample("aten::xlogy.OutScalar_Self")
def xlogy_scalar_self_out(make, lib):
    return (0.5, make(3, 4, low=0, high=3)), {"out": make(3, 4)}


@sample("aten::xlogy.Tensor")
def xlogy_zeros_and_nan(make, lib):
    return (_special(make, lib, [0.0, 0.0, 1.0, 2.0]),
            _special(make, lib, [np.nan, 1.0, 0.0, np.nan])), {}


@sample("aten::add.Tensor")
def add_uint8_wraps(make, lib):
    return (make(3, 4, dtype="uint8", low=200, high=255), 1000), {}


@sample("aten::add.Tensor")
def add_bool(make, lib):
    return (make(3, 4, dtype="bool"), make(4, dtype="bool")), {}


@sample("aten::add.Tensor")
def add_channels_last(make, lib):
    x = make(2, 3, 4, 5).permute(0, 2, 3, 1)
    return (x, make(5, 1)), {}


@sample("aten::mul.Tensor")
def mul_size_zero(make, lib):
    return (make(0, 4), make(4)), {}


@sample("aten::floor_divide")
def floor_divide_negative(make, lib):
    return (make(3, 4, low=-9, high=9), make(4, low=-3, high=-1)), {}


@sample("aten::lerp.Scalar")
def lerp_scalar(make, lib):
    return (make(3, 4), make(4), 0.3), {}


@sample("aten::lerp.Scalar", **HALF)
def lerp_scalar_large_weight(make, lib):
    return (make(4, 3, dtype="bfloat16").t(), make(3, 4, dtype="bfloat16"), 0.75), {}


@sample("aten::lerp.Tensor")
def lerp_tensor(make, lib):
    return (make(3, 4), make(3, 4, noncontiguous=True), make(4, low=0, high=1)), {}


@sample("aten::lerp_.Scalar", inplace=True)
def lerp_inplace(make, lib):
    return (make(3, 4), make(3, 4), 0.5), {}


@sample("aten::lerp_.Tensor", inplace=True)
def lerp_tensor_inplace(make, lib):
    return (make(3, 4), make(3, 4), make(3, 4, low=0, high=1)), {}


@sample("aten::lerp.Scalar_out")
def lerp_out(make, lib):
    return (make(3, 4), make(3, 4), -0.2), {"out": make(3, 4)}


@sample("aten::lerp.Tensor_out")
def lerp_tensor_out(make, lib):
    return (make(3, 4), make(3, 4), make((), low=0, high=1)), {"out": make(3, 4)}


# -- unary ops -------------------------------------------------------------------------------

def _unary_family(op, inplace=True, out=True, int_ok=True, bool_ok=True, low=-3, high=3,
                  tol=None):
    tol = tol or {}

    def contiguous(make, lib):
        return (make(3, 4, low=low, high=high),), {}

    def transposed(make, lib):
        return (make(4, 3, low=low, high=high).t(),), {}

    def half(make, lib):
        return (make(2, 5, dtype="float16", low=low, high=high, noncontiguous=True),), {}

    def bfloat(make, lib):
        return (make(2, 3, dtype="bfloat16", low=low, high=high),), {}

    def double_0d(make, lib):
        return (make((), dtype="float64", low=low, high=high),), {}

    def integer(make, lib):
        return (make(3, 4, dtype="int32", low=max(low, -3), high=min(max(high, 1), 4)),), {}

    def boolean(make, lib):
        return (make(3, 4, dtype="bool"),), {}

    def in_place(make, lib):
        return (make(3, 4, low=low, high=high),), {}

    def out_variant(make, lib):
        return (make(3, 4, low=low, high=high),), {"out": make(3, 4)}

    name = f"aten::{op}"
    for fn in (contiguous, transposed, double_0d):
        _reg(name, fn, **tol)
    for fn in (half, bfloat):
        _reg(name, fn, **HALF)
    if int_ok:
        _reg(name, integer, **tol)
    if bool_ok:
        _reg(name, boolean, **tol)
    if inplace:
        _reg(f"aten::{op}_", in_place, inplace=True, **tol)
    if out:
        _reg(f"aten::{op}.out", out_variant, **tol)


for _op in ("neg",):
    _unary_family(_op, bool_ok=False)
for _op in ("abs", "floor", "ceil", "trunc"):
    _unary_family(_op, bool_ok=False)
for _op in ("sign", "sgn", "square"):
    _unary_family(_op)
_unary_family("round", bool_ok=False, low=-5, high=5)
_unary_family("frac", int_ok=False, bool_ok=False)
for _op in ("reciprocal", "exp", "exp2", "expm1", "sin", "cos", "tan", "atan", "sinh", "cosh",
            "tanh", "asinh", "erf", "erfc", "sigmoid"):
    _unary_family(_op, tol={"atol": 1e-5, "rtol": 1e-5})
for _op in ("sqrt", "rsqrt", "log", "log2", "log10", "log1p"):
    _unary_family(_op, low=0.1, high=5, tol={"atol": 1e-5, "rtol": 1e-5})
for _op in ("asin", "acos", "atanh", "erfinv"):
    _unary_family(_op, low=-0.99, high=0.99, tol={"atol": 1e-5, "rtol": 1e-5})
_unary_family("acosh", low=1, high=5, tol={"atol": 1e-5, "rtol": 1e-5})


@sample("aten::bitwise_not")
def bitwise_not_uint8(make, lib):
    return (make(3, 4, dtype="uint8", low=0, high=255),), {}


@sample("aten::bitwise_not")
def bitwise_not_int_transposed(make, lib):
    return (make(4, 3, dtype="int64", low=-100, high=100).t(),), {}


@sample("aten::bitwise_not")
def bitwise_not_bool(make, lib):
    return (make(3, 4, dtype="bool", noncontiguous=True),), {}


@sample("aten::bitwise_not_", inplace=True)
def bitwise_not_inplace(make, lib):
    return (make(3, 4, dtype="int8", low=-100, high=100),), {}


@sample("aten::bitwise_not.out")
def bitwise_not_out(make, lib):
    return (make(3, 4, dtype="int16", low=-100, high=100),), {"out": make(3, 4, dtype="int16")}


@sample("aten::round.decimals")
def round_decimals(make, lib):
    return (make(3, 4, low=-100, high=100),), {"decimals": 2}


@sample("aten::round.decimals")
def round_negative_decimals(make, lib):
    return (make(3, 4, low=-1000, high=1000),), {"decimals": -2}


@sample("aten::round")
def round_halves(make, lib):
    return (_special(make, lib, [0.5, 1.5, 2.5, -0.5, -2.5, 3.4999]),), {}


@sample("aten::round_.decimals", inplace=True)
def round_decimals_inplace(make, lib):
    return (make(3, 4, low=-10, high=10),), {"decimals": 1}


@sample("aten::round.decimals_out")
def round_decimals_out(make, lib):
    return (make(3, 4, low=-10, high=10),), {"decimals": 1, "out": make(3, 4)}


@sample("aten::sign")
def sign_special(make, lib):
    return (_special(make, lib, [np.nan, -0.0, 0.0, np.inf, -np.inf, -2.0]),), {}


@sample("aten::positive")
def positive(make, lib):
    return (make(3, 4),), {}


@sample("aten::positive")
def positive_int(make, lib):
    return (make(3, 4, dtype="int64"),), {}


def _nan_inf(make, lib, dtype="float32"):
    return _special(make, lib, [[np.nan, np.inf, -np.inf, 1.5], [-0.0, 2.0, np.nan, -3.0]], dtype)


@sample("aten::nan_to_num")
def nan_to_num_default(make, lib):
    return (_nan_inf(make, lib),), {}


@sample("aten::nan_to_num")
def nan_to_num_values(make, lib):
    return (_nan_inf(make, lib, "float16"), 1.0, 100.0), {"neginf": -7.0}


@sample("aten::nan_to_num")
def nan_to_num_bfloat16(make, lib):
    return (_nan_inf(make, lib, "bfloat16"),), {}


@sample("aten::nan_to_num")
def nan_to_num_int(make, lib):
    return (make(3, 4, dtype="int64"),), {}


@sample("aten::nan_to_num_", inplace=True)
def nan_to_num_inplace(make, lib):
    return (_nan_inf(make, lib),), {"nan": 2.0}


@sample("aten::nan_to_num.out")
def nan_to_num_out(make, lib):
    return (_nan_inf(make, lib),), {"posinf": 1e3, "out": make(2, 4)}


# -- comparisons and tests -----------------------------------------------------------------------

for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    def _cmp_broadcast(make, lib):
        a = make(3, 4, dtype="int64", low=0, high=3)
        return (a, make(4, dtype="int64", low=0, high=3)), {}

    def _cmp_mixed(make, lib):
        return (make(4, 3, low=-1, high=1).t(), make(3, 4, dtype="float64", low=-1, high=1)), {}

    def _cmp_half(make, lib):
        return (make(3, 4, dtype="float16", noncontiguous=True), make(4, dtype="bfloat16")), {}

    def _cmp_scalar(make, lib):
        return (make(3, 4, dtype="int32", low=0, high=4), 1.5), {}

    def _cmp_uint8_wrap(make, lib):
        return (make(3, 4, dtype="uint8", low=250, high=256), -1), {}

    def _cmp_inplace(make, lib):
        return (make(3, 4, low=-1, high=1), make(4, low=-1, high=1)), {}

    def _cmp_scalar_inplace(make, lib):
        return (make(3, 4, low=-1, high=1), 0), {}

    def _cmp_out(make, lib):
        return (make(3, 4), make(3, 4)), {"out": make(3, 4, dtype="bool")}

    def _cmp_scalar_out(make, lib):
        return (make(3, 4), 0.5), {"out": make(3, 4, dtype="bool")}

    for _fn in (_cmp_broadcast, _cmp_mixed, _cmp_half):
        _reg(f"aten::{_op}.Tensor", _fn)
    for _fn in (_cmp_scalar, _cmp_uint8_wrap):
        _reg(f"aten::{_op}.Scalar", _fn)
    _reg(f"aten::{_op}_.Tensor", _cmp_inplace, inplace=True)
    _reg(f"aten::{_op}_.Scalar", _cmp_scalar_inplace, inplace=True)
    _reg(f"aten::{_op}.Tensor_out", _cmp_out)
    _reg(f"aten::{_op}.Scalar_out", _cmp_scalar_out)


for _op in ("isnan", "isinf", "isfinite", "signbit"):
    def _test_special(make, lib):
        return (_nan_inf(make, lib),), {}

    def _test_half(make, lib):   # (no nan: torch's bfloat16 nan has its sign bit set)
        return (_special(make, lib, [[np.inf, -np.inf], [-0.0, 2.0], [-1.5, 0.0]],
                         "bfloat16").t(),), {}

    def _test_int(make, lib):
        return (make(3, 4, dtype="int16"),), {}

    def _test_bool(make, lib):
        return (make(3, 4, dtype="bool"),), {}

    def _test_out(make, lib):
        return (_nan_inf(make, lib),), {"out": make(2, 4, dtype="bool")}

    for _fn in (_test_special, _test_half, _test_int, _test_bool):
        _reg(f"aten::{_op}", _fn)
    if _op != "isfinite":
        _reg(f"aten::{_op}.out", _test_out)


@sample("aten::isclose")
def isclose_float(make, lib):
    a = make(3, 4)
    return (a, a + make(3, 4, low=-1e-5, high=1e-5)), {}


@sample("aten::isclose")
def isclose_nan(make, lib):
    a = _nan_inf(make, lib)
    return (a, a), {"equal_nan": True, "rtol": 0.1}


@sample("aten::isclose")
def isclose_int(make, lib):
    return (make(3, 4, dtype="int64"), make(4, dtype="int64")), {"atol": 1}


# -- logical and bitwise --------------------------------------------------------------------------

for _op in ("logical_and", "logical_or", "logical_xor"):
    def _logical(make, lib):
        return (make(3, 4, low=-1, high=2), make(4, dtype="int64", low=-1, high=2)), {}

    def _logical_bool(make, lib):
        return (make(3, 4, dtype="bool", noncontiguous=True), make(3, 1, dtype="bool")), {}

    def _logical_inplace(make, lib):
        return (make(3, 4, low=-1, high=2), make(3, 4, dtype="bool")), {}

    def _logical_out(make, lib):
        return (make(3, 4, dtype="bool"), make(3, 4, dtype="bool")), \
            {"out": make(3, 4, dtype="bool")}

    _reg(f"aten::{_op}", _logical)
    _reg(f"aten::{_op}", _logical_bool)
    _reg(f"aten::{_op}_", _logical_inplace, inplace=True)
    _reg(f"aten::{_op}.out", _logical_out)


@sample("aten::logical_not")
def logical_not(make, lib):
    return (make(3, 4, low=-1, high=2),), {}


@sample("aten::logical_not")
def logical_not_int(make, lib):
    return (make(4, 3, dtype="int64", low=-1, high=2).t(),), {}


@sample("aten::logical_not_", inplace=True)
def logical_not_inplace(make, lib):
    return (make(3, 4, dtype="bool"),), {}


@sample("aten::logical_not.out")
def logical_not_out(make, lib):
    return (make(3, 4, dtype="int32", low=-1, high=2),), {"out": make(3, 4, dtype="bool")}


def _int_binary_family(op, tensor_ov, scalar_ov, scalar_tensor_ov, high_b=None):
    hb = high_b or 100

    def ints(make, lib):
        return (make(3, 4, dtype="int64", low=-100, high=100),
                make(4, dtype="int32", low=0, high=hb)), {}

    def small(make, lib):
        return (make(4, 3, dtype="int8", low=-100, high=100).t(),
                make(3, 4, dtype="uint8", low=0, high=min(hb, 255))), {}

    def bools(make, lib):
        return (make(3, 4, dtype="bool"), make(3, 4, dtype="bool")), {}

    def with_scalar(make, lib):
        return (make(3, 4, dtype="int16", low=-100, high=100), 3), {}

    def scalar_first(make, lib):
        return (5, make(3, 4, dtype="int64", low=0, high=min(hb, 6))), {}

    def in_place(make, lib):
        return (make(3, 4, dtype="int64", low=-100, high=100),
                make(3, 4, dtype="int64", low=0, high=hb)), {}

    def scalar_in_place(make, lib):
        return (make(3, 4, dtype="int32", low=-100, high=100), 2), {}

    def out_variant(make, lib):
        return (make(3, 4, dtype="int64"), make(3, 4, dtype="int64", low=0, high=3)), \
            {"out": make(3, 4, dtype="int64")}

    def scalar_out(make, lib):
        return (make(3, 4, dtype="int64"), 1), {"out": make(3, 4, dtype="int64")}

    def scalar_first_out(make, lib):
        return (3, make(3, 4, dtype="int64", low=0, high=3)), {"out": make(3, 4, dtype="int64")}

    base = f"aten::{op}.{tensor_ov}"
    for fn in (ints, small) + (() if "shift" in op else (bools,)):
        _reg(base, fn)
    _reg(f"aten::{op}.{scalar_ov}", with_scalar)
    _reg(f"aten::{op}.{scalar_tensor_ov}", scalar_first)
    _reg(f"aten::{op}_.{tensor_ov}", in_place, inplace=True)
    _reg(f"aten::{op}_.{scalar_ov}", scalar_in_place, inplace=True)
    _reg(f"aten::{op}.{tensor_ov}_out", out_variant)
    _reg(f"aten::{op}.{scalar_ov}_out", scalar_out)
    _reg(f"aten::{op}.{scalar_tensor_ov}_out", scalar_first_out)


for _op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _int_binary_family(_op, "Tensor", "Scalar", "Scalar_Tensor")
for _op in ("bitwise_left_shift", "bitwise_right_shift"):
    _int_binary_family(_op, "Tensor", "Tensor_Scalar", "Scalar_Tensor", high_b=70)


# -- where, masked_fill, clamp ---------------------------------------------------------------------

@sample("aten::where.self")
def where_broadcast(make, lib):
    return (make(3, 1, dtype="bool"), make(3, 4), make(4, dtype="int64")), {}


@sample("aten::where.self")
def where_transposed(make, lib):
    return (make(4, 3, dtype="bool").t(), make(4, 3).t(), make((), dtype="float64")), {}


@sample("aten::where.ScalarOther")
def where_uint8_scalar(make, lib):
    return (make(3, 4, dtype="bool"), make(3, 4, dtype="uint8", low=0, high=250), -1), {}


@sample("aten::where.self_out")
def where_out(make, lib):
    return (make(3, 4, dtype="bool"), make(3, 4), make(3, 4)), {"out": make(3, 4)}


@sample("aten::where.ScalarSelf")
def where_scalar_self(make, lib):
    return (make(3, 4, dtype="bool"), 1.5, make(3, 4, dtype="int32")), {}


@sample("aten::where.ScalarOther")
def where_scalar_other(make, lib):
    return (make(3, 4, dtype="bool"), make(3, 4, dtype="int32"), 2), {}


@sample("aten::where.Scalar")
def where_scalars(make, lib):
    return (make(3, 4, dtype="bool"), 1, 2.5), {}


@sample("aten::where.Scalar")
def where_int_scalars(make, lib):
    return (make(3, 4, dtype="bool"), 1, 0), {}


@sample("aten::masked_fill.Scalar")
def masked_fill_broadcast(make, lib):
    return (make(3, 4), make(4, dtype="bool"), 2.5), {}


@sample("aten::masked_fill.Scalar")
def masked_fill_int_from_float(make, lib):
    return (make(1, 4, dtype="int64"), make(3, 1, dtype="bool"), 2.5), {}


@sample("aten::masked_fill.Scalar")
def masked_fill_half_noncontig(make, lib):
    return (make(3, 4, dtype="float16", noncontiguous=True), make(3, 4, dtype="bool"), -1), {}


@sample("aten::masked_fill.Tensor")
def masked_fill_tensor_value(make, lib):
    return (make(3, 4), make(3, 4, dtype="bool"), make(())), {}


@sample("aten::masked_fill_.Scalar", inplace=True)
def masked_fill_inplace(make, lib):
    return (make(3, 4), make(4, dtype="bool"), 0), {}


@sample("aten::masked_fill_.Tensor", inplace=True)
def masked_fill_tensor_inplace(make, lib):
    return (make(3, 4, dtype="int32"), make(3, 4, dtype="bool"), make((), dtype="int64")), {}


@sample("aten::masked_fill.Scalar_out")
def masked_fill_out(make, lib):
    return (make(3, 4), make(3, 4, dtype="bool"), 7), {"out": make(3, 4)}


@sample("aten::masked_fill.Tensor_out")
def masked_fill_tensor_out(make, lib):
    return (make(3, 4), make(3, 4, dtype="bool"), make(())), {"out": make(3, 4)}


for _op in ("clamp", "clip"):
    def _clamp(make, lib):
        return (make(3, 4), -1, 1), {}

    def _clamp_min_only(make, lib):
        return (make(4, 3, dtype="int64").t(), 1.5), {}

    def _clamp_max_only(make, lib):
        return (make(3, 4, dtype="bfloat16"),), {"max": 0.5}

    def _clamp_crossed(make, lib):
        return (make(3, 4, dtype="int32"), 2, -2), {}

    def _clamp_tensor(make, lib):
        return (make(3, 4), make(4, low=-3, high=0), make(3, 1, low=0, high=3)), {}

    def _clamp_tensor_min(make, lib):
        return (make(3, 4, dtype="int64"),), {"min": make((), dtype="float64")}

    def _clamp_inplace(make, lib):
        return (make(3, 4), -0.5, 0.5), {}

    def _clamp_tensor_inplace(make, lib):
        return (make(3, 4), make(3, 4, low=-1, high=0)), {}

    def _clamp_out(make, lib):
        return (make(3, 4), 0), {"out": make(3, 4)}

    def _clamp_tensor_out(make, lib):
        return (make(3, 4), None, make(4)), {"out": make(3, 4)}

    for _fn in (_clamp, _clamp_min_only, _clamp_max_only, _clamp_crossed):
        _reg(f"aten::{_op}", _fn)
    for _fn in (_clamp_tensor, _clamp_tensor_min):
        _reg(f"aten::{_op}.Tensor", _fn)
    _reg(f"aten::{_op}_", _clamp_inplace, inplace=True)
    _reg(f"aten::{_op}_.Tensor", _clamp_tensor_inplace, inplace=True)
    _reg(f"aten::{_op}.out", _clamp_out)
    _reg(f"aten::{_op}.Tensor_out", _clamp_tensor_out)

for _op, _bound in (("clamp_min", -0.5), ("clamp_max", 0.5)):
    def _c1(make, lib, _b=_bound):
        return (make(3, 4), _b), {}

    def _c1_int(make, lib, _b=_bound):
        return (make(4, 3, dtype="int32").t(), 1), {}

    def _c1_promote(make, lib, _b=_bound):
        return (make(3, 4, dtype="int64"), _b), {}

    def _c1_tensor(make, lib):
        return (make(3, 4), make(4)), {}

    def _c1_inplace(make, lib, _b=_bound):
        return (make(3, 4), _b), {}

    def _c1_tensor_inplace(make, lib):
        return (make(3, 4, dtype="float16"), make(3, 4, dtype="float16")), {}

    def _c1_out(make, lib, _b=_bound):
        return (make(3, 4), _b), {"out": make(3, 4)}

    def _c1_tensor_out(make, lib):
        return (make(3, 4), make(3, 1)), {"out": make(3, 4)}

    for _fn in (_c1, _c1_int, _c1_promote):
        _reg(f"aten::{_op}", _fn)
    _reg(f"aten::{_op}.Tensor", _c1_tensor)
    _reg(f"aten::{_op}_", _c1_inplace, inplace=True)
    _reg(f"aten::{_op}_.Tensor", _c1_tensor_inplace, inplace=True)
    _reg(f"aten::{_op}.out", _c1_out)
    _reg(f"aten::{_op}.Tensor_out", _c1_tensor_out)


# -- activations -----------------------------------------------------------------------------------

ACT_TOL = {"atol": 1e-5, "rtol": 1e-5}

_ACTIVATIONS = {   # op: (extra positional args, kwargs, has in-place, ints allowed)
    "relu": ((), {}, True, True),
    "threshold": ((0.5, -2.0), {}, True, True),
    "hardtanh": ((-0.5, 1.5), {}, True, True),
    "silu": ((), {}, True, False),
    "gelu": ((), {}, True, False),
    "softplus": ((2.0, 3.0), {}, False, False),
    "elu": ((1.5, 1.2, 0.8), {}, True, False),
    "leaky_relu": ((0.2,), {}, True, False),
    "hardsigmoid": ((), {}, True, False),
    "hardswish": ((), {}, True, False),
    "mish": ((), {}, True, False),
}

for _op, (_args, _kw, _has_inplace, _int_ok) in _ACTIVATIONS.items():
    def _act(make, lib, _a=_args, _k=_kw):
        return (make(3, 4, low=-5, high=5),) + _a, dict(_k)

    def _act_transposed_double(make, lib, _a=_args, _k=_kw):
        return (make(4, 3, dtype="float64", low=-5, high=5).t(),) + _a, dict(_k)

    def _act_half(make, lib, _a=_args, _k=_kw):
        return (make(2, 5, dtype="float16", low=-5, high=5, noncontiguous=True),) + _a, dict(_k)

    def _act_bf16(make, lib, _a=_args, _k=_kw):
        return (make(2, 5, dtype="bfloat16", low=-5, high=5),) + _a, dict(_k)

    def _act_int(make, lib, _a=_args, _k=_kw):
        return (make(3, 4, dtype="int64", low=-5, high=5),) + _a, dict(_k)

    def _act_inplace(make, lib, _a=_args, _k=_kw):
        return (make(3, 4, low=-5, high=5),) + _a, dict(_k)

    def _act_out(make, lib, _a=_args, _k=_kw):
        return (make(3, 4, low=-5, high=5),) + _a, dict(_k, out=make(3, 4))

    for _fn in (_act, _act_transposed_double):
        _reg(f"aten::{_op}", _fn, **ACT_TOL)
    for _fn in (_act_half, _act_bf16):
        _reg(f"aten::{_op}", _fn, **HALF)
    if _int_ok:
        _reg(f"aten::{_op}", _act_int)
    if _has_inplace:
        _reg(f"aten::{_op}_", _act_inplace, inplace=True, **ACT_TOL)
    _reg(f"aten::{_op}.out", _act_out, **ACT_TOL)


@sample("aten::gelu", atol=1e-5, rtol=1e-5)
def gelu_tanh(make, lib):
    return (make(3, 4, low=-5, high=5),), {"approximate": "tanh"}


@sample("aten::softplus", atol=1e-5, rtol=1e-5)
def softplus_default(make, lib):
    return (make(3, 4, low=-30, high=30),), {}


@sample("aten::relu")
def relu_uint8(make, lib):
    return (make(3, 4, dtype="uint8", low=0, high=255),), {}


@sample("aten::relu6")
def relu6(make, lib):
    return (make(3, 4, low=-9, high=9),), {}


@sample("aten::relu6")
def relu6_int(make, lib):
    return (make(3, 4, dtype="int64", low=-9, high=9),), {}


@sample("aten::relu6_", inplace=True)
def relu6_inplace(make, lib):
    return (make(3, 4, low=-9, high=9),), {}


# -- gradient edge cases (tests/test_autograd_registry.py): ties, kinks, crossed bounds ------------

@sample("aten::clamp.Tensor")
def clamp_tensor_crossed_bounds(make, lib):
    """Where min > max the result is max; only max gets the gradient there."""
    return (make(3, 4), make(3, 4, low=-1, high=1), make(3, 4, low=-1, high=1)), {}


@sample("aten::clamp")
def clamp_at_the_bounds(make, lib):
    """The bounds are inclusive: x == min and x == max still get the gradient."""
    return (_special(make, lib, [-1.0, 1.0, 0.0, 2.0, -2.0]), -1.0, 1.0), {}


for _op in ("maximum", "minimum", "fmax", "fmin"):
    def _ties(make, lib):
        """Equal values split the gradient (maximum/minimum) or give it to self
        (fmax/fmin); a nan on either side."""
        return (_special(make, lib, [1.0, 2.0, np.nan, 3.0, 0.5]),
                _special(make, lib, [1.0, 0.0, 1.0, np.nan, 0.5])), {}

    _reg(f"aten::{_op}", _ties)


@sample("aten::pow.Tensor_Tensor")
def pow_zero_base(make, lib):
    """At base 0 the exponent's gradient is taken as 0 for exponent >= 0."""
    return (_special(make, lib, [0.0, 0.0, 2.0, 0.0, 1.5]),
            _special(make, lib, [0.0, 2.0, 0.0, -1.0, 0.5])), {}


@sample("aten::pow.Scalar")
def pow_zero_scalar_base(make, lib):
    return (0.0, _special(make, lib, [0.0, 2.0, -1.0, 0.5])), {}


@sample("aten::copysign.Tensor")
def copysign_zeros(make, lib):
    return (_special(make, lib, [0.0, -0.0, 1.0, -2.0]),
            _special(make, lib, [-1.0, 1.0, -1.0, 1.0])), {}


@sample("aten::xlogy.Scalar_Other")
def xlogy_zero_other(make, lib):
    """log(0) = -inf: the gradient is 0 where self == 0."""
    return (_special(make, lib, [0.0, 1.0, 2.0, 0.0]), 0), {}


@sample("aten::abs")
def abs_zero(make, lib):
    return (_special(make, lib, [0.0, -0.0, 1.5, -2.0]),), {}


@sample("aten::threshold")
def threshold_at_threshold(make, lib):
    return (_special(make, lib, [0.5, -0.5, 0.0, 1.0]), 0.5, -2.0), {}


@sample("aten::hardtanh")
def hardtanh_at_the_bounds(make, lib):
    """Unlike clamp, hardtanh gives no gradient at its bounds."""
    return (_special(make, lib, [-0.5, 1.5, 0.0, 2.0]), -0.5, 1.5), {}


@sample("aten::where.self")
def where_both_require_grad(make, lib):
    return (make(3, 4, dtype="bool"), make(4), make(3, 1)), {}
