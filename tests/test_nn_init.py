"""nn.init against real PyTorch: after the same ``manual_seed`` every
initializer gives the same values, bit for bit, and consumes the generator
the same way (a draw after it matches too).

One kernel deviation (glasstorch/_ops/kernels/random.py, not nn.init) is
allowed for here: normal samples in float32 (16 values or more) come from a
Box-Muller path whose log/cos differ from PyTorch's float approximations; those
are compared within 2 ulp of the values' scale (16 under the DEFAULT capability,
whose float loop is less accurate).
Everything else is compared exactly, on every CPU code path: ``uniform_(a, b)``
fuses its multiply-add where ATen's kernel does (AVX2/AVX512 capabilities), and
float64 normal samples use libm's log/cos/sin as PyTorch does (these are
``cpu_paths`` tests, re-run under each path by tests/test_cpu_paths.py).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import glasstorch as gt

from .differential import differential, normal_float32_ulps, raised
from .helpers import to_numpy


def _init_then_draw(lib, init, shape, dtype, seed):
    """The initialized tensor and a draw made right after it (checks RNG consumption)."""
    lib.manual_seed(seed)
    w = lib.empty(*shape, dtype=getattr(lib, dtype), requires_grad=True)
    out = init(lib, w)
    assert out is w and w.is_leaf and w.requires_grad and w.grad_fn is None
    return to_numpy(w), to_numpy(lib.rand(3))


def _compare(init, shape, dtype="float32", seed=0, max_ulp=0):
    (a, after_a), (b, after_b) = (_init_then_draw(lib, init, shape, dtype, seed)
                                  for lib in (torch, gt))
    assert a.dtype == b.dtype and a.shape == b.shape
    if max_ulp:   # ulps of the values' scale (a - b + c may cancel to near zero)
        scale = max(1.0, float(np.abs(a).max()))
        np.testing.assert_allclose(a, b, rtol=0, atol=max_ulp * np.finfo(a.dtype).eps * scale)
    else:
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(after_a, after_b)


UNIFORM_INITS = {
    "kaiming_uniform_linear": lambda lib, w: lib.nn.init.kaiming_uniform_(w, a=math.sqrt(5)),
    "kaiming_uniform_fan_out_relu": lambda lib, w: lib.nn.init.kaiming_uniform_(
        w, mode="fan_out", nonlinearity="relu"),
    "kaiming_uniform_tanh": lambda lib, w: lib.nn.init.kaiming_uniform_(w, nonlinearity="tanh"),
    "xavier_uniform": lambda lib, w: lib.nn.init.xavier_uniform_(w, gain=1.7),
    "uniform": lambda lib, w: lib.nn.init.uniform_(w, -0.3, 0.8),
    "uniform_default": lambda lib, w: lib.nn.init.uniform_(w),
}

NORMAL_INITS = {
    "kaiming_normal": lambda lib, w: lib.nn.init.kaiming_normal_(w, a=0.2, mode="fan_out"),
    "kaiming_normal_selu": lambda lib, w: lib.nn.init.kaiming_normal_(w, nonlinearity="selu"),
    "xavier_normal": lambda lib, w: lib.nn.init.xavier_normal_(w, gain=0.5),
    "normal": lambda lib, w: lib.nn.init.normal_(w, 0.5, 2.0),
    "trunc_normal_default": lambda lib, w: lib.nn.init.trunc_normal_(w),
    "trunc_normal_vit": lambda lib, w: lib.nn.init.trunc_normal_(w, std=0.02),
    "trunc_normal_narrow": lambda lib, w: lib.nn.init.trunc_normal_(w, mean=0.5, std=2.0,
                                                                    a=0.0, b=0.5),
    "trunc_normal_one_sided": lambda lib, w: lib.nn.init.trunc_normal_(w, mean=0.0, std=1.0,
                                                                       a=1.0, b=3.0),
}

DETERMINISTIC_INITS = {
    "constant": lambda lib, w: lib.nn.init.constant_(w, -1.25),
    "ones": lambda lib, w: lib.nn.init.ones_(w),
    "zeros": lambda lib, w: lib.nn.init.zeros_(w),
}

SHAPES = [(5, 7), (16, 3, 3, 3), (3, 2, 5), (1, 1)]


@pytest.mark.cpu_paths
@pytest.mark.parametrize("name", sorted(UNIFORM_INITS))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_inits_bit_identical(name, shape, dtype):
    _compare(UNIFORM_INITS[name], shape, dtype)


@pytest.mark.cpu_paths
@pytest.mark.parametrize("name", sorted(NORMAL_INITS))
@pytest.mark.parametrize("shape", SHAPES)
def test_normal_inits_bit_identical_float64(name, shape):
    _compare(NORMAL_INITS[name], shape, "float64")


@pytest.mark.cpu_paths
@pytest.mark.parametrize("name", sorted(NORMAL_INITS))
def test_normal_inits_float32(name):
    # PyTorch's float loop under the DEFAULT capability is the least accurate
    # (up to 15 ulp of the scale from glasstorch's, measured over 100000 draws)
    _compare(NORMAL_INITS[name], (6, 5), "float32", max_ulp=normal_float32_ulps())
    _compare(NORMAL_INITS[name], (3, 5), "float32")     # < 16 values: the scalar path, exact


@pytest.mark.parametrize("shape", [(6, 5), (1, 3), (4, 1)])
@pytest.mark.parametrize("sparsity", [0.0, 0.3, 1.0])
def test_sparse(shape, sparsity):
    _compare(lambda lib, w: lib.nn.init.sparse_(w, sparsity), shape, "float64")


@pytest.mark.parametrize("name", sorted(DETERMINISTIC_INITS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_deterministic_inits(name, dtype):
    _compare(DETERMINISTIC_INITS[name], (4, 3), dtype)


@given(rows=st.integers(1, 40), cols=st.integers(1, 40), seed=st.integers(0, 2**31 - 1),
       a=st.floats(0, 3))
def test_kaiming_uniform_random_shapes(rows, cols, seed, a):
    _compare(lambda lib, w: lib.nn.init.kaiming_uniform_(w, a=a), (rows, cols), seed=seed)


def test_half_precision_uniform():
    _compare(UNIFORM_INITS["kaiming_uniform_linear"], (8, 9), "bfloat16")
    _compare(UNIFORM_INITS["xavier_uniform"], (8, 9), "float16")


def test_generator_argument():
    def scenario(lib):
        g = lib.Generator().manual_seed(7)
        w = lib.empty(4, 5)
        lib.nn.init.kaiming_uniform_(w, generator=g)
        v = lib.empty(3, 3, dtype=lib.float64)
        lib.nn.init.trunc_normal_(v, generator=g)
        return w, v, lib.rand(2, generator=g)
    differential(scenario)


def test_eye_and_dirac():
    def scenario(lib):
        e = lib.nn.init.eye_(lib.empty(3, 5, requires_grad=True))
        d3 = lib.nn.init.dirac_(lib.empty(4, 2, 3))
        d4 = lib.nn.init.dirac_(lib.empty(6, 3, 3, 3), groups=2)
        d5 = lib.nn.init.dirac_(lib.empty(2, 2, 1, 3, 2))
        return e, d3, d4, d5
    differential(scenario)


@pytest.mark.parametrize("nonlinearity,param", [
    ("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None),
    ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
    ("leaky_relu", 3), ("selu", None)])
def test_calculate_gain(nonlinearity, param):
    differential(lambda lib: lib.nn.init.calculate_gain(nonlinearity, param))


def test_fan_in_and_fan_out():
    def scenario(lib):
        fan = lib.nn.init._calculate_fan_in_and_fan_out
        return [fan(lib.empty(*s)) for s in [(3, 4), (8, 2, 3, 3), (5, 1, 7), (2, 3, 0)]]
    differential(scenario)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.init.calculate_gain("softmax"),
    lambda lib: lib.nn.init.calculate_gain("leaky_relu", True),
    lambda lib: lib.nn.init.calculate_gain("leaky_relu", "0.1"),
    lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3)),
    lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 3), mode="fan_avg"),
    lambda lib: lib.nn.init.xavier_uniform_(lib.empty(())),
    lambda lib: lib.nn.init.eye_(lib.empty(2, 2, 2)),
    lambda lib: lib.nn.init.dirac_(lib.empty(2, 2)),
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 2, 2), groups=2),
    lambda lib: lib.nn.init.sparse_(lib.empty(3), 0.1),
    lambda lib: lib.nn.init.orthogonal_(lib.empty(3)),
])
def test_errors(call):
    raised(differential(call, may_raise=True))


def test_warnings():
    def scenario(lib):
        lib.manual_seed(0)
        empty = lib.nn.init.kaiming_uniform_(lib.empty(0, 3))
        lib.nn.init.kaiming_normal_(lib.empty(3, 0))
        far = lib.nn.init.trunc_normal_(lib.empty(5, dtype=lib.float64), mean=10.0, a=-1.0, b=1.0)
        return empty.shape, far
    differential(scenario)


@pytest.mark.parametrize("old_name", ["uniform", "normal", "constant", "xavier_uniform",
                                      "xavier_normal", "kaiming_uniform", "kaiming_normal"])
def test_deprecated_aliases(old_name):
    def scenario(lib):
        lib.manual_seed(0)
        fn = getattr(lib.nn.init, old_name)
        args = (0.5,) if old_name == "constant" else ()
        return fn(lib.empty(3, 4, dtype=lib.float64), *args), fn.__name__
    differential(scenario)


def test_linear_default_init_when_available():
    """nn.Linear's reset_parameters (kaiming_uniform_ a=sqrt(5), then the bias)."""

    def scenario(lib):
        lib.manual_seed(0)
        layer = lib.nn.Linear(7, 5)
        return layer.weight.detach(), layer.bias.detach()

    (tw, tb), (gw, gb) = [(to_numpy(w), to_numpy(b)) for w, b in (scenario(torch), scenario(gt))]
    np.testing.assert_array_equal(tw, gw)
    np.testing.assert_array_equal(tb, gb)
