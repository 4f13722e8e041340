"""The activations' backward ops: ``grad_input = grad_output * f'(x)``, elementwise.

Each is a binary TensorIterator op over (grad_output, self): the two broadcast,
the dtype is their common dtype (float16/bfloat16 compute in float32), and the
output's strides follow the inputs in the order PyTorch adds them (self first
for threshold_backward and leaky_relu_backward).  ``self`` is the forward input,
or its output where the schema says so (sigmoid/tanh ``output``, elu
``self_or_result`` with ``is_result``).  Only threshold_backward takes integers.
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..structured import (TensorMeta, broadcast_shapes, check_out_cast, check_same_device,
                          elementwise_strides, result_type)
from . import impl, meta, native
from .pointwise import as_compute, checked_scalar, quiet, require_float, write

__all__ = []

_SQRT1_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_GELU_KAPPA = 0.044715


def _binary_meta(grad_output, self, self_first=False):
    """Broadcast shape, promoted dtype, strides following the inputs in order."""
    check_same_device(grad_output, self)
    shape = broadcast_shapes(grad_output._shape, self._shape)
    order = (self, grad_output) if self_first else (grad_output, self)
    return TensorMeta(shape, result_type(grad_output, self), elementwise_strides(shape, order))


def _backward_op(name, cpu_kernel, formula, *, self_first=False, check=None, int_ok=False):
    """Register meta + CPU impl of ``name(grad_output, self, *scalars)`` whose
    value is ``formula(g, x, compute, *scalars)`` on opmath arrays.  ``check``
    validates the scalars (meta, so every device raises)."""
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
            require_float(cpu_kernel, rt)
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
    return g * (c.type(1) - y) * y


def _tanh_backward(g, y, c):
    return g * (c.type(1) - y * y)


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
_backward_op("sigmoid_backward", "sigmoid_backward_cpu", _sigmoid_backward)
_backward_op("tanh_backward", "tanh_backward_cpu", _tanh_backward)
_backward_op("gelu_backward", "GeluBackwardKernelImpl", _gelu_backward, check=_gelu_check)
_backward_op("silu_backward", "silu_backward_cpu", _silu_backward)
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
