"""Helpers for the gradients of elementwise ops and activations
(derivatives.yaml's elementwise section; PyTorch's FunctionsManual.cpp).

Complex inputs get PyTorch's conjugate Wirtinger gradients: the ``conj()`` of
PyTorch's formulas (a no-op on real tensors) and ``handle_r_to_c`` for real
inputs of a complex result.
"""
from __future__ import annotations

import cmath
import math

from ..._core.layout import preserve_format
from ..._core.tls import state as _tls
from ..._dispatcher.dispatcher import ops
from ..._ops.structured import result_type
from ..._tensor import Tensor
from .common import handle_r_to_c, scalar_conj

__all__ = ["derivative_not_implemented", "scalar_zero", "zero_grad_for",
           "atan2_backward", "clamp_backward", "clamp_backward_min_max",
           "copysign_tensor_self_backward", "div_tensor_self_backward",
           "div_tensor_other_backward", "pow_backward", "pow_backward_self",
           "pow_backward_exponent", "sgn_backward", "max_min_backward", "fmax_fmin_backward",
           "xlogy_scalar_other_backward", "silu_backward_formula", "mish_backward_formula",
           "gelu_double_backward", "elu_double_backward", "softplus_double_backward",
           "hardswish_double_backward",
           "logit_grad", "deg2rad_backward", "rad2deg_backward", "angle_backward",
           "polar_backward"]

aten = ops.aten

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)       # gelu's tanh approximation: sqrt(2/pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)     # the standard normal pdf's factor
_GELU_KAPPA = 0.044715


def derivative_not_implemented(name):
    """What PyTorch's generated ``NotImplemented`` node raises when reached (ops
    that return floats but have no formula: floor_divide, silu_backward ...)."""
    raise RuntimeError(f"derivative for {name} is not implemented")


def scalar_zero(grad):
    """``at::scalar_tensor(0., grad.options())``: the zero a ``where`` picks."""
    return aten.scalar_tensor.default(0.0, dtype=grad.dtype, device=grad.device)


def zero_grad_for(grad, dtype):
    """Zeros shaped like ``grad`` in an input's dtype (rounding division)."""
    return aten.zeros_like.default(grad, dtype=dtype)


def atan2_backward(grad, self, other, grad_input_mask):
    """d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)."""
    recip = (self * self + other * other).reciprocal()
    return (grad * other * recip if grad_input_mask[0] else None,
            grad * -self * recip if grad_input_mask[1] else None)


def clamp_backward(grad, self, min, max):
    """``grad`` where min <= self <= max (boundaries inclusive), else 0; works for
    number and tensor bounds alike."""
    if min is not None and max is not None:
        return aten.where.self((self >= min).logical_and_(self <= max), grad, scalar_zero(grad))
    if min is not None:
        return aten.where.self(self >= min, grad, scalar_zero(grad))
    if max is not None:
        return aten.where.self(self <= max, grad, scalar_zero(grad))
    return grad


def clamp_backward_min_max(grad, self, min, max, grad_input_mask):
    """Tensor bounds: ``min`` gets the gradient where it was the result (self < min,
    unless min > max made max win), ``max`` where it was."""
    zero = scalar_zero(grad)
    grad_min = grad_max = None
    if min is not None and max is not None:
        if grad_input_mask[0]:
            grad_min = aten.where.self((self < min).logical_and_(min < max), grad, zero)
        if grad_input_mask[1]:
            grad_max = aten.where.self((self > max).logical_or_(max < min), grad, zero)
    elif min is not None and grad_input_mask[0]:
        grad_min = aten.where.self(self < min, grad, zero)
    elif max is not None and grad_input_mask[1]:
        grad_max = aten.where.self(self > max, grad, zero)
    return grad_min, grad_max


def copysign_tensor_self_backward(grad, self, result):
    """d copysign(x, s)/dx = result / x, which is +-1; 0 at x == 0."""
    ratio = result / self
    ratio.masked_fill_(self == 0, 0)
    return grad * ratio


def div_tensor_self_backward(grad, other, self_dtype, rounding_mode=None):
    """grad / other; a rounding division has a zero gradient.  A Scalar ``other``
    divides with ``div.Scalar``, as C++'s ``grad / other`` does in PyTorch."""
    if rounding_mode is not None:
        return zero_grad_for(grad, self_dtype)
    if isinstance(other, Tensor):
        return handle_r_to_c(self_dtype, grad / other.conj())
    return handle_r_to_c(self_dtype, aten.div.Scalar(grad, scalar_conj(other)))


def div_tensor_other_backward(grad, self, other, rounding_mode=None):
    """-grad * self / other^2; a rounding division has a zero gradient."""
    if rounding_mode is not None:
        return zero_grad_for(grad, other.dtype)
    return handle_r_to_c(other.dtype, -grad * ((self / other) / other).conj())


def pow_backward(grad, self, exponent):
    """Number exponent: grad * e * self^(e-1); zeros for e == 0."""
    if exponent == 0:
        return aten.zeros_like.default(self)
    return handle_r_to_c(self.dtype, grad * (self.pow(exponent - 1) * exponent).conj())


def pow_backward_self(grad, self, exponent):
    """Tensor exponent: grad * e * self^(e-1), 0 where e == 0."""
    return handle_r_to_c(self.dtype, aten.where.self(
        exponent == 0.0, scalar_zero(grad), grad * (exponent * self.pow(exponent - 1)).conj()))


def _log_of_number(base):
    """Scalar::log(): -inf at 0 and nan below, as C++'s log does (a complex
    base: the principal complex log)."""
    if isinstance(base, complex):
        return cmath.log(base) if base else -math.inf
    if base > 0:
        return math.log(base)
    return -math.inf if base == 0 else math.nan


def pow_backward_exponent(grad, self, exponent, result):
    """grad * self^e * log(self), 0 where self == 0 and e >= 0 (the limit);
    ``self`` is a tensor or a number (pow.Scalar)."""
    if exponent.dtype.is_complex:       # a complex exponent: e >= 0 means real and >= 0
        nonnegative = aten.logical_and.default(exponent.imag == 0, exponent.real >= 0)
    else:
        nonnegative = exponent >= 0
    if not hasattr(self, "_shape"):
        if self == 0:
            out = grad * aten.where.self(nonnegative, scalar_zero(grad),
                                         (result * _log_of_number(self)).conj())
        else:
            out = grad * (result * _log_of_number(self)).conj()
        return handle_r_to_c(exponent.dtype, out)
    cond = aten.logical_and.default(self == 0, nonnegative)
    log_self = self.to(result_type(self, exponent)).log()
    out = grad * aten.where.self(cond, scalar_zero(grad), (result * log_self).conj())
    return handle_r_to_c(exponent.dtype, out)


def sgn_backward(self, grad, result):
    """sgn's gradient: zero for real inputs; for complex z, the change of z / |z|
    across the direction of z, (g - sgn Re(g conj(sgn))) / |z|, zero at z = 0."""
    if not self.dtype.is_complex:
        return aten.zeros_like.default(grad)
    magnitude = self.abs()
    along = result * aten.real.default(grad * result.conj())
    return ((grad - along) / magnitude).masked_fill_(magnitude == 0.0, 0.0)


def max_min_backward(grad, self, other, loses):
    """maximum/minimum: the gradient goes to the winner, halved on ties;
    ``loses`` marks where this input is not the result."""
    return aten.where.self(self == other, grad / 2, grad).masked_fill_(loses, 0)


def fmax_fmin_backward(grad, other_wins):
    """fmax/fmin (nan-ignoring): the whole gradient goes to one input."""
    return grad.masked_fill(other_wins, 0)


def xlogy_scalar_other_backward(grad, self, other):
    """d/dx x*log(y) = log(y), taken as 0 at x == 0 when log(y) is not finite."""
    out = aten.xlogy.Scalar_Other(grad, other)
    return out if other > 0 else out.masked_fill(self == 0.0, 0.0)


def silu_backward_formula(grad, self):
    """The ``silu_backward`` kernel, or (when the backward itself is recorded,
    create_graph) the same math written with differentiable ops."""
    if not _tls.grad_enabled:
        return aten.silu_backward.default(grad, self)
    sigmoid = self.sigmoid()
    return grad * sigmoid * (1.0 + self * (1.0 - sigmoid))


def mish_backward_formula(grad, self):
    """``mish_backward``, or its differentiable form under create_graph."""
    if not _tls.grad_enabled:
        return aten.mish_backward.default(grad, self)
    sigmoid = self.sigmoid()
    tanh_softplus = aten.softplus.default(self).tanh()
    return grad * (tanh_softplus + self * sigmoid * (1.0 - tanh_softplus * tanh_softplus))


def gelu_double_backward(ggI, gO, self, approximate):
    """d/dx of gelu_backward(gO, x), times the incoming ``ggI``."""
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (self + _GELU_KAPPA * self.pow(3))
        tanh_inner = inner.tanh()
        sech_inner = 1 / inner.cosh()
        f = 0.5 * self
        g = 1 - tanh_inner * tanh_inner
        h = _SQRT_2_OVER_PI * (1 + 3 * _GELU_KAPPA * self * self)
        f_prime_gh = 0.5 * g * h
        g_prime_fh = f * h * ((2 * sech_inner) * (-sech_inner * tanh_inner) * h)
        h_prime_fg = f * g * (6 * _GELU_KAPPA * _SQRT_2_OVER_PI * self)
        return ggI * gO * (2 * f_prime_gh + g_prime_fh + h_prime_fg)
    self_sq = self * self
    pdf = _INV_SQRT_2PI * (-0.5 * self_sq).exp()
    return ggI * gO * (2 * pdf - self_sq * pdf)


def elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result,
                        self_or_result):
    """d/dx of elu_backward: nonzero on the exponential (negative) side only."""
    negative = (self_or_result < 0).to(grad.dtype)
    if is_result:
        return grad * grad_output * input_scale * negative
    return aten.elu_backward.default(grad * grad_output * input_scale, alpha, scale,
                                     input_scale, is_result, self_or_result) * negative


def softplus_double_backward(grad, self, beta, threshold):
    """d/dx of softplus_backward: beta * sigmoid'(beta x) below the threshold."""
    x = self * beta
    return aten.sigmoid_backward.default(grad, x.sigmoid()) * (x < threshold).to(grad.dtype) * beta


def hardswish_double_backward(grad, grad_output, self):
    """d/dx of hardswish_backward: grad_output / 3 on (-3, 3)."""
    inside = aten.logical_and.default(-3.0 < self, self < 3.0)
    return aten.where.self(inside, grad * grad_output / 3.0,
                           aten.zeros.default([], dtype=self.dtype, device=self.device))


# -- logit, deg2rad, rad2deg ---------------------------------------------------------------

def logit_grad(grad, self, eps):
    """logit's gradient: the logit_backward kernel, or (when building a graph for double
    backward) the same expression written with differentiable ops."""
    if not _tls.grad_enabled:
        return aten.logit_backward.default(grad, self, eps)
    scaled = aten.div.Tensor(grad, aten.mul.Tensor(self, aten.rsub.Scalar(self, 1)))
    return _logit_masked(scaled, self, eps)


def _logit_masked(values, self, eps):
    """``values`` where logit's gradient is defined; NaN outside [0, 1] (no eps), or 0
    outside [eps, 1 - eps]."""
    low, high, fill = (0, 1, math.nan) if eps is None or eps < 0 else (eps, 1 - eps, 0)
    outside = aten.logical_or.default(aten.lt.Scalar(self, low), aten.gt.Scalar(self, high))
    return aten.where.ScalarSelf(outside, fill, values)


def deg2rad_backward(grad):
    return aten.mul.Tensor(grad, math.pi / 180)


def rad2deg_backward(grad):
    return aten.mul.Tensor(grad, 180 / math.pi)


def angle_backward(grad, self):
    """angle's gradient (FunctionsManual.cpp): zero for real inputs (angle is
    piecewise constant); for complex z, i * grad * z / |z|^2, and 0 at z = 0."""
    if not self.dtype.is_complex:
        return aten.zeros_like.default(self, memory_format=preserve_format)
    turned = grad * self / self.abs().pow(2) * 1j
    return aten.where.self(self == 0.0, scalar_zero(self), turned)


def polar_backward(grad, result):
    """polar's two gradients from result = abs * e^(i angle): the real parts of
    conj(grad) times the direction sgn(result) and times i * result."""
    if grad is None:
        return None, None
    grad_conj = grad.conj()
    return (aten.real.default(grad_conj * result.sgn()),
            aten.real.default(grad_conj * (result * 1j)))
