"""Compiled code against eager, op by op.

Each case runs ``fn(lib, *tensors)`` three ways on the same numpy values:
real torch eager (the oracle), glasstorch eager, and ``glasstorch.compile``
(Inductor's C backend, checked to have compiled every graph).  All three must
agree on dtype, shape, strides (of dims longer than 1) and values: equal
(NaN to NaN) for exact ops on float32/float64, within TOLERANCE for libm
functions, reductions and fused chains, and within a few ulps for
float16/bfloat16, which compiled code computes in float and rounds once where
eager rounds after every op.

Hypothesis draws shapes (0 to 4 dims, sizes 1..7, broadcasting operands),
dtypes, layouts (contiguous, transposed, sliced with step 2, expanded) and
values (NaN, +-inf and -0.0 among them for floats).  test_special_values
pairs NaN, +-inf, +-0.0 and ordinary values with each other, bitwise (signs
of zero too).
"""
import contextlib
import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import glasstorch as gt
from glasstorch._inductor import codecache, compile_fx
from glasstorch._inductor.debug import kernels_only

from .helpers import to_numpy

HALF = ["float16", "bfloat16"]
FLOATS = ["float32", "float64", *HALF]
INTS = ["int64", "int32"]
NUMBERS = FLOATS + INTS
ALL = NUMBERS + ["bool"]
EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}

# (rtol, atol) by tolerance kind and result dtype (half types: 3 ulps, see assert_matches)
# (torch's float32 GELU is off by up to 1.1e-6 where it is small: its erf polynomial)
TOLERANCE = {"libm": {"float32": (1e-5, 2e-6), "float64": (1e-12, 1e-15)},
             "reduce": {"float32": (1e-5, 1e-4), "float64": (1e-12, 1e-10)}}

CASE = settings(max_examples=15, deadline=None)
SHAPES = st.lists(st.integers(1, 7), min_size=0, max_size=4).map(tuple)

# special float values mixed into drawn inputs
SPECIAL = (math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -2.5)


def without(*dropped):
    """SPECIAL less ``dropped`` (-0.0 and 0.0 told apart)."""
    return tuple(v for v in SPECIAL if repr(v) not in {repr(d) for d in dropped})


# -- the same inputs in both libraries ----------------------------------------------------


def make_values(rng, shape, dtype, kind="any", specials=SPECIAL):
    """numpy values of ``dtype`` (bfloat16: float32 values it represents exactly).
    ``kind``: "any"; "nonzero" (integer divisors); "exponent" (integers 0..3);
    "factors" (integers 0..3, float powers of two: exact products); "finite"
    (no special floats); or ("index", n) for indices in [0, n).  Floats mix in
    ``specials``; -0.0 appears only where it is one of them."""
    if isinstance(kind, tuple):
        return rng.integers(0, kind[1], size=shape).astype(dtype)
    if dtype == "bool":
        return rng.random(size=shape) < 0.5
    if dtype in INTS:
        small = kind in ("exponent", "factors")
        a = rng.integers(0, 4, size=shape) if small else rng.integers(-9, 10, size=shape)
        return np.where(a == 0, 1, a).astype(dtype) if kind == "nonzero" else a.astype(dtype)
    if kind == "factors":
        a = rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], size=shape)
    else:
        a = rng.normal(scale=3.0, size=shape)
        if rng.random() < 0.3:
            a = np.round(a * 2) / 2      # whole numbers and halves: rounding and division edges
    if kind in ("any", "nonzero", "exponent") and specials and rng.random() < 0.5:
        a = np.where(rng.random(size=shape) < 0.25, rng.choice(specials, size=shape), a)
    if kind == "finite" or "-0.0" not in map(repr, specials):
        a = a + 0.0                      # -0.0 becomes 0.0
    if dtype == "bfloat16":
        bits = a.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
        return bits.view(np.float32).reshape(shape)
    return a.astype(dtype)


class Operand:
    """One input: its values, dtype and memory layout, built alike in both libraries."""

    def __init__(self, values, dtype, layout="contiguous"):
        self.values, self.dtype, self.layout = values, dtype, layout

    def build(self, lib):
        base = self.values
        if self.layout == "transposed":
            base = np.swapaxes(base, -1, -2)
        elif self.layout == "sliced":
            base = np.repeat(base, 2, axis=-1)
        elif self.layout == "expanded":
            base = base[:1]
        t = lib.from_numpy(base.copy(order="C")).to(getattr(lib, self.dtype))
        if self.layout == "transposed":
            return t.transpose(-1, -2)
        if self.layout == "sliced":
            return t[..., ::2]
        if self.layout == "expanded":
            return t.expand(self.values.shape)
        return t

    def __repr__(self):
        return f"Operand({self.dtype}, {self.values.shape}, {self.layout})"


LAYOUTS = ("contiguous", "sliced", "expanded", "transposed")
MIN_DIMS = {"contiguous": 0, "sliced": 1, "expanded": 1, "transposed": 2}


@st.composite
def operands(draw, shape, dtype, kind="any", specials=SPECIAL, layouts=LAYOUTS):
    """An Operand of ``shape`` and ``dtype`` (one dtype, or a list to draw from)."""
    if isinstance(dtype, list):
        dtype = draw(st.sampled_from(dtype))
    layout = draw(st.sampled_from([l for l in layouts if len(shape) >= MIN_DIMS[l]]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = np.asarray(make_values(rng, shape, dtype, kind, specials))
    if layout == "expanded":
        values = np.broadcast_to(values[:1], shape).copy()
    return Operand(values, dtype, layout)


@st.composite
def broadcasting(draw, n, dtypes, kinds=None, specials=SPECIAL, mixed=False):
    """``n`` operands of mutually broadcastable shapes; one dtype unless ``mixed``."""
    shapes = draw(mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=4,
                                                min_side=1, max_side=7)).input_shapes
    dtype = dtypes if mixed else draw(st.sampled_from(dtypes))
    return [draw(operands(s, dtype, kind, specials))
            for s, kind in zip(shapes, kinds or ["any"] * n)]


# -- running and comparing ------------------------------------------------------------------


@contextlib.contextmanager
def inductor_graphs():
    """The CompiledGraph of every graph ``compile_fx_inner`` compiles in the block
    (None for a graph it leaves to the ATen kernels)."""
    inner, graphs = compile_fx.compile_fx_inner, []

    def record(*args, **kwargs):
        call = inner(*args, **kwargs)
        graphs.append(getattr(call, "compiled_graph", None))
        return call
    compile_fx.compile_fx_inner = record
    try:
        yield graphs
    finally:
        compile_fx.compile_fx_inner = inner


def compiled(fn):
    """``fn`` through ``glasstorch.compile``, checked to run Inductor's code."""
    gt._dynamo.reset()
    opt = gt.compile(fn)

    def run(*args):
        with inductor_graphs() as graphs:
            out = opt(*args)
        assert graphs and None not in graphs, "a graph did not go through Inductor"
        return out
    return run


def check(fn, *inputs, tol="exact", modes=("compiled", "eager"), signed_zeros=False):
    """``fn(lib, *tensors)`` in glasstorch (compiled, eager) against torch eager,
    and the inputs afterwards (which in-place ops write)."""
    theirs = [o.build(torch) for o in inputs]
    expected = fn(torch, *theirs)
    for mode in modes:
        ours = [o.build(gt) for o in inputs]
        run = compiled(lambda *xs: fn(gt, *xs)) if mode == "compiled" else \
            (lambda *xs: fn(gt, *xs))
        assert_matches(run(*ours), expected, tol, mode, signed_zeros)
        assert_matches(ours, theirs, tol, f"{mode}: the inputs afterwards", signed_zeros)


def assert_matches(ours, theirs, tol, what, signed_zeros=False):
    """Same structure, dtype, shape, strides (of dims longer than 1: the others'
    mean nothing) and values: ``tol`` "exact" is equal values (NaN to NaN, and
    -0.0 to -0.0 where ``signed_zeros``), else TOLERANCE's; half types within 3
    of their ulps."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), what
        for o, t in zip(ours, theirs):
            assert_matches(o, t, tol, what, signed_zeros)
        return
    assert str(ours.dtype) == str(theirs.dtype), f"{what}: dtype {ours.dtype} != {theirs.dtype}"
    assert tuple(ours.shape) == tuple(theirs.shape), \
        f"{what}: shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
    long = [i for i, n in enumerate(theirs.shape) if n > 1]
    assert [ours.stride(i) for i in long] == [theirs.stride(i) for i in long], \
        f"{what}: strides {ours.stride()} != {theirs.stride()}"
    a, b = to_numpy(ours), to_numpy(theirs)
    name = str(theirs.dtype).split(".")[-1]
    if name in EPS:
        rtol = atol = 3 * EPS[name]
    elif tol == "exact" or a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b, err_msg=what)
        if signed_zeros:
            signs = ~np.isnan(b)
            np.testing.assert_array_equal(np.signbit(a[signs]), np.signbit(b[signs]),
                                          err_msg=f"{what}: signs of zero")
        return
    else:
        rtol, atol = TOLERANCE[tol][name]
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


# -- pointwise -------------------------------------------------------------------------------

# name: (fn, dtypes, tolerance)
UNARY = {
    "neg": (lambda L, x: -x, NUMBERS, "exact"),
    "abs": (lambda L, x: x.abs(), NUMBERS, "exact"),
    "sign": (lambda L, x: x.sign(), ALL, "exact"),
    "relu": (lambda L, x: L.relu(x), NUMBERS, "exact"),
    "floor": (lambda L, x: x.floor(), NUMBERS, "exact"),
    "ceil": (lambda L, x: x.ceil(), NUMBERS, "exact"),
    "round": (lambda L, x: x.round(), NUMBERS, "exact"),
    "trunc": (lambda L, x: x.trunc(), NUMBERS, "exact"),
    "isnan": (lambda L, x: x.isnan(), ALL, "exact"),
    "isinf": (lambda L, x: x.isinf(), ALL, "exact"),
    "logical_not": (lambda L, x: x.logical_not(), ALL, "exact"),
    "bitwise_not": (lambda L, x: x.bitwise_not(), INTS + ["bool"], "exact"),
    "reciprocal": (lambda L, x: x.reciprocal(), FLOATS, "exact"),
    "sqrt": (lambda L, x: x.sqrt(), FLOATS, "libm"),   # ATen's is not correctly rounded
    "rsqrt": (lambda L, x: x.rsqrt(), FLOATS, "libm"),
    "sigmoid": (lambda L, x: x.sigmoid(), FLOATS, "libm"),
    "tanh": (lambda L, x: x.tanh(), FLOATS, "libm"),
    "exp": (lambda L, x: x.exp(), FLOATS, "libm"),
    "log": (lambda L, x: x.log(), FLOATS, "libm"),
    "sin": (lambda L, x: x.sin(), FLOATS, "libm"),
    "cos": (lambda L, x: x.cos(), FLOATS, "libm"),
    "erf": (lambda L, x: x.erf(), FLOATS, "libm"),
    "gelu": (lambda L, x: L.nn.functional.gelu(x), FLOATS, "libm"),
    "gelu_tanh": (lambda L, x: L.nn.functional.gelu(x, approximate="tanh"), FLOATS, "libm"),
    "pow_2": (lambda L, x: x ** 2, NUMBERS, "exact"),
    "pow_3": (lambda L, x: x ** 3, NUMBERS, "exact"),
    "pow_half": (lambda L, x: x ** 0.5, FLOATS, "libm"),
    "pow_minus_1": (lambda L, x: x ** -1, FLOATS, "exact"),
    "pow_1_5": (lambda L, x: x ** 1.5, FLOATS, "libm"),
    "scalar_pow": (lambda L, x: 2 ** x, FLOATS, "libm"),
    "clamp": (lambda L, x: x.clamp(-1, 2), NUMBERS, "exact"),
    "clamp_zero": (lambda L, x: x.clamp(0.0, 1.0), FLOATS, "exact"),
    "clamp_min": (lambda L, x: x.clamp(min=0.5), FLOATS, "exact"),
    "clamp_max": (lambda L, x: x.clamp(max=1), NUMBERS, "exact"),
    "add_scalar": (lambda L, x: x + 2.5, ALL, "exact"),
    "rsub_scalar": (lambda L, x: 1 - x, NUMBERS, "exact"),
    "mul_int_scalar": (lambda L, x: x * 3, ALL, "exact"),
    "div_scalar": (lambda L, x: x / 3, ALL, "exact"),
    "eq_scalar": (lambda L, x: x == 1, ALL, "exact"),
    "lt_scalar": (lambda L, x: x < 0.5, ALL, "exact"),
}

BINARY = {
    "add": (lambda L, x, y: x + y, ALL, "exact"),
    "add_alpha": (lambda L, x, y: L.add(x, y, alpha=2), NUMBERS, "exact"),
    "sub": (lambda L, x, y: x - y, NUMBERS, "exact"),
    "mul": (lambda L, x, y: x * y, ALL, "exact"),
    "div": (lambda L, x, y: x / y, ALL, "exact"),
    "div_floor": (lambda L, x, y: L.div(x, y, rounding_mode="floor"), NUMBERS, "exact"),
    "div_trunc": (lambda L, x, y: L.div(x, y, rounding_mode="trunc"), NUMBERS, "exact"),
    "floor_divide": (lambda L, x, y: L.floor_divide(x, y), NUMBERS, "exact"),
    "remainder": (lambda L, x, y: L.remainder(x, y), NUMBERS, "exact"),
    "fmod": (lambda L, x, y: L.fmod(x, y), NUMBERS, "exact"),
    "pow": (lambda L, x, y: x ** y, NUMBERS, "libm"),
    "maximum": (lambda L, x, y: L.maximum(x, y), ALL, "exact"),
    "minimum": (lambda L, x, y: L.minimum(x, y), ALL, "exact"),
    "eq": (lambda L, x, y: x == y, ALL, "exact"),
    "ne": (lambda L, x, y: x != y, ALL, "exact"),
    "lt": (lambda L, x, y: x < y, NUMBERS, "exact"),
    "le": (lambda L, x, y: x <= y, NUMBERS, "exact"),
    "gt": (lambda L, x, y: x > y, NUMBERS, "exact"),
    "ge": (lambda L, x, y: x >= y, NUMBERS, "exact"),
    "logical_and": (lambda L, x, y: L.logical_and(x, y), ALL, "exact"),
    "logical_or": (lambda L, x, y: L.logical_or(x, y), ALL, "exact"),
    "logical_xor": (lambda L, x, y: L.logical_xor(x, y), ALL, "exact"),
    "bitwise_and": (lambda L, x, y: x & y, INTS + ["bool"], "exact"),
    "bitwise_or": (lambda L, x, y: x | y, INTS + ["bool"], "exact"),
    "bitwise_xor": (lambda L, x, y: x ^ y, INTS + ["bool"], "exact"),
}
# the right operand's values: integer division needs a non-zero divisor, integer
# powers a small non-negative exponent
RIGHT = {"div_floor": "nonzero", "div_trunc": "nonzero", "floor_divide": "nonzero",
         "remainder": "nonzero", "fmod": "nonzero", "pow": "exponent"}

TERNARY = {
    "where": (lambda L, c, x, y: L.where(c.bool(), x, y), ALL, "exact"),
    "where_scalar": (lambda L, c, x, y: L.where(c.bool(), x, 0.5) + y, FLOATS, "exact"),
    "clamp_tensor": (lambda L, x, lo, hi: L.clamp(x, lo, hi), NUMBERS, "exact"),
    "lerp": (lambda L, x, y, w: L.lerp(x, y, w), FLOATS, "libm"),
    "lerp_scalar": (lambda L, x, y, w: L.lerp(x, y, 0.75) * w, FLOATS, "libm"),
    "addcmul": (lambda L, x, y, z: L.addcmul(x, y, z, value=0.5), FLOATS, "libm"),
    "addcdiv": (lambda L, x, y, z: L.addcdiv(x, y, z, value=-2), FLOATS, "libm"),
}
POINTWISE = {**UNARY, **BINARY, **TERNARY}

# where torch's result depends on its code path (vector or scalar loop): its
# float32 GELU at +inf (nan in the vector loop, inf in the scalar loop and in
# glasstorch), left out of the inputs; the sign of a zero result of these ops,
# not compared
PATH_DEPENDENT = {"gelu": (math.inf,)}
UNSIGNED_ZEROS = {"maximum", "minimum", "clamp_tensor"}
# dtypes the hypothesis cases of an op leave out: the half types of rounded
# divisions, whose quotient torch's vector loop rounds to the half type before
# flooring or truncating it and its scalar loop does not (test_half_division_rounding),
# and the half types of products, which compiled code accumulates in float as
# Inductor does, and eager in the half type as ATen does (test_half_product)
LEFT_OUT = {"div_floor": HALF, "div_trunc": HALF, "floor_divide": HALF,
            "prod": HALF, "prod_full": HALF}


def pool(name):
    """The special values the hypothesis cases of op ``name`` draw."""
    return without(*PATH_DEPENDENT.get(name, ()))


@pytest.mark.parametrize("name", UNARY)
@CASE
@given(data=st.data())
def test_unary(name, data):
    fn, dtypes, tol = UNARY[name]
    x = data.draw(operands(data.draw(SHAPES), dtypes, specials=pool(name)), label="x")
    check(fn, x, tol=tol)


@pytest.mark.parametrize("name", BINARY)
@CASE
@given(data=st.data())
def test_binary(name, data):
    fn, dtypes, tol = BINARY[name]
    dtypes = [d for d in dtypes if d not in LEFT_OUT.get(name, ())]
    x, y = data.draw(broadcasting(2, dtypes, ["any", RIGHT.get(name, "any")], pool(name)),
                     label="xy")
    check(fn, x, y, tol=tol)


@pytest.mark.parametrize("name", ["add", "mul", "div", "maximum", "lt"])
@CASE
@given(data=st.data())
def test_binary_type_promotion(name, data):
    """Operands of two dtypes: computed in the promoted type."""
    fn, dtypes, tol = BINARY[name]
    x, y = data.draw(broadcasting(2, dtypes, mixed=True), label="xy")
    check(fn, x, y, tol=tol)


@pytest.mark.parametrize("name", TERNARY)
@CASE
@given(data=st.data())
def test_ternary(name, data):
    fn, dtypes, tol = TERNARY[name]
    check(fn, *data.draw(broadcasting(3, dtypes), label="inputs"), tol=tol)


GRID = (math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -3.0)


def _special_cases():
    for name, (fn, dtypes, _) in POINTWISE.items():
        if "float32" in dtypes:
            for mode in ("compiled", "eager"):
                yield pytest.param(name, mode, id=f"{name}-{mode}")


@pytest.mark.parametrize("name,mode", _special_cases())
def test_special_values(name, mode):
    """Every pairing of NaN, +-inf, +-0.0 and a few ordinary float32 values
    (but those where torch's result depends on its code path)."""
    fn, _, tol = POINTWISE[name]
    arity = fn.__code__.co_argcount - 1
    skip = set(map(repr, PATH_DEPENDENT.get(name, ())))
    grid = np.array([v for v in GRID if repr(v) not in skip], dtype=np.float32)
    check(fn, *[Operand(grid.reshape((-1,) + (1,) * (arity - 1 - i)), "float32")
                for i in range(arity)],
          tol=tol, modes=(mode,), signed_zeros=name not in UNSIGNED_ZEROS)


@pytest.mark.parametrize("dtype", HALF)
def test_half_division_rounding(dtype):
    """Truncating division of half types truncates the quotient rounded to the
    type, as torch's vector loop does (its scalar loop, for one element, not);
    compared in float32, exactly."""
    rng = np.random.default_rng(0)
    x, y = (Operand(make_values(rng, (4096,), dtype, "finite"), dtype) for _ in range(2))
    check(lambda L, a, b: L.div(a, b, rounding_mode="trunc").float(), x, y)


@CASE
@given(data=st.data(), to=st.sampled_from(ALL))
def test_cast(data, to):
    """``.to(dtype)`` between every pair (floats to integers: finite values)."""
    src = data.draw(st.sampled_from(ALL))
    kind = "finite" if to in INTS and src in FLOATS else "any"
    check(lambda L, v: v.to(getattr(L, to)), data.draw(operands(data.draw(SHAPES), src, kind)))


@CASE
@given(data=st.data())
def test_pointwise_chain(data):
    """A fused chain of ops, computed in float and rounded once at the end."""
    x, y = data.draw(broadcasting(2, FLOATS), label="xy")
    check(lambda L, a, b: (a.sin() * b + 1).sigmoid() - b.abs().sqrt() * 0.5, x, y,
          tol="libm")


# -- reductions -------------------------------------------------------------------------------

# name: (fn(L, x, dim, keepdim), dtypes, dim kind: "list" (several dims), "int" (one dim)
# or "full" (no dim argument), tolerance)
REDUCTIONS = {
    "sum": (lambda L, x, d, k: x.sum(d, keepdim=k), ALL, "list", "reduce"),
    "sum_full": (lambda L, x, d, k: x.sum(), ALL, "full", "reduce"),
    "mean": (lambda L, x, d, k: x.mean(d, keepdim=k), FLOATS, "list", "reduce"),
    "mean_full": (lambda L, x, d, k: x.mean(), FLOATS, "full", "reduce"),
    "amax": (lambda L, x, d, k: x.amax(d, keepdim=k), ALL, "list", "exact"),
    "amin": (lambda L, x, d, k: x.amin(d, keepdim=k), ALL, "list", "exact"),
    "max_full": (lambda L, x, d, k: x.max(), ALL, "full", "exact"),
    "min_full": (lambda L, x, d, k: x.min(), NUMBERS, "full", "exact"),
    "max_dim": (lambda L, x, d, k: tuple(x.max(d, keepdim=k)), NUMBERS, "int", "exact"),
    "min_dim": (lambda L, x, d, k: tuple(x.min(d, keepdim=k)), NUMBERS, "int", "exact"),
    "argmax": (lambda L, x, d, k: x.argmax(d, keepdim=k), NUMBERS, "int", "exact"),
    "argmin": (lambda L, x, d, k: x.argmin(d, keepdim=k), NUMBERS, "int", "exact"),
    "argmax_full": (lambda L, x, d, k: x.argmax(), NUMBERS, "full", "exact"),
    "argmin_full": (lambda L, x, d, k: x.argmin(), NUMBERS, "full", "exact"),
    "prod": (lambda L, x, d, k: x.prod(d, keepdim=k), ALL, "int", "reduce"),
    "prod_full": (lambda L, x, d, k: x.prod(), ALL, "full", "reduce"),
    "any": (lambda L, x, d, k: x.any(d, keepdim=k), ALL, "list", "exact"),
    "all": (lambda L, x, d, k: x.all(d, keepdim=k), ALL, "list", "exact"),
    "any_full": (lambda L, x, d, k: x.any(), ALL, "full", "exact"),
    "all_full": (lambda L, x, d, k: x.all(), ALL, "full", "exact"),
    "var": (lambda L, x, d, k: x.var(d, keepdim=k), FLOATS, "list", "reduce"),
    "var_biased": (lambda L, x, d, k: x.var(d, keepdim=k, correction=0), FLOATS, "list",
                   "reduce"),
    "var_full": (lambda L, x, d, k: x.var(), FLOATS, "full", "reduce"),
    "std": (lambda L, x, d, k: x.std(d, keepdim=k), FLOATS, "list", "reduce"),
    "var_mean": (lambda L, x, d, k: L.var_mean(x, d, keepdim=k), FLOATS, "list", "reduce"),
    "sum_dtype": (lambda L, x, d, k: x.sum(d, keepdim=k, dtype=L.float64), ALL, "list",
                  "reduce"),
    "mean_dtype": (lambda L, x, d, k: x.mean(d, keepdim=k, dtype=L.float32), FLOATS, "list",
                   "reduce"),
    "logsumexp": (lambda L, x, d, k: L.logsumexp(x, d, keepdim=k), FLOATS, "list", "reduce"),
    # with a pointwise prologue and epilogue, and a reduction read back over its row
    "sum_fused": (lambda L, x, d, k: (x * 2 + 1).sum(d, keepdim=k) / 3, FLOATS, "list",
                  "reduce"),
    "centered": (lambda L, x, d, k: x - x.mean(d, keepdim=True), FLOATS, "list", "reduce"),
    "scaled": (lambda L, x, d, k: x / x.abs().amax(d, keepdim=True), FLOATS, "list",
               "reduce"),
}
# ATen's var_mean and layer_norm take the mean by Welford's updates, which make
# a row's mean nan (not inf) after an infinity, depending on where it stands;
# and an infinite LayerNorm weight makes nan of a 0 that the mean's last bit decides
NO_INF = without(math.inf, -math.inf)


@st.composite
def reduction_dims(draw, ndim, kind):
    """A dim argument: one dim (either sign), or a list of distinct dims."""
    if kind == "full":
        return None
    dim = st.integers(-max(ndim, 1), max(ndim, 1) - 1)
    if kind == "int":
        return draw(dim)
    return draw(st.lists(dim, min_size=1, max_size=max(ndim, 1),
                         unique_by=lambda d: d % max(ndim, 1)))


@pytest.mark.parametrize("name", REDUCTIONS)
@CASE
@given(data=st.data(), keepdim=st.booleans())
def test_reduction(name, data, keepdim):
    fn, dtypes, dim_kind, tol = REDUCTIONS[name]
    shape = data.draw(SHAPES)
    dim = data.draw(reduction_dims(len(shape), dim_kind), label="dim")
    kind = "factors" if name.startswith("prod") else "any"
    dtypes = [d for d in dtypes if d not in LEFT_OUT.get(name, ())]
    x = data.draw(operands(shape, dtypes, kind, NO_INF if name == "var_mean" else SPECIAL),
                  label="x")
    check(lambda L, v: fn(L, v, dim, keepdim), x, tol=tol)


def test_half_product():
    """Compiled, a float16 product accumulates in float and rounds once, as
    Inductor's reductions do (real torch.compile also gives 32768 for
    prod([256, 256, 0.5])); eager rounds at every step, as ATen's loop does
    (inf), in both libraries."""
    x = np.array([256, 256, 0.5], np.float16)
    assert compiled(lambda v: v.prod())(gt.from_numpy(x)).item() == 32768
    assert gt.from_numpy(x).prod().item() == torch.from_numpy(x).prod().item() == math.inf


SOFTMAX = {
    "softmax": lambda L, v, d: v.softmax(d),
    "log_softmax": lambda L, v, d: v.log_softmax(d),
    "softmax_to_float": lambda L, v, d: v.softmax(d, dtype=L.float32),
    "log_softmax_to_float": lambda L, v, d: v.log_softmax(d, dtype=L.float32),
}


@pytest.mark.parametrize("name", SOFTMAX)
@CASE
@given(data=st.data())
def test_softmax(name, data):
    shape = data.draw(SHAPES)
    dim = data.draw(reduction_dims(len(shape), "int"), label="dim")
    x = data.draw(operands(shape, FLOATS), label="x")
    check(lambda L, v: SOFTMAX[name](L, v, dim), x, tol="reduce")


@pytest.mark.parametrize("affine", [(), ("weight",), ("bias",), ("weight", "bias")],
                         ids=["plain", "weight", "bias", "weight_bias"])
@CASE
@given(data=st.data())
def test_layer_norm(affine, data):
    """Over the last k dims, with or without weight and bias (rows of one
    value: test_layer_norm_of_a_constant_row)."""
    shape = data.draw(SHAPES.filter(len))
    k = data.draw(st.integers(1, len(shape)), label="normalized dims")
    dtype = data.draw(st.sampled_from(FLOATS))
    x = data.draw(operands(shape, dtype, specials=NO_INF), label="x")
    rows = x.values.reshape(-1, math.prod(shape[-k:]))
    assume(all(len(np.unique(row)) > 1 for row in rows))
    params = [data.draw(operands(shape[-k:], dtype, specials=NO_INF), label=name)
              for name in affine]

    def fn(L, v, *tensors):
        return L.nn.functional.layer_norm(v, shape[-k:], eps=1e-5, **dict(zip(affine, tensors)))
    check(fn, x, *params, tol="reduce")


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000, 1024, 4099])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_welford_rows_about_the_lane_count(n, dtype):
    """var_mean and layer_norm are one Welford loop per row (cpp.py's
    ``_welford``: 64 lanes, a block at a time): rows shorter than, equal to,
    and not a multiple of the lanes; rows far from 0 (where a sum of squares
    would cancel); a constant row's mean is its value and its variance 0
    exactly."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((5, n)) * 3 + 1000).astype(np.float32)
    x[2] = 0.1
    x = Operand(x.astype(np.float64) if dtype == "float64" else x, dtype, "contiguous")
    check(lambda L, v: L.var_mean(v, 1, correction=0), x, tol="reduce", modes=("compiled",))
    check(lambda L, v: L.nn.functional.layer_norm(v, (n,)), x, tol="reduce",
          modes=("compiled",))
    if dtype == "float32":
        out = compiled(lambda v: gt.var_mean(v, 1))(x.build(gt))
        assert out[0][2].item() == 0 or n == 1 and np.isnan(out[0][2].item())
        assert out[1][2].item() == np.float32(0.1)


def test_welford_over_several_dims_and_columns():
    """Reductions over two dims (walked as one flat index), over a strided
    column, and over nothing but size-1 dims."""
    rng = np.random.default_rng(3)
    x = Operand(rng.standard_normal((6, 70, 33)).astype(np.float32), "float32", "transposed")
    for dims in ((1, 2), (0, 2), 0, (0, 1, 2)):
        check(lambda L, v: L.var_mean(v, dims, keepdim=True), x, tol="reduce",
              modes=("compiled",))
    ones = Operand(rng.standard_normal((4, 1, 1)).astype(np.float32), "float32")
    check(lambda L, v: L.var_mean(v, (1, 2), correction=0), ones, tol="reduce",
          modes=("compiled",))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_layer_norm_of_a_constant_row(dtype):
    """A row of one value normalizes to exactly 0 (its mean is the value, as
    ATen's Welford moments make it), next to rows that are not constant; the
    saved mean and rstd too."""
    x = Operand(np.array([[1.3] * 7, [0.1] * 7, [-2.7] * 7, [0.0] * 7, list(range(7))],
                         dtype=np.float32), dtype)
    check(lambda L, v: L.nn.functional.layer_norm(v, (7,)), x)
    check(lambda L, v: L.native_layer_norm(v, (7,), None, None, 1e-5), x, tol="reduce",
          modes=("eager",))


# -- in-place ops on inputs --------------------------------------------------------------------

def _fill_every_other(L, x, y):
    x[..., ::2] = 0.5


def _assign_slice(L, x, y):
    x[..., 1:] = y[..., 1:] * 2


# name: fn(L, x, y) writing x (y has x's shape)
INPLACE = {
    "mul_add_": lambda L, x, y: x.mul_(2).add_(y),
    "copy_": lambda L, x, y: x.copy_(y.sin()),
    "clamp_": lambda L, x, y: x.clamp_(-1, 1),
    "fill_every_other": _fill_every_other,
    "assign_slice": _assign_slice,
}


@pytest.mark.parametrize("write", INPLACE.values(), ids=INPLACE)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_inplace(write, data):
    """In-place ops on inputs: the compiled graph writes the input's memory
    (not an expanded one: there one element is many)."""
    shape = data.draw(SHAPES.filter(len))
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    x, y = (data.draw(operands(shape, dtype, layouts=("contiguous", "sliced", "transposed")))
            for _ in range(2))

    def fn(L, a, b):
        write(L, a, b)
        return ()
    check(fn, x, y, tol="libm")


def test_inplace_returns_its_input():
    """An input written in place and returned comes back as itself, as in eager
    and in PyTorch's compiled code: the same tensor, its strides and offset."""
    for lib, compile_fn in ((torch, torch.compile), (gt, compiled)):
        x = lib.from_numpy(np.arange(4, dtype=np.float32))[::2]
        assert compile_fn(lambda v: v.mul_(2))(x) is x, lib.__name__
        assert x.tolist() == [0.0, 4.0]


# -- views, then pointwise ------------------------------------------------------------------

# name: fn(L, x, dim, k) with dim a dim of x (either sign), 0 <= k < x.shape[dim]
VIEWS = {
    "permute": lambda L, x, d, k: x.permute(*range(d % x.dim(), x.dim()), *range(d % x.dim())),
    "transpose": lambda L, x, d, k: x.transpose(d, k % x.dim() - x.dim()),
    "t": lambda L, x, d, k: x.reshape(x.shape[0], -1).t(),
    "expand": lambda L, x, d, k: x.unsqueeze(0).expand(k + 2, *x.shape),
    "reshape": lambda L, x, d, k: x.reshape(-1),
    "view": lambda L, x, d, k: x.contiguous().view(*x.shape[:d % x.dim()], -1),
    "squeeze": lambda L, x, d, k: x.squeeze(),
    "unsqueeze": lambda L, x, d, k: x.unsqueeze(d),
    "slice": lambda L, x, d, k: x[(slice(None),) * (d % x.dim()) + (slice(k, None, 2),)],
    "select": lambda L, x, d, k: x.select(d, -1 - k),
    "narrow": lambda L, x, d, k: x.narrow(d, k, x.shape[d] - k),
    "narrow_empty": lambda L, x, d, k: x.narrow(d, k, 0).flatten(),
    "split": lambda L, x, d, k: x.split(k + 1, d),
    "unbind": lambda L, x, d, k: x.unbind(d),
}


@pytest.mark.parametrize("name", VIEWS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_view_then_pointwise(name, data):
    shape = data.draw(SHAPES.filter(len))
    d = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    k = data.draw(st.integers(0, shape[d] - 1), label="k")
    x = data.draw(operands(shape, NUMBERS), label="x")

    def fn(L, v):
        out = VIEWS[name](L, v, d, k)
        return tuple(o * 3 - 1 for o in out) if isinstance(out, tuple) else out * 3 - 1
    check(fn, x)


@pytest.mark.parametrize("layout,fn", [
    ("contiguous", lambda L, v: v.reshape(3, 8).t() * 2),
    ("transposed", lambda L, v: v.reshape(4, 6) * 2),
], ids=["then_transposed", "of_transposed"])
def test_reshape_regrouping_dims(layout, fn):
    check(fn, Operand(np.arange(24, dtype=np.float32).reshape(6, 4), "float32", layout))


@pytest.mark.parametrize("mixed", [False, True], ids=["one_dtype", "promoted"])
@CASE
@given(data=st.data())
def test_cat(mixed, data):
    """Parts computed, concatenated (in their promoted dtype), computed with."""
    shape = data.draw(SHAPES.filter(len))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="sizes")
    dtype = NUMBERS if mixed else data.draw(st.sampled_from(NUMBERS))
    d = dim % len(shape)
    parts = [data.draw(operands(shape[:d] + (s,) + shape[d + 1:], dtype)) for s in sizes]
    check(lambda L, *xs: L.cat([x * 2 for x in xs], dim) + 1, *parts)


@CASE
@given(data=st.data())
def test_embedding(data):
    rows, cols = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))
    weight = data.draw(operands((rows, cols), FLOATS), label="weight")
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=2).map(tuple))
    idx = data.draw(operands(shape, INTS, ("index", rows)), label="indices")
    check(lambda L, w, i: L.nn.functional.embedding(i, w) * 2, weight, idx)


@CASE
@given(data=st.data())
def test_gather(data):
    shape = data.draw(SHAPES.filter(len))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    index_shape = tuple(data.draw(st.integers(1, n)) for n in shape)
    x = data.draw(operands(shape, NUMBERS), label="x")
    idx = data.draw(operands(index_shape, "int64", ("index", shape[dim])), label="index")
    check(lambda L, v, i: L.gather(v + 1, dim, i), x, idx)


CREATION = {
    "arange": lambda L, x: x + L.arange(x.shape[-1]),
    "arange_start_step": lambda L, x: x * L.arange(2, 2 + 3 * x.shape[-1], 3),
    "arange_float": lambda L, x: x - L.arange(0, x.shape[-1] * 0.5, 0.5),
    "full": lambda L, x: L.full(x.shape, 2.5) * x,
    "full_int": lambda L, x: L.full(x.shape, 7, dtype=L.int32) + x,
    "zeros_like": lambda L, x: L.zeros_like(x) - x,
    "ones_like": lambda L, x: L.ones_like(x) / (x + 2),
}


@pytest.mark.parametrize("name", CREATION)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_creation(name, data):
    x = data.draw(operands(data.draw(SHAPES.filter(len)), NUMBERS), label="x")
    check(CREATION[name], x)


# -- sizes where kernels run in parallel and in chunks ---------------------------------------

# name: (fn(L, x), shape of x): past config.cpp.min_parallel_work elements a kernel
# runs under OpenMP, past config.cpp.chunk_size a 1-d loop is cut into chunks
LARGE = {
    "pointwise_1d": (lambda L, x: (x.sin() * 2).relu(), (50001,)),
    "pointwise_2d": (lambda L, x: x * 2 + x.exp(), (301, 257)),
    "transposed": (lambda L, x: x.t() * 2 + 1, (301, 257)),
    "row_sum": (lambda L, x: x.sum(-1), (301, 257)),
    "column_sum": (lambda L, x: x.sum(0), (301, 257)),
    # a value per row (a buffer) read in each column's sum, as a LayerNorm weight's
    # gradient reads the rows' means: still summed a block of columns at a time
    "column_sum_row_scale": (lambda L, x: (x.abs() * x.abs().amax(1, keepdim=True)).sum(0),
                             (301, 257)),
    "full_sum": (lambda L, x: x.abs().sum(), (70001,)),   # no cancellation
    "amax": (lambda L, x: x.amax(0), (301, 257)),
    "argmax": (lambda L, x: x.argmax(-1), (301, 257)),
    "argmin_full": (lambda L, x: x.argmin(), (70001,)),
    "softmax": (lambda L, x: x.softmax(-1), (301, 257)),
    "layer_norm": (lambda L, x: L.nn.functional.layer_norm(x, (257,)), (301, 257)),
    "var_mean": (lambda L, x: L.var_mean(x, 0), (301, 257)),
}


@pytest.mark.parametrize("name", LARGE)
def test_large(name):
    fn, shape = LARGE[name]
    x = Operand(make_values(np.random.default_rng(0), shape, "float32", "finite"), "float32")
    check(fn, x, tol="reduce")
    if name.startswith("column_sum"):
        with inductor_graphs() as graphs:
            compiled(lambda v: fn(gt, v))(x.build(gt))
        assert "for (int64_t xb = 0;" in kernels_only(graphs[0].code.c_source)


# -- training ---------------------------------------------------------------------------------


def _grads(fn, lib, arrays, compile_fn=None):
    """The gradients of ``fn(lib, *tensors).sum()`` with respect to each input."""
    xs = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    run = compile_fn(lambda *ts: fn(lib, *ts)) if compile_fn else (lambda *ts: fn(lib, *ts))
    run(*xs).sum().backward()
    return [x.grad for x in xs]


def _softmax_loss(L, x, w, y):
    return L.softmax(x @ w, -1) * y


def _mlp(L, x, w1, w2, gamma, beta):
    h = L.nn.functional.layer_norm(x @ w1, (w1.shape[1],), gamma, beta)
    return L.tanh(L.nn.functional.gelu(h) @ w2)


def _views_and_reductions(L, x, w):
    h = (x.reshape(6, 2, 2).amax(-1).t() * w).sigmoid()
    return L.cat([h.mean(1), h.var(0), h[:, ::2].sum(0)]).log_softmax(0)


@pytest.mark.parametrize("fn,shapes", [
    (_softmax_loss, [(4, 5), (5, 6), (4, 6)]),
    (_mlp, [(3, 4), (4, 8), (8, 2), (8,), (8,)]),
    (_views_and_reductions, [(6, 4), (2, 6)]),
])
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_training_grads(fn, shapes, seed):
    """Gradients through compiled forward and backward graphs equal eager's."""
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=s).astype(np.float32) for s in shapes]
    expected = _grads(fn, torch, arrays)
    assert_matches(_grads(fn, gt, arrays), expected, "reduce", "eager")
    assert_matches(_grads(fn, gt, arrays, compiled), expected, "reduce", "compiled")


def test_grad_of_a_transposed_output():
    """A tangent reaches the compiled backward in the layout it was traced with
    (the output's strides, here (1, 2)), whatever layout the caller's has."""
    g = np.arange(12, dtype=np.float32).reshape(2, 6)
    grads = []
    for lib, compile_fn in ((torch, None), (gt, compiled)):
        x = lib.ones(6, 2, requires_grad=True)
        fn = lambda v: v.t() * 2
        (compile_fn(fn) if compile_fn else fn)(x).backward(lib.from_numpy(g.copy()))
        grads.append(x.grad)
    assert_matches(grads[1], grads[0], "exact", "compiled")


# -- compiled code is C -----------------------------------------------------------------------


def _large_trig_arguments(shape):
    """float32 values for sin and cos: ordinary ones, ones about 2^18, and a
    block of large ones, infinities and NaN; and the same without the ones
    over 2^18."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 10).astype(np.float32)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, 40)] = rng.uniform(-2 ** 18, 2 ** 18, 40)
    flat[:12] = [2 ** 18, -2 ** 18, 2 ** 18 + 32, 1e6, -3e7, 1e20, 3.4e38,
                 np.inf, -np.inf, np.nan, -0.0, 1e-30]
    flat[-5000:-4000] = rng.uniform(-1e9, 1e9, 1000)   # a later chunk or row
    return np.where(np.abs(x) <= 2 ** 18, x, np.float32(1.0)), x


@pytest.mark.parametrize("shape", [(3, 20000), (5, 7, 301)], ids=["chunked", "rows"])
def test_sin_cos_inline_and_their_large_arguments(shape):
    """float32 sin and cos are vecmath.h's inline functions, exact for |x| up
    to GT_TRIG_FAST_LIMIT (2^18); a loop meeting a larger argument runs again
    with libm's, so every argument gets torch's value (within libm's
    tolerance)."""
    for values in _large_trig_arguments(shape):
        check(lambda L, v: v.sin() * 2 + v.cos(), Operand(values, "float32", "contiguous"),
              tol="libm")
        check(lambda L, v: v.sin_().mul_(2).add_(v.cos()),
              Operand(values, "float32", "contiguous"), tol="libm")
    with inductor_graphs() as graphs:
        compiled(lambda v: v.sin() * 2 + v.cos())(gt.from_numpy(values))
    source = kernels_only(graphs[0].code.c_source)
    assert "gt_sinf(" in source and "gt_cosf(" in source and "> GT_TRIG_FAST_LIMIT)" in source


def test_sin_cos_inline_accuracy():
    """The stated accuracy of gt_sinf and gt_cosf (vecmath.h): within 1.6 ulp
    of the correctly rounded value for |x| <= 2^18, here on a million floats
    spread over the exponents, and on the floats nearest multiples of pi/2."""
    rng = np.random.default_rng(1)
    x = np.ldexp(rng.uniform(0.5, 1, 1 << 20), rng.integers(-20, 19, 1 << 20))
    near = np.arange(1, 160000) * (np.pi / 2)
    x = np.concatenate([x * rng.choice([-1, 1], x.size), near, np.nextafter(near, 0)])
    x = x.astype(np.float32)
    for name in ("sin", "cos"):
        got = compiled(lambda v: getattr(v, name)())(gt.from_numpy(x)).numpy()
        exact = getattr(np, name)(x.astype(np.float64))
        ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
        assert np.max(np.abs(got - exact) / ulp) <= 1.6, name


def test_sin_in_a_loop_writing_its_input_calls_libm():
    """A kernel storing into the buffer it reads (an input updated in place, as
    a compiled optimizer step does) cannot run a loop twice: its sin is libm's."""
    from glasstorch._functorch.aot_autograd import aot_function, nop
    _, values = _large_trig_arguments((3, 20000))
    expected = torch.from_numpy(values.copy()).sin_().mul_(2)

    def update(v):
        v.sin_().mul_(2)
        return ()
    step = aot_function(update, nop, decompositions=compile_fx.decompositions(),
                        keep_inference_input_mutations=True,
                        inference_compiler=lambda gm, inputs: compile_fx.compile_fx_inner(
                            gm, inputs, "in_place_sin"))
    v = gt.from_numpy(values.copy())
    with inductor_graphs() as graphs:
        step(v)
    source = kernels_only(graphs[0].code.c_source)
    assert "sinf(" in source and "gt_sinf" not in source, source
    assert_matches(v, expected, "libm", "in place")


def test_compiled_code_is_a_shared_library(tmp_path, monkeypatch):
    """A pointwise chain compiles to one fused C kernel, built into the cache dir."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    assert codecache.available()
    x = gt.from_numpy(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
    gt._dynamo.reset()
    with inductor_graphs() as graphs:
        out = gt.compile(lambda v: (v.sin() * 2 + 1).relu())(x)
    (graph,) = graphs
    assert len(graph.code.kernels) == 1
    assert list(tmp_path.rglob("*.so"))
    expected = (torch.from_numpy(x.numpy()).sin() * 2 + 1).relu()
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_softmax_exponentials_kept_in_the_output(dtype):
    """A softmax over rows keeps exp(x - max) in its output and scales it there
    (ATen's kernel does the same), not in a stack row copied out at the end;
    a half output cannot hold the float row, which stays.  Neighbours that must
    not move the row: a second output read from it in the same loop, the row's
    sum as an output, the exponentials themselves as an output."""
    rng = np.random.default_rng(3)
    x = Operand(rng.normal(scale=3.0, size=(6, 37)), dtype)

    def exps(L, v):
        e = (v - v.amax(-1, keepdim=True)).exp()
        return e, e.sum(-1, keepdim=True)
    for fn in (lambda L, v: L.softmax(v, -1),
               lambda L, v: (lambda e, s: (e / s, e * s, s))(*exps(L, v)),
               lambda L, v: (lambda e, s: (e, e / s))(*exps(L, v))):
        check(fn, x, tol="libm" if dtype != "float16" else "exact", modes=("compiled",))
    with inductor_graphs() as graphs:
        compiled(lambda v: gt.softmax(v, -1))(x.build(gt))
    source = kernels_only(graphs[0].code.c_source)
    assert ("row0[" in source) == (dtype == "float16"), source


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_costly_value_feeding_a_softmax(dtype):
    """A costly value (tanh) under a softmax is computed once: the max's loop
    keeps it in a row, which the sum's loop and the last loop read back.  (The
    sum's loop used to compute it again into a second row that took the
    exponentials' row's name: C that did not compile, and the graph ran as
    ATen with a warning.)"""
    rng = np.random.default_rng(4)
    x, w = Operand(rng.normal(size=(5, 7)), dtype), Operand(rng.normal(size=(7,)), dtype)
    check(lambda L, a, b: ((a + b).tanh() * b).softmax(-1), x, w, tol="libm",
          modes=("compiled",))
    with inductor_graphs() as graphs:
        compiled(lambda a, b: ((a + b).tanh() * b).softmax(-1))(x.build(gt), w.build(gt))
    body = kernels_only(graphs[0].code.c_source).split("void cpp_fused")[1]
    assert body.count("tanh") == 1, body


@pytest.mark.parametrize("shape", [(), (1,), (3, 5)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_zero_bounds_keep_signed_zeros(shape, dtype):
    """Eager and compiled relu, relu_, clamp, clamp_min, clamp_max and hardtanh
    with a zero bound keep a zero that equals the bound, -0.0 included, bitwise
    as ATen (0-d tensors too, whose numpy results come as scalars)."""
    values = np.resize(np.array([-0.0, 0.0, -1.5, 2.0, math.nan, -math.inf]), shape)
    x = Operand(values, dtype)
    for fn in (lambda L, v: v.relu(), lambda L, v: v.clone().relu_(),
               lambda L, v: L.clamp(v, 0.0, 1.0), lambda L, v: L.clamp(v, -1.0, -0.0),
               lambda L, v: L.clamp_min(v, -0.0), lambda L, v: L.clamp_max(v, 0.0),
               lambda L, v: L.nn.functional.hardtanh(v, 0.0, 1.0)):
        check(fn, x, signed_zeros=True)


def test_printed_kernels_have_no_unused_values():
    """Every value a printed kernel computes is read (the loads and
    differences a row array made unnecessary are dropped from the C), in a
    softmax, a LayerNorm and a tanh under a softmax."""
    import re
    x, w = gt.randn(6, 40), gt.randn(40)
    for fn in (lambda v, u: v.softmax(-1), lambda v, u: gt.nn.functional.layer_norm(v, (40,), u),
               lambda v, u: ((v + u).tanh() * u).softmax(-1)):
        with inductor_graphs() as graphs:
            compiled(fn)(x, w)
        body = kernels_only(graphs[0].code.c_source).split("void cpp_fused", 1)[1]
        names = re.findall(r"\btmp\d+\b", body)
        assert all(names.count(n) > 1 for n in names), body
