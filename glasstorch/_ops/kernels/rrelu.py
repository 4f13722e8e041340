"""Randomized leaky ReLU (ATen's Activation.cpp: rrelu, rrelu_with_noise and
_rrelu_with_noise_train): what F.rrelu and nn.RReLU call.

    training   each element x <= 0 draws r ~ U(lower, upper) (one double from the
               generator, in memory order, only for those elements) and becomes
               x * r; noise holds r there and 1 elsewhere
    eval       leaky_relu with slope (lower + upper) / 2; noise is not written

The backward is noise * grad in training, else leaky_relu_backward.
"""
from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core.generator import get_generator
from ..._core.layout import contiguous_format
from ..._dispatcher.dispatcher import ops
from ..structured import empty_tensor
from . import kernel
from ._common import _check_same_dtype, _sizes
from .random import uniform_values

aten = ops.aten


def _check_bounds(lower, upper):
    if float(lower) > float(upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _check_noise(self, noise):
    if tuple(noise._shape) != tuple(self._shape):
        raise RuntimeError(f"noise tensor shape must match self tensor shape. Got self.shape = "
                           f"{_sizes(self._shape)} noise.shape = {_sizes(noise._shape)}")


def _train(out, self, noise, lower, upper, generator):
    """_rrelu_with_noise_train: writes out and noise."""
    if self.dtype not in (dt.float32, dt.float64, dt.bfloat16):
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for "
                                  f"'{self.dtype._short}'")
    _check_same_dtype(self, noise)
    if self.device.type == "meta":
        return
    compute = self.dtype.opmath
    x = np.ascontiguousarray(self._np()).reshape(-1).astype(compute)
    negative = x <= 0
    gen = get_generator(generator)
    with gen._lock:
        r = uniform_values(gen, int(negative.sum()), dt.float64, float(lower), float(upper))
    slopes = np.ones_like(x)
    slopes[negative] = r.astype(compute)
    values = x.copy()
    values[negative] = x[negative] * slopes[negative]
    noise._np()[...] = slopes.reshape(self._shape).astype(noise.dtype.numpy)
    out._np()[...] = values.reshape(self._shape).astype(out.dtype.numpy)


def _eval(self, lower, upper):
    return aten.leaky_relu.default(self, (float(lower) + float(upper)) / 2)


@kernel("rrelu_with_noise")
def rrelu_with_noise(self, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    _check_bounds(lower, upper)
    _check_noise(self, noise)
    if not training:
        return _eval(self, lower, upper)
    out = empty_tensor(tuple(self._shape), self.dtype, self.device)
    _train(out, self, noise, lower, upper, generator)
    return out


@kernel("rrelu_with_noise_")
def rrelu_with_noise_(self, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    _check_bounds(lower, upper)
    _check_noise(self, noise)
    if not training:
        return aten.leaky_relu_.default(self, (float(lower) + float(upper)) / 2)
    _train(self, self, noise, lower, upper, generator)
    return self


@kernel("rrelu_with_noise_out")
def rrelu_with_noise_out(self, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None,
                         *, out):
    _check_bounds(lower, upper)
    _check_noise(self, noise)
    if not training:
        return aten.leaky_relu.out(self, (float(lower) + float(upper)) / 2, out=out)
    _check_same_dtype(self, out)
    aten.resize_.default(out, list(self._shape))
    _train(out, self, noise, lower, upper, generator)
    return out


@kernel("rrelu_with_noise_functional")
def rrelu_with_noise_functional(self, noise, lower=0.125, upper=1.0 / 3, training=False,
                                generator=None):
    """The functional form: a fresh noise tensor comes back beside the result."""
    noise_out = aten.clone.default(noise)
    return aten.rrelu_with_noise.default(self, noise_out, lower, upper, training,
                                         generator), noise_out


@kernel("rrelu_with_noise_backward")
def rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training, self_is_result):
    if training:
        return aten.mul.Tensor(noise, grad_output)
    return aten.leaky_relu_backward.default(grad_output, self,
                                            (float(lower) + float(upper)) / 2, self_is_result)


@kernel("rrelu")
def rrelu(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    _check_bounds(lower, upper)
    noise = aten.empty_like.default(self, memory_format=contiguous_format)
    return aten.rrelu_with_noise.default(self, noise, lower, upper, training, generator)


@kernel("rrelu_")
def rrelu_(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    _check_bounds(lower, upper)
    noise = aten.empty_like.default(self, memory_format=contiguous_format)
    return aten.rrelu_with_noise_.default(self, noise, lower, upper, training, generator)
