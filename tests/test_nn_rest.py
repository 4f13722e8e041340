"""Issue 16's remaining torch.nn / torch.nn.functional names against real PyTorch:
grid_sample / affine_grid, ctc_loss, pdist, gumbel_softmax, rrelu (seeded draws),
local response norms, channel_shuffle, the margin losses, soft_margin_loss,
triplet_margin_with_distance_loss, AdaptiveLogSoftmaxWithLoss, conv_tbc,
SyncBatchNorm, linear_cross_entropy, the scaled / grouped products, and the
helpers and constants torch's functional module exports: values, float64
gradcheck, gradients, errors, hypothesis over shapes."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch

from .nn_differential import check_functional as _same
from .nn_differential import check_same_error as _same_error
from .nn_differential import gradcheck_functional as _gradcheck

LIBS = (glasstorch, torch)
RNG = np.random.default_rng(0)


# -- grid_sample / affine_grid -----------------------------------------------------------------

MODES, PADDINGS = ["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"]


@settings(max_examples=30, deadline=None)
@given(mode=st.sampled_from(MODES), padding=st.sampled_from(PADDINGS), align=st.booleans(),
       spatial=st.lists(st.integers(1, 5), min_size=2, max_size=2),
       out=st.lists(st.integers(1, 4), min_size=2, max_size=2), batch=st.integers(1, 2),
       transposed=st.booleans())
def test_grid_sample_2d_matches_torch(mode, padding, align, spatial, out, batch, transposed):
    x = RNG.standard_normal((batch, 2, *spatial)).astype(np.float32)
    grid = (RNG.random((batch, *out, 2)) * 2.6 - 1.3).astype(np.float32)

    def fn(lib, t, g):
        if transposed:          # a non-contiguous input
            t = t.transpose(2, 3).contiguous().transpose(2, 3)
        return lib.nn.functional.grid_sample(t, g, mode, padding, align)
    _same(fn, x, grid, atol=1e-4)


@settings(max_examples=20, deadline=None)
@given(mode=st.sampled_from(MODES[:2]), padding=st.sampled_from(PADDINGS), align=st.booleans(),
       spatial=st.lists(st.integers(1, 4), min_size=3, max_size=3),
       out=st.lists(st.integers(1, 3), min_size=3, max_size=3))
def test_grid_sample_3d_matches_torch(mode, padding, align, spatial, out):
    x = RNG.standard_normal((2, 2, *spatial))
    grid = RNG.random((2, *out, 3)) * 2.6 - 1.3
    _same(lambda lib, t, g: lib.nn.functional.grid_sample(t, g, mode, padding, align), x, grid)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_grid_sampler_gradcheck_and_double_backward(mode, padding):
    x = RNG.standard_normal((1, 2, 3, 4))
    grid = RNG.random((1, 2, 3, 2)) * 2.4 - 1.2
    _gradcheck(lambda lib, t, g: lib.grid_sampler(t, g, mode, padding, False), x, grid,
               gradgrad=True)
    if mode < 2:
        _gradcheck(lambda lib, t, g: lib.grid_sampler(t, g, mode, padding, True),
                   x[:, :, None], RNG.random((1, 2, 1, 2, 3)) * 2.4 - 1.2, gradgrad=True)


def test_grid_sampler_double_backward_matches_torch():
    x, grid = RNG.standard_normal((1, 2, 3, 4)), RNG.random((1, 3, 2, 2)) * 2 - 1
    v1, v2 = RNG.standard_normal((1, 2, 3, 4)), RNG.standard_normal((1, 3, 2, 2))
    results = []
    for lib in LIBS:
        xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(grid, requires_grad=True)
        out = lib.grid_sampler(xt, gt, 0, 2, False)
        gi, gg = lib.autograd.grad(out.sum(), (xt, gt), create_graph=True)
        assert type(gi.grad_fn).__name__ == "GridSampler2DBackwardBackward0"
        second = lib.autograd.grad((gi * lib.tensor(v1)).sum() + (gg * lib.tensor(v2)).sum(),
                                   (xt, gt))
        results.append([s.numpy() for s in second])
    for g, t in zip(*results):
        np.testing.assert_allclose(g, t, atol=1e-10)


def test_grid_sampler_cpu_fallback_and_half_precision():
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    grid = (RNG.random((1, 2, 3, 2)) * 2 - 1).astype(np.float32)
    _same(lambda lib, t, g: lib._grid_sampler_2d_cpu_fallback(t, g, 0, 1, False), x, grid,
          atol=1e-5)
    for dtype in ("bfloat16", "float16"):
        _same(lambda lib, t, g: lib.grid_sampler(t.to(getattr(lib, dtype)),
                                                 g.to(getattr(lib, dtype)), 0, 0, False).float(),
              x, grid, atol=5e-2, grad=False)


@pytest.mark.parametrize("call", [
    lambda lib: lib.grid_sampler(lib.ones(2, 3, 4, 5), lib.zeros(1, 6, 7, 2), 0, 0, False),
    lambda lib: lib.grid_sampler(lib.ones(2, 3, 4, 5), lib.zeros(2, 6, 7, 3), 0, 0, False),
    lambda lib: lib.grid_sampler(lib.ones(2, 3, 0, 5), lib.zeros(2, 6, 7, 2), 0, 0, False),
    lambda lib: lib.grid_sampler(lib.ones(2, 3, 4, 5).int(), lib.zeros(2, 6, 7, 2), 0, 0,
                                 False),
    lambda lib: lib.grid_sampler(lib.ones(2, 3, 4, 5), lib.zeros(2, 6, 7, 2).double(), 0, 0,
                                 False),
    lambda lib: lib.grid_sampler(lib.ones(2, 3, 1, 4, 5), lib.zeros(2, 1, 6, 7, 3), 2, 0,
                                 False),
    lambda lib: lib.grid_sampler_3d(lib.ones(2, 3, 4, 5), lib.zeros(2, 6, 7, 2), 0, 0, False),
    lambda lib: lib._grid_sampler_2d_cpu_fallback(lib.ones(1, 1, 2, 2).double(),
                                                  lib.zeros(1, 1, 1, 2).double(), 0, 0, False),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2),
                                              mode="area"),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2),
                                              padding_mode="wrap"),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(2, 2, 3).int(), [2, 1, 3, 3], False),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(2, 3, 3), [2, 1, 3, 3], False),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(2, 3, 3), [2, 1, 3], False),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(2, 2, 3), [2, 1, 0, 3], False),
    lambda lib: lib.affine_grid_generator(lib.ones(2, 2, 3), [2, 3, 4], False),
])
def test_grid_sample_errors_match_torch(call):
    _same_error(call)


@settings(max_examples=20, deadline=None)
@given(dims=st.sampled_from([2, 3]), align=st.booleans(),
       spatial=st.lists(st.integers(1, 4), min_size=3, max_size=3))
def test_affine_grid_matches_torch(dims, align, spatial):
    theta = RNG.standard_normal((2, dims, dims + 1))
    size = [2, 3] + spatial[:dims]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(lambda lib, t: lib.nn.functional.affine_grid(t, size, align), theta)


def test_affine_grid_gradcheck_and_warnings():
    theta = RNG.standard_normal((2, 2, 3))
    _gradcheck(lambda lib, t: lib.nn.functional.affine_grid(t, [2, 1, 3, 4], False), theta)
    for lib in LIBS:
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            lib.nn.functional.affine_grid(lib.tensor(theta), [2, 1, 3, 4])
        with pytest.warns(UserWarning, match="unit-size grids"):
            lib.nn.functional.affine_grid(lib.tensor(theta), [2, 1, 1, 4], True)
    assert glasstorch.nn.functional.GRID_SAMPLE_INTERPOLATION_MODES == \
        torch.nn.functional.GRID_SAMPLE_INTERPOLATION_MODES
    assert glasstorch.nn.functional.GRID_SAMPLE_PADDING_MODES == \
        torch.nn.functional.GRID_SAMPLE_PADDING_MODES


# -- ctc_loss -------------------------------------------------------------------------------

def _ctc_case(rng, steps, batch, classes, longest):
    log_probs = rng.standard_normal((steps, batch, classes))
    log_probs = log_probs - np.log(np.exp(log_probs).sum(-1, keepdims=True))
    target_lengths = rng.integers(0, longest + 1, batch)
    input_lengths = rng.integers(0, steps + 1, batch)
    targets = rng.integers(1, classes, (batch, max(longest, 1)))
    return log_probs, targets, input_lengths, target_lengths


@settings(max_examples=25, deadline=None)
@given(steps=st.integers(1, 7), batch=st.integers(1, 3), classes=st.integers(2, 5),
       longest=st.integers(0, 4), reduction=st.sampled_from(["none", "mean", "sum"]),
       zero_infinity=st.booleans(), as_tensors=st.booleans(), flat=st.booleans(),
       seed=st.integers(0, 1000))
def test_ctc_loss_matches_torch(steps, batch, classes, longest, reduction, zero_infinity,
                                as_tensors, flat, seed):
    lp, targets, il, tl = _ctc_case(np.random.default_rng(seed), steps, batch, classes, longest)

    def fn(lib, log_probs, tg, inp, tgt):
        if flat:
            tg = lib.cat([tg[i, :int(n)] for i, n in enumerate(tl)])
        lengths = (inp, tgt) if as_tensors else (inp.tolist(), tgt.tolist())
        out = lib.nn.functional.ctc_loss(log_probs, tg, *lengths, reduction=reduction,
                                         zero_infinity=zero_infinity)
        return out
    with np.errstate(invalid="ignore"):
        _same(fn, lp, targets, il, tl, atol=1e-8)


def test_ctc_loss_unbatched_module_float32_and_gradcheck():
    lp, targets, il, tl = _ctc_case(np.random.default_rng(3), 6, 2, 4, 3)
    lp32 = lp.astype(np.float32)
    _same(lambda lib, x, t: lib.nn.CTCLoss(blank=0, reduction="sum")(x, t, [6, 5], [3, 2]),
          lp32, targets, atol=1e-4)
    _same(lambda lib, x, t: lib.nn.functional.ctc_loss(x[:, 0], t[0], [6], [3]),
          lp32, targets, atol=1e-4)
    _same(lambda lib, x, t: lib._ctc_loss(x, t, lib.tensor([6, 6]), lib.tensor([3, 3])),
          lp, targets)
    _gradcheck(lambda lib, x: lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor(targets),
                                                         [6, 4], [3, 1]), lp)


@pytest.mark.parametrize("call", [
    lambda lib, x, t: lib.ctc_loss(x, t, [6, 6], [3, 2], blank=4),
    lambda lib, x, t: lib.ctc_loss(x, t, [6], [3, 2]),
    lambda lib, x, t: lib.ctc_loss(x, t, [6, 6], [3]),
    lambda lib, x, t: lib.ctc_loss(x, t, [7, 6], [3, 2]),
    lambda lib, x, t: lib.ctc_loss(x, t, [6, 6], [4, 2]),
    lambda lib, x, t: lib.ctc_loss(x, t.flatten(), [6, 6], [4, 3]),
    lambda lib, x, t: lib.ctc_loss(x, t[:1], [6, 6], [3, 2]),
    lambda lib, x, t: lib.ctc_loss(x, t[None], [6, 6], [3, 2]),
    lambda lib, x, t: lib.ctc_loss(x, t, [-1, 6], [3, 2]),
    lambda lib, x, t: lib.ctc_loss(x, t, [6, 6], [-1, 2]),
    lambda lib, x, t: lib.ctc_loss(x[None, None], t, [6, 6], [3, 2]),
    lambda lib, x, t: lib.ctc_loss(x, t, lib.tensor([6., 6.]), lib.tensor([3, 2])),
    lambda lib, x, t: lib.ctc_loss(x.half(), t, [6, 6], [3, 2]),
])
def test_ctc_loss_errors_match_torch(call):
    lp, targets, _, _ = _ctc_case(np.random.default_rng(0), 6, 2, 4, 3)
    _same_error(lambda lib: call(lib, lib.tensor(lp, dtype=lib.float32), lib.tensor(targets)))


# -- pdist ----------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5), m=st.integers(0, 4),
       p=st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]))
def test_pdist_matches_torch(n, m, p):
    x = RNG.standard_normal((n, m))
    if n > 2:
        x[2] = x[0]                 # a zero distance
    _same(lambda lib, t: lib.nn.functional.pdist(t, p), x, atol=1e-8)
    _same(lambda lib, t: lib.pdist(t.t().contiguous().t(), p), x, atol=1e-8)
    # (torch's backward crashes on an empty set of rows: the forward only)
    _same(lambda lib, t: lib.pdist(t, p), x[:0], grad=False)


def test_pdist_gradcheck_and_errors():
    x = RNG.standard_normal((4, 3))
    for p in (1.0, 1.5, 2.0, 3.0):
        _gradcheck(lambda lib, t: lib.pdist(t, p), x)
    for call in (lambda lib: lib.pdist(lib.ones(3)), lambda lib: lib.pdist(lib.ones(2, 3).int()),
                 lambda lib: lib.pdist(lib.ones(2, 3), -1.0),
                 lambda lib: lib.pdist(lib.ones(2, 3).half())):
        _same_error(call)


# -- gumbel_softmax and rrelu: seeded draws equal torch's ----------------------------------------

@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_seeded_matches_torch(hard):
    logits = RNG.standard_normal((3, 5))

    def fn(lib, t):
        lib.manual_seed(7)
        return lib.nn.functional.gumbel_softmax(t, tau=0.7, hard=hard, dim=-1)
    _same(fn, logits, atol=1e-6)
    for lib in LIBS:
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
            lib.nn.functional.gumbel_softmax(lib.tensor(logits), eps=1e-3)


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3),
       dtype=st.sampled_from(["float32", "float64"]), training=st.booleans(),
       bounds=st.sampled_from([(0.125, 1 / 3), (0.2, 0.2), (0.0, 1.0)]))
def test_rrelu_seeded_matches_torch(shape, dtype, training, bounds):
    x = RNG.standard_normal(shape).astype(dtype)

    def fn(lib, t):
        lib.manual_seed(3)
        return lib.nn.functional.rrelu(t, *bounds, training=training)
    _same(fn, x, atol=1e-6)


def test_rrelu_inplace_module_noise_and_gradcheck():
    x = RNG.standard_normal((4, 5))

    def inplace(lib, t):
        lib.manual_seed(5)
        return lib.nn.functional.rrelu(t * 1, training=True, inplace=True)
    _same(inplace, x)

    def module(lib, t):
        lib.manual_seed(5)
        m = lib.nn.RReLU(0.1, 0.3)
        return m(t), m.eval()(t)
    _same(module, x)

    def noise(lib, t):
        lib.manual_seed(2)
        n = lib.zeros(4, 5, dtype=lib.float64)
        out = lib.ops.aten.rrelu_with_noise(t, n, 0.1, 0.4, True)
        return out, n
    _same(noise, x)
    _same(lambda lib, t: lib.nn.functional.rrelu(t.bfloat16(), training=False).float(), x,
          grad=False)
    for training in (False, True):
        def fn(lib, t):
            lib.manual_seed(1)
            return lib.rrelu(t, 0.1, 0.3, training)
        _gradcheck(fn, x)
    for call in (lambda lib: lib.rrelu(lib.ones(2), 0.5, 0.1),
                 lambda lib: lib.rrelu(lib.ones(2).int(), training=True),
                 lambda lib: lib.rrelu(lib.ones(2).half(), training=True),
                 lambda lib: lib.ops.aten.rrelu_with_noise(lib.ones(4, 3), lib.zeros(3),
                                                          training=True)):
        _same_error(call)


# -- local response norms, channel shuffle --------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(shape=st.sampled_from([(2, 5, 4), (1, 6, 3, 3), (2, 4, 2, 2, 3)]),
       size=st.integers(1, 5))
def test_local_response_norm_matches_torch(shape, size):
    x = RNG.standard_normal(shape)
    _same(lambda lib, t: lib.nn.LocalResponseNorm(size, 1e-2, 0.75, 2.0)(t), x)


@pytest.mark.parametrize("size", [2, 3, 4, 5])
def test_cross_map_lrn2d_matches_torch(size):
    x = RNG.standard_normal((2, 6, 3, 2))
    _same(lambda lib, t: lib.nn.CrossMapLRN2d(size, 1e-2, 0.75, 1.5)(t), x)


def test_local_response_norm_errors():
    _same_error(lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2))
    _same_error(lambda lib: lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4)))


@settings(max_examples=15, deadline=None)
@given(groups=st.integers(1, 3), per=st.integers(1, 3), rest=st.lists(st.integers(1, 3),
                                                                      min_size=1, max_size=3))
def test_channel_shuffle_matches_torch(groups, per, rest):
    x = RNG.standard_normal((2, groups * per, *rest))
    _same(lambda lib, t: lib.nn.ChannelShuffle(groups)(t), x)
    _same(lambda lib, t: lib.nn.functional.native_channel_shuffle(t.detach(), groups), x)


def test_channel_shuffle_layout_errors_and_native_has_no_gradient():
    x = torch.randn(2, 6, 3, 4).to(memory_format=torch.channels_last)
    ours = glasstorch.tensor(x.numpy()).to(memory_format=glasstorch.channels_last)
    assert glasstorch.channel_shuffle(ours, 3).stride() == torch.channel_shuffle(x, 3).stride()
    np.testing.assert_array_equal(glasstorch.channel_shuffle(ours, 3).numpy(),
                                  torch.channel_shuffle(x, 3).numpy())
    _gradcheck(lambda lib, t: lib.channel_shuffle(t, 2), RNG.standard_normal((1, 4, 3)))
    for call in (lambda lib: lib.channel_shuffle(lib.ones(2, 6, 3), 4),
                 lambda lib: lib.channel_shuffle(lib.ones(2, 6, 3), 0),
                 lambda lib: lib.channel_shuffle(lib.ones(6, 3), 2),
                 lambda lib: lib.native_channel_shuffle(lib.ones(2, 6, 3, requires_grad=True),
                                                        2).sum().backward()):
        _same_error(call)


# -- margin losses ----------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(batch=st.integers(0, 4), classes=st.integers(1, 5), p=st.sampled_from([1, 2]),
       margin=st.sampled_from([0.5, 1.0, 2.0]), weighted=st.booleans(),
       reduction=st.sampled_from(["none", "mean", "sum"]), unbatched=st.booleans())
def test_multi_margin_loss_matches_torch(batch, classes, p, margin, weighted, reduction,
                                         unbatched):
    x = RNG.standard_normal((batch, classes))
    y = RNG.integers(0, classes, batch)
    w = RNG.random(classes) + 0.5
    if unbatched:
        x, y = RNG.standard_normal(classes), RNG.integers(0, classes, ())

    def fn(lib, t, target, weight):
        return lib.nn.functional.multi_margin_loss(t, target, p, margin,
                                                   weight.detach() if weighted else None,
                                                   reduction=reduction)
    _same(fn, x, y, w, atol=1e-8)


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 4), classes=st.integers(1, 5),
       reduction=st.sampled_from(["none", "mean", "sum"]), unbatched=st.booleans(),
       seed=st.integers(0, 100))
def test_multilabel_margin_loss_matches_torch(batch, classes, reduction, unbatched, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, classes))
    y = rng.integers(-1, classes, (batch, classes))
    if unbatched:
        x, y = x[0], y[0]
    _same(lambda lib, t, target: lib.nn.MultiLabelMarginLoss(reduction=reduction)(t, target),
          x, y, atol=1e-8)


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 4), max_size=3),
       reduction=st.sampled_from(["none", "mean", "sum"]))
def test_soft_margin_loss_matches_torch(shape, reduction):
    x = RNG.standard_normal(shape)
    y = np.sign(RNG.standard_normal(shape))
    _same(lambda lib, t, target: lib.nn.SoftMarginLoss(reduction=reduction)(t, target.detach()),
          x, y, atol=1e-8)


def test_margin_losses_gradcheck_double_backward_and_errors():
    x, y = RNG.standard_normal((3, 4)), np.array([0, 3, 1])
    ym = np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 2, 2]])
    for reduction in ("none", "mean", "sum"):
        _gradcheck(lambda lib, t: lib.nn.functional.multi_margin_loss(
            t, lib.tensor(y), 2, 0.7, lib.tensor([0.5, 1., 2., 1.5], dtype=lib.float64),
            reduction=reduction), x)
        _gradcheck(lambda lib, t: lib.nn.functional.multilabel_margin_loss(
            t, lib.tensor(ym), reduction=reduction), x)
        _gradcheck(lambda lib, t: lib.nn.functional.soft_margin_loss(
            t, lib.tensor(np.sign(x)), reduction=reduction), x, gradgrad=True)
    for call in (
            lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 4, 1])),
            lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 1])),
            lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 1, 1]),
                                                            p=3),
            lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 1, 1]),
                                                            weight=lib.ones(3)),
            lambda lib: lib.ops.aten.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 1, 1]), 3),
            lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(3, 0), lib.tensor([0, 1, 1])),
            lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(3, 4).int(),
                                                            lib.tensor([0, 1, 1])),
            lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(3, 4), lib.ones(3)),
            lambda lib: lib.nn.functional.multilabel_margin_loss(lib.ones(3, 4),
                                                                 lib.tensor(ym[:2])),
            lambda lib: lib.nn.functional.multilabel_margin_loss(lib.ones(3, 4),
                                                                 lib.tensor(ym + 1)),
            lambda lib: lib.nn.functional.multilabel_margin_loss(lib.ones(3, 4).half(),
                                                                 lib.tensor(ym)),
            lambda lib: lib.nn.MultiMarginLoss(p=3)):
        _same_error(call)
    for lib in LIBS:                # their backward ops have no derivative
        t = lib.tensor(x, requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.multi_margin_loss(t, lib.tensor(y)), t,
                               create_graph=True)
        with pytest.raises(RuntimeError, match="derivative for aten::multi_margin_loss_backward"):
            g.sum().backward()


def test_triplet_margin_with_distance_loss_matches_torch():
    a, p, n = (RNG.standard_normal((4, 3)) for _ in range(3))
    for swap in (False, True):
        for reduction in ("none", "mean", "sum"):
            _same(lambda lib, x, y, z: lib.nn.TripletMarginWithDistanceLoss(
                margin=0.8, swap=swap, reduction=reduction)(x, y, z), a, p, n)
            _same(lambda lib, x, y, z: lib.nn.functional.triplet_margin_with_distance_loss(
                x, y, z, distance_function=lambda u, v: (u - v).abs().sum(-1), swap=swap,
                reduction=reduction), a, p, n)
    for call in (lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
                     lib.ones(2, 3), lib.ones(2, 3), lib.ones(3), margin=1.0),
                 lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
                     lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=0.0),
                 lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
                     lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), reduction="max"),
                 lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1)):
        _same_error(call)


# -- AdaptiveLogSoftmaxWithLoss, conv_tbc, SyncBatchNorm, linear_cross_entropy ------------------

def test_adaptive_log_softmax_matches_torch():
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    y = np.array([0, 3, 5, 9, 11, 2])
    results = []
    for lib in LIBS:
        lib.manual_seed(0)
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 8], div_value=2.0, head_bias=True)
        state = {k: lib.tensor(v) for k, v in results[0][0].items()} if results else None
        if state is not None:
            m.load_state_dict(state)
        t = lib.tensor(x, requires_grad=True)
        out, loss = m(t, lib.tensor(y))
        loss.backward()
        results.append(({k: v.detach().numpy() for k, v in m.state_dict().items()},
                         out.detach().numpy(), loss.item(), t.grad.numpy(),
                         m.log_prob(t).detach().numpy(), m.predict(t).numpy(),
                         m(t[0], lib.tensor(y[0]))[0].detach().numpy()))
    for g, t in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(g, t, atol=1e-5)
    for call in (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 3]),
                 lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, []),
                 lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3])(
                     lib.ones(2, 8), lib.tensor([1, 12]))):
        _same_error(call)


@settings(max_examples=15, deadline=None)
@given(time=st.integers(1, 6), kw=st.integers(1, 3), pad=st.integers(0, 2))
def test_conv_tbc_matches_torch(time, kw, pad):
    x, w, b = (RNG.standard_normal(s) for s in ((time, 2, 3), (kw, 3, 4), (4,)))
    if time - kw + 1 + 2 * pad < 0:
        return _same_error(lambda lib: lib.conv_tbc(lib.tensor(x), lib.tensor(w), lib.tensor(b),
                                                    pad))
    _same(lambda lib, *ts: lib.nn.functional.conv_tbc(*ts, pad), x, w, b, atol=1e-8)


def test_conv_tbc_gradcheck_and_errors():
    x, w, b = (RNG.standard_normal(s) for s in ((5, 2, 3), (3, 3, 4), (4,)))
    _gradcheck(lambda lib, *ts: lib.conv_tbc(*ts, 1), x, w, b, gradgrad=True)
    for call in (lambda lib: lib.conv_tbc(lib.ones(5, 3), lib.ones(3, 3, 4), lib.ones(4)),
                 lambda lib: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(3, 4), lib.ones(4)),
                 lambda lib: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(3, 3, 4), lib.ones(1, 4)),
                 lambda lib: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(3, 2, 4), lib.ones(4)),
                 lambda lib: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(3, 3, 4), lib.ones(3))):
        _same_error(call)


def test_sync_batch_norm_on_cpu_is_batch_norm():
    x = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    for training in (True, False):
        def fn(lib, t):
            m = lib.nn.SyncBatchNorm(3, momentum=None).train(training)
            out = m(t)
            return out, m.running_mean, m.running_var
        _same(fn, x)

    def convert(lib, t):
        net = lib.nn.Sequential(lib.nn.Conv1d(3, 3, 1), lib.nn.BatchNorm1d(3))
        net = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        assert type(net[1]).__name__ == "SyncBatchNorm"
        return net[1](t)
    _same(convert, x)
    _same_error(lambda lib: lib.nn.SyncBatchNorm(3)(lib.ones(3)))
    _same_error(lambda lib: lib.nn.SyncBatchNorm(0)(lib.ones(2, 0, 3)))



@pytest.mark.parametrize("target", [[1, 1, 1, 1], [1, 3, 1, 0], 1, 4])
@pytest.mark.parametrize("class_weight", [False, True])
def test_linear_cross_entropy_chunked_mean_scales_as_torch(target, class_weight):
    """The chunked path's mean scales each row's gradient by its kept weight over
    the total: with every target ignored, the loss and every gradient are nan
    (0/0), where the reference path's gradient is 0."""
    rng = np.random.default_rng(5)
    x, w, cw = rng.standard_normal((4, 5)), rng.standard_normal((6, 5)), rng.random(6)
    x = x if isinstance(target, list) else x[0]
    results = []
    for lib in (glasstorch, torch):
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.linear_cross_entropy(
            t, lib.tensor(w), lib.tensor(target), weight=lib.tensor(cw) if class_weight else None,
            options=lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2), ignore_index=1)
        out.backward()
        results.append((out.detach().numpy(), t.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("out_features,bias,target_kind", [
    ((), False, "index"), ((), True, "probs"), ((2,), True, "index"), ((), False, "unbatched")])
def test_linear_cross_entropy_matches_torch(out_features, bias, target_kind):
    x = RNG.standard_normal((4, 5))
    w = RNG.standard_normal((6, *out_features, 5))
    b = RNG.standard_normal((6, *out_features))
    if target_kind == "probs":
        y = RNG.random((4, 6, *out_features))
    else:
        y = RNG.integers(0, 6, (4, *out_features))
    if target_kind == "unbatched":
        x, y = x[0], y[0]
    for reduction in ("none", "mean", "sum"):
        _same(lambda lib, t, weight, bb, target: lib.nn.functional.linear_cross_entropy(
            t, weight, target, linear_bias=bb if bias else None, reduction=reduction,
            label_smoothing=0.1), x, w, b, y, atol=1e-8)
    _same(lambda lib, t, target: lib.nn.functional.linear_cross_entropy(
        t, lib.tensor(w), target, options=lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2),
        ignore_index=None if target_kind == "probs" else 1), x, y, atol=1e-8,
        check_fn=False)     # (torch's chunked path is a custom op of its own)


def test_linear_cross_entropy_module_options_and_errors():
    x, y = RNG.standard_normal((4, 5)).astype(np.float32), RNG.integers(0, 6, (4, 2))

    def fn(lib, t, target):
        lib.manual_seed(0)
        return lib.nn.LinearCrossEntropyLoss(5, 6, out_features=(2,), bias=True)(t, target)
    _same(fn, x, y, atol=1e-5)
    for call in (lambda lib: lib.nn.LinearCrossEntropyOptions(acc_policy="fast"),
                 lambda lib: lib.nn.LinearCrossEntropyOptions(chunking_method="rows"),
                 lambda lib: lib.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
                 lambda lib: lib.nn.LinearCrossEntropyLoss(5, 6, label_smoothing=2.0),
                 lambda lib: lib.nn.functional.linear_cross_entropy(
                     lib.ones(2, 5), lib.ones(6, 4), lib.zeros(2, dtype=lib.int64)),
                 lambda lib: lib.nn.functional.linear_cross_entropy(
                     lib.ones(5), lib.ones(6, 2, 5), lib.zeros((), dtype=lib.int64)),
                 lambda lib: lib.nn.functional.linear_cross_entropy(
                     lib.ones(2, 5), lib.ones(6, 5), lib.ones(2, 6), ignore_index=0)):
        _same_error(call)


# -- scaled / grouped products, exported helpers --------------------------------------------

def test_grouped_mm_and_scaled_mm_on_cpu():
    a3, b3 = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 8))
    a2 = RNG.standard_normal((6, 4))
    # (torch's _grouped_mm is an op with a node of its own; here it is composed of matmuls)
    _same(lambda lib, x, y: lib.nn.functional.grouped_mm(x.float(), y.float()), a3, b3,
          atol=1e-5, check_fn=False)
    _same(lambda lib, x, y: lib.nn.functional.grouped_mm(
        x.float(), y.float(), offs=lib.tensor([2, 6], dtype=lib.int32)), a2, b3, atol=1e-5,
        check_fn=False)
    for call in (lambda lib: lib.nn.functional.grouped_mm(lib.ones(6, 4), lib.ones(2, 4, 5)),
                 lambda lib: lib.nn.functional.grouped_mm(lib.ones(6, 4), lib.ones(2, 4, 5),
                                                          offs=lib.tensor([2, 6])),
                 lambda lib: lib.nn.functional.grouped_mm(lib.ones(2, 3, 4), lib.ones(2, 4, 5)),
                 lambda lib: lib.nn.functional.grouped_mm(lib.ones(2, 3, 4).double(),
                                                          lib.ones(2, 4, 5).double()),
                 lambda lib: lib.nn.functional.scaled_mm(
                     lib.ones(16, 16), lib.ones(16, 16), lib.ones(1),
                     lib.nn.functional.ScalingType.TensorWise, lib.ones(1),
                     lib.nn.functional.ScalingType.TensorWise)):
        _same_error(call)
    with pytest.raises(NotImplementedError, match="Could not run 'aten::_scaled_grouped_mm_v2' "
                                                  "with arguments from the 'CPU' backend"):
        glasstorch.nn.functional.scaled_grouped_mm(
            glasstorch.ones(2, 3, 4), glasstorch.ones(2, 4, 5), glasstorch.ones(1), 0,
            glasstorch.ones(1), 0)
    for name in ("ScalingType", "SwizzleType"):
        ours, theirs = getattr(glasstorch.nn.functional, name), getattr(torch.nn.functional, name)
        assert {k: int(v) for k, v in ours.__members__.items()} == \
            {k: int(v) for k, v in theirs.__members__.items()}


def test_functional_module_helpers_match_torch():
    G, T = glasstorch.nn.functional, torch.nn.functional
    for name in ("Optional", "Callable", "DType", "TYPE_CHECKING"):
        assert getattr(G, name) is getattr(T, name)
    for name in ("BroadcastingList1", "BroadcastingList2", "BroadcastingList3"):
        assert getattr(G, name)[int] is getattr(T, name)[int]
    for name in ("reproducibility_notes", "sparse_support_notes", "tf32_notes"):
        assert getattr(G, name).keys() == getattr(T, name).keys()
    assert G.handle_torch_function is glasstorch.overrides.handle_torch_function
    assert not G.has_torch_function_unary(glasstorch.ones(1))
    assert not G.has_torch_function_variadic(glasstorch.ones(1), 2)
    _same_error(lambda lib: lib.nn.functional.assert_int_or_pair((1, 2, 3), "kernel",
                                                                 "{} must be a pair"))
    G.assert_int_or_pair(3, "kernel", "{}")

    for lib in (G, T):
        def if_true(x, flag=False):
            return ("true", x)

        def if_false(x, flag=False):
            """The doc."""
            return ("false", x)
        fn = lib.boolean_dispatch("flag", 1, False, if_true, if_false, "mod", "picked")
        assert (fn(1), fn(1, True), fn(1, flag=True)) == \
            (("false", 1), ("true", 1), ("true", 1))
        assert (fn.__name__, fn.__module__, fn.__doc__) == ("picked", "mod", "The doc.")
