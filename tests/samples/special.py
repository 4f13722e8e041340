"""Samples for the special functions (kernels/special.py): torch.special's ops,
their aliases and the top-level lgamma / digamma / polygamma / mvlgamma /
igamma / igammac / i0 / sinc.  out= samples are derived from the functional ones."""
from ..opinfo import SAMPLES, sample

LOOSE = {"atol": 1e-4, "rtol": 1e-4}       # float32 recurrences and series
HALF = {"atol": 1e-2, "rtol": 1e-2}        # ATen rounds float16 intermediates: an ulp or two


def _reg(name, fn, label, **kwargs):
    def wrapper(make, lib):
        return fn(make, lib)
    wrapper.__name__ = label
    sample(name, **kwargs)(wrapper)


def _unary(op, low, high, *, ints=True, half=True, inplace=False, tol=None, args=(),
           kwargs=None, zero_dim=True):
    """Functional samples (contiguous, transposed, float64 0-d, int, half) and
    the in-place one; ``args`` come before the tensor (polygamma's n) unless
    the op takes them after it (``kwargs``)."""
    tol = tol or {}
    kw = kwargs or {}

    def call(t):
        return (*args, t), dict(kw)
    _reg(f"aten::{op}", lambda make, lib: call(make(3, 4, low=low, high=high)), "contiguous", **tol)
    _reg(f"aten::{op}", lambda make, lib: call(make(4, 3, low=low, high=high).t()), "transposed",
         **tol)
    if zero_dim:
        _reg(f"aten::{op}", lambda make, lib: call(make((), dtype="float64", low=low, high=high)),
             "double_0d", **tol)
    if ints:
        _reg(f"aten::{op}", lambda make, lib: call(make(
            2, 3, dtype="int64", low=max(int(low), 1), high=max(int(high), 2))), "integer", **tol)
    if half:
        _reg(f"aten::{op}", lambda make, lib: call(make(
            2, 5, dtype="float16", low=low, high=high, noncontiguous=True)), "half", **HALF)
    if inplace:
        name = op.split(".")[0] + "_"
        _reg(f"aten::{name}", lambda make, lib: ((make(3, 4, low=low, high=high), *args), dict(kw))
             if not args else call(make(3, 4, low=low, high=high)), "in_place", inplace=True, **tol)


_unary("lgamma", 0.1, 6, inplace=True)
_unary("lgamma", -4, 4)
_unary("digamma", 0.1, 6, inplace=True)
_unary("digamma", -4, 4, tol=LOOSE)
for _n in (0, 1, 2, 3):
    _unary("polygamma", 0.2, 5, args=(_n,), tol=LOOSE)


@sample("aten::polygamma_", inplace=True, **LOOSE)
def polygamma_in_place(make, lib):
    return (make(3, 4, low=0.2, high=5), 2), {}


@sample("aten::mvlgamma")
def mvlgamma_p3(make, lib):
    return (make(3, 4, low=1.5, high=6), 3), {}


@sample("aten::mvlgamma")
def mvlgamma_int(make, lib):
    return (make(2, 3, dtype="int64", low=2, high=6), 2), {}


@sample("aten::mvlgamma_", inplace=True)
def mvlgamma_in_place(make, lib):
    return (make(3, 4, low=1.5, high=6), 2), {}


@sample("aten::mvlgamma.out")
def mvlgamma_out(make, lib):
    return (make(3, 4, low=1.5, high=6), 2), {"out": make(3, 4)}


def _binary(op, make_a, make_b, *, ints=True, half=True, scalars=(), inplace=False, tol=None):
    tol = tol or {}
    _reg(f"aten::{op}", lambda make, lib: ((make_a(make, (3, 4)), make_b(make, (4,))), {}),
         "broadcast", **tol)
    _reg(f"aten::{op}", lambda make, lib: ((make_a(make, (2, 3), "float64"),
                                           make_b(make, (), "float32")), {}), "double", **tol)
    if ints:
        _reg(f"aten::{op}", lambda make, lib: (
            (make_a(make, (2, 3), "int64"), make_b(make, (2, 3), "int32")), {}), "integer", **tol)
    if half:
        _reg(f"aten::{op}", lambda make, lib: (
            (make_a(make, (2, 3), "float16"), make_b(make, (2, 3), "float16")), {}), "half", **HALF)
    if inplace:
        _reg(f"aten::{op}_", lambda make, lib: ((make_a(make, (3, 4)), make_b(make, (3, 4))), {}),
             "in_place", inplace=True, **tol)
    for overload, scalar, first in scalars:
        _reg(f"aten::{op}.{overload}", (lambda s, f: lambda make, lib: (
            (s, make_b(make, (3, 4))) if f else (make_a(make, (3, 4)), s), {}))(scalar, first),
            "with_scalar", **tol)


def _uniform(low, high):
    def make_values(make, shape, dtype="float32"):
        if dtype in ("int64", "int32"):
            return make(*shape, dtype=dtype, low=max(int(low), 1), high=max(int(high), 2))
        return make(*shape, dtype=dtype, low=low, high=high)
    return make_values


_binary("igamma", _uniform(0.2, 5), _uniform(0.1, 6), ints=False, inplace=True)
_binary("igammac", _uniform(0.2, 5), _uniform(0.1, 6), ints=False, inplace=True)
_binary("special_xlog1py", _uniform(-3, 3), _uniform(-0.9, 4),
        scalars=(("self_scalar", 2.5, True), ("other_scalar", 1.5, False)))
_binary("special_zeta", _uniform(1.5, 6), _uniform(0.3, 4), half=False,
        scalars=(("self_scalar", 2.5, True), ("other_scalar", 1.5, False)))
for _k in ["chebyshev_polynomial_" + c for c in "tuvw"] + \
        ["shifted_chebyshev_polynomial_" + c for c in "tuvw"] + \
        ["hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
         "legendre_polynomial_p"]:
    _binary(f"special_{_k}", _uniform(-1, 1.2), _uniform(0, 12), half=False, tol=LOOSE,
            scalars=(("x_scalar", 0.3, True), ("n_scalar", 5, False)))

_unary("i0", -10, 10, inplace=True)
_unary("sinc", -3, 3, inplace=True)


@sample("aten::sinc")
def sinc_complex(make, lib):
    return (make(3, 4, dtype="complex64"),), {}


for _op in ("special_i0e", "special_i1", "special_i1e"):
    _unary(_op, -10, 10)
_unary("special_entr", 0.05, 3)
_unary("special_modified_bessel_i0", -10, 10, half=False)
_unary("special_modified_bessel_i1", -10, 10, half=False)
_unary("special_spherical_bessel_j0", -10, 10, half=False)
for _op, _low in (("special_bessel_j0", -20), ("special_bessel_j1", -20),
                  ("special_bessel_y0", 0.1), ("special_bessel_y1", 0.1),
                  ("special_modified_bessel_k0", 0.1),
                  ("special_modified_bessel_k1", 0.1), ("special_scaled_modified_bessel_k0", 0.1),
                  ("special_scaled_modified_bessel_k1", 0.1), ("special_airy_ai", -10)):
    _unary(_op, _low, 20, half=False)
_unary("special_ndtri", 0.01, 0.99, half=False)
_unary("special_log_ndtr", -10, 5, half=False)
_unary("special_erfcx", -5, 10, half=False)

# -- the aliases (CompositeImplicitAutograd) -------------------------------------------------

for _op, (_low, _high) in {"special_gammaln": (0.1, 6), "special_psi": (0.1, 6),
                           "special_digamma": (0.1, 6), "special_erf": (-3, 3),
                           "special_erfc": (-3, 3), "special_erfinv": (-0.9, 0.9),
                           "special_expit": (-3, 3), "special_exp2": (-3, 3),
                           "special_expm1": (-3, 3), "special_log1p": (-0.5, 3),
                           "special_i0": (-5, 5), "special_sinc": (-3, 3),
                           "special_ndtr": (-3, 3), "special_logit": (0.05, 0.95)}.items():
    _unary(_op, _low, _high, half=False)
_unary("special_polygamma", 0.2, 5, args=(2,), half=False)
_unary("special_multigammaln", 1.5, 6, kwargs={"p": 2}, half=False, ints=False)
_unary("special_round", -5, 5, kwargs={"decimals": 1}, half=False, ints=False)
_unary("special_logsumexp", -3, 3, kwargs={"dim": [1]}, half=False, ints=False, zero_dim=False)
_unary("special_softmax", -3, 3, kwargs={"dim": 0}, half=False, ints=False)
_unary("special_log_softmax", -3, 3, kwargs={"dim": 1}, half=False, ints=False, zero_dim=False)
_binary("special_gammainc", _uniform(0.2, 5), _uniform(0.1, 6), ints=False)
_binary("special_gammaincc", _uniform(0.2, 5), _uniform(0.1, 6), ints=False)
_binary("special_xlogy", _uniform(0, 3), _uniform(0.1, 3),
        scalars=(("self_scalar", 2.5, True), ("other_scalar", 1.5, False)))


# -- out= overloads of the aliases (declared explicitly, as PyTorch's, so not derived) --------

def _out_of(functional, out_name):
    """The first functional sample of ``functional`` with out= of the result's shape and dtype."""
    source = SAMPLES[f"aten::{functional}"][0]

    def with_out(make, lib):
        args, kwargs = source.fn(make, lib)
        result = getattr(getattr(lib.ops.aten, functional.split(".")[0]),
                         functional.split(".")[1] if "." in functional else "default")(
            *args, **kwargs)
        return args, dict(kwargs, out=lib.empty(result.shape, dtype=result.dtype,
                                               device=result.device))
    with_out.__name__ = "out"
    sample(f"aten::{out_name}", atol=source.atol, rtol=source.rtol)(with_out)


for _op in ("special_digamma", "special_erf", "special_erfc", "special_erfinv", "special_exp2",
            "special_expit", "special_expm1", "special_gammainc", "special_gammaincc",
            "special_gammaln", "special_i0", "special_log1p", "special_logit",
            "special_logsumexp", "special_multigammaln", "special_ndtr", "special_polygamma",
            "special_psi", "special_round", "special_sinc", "special_xlogy"):
    _out_of(_op, f"{_op}.out")
_out_of("special_xlogy.self_scalar", "special_xlogy.self_scalar_out")
_out_of("special_xlogy.other_scalar", "special_xlogy.other_scalar_out")
