"""Tensor printing (glasstorch._tensor_str) against real PyTorch's repr, character for character.

The printer is exercised through a tiny stand-in tensor (numpy array + glasstorch
dtype) so these tests do not depend on the op library.
"""
from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

from glasstorch._core import dtype as dt
from glasstorch import _tensor_str as ts

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.data_too_large])


# -- a duck-typed tensor -----------------------------------------------------------------


class FakeDevice:
    def __init__(self, type_, index=None):
        self.type = type_
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeNode:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class FakeTensor:
    def __init__(self, array, dtype, device="cpu", index=None, requires_grad=False,
                 grad_fn=None, shape=None):
        self._array = array
        self.dtype = dtype
        self.device = FakeDevice(device, index)
        self.shape = tuple(array.shape) if shape is None else tuple(shape)
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn

    def dim(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)

    def _cpu_array(self):
        if self.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self._array


NP_TYPES = {dt.float16: np.float16, dt.bfloat16: ml_dtypes.bfloat16, dt.float32: np.float32,
            dt.float64: np.float64, dt.complex64: np.complex64, dt.complex128: np.complex128,
            dt.int64: np.int64, dt.int32: np.int32, dt.int16: np.int16, dt.int8: np.int8,
            dt.uint8: np.uint8, dt.bool_: np.bool_}


def torch_dtype(d):
    return getattr(torch, d.name)


def to_torch(array, d):
    if d is dt.bfloat16:
        return torch.from_numpy(array.astype(np.float32, order="C")).to(torch.bfloat16)
    return torch.from_numpy(np.array(array, order="C", copy=True))


def ours(array, d, **kw):
    return ts.tensor_repr(FakeTensor(array, d, **kw))


def check(array, d):
    expected = repr(to_torch(array, d))
    got = ours(array, d)
    assert got == expected, f"\nours:\n{got}\ntorch:\n{expected}"


@pytest.fixture(autouse=True)
def _restore_options():
    yield
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    dt.set_default_dtype(dt.float32)


# -- random data -------------------------------------------------------------------------

FLOAT_FAMILIES = ("int", "smallint", "unit", "mixed", "wide", "huge", "tiny", "zeros", "fraction")
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e38, -1e-38, 65504.0, 3e-8])


def _floats(rng, n, family, special_rate):
    if family == "int":
        v = rng.integers(-1000, 1000, n).astype(np.float64)
    elif family == "smallint":
        v = rng.integers(0, 10, n).astype(np.float64)
    elif family == "unit":
        v = rng.standard_normal(n)
    elif family == "mixed":
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    elif family == "wide":
        v = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-12, 12, n)
    elif family == "huge":
        v = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(5, 40, n)
    elif family == "tiny":
        v = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-42, -3, n)
    elif family == "zeros":
        v = rng.choice([-0.0, 0.0], n)
    else:  # "fraction": values with few decimals
        v = rng.integers(-99999, 99999, n) / 1000.0
    if special_rate and n:
        mask = rng.random(n) < special_rate
        v[mask] = rng.choice(SPECIALS, int(mask.sum()))
    return v


def make_array(shape, d, seed, family, special_rate):
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if d is dt.bool_:
            return (rng.random(n) < 0.5).reshape(shape)
        if d in (dt.int64, dt.int32, dt.int16, dt.int8, dt.uint8):
            info = np.iinfo(NP_TYPES[d])
            lo, hi = int(info.min), int(info.max)
            choice = seed % 3
            if choice == 0:
                lo, hi = max(lo, -10), min(hi, 10)
            elif choice == 1:
                lo, hi = max(lo, -100000), min(hi, 100000)
            v = rng.integers(lo, hi, n, dtype=np.int64, endpoint=True)
            return v.astype(NP_TYPES[d]).reshape(shape)
        if d.is_complex:
            re = _floats(rng, n, family, special_rate)
            im = _floats(rng, n, FLOAT_FAMILIES[seed % len(FLOAT_FAMILIES)], special_rate)
            return (re + 1j * im).astype(NP_TYPES[d]).reshape(shape)
        return _floats(rng, n, family, special_rate).astype(NP_TYPES[d]).reshape(shape)


ALL = [dt.float32, dt.float64, dt.float16, dt.bfloat16, dt.int64, dt.int32, dt.int16,
       dt.int8, dt.uint8, dt.bool_, dt.complex64, dt.complex128]

small_shapes = st.lists(st.integers(0, 6), min_size=0, max_size=4).map(tuple)
big_shapes = st.sampled_from([(1001,), (2000,), (40, 30), (3, 400), (400, 3), (11, 11, 11),
                              (2, 3, 200), (5, 5, 5, 9), (0, 2000), (1, 1001), (7, 1, 200),
                              (1, 1, 1, 1001), (2, 2, 2, 130)])
cases = st.tuples(st.one_of(small_shapes, small_shapes, big_shapes),
                  st.sampled_from(ALL),
                  st.integers(0, 2**32 - 1),
                  st.sampled_from(FLOAT_FAMILIES),
                  st.sampled_from([0.0, 0.0, 0.1, 0.5]))


# -- properties --------------------------------------------------------------------------


@settings(max_examples=400, **SETTINGS)
@given(cases)
def test_random_tensors_match_torch(case):
    shape, d, seed, family, rate = case
    check(make_array(shape, d, seed, family, rate), d)


@settings(max_examples=250, **SETTINGS)
@given(cases,
       st.sampled_from([None, None, "default", "short", "full"]),
       st.one_of(st.none(), st.integers(0, 8)),
       st.one_of(st.none(), st.sampled_from([0, 1, 5, 10, 50, 1000, math.inf])),
       st.one_of(st.none(), st.integers(0, 4)),
       st.one_of(st.none(), st.integers(5, 150)),
       st.sampled_from([None, True, False]),
       st.booleans())
def test_printoptions_match_torch(case, profile, precision, threshold, edgeitems, linewidth,
                                  sci_mode, requires_grad):
    shape, d, seed, family, rate = case
    kw = dict(profile=profile, precision=precision, threshold=threshold, edgeitems=edgeitems,
              linewidth=linewidth, sci_mode=sci_mode)
    try:
        torch.set_printoptions(**kw)
        ts.set_printoptions(**kw)
        assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
        array = make_array(shape, d, seed, family, rate)
        t = to_torch(array, d)
        requires_grad = requires_grad and (d.is_floating_point or d.is_complex)
        t.requires_grad_(requires_grad)
        expected = repr(t)
        got = ours(array, d, requires_grad=requires_grad)
        assert got == expected, f"\nours:\n{got}\ntorch:\n{expected}"
    finally:
        torch.set_printoptions(profile="default")
        ts.set_printoptions(profile="default")


@settings(max_examples=60, **SETTINGS)
@given(cases)
def test_default_dtype_float64(case):
    shape, d, seed, family, rate = case
    torch.set_default_dtype(torch.float64)
    dt.set_default_dtype(dt.float64)
    try:
        check(make_array(shape, d, seed, family, rate), d)
    finally:
        torch.set_default_dtype(torch.float32)
        dt.set_default_dtype(dt.float32)


@settings(max_examples=60, **SETTINGS)
@given(small_shapes, st.sampled_from(ALL), st.booleans(), st.sampled_from([None, 20, 80]))
def test_meta_tensors(shape, d, requires_grad, linewidth):
    requires_grad = requires_grad and (d.is_floating_point or d.is_complex)
    torch.set_printoptions(linewidth=linewidth)
    ts.set_printoptions(linewidth=linewidth)
    t = torch.empty(shape, dtype=torch_dtype(d), device="meta", requires_grad=requires_grad)
    fake = FakeTensor(None, d, device="meta", shape=shape, requires_grad=requires_grad)
    assert ts.tensor_repr(fake) == repr(t)


@settings(max_examples=60, **SETTINGS)
@given(cases)
def test_grad_fn_suffix(case):
    shape, d, seed, family, rate = case
    if not (d.is_floating_point or d.is_complex):
        d = dt.float32
    array = make_array(shape, d, seed, family, rate)
    leaf = to_torch(array, d).requires_grad_()
    t = leaf.clone()  # same values, grad_fn=<CloneBackward0>
    node = FakeNode(type(t.grad_fn).__name__)
    assert ours(array, d, requires_grad=True, grad_fn=node) == repr(t)


# -- hand-picked cases --------------------------------------------------------------------

EXAMPLES = [
    ([1.0, 2.0], dt.float32),
    (3.0, dt.float32),
    (-0.0, dt.float32),
    ([0.0, -0.0], dt.float32),
    ([1.5, -0.0], dt.float32),
    ([np.nan, np.inf, -np.inf], dt.float32),
    ([np.nan, 1.0], dt.float32),
    ([np.nan, 1.25], dt.float32),
    ([1e-5, 1.0], dt.float32),
    ([1e8, 1.0], dt.float64),
    ([1e9, 1.0], dt.float64),
    ([123456789.0], dt.float32),
    ([1e300, -1e-300], dt.float64),
    ([0.1, 0.25, 1000.5], dt.float16),
    ([65504.0, -65504.0, 1e-7], dt.float16),
    ([3.140625, 1e30, 0.0], dt.bfloat16),
    ([2**62, -(2**63), 7], dt.int64),
    ([255, 0, 17], dt.uint8),
    ([True, False], dt.bool_),
    (True, dt.bool_),
    (7, dt.int32),
    ([1 + 2j, -0.5 - 0.0j, complex(np.nan, np.inf)], dt.complex64),
    (1 - 2j, dt.complex128),
    ([[1.0, 2.5], [3.0, -4.125]], dt.float32),
    (np.arange(1200.0).reshape(30, 40), dt.float32),
    (np.arange(2000), dt.int64),
    (np.arange(100.0) * 1.001, dt.float32),
]


@pytest.mark.parametrize("values, d", EXAMPLES)
def test_examples(values, d):
    check(np.array(values, dtype=NP_TYPES[d]), d)


@pytest.mark.parametrize("shape, d", [((0,), dt.float32), ((0,), dt.int64), ((0, 3), dt.float32),
                                      ((2, 0, 1), dt.bool_), ((0,), dt.float16),
                                      ((0, 0), dt.complex64)])
def test_empty(shape, d):
    check(np.zeros(shape, dtype=NP_TYPES[d]), d)


def test_device_suffix():
    fake = FakeTensor(np.array([1.0, 2.0], np.float32), dt.float32, device="cuda", index=0)
    assert ts.tensor_repr(fake) == "tensor([1., 2.], device='cuda:0')"
    fake = FakeTensor(np.array([1, 2], np.int32), dt.int32, device="cuda", index=1,
                      requires_grad=False)
    assert ts.tensor_repr(fake) == "tensor([1, 2], device='cuda:1', dtype=torch.int32)"


def test_tensor_contents():
    t = torch.tensor([1.0, 2.0], dtype=torch.float16)
    got = ts.tensor_repr(FakeTensor(np.array([1.0, 2.0], np.float16), dt.float16),
                         tensor_contents="[custom]")
    assert got == t.__repr__(tensor_contents="[custom]")


def test_printoptions_context_manager():
    before = ts.get_printoptions()
    assert before == torch._tensor_str.get_printoptions()
    with ts.printoptions(precision=2, sci_mode=True), torch._tensor_str.printoptions(
            precision=2, sci_mode=True):
        assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
        check(np.array([1.2345, 6.789], np.float32), dt.float32)
    assert ts.get_printoptions() == before


def test_profiles():
    for profile in ("short", "full", "default"):
        torch.set_printoptions(profile=profile)
        ts.set_printoptions(profile=profile)
        assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
        check(np.linspace(-3, 3, 1500).astype(np.float32), dt.float32)


def test_installed_on_tensor():
    from glasstorch._tensor import Tensor
    assert Tensor._repr_impl is ts.tensor_repr


def test_subclass_prefix():
    from glasstorch._tensor import Tensor
    from glasstorch._core.device import device
    base = Tensor._from_array(np.array([1.0, 2.0], np.float32), dt.float32, device("cpu"))

    class MyTensor(Tensor):
        pass

    class TorchMyTensor(torch.Tensor):
        pass

    TorchMyTensor.__name__ = "MyTensor"
    expected = repr(torch.tensor([1.0, 2.0]).as_subclass(TorchMyTensor))
    assert ts.tensor_repr(base.as_subclass(MyTensor)) == expected
    assert ts.tensor_repr(base) == "tensor([1., 2.])"
