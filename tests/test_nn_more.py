"""Issue 16's torch.nn additions against real PyTorch: F.interpolate in every mode
(3-d, bicubic, antialiased, area), 3-d convolution and pooling, Lp pooling, max
unpooling, fractional max pooling (seeded like torch's), F.fold / F.unfold and
F.embedding_bag, their modules, gradients (float64 gradcheck) and errors."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch

from .nn_differential import check_functional, gradcheck_functional as _gradcheck
from .nn_differential import check_same_error as _same_error

F, TF = glasstorch.nn.functional, torch.nn.functional
LIBS = (glasstorch, torch)
_same = functools.partial(check_functional, atol=1e-5, check_fn=False)
RNG = np.random.default_rng(0)


# -- interpolate ----------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(mode=st.sampled_from(["nearest", "nearest-exact", "trilinear", "area"]),
       spatial=st.lists(st.integers(1, 5), min_size=3, max_size=3),
       size=st.lists(st.integers(1, 7), min_size=3, max_size=3),
       align=st.booleans())
def test_interpolate_5d_matches_torch(mode, spatial, size, align):
    x = RNG.standard_normal((2, 2, *spatial))
    kwargs = {"size": size, "mode": mode}
    if mode == "trilinear":
        kwargs["align_corners"] = align
    _same(lambda lib, t: lib.nn.functional.interpolate(t, **kwargs), x)


@settings(max_examples=25, deadline=None)
@given(mode=st.sampled_from(["bilinear", "bicubic", "lanczos"]),
       antialias=st.booleans(), align=st.booleans(),
       spatial=st.lists(st.integers(2, 9), min_size=2, max_size=2),
       size=st.lists(st.integers(1, 12), min_size=2, max_size=2))
def test_interpolate_4d_cubic_and_antialiased_match_torch(mode, antialias, align, spatial, size):
    if mode == "lanczos":
        antialias, align = True, False
    if antialias:   # PyTorch's CPU kernel resamples rows wrongly into a width-1 output
        size = [size[0], max(size[1], 2)]
    x = RNG.standard_normal((2, 3, *spatial)).astype(np.float32)
    kwargs = {"size": size, "mode": mode, "align_corners": align, "antialias": antialias}
    _same(lambda lib, t: lib.nn.functional.interpolate(t, **kwargs), x, atol=1e-4)


@pytest.mark.parametrize("mode,antialias", [("bicubic", False), ("bicubic", True),
                                            ("bilinear", True), ("lanczos", True)])
def test_interpolate_uint8_images_match_torch(mode, antialias):
    x = RNG.integers(0, 256, (1, 3, 9, 11)).astype(np.uint8)
    for size in ((4, 5), (13, 7)):
        _same(lambda lib, t: lib.nn.functional.interpolate(t, size=size, mode=mode,
                                                           antialias=antialias), x, grad=False)


@pytest.mark.parametrize("kwargs", [
    {"scale_factor": 1.7, "mode": "trilinear"},
    {"scale_factor": (0.6, 2.0, 1.3), "mode": "nearest", "recompute_scale_factor": True},
    {"scale_factor": 0.5, "mode": "area"},
])
def test_interpolate_scale_factors_match_torch(kwargs):
    _same(lambda lib, t: lib.nn.functional.interpolate(t, **kwargs),
          RNG.standard_normal((1, 2, 4, 5, 6)))


def test_upsample_module_and_gradcheck():
    x = RNG.standard_normal((1, 2, 3, 4, 3))
    _same(lambda lib, t: lib.nn.Upsample(scale_factor=2, mode="trilinear")(t), x)
    for mode, kw in (("trilinear", {"align_corners": True}), ("nearest-exact", {})):
        _gradcheck(lambda lib, t: lib.nn.functional.interpolate(t, size=(4, 2, 5), mode=mode,
                                                                **kw), x)
    for mode in ("bicubic", "bilinear"):
        _gradcheck(lambda lib, t: lib.nn.functional.interpolate(
            t, size=(2, 6), mode=mode, antialias=True), x[:, :, 0])


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4), size=(2, 2),
                                              mode="lanczos", antialias=False),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4), size=(2, 2),
                                              mode="lanczos", antialias=True, align_corners=True),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4, 4), size=2, mode="bicubic"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4, 4), size=2, mode="bilinear"),
    lambda lib: lib.ops.aten._upsample_bilinear2d_aa(lib.ones(1, 1, 4, 4, dtype=lib.float16),
                                                     [2, 2], False),
    lambda lib: lib.ops.aten.upsample_trilinear3d(lib.ones(1, 1, 2, 2, 2, dtype=lib.uint8),
                                                  [3, 3, 3], False),
    lambda lib: lib.ops.aten.upsample_nearest3d(lib.ones(1, 1, 2, 2, 2), [3, 0, 3]),
])
def test_interpolate_errors_match_torch(call):
    _same_error(call)


# -- 3-d convolution and pooling ---------------------------------------------------------

def test_conv3d_and_transpose_match_torch_with_gradients():
    x = RNG.standard_normal((2, 4, 5, 6, 5))
    w = RNG.standard_normal((6, 2, 2, 3, 2))
    b = RNG.standard_normal(6)
    _same(lambda lib, x, w, b: lib.nn.functional.conv3d(x, w, b, (1, 2, 1), 1, (2, 1, 1), 2),
          x, w, b)
    wt = RNG.standard_normal((4, 3, 2, 3, 2))
    _same(lambda lib, x, w: lib.nn.functional.conv_transpose3d(x, w, None, 2, 1, (1, 0, 1)),
          x, wt)
    _gradcheck(lambda lib, x, w: lib.nn.functional.conv3d(x, w, padding="same"),
               x[:1, :2, :3, :3, :3], w[:2, :2, :2, :1, :2])


def test_conv3d_modules_match_torch():
    for lib in LIBS:
        lib.manual_seed(0)
    modules = [(lib.nn.Conv3d(3, 4, (2, 3, 2), stride=2, padding=1, padding_mode="circular"),
                lib.nn.ConvTranspose3d(3, 2, 3, stride=2, groups=1)) for lib in LIBS]
    for (g, t) in zip(*modules):
        np.testing.assert_array_equal(g.weight.detach().numpy(), t.weight.detach().numpy())
    x = RNG.standard_normal((1, 3, 4, 5, 4)).astype(np.float32)
    outs = [[m(lib.tensor(x)).detach().numpy() for m in ms] for lib, ms in zip(LIBS, modules)]
    for g, t in zip(*outs):
        np.testing.assert_allclose(g, t, atol=1e-5)


@settings(max_examples=20, deadline=None)
@given(kernel=st.lists(st.integers(1, 3), min_size=3, max_size=3),
       stride=st.lists(st.integers(1, 3), min_size=3, max_size=3),
       ceil=st.booleans(), include_pad=st.booleans(), unbatched=st.booleans())
def test_pool3d_matches_torch(kernel, stride, ceil, include_pad, unbatched):
    padding = [k // 2 for k in kernel]
    x = RNG.standard_normal((2, 3, 5, 6, 4)[unbatched:])
    _same(lambda lib, t: lib.nn.functional.max_pool3d(t, kernel, stride, padding,
                                                       ceil_mode=ceil, return_indices=True), x)
    _same(lambda lib, t: lib.nn.functional.avg_pool3d(t, kernel, stride, padding, ceil,
                                                       include_pad), x)


@pytest.mark.parametrize("size", [(3, 4, 2), 1, (None, 2, 5)])
def test_adaptive_pool3d_matches_torch(size):
    x = RNG.standard_normal((2, 3, 5, 6, 4))
    _same(lambda lib, t: lib.nn.functional.adaptive_avg_pool3d(t, size), x)
    _same(lambda lib, t: lib.nn.functional.adaptive_max_pool3d(t, size, True), x)
    _same(lambda lib, t: lib.nn.AdaptiveAvgPool3d(size)(t), x[0])


def test_pool3d_gradcheck():
    x = RNG.standard_normal((1, 2, 4, 5, 4))
    _gradcheck(lambda lib, t: lib.nn.functional.avg_pool3d(t, 2, 1, 1, count_include_pad=False),
               x)
    _gradcheck(lambda lib, t: lib.nn.functional.adaptive_avg_pool3d(t, (3, 2, 3)), x)
    _gradcheck(lambda lib, t: lib.nn.functional.max_pool3d(t, 2), x)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("p", [2, 1.5, float("inf")])
def test_lp_pool_matches_torch(k, p):
    x = np.abs(RNG.standard_normal((2, 3, 6, 5, 4)[:k + 2])) + 0.1
    _same(lambda lib, t: getattr(lib.nn.functional, f"lp_pool{k}d")(t, p, 2, stride=1), x)
    _same(lambda lib, t: getattr(lib.nn, f"LPPool{k}d")(p, 3)(t), x)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_max_unpool_round_trip_matches_torch(k):
    x = RNG.standard_normal((2, 3, 6, 5, 4)[:k + 2])

    def round_trip(lib, t):
        out, idx = getattr(lib.nn.functional, f"max_pool{k}d")(t, 2, 2, return_indices=True)
        return getattr(lib.nn, f"MaxUnpool{k}d")(2)(out, idx, output_size=t.shape)
    _same(round_trip, x)


@pytest.mark.parametrize("k,ratio", [(2, (0.5, 0.7)), (3, (0.5, 0.6, 0.7))])
def test_fractional_max_pool_seeded_matches_torch(k, ratio):
    x = RNG.standard_normal((2, 3, 9, 8, 7)[:k + 2])

    def pool(lib, t):
        lib.manual_seed(7)
        return getattr(lib.nn.functional, f"fractional_max_pool{k}d")(
            t, 2, output_ratio=ratio, return_indices=True)
    _same(pool, x)

    def module(lib, t):
        lib.manual_seed(3)
        return getattr(lib.nn, f"FractionalMaxPool{k}d")(2, output_size=(3,) * k)(t[0])
    _same(module, x)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 1, 2, 4, 4), 3),
    lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 1, 2, 4, 4), 3),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 1, 4, 4), 2, padding=2),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(2, 3, 0, 5, 5), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool3d(lib.ones(4, 4, dtype=lib.float64), 2),
    lambda lib: lib.ops.aten.max_unpool2d(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 2, 2,
                                                                          dtype=lib.int32),
                                          [4, 4]),
    lambda lib: lib.ops.aten.max_unpool2d(lib.ones(1, 1, 2, 2),
                                          lib.full((1, 1, 2, 2), 99, dtype=lib.int64), [4, 4]),
    lambda lib: lib.ops.aten.max_unpool3d(lib.ones(1, 1, 2, 2, 2),
                                          lib.zeros(1, 1, 2, 2, 2, dtype=lib.int64), [4, 4, 4],
                                          [1, 0, 1], [0, 0, 0]),
    lambda lib: lib.ops.aten.fractional_max_pool2d(lib.ones(1, 2, 5, 5), [3, 2], [4, 3],
                                                   lib.rand(1, 2, 2)),
    lambda lib: lib.ops.aten.fractional_max_pool2d(lib.ones(1, 2, 5, 5), [2, 2], [3, 3],
                                                   lib.rand(1, 2, 3)),
    lambda lib: lib.ops.aten.fractional_max_pool3d(lib.ones(1, 2, 2, 5, 5), [1, 2, 2],
                                                   [2, 3, 3], lib.rand(1, 2, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.ones(1, 1, 4, 4), 2),
    lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
])
def test_pooling_errors_match_torch(call):
    _same_error(call)


# -- fold / unfold ---------------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(kernel=st.lists(st.integers(1, 3), min_size=2, max_size=2),
       dilation=st.lists(st.integers(1, 2), min_size=2, max_size=2),
       padding=st.lists(st.integers(0, 2), min_size=2, max_size=2),
       stride=st.lists(st.integers(1, 3), min_size=2, max_size=2),
       unbatched=st.booleans())
def test_unfold_fold_match_torch(kernel, dilation, padding, stride, unbatched):
    x = RNG.standard_normal((2, 3, 7, 6)[unbatched:])
    args = (kernel, dilation, padding, stride)
    _same(lambda lib, t: lib.nn.functional.unfold(t, *args), x)
    cols = torch.nn.functional.unfold(torch.tensor(x), *args).numpy()
    _same(lambda lib, t: lib.nn.functional.fold(t, (7, 6), *args), cols)
    _same(lambda lib, t: lib.nn.Fold((7, 6), *args)(lib.nn.Unfold(*args)(t)), x)


def test_fold_gradcheck():
    x = RNG.standard_normal((1, 2, 5, 4))
    _gradcheck(lambda lib, t: lib.nn.functional.fold(
        lib.nn.functional.unfold(t, (2, 3), padding=1, stride=2) ** 2, (5, 4), (2, 3),
        padding=1, stride=2), x)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3), 2),
    lambda lib: lib.nn.functional.unfold(lib.ones(1, 1, 1, 3, 3), 2),
    lambda lib: lib.nn.functional.unfold(lib.ones(1, 1, 3, 3), 5),
    lambda lib: lib.nn.functional.unfold(lib.ones(1, 1, 3, 3, dtype=lib.int32), 2),
    lambda lib: lib.nn.functional.unfold(lib.ones(1, 1, 3, 3), 2, stride=0),
    lambda lib: lib.nn.functional.fold(lib.ones(1, 12, 20), (5, 6), 3),
    lambda lib: lib.nn.functional.fold(lib.ones(1, 12, 20), (5, 7), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(1, 12, 20), (5, 6), 2, padding=-1),
    lambda lib: lib.nn.functional.fold(lib.ones(12), (5, 6), 2),
])
def test_fold_errors_match_torch(call):
    _same_error(call)


# -- embedding_bag -------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(data=st.data(), mode=st.sampled_from(["sum", "mean", "max"]),
       dtype=st.sampled_from(["float32", "float64"]))
def test_embedding_bag_matches_torch_with_gradients(data, mode, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    vocab, dim = data.draw(st.integers(2, 7)), data.draw(st.integers(1, 4))
    weight = rng.standard_normal((vocab, dim)).astype(dtype)
    kwargs = {"mode": mode}
    if data.draw(st.booleans()):
        kwargs["padding_idx"] = data.draw(st.integers(-vocab, vocab - 1))
    if mode != "max" and data.draw(st.booleans()):
        kwargs["scale_grad_by_freq"] = True
    if data.draw(st.booleans()):    # a batch of equal bags
        indices = rng.integers(0, vocab, (3, data.draw(st.integers(1, 4))))
        offsets = None
    else:
        n = data.draw(st.integers(0, 9))
        indices = rng.integers(0, vocab, n)
        offsets = np.sort(rng.integers(0, n + 1, data.draw(st.integers(1, 4))))
        offsets[0] = 0
        # include_last_offset: the last offset is the number of indices, as documented
        # (indices past it are undefined behaviour in PyTorch's kernel: garbage gradients)
        kwargs["include_last_offset"] = data.draw(st.booleans())
        if kwargs["include_last_offset"]:
            offsets = np.append(offsets, n)
    arrays = [weight]
    if mode == "sum" and data.draw(st.booleans()):
        arrays.append(rng.standard_normal(indices.shape).astype(dtype))

    def call(lib, w, *psw):
        return lib.nn.functional.embedding_bag(
            lib.tensor(indices), w, None if offsets is None else lib.tensor(offsets),
            per_sample_weights=psw[0] if psw else None, **kwargs)
    _same(call, *arrays)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_bag_op_outputs_match_torch(requires_grad, mode, padding_idx):
    """All four outputs of aten::embedding_bag (offset2bag, bag_size, max_indices
    as ATen leaves them, including the float 'sum' fast path's empty offset2bag)."""
    for dtype in ("float32", "float64"):
        weight = RNG.standard_normal((5, 3)).astype(dtype)
        _same(lambda lib, w: lib.embedding_bag(
            w, lib.tensor([1, 2, 3, 1, 0, 4]), lib.tensor([0, 2, 2, 5]), False, mode, False,
            None, False, padding_idx), weight, grad=requires_grad)


def test_embedding_bag_gradcheck_and_module():
    weight = RNG.standard_normal((6, 3))
    psw = RNG.standard_normal(7)
    indices = np.array([1, 2, 4, 5, 4, 3, 2])
    offsets = np.array([0, 3, 3])
    _gradcheck(lambda lib, w, p: lib.nn.functional.embedding_bag(
        lib.tensor(indices), w, lib.tensor(offsets), mode="sum", per_sample_weights=p), weight,
        psw)
    _gradcheck(lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor(indices), w, lib.tensor(offsets), mode="mean", padding_idx=4), weight)
    for lib in LIBS:
        lib.manual_seed(0)
    bags = [lib.nn.EmbeddingBag(6, 3, mode="max", padding_idx=-1) for lib in LIBS]
    assert repr(bags[0]) == repr(bags[1])
    outs = [bag(lib.tensor(indices), lib.tensor(offsets)).detach().numpy()
            for bag, lib in zip(bags, LIBS)]
    np.testing.assert_allclose(*outs, rtol=1e-6)
    frozen = glasstorch.nn.EmbeddingBag.from_pretrained(glasstorch.tensor(weight), mode="sum")
    assert not frozen.weight.requires_grad
    assert not isinstance(frozen, glasstorch.nn.Embedding)

@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_indices_past_the_last_offset(mode):
    """include_last_offset with indices past the last offset (outside the documented
    contract; ATen's sum backward reads past its gradient there): glasstorch keeps
    them in the last bag, forward and backward alike, and its gradients pass
    gradcheck."""
    weight = RNG.standard_normal((8, 3))
    indices = np.array([1, 2, 3, 4, 5])
    psw = RNG.standard_normal(5) if mode == "sum" else None

    def bag(lib, w, *p, offsets=(0, 2, 3)):
        return lib.nn.functional.embedding_bag(lib.tensor(indices), w, lib.tensor(offsets),
                                               include_last_offset=True, mode=mode,
                                               per_sample_weights=p[0] if p else None)
    extra = () if psw is None else (psw,)
    _gradcheck(bag, weight, *extra)
    grads = []
    for offsets in ((0, 2, 3), (0, 2, 5)):
        w = glasstorch.tensor(weight, requires_grad=True)
        p = [glasstorch.tensor(a, requires_grad=True) for a in extra]
        bag(glasstorch, w, *p, offsets=offsets).sum().backward()
        grads.append([w.grad.numpy()] + [q.grad.numpy() for q in p])
    for ours, well_formed in zip(*grads):
        np.testing.assert_array_equal(ours, well_formed)



@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2),
                                                lib.tensor([1])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2),
                                                lib.tensor([0, 3])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 5]), lib.ones(3, 2),
                                                lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), lib.ones(3, 2),
                                                lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2),
                                                lib.tensor([0]), mode="median"),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2),
                                                lib.tensor([0]), mode="max",
                                                per_sample_weights=lib.ones(2)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2),
                                                lib.tensor([0]), padding_idx=3),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1.0, 2.0]), lib.ones(3, 2),
                                                lib.tensor([0])),
])
def test_embedding_bag_errors_match_torch(call):
    _same_error(call)


# -- nn.init.orthogonal_ ------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 5), (6, 2), (4, 3, 2), (5, 5)])
def test_orthogonal_init_seeded_matches_torch(shape):
    """The same normal draws, QR (torch.linalg.qr) and sign fix as torch's."""
    results = []
    for lib in LIBS:
        lib.manual_seed(1)
        results.append(lib.nn.init.orthogonal_(lib.empty(*shape), gain=2.0).numpy())
    np.testing.assert_allclose(*results, atol=1e-6)
    flat = results[0].reshape(shape[0], -1)
    small = min(flat.shape)
    gram = flat @ flat.T if flat.shape[0] == small else flat.T @ flat
    np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-5)
