"""Helpers for the gradient formulas of linear-algebra and neural-network ops
(derivatives.yaml's nn section; PyTorch's FunctionsManual.cpp for the same ops).

Backward passes call the ops PyTorch's formulas call (mm, bmm, the
``*_backward`` ops beside their forward ops in glasstorch/_ops/kernels/), and the
double-backward helpers are written with differentiable ops, so gradients of
gradients work.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from ..grad_mode import enable_grad, is_grad_enabled
from ..variable import requires_grad


__all__ = ["convolution_double_backward",
           "max_pool_double_backward", "layer_norm_double_backward",
           "batchnorm_double_backward", "trilinear_backward",
           "native_group_norm_backward_formula", "embedding_dense_double_backward",
           "native_dropout_backward_formula", "native_dropout_double_backward",
           "mse_loss_double_backward", "smooth_l1_loss_double_backward",
           "huber_loss_double_backward", "huber_loss_double_backward_grad_output",
           "binary_cross_entropy_target_backward", "binary_cross_entropy_double_backward",
           "binary_cross_entropy_double_backward_target",
           "binary_cross_entropy_double_backward_grad_output",
           "binary_cross_entropy_with_logits_backward",
           "binary_cross_entropy_with_logits_target_backward", "euclidean_dist_backward",
           "weight_norm_interface_backward", "grid_sampler_double_backward",
           "soft_margin_loss_double_backward", "soft_margin_loss_double_backward_grad_output"]

aten = ops.aten

MEAN, SUM = 1, 2
_BCE_EPS = 1e-12


# -- weight normalization -----------------------------------------------------------------

def weight_norm_interface_backward(grad, v, g, norms, dim):
    """_weight_norm_interface's gradients: the fused kernel, or its version in
    differentiable ops when grad mode is on (a backward that builds a graph)."""
    backward = aten._weight_norm_differentiable_backward if is_grad_enabled() else \
        aten._weight_norm_interface_backward
    return backward.default(grad.contiguous(), v, g, norms, dim)


# -- matrix products --------------------------------------------------------------------
# -- convolution / pooling --------------------------------------------------------------

def convolution_double_backward(grads, grad_output, input, weight, stride, padding, dilation,
                                transposed, output_padding, groups, grad_input_mask):
    """Gradients of convolution_backward's outputs (d_input, d_weight, d_bias),
    whose incoming gradients are ``grads`` = (gI, gW, gB).

    convolution is bilinear in (input, weight), so with conv(x, w) its map and
    B_x, B_w its backward maps: <B_x(gO, w), gI> = <gO, conv(gI, w)> and
    <B_w(gO, x), gW> = <gO, conv(x, gW)>.  Hence
        d grad_output = conv(gI, w, bias=gB) + conv(x, gW)
        d input       = B_x(gO, gW)      (convolution_backward with weight gW)
        d weight      = B_w(gO, gI)      (convolution_backward with input gI)
    which holds for transposed convolutions too."""
    g_input, g_weight, g_bias = grads

    def conv(x, w, b):
        return aten.convolution.default(x, w, b, stride, padding, dilation, transposed,
                                        output_padding, groups)

    def conv_backward(x, w, mask):
        return aten.convolution_backward.default(grad_output, x, w, None, stride, padding,
                                                 dilation, transposed, output_padding, groups,
                                                 mask)
    d_grad_output = d_input = d_weight = None
    if grad_input_mask[0]:
        terms = []
        if g_input is not None:
            terms.append(conv(g_input, weight, g_bias))
        elif g_bias is not None:
            channels = [1, g_bias.numel()] + [1] * (grad_output.dim() - 2)
            terms.append(aten.expand.default(aten.view.default(g_bias, channels),
                                             list(grad_output.shape)))
        if g_weight is not None:
            terms.append(conv(input, g_weight, None))
        for term in terms:
            d_grad_output = term if d_grad_output is None else aten.add.Tensor(d_grad_output,
                                                                               term)
    if grad_input_mask[1] and g_weight is not None:
        d_input = conv_backward(input, g_weight, [True, False, False])[0]
    if grad_input_mask[2] and g_input is not None:
        d_weight = conv_backward(g_input, weight, [False, True, False])[1]
    return d_grad_output, d_input, d_weight


def max_pool_double_backward(grad, indices, dim):
    """The gradient of max pooling's backward with respect to grad_output: pick
    each window's argmax element of ``grad`` (the last ``dim`` dims flattened)."""
    if indices.numel() == 0:
        return aten.zeros_like.default(indices, dtype=grad.dtype)
    size = list(indices.shape[:indices.dim() - dim]) + [-1]
    picked = aten.gather.default(aten.view.default(aten.contiguous.default(grad), size), -1,
                                 aten.view.default(indices, size))
    return aten.view.default(picked, list(indices.shape))


# -- bilinear ---------------------------------------------------------------------------

def trilinear_backward(grad, i1, i2, i3, expand1, expand2, expand3, sumdim, grad_input_mask):
    """_trilinear is linear in each input: an input's gradient is _trilinear of
    the incoming gradient and the other two, the gradient taking the summed
    dims' place (its expand list is ``sumdim``) and the input's own expand
    list becoming the sum."""
    trilinear = aten._trilinear.default
    return (trilinear(grad, i2, i3, sumdim, expand2, expand3, expand1)
            if grad_input_mask[0] else None,
            trilinear(i1, grad, i3, expand1, sumdim, expand3, expand2)
            if grad_input_mask[1] else None,
            trilinear(i1, i2, grad, expand1, expand2, sumdim, expand3)
            if grad_input_mask[2] else None)


# -- softmax ----------------------------------------------------------------------------
# -- normalization ----------------------------------------------------------------------

def _mean(t, dims):
    return aten.mean.dim(t, dims, True)


def _normalized_backward(dy, x_hat, rstd, gamma, dims):
    """rstd * (g - mean(g) - x_hat * mean(g * x_hat)) over ``dims``, g = dy * gamma:
    the input gradient of (x - mean) * rstd * gamma, written with ops."""
    g = aten.mul.Tensor(dy, gamma) if gamma is not None else dy
    centered = aten.sub.Tensor(g, _mean(g, dims))
    projected = aten.mul.Tensor(x_hat, _mean(aten.mul.Tensor(g, x_hat), dims))
    return aten.mul.Tensor(rstd, aten.sub.Tensor(centered, projected))


def _differentiable_copy(t, needed):
    """``t`` as an input of a local graph: when its gradient is wanted, a fresh
    alias (so the local graph stops there, yet stays connected to ``t``'s
    history for higher-order gradients); otherwise a constant."""
    if t is None:
        return None
    if needed and requires_grad(t):
        return aten.alias.default(t)
    return aten.detach.default(t)


def layer_norm_double_backward(grads, grad_out, input, normalized_shape, mean, rstd, weight,
                               grad_input_mask):
    """Gradients of native_layer_norm_backward's outputs (dx, dweight, dbias),
    whose incoming gradients are ``grads``, with respect to (input, weight,
    grad_out).

    Instead of PyTorch's hand-derived layer_norm_double_backward, the backward
    is re-expressed as differentiable composite ops of (input, weight,
    grad_out) and differentiated with ``autograd.grad``:

        mean(x)  = mean of x over the normalized dims (the saved mean, recomputed)
        rstd(x)  = (var(x) + c) ** -1/2 with the constant c = rstd**-2 - var(x),
                   so its value is the saved rstd (eps is not an argument of the
                   backward op) and it still depends on x as rstd does
        x_hat    = (x - mean(x)) * rstd(x)
        dx       = rstd(x) * (g - mean(g) - x_hat * mean(g * x_hat)),  g = grad_out * weight
        dweight  = sum over the leading dims of grad_out * x_hat
        dbias    = sum over the leading dims of grad_out

    The gradients are then autograd.grad([dx, dweight, dbias], wanted inputs,
    grads), with create_graph when the outer pass records: third-order
    gradients flow through the aliases into the original tensors, and are
    exact (PyTorch's hand-derived formula is not at third order)."""
    from .. import grad as autograd_grad    # (glasstorch.autograd imports this module)
    create_graph = is_grad_enabled()
    mask_input, mask_weight, mask_grad_out = grad_input_mask
    with enable_grad():
        x = _differentiable_copy(input, mask_input)
        w = _differentiable_copy(weight, mask_weight)
        dy = _differentiable_copy(grad_out, mask_grad_out)
        k = len(normalized_shape)
        dims = list(range(x.dim() - k, x.dim()))
        lead = list(range(x.dim() - k))
        mu = _mean(x, dims)
        centered = aten.sub.Tensor(x, mu)
        var = _mean(aten.mul.Tensor(centered, centered), dims)
        shift = aten.detach.default(aten.sub.Tensor(aten.pow.Tensor_Scalar(
            aten.view.default(rstd, list(mu.shape)), -2), var))
        r = aten.rsqrt.default(aten.add.Tensor(var, shift))
        x_hat = aten.mul.Tensor(centered, r)
        outputs = [_normalized_backward(dy, x_hat, r, w, dims),
                   _sum_leading(aten.mul.Tensor(dy, x_hat), lead) if w is not None else None,
                   _sum_leading(dy, lead)]
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if o is not None and g is not None and requires_grad(o)]
        candidates = ((x, mask_input), (w, mask_weight), (dy, mask_grad_out))
        wanted = [t for t, m in candidates if m and t is not None]
        if not pairs:       # what was asked for does not depend on the wanted inputs
            return None, None, None
        found = iter(autograd_grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                                   create_graph=create_graph, allow_unused=True))
    return tuple(next(found) if m and t is not None else None for t, m in candidates)


def _channel_view(t, ndim):
    """A per-channel (C,) tensor viewed as (1, C, 1, ...) against an ndim input."""
    return aten.view.default(t, [1, -1] + [1] * (ndim - 2))


def batchnorm_double_backward(grads, input, weight, grad_out, running_mean, running_var, train,
                              eps, save_mean, save_invstd, grad_input_mask):
    """Gradients of native_batch_norm_backward's outputs (dx, dweight, dbias)
    with respect to (input, weight, grad_out), as layer_norm_double_backward
    does it: the backward re-expressed with differentiable ops, per channel over
    the other dims, then autograd.grad.  In training the batch statistics depend
    on x (invstd(x) = (var(x) + c) ** -1/2 with c fixed so that it equals the
    saved invstd); in eval the running statistics are constants."""
    from .. import grad as autograd_grad    # (glasstorch.autograd imports this module)
    create_graph = is_grad_enabled()
    mask_input, mask_weight, mask_grad_out = grad_input_mask
    with enable_grad():
        x = _differentiable_copy(input, mask_input)
        w = _differentiable_copy(weight, mask_weight)
        dy = _differentiable_copy(grad_out, mask_grad_out)
        ndim = x.dim()
        dims = [0] + list(range(2, ndim))
        if train:
            mu = _mean(x, dims)
            centered = aten.sub.Tensor(x, mu)
            var = _mean(aten.mul.Tensor(centered, centered), dims)
            shift = aten.detach.default(aten.sub.Tensor(aten.pow.Tensor_Scalar(
                _channel_view(save_invstd, ndim), -2), var))
            r = aten.rsqrt.default(aten.add.Tensor(var, shift))
        else:
            centered = aten.sub.Tensor(x, _channel_view(running_mean, ndim))
            r = aten.rsqrt.default(aten.add.Scalar(_channel_view(running_var, ndim), eps))
        x_hat = aten.mul.Tensor(centered, r)
        gamma = _channel_view(w, ndim) if w is not None else None
        if train:
            d_input = _normalized_backward(dy, x_hat, r, gamma, dims)
        else:
            d_input = aten.mul.Tensor(dy, aten.mul.Tensor(r, gamma) if gamma is not None else r)
        outputs = [d_input,
                   aten.sum.dim_IntList(aten.mul.Tensor(dy, x_hat), dims, False)
                   if w is not None else None,
                   aten.sum.dim_IntList(dy, dims, False)]
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if o is not None and g is not None and requires_grad(o)]
        candidates = ((x, mask_input), (w, mask_weight), (dy, mask_grad_out))
        wanted = [t for t, m in candidates if m and t is not None]
        if not pairs:
            return None, None, None
        found = iter(autograd_grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                                   create_graph=create_graph, allow_unused=True))
    return tuple(next(found) if m and t is not None else None for t, m in candidates)


def _sum_leading(t, lead):
    return aten.sum.dim_IntList(t, lead, False) if lead else t


def native_group_norm_backward_formula(grads, input, mean, rstd, weight, N, C, HxW, group,
                                       eps, grad_input_mask):
    """native_group_norm's gradients for (input, weight, bias) from the
    gradients of its three outputs (out, mean, rstd).

    When the pass records a graph (create_graph), everything is composite ops
    of input and of the saved mean/rstd outputs (PyTorch's
    infinitely_differentiable_native_group_norm_backward): those outputs carry
    this node as history, so differentiating again also flows through them.
    Otherwise the output gradient goes through native_group_norm_backward and
    the mean/rstd gradients are added with ops:
        d mean / dx = 1 / D,   d rstd / dx = -rstd**2 * x_hat / D
    over the D = C / group * HxW elements of each group."""
    d_out, d_mean, d_rstd = grads
    if is_grad_enabled():
        return _group_norm_backward_composite(d_out, d_mean, d_rstd, input, mean, rstd, weight,
                                              N, C, HxW, group, grad_input_mask)
    d_input, d_weight, d_bias = aten.native_group_norm_backward.default(
        aten.contiguous.default(d_out), aten.contiguous.default(input), mean, rstd, weight, N,
        C, HxW, group, grad_input_mask)
    if d_input is not None:
        x_hat = _group_x_hat(input, mean, rstd, N, C, HxW, group)
        stats = _stats_input_grad(d_mean, d_rstd, rstd, x_hat, N, group, C // group * HxW)
        d_input = aten.add.Tensor(d_input, aten.reshape.default(stats, list(input.shape)))
    return d_input, d_weight, d_bias


def _per_group(t, N, C, HxW, group):
    """(N, C, *) -> (N, group, C / group, HxW)."""
    return aten.reshape.default(t, [N, group, C // group, HxW])


def _group_stat(t, N, group):
    """A (N, group) statistic, broadcastable against _per_group's shape."""
    return aten.reshape.default(t, [N, group, 1, 1])


def _group_x_hat(input, mean, rstd, N, C, HxW, group):
    centered = aten.sub.Tensor(_per_group(input, N, C, HxW, group), _group_stat(mean, N, group))
    return aten.mul.Tensor(centered, _group_stat(rstd, N, group))


def _stats_input_grad(d_mean, d_rstd, rstd, x_hat, N, group, D):
    """d_mean / D - d_rstd * rstd**2 * x_hat / D, per (sample, group)."""
    r = _group_stat(rstd, N, group)
    coeff = aten.mul.Tensor(_group_stat(d_rstd, N, group), aten.mul.Tensor(r, r))
    return aten.div.Scalar(aten.sub.Tensor(_group_stat(d_mean, N, group),
                                           aten.mul.Tensor(coeff, x_hat)), D)


def _group_norm_backward_composite(d_out, d_mean, d_rstd, input, mean, rstd, weight, N, C, HxW,
                                   group, grad_input_mask):
    x_hat = _group_x_hat(input, mean, rstd, N, C, HxW, group)
    dy = _per_group(d_out, N, C, HxW, group)
    d_input = d_weight = d_bias = None
    if grad_input_mask[0]:
        gamma = aten.reshape.default(weight, [1, group, C // group, 1]) \
            if weight is not None else None
        d_x = _normalized_backward(dy, x_hat, _group_stat(rstd, N, group), gamma, [2, 3])
        d_x = aten.add.Tensor(d_x, _stats_input_grad(d_mean, d_rstd, rstd, x_hat, N, group,
                                                     C // group * HxW))
        d_input = aten.reshape.default(d_x, list(input.shape))
    if grad_input_mask[1]:
        d_weight = aten.reshape.default(
            aten.sum.dim_IntList(aten.mul.Tensor(dy, x_hat), [0, 3], False), [C])
    if grad_input_mask[2]:
        d_bias = aten.reshape.default(aten.sum.dim_IntList(dy, [0, 3], False), [C])
    return d_input, d_weight, d_bias


# -- embedding / dropout ----------------------------------------------------------------

def embedding_dense_double_backward(grad, indices, padding_idx):
    """The rows of ``grad`` that embedding_dense_backward added up, picked back
    (rows at ``padding_idx`` are zero).  Like PyTorch's, it ignores
    scale_grad_by_freq."""
    flat = aten.reshape.default(indices, [-1])
    rows = aten.index_select.default(grad, 0, flat)
    if padding_idx >= 0:
        rows = aten.masked_fill.Scalar(
            rows, aten.reshape.default(aten.eq.Scalar(flat, padding_idx), [-1, 1]), 0)
    return aten.view.default(rows, list(indices.shape) + [-1])


def _dropout_scale(p, train) -> float:
    """The scale native_dropout's formula uses (PyTorch: 1 unless train is given
    and true)."""
    if train is None or not train:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def native_dropout_backward_formula(grad, mask, p, train):
    """grad * mask * scale: native_dropout_backward, or the same product with
    differentiable ops when the pass records a graph."""
    scale = _dropout_scale(p, train)
    if is_grad_enabled():
        return native_dropout_double_backward(grad, mask, scale)
    return aten.native_dropout_backward.default(grad, mask, scale)


def native_dropout_double_backward(grad, mask, scale):
    """grad * (mask as grad's dtype) * scale."""
    return aten.mul.Tensor(grad, aten.mul.Scalar(aten.to.dtype(mask, grad.dtype), scale))


# -- losses -----------------------------------------------------------------------------

def _per_element(t, input, reduction):
    """Divide by input's numel for a mean reduction."""
    return aten.div.Scalar(t, input.numel()) if reduction == MEAN else t


def mse_loss_double_backward(grad, input, reduction):
    """d/d input of mse_loss_backward: 2 * grad (over numel for a mean)."""
    return _per_element(aten.mul.Scalar(grad, 2), input, reduction)


def smooth_l1_loss_double_backward(grad, input, target, reduction, beta):
    """d/d input of smooth_l1_loss_backward: grad / beta inside |d| < beta, else 0."""
    if beta == 0.0:
        return aten.zeros_like.default(grad)
    inside = aten.lt.Scalar(aten.abs.default(aten.sub.Tensor(input, target)), beta)
    result = aten.div.Scalar(aten.mul.Tensor(grad, aten.to.dtype(inside, grad.dtype)), beta)
    return _per_element(result, input, reduction)


def huber_loss_double_backward(grad, input, target, reduction, delta):
    """d/d input of huber_loss_backward: grad inside |d| <= delta, else 0."""
    inside = aten.le.Scalar(aten.abs.default(aten.sub.Tensor(input, target)), delta)
    return _per_element(aten.mul.Tensor(grad, aten.to.dtype(inside, grad.dtype)), input,
                        reduction)


def huber_loss_double_backward_grad_output(grad, grad_output, input, target, reduction, delta):
    """d/d grad_output of <huber_loss_backward(grad_output, ...), grad>."""
    if reduction == 0:
        return aten.huber_loss_backward.default(grad, input, target, reduction, delta)
    unit = aten.ones_like.default(grad_output)
    per_element = aten.huber_loss_backward.default(unit, input, target, reduction, delta)
    return aten.sum.default(aten.mul.Tensor(per_element, grad))


def _times_weight(t, weight):
    return aten.mul.Tensor(t, weight) if weight is not None else t


def binary_cross_entropy_target_backward(grad, self, target, weight, reduction):
    """d/d target of -w (t log x + (1 - t) log(1 - x)) = w (log(1 - x) - log(x)),
    i.e. -logit(x) * w."""
    minus_logit = aten.sub.Tensor(aten.log.default(aten.rsub.Scalar(self, 1)),
                                  aten.log.default(self))
    result = _times_weight(aten.mul.Tensor(minus_logit, grad), weight)
    return _per_element(result, target, reduction)


def _bce_denominator(self):
    """(x + eps) (1 - x + eps), PyTorch's smoothed x (1 - x)."""
    return aten.mul.Tensor(aten.add.Scalar(self, _BCE_EPS),
                           aten.add.Scalar(aten.rsub.Scalar(self, 1), _BCE_EPS))


def binary_cross_entropy_double_backward(grad_output, grad, self, target, weight, reduction):
    """d/d x of grad_output (x - t) / (x (1 - x)) =
    grad_output (x^2 - 2 x t + t) / (x (1 - x))^2."""
    numerator = aten.add.Tensor(
        aten.sub.Tensor(aten.mul.Tensor(self, self),
                        aten.mul.Scalar(aten.mul.Tensor(self, target), 2)), target)
    denominator = _bce_denominator(self)
    result = aten.div.Tensor(numerator, aten.mul.Tensor(denominator, denominator))
    result = _times_weight(aten.mul.Tensor(result, aten.mul.Tensor(grad, grad_output)), weight)
    return _per_element(result, self, reduction)


def binary_cross_entropy_double_backward_target(grad, grad_output, self, target, weight,
                                                reduction):
    """d/d t of grad_output (x - t) / (x (1 - x)) = -grad_output / (x (1 - x))."""
    result = aten.div.Tensor(aten.neg.default(aten.mul.Tensor(grad, grad_output)),
                             _bce_denominator(self))
    return _per_element(_times_weight(result, weight), self, reduction)


def binary_cross_entropy_double_backward_grad_output(grad, self, target, weight, reduction):
    """d/d grad_output of <binary_cross_entropy_backward(grad_output, ...), grad>:
    elementwise for reduction='none', else summed to grad_output's one element."""
    result = aten.div.Tensor(aten.sub.Tensor(self, target), _bce_denominator(self))
    result = _times_weight(aten.mul.Tensor(result, grad), weight)
    if reduction == 0:
        return result
    return _per_element(aten.sum.default(result), self, reduction)


def binary_cross_entropy_with_logits_backward(grad, input, target, weight, pos_weight,
                                              reduction):
    """d/d x of (1 - t) x - (1 + (pw - 1) t) log_sigmoid(x):
    ((pw t + 1 - t) sigmoid(x) - pw t), or sigmoid(x) - t without pos_weight;
    times grad and weight, over numel for a mean."""
    sig = aten.sigmoid.default(input)
    if pos_weight is not None:
        t = aten.mul.Tensor(pos_weight, target)
        result = aten.sub.Tensor(
            aten.mul.Tensor(aten.sub.Tensor(aten.add.Scalar(t, 1), target), sig), t)
    else:
        result = aten.sub.Tensor(sig, target)
    result = _times_weight(aten.mul.Tensor(result, grad), weight)
    return _per_element(result, input, reduction)


def binary_cross_entropy_with_logits_target_backward(grad, input, target, weight, pos_weight,
                                                     reduction):
    """d/d t of the same: log_sigmoid(-x) - pw log_sigmoid(x), or -x without
    pos_weight (log_sigmoid(y) = -softplus(-y))."""
    if pos_weight is not None:
        result = aten.sub.Tensor(
            aten.mul.Tensor(pos_weight, aten.softplus.default(aten.neg.default(input))),
            aten.softplus.default(input))
    else:
        result = aten.neg.default(input)
    result = _times_weight(aten.mul.Tensor(result, grad), weight)
    return _per_element(result, input, reduction)


# -- distances -----------------------------------------------------------------------------

def euclidean_dist_backward(grad, x1, x2, result):
    """_euclidean_dist's gradients: with r = grad / dist (0 where dist is 0),
    x1 r.sum(-1) - r @ x2 and x2 r.sum(-2) - r^T @ x1."""
    ratio = aten.div.Tensor(grad, result)
    ratio = aten.masked_fill_.Scalar(ratio, aten.eq.Scalar(result, 0), 0)
    grad_x1 = aten.sub.Tensor(aten.mul.Tensor(x1, aten.sum.dim_IntList(ratio, [-1], True)),
                              aten.matmul.default(ratio, x2))
    grad_x2 = aten.sub.Tensor(
        aten.mul.Tensor(x2, aten.unsqueeze.default(aten.sum.dim_IntList(ratio, [-2]), -1)),
        aten.matmul.default(aten.transpose.int(ratio, -2, -1), x1))
    return grad_x1, grad_x2


# -- grid sampling ---------------------------------------------------------------------------

def _grid_clip(coord, size):
    """Clip into [0, size - 1] with no gradient on or past the borders (as ATen's)."""
    inside = (coord > 0) & (coord < size - 1)
    return _where(inside, coord, coord.clamp(0, size - 1).detach())


def _grid_pad(coord, size, padding_mode, align_corners):
    if padding_mode == 1:
        return _grid_clip(coord, size)
    if padding_mode == 2:
        low2, high2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if low2 == high2:
            return coord * 0
        low, span = low2 / 2, (high2 - low2) / 2
        shifted = (coord - low).abs()
        extra = shifted.fmod(span)
        even = (shifted / span).floor().remainder(2) == 0
        return _grid_clip(_where(even, extra + low, span - extra + low), size)
    return coord


def _grid_sample_composite(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler_2d/3d in differentiable ops (kernels/grid_sample.py has the
    same math in numpy): taps gathered from the flattened input."""
    import itertools
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])
    k = len(sizes)
    flat = input.reshape(n, c, -1)
    out_shape = list(grid.shape[1:-1])
    comp_sizes = [sizes[-1 - i] for i in range(k)]

    def unnormalize(i):
        g, size = grid[..., i], comp_sizes[i]
        return (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2

    def tap(positions, weight):
        inside = None
        lin = None
        for p, size in zip(positions[::-1], sizes):      # input dims (D,) H, W
            ok = (p >= 0) & (p < size)
            inside = ok if inside is None else inside & ok
            idx = p.clamp(0, size - 1).long()
            lin = idx if lin is None else lin * size + idx
        values = flat.gather(2, lin.reshape(n, 1, -1).expand(n, c, -1))
        values = values.reshape([n, c] + out_shape)
        return values * (weight * inside.to(weight.dtype)).unsqueeze(1)

    terms = []
    if interpolation_mode == 2:
        x, y = unnormalize(0), unnormalize(1)
        x0, y0 = x.floor().detach(), y.floor().detach()
        wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
        for i in range(4):
            for j in range(4):
                px = _grid_pad(x0 - 1 + j, comp_sizes[0], padding_mode, align_corners).trunc()
                py = _grid_pad(y0 - 1 + i, comp_sizes[1], padding_mode, align_corners).trunc()
                terms.append(tap([px.detach(), py.detach()], wx[j] * wy[i]))
    else:
        coords = [_grid_pad(unnormalize(i), comp_sizes[i], padding_mode, align_corners)
                  for i in range(k)]
        if interpolation_mode == 1:
            terms.append(tap([co.round().detach() for co in coords],
                             aten.ones_like.default(coords[0]).detach()))
        else:
            low = [co.floor().detach() for co in coords]
            for corner in itertools.product((0, 1), repeat=k):
                offsets = corner[::-1]
                weight = None
                for co, lo, o in zip(coords, low, offsets):
                    f = co - lo if o else lo + 1 - co
                    weight = f if weight is None else weight * f
                terms.append(tap([lo + o for lo, o in zip(low, offsets)], weight))
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def _cubic_weights(t):
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _where(cond, a, b):
    return aten.where.self(cond, a, b)


def grid_sampler_double_backward(gg_input, gg_grid, grad_output, input, grid,
                                 interpolation_mode, padding_mode, align_corners,
                                 grad_input_mask):
    """Gradients of grid_sampler_*_backward's (grad_input, grad_grid), whose
    incoming gradients are gg_input and gg_grid, by (grad_output, input, grid):
    the sampling re-expressed in differentiable ops, its first gradients taken
    with create_graph, then differentiated again (as layer_norm_double_backward)."""
    from .. import grad as autograd_grad    # (glasstorch.autograd imports this module)
    create_graph = is_grad_enabled()
    with enable_grad():
        local = []
        for t, needed in zip((grad_output, input, grid), grad_input_mask):
            t = _differentiable_copy(t, needed)
            local.append(t if requires_grad(t) else aten.detach.default(t).requires_grad_())
        dy, x, g = local
        out = _grid_sample_composite(x, g, interpolation_mode, padding_mode, align_corners)
        first = autograd_grad([out], [x, g], [dy], create_graph=True, allow_unused=True)
        pairs = [(o, w) for o, w in zip(first, (gg_input, gg_grid))
                 if o is not None and w is not None and requires_grad(o)]
        found = iter(autograd_grad([o for o, _ in pairs], [t for t, m in zip(local, grad_input_mask)
                                                            if m],
                                   [w for _, w in pairs], create_graph=create_graph,
                                   allow_unused=True) if pairs else ())
    grads = [next(found, None) if m else None for m in grad_input_mask]
    if interpolation_mode == 1 and grad_input_mask[2] and grads[2] is None:
        grads[2] = aten.zeros_like.default(grid)   # nearest: a zero grid gradient, as ATen's
    return tuple(grads)


# -- soft margin loss ------------------------------------------------------------------------

def soft_margin_loss_double_backward(grad, input, target, reduction):
    """d/d x of soft_margin_loss_backward: y^2 z / (1 + z)^2 (z = exp(-y x)), / numel for mean."""
    z = aten.exp.default(aten.mul.Tensor(input, aten.neg.default(target)))
    z1 = aten.add.Scalar(z, 1)
    result = aten.div.Tensor(aten.mul.Tensor(aten.mul.Tensor(aten.mul.Tensor(grad, target),
                                                             target), z),
                             aten.mul.Tensor(z1, z1))
    if reduction == MEAN:
        result = aten.div.Scalar(result, input.numel())
    return result


def soft_margin_loss_double_backward_grad_output(grad, grad_output, input, target, reduction):
    """d/d grad_output of soft_margin_loss_backward: the backward at grad_output = 1
    contracted with grad (a sum for a reduced loss)."""
    if reduction == 0:
        return aten.soft_margin_loss_backward.default(grad, input, target, reduction)
    r = aten.soft_margin_loss_backward.default(aten.ones_like.default(grad_output), input,
                                               target, reduction)
    return aten.sum.default(aten.mul.Tensor(r, grad))
