"""Helpers for the gradients of special functions (derivatives.yaml's special
section; PyTorch's FunctionsManual.cpp: mvlgamma_backward, i1_backward,
i1e_backward, sinc_backward)."""
from __future__ import annotations

import math

from ..._core import dtype as dt
from ..._core.type_info import finfo
from ..._dispatcher.dispatcher import ops

__all__ = ["mvlgamma_backward", "i1_backward", "i1e_backward", "sinc_backward",
           "xlog1py_other_scalar_backward"]

aten = ops.aten


def mvlgamma_backward(grad, self, p):
    """grad * sum_j digamma(x - j/2), j = 0 .. p-1."""
    args = aten.arange.start_step(-p / 2 + 0.5, 0.5, 0.5, dtype=self.dtype, device=self.device)
    args = aten.add.Tensor(args, aten.unsqueeze.default(self, -1))
    return grad * aten.sum.dim_IntList(aten.digamma.default(args), [-1])


def _away_from_zero(self, name):
    """(|x| > eps, x with those tiny values replaced by eps): the derivatives of
    i1 and i1e divide by x, and at 0 their limit 1/2 is used instead.  Their
    backward has float32 and float64 loops only, as ATen's."""
    if self.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f'"{name}" not implemented for \'{self.dtype._short}\'')
    eps = finfo(self.dtype).eps
    not_tiny = self.abs() > eps
    filler = aten.scalar_tensor.default(eps, dtype=self.dtype, device=self.device)
    return not_tiny, aten.where.self(not_tiny, self, filler)


def _with_half_at_zero(grad, not_tiny, gradx):
    half = aten.scalar_tensor.default(0.5, dtype=gradx.dtype, device=gradx.device)
    return grad * aten.where.self(not_tiny, gradx, half)


def i1_backward(grad, self, result):
    """d/dx I1(x) = I0(x) - I1(x) / x."""
    not_tiny, safe = _away_from_zero(self, "i1_backward")
    return _with_half_at_zero(grad, not_tiny, aten.i0.default(safe) - result * safe.reciprocal())


def i1e_backward(grad, self, result):
    """d/dx I1e(x) = I0e(x) - I1e(x) (sgn(x) + 1 / x)."""
    not_tiny, safe = _away_from_zero(self, "i1e_backward")
    gradx = aten.special_i0e.default(safe) - result * (safe.sgn() + safe.reciprocal())
    return _with_half_at_zero(grad, not_tiny, gradx)


def sinc_backward(grad, self):
    """(pi x cos(pi x) - sin(pi x)) / (pi x^2); 0 at x = 0."""
    self_pi = self * math.pi
    squared_pi = self * self * math.pi
    out = grad * (self_pi * self_pi.cos() - self_pi.sin()).conj() / squared_pi.conj()
    zero = aten.scalar_tensor.default(0.0, dtype=out.dtype, device=out.device)
    return aten.where.self(squared_pi == 0.0, zero, out)


def xlog1py_other_scalar_backward(grad, self, other):
    """d/dx x*log1p(y) = log1p(y), taken as 0 at x == 0 when y <= -1."""
    out = aten.special_xlog1py.other_scalar(grad, other)
    return out if other > -1 else out.masked_fill(self == 0.0, 0.0)
