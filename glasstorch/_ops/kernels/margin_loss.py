"""Margin losses (ATen's LossMultiMargin.cpp, LossMultiLabelMargin.cpp, Loss.cpp's
soft_margin_loss): what F.multi_margin_loss, F.multilabel_margin_loss and
F.soft_margin_loss call.

Input is (N, C), (C,) or a scalar (one class); y is each sample's target.

    multi_margin_loss       sum over j != y of w[y] * max(0, margin - x[y] + x[j])^p, / C
    multilabel_margin_loss  target rows list class indices up to the first -1 (is_target
                            marks them); sum over listed j and unlisted k of
                            max(0, 1 - (x[j] - x[k])), / C
    soft_margin_loss        log(1 + exp(-y x))   (CompositeExplicitAutograd, in ops)

``reduction``: 0 none (one loss per sample), 1 mean over the samples, 2 sum.
Their backward ops give each (j, y) pair's derivative times grad_output.
"""
from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..structured import TensorMeta
from . import impl, kernel, meta
from ._common import _array, _check_same_dtype, _sizes, _write

aten = ops.aten

NONE, MEAN, SUM = 0, 1, 2


def _check_input(self):
    shape = tuple(self._shape)
    if not ((len(shape) == 2 and shape[1] != 0) or (len(shape) == 1 and shape[0] != 0)
            or len(shape) == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {_sizes(shape)}")
    frames = shape[0] if len(shape) == 2 else 1
    dim = shape[-1] if shape else 1
    return frames, dim


def _check_floating(name, self):
    if self.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f'"{name}" not implemented for \'{self.dtype._short}\'')


def _rows(t, compute, frames, dim):
    return _array(t, compute).reshape(frames, dim)


# -- multi_margin_loss ---------------------------------------------------------------------

def _multi_margin_check(self, target, p, weight):
    if p not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    frames, dim = _check_input(self)
    if not (target.dim() <= 1 and target.numel() == frames):
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{frames}], but got {_sizes(target._shape)}. Input has shape "
                           f"{_sizes(self._shape)}.")
    if weight is not None and not (weight.dim() <= 1 and weight.numel() == dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{_sizes(weight._shape)}")
    return frames, dim


def _multi_margin_terms(self, target, p, margin, weight, frames, dim):
    """Per sample and class: the (weighted) hinge term, and where it is positive."""
    _check_floating("multi_margin_loss_cpu_kernel", self)
    if target.dtype is not dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._short}")
    if weight is not None:
        _check_same_dtype(self, weight)
    compute = self.dtype.numpy
    x = _rows(self, compute, frames, dim)
    y = target._np().reshape(-1)
    if ((y < 0) | (y >= dim)).any():
        raise RuntimeError("target out of range")
    rows = np.arange(frames)
    z = margin - x[rows, y][:, None] + x
    z[rows, y] = 0
    active = z > 0
    w = _array(weight, compute).reshape(-1)[y][:, None] if weight is not None else None
    return x, y, z, active, w


@meta("multi_margin_loss")
def multi_margin_loss_meta(self, target, p=1, margin=1, weight=None, reduction=MEAN):
    frames, _ = _multi_margin_check(self, target, p, weight)
    shape = (frames,) if reduction == NONE and target.dim() > 0 else ()
    return TensorMeta(shape, self.dtype)


@impl("multi_margin_loss")
def multi_margin_loss_impl(out, self, target, p=1, margin=1, weight=None, reduction=MEAN):
    frames, dim = _multi_margin_check(self, target, p, weight)
    _, _, z, active, w = _multi_margin_terms(self, target, p, float(margin), weight, frames, dim)
    h = np.where(active, z if p == 1 else z * z, 0)
    if w is not None:
        h = h * w
    per_sample = h.astype(np.float64).sum(-1) / dim
    if out.dim() > 0:
        _write(out, per_sample)
    elif reduction == MEAN:
        _write(out, per_sample.sum() / frames if frames else np.float64(0))
    else:
        _write(out, per_sample.sum())


@meta("multi_margin_loss_backward")
def multi_margin_loss_backward_meta(grad_output, self, target, p, margin, weight=None,
                                    reduction=MEAN):
    _multi_margin_check(self, target, p, weight)
    return TensorMeta(tuple(self._shape), self.dtype)


def _times_grad_output(grad, grad_output, reduction, frames):
    g = _array(grad_output, grad.dtype)
    if reduction != NONE or grad_output.dim() == 0:
        return grad * g.reshape(())
    return grad * g.reshape(frames, 1)


@impl("multi_margin_loss_backward")
def multi_margin_loss_backward_impl(grad_input, grad_output, self, target, p, margin,
                                    weight=None, reduction=MEAN):
    frames, dim = _multi_margin_check(self, target, p, weight)
    _, y, z, active, w = _multi_margin_terms(self, target, p, float(margin), weight, frames,
                                             dim)
    compute = self.dtype.numpy
    # an empty batch has no elements to scale (and nothing to divide by)
    g = compute.type(1.0 / max(frames * dim if reduction == MEAN else dim, 1))
    h = np.where(active, g if p == 1 else 2 * g * z, 0).astype(compute)
    if w is not None:
        h = h * w
    rows = np.arange(frames)
    h[rows, y] = -h.sum(-1)
    _write(grad_input, _times_grad_output(h, grad_output, reduction, frames)
           .reshape(grad_input._shape))


# -- multilabel_margin_loss ------------------------------------------------------------------

def _multilabel_check(self, target):
    frames, dim = _check_input(self)
    if self.dim() <= 1:
        ok = target.dim() <= 1 and target.numel() == dim
    else:
        ok = target.dim() == 2 and tuple(target._shape) == (frames, dim)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {_sizes(target._shape)} for input of "
                           f"size: {_sizes(self._shape)}")
    return frames, dim


def _multilabel_terms(self, target, frames, dim):
    """is_target per sample and class, and each (listed j, class k) hinge."""
    _check_floating("multilabel_margin_loss_forward_out_frame", self)
    if target.dtype is not dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._short}")
    compute = self.dtype.numpy
    x = _rows(self, compute, frames, dim)
    y = target._np().reshape(frames, dim)
    listed = np.zeros((frames, dim), dtype=bool)        # y[i, j] is one of the labels
    for i in range(frames):
        for j in range(dim):
            if y[i, j] < 0:
                break
            listed[i, j] = True
    if (listed & (y >= dim)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    is_target = np.zeros((frames, dim), dtype=bool)
    rows = np.repeat(np.arange(frames), dim).reshape(frames, dim)
    is_target[rows[listed], y[listed]] = True
    labels = np.clip(y, 0, dim - 1)
    # z[i, j, k] = 1 - x[i, y[i, j]] + x[i, k]  for listed j and non-target k
    z = 1 - np.take_along_axis(x, labels, 1)[:, :, None] + x[:, None, :]
    active = (z > 0) & listed[:, :, None] & ~is_target[:, None, :]
    return z, active, is_target, labels


@meta("multilabel_margin_loss_forward")
def multilabel_margin_loss_forward_meta(self, target, reduction):
    frames, _ = _multilabel_check(self, target)
    shape = (frames,) if reduction == NONE and self.dim() == 2 else ()
    return TensorMeta(shape, self.dtype), TensorMeta(tuple(target._shape), self.dtype)


@impl("multilabel_margin_loss_forward")
def multilabel_margin_loss_forward_impl(outs, self, target, reduction):
    output, is_target_out = outs
    frames, dim = _multilabel_check(self, target)
    z, active, is_target, _ = _multilabel_terms(self, target, frames, dim)
    per_sample = np.where(active, z, 0).astype(np.float64).sum((1, 2)) / dim
    _write(is_target_out, is_target.reshape(is_target_out._shape))
    if output.dim() > 0:
        _write(output, per_sample)
    elif reduction == MEAN:
        _write(output, per_sample.sum() / frames if frames else np.float64(np.nan))
    else:
        _write(output, per_sample.sum())


@meta("multilabel_margin_loss_backward")
def multilabel_margin_loss_backward_meta(grad_output, self, target, reduction, is_target):
    _multilabel_check(self, target)
    return TensorMeta(tuple(self._shape), self.dtype)


@impl("multilabel_margin_loss_backward")
def multilabel_margin_loss_backward_impl(grad_input, grad_output, self, target, reduction,
                                         is_target):
    frames, dim = _multilabel_check(self, target)
    _, active, _, labels = _multilabel_terms(self, target, frames, dim)
    compute = self.dtype.numpy
    # an empty batch has no elements to scale (and nothing to divide by)
    g = compute.type(1.0 / max(frames * dim if reduction == MEAN else dim, 1))
    counts = active.sum(2)                      # per listed j: how many k push it
    grad = (active.sum(1) * g).astype(compute)  # each active k gets +g
    rows = np.repeat(np.arange(frames), dim).reshape(frames, dim)
    np.add.at(grad, (rows, labels), -(counts * g).astype(compute))
    _write(grad_input, _times_grad_output(grad, grad_output, reduction, frames)
           .reshape(grad_input._shape))


@kernel("multilabel_margin_loss")
def multilabel_margin_loss(self, target, reduction=MEAN):
    return aten.multilabel_margin_loss_forward.default(self, target, reduction)[0]


# -- soft_margin_loss (CompositeExplicitAutograd, in ops as ATen's) --------------------------

def _reduce(loss, reduction):
    if reduction == MEAN:
        return aten.mean.default(loss)
    if reduction == SUM:
        return aten.sum.default(loss)
    return loss


@kernel("soft_margin_loss")
def soft_margin_loss(self, target, reduction=MEAN):
    return _reduce(aten.log1p.default(aten.exp.default(
        aten.mul.Tensor(aten.neg.default(self), target))), reduction)


@kernel("soft_margin_loss_out")
def soft_margin_loss_out(self, target, reduction=MEAN, *, out):
    result = soft_margin_loss(self, target, reduction)
    aten.resize_.default(out, list(result.shape))
    return aten.copy_.default(out, result)


@kernel("soft_margin_loss_backward")
def soft_margin_loss_backward(grad_output, self, target, reduction):
    """-norm * target * z / (1 + z) * grad_output with z = exp(-target * self)."""
    norm = 1.0 if reduction != MEAN else 1.0 / self.numel() if self.numel() else float("inf")
    z = aten.exp.default(aten.mul.Tensor(aten.neg.default(target), self))
    grad = aten.mul.Scalar(aten.mul.Tensor(target, z), -norm)
    return aten.mul.Tensor(aten.div.Tensor(grad, aten.add.Scalar(z, 1)), grad_output)


@kernel("soft_margin_loss_backward_out")
def soft_margin_loss_backward_out(grad_output, self, target, reduction, *, grad_input):
    result = soft_margin_loss_backward(grad_output, self, target, reduction)
    aten.resize_.default(grad_input, list(result.shape))
    return aten.copy_.default(grad_input, result)
