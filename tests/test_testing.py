"""torch.testing (assert_close, assert_allclose, make_tensor) and the torch.jit
pass-throughs against real PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import glasstorch as gt

from .differential import differential


def _blank_types(outcome):
    """The two libraries' tensor classes print their own module paths."""
    if outcome[0] == "raised":
        message = outcome[2].replace("glasstorch._tensor.Tensor", "torch.Tensor")
        return outcome[:2] + (message.replace("glasstorch.", "torch."),) + outcome[3:]
    return outcome


CASES = [
    ("equal", lambda lib: (lib.tensor([1., 2.]), lib.tensor([1., 2.])), {}),
    ("close", lambda lib: (lib.tensor([1., 2., 3.]), lib.tensor([1., 2.5, 3.])), {}),
    ("scalar_tensor", lambda lib: (lib.tensor(1.), lib.tensor(2.)), {}),
    ("int_tensor", lambda lib: (lib.tensor([1, 2, 3]), lib.tensor([1, 5, 3])), {}),
    ("bool_tensor", lambda lib: (lib.tensor([True, False]), lib.tensor([True, True])), {}),
    ("nested", lambda lib: ([1, {"a": lib.tensor([1, 2])}], [1, {"a": lib.tensor([1, 3])}]), {}),
    ("numbers", lambda lib: (1.0, 1.1), {}),
    ("numbers_tol", lambda lib: (1.0, 1.05), {"rtol": 0.1, "atol": 0}),
    ("ints", lambda lib: (3, 4), {}),
    ("complex", lambda lib: (1 + 2j, 1 + 2.5j), {}),
    ("numpy_scalars", lambda lib: (np.float32(1.0), np.float64(1.5)), {}),
    ("dtype", lambda lib: (lib.tensor([1.]), lib.tensor([1.], dtype=lib.float64)), {}),
    ("no_dtype_check", lambda lib: (lib.tensor([1.]), lib.tensor([1.], dtype=lib.float64)),
     {"check_dtype": False}),
    ("half_rtol", lambda lib: (lib.tensor([1.0], dtype=lib.float16),
                               lib.tensor([1.0009], dtype=lib.float16)), {}),
    ("shape", lambda lib: (lib.zeros(2, 3), lib.zeros(3, 2)), {}),
    ("device", lambda lib: (lib.zeros(2), lib.zeros(2, device="meta")), {}),
    ("device_off", lambda lib: (lib.zeros(2), lib.zeros(2, device="meta")),
     {"check_device": False}),
    ("stride", lambda lib: (lib.zeros(2, 3), lib.zeros(3, 2).t()), {"check_stride": True}),
    ("only_rtol", lambda lib: (lib.zeros(1), lib.zeros(1)), {"rtol": 1}),
    ("only_atol", lambda lib: (1.0, 1.0), {"atol": 1}),
    ("seq_len", lambda lib: ([1, 2], [1]), {}),
    ("keys", lambda lib: ({"a": 1, "c": 2}, {"b": 1, "c": 2}), {}),
    ("nan", lambda lib: (lib.tensor([float("nan"), 1.]), lib.tensor([float("nan"), 1.])), {}),
    ("nan_equal", lambda lib: (lib.tensor([float("nan"), 1.]), lib.tensor([float("nan"), 1.])),
     {"equal_nan": True}),
    ("nan_vs_number", lambda lib: (lib.tensor([float("nan"), 1.]), lib.tensor([1., 1.])), {}),
    ("inf", lambda lib: (lib.tensor([float("inf")]), lib.tensor([float("inf")])), {}),
    ("tensor_vs_list", lambda lib: (lib.tensor([1, 2]), [1, 2]), {}),
    ("none", lambda lib: (None, None), {}),
    ("none_mismatch", lambda lib: (None, 1), {}),
    ("bools", lambda lib: (True, False), {}),
    ("numpy_arrays", lambda lib: (np.array([1., 2.]), np.array([1., 2.1])), {}),
    ("promote", lambda lib: (lib.tensor([1, 2], dtype=lib.uint8), lib.tensor([1., 2.5])),
     {"check_dtype": False}),
    ("msg", lambda lib: (lib.tensor([1.]), lib.tensor([2.])), {"msg": "custom"}),
    ("msg_callable", lambda lib: ([lib.tensor([1.])], [lib.tensor([2.])]),
     {"msg": lambda m: m.upper()}),
    ("subclass", lambda lib: (lib.nn.Parameter(lib.ones(2)), lib.ones(2)),
     {"allow_subclasses": False}),
    ("multi_dim", lambda lib: (lib.arange(12.).view(3, 4), lib.arange(12.).view(3, 4) * 1.001),
     {}),
]


@pytest.mark.parametrize("name,make,kwargs", CASES, ids=[c[0] for c in CASES])
def test_assert_close(name, make, kwargs):
    differential(lambda lib: lib.testing.assert_close(*make(lib), **kwargs), may_raise=True,
                 normalize=_blank_types)


@given(values=st.lists(st.floats(-1e3, 1e3, width=32), min_size=1, max_size=6),
       noise=st.floats(-1e-2, 1e-2), rtol=st.sampled_from([None, 1e-3, 0.0]))
def test_assert_close_random(values, noise, rtol):
    atol = None if rtol is None else 1e-4

    def scenario(lib):
        a = lib.tensor(values)
        lib.testing.assert_close(a + noise * a, a, rtol=rtol, atol=atol)
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("args,kwargs", [
    (([1.0, 2.0], [1.0, 2.00001]), {}), (([1.0, float("nan")], [1.0, float("nan")]), {}),
    ((1.0, 1.1), {}), ((1.0, 1.1), {"rtol": 0.2, "atol": 0}), (([1, 2], [1, 3]), {"msg": "m"})])
def test_assert_allclose(args, kwargs):
    def scenario(lib):
        a, e = args
        return lib.testing.assert_allclose(lib.tensor(a), e, **kwargs)
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("shape,dtype,kwargs", [
    ((2, 3), "float32", {}), ((4,), "int8", {}), (((2, 2),), "float64", {"low": -1, "high": 1}),
    ((3, 4), "int64", {"noncontiguous": True}), ((5,), "bool", {}),
    ((2, 3), "complex64", {}), ((2, 2, 2, 2), "float32", {"memory_format": "channels_last"}),
    ((6,), "uint8", {"low": 0, "high": 2, "exclude_zero": True}),
    ((3,), "float32", {"requires_grad": True, "exclude_zero": True}),
    ((1,), "float16", {"low": 1, "high": 1}), ((2,), "float32", {"low": 2, "high": 1}),
    ((2,), "int8", {"low": 200, "high": 300}), ((2,), "float32", {"low": float("nan")}),
    ((2,), "int32", {"requires_grad": True}),
    ((2,), "float32", {"noncontiguous": True, "memory_format": "channels_last"}),
    ((), "float32", {"noncontiguous": True}), ((2,), "float32", {"low": -3e38, "high": 3e38})])
def test_make_tensor(shape, dtype, kwargs):
    def scenario(lib):
        lib.manual_seed(0)
        options = dict(kwargs)
        if "memory_format" in options:
            options["memory_format"] = getattr(lib, options["memory_format"])
        t = lib.testing.make_tensor(*shape, dtype=getattr(lib, dtype), device="cpu", **options)
        return t, t.stride(), t.is_contiguous(), t.requires_grad
    differential(scenario, may_raise=True)


@given(low=st.integers(-20, 10), span=st.integers(1, 30), seed=st.integers(0, 100),
       dtype=st.sampled_from(["int16", "float32", "float64", "uint8"]))
def test_make_tensor_ranges(low, span, seed, dtype):
    def scenario(lib):
        lib.manual_seed(seed)
        t = lib.testing.make_tensor(7, dtype=getattr(lib, dtype), device="cpu", low=low,
                                    high=low + span, exclude_zero=True)
        return t, bool((t != 0).all())
    differential(scenario, may_raise=True)


def test_make_tensor_unsupported_dtype():
    with pytest.raises(TypeError, match="The requested dtype 'torch.qint8'|is not supported"):
        gt.testing.make_tensor(2, dtype="qint8", device="cpu")


def test_jit_pass_throughs(torch):
    def f(x):
        return x + 1

    module = gt.nn.Linear(2, 2)
    assert gt.jit.script(f) is f and gt.jit.script(module) is module
    assert gt.jit.trace(f, gt.ones(1)) is f and gt.jit.trace(module, (gt.ones(1, 2),)) is module
    assert gt.jit.is_scripting() is torch.jit.is_scripting() is False
    assert gt.jit.ignore(f) is f and gt.jit.ignore(drop=True)(f) is f
    assert gt.jit.unused(f) is f and gt.jit.export(f) is f

    @gt.jit.script
    def g(x):
        return x * 2
    assert g(gt.tensor(3.)).item() == 6.0
