"""The decompositions: each computes an aten op with other aten ops, calling
the same ops in the same order as PyTorch's decomposition of that op does
(as a ``TorchDispatchMode`` records them), so a graph traced with this table
equals PyTorch's node for node.  Where PyTorch's decomposition reaches a
``prims`` op (its references do for dtype conversion in layer norm on
float16/bfloat16 input), glasstorch, which has no prims, calls the aten op
the prim stands for (``_to_copy``); see ``tests/test_decomp.py``.

One definition per op (composite kernels in ``_ops/kernels``):

* The CompositeImplicitAutograd ops PyTorch decomposes only through
  ``core_aten_decompositions`` (layer_norm, linear, cross_entropy_loss, ...)
  have no entry here: the core table maps them to ``op.decompose``, i.e. to the
  eager kernel itself.
* dropout, nll_loss, t, squeeze.dim, split.Tensor, zeros_like and ones_like
  have eager kernels that follow PyTorch's C++ composites, whose op sequence
  differs from PyTorch's Python decomposition (dropout: bernoulli_/mul versus
  native_dropout; zeros_like: empty_like + zero_ versus full_like; t: a view
  versus transpose.int; nll_loss: nll_loss_forward versus gather/where).
  Eager must record what PyTorch's eager records and a trace what PyTorch's
  trace records, so these are two algorithms in PyTorch as well; glasstorch
  keeps the kernel for eager and the decomposition here, and shares nothing
  that is not the same computation.
* None of the remaining ops here has a composite kernel in glasstorch (their
  eager kernels are numpy kernels), so each is defined once, here.

Dtypes: PyTorch's pointwise decompositions compute float16/bfloat16 in
float32 and convert back (``_opmath``); the normalization ones convert to the
computation dtype explicitly, as written below.
"""
from __future__ import annotations

import functools
import math

import glasstorch as torch
from glasstorch import ops

from . import register_decomposition

aten = ops.aten

MEAN, SUM = 1, 2   # at::Reduction


# -- helpers ---------------------------------------------------------------------------

def _computation_dtype(dtype):
    """The dtype PyTorch's decompositions compute a dtype's values in."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _opmath(fn):
    """Run ``fn`` on its tensor arguments converted to the computation dtype of
    their promoted type, and convert tensor results back to that type
    (``.to`` records ``_to_copy`` only where the dtype changes)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        result_dtype = torch.result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
        compute = _computation_dtype(result_dtype)
        up = [a.to(compute) if isinstance(a, torch.Tensor) else a for a in args]
        kw = {k: v.to(compute) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        result = fn(*up, **kw)
        if isinstance(result, tuple):
            return tuple(r.to(result_dtype) if isinstance(r, torch.Tensor) else r for r in result)
        return result.to(result_dtype)
    return wrapper


def out_wrapper(*names):
    """Give a functional decomposition the out= overload's keywords (``names``,
    default ``out``): compute, resize each out tensor whose shape differs, then
    ``copy_`` into it, and return the out tensor(s)."""
    names = names or ("out",)

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            outs = [kwargs.pop(n, None) for n in names]
            result = fn(*args, **kwargs)
            if outs[0] is None:
                return result
            results = result if len(names) > 1 else (result,)
            for out, r in zip(outs, results):
                if out.shape != r.shape:
                    out.resize_(r.shape)
                out.copy_(r)
            return tuple(outs) if len(names) > 1 else outs[0]
        return wrapper
    return decorate


def _where_else_zero(cond, value):
    """``torch.where(cond, value, 0)`` as PyTorch's binding records it: the 0 as
    a ``scalar_tensor`` of ``value``'s dtype, then ``where.self``."""
    zero = aten.scalar_tensor.default(0, dtype=value.dtype, layout=torch.strided,
                                      device=value.device)
    return aten.where.self(cond, value, zero)


def _contiguous(x):
    """``x``, or its contiguous clone (recorded as ``clone``, as PyTorch's
    reference records it)."""
    if x.is_contiguous():
        return x
    return aten.clone.default(x, memory_format=torch.contiguous_format)


def _unsqueeze_to_dim(x, ndim):
    """Append trailing size-1 dims until ``x`` has ``ndim`` dims."""
    for _ in range(ndim - x.dim()):
        x = x.unsqueeze(-1)
    return x


# -- activations -----------------------------------------------------------------------

_SQRT1_2 = 0.70710678118654752440
_2_SQRTPI = 1.12837916709551257390
_SQRT2 = 1.41421356237309504880
_KAPPA = 0.044715


@register_decomposition([aten.gelu.default, aten.gelu.out])
@out_wrapper()
@_opmath
def gelu(self, *, approximate="none"):
    """x * Φ(x), with Φ from erf, or tanh's approximation."""
    if approximate == "tanh":
        beta = _SQRT2 * _2_SQRTPI * 0.5
        inner = beta * (self + _KAPPA * (self * self * self))
        return 0.5 * self * (1 + torch.tanh(inner))
    return self * 0.5 * (1 + torch.erf(self * _SQRT1_2))


@register_decomposition(aten.gelu_backward)
@out_wrapper("grad_input")
@_opmath
def gelu_backward(grad, self, approximate="none"):
    """grad * d/dx gelu(x): Φ(x) + x φ(x), or the tanh form's product rule."""
    if approximate == "tanh":
        beta = _SQRT2 * _2_SQRTPI * 0.5
        x_sq = self * self
        tanh_inner = torch.tanh(beta * (self + _KAPPA * (x_sq * self)))
        left = 0.5 * self
        right = 1 + tanh_inner
        d_left = 0.5 * right
        d_tanh = 1 - tanh_inner * tanh_inner
        d_inner = beta * (1 + 3 * _KAPPA * x_sq)
        return grad * (d_left + left * d_tanh * d_inner)
    cdf = 0.5 * (1 + torch.erf(self * _SQRT1_2))
    pdf = (_2_SQRTPI * _SQRT1_2 * 0.5) * torch.exp(self * self * -0.5)
    return grad * (cdf + self * pdf)


@register_decomposition(aten.silu)
@out_wrapper()
@_opmath
def silu(self):
    """x * sigmoid(x)."""
    return self * torch.sigmoid(self)


@register_decomposition(aten.silu_backward)
@out_wrapper("grad_input")
@_opmath
def silu_backward(grad_output, self):
    """grad * s * (1 + x (1 - s)), s = sigmoid(x)."""
    s = torch.sigmoid(self)
    return grad_output * s * (1 + self * (1 - s))


@register_decomposition(aten.sigmoid_backward)
@out_wrapper("grad_input")
@_opmath
def sigmoid_backward(grad_output, y):
    """grad * y (1 - y), y = sigmoid(x); conj for complex y."""
    return grad_output * (y * (1 - y)).conj_physical()


@register_decomposition(aten.tanh_backward)
@out_wrapper("grad_input")
@_opmath
def tanh_backward(grad_output, y):
    """grad * (1 - y²), y = tanh(x); conj for complex y."""
    return grad_output * (1 - y * y).conj_physical()


@register_decomposition(aten.threshold_backward)
@out_wrapper("grad_input")
def threshold_backward(grad_output, self, threshold):
    """grad where x > threshold, else 0."""
    below = self <= threshold
    zero = aten.scalar_tensor.default(0, dtype=grad_output.dtype, layout=torch.strided,
                                      device=grad_output.device)
    return aten.where.self(below, zero, grad_output)


# -- softmax ---------------------------------------------------------------------------

def _softmax_input(x, half_to_float):
    """Contiguous ``x`` in its computation dtype, and the dtype to return."""
    x = _contiguous(x)
    if half_to_float and x.dtype != torch.float16:
        raise AssertionError(f"half_to_float is True but x.dtype is {x.dtype}, "
                             f"expected torch.half")
    result_dtype = x.dtype
    return x.to(_computation_dtype(result_dtype)), result_dtype


@register_decomposition(aten._softmax)
@out_wrapper()
def _softmax(x, dim, half_to_float):
    """exp(x - max) / sum(exp(x - max)) along ``dim``."""
    x, result_dtype = _softmax_input(x, half_to_float)
    unnormalized = torch.exp(x - torch.amax(x, dim, keepdim=True))
    result = unnormalized / torch.sum(unnormalized, dim, keepdim=True)
    return result if half_to_float else result.to(result_dtype)


@register_decomposition(aten._log_softmax)
@out_wrapper()
def _log_softmax(x, dim, half_to_float):
    """(x - max) - log(sum(exp(x - max))) along ``dim``."""
    x, result_dtype = _softmax_input(x, half_to_float)
    shifted = x - torch.amax(x, dim, keepdim=True)
    result = shifted - torch.log(torch.sum(torch.exp(shifted), dim, keepdim=True))
    return result if half_to_float else result.to(result_dtype)


def _in_computation_dtype(fn):
    """Run ``fn`` on tensors converted to their computation dtype; its result is
    returned as is (the softmax backwards convert it to ``input_dtype`` when
    that differs from the computation dtype)."""
    @functools.wraps(fn)
    def wrapper(grad_output, output, dim, input_dtype):
        compute = _computation_dtype(torch.result_type(grad_output, output))
        return fn(grad_output.to(compute), output.to(compute), dim, input_dtype)
    return wrapper


@register_decomposition(aten._softmax_backward_data)
@out_wrapper("grad_input")
@_in_computation_dtype
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """y * (g - sum(g * y)), y the softmax output, as a contiguous tensor."""
    grad_y = grad_output * output
    grad_input = grad_y - output * torch.sum(grad_y, dim=dim, keepdim=True)
    if grad_output.dtype != input_dtype:
        grad_input = grad_input.to(input_dtype)
    return _contiguous(grad_input)


@register_decomposition(aten._log_softmax_backward_data)
@out_wrapper()
@_in_computation_dtype
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    """g - exp(y) * sum(g), y the log_softmax output."""
    grad_input = grad_output - torch.exp(output) * torch.sum(grad_output, dim=dim, keepdim=True)
    return grad_input.to(input_dtype) if grad_output.dtype != input_dtype else grad_input


# -- matrix products -------------------------------------------------------------------

@register_decomposition([aten.addmm.default, aten.addmm.out])
@out_wrapper()
@_opmath
def addmm(self, mat1, mat2, beta=1, alpha=1):
    """alpha * (mat1 @ mat2) + beta * self, the product first so the result
    takes mm's contiguous strides."""
    if not self.is_floating_point() and not self.is_complex():
        beta, alpha = int(beta), int(alpha)
    out = alpha * torch.mm(mat1, mat2)
    return out if beta == 0 else out + beta * self


# -- dropout ---------------------------------------------------------------------------

@register_decomposition(aten.dropout)
def dropout(input, p, train):
    """native_dropout's output when training with p > 0, else a clone."""
    if train and p != 0:
        return aten.native_dropout.default(input, p, train)[0]
    return input.clone()


@register_decomposition(aten.native_dropout)
@out_wrapper("out0", "out1")
def native_dropout(input, p, train):
    """Keep each element with probability 1 - p (rand_like > p), scaled by
    1 / (1 - p); returns (output, mask)."""
    if train and p != 0:
        if p == 1:
            return torch.zeros_like(input), torch.zeros_like(input, dtype=torch.bool)
        if not input.dtype.is_floating_point:
            raise RuntimeError("result type Float can't be cast to the desired output type Long")
        mask = torch.rand_like(input) > p
        return mask * input * float(1.0 / (1.0 - p)), mask
    return input, torch.ones_like(input, dtype=torch.bool)


@register_decomposition(aten.native_dropout_backward)
@out_wrapper()
def native_dropout_backward(grad_output, mask, scale):
    """grad * mask * scale, in grad's memory format."""
    memory_format = torch.channels_last if grad_output.dim() == 4 and \
        grad_output.is_contiguous(memory_format=torch.channels_last) and \
        not grad_output.is_contiguous() else torch.contiguous_format
    return (grad_output * (mask.type_as(grad_output) * scale)).clone(memory_format=memory_format)


# -- normalization ---------------------------------------------------------------------

@register_decomposition([aten.native_layer_norm.default, aten.native_layer_norm.out])
@out_wrapper("out0", "out1", "out2")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(x - mean) * rsqrt(var + eps) over the last len(normalized_shape) dims,
    then * weight + bias; mean and rstd keep the reduced dims as size 1."""
    ndim = len(normalized_shape)
    if ndim < 1:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{list(normalized_shape)}")
    if input.dim() < ndim or tuple(input.shape[input.dim() - ndim:]) != tuple(normalized_shape):
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape {list(normalized_shape)}, but got input of size "
                           f"{input.shape}")
    input = _contiguous(input)
    weight = _contiguous(weight) if weight is not None else None
    bias = _contiguous(bias) if bias is not None else None
    x = input.to(_computation_dtype(input.dtype))
    var, mean = torch.var_mean(x, dim=list(range(input.dim() - ndim, input.dim())),
                               unbiased=False, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.to(input.dtype), mean.to(input.dtype), rstd.to(input.dtype)


@register_decomposition(aten.native_layer_norm_backward.default)
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    """Gradients of native_layer_norm: for x̂ = (x - mean) * rstd and
    g = grad * weight, dx = rstd / N * (N g - Σg - x̂ Σ(g x̂)), dweight =
    Σ_outer grad x̂, dbias = Σ_outer grad (N: the normalized element count)."""
    compute = _computation_dtype(input.dtype)
    grad_c, input_c, weight_c, bias_c = (
        t.to(compute, memory_format=torch.contiguous_format) if t is not None else None
        for t in (grad_out, input, weight, bias))
    ndim = input.dim()
    axis = ndim - len(normalized_shape)
    inner_dims, outer_dims = list(range(axis, ndim)), list(range(axis))
    n = math.prod(input.shape[axis:])
    m = math.prod(input.shape[:axis])
    if n == 0 or m == 0:
        inner_shape = input.shape[axis:]
        return (input.new_zeros(input.shape) if output_mask[0] else None,
                input.new_zeros(inner_shape) if output_mask[1] else None,
                input.new_zeros(inner_shape) if output_mask[2] else None)
    mean = _unsqueeze_to_dim(mean, ndim)
    rstd = _unsqueeze_to_dim(rstd, ndim)
    x_hat = (input_c - mean) * rstd
    grad_x_hat = grad_c * weight_c if weight_c is not None else grad_c
    a = grad_x_hat * n
    b = torch.sum(grad_x_hat, inner_dims, True)
    c = torch.mul(x_hat, torch.sum(torch.mul(grad_x_hat, x_hat), inner_dims, True))
    inner = a - b - c
    d_input = d_weight = d_bias = None
    if output_mask[0]:
        d_input = (rstd / n) * inner
    if output_mask[1] and weight_c is not None:
        d_weight = torch.sum(grad_c * x_hat, outer_dims, False) if outer_dims \
            else grad_c * x_hat
    if output_mask[2] and bias_c is not None:
        d_bias = torch.sum(grad_c, outer_dims, False) if outer_dims else grad_c.clone()
    return (d_input.to(input.dtype) if d_input is not None else None,
            d_weight.to(weight.dtype) if d_weight is not None else None,
            d_bias.to(bias.dtype) if d_bias is not None else None)


@register_decomposition(aten.native_batch_norm)
@out_wrapper("out", "save_mean", "save_invstd")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """Normalize over every dim but 1: with the batch's statistics when
    training (updating the running ones in place with ``momentum``, the
    variance unbiased), else with the running ones; on CPU the saved
    statistics of evaluation are empty."""
    ndim = input.dim()
    reduction_dims = [0] + list(range(2, ndim))
    compute = _computation_dtype(input.dtype)
    if training:
        var, mean = torch.var_mean(input.to(dtype=compute), dim=reduction_dims, correction=0,
                                   keepdim=True)
        rstd = torch.rsqrt(var + eps)
        output = (input - mean) * rstd
        save_mean = torch.squeeze(mean, reduction_dims)
        save_rstd = torch.squeeze(rstd, reduction_dims)
        if running_mean is not None:
            running_mean.copy_(momentum * save_mean + (1 - momentum) * running_mean)
        if running_var is not None:
            n = input.numel() / input.shape[1]
            unbiased = torch.squeeze(var, reduction_dims) * (n / (n - 1))
            running_var.copy_(momentum * unbiased + (1 - momentum) * running_var)
    else:
        if running_mean is None or running_var is None:
            raise AssertionError("running_mean and running_var must not be None in eval mode")
        mean = running_mean.to(dtype=compute, copy=True)
        invstd = 1 / torch.sqrt(running_var.to(dtype=compute, copy=True) + eps)
        save_mean = input.new_zeros((0,))
        save_rstd = input.new_zeros((0,))
        mean = _unsqueeze_to_dim(mean, ndim - 1)
        invstd = _unsqueeze_to_dim(invstd, ndim - 1)
        output = (input - mean) * invstd
    if weight is not None:
        output = output * _unsqueeze_to_dim(weight.flatten(), ndim - 1)
    if bias is not None:
        output = output + _unsqueeze_to_dim(bias.flatten(), ndim - 1)
    return (output.to(dtype=input.dtype), save_mean.to(dtype=input.dtype),
            save_rstd.to(dtype=input.dtype))


def _to_channel_shape(x, shape):
    """Unsqueeze ``x`` (a per-channel vector, or a reduced tensor) to broadcast
    against ``shape``'s dim 1: [1, C, 1, ...]."""
    for axis, size in enumerate(shape):
        if size == 1 and not (axis < x.dim() and x.shape[axis] == size):
            x = x.unsqueeze(axis)
    return x


@register_decomposition(aten.native_batch_norm_backward.default)
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):
    """Gradients of native_batch_norm over every dim but 1 (M elements per
    channel): dx = (g - (x - mean) Σ(g (x-mean)) invstd² / M - Σg / M) *
    invstd * weight when training (batch statistics), g * invstd * weight in
    evaluation; dweight = Σ(g (x - mean)) * invstd; dbias = Σg."""
    weight_dtype = weight.dtype if weight is not None else input.dtype
    compute = _computation_dtype(input.dtype)
    grad_c, input_c, weight_c, rmean_c, rvar_c, mean, invstd = (
        t.to(compute) if t is not None else None
        for t in (grad_out, input, weight, running_mean, running_var, save_mean, save_invstd))
    ndim = input.dim()
    if ndim < 2:
        raise AssertionError(f"rank of the input must be at least 2, got {ndim}")
    per_channel = math.prod(input.shape) / input.shape[1]
    if train:
        if mean is None or invstd is None:
            raise AssertionError("mean and invstd must not be None in training mode")
    else:
        if rmean_c is None or rvar_c is None:
            raise AssertionError("running_mean_cast and running_var_cast must not be None "
                                 "in eval mode")
        mean = rmean_c
        invstd = torch.rsqrt(rvar_c + eps)
    shape = [1] * ndim
    shape[1] = input.shape[1]
    reduction_dims = [d for d in range(ndim) if d != 1]
    mean = _to_channel_shape(mean, shape)
    norm = 1.0 / per_channel
    grad_sum = torch.sum(grad_c, reduction_dims)
    dot_p = torch.sum(grad_c * (input_c - mean), reduction_dims)
    grad_mean = _to_channel_shape(grad_sum * norm, shape)
    proj_scale = _to_channel_shape(torch.mul(dot_p * norm, invstd * invstd), shape)
    if weight_c is None:
        grad_scale = _to_channel_shape(invstd, shape) * 1.0
    else:
        grad_scale = _to_channel_shape(invstd * weight_c, shape)
    if train:
        proj = (input_c - mean) * proj_scale
        grad_input = ((grad_c - proj) - grad_mean) * grad_scale
    else:
        grad_input = grad_c * grad_scale
    grad_weight = dot_p * invstd if output_mask[1] else None
    grad_bias = grad_sum if output_mask[2] else None
    return (grad_input.to(input.dtype),
            grad_weight.to(weight_dtype) if grad_weight is not None else None,
            grad_bias.to(weight_dtype) if grad_bias is not None else None)


# -- losses ----------------------------------------------------------------------------

def _reduce(loss, reduction):
    """at::Reduction: mean, sum, or the elementwise loss."""
    if reduction == MEAN:
        return torch.mean(loss)
    if reduction == SUM:
        return torch.sum(loss)
    return loss


@register_decomposition(aten.mse_loss)
@out_wrapper()
@_opmath
def mse_loss(self, target, reduction=MEAN):
    """(x - y)², reduced."""
    return _reduce((self - target) ** 2, reduction)


@register_decomposition(aten.mse_loss_backward)
@out_wrapper("grad_input")
@_opmath
def mse_loss_backward(grad_output, input, target, reduction):
    """2 (x - y) * grad, divided by the element count for the mean."""
    norm = 2.0 / input.numel() if reduction == MEAN else 2.0
    return norm * (input - target) * grad_output


@register_decomposition(aten.nll_loss_forward)
@out_wrapper("output", "total_weight")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    """-input[target] (times weight[target]) for targets != ignore_index, as the
    elementwise loss or reduced; returns (loss, total weight)."""
    if not 0 < self.dim() <= 2:
        raise AssertionError(f"input tensor should be 1D or 2D, got {self.dim()}D")
    if target.dim() > 1:
        raise AssertionError(f"0D or 1D target tensor expected, multi-target not supported, "
                             f"got {target.dim()}D")
    if not (self.dim() == 1 and target.dim() == 0) and self.shape[0] != target.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {self.shape}, target: {target.shape})")
    channel_dim = 1 if self.dim() >= 2 else 0
    if weight is not None:
        shape = [1] * self.dim()
        shape[channel_dim] = weight.shape[0]
        w = weight.view(shape) if self.dim() > 1 else weight
        self = self * w
    safe_target = _where_else_zero(target != ignore_index, target).unsqueeze(channel_dim)
    result = -torch.gather(self, channel_dim, safe_target).squeeze(channel_dim)
    result = _where_else_zero(target != ignore_index, result)
    if reduction == 0 and self.dim() > 1:
        return result, self.new_full((), 0.0)
    if weight is not None:
        picked = torch.gather(w.expand(self.shape), channel_dim, safe_target).squeeze(channel_dim)
        total_weight = _where_else_zero(target != ignore_index, picked).sum()
    else:
        total_weight = (target != ignore_index).sum().to(self)
    if reduction == SUM:
        result = result.sum()
    elif reduction == MEAN:
        result = result.sum() / total_weight
    return result, total_weight


@register_decomposition(aten.nll_loss_backward)
@out_wrapper("grad_input")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """-grad (times weight[target], over total_weight for the mean) scattered
    to each row's target class; 0 for ignored targets."""
    if not 0 <= self.dim() <= 2:
        raise AssertionError(f"input tensor should be 1D or 2D, got {self.dim()}D")
    if target.dim() > 1:
        raise AssertionError(f"0D or 1D target tensor expected, multi-target not supported, "
                             f"got {target.dim()}D")
    channel_dim = 0 if self.dim() < 2 else 1
    if reduction == MEAN:
        grad_output = grad_output / total_weight
    if self.dim() == 1 and target.dim() > 0:
        target = target[0]
    target = target.unsqueeze(channel_dim)
    safe_target = _where_else_zero(target != ignore_index, target)
    grad_input = torch.scatter(torch.zeros_like(self), channel_dim, safe_target, -1.0)
    if grad_input.dim() > grad_output.dim() > 0:
        grad_output = grad_output.unsqueeze(channel_dim)
    if weight is not None:
        shape = [1] * self.dim()
        shape[channel_dim] = weight.shape[0]
        grad_output = grad_output * weight.reshape(shape)
    grad_output = _where_else_zero(target != ignore_index, grad_output)
    return grad_input * grad_output


# -- pointwise with scalars ------------------------------------------------------------

@register_decomposition([aten.addcmul.default, aten.addcmul.out])
@out_wrapper()
@_opmath
def addcmul(self, tensor1, tensor2, *, value=1):
    """self + value * tensor1 * tensor2 (the scale first, as PyTorch's reference)."""
    return self + value * tensor1 * tensor2


@register_decomposition([aten.addcdiv.default, aten.addcdiv.out])
@out_wrapper()
@_opmath
def addcdiv(self, tensor1, tensor2, *, value=1):
    """self + value * tensor1 / tensor2."""
    return self + value * tensor1 / tensor2
