"""Connectionist temporal classification loss (ATen's LossCTC.cpp): what F.ctc_loss
and nn.CTCLoss call.

    _ctc_loss(log_probs (T, N, C), targets, input_lengths, target_lengths, blank)
        -> (neg_log_likelihood (N,), log_alpha (N, T, 2 * max target length + 1))

Graves et al. (2006): the target l of length L is extended with blanks to
l' = (blank, l1, blank, l2, ..., lL, blank) of length 2L + 1.  The forward
variables (in log space, eq. 6-7)

    alpha_0(0) = y_0(blank),  alpha_0(1) = y_0(l1)
    alpha_t(s) = log(e^alpha_{t-1}(s) + e^alpha_{t-1}(s-1) [+ e^alpha_{t-1}(s-2)]) + y_t(l's)

(the s-2 term only where l's != l'{s-2}) give the likelihood
alpha_{T-1}(2L) (+) alpha_{T-1}(2L-1) (eq. 8).  The backward op runs the
backward variables beta the same way from the end, log-sums alpha + beta per
label and time (eq. 16), and returns exp(y) - exp(sum + nll - y) times the
incoming gradient per batch element.  Entries of log_alpha that ATen leaves
unwritten (times past an input length, states past its target's) are -inf
here.

ctc_loss.IntList / ctc_loss.Tensor are CompositeImplicitAutograd: unbatched
inputs get a batch dim, zero_infinity replaces infinite losses by 0, then the
reduction (mean divides each loss by its target length first).
"""
from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..._tensor import is_tensor_subclass_like
from ..structured import empty_tensor
from . import kernel
from ._common import _array, _from_array, _write

aten = ops.aten

_WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"


def _lengths(values):
    return [int(v) for v in values]


def _check(log_probs, targets, input_lengths, target_lengths, blank):
    """ctc_loss_allocate_outputs' checks; the target offsets per batch element."""
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional "
                           f"tensor for argument #1 'log_probs' {_WHERE}")
    max_input, batch, labels = log_probs._shape
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional "
                           f"tensor for argument #2 'targets' {_WHERE}")
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                               f"{length} {_WHERE}")
    if targets.dim() == 1:
        offsets = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(np.int64)
        if targets._shape[0] != sum(target_lengths):
            raise RuntimeError(f"Expected tensor to have size {sum(target_lengths)} at dimension "
                               f"0, but got size {targets._shape[0]} for argument #2 'targets' "
                               f"{_WHERE}")
    else:
        if targets._shape[0] != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got "
                               f"size {targets._shape[0]} for argument #2 'targets' {_WHERE}")
        longest = max(target_lengths, default=0)
        if targets._shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                               f"but got size {targets._shape[1]} for argument #2 'targets' "
                               f"{_WHERE}")
        offsets = None
    for length in input_lengths:
        if length < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{length} {_WHERE}")
        if length > max_input:
            raise RuntimeError(f"Expected input_lengths to have value at most {max_input}, but "
                               f"got value {length} {_WHERE}")
    if log_probs.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{log_probs.dtype._short}'")
    return offsets


def _extended(targets, offsets, b, length, blank):
    """l' of batch element b: blanks around and between its labels."""
    t = targets._np()
    labels = t[offsets[b]:offsets[b] + length] if offsets is not None else t[b, :length]
    ext = np.full(2 * length + 1, blank, dtype=np.int64)
    ext[1::2] = labels
    return ext


def _log_sum3(a, b, c):
    """log(e^a + e^b + e^c), shifted by the largest (0 when all are -inf)."""
    m = np.maximum(np.maximum(a, b), c)
    m = np.where(m == -np.inf, 0, m).astype(a.dtype)
    return np.log(np.exp(a - m) + np.exp(b - m) + np.exp(c - m)) + m


def _shift(values, by, fill):
    out = np.full_like(values, fill)
    out[by:] = values[:len(values) - by]
    return out


def _alpha(lp, ext, input_length):
    """log_alpha rows 0 .. input_length - 1 (lp: (T, C) of one batch element)."""
    states = len(ext)
    alpha = np.full((lp.shape[0], states), -np.inf, dtype=lp.dtype)
    if input_length == 0:
        return alpha
    alpha[0, 0] = lp[0, ext[0]]
    if states > 1:
        alpha[0, 1] = lp[0, ext[1]]
    skip = np.zeros(states, dtype=bool)
    skip[2:] = ext[2:] != ext[:-2]
    for t in range(1, input_length):
        prev = alpha[t - 1]
        two_back = np.where(skip, _shift(prev, 2, -np.inf), -np.inf).astype(lp.dtype)
        alpha[t] = _log_sum3(prev, _shift(prev, 1, -np.inf), two_back) + lp[t, ext]
    return alpha


def _neg_log_likelihood(alpha, input_length, target_length):
    if input_length == 0:
        return -0.0 if target_length == 0 else np.inf
    last = alpha[input_length - 1]
    if target_length == 0:
        return -last[0]
    l1, l2 = last[2 * target_length], last[2 * target_length - 1]
    m = max(l1, l2)
    m = 0 if m == -np.inf else m
    return -(np.log(np.exp(l1 - m) + np.exp(l2 - m)) + m)


def _outputs(log_probs, target_lengths, device):
    max_input, batch, _ = log_probs._shape
    nll = empty_tensor((batch,), log_probs.dtype, device)
    log_alpha = empty_tensor((batch, max_input, 2 * max(target_lengths, default=0) + 1),
                             log_probs.dtype, device)
    return nll, log_alpha


@kernel("_ctc_loss")
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    input_lengths, target_lengths = _lengths(input_lengths), _lengths(target_lengths)
    offsets = _check(log_probs, targets, input_lengths, target_lengths, blank)
    nll, log_alpha = _outputs(log_probs, target_lengths, log_probs.device)
    if log_probs.device.type == "meta":
        return nll, log_alpha
    compute = log_probs.dtype.numpy
    lp = _array(log_probs, compute)
    la = np.full(log_alpha._shape, -np.inf, dtype=compute)
    losses = np.empty(nll._shape, dtype=compute)
    for b, (input_length, target_length) in enumerate(zip(input_lengths, target_lengths)):
        ext = _extended(targets, offsets, b, target_length, blank)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            alpha = _alpha(lp[:, b], ext, input_length)
            losses[b] = _neg_log_likelihood(alpha, input_length, target_length)
        la[b, :, :len(ext)] = alpha
    _write(nll, losses)
    _write(log_alpha, la)
    return nll, log_alpha


@kernel("_ctc_loss_backward")
def _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
                       log_alpha, blank, zero_infinity=False):
    input_lengths, target_lengths = _lengths(input_lengths), _lengths(target_lengths)
    offsets = _check(log_probs, targets, input_lengths, target_lengths, blank)
    out = empty_tensor(tuple(log_probs._shape), log_probs.dtype, log_probs.device)
    if log_probs.device.type == "meta":
        return out
    compute = log_probs.dtype.numpy
    lp, la = _array(log_probs, compute), _array(log_alpha, compute)
    nll, gr = _array(neg_log_likelihood, compute), _array(grad, compute)
    result = np.zeros(out._shape, dtype=compute)
    for b, (input_length, target_length) in enumerate(zip(input_lengths, target_lengths)):
        if (zero_infinity and nll[b] == np.inf) or input_length == 0:
            continue
        ext = _extended(targets, offsets, b, target_length, blank)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            result[:input_length, b] = _batch_grad(lp[:input_length, b],
                                                   la[b, :input_length, :len(ext)], ext, nll[b],
                                                   np.broadcast_to(gr, (len(nll),))[b])
    _write(out, result)
    return out


def _batch_grad(lp, alpha, ext, nll, gr):
    """One batch element's gradient rows (input_length, C)."""
    steps, states = lp.shape[0], len(ext)
    last = states - 1
    beta = np.full((steps, states), -np.inf, dtype=lp.dtype)
    collected = np.full(lp.shape, -np.inf, dtype=lp.dtype)
    beta[-1, last] = lp[-1, ext[last]]
    collected[-1, ext[last]] = alpha[-1, last] + beta[-1, last]
    if states > 1:
        beta[-1, last - 1] = lp[-1, ext[last - 1]]
        collected[-1, ext[last - 1]] = alpha[-1, last - 1] + beta[-1, last - 1]
    skip = np.zeros(states, dtype=bool)
    skip[:-2] = ext[:-2] != ext[2:]
    for t in range(steps - 2, -1, -1):
        nxt = beta[t + 1]
        one_ahead = np.full_like(nxt, -np.inf)
        one_ahead[:-1] = nxt[1:]
        two_ahead = np.full_like(nxt, -np.inf)
        two_ahead[:-2] = np.where(skip[:-2], nxt[2:], -np.inf)
        beta[t] = _log_sum3(nxt, one_ahead, two_ahead) + lp[t, ext]
        both = alpha[t] + beta[t]
        row = collected[t]
        for s in range(last, -1, -1):          # "log+=" into the label's slot
            c, v = ext[s], both[s]
            if row[c] == -np.inf:
                row[c] = v
            else:
                m = max(row[c], v)
                row[c] = np.log(np.exp(row[c] - m) + np.exp(v - m)) + m
    return (np.exp(lp) - np.exp(collected + nll - lp)) * gr


def _as_lengths(name, t):
    if t.dtype.category > dt.INTEGRAL or t.dtype is dt.bool_:
        raise RuntimeError(f"{name} must be integral")
    return [int(v) for v in np.asarray(t._np()).reshape(-1)]


@kernel("_ctc_loss_tensor")
def _ctc_loss_tensor(log_probs, targets, input_lengths, target_lengths, blank=0,
                     zero_infinity=False):
    return _ctc_loss(log_probs, targets, _as_lengths("input_lengths", input_lengths),
                     _as_lengths("target_lengths", target_lengths), blank, zero_infinity)


@kernel("_ctc_loss_backward_tensor")
def _ctc_loss_backward_tensor(grad, log_probs, targets, input_lengths, target_lengths,
                              neg_log_likelihood, log_alpha, blank, zero_infinity=False):
    if log_probs.device.type == "meta":     # log_probs' shape; the lengths' values unread
        return empty_tensor(tuple(log_probs._shape), log_probs.dtype, log_probs.device)
    return _ctc_loss_backward(grad, log_probs, targets,
                              _as_lengths("input_lengths", input_lengths),
                              _as_lengths("target_lengths", target_lengths),
                              neg_log_likelihood, log_alpha, blank, zero_infinity)


@kernel("ctc_loss_intlist")
def ctc_loss_intlist(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
                     zero_infinity=False):
    return _ctc_loss_reduced(aten._ctc_loss.default, log_probs, targets, list(input_lengths),
                             list(target_lengths), blank, reduction, zero_infinity,
                             lambda res: _lengths_tensor(target_lengths, res))


def _ctc_loss_reduced(primitive, log_probs, targets, input_lengths, target_lengths, blank,
                      reduction, zero_infinity, lengths_as):
    """ATen's ctc_loss over ``primitive`` (_ctc_loss's int-list or Tensor
    overload): unbatched input, zero_infinity, then the reduction; the mean
    divides each loss by its target length (``lengths_as(res)``, at least 1)."""
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = aten.unsqueeze.default(log_probs, 1)
    targets = aten._to_copy.default(targets, dtype=dt.int64)
    res = primitive(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)[0]
    if zero_infinity:
        res = aten.where.self(aten.eq.Scalar(res, float("inf")),
                              aten.zeros.default([], dtype=res.dtype, device=res.device), res)
    if reduction == 1:
        lengths = aten.clamp_min.default(lengths_as(res), 1)
        return aten.mean.default(aten.div.Tensor(res, lengths))
    if reduction == 2:
        return aten.sum.default(res)
    return res if batched else aten.squeeze.dim(res, 0)


def _lengths_tensor(lengths, like):
    """at::tensor(target_lengths, res.options()): a constant of res's dtype."""
    values = np.asarray([int(v) for v in lengths], dtype=like.dtype.numpy)
    if like.device.type == "meta":
        return empty_tensor(values.shape, like.dtype, like.device)
    return _from_array(values, like.dtype, like.device)


@kernel("ctc_loss_tensor")
def ctc_loss_tensor(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
                    zero_infinity=False):
    """ATen's two paths: plain tensors read the lengths and take the int-list op;
    subclass-like ones (fake, functorch wrappers) keep them tensors down to
    _ctc_loss.Tensor."""
    if not any(is_tensor_subclass_like(t)
               for t in (log_probs, targets, input_lengths, target_lengths)):
        return ctc_loss_intlist(log_probs, targets, _as_lengths("input_lengths", input_lengths),
                                _as_lengths("target_lengths", target_lengths), blank, reduction,
                                zero_infinity)
    return _ctc_loss_reduced(aten._ctc_loss.Tensor, log_probs, targets, input_lengths,
                             target_lengths, blank, reduction, zero_infinity,
                             lambda res: aten._to_copy.default(target_lengths, dtype=res.dtype))
