"""The layer functionals of torch.nn.functional against real PyTorch (issue 4
"layers"): values and gradients on edge configurations, errors and warnings
(type + message) through tests/differential.py, double backward of batch norm,
and the aten op sequence each functional dispatches (PyTorch's as seen by a
TorchDispatchMode)."""
import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import glasstorch as gt
from glasstorch._dispatcher import dispatch_trace

from .differential import differential, raised, returned


def _arr(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _t(lib, a, **kw):
    return lib.tensor(a, **kw)


# -- errors and warnings ---------------------------------------------------------------------

ERROR_CASES = {
    # batch / instance / rms norm
    "bn-one-value": lambda L: L.nn.functional.batch_norm(L.ones(1, 3), L.zeros(3), L.ones(3),
                                                         training=True),
    "bn-eps": lambda L: L.nn.functional.batch_norm(L.ones(4, 3), None, None, training=True,
                                                   eps=0.0),
    "bn-negative-eps": lambda L: L.nn.functional.batch_norm(L.ones(4, 3), L.zeros(3), L.ones(3),
                                                            eps=-1.0),
    "bn-stats-size": lambda L: L.nn.functional.batch_norm(L.ones(4, 3), L.zeros(4), L.ones(3),
                                                          training=True),
    "bn-weight-size": lambda L: L.nn.functional.batch_norm(L.ones(4, 3), L.zeros(3), L.ones(3),
                                                           L.ones(5), training=True),
    "bn-eval-no-stats": lambda L: L.nn.functional.batch_norm(L.ones(4, 3), None, L.ones(3)),
    "bn-mixed-dtype": lambda L: L.nn.functional.batch_norm(L.ones(4, 3, dtype=L.float64),
                                                           L.zeros(3), L.ones(3), training=True),
    "bn-float64-params": lambda L: L.nn.functional.batch_norm(
        L.ones(4, 3), L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64), training=True),
    "bn-int": lambda L: L.nn.functional.batch_norm(L.ones(4, 3, dtype=L.int64), L.zeros(3),
                                                   L.ones(3), training=True),
    "bn-stats-pair": lambda L: L.native_batch_norm(L.ones(4, 3), None, None, L.zeros(3), None,
                                                   True, 0.1, 1e-5),
    "bn-1d-input": lambda L: L.native_batch_norm(L.ones(4), None, None, None, None, True, 0.1,
                                                 1e-5),
    "bn-empty-native": lambda L: L.native_batch_norm(L.ones(0, 3), None, None, None, None, True,
                                                     0.1, 1e-5),
    "in-one-element": lambda L: L.nn.functional.instance_norm(L.ones(2, 3, 1)),
    "in-no-stats": lambda L: L.instance_norm(L.ones(2, 3, 4), None, None, None, None, False,
                                             0.1, 1e-5, False),
    "rms-shape": lambda L: L.nn.functional.rms_norm(L.ones(2, 3, 4), (2, 4)),
    "rms-weight": lambda L: L.nn.functional.rms_norm(L.ones(2, 3, 4), (4,), L.ones(3)),
    "rms-empty-shape": lambda L: L.nn.functional.rms_norm(L.ones(2, 3), []),
    "rms-int": lambda L: L.nn.functional.rms_norm(L.ones(2, 3, dtype=L.int64), (3,)),
    # transposed convolution
    "convT-output-padding-1d": lambda L: L.nn.functional.conv_transpose1d(
        L.ones(2, 3, 8), L.ones(3, 4, 3), stride=2, output_padding=2),
    "convT-output-padding-2d": lambda L: L.nn.functional.conv_transpose2d(
        L.ones(1, 3, 4, 4), L.ones(3, 2, 3, 3), stride=(2, 1), output_padding=(1, 1)),
    "convT-unbatched-dims": lambda L: L.nn.functional.conv_transpose1d(L.ones(8),
                                                                       L.ones(3, 4, 3)),
    "convT-channels": lambda L: L.nn.functional.conv_transpose1d(L.ones(2, 3, 8),
                                                                 L.ones(4, 4, 3)),
    "convT-groups": lambda L: L.nn.functional.conv_transpose1d(L.ones(2, 3, 8),
                                                               L.ones(3, 4, 3), groups=2),
    "convT-bias": lambda L: L.nn.functional.conv_transpose1d(L.ones(2, 3, 8), L.ones(3, 4, 3),
                                                             L.ones(3)),
    # pooling
    "maxpool1d-dims": lambda L: L.nn.functional.max_pool1d(L.ones(8), 3),
    "maxpool1d-empty-channels": lambda L: L.nn.functional.max_pool1d(L.ones(2, 0, 8), 3),
    "maxpool1d-kernel": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 8), 0),
    "maxpool1d-stride": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 8), 3, stride=0),
    "maxpool1d-pad": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 8), 3, padding=2),
    "maxpool1d-neg-pad": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 8), 3, padding=-1),
    "maxpool1d-dilation": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 8), 3, dilation=0),
    "maxpool1d-too-small": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 8), 9),
    "maxpool1d-int": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 8, dtype=L.int64), 3),
    "maxpool1d-idx-dims": lambda L: L.nn.functional.max_pool1d(L.ones(8), 3,
                                                               return_indices=True),
    "maxpool1d-idx-pad": lambda L: L.nn.functional.max_pool1d(L.ones(2, 3, 8), 3, padding=2,
                                                              return_indices=True),
    "avgpool1d-dims": lambda L: L.nn.functional.avg_pool1d(L.ones(8), 3),
    "avgpool1d-kernel": lambda L: L.nn.functional.avg_pool1d(L.ones(2, 3, 8), 0),
    "avgpool1d-too-small": lambda L: L.nn.functional.avg_pool1d(L.ones(2, 3, 8), 9),
    "avgpool1d-pad": lambda L: L.nn.functional.avg_pool1d(L.ones(2, 3, 8), 3, padding=2),
    "adaptive-avg1d-dims": lambda L: L.nn.functional.adaptive_avg_pool1d(L.ones(8), 3),
    "adaptive-avg1d-negative": lambda L: L.nn.functional.adaptive_avg_pool1d(L.ones(2, 8), -1),
    "adaptive-max1d-dims": lambda L: L.nn.functional.adaptive_max_pool1d(L.ones(8), 3),
    "adaptive-max2d-dims": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(8), 3),
    "adaptive-max2d-empty": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(2, 3, 0, 4), 2),
    "adaptive-max2d-int": lambda L: L.nn.functional.adaptive_max_pool2d(
        L.ones(2, 3, 4, dtype=L.int64), 2),
    "adaptive-max2d-default": lambda L: L.nn.functional.adaptive_max_pool2d(L.ones(4), (2, None)),
    "maxpool2d-kernel": lambda L: L.nn.functional.max_pool2d(L.ones(2, 3, 8, 8), 0),
    "maxpool2d-neg-pad": lambda L: L.nn.functional.max_pool2d(L.ones(2, 3, 8, 8), 3, 1, -1),
    "maxpool2d-empty": lambda L: L.nn.functional.max_pool2d(L.ones(2, 0, 8, 8), 3),
    "maxpool2d-2d": lambda L: L.nn.functional.max_pool2d(L.ones(8, 8), 3),
    "maxpool2d-dilated-pad": lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 9, 9), 3, 1, 2, 2),
    "avgpool2d-2d": lambda L: L.nn.functional.avg_pool2d(L.ones(8, 8), 3),
    "avgpool2d-divisor": lambda L: L.nn.functional.avg_pool2d(L.ones(1, 8, 8), 3,
                                                              divisor_override=0),
    # interpolation
    "interp-both": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3), size=4,
                                                         scale_factor=2),
    "interp-neither": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3)),
    "interp-size-len": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3), size=(2, 3, 4)),
    "interp-size-type": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3), size=(2.0, 3)),
    "interp-scale-len": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3),
                                                              scale_factor=(2, 2, 2)),
    "interp-recompute-size": lambda L: L.nn.functional.interpolate(
        L.ones(1, 2, 3, 3), size=4, recompute_scale_factor=True),
    "interp-align-nearest": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3), size=4,
                                                                  align_corners=True),
    "interp-linear-4d": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3), size=4,
                                                              mode="linear"),
    "interp-bilinear-3d": lambda L: L.nn.functional.interpolate(L.ones(2, 3, 3), size=4,
                                                                mode="bilinear"),
    "interp-mode": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3), size=4, mode="foo"),
    "interp-2d-input": lambda L: L.nn.functional.interpolate(L.ones(3, 3), size=4),
    "interp-antialias": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3), size=4,
                                                              antialias=True),
    "interp-zero-size": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 3),
                                                              scale_factor=0.1),
    "interp-int-nearest": lambda L: L.nn.functional.interpolate(
        L.ones(1, 2, 3, 3, dtype=L.int64), size=4),
    "interp-byte-bilinear": lambda L: L.nn.functional.interpolate(
        L.ones(1, 2, 3, 3, dtype=L.uint8), size=4, mode="bilinear"),
    "interp-int-linear": lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, dtype=L.int64),
                                                               size=4, mode="linear"),
    "upsample-vec-both": lambda L: L.ops.aten.upsample_nearest2d.vec(L.ones(1, 2, 3, 3), [4, 4],
                                                                     [1.0, 1.0]),
    "upsample-vec-factors-len": lambda L: L.ops.aten.upsample_nearest2d.vec(L.ones(1, 2, 3, 3),
                                                                            None, [1.0]),
    "upsample-nonempty": lambda L: L.ops.aten.upsample_nearest2d(L.ones(2, 0, 3, 3), [4, 4]),
    "upsample-output-size-len": lambda L: L.ops.aten.upsample_bilinear2d(
        L.ones(1, 2, 3, 3), [4, 4, 4], False),
    "upsample-input-dims": lambda L: L.ops.aten.upsample_nearest1d(L.ones(1, 2, 3, 3), [4]),
    "upsample-zero-1d": lambda L: L.ops.aten.upsample_linear1d(L.ones(1, 2, 3), [0], True),
    "upsample-backward-shape": lambda L: L.ops.aten.upsample_nearest2d_backward(
        L.ones(1, 2, 4, 5), [4, 4], [1, 2, 3, 3]),
    "deprecated-upsample": lambda L: L.nn.functional.upsample(L.ones(1, 1, 2, 2),
                                                              scale_factor=2).shape,
    "deprecated-upsample-bilinear": lambda L: L.nn.functional.upsample_bilinear(
        L.ones(1, 1, 2, 2), size=3).sum().item(),
    # padding
    "pad-reflect-too-big": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (3, 3), "reflect"),
    "pad-reflect-too-big-2d-h": lambda L: L.nn.functional.pad(L.ones(1, 2, 3, 4), (1, 1, 3, 3),
                                                              "reflect"),
    "pad-reflect-too-small": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (-2, -2),
                                                           "reflect"),
    "pad-replicate-too-small-1d": lambda L: L.nn.functional.pad(L.ones(1, 2, 4), (-2, -2),
                                                                "replicate"),
    "pad-replicate-negative-2d": lambda L: L.nn.functional.pad(L.ones(1, 2, 3, 4), (-2, -3),
                                                               "replicate"),
    "pad-value": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1, 1), "reflect", 1.0),
    "pad-value-zero": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1, 1), "reflect", 0.0),
    "pad-mode": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1, 1), "foo"),
    "pad-odd": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1, 1, 1), "reflect"),
    "pad-too-long": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1,) * 8, "circular"),
    "pad-unsupported": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1,) * 6, "reflect"),
    "pad-unsupported-1d": lambda L: L.nn.functional.pad(L.ones(3), (1, 1), "replicate"),
    "pad-empty-dim": lambda L: L.nn.functional.pad(L.ones(1, 0, 3), (1, 1), "reflect"),
    "pad-bool-replicate": lambda L: L.nn.functional.pad(L.ones(1, 2, 3, dtype=L.bool), (1, 1),
                                                        "replicate"),
    "pad-circular-wrap": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (4, 1), "circular"),
    "pad-circular-negative": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (-2, -2),
                                                           "circular"),
    "pad-reflection-size": lambda L: L.ops.aten.reflection_pad3d(L.ones(1, 2, 3, 4, 5), [1, 1]),
    "pad-replication-size": lambda L: L.ops.aten.replication_pad2d(L.ones(1, 2, 3, 4), [1, 1]),
    "pad-backward-width": lambda L: L.ops.aten.reflection_pad2d_backward(
        L.ones(1, 2, 5, 5), L.ones(1, 2, 3, 4), [1, 1, 1, 1]),
    "pad-backward-dtype": lambda L: L.ops.aten.replication_pad2d_backward(
        L.ones(1, 2, 5, 6, dtype=L.float64), L.ones(1, 2, 3, 4), [1, 1, 1, 1]),
    # bilinear, dropout, pixel shuffle, embedding
    "bilinear-dims": lambda L: L.nn.functional.bilinear(L.ones(4, 3), L.ones(2, 4, 5),
                                                        L.ones(2, 3, 5)),
    "bilinear-batch": lambda L: L.nn.functional.bilinear(L.ones(3, 4, 3), L.ones(2, 4, 5),
                                                         L.ones(2, 3, 5)),
    "bilinear-in1": lambda L: L.nn.functional.bilinear(L.ones(4, 4), L.ones(4, 5),
                                                       L.ones(2, 3, 5)),
    "bilinear-in2": lambda L: L.nn.functional.bilinear(L.ones(4, 3), L.ones(4, 6),
                                                       L.ones(2, 3, 5)),
    "bilinear-bias": lambda L: L.nn.functional.bilinear(L.ones(4, 3), L.ones(4, 5),
                                                        L.ones(2, 3, 5), L.ones(3)),
    "bilinear-dtype": lambda L: L.nn.functional.bilinear(
        L.ones(4, 3), L.ones(4, 5), L.ones(2, 3, 5), L.ones(2, dtype=L.float64)),
    "dropout1d-dims": lambda L: L.nn.functional.dropout1d(L.ones(2, 3, 4, 5)),
    "dropout2d-p": lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 4), 1.5),
    "dropout2d-3d-warns": lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 4), 0.5,
                                                              training=False).shape,
    "dropout2d-1d": lambda L: L.nn.functional.dropout2d(L.ones(3), 0.5),
    "dropout3d-2d-warns": lambda L: L.nn.functional.dropout3d(L.ones(2, 3), 0.5, False).shape,
    "feature-dropout-p": lambda L: L.feature_dropout(L.ones(2, 3), 1.5, True),
    "alpha-dropout-p": lambda L: L.nn.functional.alpha_dropout(L.ones(2, 3), -0.1, True),
    "pixel-shuffle-dims": lambda L: L.nn.functional.pixel_shuffle(L.ones(8, 3), 2),
    "pixel-shuffle-factor": lambda L: L.nn.functional.pixel_shuffle(L.ones(1, 8, 3, 3), 0),
    "pixel-shuffle-channels": lambda L: L.nn.functional.pixel_shuffle(L.ones(1, 8, 3, 3), 3),
    "pixel-unshuffle-height": lambda L: L.nn.functional.pixel_unshuffle(L.ones(1, 2, 5, 6), 2),
    "pixel-unshuffle-width": lambda L: L.nn.functional.pixel_unshuffle(L.ones(1, 2, 4, 5), 2),
    "embedding-renorm-indices": lambda L: L.embedding_renorm_(L.ones(5, 3), L.ones(2), 1.0, 2.0),
    "embedding-renorm-dims": lambda L: L.embedding_renorm_(L.ones(5), L.tensor([1]), 1.0, 2.0),
    "embedding-padding-idx": lambda L: L.nn.functional.embedding(L.tensor([1]), L.ones(3, 2),
                                                                 padding_idx=-4),
}


@pytest.mark.parametrize("fn", list(ERROR_CASES.values()), ids=list(ERROR_CASES))
def test_errors_and_warnings_match_pytorch(fn):
    differential(fn, may_raise=True)


def test_error_cases_do_raise():
    """The cases above that are errors in PyTorch are errors here (differential
    also compares them; this keeps the table honest about what it tests)."""
    for name in ("bn-one-value", "convT-output-padding-1d", "pad-reflect-too-big", "pad-mode",
                 "interp-mode", "bilinear-in1", "pixel-shuffle-channels"):
        raised(differential(ERROR_CASES[name], may_raise=True))
    returned(differential(ERROR_CASES["pad-value-zero"]))


# -- values and gradients ---------------------------------------------------------------------

def _compare(fn, *arrays, grad=True, atol=1e-5, rtol=1e-5):
    """fn(lib, *tensors) in both libraries: outputs (dtype, shape, strides,
    values) and, for floating inputs, gradients of a fixed weighting of the
    first output."""
    results = []
    for lib in (torch, gt):
        tensors = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        out = fn(lib, *tensors)
        outs = out if isinstance(out, tuple) else (out,)
        grads = []
        if grad and outs[0].requires_grad:
            weight = lib.tensor(np.cos(np.arange(outs[0].numel())).reshape(
                tuple(outs[0].shape))).to(outs[0].dtype)
            grads = lib.autograd.grad(outs[0], [t for t in tensors if t.requires_grad], weight)
        results.append((outs, grads))
    (t_outs, t_grads), (o_outs, o_grads) = results
    for o, t in zip(o_outs, t_outs):
        assert str(o.dtype) == str(t.dtype) and tuple(o.shape) == tuple(t.shape)
        assert tuple(o.stride()) == tuple(t.stride())
        np.testing.assert_allclose(o.detach().float().numpy(), t.detach().float().numpy(),
                                   atol=atol, rtol=rtol)
    for o, t in zip(o_grads, t_grads):
        np.testing.assert_allclose(o.float().numpy(), t.float().numpy(), atol=10 * atol,
                                   rtol=10 * rtol)


def test_batch_norm_bfloat16_input_float_params():
    def fn(L, x, w, b):
        x = x.to(L.bfloat16)
        rm, rv = L.zeros(3), L.ones(3)
        return L.nn.functional.batch_norm(x, rm, rv, w, b, training=True), rm, rv
    _compare(fn, _arr(4, 3, 5), _arr(3, seed=1), _arr(3, seed=2), atol=2e-2, rtol=2e-2)


def test_batch_norm_channels_last_and_float64():
    def fn(L, x):
        x = x.to(memory_format=L.channels_last)
        return L.nn.functional.batch_norm(x, None, None, training=True)
    _compare(fn, _arr(2, 3, 4, 5))
    _compare(lambda L, x: L.nn.functional.batch_norm(x, L.zeros(3, dtype=L.float64),
                                                     L.ones(3, dtype=L.float64), training=True,
                                                     momentum=0.5),
             _arr(5, 3, dtype=np.float64))


def test_batch_norm_empty_batch_keeps_graph():
    _compare(lambda L, x, w, b: L.nn.functional.batch_norm(x, None, None, w, b, training=True),
             np.zeros((0, 3), np.float32), _arr(3), _arr(3, seed=1))


def test_batch_norm_double_backward_matches_pytorch():
    for training in (True, False):
        grads = []
        for lib in (torch, gt):
            x = lib.tensor(_arr(4, 3, 2, dtype=np.float64), requires_grad=True)
            w = lib.tensor(_arr(3, seed=1, dtype=np.float64), requires_grad=True)
            rm = lib.tensor(_arr(3, seed=2, dtype=np.float64))
            rv = lib.tensor(np.abs(_arr(3, seed=3, dtype=np.float64)) + 0.5)
            out = lib.nn.functional.batch_norm(x, rm, rv, w, None, training=training)
            gx, gw = lib.autograd.grad((out * out.sin()).sum(), (x, w), create_graph=True)
            second = lib.autograd.grad((gx * gx).sum() + (gw * gw.cos()).sum(), (x, w))
            grads.append([g.detach().numpy() for g in (gx, gw, *second)])
        for o, t in zip(grads[1], grads[0]):
            np.testing.assert_allclose(o, t, atol=1e-9, rtol=1e-7)


def test_batch_norm_gradgradcheck():
    x = gt.tensor(_arr(3, 2, 2, dtype=np.float64), requires_grad=True)
    w = gt.tensor(_arr(2, seed=1, dtype=np.float64), requires_grad=True)
    b = gt.tensor(_arr(2, seed=2, dtype=np.float64), requires_grad=True)
    assert gt.autograd.gradgradcheck(
        lambda x, w, b: gt.nn.functional.batch_norm(x, None, None, w, b, training=True),
        (x, w, b))


def test_instance_norm_running_stats_update():
    def fn(L, x, w):
        rm, rv = L.zeros(3), L.ones(3)
        out = L.nn.functional.instance_norm(x, rm, rv, w, None, momentum=0.3)
        return out, rm, rv
    _compare(fn, _arr(2, 3, 5), _arr(3, seed=1))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_rms_norm_dtypes_and_default_eps(dtype):
    tol = 1e-2 if dtype != "float64" else 1e-10

    def fn(L, x, w):
        x = x.to(getattr(L, dtype))
        return L.nn.functional.rms_norm(x, (4,), w.to(x.dtype)), L.nn.functional.rms_norm(x, (4,))
    _compare(fn, _arr(2, 3, 4) * 1e-3, _arr(4, seed=1), atol=tol, rtol=tol)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("shape,pad", [((2, 5), (2, -1)), ((2, 3, 5), (1, 3)),
                                       ((3, 4, 5), (1, 2, -1, 3)), ((1, 2, 4, 5), (2, 0, 1, 3)),
                                       ((2, 3, 3, 4), (1, 1, 2, 0, 1, 2)),
                                       ((1, 2, 3, 3, 4), (0, 2, 1, 1, 2, 1))])
def test_pad_modes(mode, shape, pad):
    _compare(lambda L, x: L.nn.functional.pad(x, pad, mode), _arr(*shape))


def test_pad_integer_and_channels_last():
    _compare(lambda L, x: L.nn.functional.pad(x.to(L.int64), (1, 2), "reflect"), _arr(2, 3, 4),
             grad=False)
    _compare(lambda L, x: L.nn.functional.pad(x.to(memory_format=L.channels_last), (1, 2, 1, 1),
                                              "replicate"), _arr(2, 3, 4, 5))
    _compare(lambda L, x: L.nn.functional.pad(x.to(memory_format=L.channels_last), (1, 2, 1, 1),
                                              "circular"), _arr(2, 3, 4, 5))


@pytest.mark.parametrize("kwargs", [
    dict(size=7), dict(scale_factor=1.7), dict(scale_factor=0.4),
    dict(scale_factor=2.0, recompute_scale_factor=True), dict(size=3, mode="area"),
    dict(scale_factor=0.5, mode="area"), dict(size=9, mode="nearest-exact"),
    dict(scale_factor=1.3, mode="linear"), dict(size=4, mode="linear", align_corners=True),
    dict(size=1, mode="linear", align_corners=True)])
def test_interpolate_1d(kwargs):
    _compare(lambda L, x: L.nn.functional.interpolate(x, **kwargs), _arr(2, 3, 6))


@pytest.mark.parametrize("kwargs", [
    dict(size=(5, 3)), dict(scale_factor=(1.5, 2.25)), dict(size=(8, 10), mode="nearest-exact"),
    dict(scale_factor=0.6, mode="bilinear"), dict(size=(7, 2), mode="bilinear",
                                                  align_corners=True),
    dict(scale_factor=(2.0, 0.5), mode="bilinear", recompute_scale_factor=True),
    dict(size=(2, 3), mode="area")])
def test_interpolate_2d(kwargs):
    _compare(lambda L, x: L.nn.functional.interpolate(x, **kwargs), _arr(2, 2, 4, 5))


def test_interpolate_uint8_and_channels_last():
    _compare(lambda L, x: L.nn.functional.interpolate((x * 20 + 100).to(L.uint8), size=(7, 3)),
             _arr(1, 2, 4, 5), grad=False)
    _compare(lambda L, x: L.nn.functional.interpolate(x.to(memory_format=L.channels_last),
                                                      scale_factor=1.5, mode="bilinear"),
             _arr(2, 3, 4, 5))


@pytest.mark.parametrize("kwargs", [dict(size=(9, 13)), dict(size=(3, 4), align_corners=True),
                                    dict(size=(8, 11), align_corners=True), dict(size=(10, 2)),
                                    dict(scale_factor=(1.7, 2.3)), dict(size=(1, 5))])
def test_interpolate_bilinear_uint8_is_exact(kwargs):
    """uint8 images go through ATen's fixed-point path: the same bytes."""
    image = (np.random.default_rng(2).random((2, 3, 5, 7)) * 255).astype(np.uint8)
    outs = [lib.nn.functional.interpolate(lib.tensor(image), mode="bilinear",
                                          **{"align_corners": False, **kwargs}).numpy()
            for lib in (torch, gt)]
    np.testing.assert_array_equal(outs[1], outs[0])


def test_bilinear_values():
    _compare(lambda L, a, b, w, c: L.nn.functional.bilinear(a, b, w, c), _arr(2, 3, 4),
             _arr(2, 3, 5, seed=1), _arr(6, 4, 5, seed=2), _arr(6, seed=3), atol=1e-4)
    _compare(lambda L, a, b, w: L.nn.functional.bilinear(a, b, w), _arr(4), _arr(3, seed=1),
             _arr(2, 4, 3, seed=2), atol=1e-4)


def test_conv_transpose_output_size_modules():
    """ConvTranspose's forward(output_size=...) picks the output_padding."""
    for lib_out in ([9], [1, 3, 10]):
        shapes = []
        for lib in (torch, gt):
            lib.manual_seed(0)
            conv = lib.nn.ConvTranspose1d(2, 3, 3, stride=2)
            shapes.append(tuple(conv(lib.ones(1, 2, 4), output_size=lib_out).shape))
        assert shapes[0] == shapes[1]
    for size in ([10, 9], [12, 9]):   # the second is out of range
        differential(lambda L: L.nn.ConvTranspose2d(2, 3, 3, stride=2)(L.ones(1, 2, 4, 4),
                                                                       output_size=size),
                     may_raise=size == [12, 9])


def test_feature_dropout_drops_whole_channels():
    x = gt.ones(50, 40, 3, 2)
    out = gt.nn.functional.dropout2d(x, 0.3).numpy()
    per_channel = out.reshape(50, 40, -1)
    assert ((per_channel == 0).all(-1) | (per_channel == per_channel[..., :1]).all(-1)).all()
    assert 0.6 < (per_channel[..., 0] != 0).mean() < 0.8
    np.testing.assert_allclose(per_channel[per_channel != 0], 1 / 0.7, rtol=1e-6)


def test_alpha_dropout_keeps_selu_statistics():
    gt.manual_seed(0)
    x = gt.randn(200000)
    out = gt.nn.functional.alpha_dropout(x, 0.2, training=True)
    assert abs(float(out.mean())) < 0.02 and abs(float(out.std()) - 1) < 0.02


# -- the aten ops each functional dispatches --------------------------------------------------

class _Log(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func).replace("aten.", "aten::").replace(".default", ""))
        return func(*args, **(kwargs or {}))


def _backend_calls(trace):
    """The ops that reached a backend kernel, outermost first: what a
    TorchDispatchMode sees in PyTorch (it sits just above the backend keys and
    does not see the ops a kernel calls inside)."""
    ops, inside = [], None
    for line in str(trace).splitlines():
        depth = len(line) - len(line.lstrip())
        if inside is not None and depth > inside:
            continue
        inside = None
        if line.rstrip().endswith("key=[CPU]"):
            ops.append(line.split("op=[")[1].split("]")[0])
            inside = depth
    return ops


DISPATCH_CASES = {      # fn(lib, x, t): t holds tensors made before the trace starts
    "batch_norm-train": lambda L, x, t: L.nn.functional.batch_norm(x, t["zeros3"], t["ones3"],
                                                                   training=True),
    "batch_norm-eval": lambda L, x, t: L.nn.functional.batch_norm(x, t["zeros3"], t["ones3"]),
    "instance_norm": lambda L, x, t: L.nn.functional.instance_norm(
        x, t["zeros3"], t["ones3"], t["ones3"], t["zeros3"]),
    "rms_norm": lambda L, x, t: L.nn.functional.rms_norm(x, (5, 6), t["ones56"]),
    "rms_norm-half": lambda L, x, t: L.nn.functional.rms_norm(x.half(), (6,)),
    "max_pool1d": lambda L, x, t: L.nn.functional.max_pool1d(x[0], 2, return_indices=True),
    "avg_pool1d": lambda L, x, t: L.nn.functional.avg_pool1d(x[0], 3, 2, 1),
    "adaptive_avg_pool1d": lambda L, x, t: L.nn.functional.adaptive_avg_pool1d(x[0], 1),
    "adaptive_max_pool1d": lambda L, x, t: L.nn.functional.adaptive_max_pool1d(x[0], 3),
    "conv_transpose1d": lambda L, x, t: L.nn.functional.conv_transpose1d(x[0, 0], t["w523"]),
    "interpolate-nearest": lambda L, x, t: L.nn.functional.interpolate(x, scale_factor=2),
    "interpolate-bilinear": lambda L, x, t: L.nn.functional.interpolate(x, size=(7, 9),
                                                                        mode="bilinear"),
    "interpolate-area": lambda L, x, t: L.nn.functional.interpolate(x, size=(3, 4),
                                                                    mode="area"),
    "pad-reflect": lambda L, x, t: L.nn.functional.pad(x, (1, 2, 1, 1), "reflect"),
    "pad-replicate-1d": lambda L, x, t: L.nn.functional.pad(x[0], (1, 2), "replicate"),
    "pad-circular": lambda L, x, t: L.nn.functional.pad(x, (1, 1, 2, 0), "circular"),
    "bilinear": lambda L, x, t: L.nn.functional.bilinear(x[0, 0], x[0, 1], t["w266"]),
    "dropout2d-inplace": lambda L, x, t: L.nn.functional.dropout2d(x.clone(), 0.5,
                                                                   inplace=True),
    "dropout1d-unbatched": lambda L, x, t: L.nn.functional.dropout1d(x[0], 0.5),
    "pixel_shuffle": lambda L, x, t: L.nn.functional.pixel_shuffle(x.reshape(2, 9, 5, 2), 3),
    "linear-2d": lambda L, x, t: L.nn.functional.linear(x[0, 0], t["ones56"], t["zeros3"][:1]),
    "linear-4d": lambda L, x, t: L.nn.functional.linear(x, t["ones56"]),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("fn", list(DISPATCH_CASES.values()), ids=list(DISPATCH_CASES))
def test_dispatched_ops_match_pytorch(fn, requires_grad):
    x = _arr(2, 3, 5, 6)
    helpers = {"zeros3": np.zeros(3, np.float32), "ones3": np.ones(3, np.float32),
               "ones56": np.ones((5, 6), np.float32), "w523": _arr(5, 2, 3, seed=1),
               "w266": _arr(2, 6, 6, seed=2)}
    logs = []
    for lib in (torch, gt):
        t = {k: lib.tensor(v) for k, v in helpers.items()}
        lx = lib.tensor(x, requires_grad=requires_grad)
        if lib is torch:
            with _Log() as log:
                fn(lib, lx, t)
            # autograd's "detach" of saved outputs is an engine detail, not the function's ops
            logs.append([op for op in log.ops if op != "aten::detach"])
        else:
            with dispatch_trace() as trace:
                fn(lib, lx, t)
            logs.append(_backend_calls(trace))
    assert logs[1] == logs[0]


# -- signatures -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "batch_norm", "instance_norm", "rms_norm", "interpolate", "upsample", "upsample_nearest",
    "upsample_bilinear", "pad", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "embedding", "max_pool1d_with_indices",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices"])
def test_functional_signatures(name):
    import inspect
    ours = inspect.signature(getattr(gt.nn.functional, name))
    theirs = inspect.signature(getattr(torch.nn.functional, name))
    assert list(ours.parameters) == list(theirs.parameters)
    for p in theirs.parameters.values():
        assert ours.parameters[p.name].default == p.default, p.name


@pytest.mark.parametrize("name", ["max_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d"])
def test_return_indices_dispatch(name):
    """The boolean-dispatched functionals pick the variant by return_indices, given
    by keyword or by position."""
    x = _arr(2, 3, 8, 8) if name.endswith("2d") else _arr(2, 3, 8)
    position = {"max_pool1d": (2, None, 0, 1, False, True)}.get(name, (3, True))
    for args, kwargs in (((2 if name == "max_pool1d" else 3,), {"return_indices": True}),
                         (position, {}), ((2 if name == "max_pool1d" else 3,), {})):
        outs = [getattr(lib.nn.functional, name)(lib.tensor(x), *args, **kwargs)
                for lib in (torch, gt)]
        assert isinstance(outs[1], tuple) == isinstance(outs[0], tuple)
    assert gt.nn.functional.max_pool1d.__name__ == "max_pool1d"
