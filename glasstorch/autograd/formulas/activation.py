"""Helpers for the gradient formulas of log_sigmoid, glu and prelu's backward ops
(their double backward; PyTorch's FunctionsManual.cpp for the same ops), written
with differentiable ops so higher derivatives keep working.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops

__all__ = ["log_sigmoid_double_backward", "glu_double_backward",
           "glu_double_backward_grad_output", "prelu_kernel_double_backward"]

aten = ops.aten


def log_sigmoid_double_backward(grad, self):
    """d/dx of log_sigmoid's derivative 1 - sigmoid(x) is -s (1 - s)."""
    s = aten.sigmoid.default(self)
    return grad * (s - 1) * s


def _halves(t, dim):
    half = t.size(dim) // 2
    return aten.narrow.default(t, dim, 0, half), aten.narrow.default(t, dim, half, half)


def glu_double_backward_grad_output(grad, self, dim):
    """glu_backward is linear in grad_output: its gradient there is glu_backward's
    map applied to ones, times ``grad``, folded back onto the half-size shape."""
    dim = dim % self.dim()
    sizes = list(self.shape)
    sizes[dim] //= 2
    ones = aten.ones.default(sizes, dtype=self.dtype, device=self.device)
    first, second = _halves(grad * aten.glu_backward.default(ones, self, dim), dim)
    return first + second


def glu_double_backward(grad, grad_output, self, dim):
    """d/dx of glu_backward(gO, x): with x = (a, b), s = sigmoid(b), s' = s (1 - s):
    d(gO s)/db = gO s',  d(gO a s')/da = gO s',  d(gO a s')/db = gO a s' (1 - 2 s)."""
    dim = dim % self.dim()
    a, b = _halves(self, dim)
    s = aten.sigmoid.default(b)
    ds = s * (1 - s)
    grad_a, grad_b = _halves(grad, dim)
    grad_first = grad_b * grad_output * ds
    grad_second = (grad_b * a * grad_output * (ds * (1 - s) - s * ds)
                   + grad_a * grad_output * ds)
    return aten.cat.default([grad_first, grad_second], dim)


def prelu_kernel_double_backward(grads, grad_output, self, weight):
    """Gradients of _prelu_kernel_backward's (grad_input, grad_weight) for its
    inputs (grad_output, self, weight); undefined output gradients are zeros."""
    gi, gw = grads
    positive = aten.ge.Scalar(self, 0)
    zero = aten.scalar_tensor.default(0.0, dtype=self.dtype, device=self.device)
    return (aten.where.self(positive, gi, gi * weight + gw * self),
            aten.where.self(positive, zero, grad_output * gw),
            aten.where.self(positive, zero, grad_output * gi))
