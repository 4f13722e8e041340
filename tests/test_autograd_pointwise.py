"""Autograd of the elementwise ops and activations against real PyTorch.

tests/test_autograd_registry.py checks first-order gradients on every op
sample; this file adds:

* double backward: second-order gradients (through ``create_graph=True``, with
  the incoming gradient itself a leaf) and the names of the first-order
  gradients' grad_fns, which show the backward ops PyTorch's formulas call;
* hypothesis-drawn shapes, broadcasting and layouts for binary and unary ops;
* in-place variants (``x.clone().sigmoid_()``): node names and gradients;
* ops whose derivative PyTorch does not implement raise its error.
"""
import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import glasstorch as gt

from .helpers import to_numpy


def _numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True)   # (force: PyTorch may hand back a ZeroTensor)
    return to_numpy(t)


def _leaves(arrays, dtype="float64"):
    """The same values as leaves requiring grad in both libraries."""
    ours = [gt.tensor(a, dtype=getattr(gt, dtype)).requires_grad_() for a in arrays]
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype)).requires_grad_() for a in arrays]
    return ours, theirs


def _assert_grads(ours, theirs, what, atol=1e-7, rtol=1e-6):
    assert len(ours) == len(theirs)
    for k, (g, t) in enumerate(zip(ours, theirs)):
        assert (g is None) == (t is None), f"{what} {k}: {g} here, {t} in PyTorch"
        if t is None:
            continue
        assert tuple(g.shape) == tuple(t.shape), f"{what} {k}: shape"
        assert str(g.dtype) == str(t.dtype), f"{what} {k}: dtype"
        np.testing.assert_allclose(_numpy(g), _numpy(t), atol=atol, rtol=rtol, equal_nan=True,
                                   err_msg=f"{what} {k}")


# -- double backward ----------------------------------------------------------------------

def _uniform(low, high):
    return lambda rng, shape: rng.uniform(low, high, size=shape)


def _away_from_zero(rng, shape):
    """Values whose sign is clear (relu-like kinks give no second derivative)."""
    return rng.uniform(0.2, 3, size=shape) * rng.choice([-1.0, 1.0], size=shape)


_ANY = _uniform(-3, 3)
_POSITIVE = _uniform(0.2, 3)

# name: (function of (lib, *inputs), value draw per input)
DOUBLE = {
    "add": (lambda L, a, b: L.add(a, b, alpha=2), (_ANY, _ANY)),
    "mul": (lambda L, a, b: a * b, (_ANY, _ANY)),
    "div": (lambda L, a, b: a / b, (_ANY, _POSITIVE)),
    "exp": (lambda L, a: L.exp(a), (_ANY,)),
    "tanh": (lambda L, a: L.tanh(a), (_ANY,)),
    "sigmoid": (lambda L, a: L.sigmoid(a), (_ANY,)),
    "relu": (lambda L, a: L.relu(a), (_away_from_zero,)),
    "gelu": (lambda L, a: L.nn.functional.gelu(a), (_ANY,)),
    "gelu_tanh": (lambda L, a: L.nn.functional.gelu(a, approximate="tanh"), (_ANY,)),
    "pow_scalar": (lambda L, a: a ** 3, (_ANY,)),
    "pow_fractional": (lambda L, a: L.pow(a, 2.5), (_POSITIVE,)),
    "pow_tensor": (lambda L, a, b: L.pow(a, b), (_POSITIVE, _ANY)),
    "pow_scalar_base": (lambda L, b: L.pow(1.5, b), (_ANY,)),
    "sqrt": (lambda L, a: L.sqrt(a), (_POSITIVE,)),
    "log": (lambda L, a: L.log(a), (_POSITIVE,)),
    "square": (lambda L, a: L.square(a), (_ANY,)),
    "reciprocal": (lambda L, a: L.reciprocal(a), (_POSITIVE,)),
    "rsqrt": (lambda L, a: L.rsqrt(a), (_POSITIVE,)),
    "erf": (lambda L, a: L.erf(a), (_ANY,)),
    "atan2": (lambda L, a, b: L.atan2(a, b), (_ANY, _away_from_zero)),
    "logaddexp": (lambda L, a, b: L.logaddexp(a, b), (_ANY, _ANY)),
    "xlogy": (lambda L, a, b: L.xlogy(a, b), (_ANY, _POSITIVE)),
    "maximum": (lambda L, a, b: L.maximum(a, b), (_ANY, _ANY)),
    "clamp_tensor": (lambda L, a, lo, hi: L.clamp(a, lo, hi),
                     (_ANY, _uniform(-2, 0), _uniform(0, 2))),
    "silu": (lambda L, a: L.nn.functional.silu(a), (_ANY,)),
    "mish": (lambda L, a: L.nn.functional.mish(a), (_ANY,)),
    "elu": (lambda L, a: L.nn.functional.elu(a, 1.5), (_away_from_zero,)),
    "softplus": (lambda L, a: L.nn.functional.softplus(a, 2.0, 3.0), (_ANY,)),
    "leaky_relu": (lambda L, a: L.nn.functional.leaky_relu(a, 0.2), (_away_from_zero,)),
    "hardtanh": (lambda L, a: L.nn.functional.hardtanh(a), (_ANY,)),
    "hardswish": (lambda L, a: L.nn.functional.hardswish(a), (_uniform(-4, 4),)),
    "threshold": (lambda L, a: L.threshold(a, 0.5, -1.0), (_ANY,)),
}


def _first_and_second_order(lib, fn, inputs, v, w_rng):
    """First-order grads (create_graph) and the grads of those w.r.t. the
    inputs and the incoming gradient ``v``."""
    out = fn(lib, *inputs)
    first = lib.autograd.grad(out, inputs, v, create_graph=True)
    differentiable = [g for g in first if g.requires_grad]
    w = [lib.tensor(w_rng.uniform(-1, 1, size=tuple(g.shape))) for g in differentiable]
    second = lib.autograd.grad(differentiable, list(inputs) + [v], w, allow_unused=True) \
        if differentiable else []
    return first, second


@pytest.mark.parametrize("name", list(DOUBLE))
def test_double_backward_matches_pytorch(name):
    fn, draws = DOUBLE[name]
    rng = np.random.default_rng(0)
    arrays = [draw(rng, (3, 4)) for draw in draws]
    ours, theirs = _leaves(arrays)
    shape = tuple(fn(torch, *theirs).shape)
    v_ours, v_theirs = _leaves([rng.uniform(-2, 2, size=shape)])
    seed = int(rng.integers(2**31))
    g1, g2 = _first_and_second_order(gt, fn, ours, v_ours[0], np.random.default_rng(seed))
    t1, t2 = _first_and_second_order(torch, fn, theirs, v_theirs[0], np.random.default_rng(seed))
    _assert_grads(g1, t1, "first-order gradient of input")
    assert [g.requires_grad for g in g1] == [t.requires_grad for t in t1]
    assert [type(g.grad_fn).__name__ for g in g1] == [type(t.grad_fn).__name__ for t in t1]
    _assert_grads(g2, t2, "second-order gradient of input (last: of the incoming gradient)")


# -- shapes, broadcasting, layouts ----------------------------------------------------------

BINARY = {
    "add": lambda L, a, b: L.add(a, b, alpha=-1.5),
    "sub": lambda L, a, b: L.sub(a, b, alpha=2),
    "rsub": lambda L, a, b: L.rsub(a, b),
    "mul": lambda L, a, b: L.mul(a, b),
    "div": lambda L, a, b: L.div(a, b),
    "div_floor": lambda L, a, b: L.div(a, b, rounding_mode="floor"),
    "pow": lambda L, a, b: L.pow(L.abs(a) + 0.5, b),
    "atan2": lambda L, a, b: L.atan2(a, b),
    "hypot": lambda L, a, b: L.hypot(a, b),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "minimum": lambda L, a, b: L.minimum(a, b),
    "fmax": lambda L, a, b: L.fmax(a, b),
    "fmin": lambda L, a, b: L.fmin(a, b),
    "logaddexp": lambda L, a, b: L.logaddexp(a, b),
    "logaddexp2": lambda L, a, b: L.logaddexp2(a, b),
    "xlogy": lambda L, a, b: L.xlogy(a, L.abs(b)),
    "copysign": lambda L, a, b: L.copysign(a, b),
    "remainder": lambda L, a, b: L.remainder(a, b),
    "fmod": lambda L, a, b: L.fmod(a, b),
    "lerp": lambda L, a, b: L.lerp(a, b, 0.25),
    "where": lambda L, a, b: L.where(a > 0, a, b),
    "clamp_min": lambda L, a, b: L.clamp_min(a, b),
    "clamp_max": lambda L, a, b: L.clamp_max(a, b),
}

UNARY = {
    "neg": lambda L, a: L.neg(a), "abs": lambda L, a: L.abs(a),
    "exp": lambda L, a: L.exp(a), "expm1": lambda L, a: L.expm1(a),
    "exp2": lambda L, a: L.exp2(a), "log1p": lambda L, a: L.log1p(L.abs(a)),
    "log2": lambda L, a: L.log2(L.abs(a) + 0.1), "log10": lambda L, a: L.log10(L.abs(a) + 0.1),
    "sin": lambda L, a: L.sin(a), "cos": lambda L, a: L.cos(a), "tan": lambda L, a: L.tan(a),
    "asin": lambda L, a: L.asin(L.tanh(a)), "acos": lambda L, a: L.acos(L.tanh(a)),
    "atan": lambda L, a: L.atan(a), "sinh": lambda L, a: L.sinh(a),
    "cosh": lambda L, a: L.cosh(a), "asinh": lambda L, a: L.asinh(a),
    "acosh": lambda L, a: L.acosh(L.abs(a) + 1.1), "atanh": lambda L, a: L.atanh(L.tanh(a)),
    "erfc": lambda L, a: L.erfc(a), "erfinv": lambda L, a: L.erfinv(L.tanh(a)),
    "frac": lambda L, a: L.frac(a), "round": lambda L, a: L.round(a, decimals=1),
    "nan_to_num": lambda L, a: L.nan_to_num(L.log(a)),
    "clamp": lambda L, a: L.clamp(a, -0.5, 0.5),
    "hardsigmoid": lambda L, a: L.nn.functional.hardsigmoid(a),
    "softplus": lambda L, a: L.nn.functional.softplus(a),
}


@st.composite
def _broadcast_shapes(draw):
    """Two shapes that broadcast: dims of size 0 and 1, 0-d, leading dims added."""
    shape = draw(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=0, max_size=3))
    other = [draw(st.sampled_from([n, 1])) for n in shape]
    other = other[draw(st.integers(0, len(other))):]
    return (tuple(shape), tuple(other)) if draw(st.booleans()) else (tuple(other), tuple(shape))


def _layout(pair, transpose):
    """A transposed copy (the same values) when asked and possible."""
    if not transpose or pair[0].dim() < 2:
        return pair
    return [t.detach().transpose(0, -1).contiguous().transpose(0, -1).requires_grad_()
            for t in pair]


def _check_gradients(fn, arrays, dtype, transpose, atol=1e-6):
    ours, theirs = _leaves(arrays, dtype)
    ours, theirs = _layout(ours, transpose), _layout(theirs, transpose)
    t_out = fn(torch, *theirs)
    g_out = fn(gt, *ours)
    assert type(g_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    v = np.random.default_rng(1).uniform(-2, 2, size=tuple(t_out.shape))
    t_grads = torch.autograd.grad(t_out, theirs, torch.tensor(v, dtype=t_out.dtype),
                                  allow_unused=True)
    g_grads = gt.autograd.grad(g_out, ours, gt.tensor(v, dtype=g_out.dtype), allow_unused=True)
    _assert_grads(g_grads, t_grads, "gradient of input", atol=atol, rtol=atol)


@given(op=st.sampled_from(list(BINARY)), shapes=_broadcast_shapes(),
       dtype=st.sampled_from(["float32", "float64"]), transpose=st.booleans(),
       seed=st.integers(0, 2**31))
def test_binary_gradients_broadcast(op, shapes, dtype, transpose, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-3, 3, size=s) for s in shapes]
    tol = 1e-6 if dtype == "float64" else 1e-4
    _check_gradients(BINARY[op], arrays, dtype, transpose, atol=tol)


@given(op=st.sampled_from(list(UNARY)),
       shape=st.lists(st.sampled_from([0, 1, 2, 3]), max_size=3).map(tuple),
       transpose=st.booleans(), seed=st.integers(0, 2**31))
def test_unary_gradients(op, shape, transpose, seed):
    rng = np.random.default_rng(seed)
    _check_gradients(UNARY[op], [rng.uniform(-3, 3, size=shape)], "float64", transpose)


# -- in-place variants ----------------------------------------------------------------------

def _aten(name, *args):
    return lambda L, y: getattr(L.ops.aten, name).default(y, *args)


INPLACE = {
    "sigmoid_": lambda L, y: y.sigmoid_(),
    "tanh_": lambda L, y: y.tanh_(),
    "relu_": lambda L, y: y.relu_(),
    "exp_": lambda L, y: y.exp_(),
    "mul_": lambda L, y: y.mul_(2.5),
    "div_": lambda L, y: y.div_(-4.0),
    "pow_": lambda L, y: y.pow_(3),
    "clamp_": lambda L, y: y.clamp_(-0.5, 0.5),
    "sub_": lambda L, y: y.sub_(y.detach() * 3, alpha=2),
    "hardtanh_": _aten("hardtanh_"),
    "silu_": _aten("silu_"),
    "gelu_": _aten("gelu_"),
    "hardswish_": _aten("hardswish_"),
    "leaky_relu_": _aten("leaky_relu_", 0.2),
    "elu_": _aten("elu_", 1.5),
    "threshold_": _aten("threshold_", 0.5, -1.0),
}

# PyTorch gives these in-place ops an entry of their own (the backward reads the
# result), so their nodes are numbered after the functional op's.
_OWN_INPLACE_ENTRY = {"leaky_relu_": "LeakyReluBackward1", "elu_": "EluBackward1",
                      "threshold_": "ThresholdBackward1"}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_gradients(name):
    fn = INPLACE[name]
    values = np.random.default_rng(2).uniform(0.2, 3, size=(3, 4)) * \
        np.random.default_rng(3).choice([-1.0, 1.0], size=(3, 4))
    (x_ours,), (x_theirs,) = _leaves([values])
    y_ours, y_theirs = x_ours.clone(), x_theirs.clone()
    r_ours, r_theirs = fn(gt, y_ours), fn(torch, y_theirs)
    assert r_ours is y_ours and r_theirs is y_theirs
    v = np.random.default_rng(4).uniform(-2, 2, size=(3, 4))
    _assert_grads(gt.autograd.grad(y_ours, x_ours, gt.tensor(v), retain_graph=True),
                  torch.autograd.grad(y_theirs, x_theirs, torch.tensor(v), retain_graph=True),
                  "gradient of input")
    ours, theirs = type(y_ours.grad_fn).__name__, type(y_theirs.grad_fn).__name__
    if name in _OWN_INPLACE_ENTRY:
        assert theirs == _OWN_INPLACE_ENTRY[name]
    assert ours == theirs


@pytest.mark.parametrize("name", ["acosh_", "asinh_", "atanh_"])
def test_inplace_inverse_hyperbolics_are_not_differentiable(name):
    """PyTorch refuses these in-place gradients ("inplace version of acosh")."""
    (x_ours,), (x_theirs,) = _leaves([np.full((2, 3), 1.5 if name == "acosh_" else 0.5)])
    messages = []
    for lib, x in ((gt, x_ours), (torch, x_theirs)):
        y = getattr(x.clone(), name)()
        with pytest.raises(RuntimeError) as info:
            lib.autograd.grad(y, x, lib.ones(2, 3, dtype=lib.float64))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_inplace_on_a_view_rebases_the_base():
    (x_ours,), (x_theirs,) = _leaves([np.linspace(-2, 2, 12).reshape(3, 4)])
    results = []
    for lib, x in ((gt, x_ours), (torch, x_theirs)):
        y = x.clone()
        y[1:].sigmoid_()
        assert type(y.grad_fn).__name__ == "CopySlices"
        results.append(lib.autograd.grad(y, x, lib.ones(3, 4, dtype=lib.float64)))
    _assert_grads(*results, "gradient of input")


# -- derivatives PyTorch does not implement -------------------------------------------------

@pytest.mark.parametrize("name,fn", [
    ("floor_divide", lambda L, a, b: L.floor_divide(a, b)),
    ("floor_divide.Scalar", lambda L, a, b: L.ops.aten.floor_divide.Scalar(a, 2)),
    ("remainder.Scalar_Tensor", lambda L, a, b: L.ops.aten.remainder.Scalar_Tensor(5, b)),
    ("silu_backward", lambda L, a, b: L.ops.aten.silu_backward.default(a, b)),
    ("mish_backward", lambda L, a, b: L.ops.aten.mish_backward.default(a, b)),
    ("hardsigmoid_backward", lambda L, a, b: L.ops.aten.hardsigmoid_backward.default(a, b)),
])
def test_not_implemented_derivatives_raise_like_pytorch(name, fn):
    ours, theirs = _leaves([np.full((2, 3), 3.5), np.full((2, 3), 1.5)])
    messages = []
    for lib, inputs in ((gt, ours), (torch, theirs)):
        out = fn(lib, *inputs)
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError) as info:
            lib.autograd.grad(out, inputs, lib.ones(2, 3, dtype=lib.float64), allow_unused=True)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_sgn_and_rounding_have_zero_gradients():
    (x_ours,), (x_theirs,) = _leaves([np.array([np.nan, 0.0, -0.0, 1.5, -2.5, np.inf])])
    for op in ("sgn", "sign", "round", "floor", "ceil", "trunc"):
        _assert_grads(gt.autograd.grad(getattr(gt, op)(x_ours), x_ours, gt.ones(6)),
                      torch.autograd.grad(getattr(torch, op)(x_theirs), x_theirs, torch.ones(6)),
                      f"{op}: gradient of input")


# -- the backward ops' errors ---------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda L, g, x: L.ops.aten.gelu_backward.default(g, x, approximate="sigmoid"),
    lambda L, g, x: L.ops.aten.leaky_relu_backward.default(g, x, -0.1, True),
    lambda L, g, x: L.ops.aten.elu_backward.default(g, -1.0, 1.0, 1.0, True, x),
    lambda L, g, x: L.ops.aten.sigmoid_backward.default(g.long(), x.long()),
    lambda L, g, x: L.ops.aten.hardtanh_backward.default(g.long(), x.long(), -1, 1),
    lambda L, g, x: L.ops.aten.threshold_backward.default(g.bool(), x.bool(), 0),
    lambda L, g, x: L.ops.aten.threshold_backward.default(g, x, 1e300),
    lambda L, g, x: L.ops.aten.mish_backward.default(g, x.long()),
    lambda L, g, x: L.ops.aten.tanh_backward.default(g, x[:2]),
], ids=["gelu_approximate", "leaky_relu_inplace_negative", "elu_inplace_negative",
        "sigmoid_int", "hardtanh_int", "threshold_bool", "threshold_overflow", "mish_cast",
        "broadcast"])
def test_backward_op_errors_match_pytorch(call):
    values = np.random.default_rng(5).uniform(-3, 3, size=(2, 3, 4))
    errors = []
    for lib in (gt, torch):
        g, x = (lib.tensor(v, dtype=lib.float32) for v in values[:2])
        with pytest.raises(Exception) as info:
            call(lib, g, x)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]
