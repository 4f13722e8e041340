"""Neural-network ops against real PyTorch: convolution, pooling, normalization,
embedding, dropout, losses, and the torch.nn.functional wrappers (signatures,
reduction strings, inplace flags); errors (type + message)."""
import inspect
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import glasstorch
import glasstorch.nn.functional as GF
from glasstorch._dispatcher import dispatch_trace

from .helpers import assert_same


def both(torch, *arrs, dtype=None):
    g = [glasstorch.tensor(a) for a in arrs]
    t = [torch.tensor(a) for a in arrs]
    if dtype is not None:
        g = [x.to(getattr(glasstorch, dtype)) for x in g]
        t = [x.to(getattr(torch, dtype)) for x in t]
    return g, t


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


seeds = st.integers(0, 2**31 - 1)


# -- convolution ------------------------------------------------------------------------

@given(st.integers(1, 2), st.sampled_from([(1, 1), (2, 1), (2, 2), (3, 1)]),
       st.integers(1, 3), st.integers(4, 7), st.integers(4, 7), st.integers(1, 3),
       st.integers(1, 3), st.integers(0, 1), st.integers(1, 2), st.booleans(), seeds)
def test_conv2d(torch, n, groups_cin, cout_per_group, h, w, kh, kw, pad, dil, with_bias, seed):
    groups, cin_g = groups_cin
    rng = np.random.default_rng(seed)
    stride = int(rng.integers(1, 3))
    cin, cout = groups * cin_g, groups * cout_per_group
    assume(dil * (kh - 1) + 1 <= h + 2 * pad and dil * (kw - 1) + 1 <= w + 2 * pad)
    (x, wt, b), (tx, twt, tb) = both(torch, rand(rng, n, cin, h, w),
                                     rand(rng, cout, cin_g, kh, kw), rand(rng, cout))
    ours = GF.conv2d(x, wt, b if with_bias else None, stride, pad, dil, groups)
    theirs = torch.nn.functional.conv2d(tx, twt, tb if with_bias else None, stride, pad, dil,
                                        groups)
    assert_same(ours, theirs, atol=1e-4, rtol=1e-4)


@given(st.sampled_from(["same", "valid"]), st.integers(1, 4), st.integers(1, 2), seeds)
def test_conv1d_padding_strings(torch, padding, k, dil, seed):
    rng = np.random.default_rng(seed)
    (x, w), (tx, tw) = both(torch, rand(rng, 2, 3, 9), rand(rng, 4, 3, k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(GF.conv1d(x, w, padding=padding, dilation=dil),
                    torch.nn.functional.conv1d(tx, tw, padding=padding, dilation=dil),
                    atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("bfloat16", 5e-2)])
def test_conv2d_dtypes(torch, dtype, tol):
    rng = np.random.default_rng(0)
    (x, w), (tx, tw) = both(torch, rand(rng, 1, 2, 5, 5), rand(rng, 3, 2, 3, 3), dtype=dtype)
    assert_same(GF.conv2d(x, w, padding=1), torch.nn.functional.conv2d(tx, tw, padding=1),
                atol=tol, rtol=tol)


def test_conv_transposed(torch):
    rng = np.random.default_rng(3)
    (x, w), (tx, tw) = both(torch, rand(rng, 2, 4, 4, 5), rand(rng, 4, 3, 3, 2))
    for args in ([1, 1], [0, 0], [1, 1], True, [0, 0], 1), ([2, 3], [1, 0], [1, 2], True,
                                                              [1, 2], 2):
        if args[5] == 2:
            (x2, w2), (tx2, tw2) = both(torch, rand(rng, 2, 4, 4, 5), rand(rng, 4, 3, 3, 2))
        else:
            x2, w2, tx2, tw2 = x, w, tx, tw
        assert_same(glasstorch.convolution(x2, w2, None, *args),
                    torch.convolution(tx2, tw2, None, *args), atol=1e-4, rtol=1e-4)


def test_conv_channels_last_output(torch):
    rng = np.random.default_rng(0)
    a = rand(rng, 2, 3, 5, 5)
    x = glasstorch.tensor(np.ascontiguousarray(a.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    tx = torch.tensor(a).to(memory_format=torch.channels_last)
    (w,), (tw,) = both(torch, rand(rng, 4, 3, 3, 3))
    assert_same(GF.conv2d(x, w), torch.nn.functional.conv2d(tx, tw), atol=1e-4, rtol=1e-4)


# -- pooling ---------------------------------------------------------------------------------

@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(0, 1),
       st.integers(1, 2), st.booleans(), st.integers(5, 8), seeds)
def test_max_pool2d(torch, kh, kw, stride, pad, dil, ceil_mode, size, seed):
    assume(pad <= (dil * (kh - 1) + 1) // 2 and pad <= (dil * (kw - 1) + 1) // 2)
    rng = np.random.default_rng(seed)
    (x,), (tx,) = both(torch, rand(rng, 2, 3, size, size + 1))
    ours = GF.max_pool2d(x, (kh, kw), stride, pad, dil, ceil_mode, return_indices=True)
    theirs = torch.nn.functional.max_pool2d(tx, (kh, kw), stride, pad, dil, ceil_mode,
                                            return_indices=True)
    assert_same(ours, theirs)


@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.booleans(), st.booleans(),
       st.sampled_from([None, 2]), seeds)
def test_avg_pool2d(torch, k, stride, pad, ceil_mode, count_include_pad, divisor, seed):
    assume(pad <= k // 2)
    rng = np.random.default_rng(seed)
    (x,), (tx,) = both(torch, rand(rng, 2, 3, 6, 7))
    kwargs = dict(stride=stride, padding=pad, ceil_mode=ceil_mode,
                  count_include_pad=count_include_pad, divisor_override=divisor)
    assert_same(GF.avg_pool2d(x, k, **kwargs), torch.nn.functional.avg_pool2d(tx, k, **kwargs),
                atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("size", [(3, 2), (1, 1), (5, 7), 4, (None, 2)])
def test_adaptive_avg_pool2d(torch, size):
    rng = np.random.default_rng(0)
    (x,), (tx,) = both(torch, rand(rng, 2, 3, 5, 7))
    assert_same(GF.adaptive_avg_pool2d(x, size), torch.nn.functional.adaptive_avg_pool2d(tx, size),
                atol=1e-5, rtol=1e-5)


def test_max_pool2d_default_stride_and_trace():
    x = glasstorch.tensor(np.ones((1, 1, 4, 4), np.float32))
    with dispatch_trace() as t:
        out = GF.max_pool2d(x, 2)
    assert tuple(out.shape) == (1, 1, 2, 2)
    assert "aten::max_pool2d_with_indices" in str(t)


# -- normalization, embedding, dropout ------------------------------------------------------

@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(1, 2), st.booleans(),
       st.sampled_from(["float32", "float64", "bfloat16"]), seeds)
def test_layer_norm(torch, shape, k, affine, dtype, seed):
    k = min(k, len(shape))
    rng = np.random.default_rng(seed)
    norm = shape[-k:]
    (x, w, b), (tx, tw, tb) = both(torch, rand(rng, *shape), rand(rng, *norm), rand(rng, *norm),
                                   dtype=dtype)
    tol = {"float32": 1e-4, "float64": 1e-9, "bfloat16": 5e-2}[dtype]
    args = (w, b) if affine else (None, None)
    targs = (tw, tb) if affine else (None, None)
    assert_same(glasstorch.native_layer_norm(x, norm, *args, 1e-5),
                torch.native_layer_norm(tx, norm, *targs, 1e-5), atol=tol, rtol=tol)
    assert_same(GF.layer_norm(x, norm, *args), torch.nn.functional.layer_norm(tx, norm, *targs),
                atol=tol, rtol=tol)


@given(st.sampled_from([(2, 4, 3), (1, 6, 2, 2), (3, 4)]), st.sampled_from([1, 2]), st.booleans(),
       seeds)
def test_group_norm(torch, shape, groups, affine, seed):
    rng = np.random.default_rng(seed)
    c = shape[1]
    (x, w, b), (tx, tw, tb) = both(torch, rand(rng, *shape), rand(rng, c), rand(rng, c))
    args = (w, b) if affine else (None, None)
    targs = (tw, tb) if affine else (None, None)
    assert_same(GF.group_norm(x, groups, *args), torch.nn.functional.group_norm(tx, groups, *targs),
                atol=1e-4, rtol=1e-4)


def test_embedding(torch):
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 6, size=(3, 4))
    (w, i), (tw, ti) = both(torch, rand(rng, 6, 5), idx)
    assert_same(GF.embedding(i, w, padding_idx=2), torch.nn.functional.embedding(ti, tw,
                                                                                 padding_idx=2))
    assert_same(GF.embedding(i.to(glasstorch.int32), w),
                torch.nn.functional.embedding(ti.int(), tw))


def test_dropout_statistics_and_identity():
    glasstorch.manual_seed(0)
    x = glasstorch.tensor(np.ones((200, 100), np.float32))
    assert GF.dropout(x, 0.5, training=False) is x
    assert GF.dropout(x, 0.0) is x
    out = GF.dropout(x, 0.25)
    values = out.numpy()
    kept = values != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(values[kept], 1 / 0.75, rtol=1e-6)
    assert (GF.dropout(x, 1.0).numpy() == 0).all()
    y = glasstorch.tensor(np.ones((10, 10), np.float32))
    assert GF.dropout(y, 0.5, inplace=True) is y
    out, mask = glasstorch.native_dropout(x, 0.5, True)
    assert mask.dtype == glasstorch.bool
    np.testing.assert_allclose(out.numpy(), mask.numpy() * 2.0)


def test_dropout_dispatch_structure():
    x = glasstorch.tensor(np.ones((3, 4), np.float32))
    with dispatch_trace() as t:
        GF.dropout(x, 0.5)
    calls = [line.split("op=[")[1].split("]")[0] for line in str(t).splitlines()
             if line.startswith(" [call]")]
    assert calls == ["aten::empty_like", "aten::bernoulli_.float", "aten::div_.Scalar",
                     "aten::mul.Tensor"]


# -- losses ------------------------------------------------------------------------------------

reductions = st.sampled_from(["none", "mean", "sum"])


@given(st.sampled_from([(), (4,), (4, 2), (2, 2, 3)]), st.integers(2, 5), reductions,
       st.booleans(), st.sampled_from([-100, 0, 1]), st.sampled_from([0.0, 0.1, 0.5]), seeds)
def test_cross_entropy_and_nll(torch, extra, c, reduction, weighted, ignore_index, smoothing,
                               seed):
    rng = np.random.default_rng(seed)
    if extra == ():
        shape, tshape = (c,), ()
    else:
        shape, tshape = (extra[0], c) + extra[1:], (extra[0],) + extra[1:]
    target = rng.integers(0, c, size=tshape)
    assume(not (weighted and ignore_index != -100 and reduction == "mean" and smoothing > 0
                and (target == ignore_index).all()))
    (x, t, w), (tx, tt, tw) = both(torch, rand(rng, *shape), np.asarray(target),
                                   np.abs(rand(rng, c)) + 0.1)
    kw = dict(weight=w if weighted else None, reduction=reduction, ignore_index=ignore_index)
    tkw = dict(weight=tw if weighted else None, reduction=reduction, ignore_index=ignore_index)
    assert_same(GF.cross_entropy(x, t, label_smoothing=smoothing, **kw),
                torch.nn.functional.cross_entropy(tx, tt, label_smoothing=smoothing, **tkw),
                atol=1e-5, rtol=1e-4)
    assert_same(GF.nll_loss(x, t, **kw), torch.nn.functional.nll_loss(tx, tt, **tkw),
                atol=1e-5, rtol=1e-4)


@given(reductions, st.sampled_from([0.0, 0.2]), st.booleans(), seeds)
def test_cross_entropy_probabilities(torch, reduction, smoothing, weighted, seed):
    rng = np.random.default_rng(seed)
    (x, p, w), (tx, tp, tw) = both(torch, rand(rng, 3, 4), rng.random((3, 4)).astype(np.float32),
                                   rand(rng, 4))
    assert_same(GF.cross_entropy(x, p, weight=w if weighted else None, reduction=reduction,
                                 label_smoothing=smoothing),
                torch.nn.functional.cross_entropy(tx, tp, weight=tw if weighted else None,
                                                  reduction=reduction,
                                                  label_smoothing=smoothing),
                atol=1e-5, rtol=1e-4)


@given(st.sampled_from(["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]), reductions,
       st.sampled_from([(3,), (2, 3), ()]), st.sampled_from(["float32", "float64"]), seeds)
def test_regression_losses(torch, name, reduction, shape, dtype, seed):
    rng = np.random.default_rng(seed)
    (a, b), (ta, tb) = both(torch, rand(rng, *shape), rand(rng, *shape), dtype=dtype)
    extra = {"smooth_l1_loss": {"beta": 0.5}, "huber_loss": {"delta": 0.7}}.get(name, {})
    assert_same(getattr(GF, name)(a, b, reduction=reduction, **extra),
                getattr(torch.nn.functional, name)(ta, tb, reduction=reduction, **extra),
                atol=1e-6, rtol=1e-5)


@given(reductions, st.booleans(), st.booleans(), seeds)
def test_binary_cross_entropy(torch, reduction, weighted, pos_weighted, seed):
    rng = np.random.default_rng(seed)
    probs = rng.random((3, 4)).astype(np.float32)
    (x, p, t, w, pw), (tx, tp, tt, tw, tpw) = both(
        torch, rand(rng, 3, 4), probs, rng.random((3, 4)).astype(np.float32),
        np.abs(rand(rng, 4)), np.abs(rand(rng, 4)))
    assert_same(GF.binary_cross_entropy(p, t, weight=w if weighted else None, reduction=reduction),
                torch.nn.functional.binary_cross_entropy(tp, tt, weight=tw if weighted else None,
                                                         reduction=reduction),
                atol=1e-5, rtol=1e-4)
    assert_same(GF.binary_cross_entropy_with_logits(x, t, weight=w if weighted else None,
                                                    reduction=reduction,
                                                    pos_weight=pw if pos_weighted else None),
                torch.nn.functional.binary_cross_entropy_with_logits(
                    tx, tt, weight=tw if weighted else None, reduction=reduction,
                    pos_weight=tpw if pos_weighted else None),
                atol=1e-5, rtol=1e-4)


def test_cross_entropy_dispatch_structure():
    x = glasstorch.tensor(np.ones((3, 5), np.float32))
    t = glasstorch.tensor(np.array([1, 0, 4]))
    with dispatch_trace() as tr:
        GF.cross_entropy(x, t)
    text = str(tr)
    assert "aten::cross_entropy_loss" in text and "aten::_log_softmax" in text
    assert "aten::nll_loss_forward" in text


# -- F wrapper signatures ------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "relu", "relu6", "hardtanh", "elu", "leaky_relu", "silu", "mish", "hardsigmoid", "hardswish",
    "softmax", "log_softmax", "softmin", "dropout", "adaptive_avg_pool2d",
    "layer_norm", "group_norm", "embedding", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "pad", "threshold"])
def test_functional_signatures(torch, name):
    ours = inspect.signature(getattr(GF, name))
    theirs = inspect.signature(getattr(torch.nn.functional, name))
    assert list(ours.parameters) == list(theirs.parameters)
    for p in theirs.parameters.values():
        assert ours.parameters[p.name].default == p.default, p.name


def test_activation_inplace(torch):
    for name in ["relu", "silu", "hardtanh", "leaky_relu", "elu"]:
        a = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
        (x,), (tx,) = both(torch, a)
        out = getattr(GF, name)(x, inplace=True)
        assert out is x
        getattr(torch.nn.functional, name)(tx, inplace=True)
        assert_same(x, tx)


def test_functional_registry_names():
    assert GF.linear is glasstorch._ops.registry.FUNCTIONS["nn"]["linear"]
    assert GF.conv2d is glasstorch.conv2d
    assert callable(GF.gelu) and callable(GF.softplus)


# -- errors ---------------------------------------------------------------------------------------

def _err(fn, exc, msg):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == msg


def ones(*shape, dtype=np.float32):
    return glasstorch.tensor(np.ones(shape, dtype))


def test_errors():
    _err(lambda: GF.conv2d(ones(2, 4, 5, 5), ones(6, 3, 3, 3)), RuntimeError,
         "Given groups=1, weight of size [6, 3, 3, 3], expected input[2, 4, 5, 5] to have 3 "
         "channels, but got 4 channels instead")
    _err(lambda: GF.conv2d(ones(2, 4, 5, 5), ones(6, 4, 7, 7)), RuntimeError,
         "Calculated padded input size per channel: (5 x 5). Kernel size: (7 x 7). Kernel size "
         "can't be greater than actual input size")
    _err(lambda: GF.conv2d(ones(5, 5), ones(6, 4, 3, 3)), RuntimeError,
         "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [5, 5]")
    _err(lambda: GF.conv2d(ones(2, 4, 5, 5), ones(6, 4, 3, 3), stride=2, padding="same"),
         RuntimeError, "padding='same' is not supported for strided convolutions")
    _err(lambda: GF.conv2d(ones(2, 4, 5, 5), ones(6, 4, 3, 3, dtype=np.float64)), RuntimeError,
         "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same "
         "or input should be a MKLDNN tensor and weight is a dense tensor")
    _err(lambda: GF.max_pool2d(ones(1, 2, 5, 5), 3, padding=2), RuntimeError,
         "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and "
         "dilation=1")
    _err(lambda: GF.max_pool2d(ones(1, 2, 2, 2), 3), RuntimeError,
         "Given input size: (2x2x2). Calculated output size: (2x0x0). Output size is too small")
    _err(lambda: GF.layer_norm(ones(2, 3, 4), (5,)), RuntimeError,
         "Given normalized_shape=[5], expected input with shape [*, 5], but got input of "
         "size[2, 3, 4]")
    _err(lambda: GF.embedding(glasstorch.tensor(np.array([7])), ones(5, 3)), IndexError,
         "index out of range in self")
    _err(lambda: GF.embedding(ones(2), ones(5, 3)), RuntimeError,
         "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
         "Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)")
    _err(lambda: GF.dropout(ones(3), 1.5), ValueError,
         "dropout probability has to be between 0 and 1, but got 1.5")
    target = glasstorch.tensor(np.array([7, 1, 2]))
    _err(lambda: GF.nll_loss(ones(3, 5), target), IndexError, "Target 7 is out of bounds.")
    _err(lambda: GF.nll_loss(ones(2, 3, 4), glasstorch.tensor(np.zeros((3, 4), np.int64))),
         ValueError, "Expected input batch_size (2) to match target batch_size (3).")
    _err(lambda: GF.cross_entropy(ones(3, 5), glasstorch.tensor(np.array([1, 2, 3])),
                                  label_smoothing=1.5), RuntimeError,
         "label_smoothing must be between 0.0 and 1.0. Got: 1.5")
    _err(lambda: GF.binary_cross_entropy(glasstorch.tensor(np.array([1.5], np.float32)),
                                         ones(1)), RuntimeError,
         "all elements of input should be between 0 and 1")
    _err(lambda: GF.cross_entropy(ones(3, 5), ones(3, 5), reduction="avg"), ValueError,
         "avg is not a valid value for reduction")
