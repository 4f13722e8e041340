"""Losses (ATen's Loss.cpp, LossNLL.cpp, LossNLL2d.cpp, BinaryOps for the pointwise parts).

``reduction`` is an int, as in ATen: 0 = none, 1 = mean, 2 = sum
(``torch.nn._reduction.get_enum``).

    nll_loss_forward(x, t, w)   x: (N, C) or (C,), t: (N,) or ()
        loss[i] = -w[t[i]] * x[i, t[i]]          (0 where t[i] == ignore_index)
        mean = sum(loss) / sum(w[t[i]]),  total_weight = sum(w[t[i]])
    nll_loss2d_forward          the same over (N, C, H, W) / (N, H, W)
    mse_loss        (a - b)^2
    smooth_l1_loss  |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta
    huber_loss      |d| < delta ? 0.5 d^2 : delta (|d| - 0.5 delta)
    binary_cross_entropy          -w (t log x + (1 - t) log(1 - x)),  logs clamped at -100
    binary_cross_entropy_with_logits  (1 - t) x - (1 + (pw - 1) t) log_sigmoid(x), times w

``nll_loss_nd``, ``nll_loss``, ``nll_loss2d``, ``cross_entropy_loss`` and ``l1_loss``
are CompositeImplicitAutograd, written as PyTorch writes them.

Their backward ops (mse/smooth_l1/huber/binary_cross_entropy/nll_loss(2d)
_backward: the losses' derivatives times grad_output) are at the end.
"""
from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import contiguous_format
from ..._dispatcher.dispatcher import ops
from ..structured import broadcast_shapes, elementwise_strides, result_type, TensorMeta
from . import impl, kernel, meta, native
from ._common import _array, _scalar_t, _sizes, _write
from ._inner import inner, observed
from .cascade_sum import _ceil_log2, cascade_sum

aten = ops.aten

NONE, MEAN, SUM = 0, 1, 2


def _reduce(values, reduction, compute):
    if reduction == NONE:
        return values
    if reduction == SUM:
        return values.sum(dtype=compute)
    if values.size == 0:
        return compute.type(np.nan)
    return values.mean(dtype=compute)


def _acc(compute):
    """Accumulate float32 sums in float64: closer to PyTorch's cascaded sum."""
    return np.dtype(np.float64) if compute == np.float32 else compute


# -- nll_loss ---------------------------------------------------------------------------

def _check_target_dtype(target):
    if target.dtype not in (dt.int64, dt.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{target.dtype._short}")


def _check_weight(weight, n_classes):
    if weight is not None and (weight.numel() != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: "
                           f"{_sizes(weight._shape)}")


@meta("nll_loss_forward")
def nll_loss_forward_meta(self, target, weight, reduction, ignore_index):
    ndim = len(self._shape)
    if ndim not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    if len(target._shape) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    no_batch = ndim == 1 and len(target._shape) == 0
    if not (no_batch or self._shape[0] == (target._shape[0] if target._shape else 1)):
        raise RuntimeError(f"size mismatch (got input: {_sizes(self._shape)}, target: "
                           f"{_sizes(target._shape)})")
    _check_target_dtype(target)
    _check_weight(weight, self._shape[-1])
    if reduction == NONE and ndim == 2:
        out_shape = (self._shape[0],)
    else:
        out_shape = ()
    return (TensorMeta(out_shape, self.dtype), TensorMeta((), self.dtype))


def _nll_compute(out, total_out, x, t, weight, reduction, ignore_index, class_axis, compute):
    """x: (N, C, *) log-probabilities, t: (N, *) class indices."""
    n_classes = x.shape[class_axis]
    t = t.astype(np.int64, copy=False)
    ignored = t == ignore_index
    bad = (~ignored) & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    safe_t = np.where(ignored, 0, t)
    picked = np.take_along_axis(x, np.expand_dims(safe_t, class_axis), axis=class_axis)
    picked = np.squeeze(picked, axis=class_axis).astype(compute, copy=False)
    if weight is not None:
        w = weight._np().astype(compute, copy=False)[safe_t]
    else:
        w = np.ones(safe_t.shape, dtype=compute)
    w = np.where(ignored, compute.type(0), w)
    losses = -(picked * w)
    if reduction == NONE:
        np.copyto(out._np(), losses, casting="unsafe")
        total_out._np()[()] = 0
        return
    if class_axis == 1 and (x.ndim == 2 and x.dtype in (np.float32, np.float64)
                            or compute in _REDUCED):
        s, total = _nll_cascade(-losses, w, ignored)     # nll_loss_forward: ATen's order
        if weight is None:
            total = compute.type(ignored.size - np.count_nonzero(ignored))
    else:
        acc = _acc(compute)
        total = w.sum(dtype=acc)
        s = losses.sum(dtype=acc)
    total_out._np()[()] = total
    if reduction == SUM:
        out._np()[()] = s
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            out._np()[()] = compute.type(s) / compute.type(total)    # 0 / 0: the CPU's NaN


_REDUCED = (dt.float16.numpy, dt.bfloat16.numpy)


def _nll_cascade(terms, weights, ignored):
    """nll_loss_forward's (and nll_loss2d's, targets in (batch, position) order) loss
    and weight sums as LossNLL.cpp adds them: 8 levels of partial sums in
    scalar_t, carried up every 2^p targets (native.c's gt_nll_cascade for float32
    and float64, else the same loop here: float16/bfloat16 round every addition)."""
    power = max(4, _ceil_log2(terms.size) // 8)
    terms = np.ascontiguousarray(terms).reshape(-1)
    weights = np.ascontiguousarray(weights).reshape(-1)
    ignored = np.ascontiguousarray(ignored, dtype=np.uint8).reshape(-1)
    if native.library() is not None and terms.dtype not in _REDUCED:
        return native.nll_cascade(terms, weights, ignored, power)
    kind = terms.dtype.type
    loss, weight = [kind(0)] * 8, [kind(0)] * 8
    mask = (1 << power) - 1
    for b in range(terms.size):
        if ignored[b]:
            continue
        loss[0] = loss[0] - terms[b]
        weight[0] = weight[0] + weights[b]
        for j in range(7):
            if b & (mask << (j * power)):
                break
            loss[j + 1], weight[j + 1] = loss[j + 1] + loss[j], weight[j + 1] + weight[j]
            loss[j], weight[j] = kind(0), kind(0)
    total_loss, total_weight = kind(0), kind(0)
    for j in range(8):
        total_loss, total_weight = total_loss + loss[j], total_weight + weight[j]
    return total_loss, total_weight


@impl("nll_loss_forward")
def nll_loss_forward_impl(outs, self, target, weight, reduction, ignore_index):
    out, total = outs
    compute = _scalar_t(self.dtype)
    x = self._np()
    t = target._np()
    if x.ndim == 1:
        x = x[None]
        t = t.reshape(1)
    _nll_compute(out, total, x, t, weight, reduction, ignore_index, 1, compute)


@meta("nll_loss2d_forward")
def nll_loss2d_forward_meta(self, target, weight, reduction, ignore_index):
    if len(self._shape) != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input "
                           f"of dimension: {len(self._shape)}")
    if len(target._shape) != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {len(target._shape)}")
    n, c, h, w = self._shape
    if target._shape[0] != n or target._shape[1] != h or target._shape[2] != w:
        raise RuntimeError(f"input and target batch or spatial sizes don't match: target "
                           f"{_sizes(target._shape)}, input {_sizes(self._shape)}")
    _check_target_dtype(target)
    _check_weight(weight, c)
    out_shape = (n, h, w) if reduction == NONE else ()
    return (TensorMeta(out_shape, self.dtype), TensorMeta((), self.dtype))


@impl("nll_loss2d_forward")
def nll_loss2d_forward_impl(outs, self, target, weight, reduction, ignore_index):
    out, total = outs
    _nll_compute(out, total, self._np(), target._np(), weight, reduction, ignore_index, 1,
                 _scalar_t(self.dtype))


@kernel("nll_loss")
def nll_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    return aten.nll_loss_forward.default(self, target, weight, reduction, ignore_index)[0]


@kernel("nll_loss2d")
def nll_loss2d(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    return aten.nll_loss2d_forward.default(self, target, weight, reduction, ignore_index)[0]


@kernel("nll_loss_nd")
def nll_loss_nd(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    ndim = len(self._shape)
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    if ndim != 1 and self._shape[0] != (target._shape[0] if target._shape else 1):
        raise ValueError(f"Expected input batch_size ({self._shape[0]}) to match target "
                         f"batch_size ({target._shape[0] if target._shape else 1}).")
    if ndim in (1, 2):
        return aten.nll_loss.default(self, target, weight, reduction, ignore_index)
    if ndim == 4:
        return aten.nll_loss2d.default(self, target, weight, reduction, ignore_index)
    n, c = self._shape[0], self._shape[1]
    out_size = [n] + list(self._shape[2:])
    if list(target._shape[1:]) != list(self._shape[2:]):
        raise RuntimeError(f"Expected target size {_sizes(out_size)}, got {_sizes(target._shape)}")
    input_ = aten.contiguous.default(self)
    target_ = aten.contiguous.default(target)
    input_ = aten.view.default(input_, [n, c, 1, -1] if input_.numel() > 0 else [n, c, 0, 0])
    target_ = aten.view.default(target_, [n, 1, -1] if target_.numel() > 0 else [n, 0, 0])
    out = aten.nll_loss2d.default(input_, target_, weight, reduction, ignore_index)
    return out if reduction != NONE else aten.view.default(out, out_size)


# -- cross entropy ------------------------------------------------------------------------

def _weight_view(weight, ndim, class_dim):
    shape = [1] * ndim
    shape[class_dim] = weight._shape[0]
    return aten.view.default(weight, shape)


def _cross_entropy_prob_target(self, target, weight, reduction, label_smoothing):
    class_dim = 0 if len(self._shape) == 1 else 1
    n_classes = self._shape[class_dim]
    if weight is not None and not (len(weight._shape) == 1 and weight.numel() == n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{_sizes(weight._shape)}")
    input = aten.log_softmax.int(self, class_dim, self.dtype)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{label_smoothing}")
        target = aten.add.Scalar(aten.mul.Scalar(target, 1 - label_smoothing),
                                 label_smoothing / n_classes)
    prod = aten.mul.Tensor(input, target)
    if weight is not None:
        w = _weight_view(weight, len(input._shape), 1) if len(input._shape) > 1 else weight
        prod = aten.mul.Tensor(prod, w)
    if reduction == MEAN:
        total = aten.sum.default(prod)
        if input.numel() == 0:
            return aten.neg.default(aten.fill_.Scalar(total, float("nan")))
        return aten.div.Scalar(aten.neg.default(total), input.numel() // n_classes)
    if reduction == SUM:
        return aten.neg.default(aten.sum.default(prod))
    if reduction == NONE:
        return aten.neg.default(aten.sum.dim_IntList(prod, [class_dim]))
    raise RuntimeError(f"Invalid reduction type encountered in cross_entropy: {reduction}")


def _cross_entropy_label_smoothing(self, target, weight, reduction, ignore_index,
                                   label_smoothing):
    class_dim = 0 if len(self._shape) == 1 else 1
    input = aten.log_softmax.int(self, class_dim, self.dtype)
    nllloss = aten.nll_loss_nd.default(input, target, weight, reduction, ignore_index)
    n_classes = input._shape[class_dim]
    if weight is not None:
        w = _weight_view(weight, len(input._shape), class_dim)
        smooth_loss = aten.neg.default(aten.sum.dim_IntList(aten.mul.Tensor(input, w),
                                                            [class_dim]))
    else:
        smooth_loss = aten.neg.default(aten.sum.dim_IntList(input, [class_dim]))
    ignore_mask = aten.eq.Scalar(target, ignore_index)
    aten.masked_fill_.Scalar(smooth_loss, ignore_mask, 0.0)
    if reduction == MEAN:
        if weight is not None:
            kept = aten.masked_select.default(target, aten.bitwise_not.default(ignore_mask))
            gathered = aten.gather.default(weight, 0, aten.flatten.using_ints(kept))
            ret = aten.div.Tensor(aten.sum.default(smooth_loss), aten.sum.default(gathered))
        else:
            true_mask = aten.bitwise_not.default(ignore_mask)
            ret = aten.div.Tensor(aten.sum.default(smooth_loss), aten.sum.default(true_mask))
    elif reduction == SUM:
        ret = aten.sum.default(smooth_loss)
    elif reduction == NONE:
        ret = smooth_loss
    else:
        raise RuntimeError(f"Invalid reduction type encountered in cross_entropy: {reduction}")
    smooth = aten.mul.Scalar(ret, label_smoothing / n_classes)   # PyTorch evaluates this first
    return aten.add.Tensor(aten.mul.Scalar(nllloss, 1 - label_smoothing), smooth)


@kernel("cross_entropy_loss")
def cross_entropy_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100,
                       label_smoothing=0.0):
    if tuple(self._shape) == tuple(target._shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {target.dtype._short}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_prob_target(self, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{label_smoothing}")
        return _cross_entropy_label_smoothing(self, target, weight, reduction, ignore_index,
                                              label_smoothing)
    class_dim = 0 if len(self._shape) == 1 else 1
    return aten.nll_loss_nd.default(aten.log_softmax.int(self, class_dim, self.dtype), target,
                                    weight, reduction, ignore_index)


# -- pointwise losses ---------------------------------------------------------------------

def _pointwise_loss_meta(self, target, reduction, *extra):
    dtype = result_type(self, target)
    shape = broadcast_shapes(self._shape, target._shape, *[t._shape for t in extra
                                                          if t is not None])
    if reduction == NONE:
        return TensorMeta(shape, dtype)
    return TensorMeta((), dtype)


def _finish(out, values, reduction, compute):
    if reduction == NONE:
        np.copyto(out._np(), values, casting="unsafe")
    elif out.dtype in (dt.float16, dt.bfloat16):
        # apply_loss_reduction: the loss tensor (rounded to the dtype), then its mean / sum
        _reduce_dispatched(out, values, reduction)
    else:
        out._np()[()] = _reduce(values, reduction, _acc(compute))


@meta("mse_loss")
def mse_loss_meta(self, target, reduction=MEAN):
    return _pointwise_loss_meta(self, target, reduction)


@impl("mse_loss")
def mse_loss_impl(out, self, target, reduction=MEAN):
    """mse_kernel's ``diff * diff`` with ``diff = a - b``, both in scalar_t (float16
    and bfloat16 round the difference, then the square)."""
    compute = _scalar_t(out.dtype)
    values = np.square(np.subtract(self._np(), target._np(), dtype=compute))
    if reduction == NONE or out.dtype not in (dt.float32, dt.float64):
        _finish(out, values, reduction, compute)
    elif observed():
        _reduce_dispatched(out, values, reduction)
    else:   # what mean_out / sum_out compute: the cascade sum (then / numel), bit for bit
        total = np.empty((), compute)
        cascade_sum(np.asarray(values), total, tuple(range(values.ndim)))
        with np.errstate(invalid="ignore"):
            out._np()[()] = total if reduction == SUM else total / compute.type(values.size)


def _reduce_dispatched(out, values, reduction):
    """What ATen's mse_loss_out dispatches to reduce, for an observer: the
    result sized (``resize_``, a no-op here), the unreduced loss's buffer
    (``empty``), then ``mean_out`` / ``sum_out`` of it into the result."""
    aten.resize_(out, list(out._shape))
    loss = aten.empty.memory_format(list(values.shape), dtype=out.dtype, device=out.device)
    loss._np()[...] = values
    if reduction == MEAN:
        aten.mean.out(loss, [], out=out)
    else:
        aten.sum.IntList_out(loss, [], out=out)


@kernel("mse_loss_backward")
def mse_loss_backward(grad_output, self, target, reduction):
    """ATen's CPU mse_loss_backward: the grad_input overload writes into
    ``zeros_like(self)`` (contiguous, as ATen's LEGACY_CONTIGUOUS_MEMORY_FORMAT)."""
    grad_input = aten.zeros_like(self, memory_format=contiguous_format)
    return aten.mse_loss_backward.grad_input(grad_output, self, target, reduction,
                                             grad_input=grad_input)


@meta("smooth_l1_loss")
def smooth_l1_loss_meta(self, target, reduction=MEAN, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _pointwise_loss_meta(self, target, reduction)


@impl("smooth_l1_loss")
def smooth_l1_loss_impl(out, self, target, reduction=MEAN, beta=1.0):
    compute = out.dtype.opmath
    z = np.abs(np.subtract(self._np(), target._np(), dtype=compute))
    if beta == 0:
        values = z
    else:
        b = compute.type(beta)
        values = np.where(z < b, compute.type(0.5) * z * z / b, z - compute.type(0.5) * b)
    _finish(out, values, reduction, compute)


@meta("huber_loss")
def huber_loss_meta(self, target, reduction=MEAN, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return _pointwise_loss_meta(self, target, reduction)


@impl("huber_loss")
def huber_loss_impl(out, self, target, reduction=MEAN, delta=1.0):
    compute = out.dtype.opmath
    z = np.abs(np.subtract(self._np(), target._np(), dtype=compute))
    dl = compute.type(delta)
    values = np.where(z < dl, compute.type(0.5) * z * z, dl * (z - compute.type(0.5) * dl))
    _finish(out, values, reduction, compute)


@meta("binary_cross_entropy")
def binary_cross_entropy_meta(self, target, weight=None, reduction=MEAN):
    return _pointwise_loss_meta(self, target, reduction, weight)


@impl("binary_cross_entropy")
def binary_cross_entropy_impl(out, self, target, weight=None, reduction=MEAN):
    compute = out.dtype.opmath
    x = self._np().astype(compute, copy=False)
    if x.size and ((x < 0).any() or (x > 1).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    t = target._np().astype(compute, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_x = np.maximum(np.log(x), compute.type(-100))
        log_1mx = np.maximum(np.log(compute.type(1) - x), compute.type(-100))
    values = (t - 1) * log_1mx - t * log_x
    if weight is not None:
        values = values * weight._np().astype(compute, copy=False)
    _finish(out, values, reduction, compute)


@meta("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits_meta(self, target, weight=None, pos_weight=None,
                                          reduction=MEAN):
    return _pointwise_loss_meta(self, target, reduction, weight, pos_weight)


@impl("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits_impl(out, self, target, weight=None, pos_weight=None,
                                          reduction=MEAN):
    """ATen's composite, op by op: ``log_sigmoid(x)`` (computed in opmath, rounded
    once), times ``(pw - 1) * t + 1``, ``(1 - t) * x`` minus it, times w; each op
    a tensor of the dtype, so float16/bfloat16 round after every step."""
    compute = _scalar_t(out.dtype)
    x = self._np().astype(compute, copy=False)
    t = target._np().astype(compute, copy=False)
    wide = x.astype(out.dtype.opmath, copy=False)
    # log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))
    log_sig = (np.minimum(wide, 0) - np.log1p(np.exp(-np.abs(wide)))).astype(compute, copy=False)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight._np().astype(compute, copy=False) - 1) * t + 1)
    values = (1 - t) * x - log_sig
    if weight is not None:
        values = values * weight._np().astype(compute, copy=False)
    _finish(out, values, reduction, compute)


@kernel("l1_loss")
def l1_loss(self, target, reduction=MEAN):
    loss = aten.abs.default(aten.sub.Tensor(self, target))
    if reduction == MEAN:
        return aten.mean.default(loss)
    if reduction == SUM:
        return aten.sum.default(loss)
    return loss


# -- kl_div ------------------------------------------------------------------------------

def _apply_loss_reduction(loss, reduction):
    """ATen's apply_loss_reduction: any other value leaves the loss unreduced."""
    if reduction == MEAN:
        return aten.mean.default(loss)
    if reduction == SUM:
        return aten.sum.default(loss)
    return loss


@kernel("kl_div")
def kl_div(self, target, reduction=MEAN, *, log_target=False):
    """CompositeImplicitAutograd:  exp(t) (t - x)  (log_target), else  xlogy(t, t) - t x."""
    if self.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (self.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        difference = aten.sub.Tensor(target, self)
        output = aten.mul.Tensor(aten.exp.default(target), difference)
    else:
        cross = aten.mul.Tensor(target, self)    # PyTorch evaluates this operand first
        output = aten.sub.Tensor(aten.xlogy.Tensor(target, target), cross)
    return _apply_loss_reduction(output, reduction)


# -- margin and embedding losses (CompositeImplicitAutograd, ATen's Loss.cpp) -------------
#
#     margin_ranking_loss    max(0, -t (x1 - x2) + margin)
#     hinge_embedding_loss   t == 1: x,   t == -1: max(0, margin - x)
#     cosine_embedding_loss  t == 1: 1 - cos(x1, x2),   t == -1: max(0, cos(x1, x2) - margin)
#     triplet_margin_loss    max(0, margin + d(a, p) - d(a, n)),  d = pairwise_distance
#     poisson_nll_loss       exp(x) - t x  (log_input),  else x - t log(x + eps);
#                            full adds Stirling's t log t - t + log(2 pi t) / 2 where t > 1

_EPSILON = 1e-12


def _scalar_minus(value, tensor):
    """``value - tensor`` as ATen's Scalar-Tensor operator computes it."""
    return aten.sub_.Tensor(aten.fill_.Scalar(aten.empty_like.default(tensor), value), tensor)


@kernel("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    difference = aten.sub.Tensor(input1, input2)
    unclamped = aten.add.Scalar(aten.mul.Tensor(aten.neg.default(target), difference), margin)
    return _apply_loss_reduction(aten.clamp_min_.default(unclamped, 0), reduction)


@kernel("hinge_embedding_loss")
def hinge_embedding_loss(self, target, margin=1.0, reduction=MEAN):
    zeros = aten.zeros_like.default(self)
    margin_clamp = aten.clamp_min_.default(_scalar_minus(margin, self), 0)
    output_margin = aten.where.self(aten.ne.Scalar(target, 1), margin_clamp, zeros)
    output_self = aten.where.self(aten.ne.Scalar(target, -1), self, zeros)
    return _apply_loss_reduction(aten.add.Tensor(output_margin, output_self), reduction)


@kernel("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    target_dim = len(target._shape)
    if target_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    wanted = 2 if target_dim == 1 else 1
    if len(input1._shape) != wanted or len(input2._shape) != wanted:
        raise RuntimeError(f"{target_dim}D target tensor expects {wanted}D input tensors, but "
                           f"found inputs with sizes {_sizes(input1._shape)} and "
                           f"{_sizes(input2._shape)}.")
    prod_sum = aten.sum.dim_IntList(aten.mul.Tensor(input1, input2), [target_dim])
    mag_square1 = aten.add.Scalar(aten.sum.dim_IntList(aten.mul.Tensor(input1, input1),
                                                       [target_dim]), _EPSILON)
    mag_square2 = aten.add.Scalar(aten.sum.dim_IntList(aten.mul.Tensor(input2, input2),
                                                       [target_dim]), _EPSILON)
    cos = aten.div.Tensor(prod_sum,
                          aten.sqrt_.default(aten.mul.Tensor(mag_square1, mag_square2)))
    zeros = aten.zeros_like.default(cos)
    positive = _scalar_minus(1, cos)
    negative = aten.clamp_min_.default(aten.sub.Scalar(cos, margin), 0)
    output = aten.add.Tensor(aten.where.self(aten.eq.Scalar(target, 1), positive, zeros),
                             aten.where.self(aten.eq.Scalar(target, -1), negative, zeros))
    return _apply_loss_reduction(output, reduction)


@kernel("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=MEAN):
    dims = (len(anchor._shape), len(positive._shape), len(negative._shape))
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {dims[0]}D, positive "
                           f"{dims[1]}D, and negative {dims[2]}D inputs")
    dist_pos = aten.pairwise_distance.default(anchor, positive, p, eps)
    dist_neg = aten.pairwise_distance.default(anchor, negative, p, eps)
    if swap:   # the harder of the two negatives
        dist_neg = aten.minimum.default(dist_neg,
                                        aten.pairwise_distance.default(positive, negative, p,
                                                                       eps))
    output = aten.clamp_min.default(aten.sub.Tensor(aten.add.Scalar(dist_pos, margin), dist_neg),
                                    0)
    return _apply_loss_reduction(output, reduction)


@kernel("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    if log_input:
        product = aten.mul.Tensor(target, input)
        loss = aten.sub.Tensor(aten.exp.default(input), product)
    else:
        loss = aten.sub.Tensor(input, aten.mul.Tensor(
            target, aten.log.default(aten.add.Scalar(input, eps))))
    if full:
        half_log = aten.mul.Scalar(aten.log.default(aten.mul.Scalar(target, 2 * np.pi)), 0.5)
        stirling = aten.add.Tensor(aten.sub.Tensor(aten.mul.Tensor(
            target, aten.log.default(target)), target), half_log)
        loss = aten.add_.Tensor(loss, aten.masked_fill.Scalar(
            stirling, aten.le.Scalar(target, 1), 0))
    return _apply_loss_reduction(loss, reduction)


# -- backward ops of the losses ------------------------------------------------------------

def _loss_backward_meta(grad_output, self, target, *extra):
    """The gradient has self's shape and dtype; the other operands broadcast to it."""
    shape = tuple(self._shape)
    for t in (target, grad_output, *extra):
        if t is not None and broadcast_shapes(shape, t._shape) != shape:
            raise RuntimeError(f"output with shape {_sizes(shape)} doesn't match the broadcast "
                               f"shape {_sizes(broadcast_shapes(shape, t._shape))}")
    return shape


def _norm(reduction, self, compute):
    return compute.type(1 / self.numel()) if reduction == MEAN and self.numel() else \
        compute.type(1)


@meta("mse_loss_backward")
def mse_loss_backward_meta(grad_output, self, target, reduction):
    return TensorMeta(_loss_backward_meta(grad_output, self, target), self.dtype)


@impl("mse_loss_backward")
def mse_loss_backward_impl(out, grad_output, self, target, reduction):
    """2 (self - target) grad_output, over numel for a mean."""
    compute = out.dtype.opmath
    norm = 2 * _norm(reduction, self, compute)
    diff = _array(self, compute) - _array(target, compute)
    _write(out, norm * diff * _array(grad_output, compute))


@meta("smooth_l1_loss_backward")
def smooth_l1_loss_backward_meta(grad_output, self, target, reduction, beta):
    return TensorMeta(_loss_backward_meta(grad_output, self, target), self.dtype)


@impl("smooth_l1_loss_backward")
def smooth_l1_loss_backward_impl(out, grad_output, self, target, reduction, beta):
    """d = self - target: -1 for d <= -beta, 1 for d >= beta, d / beta between
    (PyTorch tests the bounds in that order, so beta = 0 and d = 0 gives -1)."""
    compute = out.dtype.opmath
    norm = _norm(reduction, self, compute)
    d = _array(self, compute) - _array(target, compute)
    g = np.broadcast_to(_array(grad_output, compute), d.shape) * norm
    b = compute.type(beta)
    with np.errstate(divide="ignore", invalid="ignore"):
        res = np.where(d <= -b, -g, np.where(d >= b, g, d * g / b))
    _write(out, res)


@meta("huber_loss_backward")
def huber_loss_backward_meta(grad_output, self, target, reduction, delta):
    return TensorMeta(_loss_backward_meta(grad_output, self, target), self.dtype)


@impl("huber_loss_backward")
def huber_loss_backward_impl(out, grad_output, self, target, reduction, delta):
    """d = self - target: -delta below -delta, delta above delta, d between."""
    compute = out.dtype.opmath
    norm = _norm(reduction, self, compute)
    d = _array(self, compute) - _array(target, compute)
    g = np.broadcast_to(_array(grad_output, compute), d.shape) * norm
    dl = compute.type(delta)
    _write(out, np.where(d < -dl, -g * dl, np.where(d > dl, g * dl, d * g)))


@meta("binary_cross_entropy_backward")
def binary_cross_entropy_backward_meta(grad_output, self, target, weight=None, reduction=MEAN):
    shape = _loss_backward_meta(grad_output, self, target, weight)
    return TensorMeta(shape, self.dtype, elementwise_strides(shape, [self]))


@impl("binary_cross_entropy_backward")
def binary_cross_entropy_backward_impl(out, grad_output, self, target, weight=None,
                                       reduction=MEAN):
    """grad_output (x - t) / max(x (1 - x), 1e-12), times weight, over numel for
    a mean."""
    compute = out.dtype.opmath
    x, t = _array(self, compute), _array(target, compute)
    res = _array(grad_output, compute) * (x - t) / \
        np.maximum((1 - x) * x, compute.type(1e-12))
    if weight is not None:
        res = res * _array(weight, compute)
    if reduction == MEAN:
        res = res / compute.type(self.numel())
    _write(out, res)


# -- nll_loss ---------------------------------------------------------------------------

def _nll_backward_meta(name, grad_output, self, target, weight, reduction, total_weight,
                       batch_shape):
    if reduction == NONE and len(self._shape) > 1:
        if tuple(grad_output._shape) != tuple(batch_shape):
            raise RuntimeError(f"{name}: Expected a tensor of dimension {len(batch_shape)} and "
                               f"tensor.size[0] == {batch_shape[0]} but got: dimension "
                               f"{len(grad_output._shape)} and tensor.size[0] = "
                               f"{grad_output._shape[0] if grad_output._shape else 1}")
    elif grad_output.numel() != 1:
        raise RuntimeError(f"{name}: Expected a single element grad_output tensor, but got: "
                           f"{_sizes(grad_output._shape)}")
    if total_weight.numel() != 1:
        raise RuntimeError(f"expected total_weight to be a single element tensor, got: "
                           f"{_sizes(total_weight._shape)} ({total_weight.numel()} elements)")
    return TensorMeta(self._shape, self.dtype)


def _nll_backward(out, grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """Only the target class of each position gets a gradient:
    -weight[t] * grad_output (/ total_weight for a mean); ignored positions get 0.
    ATen's kernel clears the gradient first (``zero_``), then scatters into it."""
    inner.zero_(out)
    compute = out.dtype.opmath
    x_shape = self._shape if len(self._shape) > 1 else (1,) + tuple(self._shape)
    t = target._np().astype(np.int64).reshape((x_shape[0],) + tuple(x_shape[2:]))
    ignored = t == ignore_index
    safe_t = np.where(ignored, 0, t)
    w = _array(weight, compute)[safe_t] if weight is not None else np.ones(t.shape, compute)
    g = _array(grad_output, compute)
    with np.errstate(divide="ignore", invalid="ignore"):
        if reduction == MEAN:
            g = g / _array(total_weight, compute)
        values = w * -g.reshape(g.shape if reduction == NONE and len(self._shape) > 1 else ())
    values = np.where(ignored, compute.type(0), values)    # (even when total_weight is 0)
    res = np.zeros(x_shape, dtype=compute)
    np.put_along_axis(res, np.expand_dims(safe_t, 1), np.expand_dims(values, 1), axis=1)
    _write(out, res.reshape(self._shape))


@meta("nll_loss_backward")
def nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index,
                           total_weight):
    if len(self._shape) not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    return _nll_backward_meta("nll_loss_backward", grad_output, self, target, weight, reduction,
                              total_weight, self._shape[:1])


@meta("nll_loss2d_backward")
def nll_loss2d_backward_meta(grad_output, self, target, weight, reduction, ignore_index,
                             total_weight):
    if len(self._shape) != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input "
                           f"of dimension: {len(self._shape)}")
    return _nll_backward_meta("nll_loss2d_backward", grad_output, self, target, weight,
                              reduction, total_weight, target._shape)


impl("nll_loss_backward")(_nll_backward)
impl("nll_loss2d_backward")(_nll_backward)
