"""float16 / bfloat16 results equal torch's CPU results bit for bit, where ATen's
order of roundings is machine-independent: scalar_t arithmetic rounding every
step (addr, cross, index_reduce, mse_loss, nll_loss's cascade), float32
computation rounded once at op boundaries (log_softmax's scalar_t buffers,
binary_cross_entropy_with_logits and bilinear op by op), and add/sub with alpha,
whose vector body fuses in float32 while the scalar tail rounds twice (that
split follows ATen's capability: marked cpu_paths)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import glasstorch as gt

from .helpers import to_numpy

DTYPES = ("float16", "bfloat16")
dtypes = st.sampled_from(DTYPES)
seeds = st.integers(0, 2 ** 32 - 1)


def pair(shape, dtype, seed, scale=5.0, low=None):
    """The same random values as a torch and a glasstorch tensor of ``dtype``."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape).astype(np.float32) * np.float32(scale)
    if low is not None:
        values = rng.uniform(low, 1.0, shape).astype(np.float32)
    theirs = torch.from_numpy(values).to(getattr(torch, dtype))
    return gt.tensor(theirs.float().numpy()).to(getattr(gt, dtype)), theirs


def assert_equal(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(to_numpy(ours), to_numpy(theirs))


shapes = st.lists(st.integers(1, 40), min_size=1, max_size=3).filter(
    lambda s: int(np.prod(s)) <= 3000)


@pytest.mark.cpu_paths
@given(dtypes, shapes, seeds, st.sampled_from(["add", "sub"]),
       st.sampled_from([-3.1, 0.7, 2.5, 1.3]), st.sampled_from(["same", "row", "number", "t"]))
def test_add_sub_alpha(dtype, shape, seed, name, alpha, other):
    a, ta = pair(shape, dtype, seed)
    if other == "same":
        b, tb = pair(shape, dtype, seed + 1)
    elif other == "row":
        b, tb = pair(shape[-1:], dtype, seed + 1)
    elif other == "t":
        b, tb = pair(shape[::-1], dtype, seed + 1)
        order = list(range(len(shape) - 1, -1, -1))
        b, tb = b.permute(*order), tb.permute(*order)
    else:
        b = tb = 1.7
    assert_equal(getattr(gt, name)(a, b, alpha=alpha), getattr(torch, name)(ta, tb, alpha=alpha))


@pytest.mark.cpu_paths
@given(dtypes, st.sampled_from([31, 32, 33, 64, 97, 200]), seeds)
def test_add_alpha_vector_and_tail(dtype, n, seed):
    """Contiguous runs: whole 32-element blocks fused, the tail rounded twice."""
    (a, ta), (b, tb) = pair((n,), dtype, seed), pair((n,), dtype, seed + 1)
    assert_equal(gt.add(a, b, alpha=-3.1), torch.add(ta, tb, alpha=-3.1))


@given(dtypes, st.integers(1, 30), st.integers(1, 30), seeds,
       st.sampled_from([(1, 1), (0.6, 0.2), (0, 1.5), (-2.5, 3)]))
def test_addr(dtype, n, m, seed, scalars):
    beta, alpha = scalars
    (s, ts), (v1, tv1), (v2, tv2) = (pair((n, m), dtype, seed), pair((n,), dtype, seed + 1),
                                    pair((m,), dtype, seed + 2))
    assert_equal(gt.addr(s, v1, v2, beta=beta, alpha=alpha),
                 torch.addr(ts, tv1, tv2, beta=beta, alpha=alpha))


@given(dtypes, st.integers(1, 20), seeds, st.booleans())
def test_cross(dtype, n, seed, first):
    shape, dim = ((3, n), 0) if first else ((n, 3), 1)
    (a, ta), (b, tb) = pair(shape, dtype, seed), pair(shape, dtype, seed + 1)
    assert_equal(gt.linalg.cross(a, b, dim=dim), torch.linalg.cross(ta, tb, dim=dim))
    assert_equal(gt.cross(a, b, dim=dim), torch.cross(ta, tb, dim=dim))


@given(dtypes, st.integers(1, 6), st.integers(1, 12), seeds,
       st.sampled_from(["mean", "prod", "amax", "amin"]), st.booleans())
def test_index_reduce(dtype, rows, picks, seed, reduce, include_self):
    (s, ts), (src, tsrc) = pair((rows, 5), dtype, seed), pair((picks, 5), dtype, seed + 1)
    index = np.random.default_rng(seed).integers(0, rows, picks)
    ours = s.index_reduce(0, gt.tensor(index), src, reduce, include_self=include_self)
    theirs = ts.index_reduce(0, torch.from_numpy(index), tsrc, reduce, include_self=include_self)
    assert_equal(ours, theirs)


@pytest.mark.cpu_paths      # SLEEF's exp/log under AVX2/AVX512, libm's under DEFAULT
@given(dtypes, shapes, seeds, st.booleans())
def test_log_softmax(dtype, shape, seed, last):
    x, tx = pair(shape, dtype, seed, scale=4.0)
    dim = -1 if last else 0
    assert_equal(gt.log_softmax(x, dim), torch.log_softmax(tx, dim))
    assert_equal(gt.nn.functional.log_softmax(x[..., :0], dim), torch.log_softmax(tx[..., :0], dim))


@given(dtypes, shapes, seeds, st.sampled_from(["none", "mean", "sum"]))
def test_mse_loss(dtype, shape, seed, reduction):
    (x, tx), (y, ty) = pair(shape, dtype, seed), pair(shape, dtype, seed + 1)
    assert_equal(gt.nn.functional.mse_loss(x, y, reduction=reduction),
                 torch.nn.functional.mse_loss(tx, ty, reduction=reduction))


@given(dtypes, shapes, seeds, st.sampled_from(["none", "mean", "sum"]), st.booleans(),
       st.booleans())
def test_binary_cross_entropy_with_logits(dtype, shape, seed, reduction, weighted, positive):
    (x, tx), (t, tt) = pair(shape, dtype, seed), pair(shape, dtype, seed + 1, low=0.0)
    kwargs, tkwargs = {"reduction": reduction}, {"reduction": reduction}
    if weighted:
        kwargs["weight"], tkwargs["weight"] = pair(shape, dtype, seed + 2)
    if positive:
        kwargs["pos_weight"], tkwargs["pos_weight"] = pair(shape[-1:], dtype, seed + 3, low=0.0)
    assert_equal(gt.nn.functional.binary_cross_entropy_with_logits(x, t, **kwargs),
                 torch.nn.functional.binary_cross_entropy_with_logits(tx, tt, **tkwargs))


@given(dtypes, st.integers(1, 300), st.integers(2, 6), seeds,
       st.sampled_from(["none", "mean", "sum"]), st.booleans(), st.booleans())
def test_nll_loss(dtype, batch, classes, seed, reduction, weighted, spatial):
    shape = (batch, classes, 2, 3) if spatial else (batch, classes)
    x, tx = pair(shape, dtype, seed)
    rng = np.random.default_rng(seed)
    target = rng.integers(-1, classes, (batch, 2, 3) if spatial else (batch,))
    kwargs, tkwargs = {"reduction": reduction, "ignore_index": -1}, {}
    if weighted:
        kwargs["weight"], tkwargs["weight"] = pair((classes,), dtype, seed + 1, low=0.0)
    tkwargs = {**kwargs, **tkwargs}
    assert_equal(gt.nn.functional.nll_loss(x, gt.tensor(target), **kwargs),
                 torch.nn.functional.nll_loss(tx, torch.from_numpy(target), **tkwargs))


@given(dtypes, st.integers(1, 8), st.integers(1, 6), st.integers(1, 6), st.integers(1, 6),
       seeds, st.booleans())
def test_bilinear(dtype, batch, in1, in2, out, seed, bias):
    (x1, tx1), (x2, tx2) = pair((batch, in1), dtype, seed, 1.0), pair((batch, in2), dtype,
                                                                      seed + 1, 1.0)
    w, tw = pair((out, in1, in2), dtype, seed + 2, 1.0)
    b, tb = pair((out,), dtype, seed + 3, 1.0) if bias else (None, None)
    assert_equal(gt.nn.functional.bilinear(x1, x2, w, b),
                 torch.nn.functional.bilinear(tx1, tx2, tw, tb))


@pytest.mark.cpu_paths      # SLEEF's exp/log under AVX2/AVX512, libm's under DEFAULT
@given(dtypes, shapes, seeds, st.integers(0, 2), st.booleans())
def test_logsumexp(dtype, shape, seed, dim, keepdim):
    """ATen's composition: amax, sub, exp, sum, log, add, each rounded to the dtype."""
    x, tx = pair(shape, dtype, seed)
    dim = dim % len(shape)
    assert_equal(gt.logsumexp(x, dim, keepdim), torch.logsumexp(tx, dim, keepdim))
    every = list(range(len(shape)))
    assert_equal(gt.logsumexp(x, every, keepdim), torch.logsumexp(tx, every, keepdim))


@pytest.mark.cpu_paths      # the fused multiply-add under AVX2/AVX512
@given(dtypes, st.integers(1, 4), st.integers(1, 70), seeds)
def test_native_layer_norm_constant_and_random_rows(dtype, rows, n, seed):
    """x * rstd + (-mean * rstd) in float32 with one rounding: a one-element
    (constant) row comes out as that product's rounding error, not 0.  Longer
    rows: ATen's Welford moments run in vector lanes whose width follows the
    CPU, so their last bits (and at most one step of the rounded result) may
    differ: the stated accuracy is one unit in the last place of the dtype."""
    x, tx = pair((rows, n), dtype, seed)
    ulp = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
    ours, theirs = (to_numpy(t[0]).astype(np.float64) for t in (
        gt.native_layer_norm(x, [n], None, None, 1e-5),
        torch.native_layer_norm(tx, [n], None, None, 1e-5)))
    np.testing.assert_allclose(ours, theirs, rtol=ulp, atol=ulp * 2.0 ** -14)
    c, tc = x[:, :1].contiguous(), tx[:, :1].contiguous()
    assert_equal(gt.native_layer_norm(c, [1], None, None, 1e-5)[0],
                 torch.native_layer_norm(tc, [1], None, None, 1e-5)[0])


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("shape", [(3,), (2, 0), ()])
def test_scan_to_bool(name, shape):
    """A Bool result of cumsum/cumprod is not implemented (unless nothing is scanned)."""
    x, tx = gt.full(shape, 1.5), torch.full(shape, 1.5)
    try:
        theirs = getattr(torch, name)(tx, -1 if shape else 0, dtype=torch.bool)
    except NotImplementedError as error:
        with pytest.raises(NotImplementedError, match=str(error).replace("\"", ".")):
            getattr(gt, name)(x, -1 if shape else 0, dtype=gt.bool)
        return
    assert_equal(getattr(gt, name)(x, -1 if shape else 0, dtype=gt.bool), theirs)


@pytest.mark.parametrize("name", ["amax", "amin"])
@pytest.mark.parametrize("dims", [(1, 1), (0, 0), (1, 3), (0, 1)])
def test_amax_error_order(name, dims):
    """An empty reduced dim is reported before a repeated one (ATen's order)."""
    with pytest.raises(Exception) as theirs:
        getattr(torch, name)(torch.zeros(1, 0), dims)
    with pytest.raises(type(theirs.value)) as ours:
        getattr(gt, name)(gt.zeros(1, 0), dims)
    assert str(ours.value) == str(theirs.value)


@given(dtypes, st.integers(1, 6), st.integers(1, 9), st.sampled_from([1.0, 2.0, 3.0]),
       st.sampled_from([0.5, 1.0, 4.0]), seeds)
def test_embedding_renorm(dtype, rows, n, norm_type, max_norm, seed):
    """ATen's loop: the row's norm in the dtype, read as a double; the double
    scale cast to the dtype before the multiply."""
    (w, tw) = pair((rows, n), dtype, seed, scale=3.0)
    index = np.random.default_rng(seed).integers(0, rows, size=4)
    gt.embedding_renorm_(w, gt.tensor(index), max_norm, norm_type)
    torch.embedding_renorm_(tw, torch.tensor(index), max_norm, norm_type)
    assert_equal(w, tw)
