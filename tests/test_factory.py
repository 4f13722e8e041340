"""Factories against PyTorch: shapes, dtypes (incl. inference), devices, strides, errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch as gt

from .differential import differential
from .helpers import assert_same

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]
dtype_names = st.sampled_from(DTYPES)


def _both(torch, fn):
    return fn(gt), fn(torch)


@given(shape=shapes, dtype=dtype_names, device=st.sampled_from(["cpu", "meta"]))
def test_zeros_ones_empty(torch, shape, dtype, device):
    for name in ("zeros", "ones", "empty"):
        ours, theirs = _both(torch, lambda L: getattr(L, name)(shape, dtype=getattr(L, dtype),
                                                                   device=device))
        assert ours.device.type == device
        assert_same(ours, theirs, values=name != "empty" and device == "cpu")


@given(shape=shapes, value=st.one_of(st.booleans(), st.integers(-100, 100),
                                     st.floats(-1e3, 1e3), st.complex_numbers(max_magnitude=10)))
def test_full_dtype_inference(torch, shape, value):
    ours, theirs = _both(torch, lambda L: L.full(shape, value))
    assert_same(ours, theirs)


@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4).map(tuple),
       dtype=dtype_names, data=st.data())
def test_like_factories_preserve_layout(torch, shape, dtype, data):
    perm = data.draw(st.permutations(range(len(shape))))
    step = data.draw(st.sampled_from([1, 2]))
    base = np.arange(int(np.prod(shape)) * step, dtype=np.float64)
    def make(L):
        t = L.tensor(base).reshape(shape[:-1] + (shape[-1] * step,))[..., ::step]
        return t.permute(*perm)
    for name in ("empty_like", "zeros_like", "ones_like", "rand_like"):
        kwargs = {} if name == "rand_like" else {"dtype": None}
        ours, theirs = _both(torch, lambda L: getattr(L, name)(make(L), **kwargs))
        assert_same(ours, theirs, values=name in ("zeros_like", "ones_like"))
    ours, theirs = _both(torch, lambda L: L.full_like(make(L), 3, dtype=getattr(L, dtype)))
    assert_same(ours, theirs)


@pytest.mark.parametrize("args", [(5,), (5.0,), (2, 7), (1, 2, 0.1), (0, 1, 0.3), (10, -3, -3),
                                  (-1.5, 2.5, 0.5), (0, 10, 3), (True,), (0.5, 5), (1, 1)])
def test_arange_values_and_dtype(torch, args):
    ours, theirs = _both(torch, lambda L: L.arange(*args))
    assert_same(ours, theirs, atol=0, rtol=0)


@given(start=st.integers(-50, 50), length=st.integers(0, 40), step=st.integers(1, 7),
       dtype=st.sampled_from(["int32", "int64", "float32", "float64", "int16", "bfloat16"]),
       neg=st.booleans())
def test_arange_hypothesis(torch, start, length, step, dtype, neg):
    end = start + length if not neg else start - length
    step = -step if neg else step
    ours, theirs = _both(torch, lambda L: L.arange(start, end, step, dtype=getattr(L, dtype)))
    assert_same(ours, theirs)


@given(start=st.floats(-100, 100), end=st.floats(-100, 100), steps=st.integers(0, 30),
       dtype=st.sampled_from(["float32", "float64", "int64", "int32"]))
def test_linspace_logspace(torch, start, end, steps, dtype):
    ours, theirs = _both(torch, lambda L: L.linspace(start, end, steps, dtype=getattr(L, dtype)))
    if dtype.startswith("int"):  # truncation after float rounding may differ by one ulp
        assert_same(ours, theirs, values=False)
        assert np.abs(ours.numpy().astype(np.int64) - theirs.numpy()).max(initial=0) <= 1
    else:
        assert_same(ours, theirs, atol=1e-4, rtol=1e-5)
    s, e = start / 40, end / 40
    ours, theirs = _both(torch, lambda L: L.logspace(s, e, steps, 2.0, dtype=L.float64))
    assert_same(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("n,m", [(0, 0), (1, 3), (3, 3), (4, 2)])
def test_eye(torch, n, m):
    assert_same(*_both(torch, lambda L: L.eye(n, m)))
    assert_same(*_both(torch, lambda L: L.eye(n, dtype=L.int32)))


def test_new_factories(torch):
    def run(L):
        x = L.ones(2, 3, dtype=L.float64)
        return (x.new_zeros(4), x.new_ones((2, 2), dtype=L.int8), x.new_full([3], 7),
                x.new_empty(2, 1).fill_(1), x.new_empty_strided((2, 3), (1, 2)).zero_(),
                x.new_tensor([1, 2]))
    for ours, theirs in zip(*_both(torch, run)):
        assert_same(ours, theirs)


def test_scalar_tensor_and_fill(torch):
    assert_same(*_both(torch, lambda L: L.scalar_tensor(2)))
    assert_same(*_both(torch, lambda L: L.zeros(3, dtype=L.int32).fill_(-2.7)))
    assert_same(*_both(torch, lambda L: L.zeros(3, dtype=L.uint8).fill_(-1)))
    assert_same(*_both(torch, lambda L: L.zeros(3, dtype=L.bfloat16).fill_(1 / 3)))
    assert_same(*_both(torch, lambda L: L.zeros(2, 2).fill_(L.tensor(4.0, dtype=L.float64))))
    assert_same(*_both(torch, lambda L: L.ones(3).zero_()))


def test_default_device_context(torch):
    with gt.device("meta"):
        for t in (gt.zeros(2), gt.empty(3), gt.full((2,), 1.0), gt.arange(4), gt.rand(2),
                  gt.randn(2), gt.eye(2), gt.tensor([1, 2]), gt.linspace(0, 1, 3)):
            assert t.device.type == "meta"
        assert gt.get_default_device() == gt.device("meta")
    assert gt.zeros(2).device.type == "cpu"
    gt.set_default_device("meta")
    try:
        assert gt.ones(2).device.type == "meta"
        assert gt.ones(2, device="cpu").device.type == "cpu"
    finally:
        gt.set_default_device(None)
    assert gt.get_default_device() == gt.device("cpu")


def test_backend_select_dispatch():
    from glasstorch._dispatcher.dispatcher import dispatch_trace
    with dispatch_trace() as trace:
        gt.empty(2, device="meta")
    text = str(trace)
    assert "key=[BackendSelect]" in text and "key=[Meta]" in text


def test_requires_grad_kwarg(torch):
    assert gt.zeros(2, requires_grad=True).requires_grad
    assert gt.rand(2, requires_grad=True).requires_grad
    assert gt.ones(2).new_zeros(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        gt.zeros(2, dtype=gt.int64, requires_grad=True)


def test_out_variants(torch):
    def run(L):
        o1 = L.empty(0, dtype=L.int64)
        L.arange(3, out=o1)
        o2 = L.empty(0)
        L.zeros((2, 2), out=o2)
        o3 = L.empty(0)
        L.linspace(0, 1, 4, out=o3)
        return o1, o2, o3
    for ours, theirs in zip(*_both(torch, run)):
        assert_same(ours, theirs)


@pytest.mark.parametrize("fn,exc,msg", [
    (lambda L: L.zeros(-1), RuntimeError, "zeros: Dimension size must be non-negative."),
    (lambda L: L.empty(-1), RuntimeError, r"Trying to create tensor with negative dimension -1: \[-1\]"),
    (lambda L: L.ones(-1), RuntimeError, r"Trying to create tensor with negative dimension -1"),
    (lambda L: L.arange(0, 10, 0), RuntimeError, "step must be nonzero"),
    (lambda L: L.arange(10, 0, 1), RuntimeError, "upper bound and lower bound inconsistent"),
    (lambda L: L.arange(0, float("inf")), RuntimeError, "unsupported range: 0 -> inf"),
    (lambda L: L.linspace(0, 1, -1), RuntimeError, "number of steps must be non-negative"),
    (lambda L: L.eye(-1), RuntimeError, "n must be greater or equal to 0, got -1"),
    (lambda L: L.eye(2, -3), RuntimeError, "m must be greater or equal to 0, got -3"),
    (lambda L: L.empty(2, device="cuda"), AssertionError, "Torch not compiled with CUDA enabled"),
    (lambda L: L.zeros(2, dtype=L.uint8).fill_(300), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    (lambda L: L.ones(2).fill_(1j), RuntimeError,
     "value cannot be converted to type float without overflow"),
    (lambda L: L.ones(2).fill_(L.ones(2)), RuntimeError,
     "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."),
    (lambda L: L.linspace(L.tensor([0.]), L.tensor(1.), 3), RuntimeError,
     "linspace only supports 0-dimensional start and end tensors"),
    (lambda L: L.empty_strided((2,), (-1,)), RuntimeError, "Storage size calculation overflowed"),
])
def test_errors(torch, fn, exc, msg):
    for L in (torch, gt):
        with pytest.raises(exc, match=msg):
            fn(L)


@pytest.mark.parametrize("value", [np.float32(1.5), 3, [1, 2]], ids=["np-scalar", "int", "list"])
def test_from_numpy_rejects_non_arrays_like_torch(value):
    differential(lambda lib: lib.from_numpy(value), may_raise=True)
