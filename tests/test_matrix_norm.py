"""linalg.svdvals, linalg.matrix_norm, linalg.norm and torch.norm's string orders
(glasstorch/_ops/kernels/linalg.py, glasstorch/functional.py) against real
PyTorch: values (to LAPACK's rounding), shapes, dtypes, gradients and errors."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from .differential import differential

ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


def values(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


@given(seed=st.integers(0, 2**31), batch=st.lists(st.integers(1, 3), max_size=2),
       rows=st.integers(1, 4), cols=st.integers(1, 4), ord=st.sampled_from(ORDS),
       keepdim=st.booleans(), swap=st.booleans(),
       dtype=st.sampled_from(["float32", "float64", "complex128"]))
def test_matrix_norm_matches_pytorch(seed, batch, rows, cols, ord, keepdim, swap, dtype):
    data = values(seed, (*batch, rows, cols))
    dim = (-1, -2) if swap else (-2, -1)

    def case(L):
        x = L.tensor(data, dtype=getattr(L, dtype))
        return L.linalg.matrix_norm(x, ord, dim=dim, keepdim=keepdim)
    differential(case)


@given(seed=st.integers(0, 2**31), shape=st.lists(st.integers(1, 4), min_size=2, max_size=3),
       dtype=st.sampled_from(["float32", "float64", "complex64"]))
def test_svdvals_matches_pytorch(seed, shape, dtype):
    data = values(seed, shape)
    differential(lambda L: L.linalg.svdvals(L.tensor(data, dtype=getattr(L, dtype))))


@pytest.mark.parametrize("call", [
    lambda L, x: L.linalg.norm(x),
    lambda L, x: L.linalg.norm(x, "nuc"),
    lambda L, x: L.linalg.norm(x, -2),
    lambda L, x: L.linalg.norm(x, 3, dim=1),
    lambda L, x: L.linalg.norm(x, math.inf, dim=(1, 0), keepdim=True),
    lambda L, x: L.linalg.norm(x, "fro", dim=(0, 1), dtype=L.float64),
    lambda L, x: x.norm(p="nuc"),
    lambda L, x: L.norm(x, "fro", dim=1),
    lambda L, x: L.linalg.matrix_norm(x, "nuc", dtype=L.float64),
    lambda L, x: L.linalg.matrix_norm(x, out=L.empty(0)),
])
def test_norm_routing_matches_pytorch(call):
    data = values(3, (3, 4))
    differential(lambda L: call(L, L.tensor(data, dtype=L.float32)))


@pytest.mark.parametrize("ord", ORDS)
def test_matrix_norm_gradient_matches_pytorch(ord):
    data = values(4, (2, 3, 4))

    def case(L):
        x = L.tensor(data, requires_grad=True)
        L.linalg.matrix_norm(x, ord, dim=(0, 2)).sum().backward()
        return x.grad
    differential(case)


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2).norm(p="bad"),
    lambda L: L.norm(L.ones(2, 2, 2), "fro", dim=(0, 1, 2)),
    lambda L: L.linalg.matrix_norm(L.ones(3)),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3).long()),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), dim=(0, -2)),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), dim=(0,)),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), "nuc", dtype=L.long),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3).half(), "nuc"),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), 3),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.complex64), dtype=L.float32),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3).double(), 1, dtype=L.float32),
    lambda L: L.linalg.svdvals(L.ones(3)),
    lambda L: L.linalg.svdvals(L.ones(3, 3).long()),
    lambda L: L.linalg.norm(L.ones(2, 2, 2), 2),
    lambda L: L.linalg.norm(L.ones(2, 2, 2), "fro"),
    lambda L: L.linalg.norm(L.ones(2, 2, 2), dim=(0, 1, 2)),
    lambda L: L.linalg.norm(L.ones(2, 2, 2), "nuc", dim=(0, 1, 2)),
])
def test_matrix_norm_errors_match_pytorch(call):
    differential(call, may_raise=True)
