"""Backward ops of log_sigmoid, the shrinks, glu and prelu (ATen's Activation.cpp,
GatedLinearUnit.cpp), called by their gradient formulas as PyTorch's are.

    log_sigmoid_backward(g, x, buffer)   g * (x < 0 ? 1 - z/(1+z) : z/(1+z)),
                                         z = buffer = exp(-|x|)
    softshrink_backward / hardshrink_backward(g, x, l)   -l <= x <= l ? 0 : g
    glu_backward(g, x, dim)   with x = (a, b) and s = sigmoid(b):
                              d a = g * s,  d b = g * a * s * (1 - s)
    _prelu_kernel_backward(g, x, w) -> (x > 0 ? g : w g,  x > 0 ? 0 : x g)
        (the weight's gradient has the broadcast shape; autograd sums it to w's)

The shrinks' backward ops promote like binary ops; the others require one dtype
for all operands (TensorIterator's "Found dtype ... but expected ...").
"""
from __future__ import annotations

import numpy as np

from ..structured import (TensorMeta, broadcast_shapes, check_same_device, elementwise_strides)
from . import impl, meta
from .activation import glu_dim, same_dtype_operands
from .pointwise import SameDtypeMeta, as_compute, quiet, require_float, write
from .pointwise_backward import _backward_op

__all__ = []


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
