"""Activation functions: elementwise, so they reuse the pointwise machinery.

Most of them are floating-point only on CPU (``"silu_cpu" not implemented for
'Long'``); relu, threshold and hardtanh also take integers.  float16/bfloat16
compute in float32 and round once.
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..structured import TensorMeta, elementwise_strides
from . import impl, kernel, meta, native
from .pointwise import (checked_scalar, operand, quiet, require_float,
                        unary_meta, write)

__all__ = []


# -- relu, threshold, hardtanh, relu6: integers allowed ---------------------------------

@meta("relu")
def relu_meta(self):
    if self.dtype is dt.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return unary_meta(self)


@impl("relu")
def relu_impl(out, self):
    """max(x, 0); nan stays nan."""
    compute = self.dtype.opmath
    np.maximum(self._np(), compute.type(0), out=out._np(), dtype=compute, casting="unsafe")


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
    if self.dtype is dt.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    compute = self.dtype.opmath
    checked_scalar(min_val, self.dtype)
    checked_scalar(max_val, self.dtype)
    result = np.maximum(self._np(), operand(min_val, compute), dtype=compute, casting="unsafe")
    write(out, np.minimum(result, operand(max_val, compute)))


@kernel("relu6")
def relu6(self):
    """CompositeImplicitAutograd: hardtanh(x, 0, 6)."""
    from ..._dispatcher.dispatcher import ops
    return ops.aten.hardtanh.default(self, 0, 6)


@kernel("relu6_")
def relu6_(self):
    from ..._dispatcher.dispatcher import ops
    return ops.aten.hardtanh_.default(self, 0, 6)


# -- floating-point only -------------------------------------------------------------------

def _float_activation(name, cpu_kernel, formula):
    """Register meta + impl for ``formula(x, *scalars)`` computed in opmath."""
    meta(name)(lambda self, *args, **kwargs: unary_meta(self))

    @impl(name)
    @quiet
    def body(out, self, *args, **kwargs):
        require_float(cpu_kernel, self.dtype)
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
    compute = self.dtype.opmath
    write(out, _gelu(self._np().astype(compute, copy=False), compute, approximate=approximate))


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


_float_activation("silu", "silu_cpu", _silu)
_float_activation("softplus", "softplus_cpu", _softplus)
_float_activation("elu", "elu_cpu", _elu)
_float_activation("leaky_relu", "leaky_relu_cpu", _leaky_relu)
_float_activation("hardsigmoid", "hardsigmoid_cpu", _hardsigmoid)
_float_activation("hardswish", "hardswish_cpu", _hardswish)
_float_activation("mish", "mish_cpu", _mish)


