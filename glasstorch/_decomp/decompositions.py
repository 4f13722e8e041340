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
float32 and convert back (``_opmath``; its references do the same through
their type-promotion wrapper); the normalization ones convert to the
computation dtype explicitly, as written below.

Not here, though PyTorch's table has them:

* squeeze.dims, _unsafe_masked_index, _unsafe_masked_index_put_accumulate,
  full_like-based fills other than zeros_like/ones_like, and the in-place ops
  PyTorch derives from references (abs_, clamp_min_, lerp_, elu_, mish_ ...):
  their decompositions record ``prims`` ops, or ops glasstorch does not
  declare (_unsafe_index, _unsafe_index_put);
* soft_margin_loss, im2col, col2im: glasstorch does not declare the ops;
* smooth_l1_loss_backward.grad_input, huber_loss_backward.out: separate
  functions in PyTorch, not written yet.

embedding_dense_backward converts int32 indices with ``_to_copy`` where
PyTorch's reference records ``prims.convert_element_type``.
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
    ``copy_`` into it (an out tensor whose result is None is left as it is), and
    return the out tensor(s)."""
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
                if r is None:      # an output the mask did not ask for
                    continue
                if out.shape != r.shape:
                    out.resize_(r.shape)
                out.copy_(r)
            return tuple(outs) if len(names) > 1 else outs[0]
        return wrapper
    return decorate


def _scalar_tensor(value, dtype, device):
    return aten.scalar_tensor.default(value, dtype=dtype, layout=torch.strided, device=device)


def _where(cond, x, y):
    """``torch.where(cond, x, y)`` as PyTorch's binding records it when ``x`` or
    ``y`` is a Python number: each number becomes a ``scalar_tensor`` (of the
    tensor side's dtype; of the numbers' own type when both are numbers, ``y``
    first), then ``where.self``."""
    if not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
        dtype = torch.float32 if isinstance(x, float) or isinstance(y, float) else torch.int64
        y = _scalar_tensor(y, dtype, cond.device)
        x = _scalar_tensor(x, dtype, cond.device)
    elif not isinstance(x, torch.Tensor):
        x = _scalar_tensor(x, y.dtype, y.device)
    elif not isinstance(y, torch.Tensor):
        y = _scalar_tensor(y, x.dtype, x.device)
    return aten.where.self(cond, x, y)


def _where_else_zero(cond, value):
    """``torch.where(cond, value, 0)``."""
    return _where(cond, value, 0)


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


def _unsqueeze_dims(x, dims):
    """Insert a size-1 dim at each of ``dims``, in increasing order."""
    for d in sorted(dims):
        x = torch.unsqueeze(x, d)
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
    return _where(self <= threshold, 0, grad_output)


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


@register_decomposition(aten.native_layer_norm_backward)
@out_wrapper("out0", "out1", "out2")
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
            n = input.numel() // input.shape[1]
            unbiased = _times_ratio(torch.squeeze(var, reduction_dims), n, n - 1)
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


def _times_ratio(t, numerator, count):
    """``t`` times ``numerator / count`` (a mean's ``1 / N``): the ratio first,
    as PyTorch's decompositions round it; with a symbolic count (a SymInt,
    whose ratio would be a SymFloat) ``t * numerator`` divided by it."""
    if isinstance(count, int):
        return (numerator / count) * t
    return t * numerator / count


@register_decomposition(aten.native_batch_norm_backward)
@out_wrapper("out0", "out1", "out2")
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
    per_channel = math.prod(input.shape) // input.shape[1]     # elements of each channel
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
    grad_sum = torch.sum(grad_c, reduction_dims)
    dot_p = torch.sum(grad_c * (input_c - mean), reduction_dims)
    grad_mean = _to_channel_shape(_times_ratio(grad_sum, 1.0, per_channel), shape)
    proj_scale = _to_channel_shape(torch.mul(_times_ratio(dot_p, 1.0, per_channel),
                                             invstd * invstd), shape)
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


@register_decomposition(aten.batch_norm_backward)
def batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_var,
                        update, eps, output_mask, reserve):
    """_batch_norm_with_update / _no_update's backward: native_batch_norm_backward,
    with the batch's statistics when the forward updated the running ones."""
    return native_batch_norm_backward(grad_out, input, weight, running_mean, running_var,
                                      save_mean, save_var, update, eps, output_mask)


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
    scaled = _times_ratio(input - target, 2.0, input.numel()) if reduction == MEAN else \
        2.0 * (input - target)
    return scaled * grad_output


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


# -- views and shape ops ---------------------------------------------------------------

@register_decomposition(aten.t.default)
def t(self):
    """transpose(0, 1); a tensor of fewer than 2 dims is transposed with itself."""
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    return torch.transpose(self, 0, 0 if self.dim() < 2 else 1)


@register_decomposition(aten.transpose.int)
def transpose(self, dim0, dim1):
    """The permutation swapping dim0 and dim1; an alias when that is the identity."""
    if self.dim() <= 1 or dim0 == dim1:
        return aten.alias.default(self)
    perm = list(range(self.dim()))
    dim0, dim1 = dim0 % self.dim(), dim1 % self.dim()
    perm[dim0], perm[dim1] = dim1, dim0
    return torch.permute(self, perm)


@register_decomposition([aten.squeeze.default, aten.squeeze.dim])
def squeeze(self, dim=None):
    """squeeze.dims over every dim, or over ``[dim]``."""
    return aten.squeeze.dims(self, list(range(self.dim())) if dim is None else [dim])


@register_decomposition(aten.split.Tensor)
def split(self, split_size, dim=0):
    """split_with_sizes into pieces of split_size, the last one shorter; an
    empty dim gives its tensor, detached."""
    dim_size = self.shape[dim]
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    if dim_size == 0:
        return (self.detach(),)
    if split_size == 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {dim_size}")
    chunks = (dim_size + split_size - 1) // split_size
    sizes = [split_size] * chunks
    sizes[-1] = dim_size - split_size * (chunks - 1)
    return torch.split(self, sizes, dim)


@register_decomposition(aten.split_with_sizes)
def split_with_sizes(self, split_sizes, dim=0):
    """One as_strided view per piece, each starting where the previous ended."""
    if any(size < 0 for size in split_sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries")
    if sum(split_sizes) != self.shape[dim]:
        raise ValueError(f"Split sizes add up to {sum(split_sizes)} but got the tensor's size "
                         f"of {self.shape[dim]}")
    pieces, offset = [], self.storage_offset()
    for size in split_sizes:
        shape = list(self.shape)
        shape[dim] = size
        pieces.append(self.as_strided(shape, self.stride(), offset))
        offset += self.stride()[dim] * size
    return pieces


@register_decomposition(aten.stack)
@out_wrapper()
def stack(tensors, dim=0):
    """cat along ``dim`` viewed with the new dim inserted; stacking after the
    last dim instead cats the tensors each unsqueezed there."""
    if len(tensors) == 0:
        raise AssertionError("stack expects a non-empty TensorList")
    ndim = tensors[0].dim()
    dim = dim % (ndim + 1)
    if dim < ndim:
        for i, t in enumerate(tensors):
            if t.shape != tensors[0].shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                                   f"{list(tensors[0].shape)} at entry 0 and "
                                   f"{list(t.shape)} at entry {i}")
        sizes = list(tensors[0].shape)
        sizes.insert(dim, len(tensors))
        return torch.cat(tensors, dim).view(sizes)
    return torch.cat([t.unsqueeze(dim) for t in tensors], dim)


# -- pointwise: arithmetic, clamps, fills ----------------------------------------------

@register_decomposition(aten.rsub)
@out_wrapper()
def rsub(self, other, alpha=1):
    """other - alpha * self."""
    return torch.sub(other, self, alpha=alpha)


@register_decomposition(aten.clamp_min)
@out_wrapper()
def clamp_min(self, min):
    return torch.clamp(self, min=min)


@register_decomposition(aten.clamp_max)
@out_wrapper()
def clamp_max(self, max):
    return torch.clamp(self, max=max)


def _filled_like(fill_true, fill_other):
    """zeros_like / ones_like: full_like with the fill value (a bool for a
    bool result)."""
    def decomposition(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                      memory_format=None):
        fill = fill_true if (dtype or self.dtype) == torch.bool else fill_other
        return torch.full_like(self, fill, dtype=dtype, layout=layout, device=device,
                               pin_memory=bool(pin_memory),
                               memory_format=memory_format or torch.preserve_format)
    return decomposition


zeros_like = register_decomposition(aten.zeros_like)(out_wrapper()(_filled_like(False, 0)))
ones_like = register_decomposition(aten.ones_like)(out_wrapper()(_filled_like(True, 1)))


@register_decomposition(aten.masked_fill)
@out_wrapper()
def masked_fill(self, mask, value):
    """where(mask, value, self), contiguous; a tensor value must be 0-dim."""
    if isinstance(value, torch.Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"only supports a 0-dimensional value tensor, but got tensor "
                               f"with {value.dim()} dimension")
        value = value.to(self.dtype)
    return _where(mask, value, self).contiguous()


@register_decomposition(aten.masked_fill_)
def masked_fill_(self, mask, value):
    """masked_fill, copied into self."""
    return self.copy_(torch.masked_fill(self, mask, value))


@register_decomposition(aten.lerp)
@out_wrapper()
@_opmath
def lerp(start, end, weight):
    """start + weight (end - start), computed from ``end`` when |weight| >= 0.5
    (the side where the difference is small, for accuracy)."""
    if not isinstance(weight, torch.Tensor):
        weight = start.new_full((), weight)
    near_end = weight.abs() >= 0.5
    coeff = torch.where(near_end, weight - 1, weight)
    base = torch.where(near_end, end, start)
    return coeff * (end - start) + base


@register_decomposition(aten.logsumexp)
@out_wrapper()
def logsumexp(self, dim, keepdim=False):
    """log(sum(exp(x - max))) + max, with infinite maxima taken as 0; an
    integer tensor gives the default float dtype."""
    if not isinstance(dim, (list, tuple)):
        dim = [dim]
    result_dtype = self.dtype if self.is_floating_point() or self.is_complex() \
        else torch.get_default_dtype()
    self = self.to(_computation_dtype(result_dtype))
    if self.numel() == 0:
        return torch.sum(torch.exp(self), dim, keepdim).log().to(result_dtype)
    maxes = torch.amax(self, dim, keepdim=True)
    maxes = torch.masked_fill(maxes, maxes.abs() == float("inf"), 0)
    squeezed = maxes if keepdim else torch.squeeze(maxes, dim)
    result = torch.sum(torch.exp(self - maxes), dim, keepdim).log().add(squeezed)
    return result.to(result_dtype)


# -- activations (continued) -----------------------------------------------------------

@register_decomposition(aten.leaky_relu)
@out_wrapper()
@_opmath
def leaky_relu(self, negative_slope=0.01):
    """x where x > 0, else negative_slope * x."""
    return torch.where(torch.gt(self, 0), self, torch.mul(self, negative_slope))


@register_decomposition(aten.leaky_relu_backward)
@out_wrapper("grad_input")
@_opmath
def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    return torch.where(self > 0, grad_output, grad_output * negative_slope)


@register_decomposition(aten.elu)
@out_wrapper()
@_opmath
def elu(self, alpha=1, scale=1, input_scale=1):
    """scale * x for x > 0, else alpha * scale * (exp(input_scale * x) - 1)."""
    return torch.where(self > 0, scale * self, (alpha * scale) * torch.expm1(self * input_scale))


@register_decomposition(aten.elu_backward)
@out_wrapper("grad_input")
@_opmath
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """grad * scale for positive inputs; below, the derivative
    input_scale * alpha * scale * exp(input_scale * x), written in the output
    y as input_scale * (y + alpha * scale) when ``is_result``."""
    negative = alpha * scale
    nonpositive = self_or_result <= 0
    if is_result:
        below = grad_output * input_scale * (self_or_result + negative)
    else:
        below = grad_output * input_scale * negative * torch.exp(self_or_result * input_scale)
    return torch.where(nonpositive, below, grad_output * scale)


@register_decomposition([aten.hardtanh.default, aten.hardtanh.out])
@out_wrapper()
@_opmath
def hardtanh(self, min_val=-1, max_val=1):
    """clamp(x, min_val, max_val) (integer bounds for an integer tensor)."""
    if self.dtype == torch.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if not self.is_floating_point() and not self.is_complex():
        min_val, max_val = int(min_val), int(max_val)
        if self.dtype == torch.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("Cannot do hardtanh on an unsigned type with negative limits")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return torch.clamp(self, min_val, max_val)


@register_decomposition(aten.hardtanh_backward)
@out_wrapper("grad_input")
@_opmath
def hardtanh_backward(grad_output, self, min_val, max_val):
    """grad strictly inside (min_val, max_val), else 0 (compared in the
    computation dtype, as the eager kernel compares)."""
    return _where((self <= min_val) | (self >= max_val), 0.0, grad_output)


@register_decomposition(aten.softplus)
@out_wrapper()
@_opmath
def softplus(self, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, or x itself where beta x > threshold."""
    scaled = self * beta
    smooth = torch.log1p(torch.exp(scaled)) / beta
    return torch.where(scaled > threshold, self, smooth)


@register_decomposition(aten.softplus_backward)
@out_wrapper("grad_input")
@_opmath
def softplus_backward(grad_output, self, beta, threshold):
    """grad * sigmoid(beta x) as z / (z + 1), z = exp(beta x); grad above the
    threshold."""
    z = (self * beta).exp()
    return torch.where(self * beta > threshold, grad_output, grad_output * z / (z + 1.0))


@register_decomposition(aten.hardsigmoid)
@out_wrapper()
@_opmath
def hardsigmoid(self):
    """clamp(x + 3, 0, 6) / 6."""
    return torch.clamp(torch.clamp(self + 3, min=0), max=6) / 6


@register_decomposition(aten.hardsigmoid_backward)
@out_wrapper("grad_input")
@_opmath
def hardsigmoid_backward(grad_output, self):
    """grad / 6 inside (-3, 3), else 0."""
    return _where((self > -3.0) & (self < 3.0), grad_output * (1.0 / 6.0), 0.0)


@register_decomposition(aten.hardswish)
@out_wrapper()
@_opmath
def hardswish(self):
    """x * clamp(x + 3, 0, 6) / 6."""
    return self * torch.clamp(torch.clamp(self + 3, min=0), max=6) / 6


@register_decomposition(aten.hardswish_backward)
@out_wrapper()
@_opmath
def hardswish_backward(grad_output, self):
    """0 up to -3, grad * (x / 3 + 0.5) up to 3, grad above."""
    return _where(self <= -3, 0.0,
                  torch.where(self < 3, grad_output * ((self / 3) + 0.5), grad_output))


@register_decomposition(aten.mish)
@out_wrapper()
@_opmath
def mish(self):
    """x * tanh(softplus(x))."""
    return self * torch.tanh(torch.nn.functional.softplus(self))


@register_decomposition(aten.log_sigmoid_forward)
@out_wrapper("output", "buffer")
@_opmath
def log_sigmoid_forward(self):
    """min(x, 0) - log1p(exp(-|x|)); the buffer (kept for the backward) is
    exp(-|x|) on CPU."""
    low = torch.minimum(self.new_zeros(()), self)
    z = torch.exp(-torch.abs(self))
    return low - torch.log1p(z), z


@register_decomposition(aten.log_sigmoid_backward)
@out_wrapper("grad_input")
@_opmath
def log_sigmoid_backward(grad_output, self, buffer):
    """grad * (1 - sigmoid(x)) as max' - sign * z / (1 + z), z = exp(-|x|)
    (the saved buffer, recomputed when it is empty)."""
    negative = self < 0
    max_deriv = _where(negative, 1, 0)
    sign = _where(negative, 1, -1)
    z = buffer if buffer.numel() > 0 else torch.exp(-torch.abs(self))
    return grad_output * (max_deriv - sign * (z / (1 + z)))


@register_decomposition(aten.glu)
@out_wrapper()
@_opmath
def glu(self, dim=-1):
    """a * sigmoid(b), a and b the halves of ``dim``."""
    dim = dim % self.dim()
    if self.shape[dim] % 2 != 0:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{self.shape[dim]}")
    a, b = torch.tensor_split(self, 2, dim)
    return a * torch.sigmoid(b)


@register_decomposition(aten.glu_backward)
@out_wrapper("grad_input")
@_opmath
def glu_backward(grad_output, self, dim):
    """The halves' gradients, catted: grad * s and grad * s (1 - s) a, for
    s = sigmoid(b)."""
    if self.dim() <= 0:
        raise AssertionError("glu does not support 0-dimensional tensors")
    dim = dim % self.dim()
    size = self.shape[dim]
    if size % 2 != 0:
        raise AssertionError(f"Halving dimension must be even, but dimension {dim} is size "
                             f"{size}")
    half = size // 2
    first, second = self.narrow(dim, 0, half), self.narrow(dim, half, half)
    s = torch.sigmoid(second)
    grad_second = (1.0 - s) * s * first * grad_output
    return torch.cat([s * grad_output, grad_second], dim=dim)


def _inplace(inplace_op, functional_op):
    """Register ``inplace_op`` as ``functional_op`` followed by a ``copy_`` into
    the first argument."""
    @register_decomposition(inplace_op)
    def decomposition(*args, **kwargs):
        return args[0].copy_(functional_op(*args, **kwargs))
    return decomposition


for _name in ("addmm", "addmv", "baddbmm", "fill", "gelu", "hardswish", "hardtanh",
              "hardsigmoid", "index_put", "leaky_relu", "logit", "relu", "round", "scatter",
              "scatter_add", "scatter_reduce", "silu"):
    # overload by overload: the packet would pick its own overload again, and fill_.Tensor's
    # 0-d value would go to fill.Scalar, whose meta kernel reads it (.item())
    for _overload in getattr(aten, _name + "_").overloads():
        _inplace(getattr(getattr(aten, _name + "_"), _overload),
                 getattr(getattr(aten, _name), _overload))


# -- losses (continued) ----------------------------------------------------------------

@register_decomposition(aten.binary_cross_entropy)
@out_wrapper()
@_opmath
def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    """-(y log x + (1 - y) log(1 - x)), each log clamped below at -100,
    weighted, reduced."""
    loss = (target - 1) * torch.maximum(torch.log1p(-self), self.new_full((), -100)) \
        - target * torch.maximum(torch.log(self), self.new_full((), -100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@register_decomposition(aten.binary_cross_entropy_backward)
@out_wrapper("grad_input")
@_opmath
def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=MEAN):
    """grad * (x - y) / max(x (1 - x), 1e-12), weighted, over N for the mean."""
    result = grad_output * (self - target) / torch.clamp(self * (1 - self), min=1e-12)
    if weight is not None:
        result = result * weight
    if reduction == MEAN:
        result = result / self.numel()
    return result


@register_decomposition(aten.smooth_l1_loss)
@out_wrapper()
@_opmath
def smooth_l1_loss(self, target, reduction=MEAN, beta=1.0):
    """0.5 d² / beta where d = |x - y| < beta, else d - 0.5 beta; reduced."""
    d = (self - target).abs()
    return _reduce(torch.where(d < beta, 0.5 * d ** 2 / beta, d - 0.5 * beta), reduction)


@register_decomposition(aten.smooth_l1_loss_backward.default)
@_opmath
def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    """grad * (x - y) / beta inside beta, grad * sign(x - y) outside (over N
    for the mean)."""
    norm = 1.0 / self.numel() if reduction == MEAN else 1.0
    x = self - target
    abs_x = torch.abs(x)
    norm_grad = norm * grad_output
    return torch.where(abs_x < beta, norm_grad * x / beta, norm_grad * torch.sign(x))


@register_decomposition(aten.huber_loss)
@out_wrapper()
@_opmath
def huber_loss(self, target, reduction=MEAN, delta=1.0):
    """0.5 d² where d = |x - y| < delta, else delta (d - 0.5 delta); reduced."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (self - target).abs()
    return _reduce(torch.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


@register_decomposition(aten.huber_loss_backward.default)
@_opmath
def huber_loss_backward(grad_output, self, target, reduction, delta):
    """grad * (x - y) inside delta, ±grad * delta outside (over N for the mean)."""
    norm = 1.0 / self.numel() if reduction == MEAN else 1.0
    x = self - target
    return torch.where(x < -delta, -norm * grad_output * delta,
                       torch.where(x > delta, norm * grad_output * delta,
                                   norm * x * grad_output))


# -- embedding, group norm -------------------------------------------------------------

@register_decomposition(aten.embedding_dense_backward)
@out_wrapper()
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    """Accumulate each grad row into the weight row its index names, skipping
    padding_idx and out-of-range indices (masked, so they need no bounds
    check); with scale_grad_by_freq each row is first divided by how often
    its index occurs."""
    result_dtype = grad_output.dtype
    grad_output = grad_output.to(_computation_dtype(result_dtype))
    indices = indices.to(torch.long)
    valid = (indices >= 0) & (indices < num_weights)
    if scale_grad_by_freq:
        counts = indices.new_zeros((num_weights,))
        counts = aten._unsafe_masked_index_put_accumulate(counts, valid, [indices],
                                                          torch.ones_like(indices))
        scale = aten._unsafe_masked_index(counts, valid, [indices], 1)
        grad_output = grad_output / scale.unsqueeze(-1)
    mask = _unsqueeze_to_dim(valid & (indices != padding_idx), grad_output.dim())
    grad_weight = grad_output.new_zeros((num_weights,) + tuple(grad_output.shape[indices.dim():]))
    return aten._unsafe_masked_index_put_accumulate(grad_weight, mask, [indices],
                                                    grad_output).to(result_dtype)


@register_decomposition(aten.native_group_norm.default)
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """Normalize each of ``group`` channel groups over its channels and
    positions; on CPU with a weight the affine is folded into one scale and
    shift per (sample, channel).  Returns (out, mean, rstd), the statistics as
    (N, group)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    if C % group != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {input.shape} and "
                           f"num_groups = {group}")
    cpg = C // group
    x = input.to(_computation_dtype(input.dtype))
    grouped = torch.reshape(x, [N, group, cpg, HxW])
    var, mean = torch.var_mean(grouped, dim=[2, 3], unbiased=False, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    spatial = list(range(2, input.dim()))
    if input.device.type == "cpu" and weight is not None:
        w = rstd * torch.reshape(weight, [1, group, cpg, 1])
        b = -mean * w
        if bias is not None:
            b = b + torch.reshape(bias, [1, group, cpg, 1])
        w = w.contiguous().as_strided([N, C], [C, 1])
        b = b.contiguous().as_strided([N, C], [C, 1])
        w, b = _unsqueeze_dims(w, spatial), _unsqueeze_dims(b, spatial)
        out = x * w + b
    else:
        out = ((grouped - mean) * rstd).view(input.shape)
        if weight is not None:
            out = out * _unsqueeze_dims(weight, [0] + spatial)
        if bias is not None:
            out = out + _unsqueeze_dims(bias, [0] + spatial)
    return (out.to(input.dtype), torch.squeeze(mean.to(input.dtype), [2, 3]),
            torch.squeeze(rstd.to(input.dtype), [2, 3]))


@register_decomposition(aten.native_group_norm_backward)
@out_wrapper("out0", "out1", "out2")
@_opmath
def native_group_norm_backward(grad_output, input, mean, rstd, gamma, N, C, HxW, group,
                               output_mask):
    """Gradients of native_group_norm from the per-channel sums ds = Σ g x and
    db = Σ g (over positions): dx = c1 g + c2 x + c3 per group, dgamma =
    Σ_N (ds - db mean) rstd, dbeta = Σ_N db."""
    cpg = C // group
    if C != cpg * group:
        raise RuntimeError(f"Expect number of channels {C} to be evenly-divisible by number "
                           f"of groups {group}")
    ds = torch.mul(grad_output, input).view(N, C, HxW).sum(dim=[2])
    db = grad_output.view(N, C, HxW).sum(dim=[2])
    d_input = d_gamma = d_bias = None
    if output_mask[0]:
        s = 1.0 / (HxW * cpg)
        if gamma is not None:
            ds_val = torch.mul(ds, gamma.unsqueeze(0)).reshape(N, group, cpg).sum(2)
            db_val = torch.mul(db, gamma.unsqueeze(0)).reshape(N, group, cpg).sum(2)
            c1 = torch.mul(rstd.unsqueeze(-1), gamma.reshape(1, group, cpg))
        else:
            ds_val = ds.reshape(N, group, cpg).sum(2)
            db_val = db.reshape(N, group, cpg).sum(2)
            c1 = torch.mul(rstd.unsqueeze(-1), torch.ones((1, group, cpg), device=rstd.device))
        c2 = (db_val * mean - ds_val) * rstd * rstd * rstd * s
        c3 = -c2 * mean - db_val * rstd * s
        c1 = c1.unsqueeze(-1)
        c2, c3 = _unsqueeze_to_dim(c2, 4), _unsqueeze_to_dim(c3, 4)
        d_input = torch.mul(grad_output.reshape(N, group, cpg, HxW), c1) \
            + torch.mul(input.reshape(N, group, cpg, HxW), c2) + c3
        d_input = d_input.reshape(input.shape).to(input.dtype)
    if output_mask[1]:
        d_gamma = ((ds.view(N, group, cpg) - db.view(N, group, cpg) * mean.unsqueeze(-1))
                   * rstd.unsqueeze(-1)).sum(dim=[0]).reshape(C)
    if output_mask[2]:
        d_bias = db.sum(dim=[0])
    return d_input, d_gamma, d_bias
