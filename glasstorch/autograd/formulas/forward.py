"""Forward-mode AD helpers: the ``*_jvp`` functions derivatives.yaml's
``result:`` formulas call (PyTorch's FunctionsManual.cpp).  Each takes
primals (``*_p``) and tangents (``*_t``) and returns the output's tangent,
computed with ops."""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from ..variable import has_fw_grad
from .reduction import renorm_norms, unsqueeze_multiple

__all__ = ["fw_conj", "fw_real", "reduced_dims", "apply_loss_reduction", "clamp_jvp", "gather_with_keepdimed_indices",
           "evenly_read_jvp", "amaxamin_jvp", "cumprod_jvp", "logsumexp_jvp",
           "safe_logsumexp_jvp", "norm_jvp", "foreach_norm_jvp", "convolution_backward_jvp_grad_bias",
           "layer_norm_jvp", "group_norm_jvp", "group_norm_mean_jvp",
           "group_norm_invstd_jvp", "batch_norm_jvp", "glu_jvp", "glu_backward_jvp",
           "binary_cross_entropy_backward_jvp", "scatter_reduce_jvp", "logcumsumexp_jvp",
           "renorm_jvp"]

aten = ops.aten


def fw_conj(t):
    """A complex tangent's conjugate (PyTorch's formulas' ``.conj()``); a real one as is."""
    return aten.conj_physical.default(t) if t.is_complex() else t


def fw_real(t):
    """The real part of a complex tangent (``at::real``); a real one as is."""
    return aten.real.default(t) if t.is_complex() else t


def _inner(a, t):
    """Re(conj(a) t) elementwise: the real inner product a complex norm's
    tangent is made of; a * t for real tensors."""
    return aten.real.default(aten.conj_physical.default(a) * t) if t.is_complex() or \
        a.is_complex() else a * t


def reduced_dims(self, dim):
    """A reduction's ``dim`` argument as a list: every dim when None."""
    return list(range(self.dim())) if dim is None else ([dim] if isinstance(dim, int) else dim)


def apply_loss_reduction(loss, reduction):
    """A loss's ``reduction`` (0 none, 1 mean, 2 sum) applied to per-element values."""
    if reduction == 1:
        return aten.mean.default(loss)
    if reduction == 2:
        return aten.sum.default(loss)
    return loss


def clamp_jvp(self_p, self_t, min_p, min_t, max_p, max_t):
    """The tangent of whichever of self, min, max the output took."""
    if min_p is not None and max_p is not None:      # (min > max: the output is max)
        inner = aten.where.self(self_p < min_p, min_t,
                                aten.where.self(self_p > max_p, max_t, self_t))
        return aten.where.self(min_p > max_p, max_t, inner)
    if min_p is not None:
        return aten.where.self(self_p >= min_p, self_t, min_t)
    if max_p is not None:
        return aten.where.self(self_p <= max_p, self_t, max_t)
    return self_t


def gather_with_keepdimed_indices(t, dim, indices, keepdim):
    """The tangent at the indices a dim-reduction (max.dim, sort ...) chose."""
    if t.dim() == 0:
        return t.clone()
    if not keepdim:
        indices = aten.unsqueeze.default(indices, dim)
    out = aten.gather.default(t, dim, indices)
    return out if keepdim else aten.squeeze.dim(out, dim)


def evenly_read_jvp(t, p, result):
    """A full max/min/median: the mean tangent of the elements equal to the result."""
    mask = p == result
    return (aten.sum.default(t * mask) / aten.sum.default(mask)).to(result.dtype)


def amaxamin_jvp(p, t, result, dim, keepdim):
    """amax/amin: the mean tangent of the elements equal to the result."""
    mask = p == unsqueeze_multiple(result, [] if keepdim else reduced_dims(p, dim), p.dim())
    dims = reduced_dims(p, dim)
    return aten.sum.dim_IntList(t * mask, dims, keepdim) / aten.sum.dim_IntList(mask, dims, keepdim)


def cumprod_jvp(t, p, result, dim):
    """d cumprod: result * cumsum(t / p) without zeros; with zeros, the
    recurrence d r_k = d r_(k-1) * p_k + r_(k-1) * t_k along ``dim``."""
    if not bool(aten.any.default(p == 0)):
        return result * aten.cumsum.default(t / p, dim)
    if p.dim() == 0:
        return t.clone()
    tangents, previous, previous_t = [], None, None
    for k in range(p.shape[dim]):
        p_k, t_k = aten.select.int(p, dim, k), aten.select.int(t, dim, k)
        if previous is None:
            current_t = t_k
        else:
            current_t = previous_t * p_k + previous * t_k
        previous = aten.select.int(result, dim, k)
        previous_t = current_t
        tangents.append(current_t)
    return aten.stack.default(tangents, dim)


def _softmax_weights(p, dim):
    """exp(p - max) along ``dim`` (a max of -inf, an all -inf row, as 0)."""
    top = aten.amax.default(p, dim, True)
    top = aten.masked_fill.Scalar(top, aten.isinf.default(top), 0)
    return aten.exp.default(p - top)


def logsumexp_jvp(p, t, dim, keepdim):
    """d logsumexp = sum(softmax(p) * t) over ``dim``."""
    weights = _softmax_weights(p, dim)
    return aten.sum.dim_IntList(weights * t, dim, keepdim) / \
        aten.sum.dim_IntList(weights, dim, keepdim)


def safe_logsumexp_jvp(p, t, dim, keepdim):
    """logsumexp_jvp, 0 over rows that are all -inf (_safe_softmax's masked rows)."""
    weights = _softmax_weights(p, dim)
    total = aten.sum.dim_IntList(weights, dim, keepdim)
    out = aten.sum.dim_IntList(weights * aten.masked_fill.Scalar(t, weights == 0, 0), dim,
                               keepdim) / total
    return aten.masked_fill.Scalar(out, total == 0, 0)


def norm_jvp(p, t, order, result, dim=None, keepdim=False):
    """d ||p||_order in direction t, by the order's case (0, 1, 2, inf, general)."""
    order = 2.0 if order is None else float(order)
    dims = reduced_dims(p, dim)
    if order == 0.0:
        return aten.zeros_like.default(result)
    if order == 1.0:
        return aten.sum.dim_IntList(_inner(aten.sgn.default(p), t), dims, keepdim)
    norm = unsqueeze_multiple(result, [] if keepdim else dims, p.dim())
    if order == 2.0:
        out = aten.sum.dim_IntList(_inner(p, t), dims, keepdim) / result
        return aten.masked_fill.Scalar(out, result == 0, 0)
    if order in (float("inf"), float("-inf")):
        mask = aten.abs.default(p) == norm
        return aten.sum.dim_IntList(_inner(aten.sgn.default(p), t) * mask, dims, keepdim) / \
            aten.sum.dim_IntList(mask, dims, keepdim)
    # sgn(p) |p|^(order - 1), 0 at p == 0 (as norm_backward masks it for order < 1)
    scale = aten.sgn.default(p) * aten.pow.Tensor_Scalar(aten.abs.default(p), order - 1)
    scale = aten.masked_fill.Scalar(scale, p == 0, 0)
    out = aten.sum.dim_IntList(_inner(scale, t), dims, keepdim) / \
        aten.pow.Tensor_Scalar(result, order - 1)
    return aten.masked_fill.Scalar(out, result == 0, 0)


def foreach_norm_jvp(selves, tangents, order, results):
    """_foreach_norm: norm_jvp per tensor."""
    return [norm_jvp(p, t, order, r) for p, t, r in zip(selves, tangents, results)]


def convolution_backward_jvp_grad_bias(grad_output_t, grad_bias):
    """The bias gradient is grad_output summed over every dim but the channels."""
    if grad_bias is None:
        return None
    dims = [0] + list(range(2, grad_output_t.dim()))
    return aten.sum.dim_IntList(grad_output_t, dims)


def _normalized_jvp(x_p, x_t, mean, rstd, dims):
    """d((x - mean) * rstd) with mean and rstd taken over ``dims``:
    rstd (t - mean(t)) - x_hat rstd mean(x_hat t)."""
    x_hat = (x_p - mean) * rstd
    centered = x_t - aten.mean.dim(x_t, dims, True)
    return rstd * centered - x_hat * rstd * aten.mean.dim(x_hat * x_t, dims, True), x_hat


def _affine_jvp(out_t, x_hat, weight_p, weight_t, bias_t, view):
    if weight_p is not None:
        out_t = out_t * view(weight_p) + x_hat * view(weight_t)
    if bias_t is not None:
        out_t = out_t + view(bias_t)
    return out_t


def layer_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, mean, rstd,
                   normalized_shape):
    """native_layer_norm's output tangent (mean and rstd broadcast over the
    normalized dims)."""
    axis = input_p.dim() - len(normalized_shape)
    dims = list(range(axis, input_p.dim()))
    keep = list(input_p.shape[:axis]) + [1] * len(normalized_shape)
    mean, rstd = aten.reshape.default(mean, keep), aten.reshape.default(rstd, keep)
    out_t, x_hat = _normalized_jvp(input_p, input_t, mean, rstd, dims)
    return _affine_jvp(out_t, x_hat, weight_p, weight_t, bias_t, lambda w: w)


def group_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, mean, rstd, group):
    """native_group_norm's output tangent: layer norm over each group's
    channels and positions, then the per-channel affine."""
    n = input_p.shape[0]
    grouped = [n, group, -1]
    out_t, x_hat = _normalized_jvp(aten.reshape.default(input_p, grouped),
                                   aten.reshape.default(input_t, grouped),
                                   aten.reshape.default(mean, [n, group, 1]),
                                   aten.reshape.default(rstd, [n, group, 1]), [2])
    out_t = aten.reshape.default(out_t, list(input_p.shape))
    x_hat = aten.reshape.default(x_hat, list(input_p.shape))
    return _affine_jvp(out_t, x_hat, weight_p, weight_t, bias_t,
                       _channel_view(input_p.dim()))


def group_norm_mean_jvp(input_t, mean, group):
    """The tangent of each group's mean."""
    grouped = aten.reshape.default(input_t, [input_t.shape[0], group, -1])
    return aten.reshape.default(aten.mean.dim(grouped, [2], False), list(mean.shape))


def group_norm_invstd_jvp(input_p, input_t, mean, rstd, group):
    """d (var + eps)^-1/2 = -rstd^3 mean((x - mean) t) per group."""
    n = input_p.shape[0]
    centered = aten.reshape.default(input_p, [n, group, -1]) - \
        aten.reshape.default(mean, [n, group, 1])
    spread = aten.mean.dim(centered * aten.reshape.default(input_t, [n, group, -1]), [2], False)
    return aten.reshape.default(-(rstd ** 3) * aten.reshape.default(spread, list(rstd.shape)),
                                list(rstd.shape))


def _channel_view(ndim):
    shape = [1, -1] + [1] * (ndim - 2)
    return lambda w: aten.reshape.default(w, shape)


def batch_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, running_mean,
                   running_var, save_mean, save_invstd, train, eps):
    """native_batch_norm's output tangent: training normalizes with the
    batch statistics (which depend on the input), eval with the running ones."""
    if any(s is not None and has_fw_grad(s) for s in (running_mean, running_var)):
        raise RuntimeError("batch_norm is not differentiable wrt running_mean and running_var, "
                           "they cannot have forward grad defined")
    view = _channel_view(input_p.dim())
    if train:
        dims = [0] + list(range(2, input_p.dim()))
        out_t, x_hat = _normalized_jvp(input_p, input_t, view(save_mean), view(save_invstd), dims)
    else:
        invstd = aten.rsqrt.default(view(running_var) + eps)
        out_t, x_hat = input_t * invstd, (input_p - view(running_mean)) * invstd
    return _affine_jvp(out_t, x_hat, weight_p, weight_t, bias_t, view)


def glu_jvp(result, x_p, x_t, dim):
    """glu(x) = a * sigmoid(b): da sigmoid(b) + result (1 - sigmoid(b)) db."""
    a_t, b_t = aten.chunk.default(x_t, 2, dim)
    b = aten.chunk.default(x_p, 2, dim)[1]
    sig_b = aten.sigmoid.default(b)
    return a_t * sig_b + result * (1 - sig_b) * b_t


def glu_backward_jvp(grad_output_p, grad_output_t, self_p, self_t, dim):
    """glu_backward(gO, x) is linear in gO, and is the gradient of <gO, glu(x)>
    in x: its Jacobian in x is that function's Hessian, symmetric, so the
    double backward applied to x's tangent is the jvp."""
    from .activation import glu_double_backward
    return aten.glu_backward.default(grad_output_t, self_p, dim) + \
        glu_double_backward(self_t, grad_output_p, self_p, dim)


def binary_cross_entropy_backward_jvp(grad_output_p, grad_output_t, self_p, self_t, target_p,
                                      target_t, weight, reduction):
    """gO w (x - t) / (x (1 - x)) (over numel for a mean), elementwise in x and
    t; in gO the tangent stays per element (the double backward's
    grad_output formula sums it to gO's shape, a forward tangent must not)."""
    from .nn import (_bce_denominator, _per_element, _times_weight,
                     binary_cross_entropy_double_backward,
                     binary_cross_entropy_double_backward_target)
    out = binary_cross_entropy_double_backward(grad_output_p, self_t, self_p, target_p, weight,
                                               reduction)
    out = out + binary_cross_entropy_double_backward_target(target_t, grad_output_p, self_p,
                                                            target_p, weight, reduction)
    ratio = (self_p - target_p) / _bce_denominator(self_p)
    return out + _per_element(_times_weight(ratio * grad_output_t, weight), self_p, reduction)


def scatter_reduce_jvp(self_p, self_t, dim, index, src_p, src_t, reduce, include_self, result):
    """sum and mean are linear; amax/amin split the tangent evenly among the
    elements equal to the result; prod gives no tangent, as in PyTorch."""
    if reduce in ("sum", "mean"):
        return aten.scatter_reduce.two(self_t, dim, index, src_t, reduce,
                                       include_self=include_self)
    if reduce in ("amax", "amin"):
        value = aten.gather.default(result, dim, index)
        self_is_result = (self_p == result) & include_self
        src_is_result = src_p == value
        count = aten.scatter_add.default(self_is_result.to(result.dtype), dim, index,
                                         src_is_result.to(result.dtype))
        total = aten.scatter_add.default(self_t * self_is_result, dim, index,
                                         src_t * src_is_result)
        return total / count
    return None


# -- decompositions for jvp (torch/_decomp/decompositions_for_jvp.py) -------------------
#
# Ops without a forward formula whose tangent PyTorch gets by running a
# decomposition under forward AD.  The normalization backwards take the saved
# mean and rstd, which carry no tangent; these versions compute them again
# from the input so that they do.

def _batch_statistics(input, dims, shape, rstd):
    """mean and 1/sqrt(var + eps) of ``input`` over ``dims``, reshaped to
    ``shape``; eps is recovered from the saved ``rstd`` (so the values are
    the saved ones, and the tangents the input's)."""
    mean = aten.mean.dim(input, dims, True)
    var = aten.var.correction(input, dims, correction=0, keepdim=True)
    saved = aten.reshape.default(rstd, list(var.shape))
    eps = aten.detach.default(aten.reciprocal.default(saved) ** 2 - var)
    new_rstd = aten.rsqrt.default(var + eps)
    return aten.reshape.default(mean, shape), aten.reshape.default(new_rstd, shape)


def _native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                                output_mask):
    from ..._decomp import decomposition_table
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    mean, rstd = _batch_statistics(input, dims, list(mean.shape), rstd=rstd)
    return decomposition_table[aten.native_layer_norm_backward.default](
        grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)


def _native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                                save_invstd, train, eps, output_mask):
    from ..._decomp import decomposition_table
    if train:
        dims = [0] + list(range(2, input.dim()))
        save_mean, save_invstd = _batch_statistics(input, dims, [input.shape[1]],
                                                   rstd=save_invstd)
    return decomposition_table[aten.native_batch_norm_backward.default](
        grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
        output_mask)


def _batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                         save_var, update, eps, output_mask, reserve):
    """batch_norm_backward's tangents are native_batch_norm_backward's (its
    decomposition calls that op, whose jvp decomposition is the one above)."""
    return _native_batch_norm_backward(grad_out, input, weight, running_mean, running_var,
                                       save_mean, save_var, update, eps, output_mask)


JVP_DECOMPOSITIONS = {"aten::native_layer_norm_backward": _native_layer_norm_backward,
                      "aten::native_batch_norm_backward": _native_batch_norm_backward,
                      "aten::batch_norm_backward": _batch_norm_backward}


def logcumsumexp_jvp(self_p, self_t, dim):
    """d logcumsumexp: cumsum(exp(p - max) t) / cumsum(exp(p - max)), 0 where
    the running sum is below 1e-13 (complex: without the max shift)."""
    if self_p.is_complex():
        weights = aten.exp.default(self_p)
    else:
        weights = aten.exp.default(self_p - aten.max.dim(self_p, dim, True)[0])
    running = aten.cumsum.default(weights, dim)
    result = aten.cumsum.default(weights * self_t, dim)
    return aten.masked_fill.Scalar(result, running < 1e-13, 0.0) / running


def renorm_jvp(self_p, self_t, p, dim, maxnorm):
    """d renorm: where the norm exceeds maxnorm, t * f + p * df with
    f = maxnorm / (norm + 1e-7); elsewhere t."""
    norm, dims = renorm_norms(self_p, p, dim)
    norm_eps = norm + 1e-7
    factor = maxnorm / norm_eps
    factor_t = -(maxnorm * norm_jvp(self_p, self_t, p, norm, dims, True)) / norm_eps.pow(2)
    return aten.where.self(norm > maxnorm, self_t * factor + self_p * factor_t, self_t)
