"""Activation functions: elementwise, so they reuse the pointwise machinery.

Most of them are floating-point only on CPU (``"silu_cpu" not implemented for
'Long'``); relu, threshold and hardtanh also take integers.  float16/bfloat16
compute in float32 and round once.

Their backward ops (ATen's Activation.cpp, GatedLinearUnit.cpp) follow the
forward ops: ``grad_input = grad_output * f'(x)``, each a binary TensorIterator
op over (grad_output, self): the two broadcast, the dtype is their common dtype,
and the output's strides follow the inputs in the order PyTorch adds them (self
first for threshold_backward and leaky_relu_backward).  ``self`` is the forward
input, or its output where the schema says so (sigmoid/tanh ``output``, elu
``self_or_result`` with ``is_result``).  Only threshold_backward takes integers;
glu_backward, log_sigmoid_backward and _prelu_kernel_backward require one dtype
for all operands (TensorIterator's "Found dtype ... but expected ...").
"""
from __future__ import annotations

import math
import ml_dtypes

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..._tensor import contiguous_strides
from ..structured import (broadcast_shapes, check_out_cast, check_same_device, elementwise_strides,
                          iterator_strides, result_type, TensorMeta, wrap_dim)
from . import impl, kernel, meta, native
from ._inner import observed
from .pointwise import (as_compute, checked_scalar, operand, quiet, refuse_complex, require_float,
                        restore_zeros, SameDtypeMeta, unary_meta, write, zeros_of)

__all__ = []


# -- relu, threshold, hardtanh, relu6: integers allowed ---------------------------------

@meta("relu")
def relu_meta(self):
    if self.dtype is dt.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return unary_meta(self)


@impl("relu")
def relu_impl(out, self):
    """max(x, 0); nan stays nan.  ATen's relu is ``clamp_min(self, 0)`` (relu_ is
    clamp_min_), hence the message: dispatched so while observed, the same
    numpy maximum run directly otherwise."""
    if observed():
        if out is self:
            ops.aten.clamp_min_.default(self, 0)
        else:
            ops.aten.clamp_min.out(self, 0, out=out)
        return
    refuse_complex(self.dtype, NotImplementedError("clamp is not supported for complex types"))
    compute = self.dtype.opmath
    zeros = zeros_of(self._np(), self.dtype, 0)   # relu(-0.0) is -0.0, as ATen's clamp_min
    np.maximum(self._np(), compute.type(0), out=out._np(), dtype=compute, casting="unsafe")
    restore_zeros(out._np(), zeros)


@meta("threshold")
def threshold_meta(self, threshold, value):
    """Like a binary op (self, self): out= may be of a wider dtype."""
    return TensorMeta(self._shape, self.dtype, elementwise_strides(self._shape, (self,)))


@impl("threshold")
@quiet
def threshold_impl(out, self, threshold, value):
    """x <= threshold ? value : x  (both numbers converted to the input's dtype first)."""
    if self.dtype is dt.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    compute = self.dtype.opmath
    checked_scalar(threshold, self.dtype)
    checked_scalar(value, self.dtype)
    a = self._np()
    write(out, np.where(a <= operand(threshold, compute), operand(value, compute), a))


@meta("hardtanh")
def hardtanh_meta(self, min_val=-1, max_val=1):
    if self.dtype is dt.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return unary_meta(self)


@impl("hardtanh")
@quiet
def hardtanh_impl(out, self, min_val=-1, max_val=1):
    if self.dtype.is_complex:   # (ATen's hardtanh is a clamp)
        raise NotImplementedError("clamp is not supported for complex types")
    if self.dtype is dt.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    compute = self.dtype.opmath
    checked_scalar(min_val, self.dtype)
    checked_scalar(max_val, self.dtype)
    zeros = zeros_of(self._np(), self.dtype, min_val, max_val)
    result = np.maximum(self._np(), operand(min_val, compute), dtype=compute, casting="unsafe")
    result = np.minimum(result, operand(max_val, compute))
    write(out, restore_zeros(result, zeros))


@kernel("relu6")
def relu6(self):
    """CompositeImplicitAutograd: hardtanh(x, 0, 6)."""
    return ops.aten.hardtanh.default(self, 0, 6)


@kernel("relu6_")
def relu6_(self):
    return ops.aten.hardtanh_.default(self, 0, 6)


# -- floating-point only -------------------------------------------------------------------

def _float_activation(name, cpu_kernel, formula, complex_ok=False):
    """Register meta + impl for ``formula(x, *scalars)`` computed in opmath."""
    meta(name)(lambda self, *args, **kwargs: unary_meta(self))

    @impl(name)
    @quiet
    def body(out, self, *args, **kwargs):
        require_float(cpu_kernel, self.dtype, complex_ok)
        compute = self.dtype.opmath
        write(out, formula(self._np().astype(compute, copy=False), compute, *args, **kwargs))
    body.__name__ = f"{name}_impl"


def _silu(x, c):
    return x / (c.type(1) + np.exp(-x))


_SQRT1_2 = 1 / math.sqrt(2)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _gelu(x, c, *, approximate="none"):
    if approximate == "tanh":
        inner = c.type(_SQRT_2_OVER_PI) * (x + c.type(0.044715) * x * x * x)
        return c.type(0.5) * x * (c.type(1) + np.tanh(inner))
    erf = native.erf(x.astype(np.float64) * _SQRT1_2)
    return 0.5 * x.astype(np.float64) * (1.0 + erf)


@meta("gelu")
def gelu_meta(self, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return unary_meta(self)


@impl("gelu")
@quiet
def gelu_impl(out, self, *, approximate="none"):
    require_float("GeluKernelImpl", self.dtype)
    x, result = self._np(), out._np()
    if approximate == "none" and native.same_shape(x, result):
        native.gelu(x, result)   # float32: ATen's vectorized erf, in C
        return
    compute = self.dtype.opmath
    write(out, _gelu(x.astype(compute, copy=False), compute, approximate=approximate))


def _softplus(x, c, beta=1, threshold=20):
    """x * beta > threshold ? x : log1p(exp(x * beta)) / beta."""
    b = c.type(beta)
    scaled = x * b
    return np.where(scaled > c.type(threshold), x, np.log1p(np.exp(scaled)) / b)


def _elu(x, c, alpha=1, scale=1, input_scale=1):
    """x > 0 ? x * scale : (exp(x * input_scale) - 1) * alpha * scale."""
    negative = np.expm1(x * c.type(input_scale)) * c.type(alpha * scale)
    return np.where(x > 0, x * c.type(scale), negative)


def _leaky_relu(x, c, negative_slope=0.01):
    return np.where(x > 0, x, x * c.type(negative_slope))


def _hardsigmoid(x, c):
    return np.minimum(np.maximum(x + c.type(3), c.type(0)), c.type(6)) / c.type(6)


def _hardswish(x, c):
    return x * np.minimum(np.maximum(x + c.type(3), c.type(0)), c.type(6)) / c.type(6)


def _mish(x, c):
    return x * np.tanh(np.log1p(np.exp(x)))


_float_activation("silu", "silu_cpu", _silu, complex_ok=True)
_float_activation("softplus", "softplus_cpu", _softplus)
_float_activation("elu", "elu_cpu", _elu)
_float_activation("leaky_relu", "leaky_relu_cpu", _leaky_relu)
_float_activation("hardsigmoid", "hardsigmoid_cpu", _hardsigmoid)
_float_activation("hardswish", "hardswish_cpu", _hardswish)
_float_activation("mish", "mish_cpu", _mish)


# -- log_sigmoid, shrinks, glu, prelu (ATen's Activation.cpp, GatedLinearUnit.cpp) ------
#
#     log_sigmoid_forward(x) -> (min(x, 0) - log1p(exp(-|x|)),  buffer = exp(-|x|))
#     softshrink(x, l)  x > l ? x - l : (x < -l ? x + l : x * 0)
#     hardshrink(x, l)  -l <= x <= l ? 0 : x
#     glu(x, dim)       a * sigmoid(b), where (a, b) are the two halves of x along dim
#     _prelu_kernel(x, w)  x > 0 ? x : w * x   (w broadcast against x)
#
# log_sigmoid, prelu, selu are CompositeImplicitAutograd (prelu reshapes its weight to
# broadcast over the channel dim first); celu is CompositeExplicitAutograd (elu with
# input_scale 1/alpha), with a gradient formula of its own.

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def same_dtype_operands(operands):
    """TensorIterator's check_all_same_dtype: every operand has the first input's
    dtype; the first one that doesn't is named."""
    expected = operands[0].dtype
    for t in operands:
        if t.dtype is not expected:
            raise RuntimeError(f"Found dtype {t.dtype._short} but expected {expected._short}")
    return expected


@meta("log_sigmoid_forward")
def log_sigmoid_forward_meta(self):
    """Both outputs are allocated contiguous."""
    return tuple(SameDtypeMeta(self._shape, self.dtype, None, self.device) for _ in range(2))


@impl("log_sigmoid_forward")
@quiet
def log_sigmoid_forward_impl(outs, self):
    require_float("log_sigmoid_cpu", self.dtype)
    compute = self.dtype.opmath
    x = self._np().astype(compute, copy=False)
    buffer = np.exp(-np.abs(x))
    write(outs[0], np.minimum(x, compute.type(0)) - np.log1p(buffer))
    write(outs[1], buffer)


@kernel("log_sigmoid")
def log_sigmoid(self):
    """CompositeImplicitAutograd: the output of log_sigmoid_forward."""
    return ops.aten.log_sigmoid_forward.default(self)[0]


def _check_softshrink_lambda(lambd, dtype):
    """0 <= lambd <= the dtype's largest value (numbers printed as C++ streams print them)."""
    if not dtype.is_floating_point:
        return
    limit = float(ml_dtypes.finfo(dtype.numpy).max)
    if not 0 <= lambd <= limit:
        raise RuntimeError(f"lambda must be in range [0, {limit:g}] for input dtype "
                           f"{dtype._short}, but found {lambd:g}")


@meta("softshrink")
def softshrink_meta(self, lambd=0.5):
    _check_softshrink_lambda(lambd, self.dtype)
    return unary_meta(self)


@impl("softshrink")
@quiet
def softshrink_impl(out, self, lambd=0.5):
    require_float("softshrink_check", self.dtype)
    compute = self.dtype.opmath
    x = self._np().astype(compute, copy=False)
    lam = compute.type(self.dtype.numpy.type(lambd))   # the Scalar is read in the input's dtype
    write(out, np.where(x > lam, x - lam, np.where(x < -lam, x + lam, x * compute.type(0))))


@meta("hardshrink")
def hardshrink_meta(self, lambd=0.5):
    return unary_meta(self)


@impl("hardshrink")
def hardshrink_impl(out, self, lambd=0.5):
    require_float("hardshrink_cpu", self.dtype)
    compute = self.dtype.opmath
    x = self._np().astype(compute, copy=False)
    lam = compute.type(self.dtype.numpy.type(lambd))
    write(out, np.where((x >= -lam) & (x <= lam), compute.type(0), x))


def glu_dim(self, dim):
    """The halved dim (checked as glu's meta function does)."""
    if not self._shape:
        raise RuntimeError("glu does not support 0-dimensional tensors")
    dim = wrap_dim(dim, len(self._shape))
    if self._shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{self._shape[dim]}")
    return dim


@meta("glu")
def glu_meta(self, dim=-1):
    """The halves keep the input's strides, so the output follows its layout."""
    dim = glu_dim(self, dim)
    shape = list(self._shape)
    shape[dim] //= 2
    shape = tuple(shape)
    strides = iterator_strides(shape, [self._stride])
    return SameDtypeMeta(shape, self.dtype,
                         None if strides == contiguous_strides(shape) else strides, self.device)


@impl("glu")
@quiet
def glu_impl(out, self, dim=-1):
    require_float("glu_cpu", self.dtype)
    compute = self.dtype.opmath
    first, second = np.split(self._np().astype(compute, copy=False), 2, axis=glu_dim(self, dim))
    write(out, first / (compute.type(1) + np.exp(-second)))


@meta("_prelu_kernel")
def prelu_kernel_meta(self, weight):
    check_same_device(self, weight)
    shape = broadcast_shapes(self._shape, weight._shape)
    same_dtype_operands((self, weight))
    return SameDtypeMeta(shape, self.dtype, elementwise_strides(shape, (self, weight)),
                         self.device)


@impl("_prelu_kernel")
def prelu_kernel_impl(out, self, weight):
    require_float("prelu_cpu", self.dtype)
    compute = self.dtype.opmath
    x = self._np().astype(compute, copy=False)
    write(out, np.where(x > 0, x, x * weight._np().astype(compute, copy=False)))


@kernel("prelu")
def prelu(self, weight):
    """CompositeImplicitAutograd: check the weight against the channel dim (dim 1,
    or 1 for a 1-D input) and view it to broadcast there, then _prelu_kernel."""
    if self.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {self.dtype._short} and "
                           f"{weight.dtype._short}")
    ndim = len(self._shape)
    numel = weight.numel()
    if numel != 1:
        if ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self._shape[1] if ndim > 1 else 1
        if channels != numel:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {numel} and channel size = {channels}.")
    if len(weight._shape) > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {len(weight._shape)}")
    if ndim != len(weight._shape):
        shape = [1] * ndim
        if ndim > 1:
            shape[1] = numel
        weight = ops.aten.reshape.default(weight, shape)
    return ops.aten._prelu_kernel.default(self, weight)


def _celu_scales(alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return alpha, 1.0, 1.0 / alpha


@kernel("celu")
def celu(self, alpha=1.0):
    """CompositeExplicitAutograd: elu(x, alpha, scale=1, input_scale=1/alpha)."""
    return ops.aten.elu.default(self, *_celu_scales(alpha))


@kernel("celu_")
def celu_(self, alpha=1.0):
    return ops.aten.elu_.default(self, *_celu_scales(alpha))


@kernel("selu")
def selu(self):
    """CompositeImplicitAutograd: elu with SELU's alpha and scale."""
    return ops.aten.elu.default(self, _SELU_ALPHA, _SELU_SCALE)


@kernel("selu_")
def selu_(self):
    return ops.aten.elu_.default(self, _SELU_ALPHA, _SELU_SCALE)


# -- backward ops: grad_input = grad_output * f'(x), one binary TensorIterator op over (grad_output, self) ---

_SQRT1_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_GELU_KAPPA = 0.044715


def _binary_meta(grad_output, self, self_first=False):
    """Broadcast shape, promoted dtype, strides following the inputs in order."""
    check_same_device(grad_output, self)
    order = (self, grad_output) if self_first else (grad_output, self)
    shape = broadcast_shapes(order[0]._shape, order[1]._shape)   # (the order names a and b)
    return TensorMeta(shape, result_type(grad_output, self), elementwise_strides(shape, order))


def _backward_op(name, cpu_kernel, formula, *, self_first=False, check=None, int_ok=False,
                 complex_ok=False):
    """Register meta + CPU impl of ``name(grad_output, self, *scalars)`` whose
    value is ``formula(g, x, compute, *scalars)`` on opmath arrays.  ``check``
    validates the scalars (meta, so every device raises); ``int_ok`` /
    ``complex_ok``: the kernel also takes integer / complex dtypes."""
    @meta(name)
    def rule(grad_output, self, *args, **kwargs):
        if check is not None:
            check(*args, **kwargs)
        return _binary_meta(grad_output, self, self_first)
    rule.__name__ = f"{name}_meta"

    @impl(name)
    @quiet
    def body(out, grad_output, self, *args, **kwargs):
        rt = result_type(grad_output, self)
        if rt is dt.bool_ or not int_ok:
            require_float(cpu_kernel, rt, complex_ok)
        for scalar in args:
            if not isinstance(scalar, (bool, str)):
                checked_scalar(scalar, rt)
        compute = rt.opmath
        write(out, formula(as_compute(grad_output, compute), as_compute(self, compute), compute,
                           *args, **kwargs))
    body.__name__ = f"{name}_impl"


def _sigmoid(x, c):
    return c.type(1) / (c.type(1) + np.exp(-x))


def _threshold_backward(g, x, c, threshold):
    """0 where the forward replaced x (x <= threshold), else the gradient."""
    return np.where(x <= c.type(threshold), c.type(0), g)


def _sigmoid_backward(g, y, c):
    """g * conj((1 - y) y): a complex output's derivative is conjugated, as ATen's loop does."""
    d = (c.type(1) - y) * y
    return g * (np.conj(d) if np.iscomplexobj(d) else d)


def _tanh_backward(g, y, c):
    """g * conj(1 - y^2) (conjugated for complex outputs, as ATen's loop)."""
    d = c.type(1) - y * y
    return g * (np.conj(d) if np.iscomplexobj(d) else d)


def _gelu_check(*, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def _gelu_backward(g, x, c, *, approximate="none"):
    """'none': Phi(x) + x phi(x); 'tanh': the derivative of the tanh approximation."""
    if approximate == "tanh":
        inner = c.type(_SQRT_2_OVER_PI) * (x + c.type(_GELU_KAPPA) * x * x * x)
        tanh_inner = np.tanh(inner)
        left_derivative = c.type(0.5) * (c.type(1) + tanh_inner)
        inner_derivative = c.type(_SQRT_2_OVER_PI) * (c.type(1) + c.type(3 * _GELU_KAPPA) * x * x)
        sech_sq = c.type(1) - tanh_inner * tanh_inner
        right_derivative = c.type(0.5) * x * sech_sq * inner_derivative
        return g * (left_derivative + right_derivative)
    if native.same_shape(g, x):
        result = np.empty_like(x)
        native.gelu_backward(g, x, result)   # float32, in C
        return result
    x64 = x.astype(np.float64)
    cdf = 0.5 * (1.0 + native.erf(x64 * _SQRT1_2))
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * x64 * x64)
    return g * (cdf + x64 * pdf)


def _silu_backward(g, x, c):
    s = _sigmoid(x, c)
    return g * s * (c.type(1) + x * (c.type(1) - s))


def _leaky_relu_check(negative_slope, self_is_result):
    if self_is_result and negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope")


def _leaky_relu_backward(g, x, c, negative_slope, self_is_result):
    return np.where(x > 0, g, g * c.type(negative_slope))


def _hardtanh_backward(g, x, c, min_val, max_val):
    """No gradient where the forward clipped, boundaries included."""
    clipped = (x <= c.type(min_val)) | (x >= c.type(max_val))
    return np.where(clipped, c.type(0), g)


def _hardsigmoid_backward(g, x, c):
    return np.where((x > -3) & (x < 3), g / c.type(6), c.type(0))


def _hardswish_backward(g, x, c):
    """0 up to -3, the slope x/3 + 1/2 strictly between, 1 from 3 on."""
    return np.where(x <= -3, c.type(0), np.where(x < 3, g * (x / c.type(3) + c.type(0.5)), g))


def _softplus_backward(g, x, c, beta, threshold):
    """sigmoid(beta x), or 1 past the threshold where the forward is linear."""
    scaled = x * c.type(beta)
    z = np.exp(scaled)
    return np.where(scaled > c.type(threshold), g, g * z / (z + c.type(1)))


_backward_op("threshold_backward", "threshold_cpu", _threshold_backward, self_first=True,
             int_ok=True)
_backward_op("sigmoid_backward", "sigmoid_backward_cpu", _sigmoid_backward, complex_ok=True)
_backward_op("tanh_backward", "tanh_backward_cpu", _tanh_backward, complex_ok=True)
_backward_op("gelu_backward", "GeluBackwardKernelImpl", _gelu_backward, check=_gelu_check)
_backward_op("silu_backward", "silu_backward_cpu", _silu_backward, complex_ok=True)
_backward_op("leaky_relu_backward", "leaky_relu_backward_cpu", _leaky_relu_backward,
             self_first=True, check=_leaky_relu_check)
_backward_op("hardtanh_backward", "hardshrink_backward_cpu", _hardtanh_backward)
_backward_op("hardsigmoid_backward", "hardsigmoid_backward", _hardsigmoid_backward)
_backward_op("hardswish_backward", "hardswish_backward_cpu", _hardswish_backward)
_backward_op("softplus_backward", "softplus_backward_cpu", _softplus_backward)


# -- elu_backward: the tensors are the first and the last argument ----------------------

@meta("elu_backward")
def elu_backward_meta(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    if is_result and alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead.")
    return _binary_meta(grad_output, self_or_result)


@impl("elu_backward")
@quiet
def elu_backward_impl(out, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """Positive side: grad * scale.  Negative side, from the input x:
    grad * input_scale * alpha * scale * exp(x * input_scale); from the result y
    (in-place elu_ saved no input): grad * input_scale * (y + alpha * scale)."""
    rt = result_type(grad_output, self_or_result)
    require_float("elu_backward_cpu", rt)
    c = rt.opmath
    g, v = as_compute(grad_output, c), as_compute(self_or_result, c)
    negcoef, poscoef, negiptcoef = c.type(alpha * scale), c.type(scale), c.type(input_scale)
    if is_result:
        negative = g * negiptcoef * (v + negcoef)
    else:
        negative = g * negiptcoef * negcoef * np.exp(v * negiptcoef)
    write(out, np.where(v <= 0, negative, g * poscoef))


# -- mish_backward: not structured in PyTorch; the result has self's dtype ---------------

@meta("mish_backward")
def mish_backward_meta(grad_output, self):
    spec = _binary_meta(grad_output, self)
    check_out_cast(spec.dtype, self.dtype)
    spec.dtype = self.dtype
    return spec


@impl("mish_backward")
@quiet
def mish_backward_impl(out, grad_output, self):
    """d/dx x tanh(softplus(x)) = tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)."""
    rt = result_type(grad_output, self)
    require_float("mish_backward_cpu", rt)
    c = rt.opmath
    g, x = as_compute(grad_output, c), as_compute(self, c)
    tanh_sp = np.tanh(np.log1p(np.exp(x)))
    write(out, g * (tanh_sp + x * _sigmoid(x, c) * (c.type(1) - tanh_sp * tanh_sp)))


# -- backward ops of log_sigmoid, the shrinks, glu and prelu (Activation.cpp, GatedLinearUnit.cpp) ---

def _shrink_backward(g, x, c, lambd):
    return np.where((x >= c.type(-lambd)) & (x <= c.type(lambd)), c.type(0), g)


_backward_op("softshrink_backward", "shrink_backward_cpu", _shrink_backward)
_backward_op("hardshrink_backward", "shrink_backward_cpu", _shrink_backward)


@meta("log_sigmoid_backward")
def log_sigmoid_backward_meta(grad_output, self, buffer):
    """The result is allocated like grad_output, then broadcast against the rest."""
    check_same_device(grad_output, self, buffer)
    dtype = same_dtype_operands((self, grad_output, buffer))
    shape = broadcast_shapes(grad_output._shape, self._shape, buffer._shape)
    return SameDtypeMeta(shape, dtype, elementwise_strides(shape, (grad_output, self, buffer)),
                         grad_output.device)


@impl("log_sigmoid_backward")
@quiet
def log_sigmoid_backward_impl(out, grad_output, self, buffer):
    require_float("log_sigmoid_backward_cpu", self.dtype)
    c = self.dtype.opmath
    g, x, z = (as_compute(t, c) for t in (grad_output, self, buffer))
    ratio = z / (c.type(1) + z)
    write(out, g * np.where(x < 0, c.type(1) - ratio, ratio))


@meta("glu_backward")
def glu_backward_meta(grad_output, self, dim):
    dim = glu_dim(self, dim)
    half = list(self._shape)
    half[dim] //= 2
    broadcast_shapes(tuple(half), grad_output._shape)
    same_dtype_operands((self, grad_output))
    return SameDtypeMeta(self._shape, self.dtype, None, self.device)


@impl("glu_backward")
@quiet
def glu_backward_impl(out, grad_output, self, dim):
    require_float("glu_backward_cpu", self.dtype)
    c = self.dtype.opmath
    dim = glu_dim(self, dim)
    first, second = np.split(as_compute(self, c), 2, axis=dim)
    g = as_compute(grad_output, c)
    s = c.type(1) / (c.type(1) + np.exp(-second))
    grad_first, grad_second = np.split(out._np(), 2, axis=dim)
    np.copyto(grad_first, np.broadcast_to(g * s, grad_first.shape), casting="unsafe")
    np.copyto(grad_second, np.broadcast_to(g * first * s * (c.type(1) - s), grad_second.shape),
              casting="unsafe")


@meta("_prelu_kernel_backward")
def prelu_kernel_backward_meta(grad_output, self, weight):
    check_same_device(self, weight, grad_output)
    dtype = same_dtype_operands((self, weight, grad_output))
    shape = broadcast_shapes(self._shape, weight._shape, grad_output._shape)
    stride = elementwise_strides(shape, (self, weight, grad_output))
    return (TensorMeta(shape, dtype, stride), TensorMeta(shape, dtype, stride))


@impl("_prelu_kernel_backward")
def prelu_kernel_backward_impl(outs, grad_output, self, weight):
    require_float("prelu_backward_cpu", self.dtype)
    c = self.dtype.opmath
    g, x, w = (as_compute(t, c) for t in (grad_output, self, weight))
    positive = x > 0
    write(outs[0], np.where(positive, g, w * g))
    write(outs[1], np.where(positive, c.type(0), x * g))
