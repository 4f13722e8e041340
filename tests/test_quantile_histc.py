"""quantile, nanquantile (glasstorch/_ops/kernels/quantile.py) and histc
(kernels/histogram.py) against real PyTorch: values, shapes, dtypes, gradients
and errors, on random shapes and values (repeats, NaNs, out-of-range elements)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from .differential import differential

MODES = ["linear", "lower", "higher", "midpoint", "nearest"]
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def values(seed, shape, nan_fraction=0.0):
    """Halves in [-3, 3) (ties and repeats), some of them NaN."""
    rng = np.random.default_rng(seed)
    v = rng.integers(-6, 6, size=shape).astype(np.float64) / 2
    v[rng.random(shape) < nan_fraction] = np.nan
    return v


@given(seed=st.integers(0, 2**31), shape=shapes, mode=st.sampled_from(MODES),
       nan=st.sampled_from([0.0, 0.3, 1.0]), fn=st.sampled_from(["quantile", "nanquantile"]),
       q=st.one_of(st.floats(0, 1), st.lists(st.floats(0, 1), min_size=1, max_size=3)),
       dim=st.one_of(st.none(), st.integers(-3, 2)), keepdim=st.booleans(),
       dtype=st.sampled_from(["float32", "float64"]))
def test_quantile_matches_pytorch(seed, shape, mode, nan, fn, q, dim, keepdim, dtype):
    data = values(seed, shape, nan)
    dim = None if dim is None else dim % len(shape)

    def case(L):
        d = getattr(L, dtype)
        qq = q if isinstance(q, float) else L.tensor(q, dtype=d)
        return getattr(L, fn)(L.tensor(data, dtype=d), qq, dim=dim, keepdim=keepdim,
                              interpolation=mode)
    differential(case)


@pytest.mark.parametrize("mode", MODES)
def test_quantile_gradient_matches_pytorch(mode):
    data = values(1, (3, 5))

    def case(L):
        x = L.tensor(data, requires_grad=True)
        L.quantile(x, L.tensor([0.1, 0.5, 0.85], dtype=L.float64), dim=1,
                   interpolation=mode).sum().backward()
        return x.grad
    differential(case)


def test_quantile_out_and_method_match_pytorch():
    def case(L):
        x = L.tensor(values(2, (4, 3)))
        out = L.empty(0, dtype=L.float64)
        L.nanquantile(x, 0.25, dim=0, out=out)
        return out, x.quantile(L.tensor([0.5, 1.0], dtype=L.float64))
    differential(case)


@pytest.mark.parametrize("call", [
    lambda L: L.quantile(L.tensor([]), 0.5),
    lambda L: L.quantile(L.arange(4.0), L.ones(2, 2)),
    lambda L: L.quantile(L.arange(4), 0.5),
    lambda L: L.quantile(L.arange(4.0), L.tensor([0.5], dtype=L.float64)),
    lambda L: L.quantile(L.arange(4.0), L.tensor([0.5, 1.5])),
    lambda L: L.nanquantile(L.arange(4.0), -0.5),
    lambda L: L.quantile(L.arange(4.0), 0.5, interpolation="cubic"),
    lambda L: L.quantile(L.arange(4.0), 0.5, dim=1),
    lambda L: L.quantile(L.arange(4.0), 0.5, out=L.empty(0, dtype=L.float64)),
])
def test_quantile_errors_match_pytorch(call):
    differential(call, may_raise=True)


@given(seed=st.integers(0, 2**31), shape=shapes, bins=st.integers(1, 12),
       bounds=st.sampled_from([(0, 0), (-1, 2), (-2.5, 0.5), (1, 1), (0.3, 2.9)]),
       nan=st.sampled_from([0.0, 0.2]),
       dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]))
def test_histc_matches_pytorch(seed, shape, bins, bounds, nan, dtype):
    data = values(seed, shape, nan if bounds[0] != bounds[1] else 0.0)   # a NaN range raises
    differential(lambda L: L.histc(L.tensor(data, dtype=getattr(L, dtype)), bins, *bounds))


def test_histc_edges_out_and_no_gradient_match_pytorch():
    def case(L):
        x = L.tensor([0.0, 1.0, 2.0, 3.0, 10.0, -0.5], requires_grad=True)
        h = L.histc(x, 5, 0, 3)
        out = L.empty(0)
        return h, h.requires_grad, L.histc(L.tensor([7.0, 7.0]), 4, out=out), out, x.histc(2)
    differential(case)


@pytest.mark.cpu_paths
@pytest.mark.parametrize("call", [
    lambda L: L.histc(L.arange(5.0), bins=3, min=5, max=1),
    lambda L: L.histc(L.arange(5), 3),
    lambda L: L.histc(L.arange(5.0), 0),
    lambda L: L.histc(L.arange(5.0), 3, 0, float("inf")),
    lambda L: L.histc(L.tensor([1.0, float("inf")]), 3),
    lambda L: L.histc(L.tensor([1.0, float("nan")]), 3),
    lambda L: L.histc(L.tensor([float("nan"), 2.0], dtype=L.bfloat16), 3, 1, 1),
    lambda L: L.histc(L.arange(5.0), 3, out=L.empty(3, dtype=L.float64)),
    lambda L: L.histc(L.arange(5.0, device="meta"), 0),
])
def test_histc_errors_match_pytorch(call):
    differential(call, may_raise=True)
