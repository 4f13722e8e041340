"""Differential tests against PyTorch for the names PyTorch's op_db found missing:
Tensor.__rdiv__ / __rmatmul__ / lu, _chunk_cat, hash_tensor, segment_reduce
and its backward, the export-era batch norm ops (_native_batch_norm_legit,
_batch_norm_with_update, batch_norm_backward) with ATen's bfloat16 rounding,
svd_lowrank / pca_lowrank, mvlgamma_'s integer refusal, and grid_sampler's
float16/bfloat16 arithmetic (border, reflection, bicubic)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch

from .helpers import assert_same, to_numpy

SETTINGS = settings(max_examples=25, deadline=None)


def _pair(shape, dtype="float64", seed=0, low=-3.0, high=3.0):
    """The same values as a torch and a glasstorch tensor."""
    values = np.random.default_rng(seed).uniform(low, high, size=shape)
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    return t, glasstorch.tensor(to_numpy(t)).to(getattr(glasstorch, dtype))


def _both(fn_torch, fn_ours):
    """Both results, or both exceptions (type and message) compared."""
    try:
        expected = fn_torch()
    except Exception as e:      # noqa: BLE001 (the exception itself is compared)
        with pytest.raises(type(e)) as info:
            fn_ours()
        assert str(info.value) == str(e)
        return None, None
    return fn_ours(), expected


# -- Tensor.__rdiv__, __rmatmul__, lu ----------------------------------------------------

@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.floats(-4, 4), st.integers(0, 2**16))
def test_rdiv_and_rmatmul(n, m, scalar, seed):
    a, ga = _pair((n, m), seed=seed)
    b, gb = _pair((m, n), seed=seed + 1)
    assert_same(ga.__rdiv__(scalar), a.__rdiv__(scalar))
    assert_same(ga.__rmatmul__(gb), a.__rmatmul__(b))
    assert ga.__rmatmul__("x") is NotImplemented


@pytest.mark.parametrize("get_infos", [False, True])
def test_tensor_lu(get_infos):
    a, ga = _pair((2, 3, 3), seed=3)
    expected, ours = a.lu(get_infos=get_infos), ga.lu(get_infos=get_infos)
    assert len(ours) == len(expected)
    for o, t in zip(ours, expected):
        assert_same(o, t, atol=1e-12)
    singular, gsingular = _pair((3, 3), seed=4)
    singular[:, 0], gsingular[:, 0] = 0, 0
    _both(lambda: singular.lu(), lambda: gsingular.lu())


def test_mvlgamma_in_place_refuses_an_integer_tensor():
    t, g = torch.arange(3, 7, dtype=torch.int16), glasstorch.arange(3, 7, dtype=glasstorch.int16)
    _both(lambda: t.mvlgamma_(1), lambda: g.mvlgamma_(1))
    _both(lambda: torch.mvlgamma(t, 2, out=torch.empty(4, dtype=torch.int64)),
          lambda: glasstorch.mvlgamma(g, 2, out=glasstorch.empty(4, dtype=glasstorch.int64)))
    f, gf = _pair((4,), seed=0, low=2.0, high=5.0)
    assert_same(gf.mvlgamma_(3), f.mvlgamma_(3), atol=1e-12)


# -- _chunk_cat --------------------------------------------------------------------------

@SETTINGS
@given(st.integers(1, 3), st.lists(st.integers(1, 7), min_size=1, max_size=3),
       st.integers(1, 5), st.sampled_from(["float32", "int64", "bool", "bfloat16"]),
       st.booleans(), st.integers(0, 2**16))
def test_chunk_cat(lead, sizes, num_chunks, dtype, transpose, seed):
    tensors, ours = [], []
    for i, n in enumerate(sizes):
        t, g = _pair((lead, n, 2), dtype="float64", seed=seed + i)
        if transpose:
            t, g = t.transpose(1, 2), g.transpose(1, 2)
        tensors.append(t.to(getattr(torch, dtype)))
        ours.append(g.to(getattr(glasstorch, dtype)))
    dim = 2 if transpose else 1
    assert_same(glasstorch._chunk_cat(ours, dim, num_chunks),
                torch._chunk_cat(tensors, dim, num_chunks))
    out_t = torch.empty(0, dtype=torch.float64)
    out_g = glasstorch.empty(0, dtype=glasstorch.float64)
    assert_same(glasstorch._chunk_cat(ours, dim, num_chunks, out=out_g),
                torch._chunk_cat(tensors, dim, num_chunks, out=out_t))


@pytest.mark.parametrize("shapes, dim, num_chunks", [
    ([(2, 3), (4,)], -1, 3), ([(2, 3), (4,)], 1, 3), ([(2, 3, 4), (4, 3)], 1, 3),
    ([(2,), (3,)], 0, 0), ([(2,), (0,)], 0, 1), ([(2, 3), (2, 3)], 2, 2), ([], 0, 1)])
def test_chunk_cat_errors(shapes, dim, num_chunks):
    tensors = [torch.ones(s) for s in shapes]
    ours = [glasstorch.ones(s) for s in shapes]
    _both(lambda: torch._chunk_cat(tensors, dim, num_chunks),
          lambda: glasstorch._chunk_cat(ours, dim, num_chunks))


def test_chunk_cat_mixed_dtypes_and_no_derivative():
    _both(lambda: torch._chunk_cat([torch.ones(2), torch.ones(2, dtype=torch.int32)], 0, 2),
          lambda: glasstorch._chunk_cat([glasstorch.ones(2),
                                         glasstorch.ones(2, dtype=glasstorch.int32)], 0, 2))
    a, ga = _pair((3, 4))
    a.requires_grad_(), ga.requires_grad_()
    r, gr = torch._chunk_cat([a], 1, 3), glasstorch._chunk_cat([ga], 1, 3)
    assert type(gr.grad_fn).__name__ == type(r.grad_fn).__name__ == "NotImplemented"
    _both(lambda: r.sum().backward(), lambda: gr.sum().backward())


# -- hash_tensor -------------------------------------------------------------------------

@SETTINGS
@given(st.lists(st.integers(0, 4), min_size=0, max_size=3),
       st.sampled_from(["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32",
                        "int64", "bool"]),
       st.data())
def test_hash_tensor(shape, dtype, data):
    t, g = _pair(tuple(shape), seed=data.draw(st.integers(0, 2**16)), low=-100, high=100)
    t, g = t.to(getattr(torch, dtype)), g.to(getattr(glasstorch, dtype))
    ndim = len(shape)
    dims = data.draw(st.lists(st.integers(-ndim, ndim - 1), max_size=ndim, unique=True)) \
        if ndim else []
    keepdim = data.draw(st.booleans())
    ours, expected = _both(lambda: torch.hash_tensor(t, dims, keepdim=keepdim),
                           lambda: glasstorch.hash_tensor(g, dims, keepdim=keepdim))
    if expected is not None:
        assert_same(ours, expected)
        assert_same(g.hash_tensor(dims, keepdim=keepdim), t.hash_tensor(dims, keepdim=keepdim))


@pytest.mark.parametrize("call", [
    lambda lib: lib.hash_tensor(lib.ones(3), mode=1),
    lambda lib: lib.hash_tensor(lib.ones(3, dtype=lib.complex64)),
    lambda lib: lib.hash_tensor(lib.ones(3, dtype=lib.uint32)),
    lambda lib: lib.hash_tensor(lib.ones(3), out=lib.empty(0, dtype=lib.int64)),
    lambda lib: lib.hash_tensor(lib.ones(2, 3), [0, 0]),
    lambda lib: lib.hash_tensor(lib.ones(0, 3)),
    lambda lib: lib.hash_tensor(lib.ones(0, 3), 0),
    lambda lib: lib.hash_tensor(lib.tensor([-0.0, float("nan"), 1.5])),
])
def test_hash_tensor_edges(call):
    ours, expected = _both(lambda: call(torch), lambda: call(glasstorch))
    if expected is not None:
        assert_same(ours, expected)


# -- segment_reduce ----------------------------------------------------------------------

@SETTINGS
@given(st.sampled_from(["max", "min", "mean", "sum", "prod", "amax"]),
       st.lists(st.integers(0, 3), min_size=1, max_size=4), st.integers(1, 3),
       st.sampled_from([None, 0.5, 2]), st.booleans(), st.booleans(), st.integers(0, 2**16))
def test_segment_reduce_matches_torch(reduce, lengths, rows, initial, use_offsets, axis1, seed):
    n = sum(lengths)
    if axis1:      # a batch of rows, segmented along dim 1
        data, gdata = _pair((rows, n, 2), seed=seed)
        lengths_t = torch.tensor([lengths] * rows)
        axis = 1
    else:
        data, gdata = _pair((n, 2), seed=seed)
        lengths_t = torch.tensor(lengths)
        axis = 0
    bounds = {"lengths": lengths_t}
    if use_offsets:
        offsets = torch.cat([torch.zeros(lengths_t.shape[:-1] + (1,), dtype=torch.int64),
                             lengths_t.cumsum(-1)], -1)
        bounds = {"offsets": offsets}
    gbounds = {k: glasstorch.tensor(v.numpy()) for k, v in bounds.items()}
    data.requires_grad_(), gdata.requires_grad_()
    expected = torch.segment_reduce(data, reduce, axis=axis, initial=initial, **bounds)
    ours = glasstorch.segment_reduce(gdata, reduce, axis=axis, initial=initial, **gbounds)
    assert_same(ours, expected, atol=1e-12)
    assert type(ours.grad_fn).__name__ == type(expected.grad_fn).__name__
    grad = torch.tensor(np.random.default_rng(seed).uniform(-1, 1, tuple(expected.shape)))
    finite = torch.isfinite(expected)
    (g_expected,) = torch.autograd.grad(expected, data, grad * finite)
    (g_ours,) = glasstorch.autograd.grad(ours, gdata,
                                         glasstorch.tensor(to_numpy(grad * finite)))
    assert_same(g_ours, g_expected, atol=1e-12)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("reduce", ["sum", "mean", "prod"])
def test_segment_reduce_rounds_in_the_data_type(dtype, reduce):
    data, gdata = _pair((40, 3), dtype=dtype, seed=7, low=0.5, high=1.5)
    lengths = [9, 0, 31]
    expected = torch.segment_reduce(data, reduce, lengths=torch.tensor(lengths), initial=0.25)
    ours = glasstorch.segment_reduce(gdata, reduce, lengths=glasstorch.tensor(lengths),
                                     initial=0.25)
    assert_same(ours, expected, atol=0, rtol=0)


def test_segment_reduce_gradcheck():
    data = glasstorch.tensor(np.random.default_rng(2).uniform(0.5, 2, (7, 2)),
                             requires_grad=True)
    lengths = glasstorch.tensor([3, 4])
    for reduce in ("sum", "mean", "max", "prod"):
        assert glasstorch.autograd.gradcheck(
            lambda x: glasstorch.segment_reduce(x, reduce, lengths=lengths, initial=1.5), (data,))


@pytest.mark.parametrize("call", [
    lambda lib: lib.segment_reduce(lib.ones(6), "foo", lengths=lib.tensor([6])),
    lambda lib: lib.segment_reduce(lib.ones(6), "sum"),
    lambda lib: lib.segment_reduce(lib.ones(6), "sum", indices=lib.tensor([6])),
    lambda lib: lib.segment_reduce(lib.ones(6), "sum", lengths=lib.tensor([2, 3])),
    lambda lib: lib.segment_reduce(lib.ones(6), "sum", lengths=lib.tensor([7, -1])),
    lambda lib: lib.segment_reduce(lib.ones(6), "sum", lengths=lib.tensor([2.0, 4.0])),
    lambda lib: lib.segment_reduce(lib.ones(6), "sum", offsets=lib.tensor([0.0, 6.0])),
    lambda lib: lib.segment_reduce(lib.ones(6, dtype=lib.int32), "sum", lengths=lib.tensor([6])),
    lambda lib: lib.segment_reduce(lib.ones(6), "sum", lengths=lib.tensor(6)),
    lambda lib: lib.segment_reduce(lib.ones(2, 3), "sum", lengths=lib.tensor([1, 1]), axis=1),
    lambda lib: lib.segment_reduce(lib.ones(()), "sum", lengths=lib.tensor([[1]])),
])
def test_segment_reduce_errors(call):
    ours, expected = _both(lambda: call(torch), lambda: call(glasstorch))
    if expected is not None:
        assert_same(ours, expected)


def test_segment_reduce_backward_has_no_derivative():
    x = glasstorch.ones(4, requires_grad=True)
    y = glasstorch.segment_reduce(x, "sum", lengths=glasstorch.tensor([2, 2]))
    (g,) = glasstorch.autograd.grad(y.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError,
                       match="derivative for aten::_segment_reduce_backward is not implemented"):
        g.sum().backward()


# -- batch norm: _native_batch_norm_legit, _batch_norm_with_update, ATen's rounding -------

def _batch_norm_args(dtype, param_dtype, shape, seed):
    x, gx = _pair(shape, dtype=dtype, seed=seed)
    c = shape[1]
    params = [_pair((c,), dtype=param_dtype, seed=seed + i, low=0.5 if i == 3 else -1.0)
              for i in range(4)]
    return (x, gx), params


@SETTINGS
@given(st.sampled_from([(4, 3), (3, 2, 5), (2, 3, 2, 4), (5, 1)]),
       st.sampled_from([("float32", "float32"), ("bfloat16", "bfloat16"), ("float16", "float16"),
                        ("bfloat16", "float32"), ("float64", "float64")]),
       st.booleans(), st.floats(-1.0, 1.0), st.integers(0, 2**16))
def test_native_batch_norm_legit_values_and_running_stats(shape, dtypes, training, momentum,
                                                         seed):
    (x, gx), params = _batch_norm_args(*dtypes, shape, seed)
    (w, gw), (b, gb), (rm, grm), (rv, grv) = params
    expected = torch._native_batch_norm_legit(x, w, b, rm, rv, training, momentum, 0.5)
    ours = glasstorch._native_batch_norm_legit(gx, gw, gb, grm, grv, training, momentum, 0.5)
    # ATen's float16/bfloat16 rounding, bit for bit
    if dtypes[0] in ("bfloat16", "float16") and dtypes[1] == dtypes[0]:
        tol = dict(atol=0, rtol=0)
    else:
        tol = dict(atol=1e-5, rtol=1e-5)
    assert_same(ours, expected, **tol)
    # the updated running statistics momentum * batch + (1 - momentum) * running: in
    # float16 / bfloat16 ATen's rounding of the two terms is not reproduced to the
    # bit, so within one unit in the last place of the larger term (|term| < 10)
    stats_tol = dict(atol=1e-5, rtol=1e-5) if dtypes[1] in ("float32", "float64") else \
        dict(atol=0.07, rtol=0)
    assert_same(grm, rm, **stats_tol)
    assert_same(grv, rv, **stats_tol)
    if training:
        expected = torch.ops.aten._batch_norm_with_update(x, w, b, rm, rv, momentum, 0.5)
        ours = glasstorch.ops.aten._batch_norm_with_update(gx, gw, gb, grm, grv, momentum, 0.5)
        assert_same(ours[0], expected[0], **tol)
        assert_same(grv, rv, **stats_tol)


def test_batch_norm_legit_no_stats_out_and_no_training():
    (x, gx), ((w, gw), (b, gb), (rm, grm), (rv, grv)) = _batch_norm_args("float64", "float64",
                                                                       (4, 3, 2), 5)
    assert_same(glasstorch._native_batch_norm_legit(gx, gw, None, True, 0.1, 1e-5),
                torch._native_batch_norm_legit(x, w, None, True, 0.1, 1e-5))
    assert_same(glasstorch._native_batch_norm_legit_no_training(gx, gw, gb, grm, grv, 0.1, 1e-5),
                torch._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.1, 1e-5))
    outs_t = [torch.empty(0, dtype=torch.float64) for _ in range(3)]
    outs_g = [glasstorch.empty(0, dtype=glasstorch.float64) for _ in range(3)]
    expected = torch._native_batch_norm_legit(x, w, b, rm, rv, True, 0.1, 1e-5,
                                              out=tuple(outs_t))
    ours = glasstorch._native_batch_norm_legit(gx, gw, gb, grm, grv, True, 0.1, 1e-5,
                                               out=tuple(outs_g))
    assert_same(ours, expected)
    assert all(o is g for o, g in zip(ours, outs_g))
    expected = torch.ops.aten._batch_norm_no_update(x, w, b, rm, rv, 0.1, 1e-5)
    ours = glasstorch.ops.aten._batch_norm_no_update(gx, gw, gb, grm, grv, 0.1, 1e-5)
    assert_same(ours, expected)


@pytest.mark.parametrize("op", ["legit", "legit_eval", "no_stats", "with_update", "no_update"])
def test_batch_norm_gradients_and_nodes(op):
    (x, gx), ((w, gw), (b, gb), (rm, grm), (rv, grv)) = _batch_norm_args("float64", "float64",
                                                                       (4, 3, 5), 11)
    calls = {
        "legit": lambda lib, x, w, b, rm, rv: lib.ops.aten._native_batch_norm_legit(
            x, w, b, rm, rv, True, 0.1, 1e-5),
        "legit_eval": lambda lib, x, w, b, rm, rv: lib.ops.aten._native_batch_norm_legit(
            x, w, b, rm, rv, False, 0.1, 1e-5),
        "no_stats": lambda lib, x, w, b, rm, rv: lib.ops.aten._native_batch_norm_legit.no_stats(
            x, w, b, True, 0.1, 1e-5),
        "with_update": lambda lib, x, w, b, rm, rv: lib.ops.aten._batch_norm_with_update(
            x, w, b, rm, rv, 0.1, 1e-5),
        "no_update": lambda lib, x, w, b, rm, rv: lib.ops.aten._batch_norm_no_update(
            x, w, b, rm, rv, 0.1, 1e-5),
    }
    call = calls[op]
    leaves_t = [t.requires_grad_() for t in (x, w, b)]
    leaves_g = [t.requires_grad_() for t in (gx, gw, gb)]
    expected = call(torch, *leaves_t, rm, rv)
    ours = call(glasstorch, *leaves_g, grm, grv)
    assert [o.requires_grad for o in ours] == [t.requires_grad for t in expected]
    assert ours[0].grad_fn.name() == expected[0].grad_fn.name()
    grad = torch.tensor(np.random.default_rng(1).uniform(-1, 1, (4, 3, 5)))
    g_expected = torch.autograd.grad(expected[0], leaves_t, grad, create_graph=True)
    g_ours = glasstorch.autograd.grad(ours[0], leaves_g, glasstorch.tensor(grad.numpy()),
                                      create_graph=True)
    assert_same(list(g_ours), list(g_expected), atol=1e-10)
    assert g_ours[0].grad_fn.name() == g_expected[0].grad_fn.name()
    # double backward through batch_norm_backward / native_batch_norm_backward
    gg_expected = torch.autograd.grad(sum((g * g).sum() for g in g_expected), leaves_t,
                                      allow_unused=True)
    gg_ours = glasstorch.autograd.grad(sum((g * g).sum() for g in g_ours), leaves_g,
                                       allow_unused=True)
    assert [g is None for g in gg_ours] == [g is None for g in gg_expected]
    assert_same([g for g in gg_ours if g is not None],
                [g for g in gg_expected if g is not None], atol=1e-8)


def test_batch_norm_with_update_gradcheck():
    x = glasstorch.tensor(np.random.default_rng(0).uniform(-2, 2, (3, 2, 4)), requires_grad=True)
    w = glasstorch.tensor([0.5, 1.5], dtype=glasstorch.float64, requires_grad=True)

    def fn(x, w):
        return glasstorch.ops.aten._batch_norm_with_update(
            x, w, None, glasstorch.zeros(2, dtype=glasstorch.float64),
            glasstorch.ones(2, dtype=glasstorch.float64), 0.1, 1e-5)[0]
    assert glasstorch.autograd.gradcheck(fn, (x, w))
    assert glasstorch.autograd.gradgradcheck(fn, (x, w))


# -- svd_lowrank / pca_lowrank -----------------------------------------------------------

@pytest.mark.parametrize("fn", ["svd_lowrank", "pca_lowrank"])
@pytest.mark.parametrize("shape, q", [((6, 4), 3), ((2, 3, 7), 2)])
def test_lowrank_matches_torch_up_to_signs(fn, shape, q):
    a, ga = _pair(shape, seed=9)
    kwargs = {"q": q, "niter": 3}
    if fn == "svd_lowrank":
        m, gm = _pair(shape, seed=10, low=-0.1, high=0.1)
        kwargs_t, kwargs_g = dict(kwargs, M=m), dict(kwargs, M=gm)
    else:
        kwargs_t, kwargs_g = dict(kwargs, center=True), dict(kwargs, center=True)
    torch.manual_seed(5)
    glasstorch.manual_seed(5)
    U, S, V = getattr(torch, fn)(a, **kwargs_t)
    gU, gS, gV = getattr(glasstorch, fn)(ga, **kwargs_g)
    for ours, theirs in ((gU, U), (gS, S), (gV, V)):
        assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    # singular vectors are unique up to sign: compare U V^H (what the OpInfo compares) and S
    assert_same(gU @ gV.mH, U @ V.mH, atol=1e-10, strides=False)
    assert_same(gS, S, atol=1e-10)


def test_lowrank_errors_and_gradients():
    a = glasstorch.ones(3, 4)
    with pytest.raises(ValueError, match=r"q\(=5\) must be non-negative integer and not greater "
                                         r"than min\(m, n\)=3"):
        glasstorch.pca_lowrank(a, q=5)
    with pytest.raises(ValueError, match=r"niter\(=-1\) must be non-negative integer"):
        glasstorch.pca_lowrank(a, niter=-1)
    x = glasstorch.tensor(np.random.default_rng(1).uniform(-1, 1, (5, 2)) @
                          np.random.default_rng(2).uniform(-1, 1, (2, 4)), requires_grad=True)

    def invariant(x):
        glasstorch.manual_seed(0)
        U, S, V = glasstorch.svd_lowrank(x, q=2)
        return U @ V.mH, S
    assert glasstorch.autograd.gradcheck(invariant, (x,))


# -- grid_sampler in float16 / bfloat16 --------------------------------------------------

@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("mode, padding", [(0, 0), (0, 1), (0, 2), (1, 2), (2, 0), (2, 1),
                                           (2, 2)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_2d_rounds_as_aten(dtype, mode, padding, align_corners):
    x, gx = _pair((2, 3, 5, 7), dtype=dtype, seed=1)
    grid, ggrid = _pair((2, 4, 6, 2), dtype=dtype, seed=2, low=-1.3, high=1.3)
    assert_same(glasstorch.grid_sampler_2d(gx, ggrid, mode, padding, align_corners),
                torch.grid_sampler_2d(x, grid, mode, padding, align_corners), atol=0, rtol=0)


@pytest.mark.parametrize("padding", [0, 1, 2])
def test_grid_sampler_3d_bfloat16(padding):
    x, gx = _pair((1, 2, 3, 4, 5), dtype="bfloat16", seed=3)
    grid, ggrid = _pair((1, 2, 3, 4, 3), dtype="bfloat16", seed=4, low=-1.3, high=1.3)
    assert_same(glasstorch.grid_sampler_3d(gx, ggrid, 0, padding, False),
                torch.grid_sampler_3d(x, grid, 0, padding, False), atol=0, rtol=0)
