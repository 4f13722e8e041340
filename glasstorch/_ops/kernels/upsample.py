"""Upsampling (ATen's UpSample.h, UpSampleNearest{1,2}d.cpp, UpSampleLinear1d.cpp,
UpSampleBilinear2d.cpp and their CPU kernels).

Every mode is separable: along each spatial axis, output position ``o`` reads
input position(s) computed as ATen computes them (in float32 for float32 and
lower, as ATen's ``opmath`` / ``float scale``):

    nearest         src = min(floor(o * scale), in - 1)        (o if out == in,
                                                                  o >> 1 if out == 2 * in)
    nearest-exact   src = min(floor((o + 0.5) * scale), in - 1)
    linear          real = scale * o                           (align_corners)
                         = max(scale * (o + 0.5) - 0.5, 0)     (otherwise)
                    i0 = min(floor(real), in - 1), i1 = i0 + (i0 < in - 1),
                    out = (1 - l) * x[i0] + l * x[i1],  l = clamp(real - i0, 0, 1)

    scale = (in - 1) / (out - 1) with align_corners (0 if out == 1),
            else 1 / scales[d] when a scale factor was given, else in / out.

The forward gathers rows with ``np.take``; the backward ops apply the
transposed interpolation matrix along each axis (a scatter-add).
The ``.vec`` overloads (output_size or scale_factors, as F.interpolate calls
them) are CompositeImplicitAutograd: they resolve the output size and call
the sized op.
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..._tensor import channels_last_strides
from ..structured import TensorMeta
from . import impl, kernel, meta
from ._common import _sizes
from .conv import _is_channels_last

aten = ops.aten

# op -> (spatial dims, interpolation mode, name in the dtype error, dtypes besides floating)
_OPS = {
    "upsample_nearest1d": (1, "nearest", "compute_indices_weights_nearest", (dt.uint8,)),
    "upsample_nearest2d": (2, "nearest", "upsample_nearest2d_channels_last", (dt.uint8,)),
    "_upsample_nearest_exact1d": (1, "nearest-exact", "compute_indices_weights_nearest",
                                  (dt.uint8,)),
    "_upsample_nearest_exact2d": (2, "nearest-exact", "upsample_nearest2d_channels_last",
                                  (dt.uint8,)),
    "upsample_linear1d": (1, "linear", "compute_indices_weights_linear", ()),
    "upsample_bilinear2d": (2, "linear", "upsample_bilinear2d_channels_last", (dt.uint8,)),
}


def _common_check(k, input_size, output_size):
    """upsample_{1,2}d_common_check: the full output shape."""
    output_size = [int(n) for n in output_size]
    if len(output_size) != k:
        raise RuntimeError(f"It is expected output_size equals to {k}, but got size "
                           f"{len(output_size)}")
    if len(input_size) != k + 2:
        raise RuntimeError(f"It is expected input_size equals to {k + 2}, but got size "
                           f"{len(input_size)}")
    spatial = list(input_size[2:])
    if any(n <= 0 for n in spatial + output_size):
        names = ("H", "W")[-k:] if k <= 2 else ("D", "H", "W")
        given = ", ".join(f"{n}: {v}" for n, v in zip(names, spatial))
        wanted = ", ".join(f"{n}: {v}" for n, v in zip(names, output_size))
        sep = " " if k == 2 else " and "
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({given}){sep}output ({wanted})")
    return tuple(input_size[:2]) + tuple(output_size)


def _forward_meta(name, input, output_size):
    k = _OPS[name][0]
    shape = _common_check(k, tuple(input._shape), output_size)
    if input.numel() == 0 and 0 in input._shape[1:]:
        raise RuntimeError(f"Non-empty {k + 2}D data tensor expected but got a tensor with sizes "
                           f"{_sizes(input._shape)}")
    strides = channels_last_strides(shape) if _is_channels_last(input) else None
    return TensorMeta(shape, input.dtype, strides)


def _check_dtype(name, t):
    _, _, label, extra = _OPS[name]
    if not (t.dtype.is_floating_point or t.dtype in extra):
        raise NotImplementedError(f'"{label}" not implemented for \'{t.dtype._short}\'')


# -- source positions --------------------------------------------------------------------

def _scale(size_in, size_out, scale, compute):
    """compute_scales_value: 1 / scale factor when one was given, else in / out."""
    if scale is not None and scale > 0:
        return compute.type(1.0 / scale)
    return compute.type(size_in) / compute.type(size_out)


def _nearest_index(size_in, size_out, scale, exact):
    out = np.arange(size_out)
    if not exact:
        if size_out == size_in:
            return out
        if size_out == 2 * size_in:
            return out >> 1
    ratio = _scale(size_in, size_out, scale, np.dtype(np.float32))
    if exact:
        src = np.floor(((out + 0.5) * np.float64(ratio)).astype(np.float32))
    else:
        src = np.floor(out.astype(np.float32) * ratio)
    return np.minimum(src.astype(np.int64), size_in - 1)


def _linear_weights(size_in, size_out, align_corners, scale, compute):
    """(i0, i1, l0, l1) per output position (compute_source_index_and_lambda)."""
    out = np.arange(size_out)
    if size_out == size_in:
        ones = np.ones(size_out, dtype=compute)
        return out, out, ones, np.zeros(size_out, dtype=compute)
    if align_corners:
        ratio = compute.type(size_in - 1) / compute.type(size_out - 1) if size_out > 1 \
            else compute.type(0)
        real = ratio * out.astype(compute)
    else:
        ratio = _scale(size_in, size_out, scale, compute)
        real = np.maximum(ratio * (out.astype(compute) + compute.type(0.5)) - compute.type(0.5),
                          compute.type(0))
    i0 = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), size_in - 1)
    l1 = np.clip(real - i0, 0, 1).astype(compute)
    i1 = i0 + (i0 < size_in - 1)
    return i0, i1, compute.type(1) - l1, l1


def _axis_plan(name, size_in, size_out, align_corners, scale, compute):
    """Per axis: a list of (source indices, weights or None)."""
    mode = _OPS[name][1]
    if mode == "linear":
        i0, i1, l0, l1 = _linear_weights(size_in, size_out, align_corners, scale, compute)
        return [(i0, l0), (i1, l1)]
    return [(_nearest_index(size_in, size_out, scale, mode == "nearest-exact"), None)]


def _plans(name, input_size, output_size, align_corners, scales, compute):
    k = _OPS[name][0]
    return [_axis_plan(name, input_size[2 + i], output_size[i], align_corners, scales[i],
                       compute) for i in range(k)]


def _interpolate(x, plans):
    """Apply each axis' plan in turn, from the last axis to the first (so 2-d
    linear is h0 * (w0 * x00 + w1 * x01) + h1 * (w0 * x10 + w1 * x11))."""
    for axis in reversed(range(len(plans))):
        dim = x.ndim - len(plans) + axis
        shape = [1] * x.ndim
        shape[dim] = -1
        total = None
        for idx, weight in plans[axis]:
            part = np.take(x, idx, axis=dim)
            if weight is not None:
                part = part * weight.reshape(shape)
            total = part if total is None else total + part
        x = total
    return x


def _interpolate_uint8(x, plans):
    """Linear interpolation of uint8 images as ATen's uint8 kernels do it (Pillow's
    fixed point): per axis, last first, the two weights (double, merged at the
    border) become integers scaled by 2**precision, the largest precision keeping
    the biggest weight under 2**15; each pass rounds and saturates to uint8."""
    for axis in reversed(range(len(plans))):
        dim = x.ndim - len(plans) + axis
        (i0, w0), (i1, w1) = plans[axis]
        w0 = np.where(i0 == i1, w0 + w1, w0)
        w1 = np.where(i0 == i1, 0.0, w1)
        top = max(w0.max(), w1.max())
        precision = next((p for p in range(22) if int(0.5 + top * (1 << (p + 1))) >= 1 << 15),
                         22)
        shape = [1] * x.ndim
        shape[dim] = -1
        total = np.int64(1 << (precision - 1))
        for index, weight in ((i0, w0), (i1, w1)):
            fixed = (weight * (1 << precision) + 0.5).astype(np.int64).reshape(shape)
            total = total + np.take(x, index, axis=dim).astype(np.int64) * fixed
        x = np.clip(total >> precision, 0, 255)
    return x


def _spread(g, plans, input_size):
    """The adjoint of _interpolate: each axis' gradient scattered back through
    the transposed interpolation matrix, first axis first."""
    for axis in range(len(plans)):
        dim = g.ndim - len(plans) + axis
        size_in = input_size[dim]
        matrix = np.zeros((size_in, g.shape[dim]), dtype=g.dtype)
        columns = np.arange(g.shape[dim])
        for idx, weight in plans[axis]:
            np.add.at(matrix, (idx, columns), 1 if weight is None else weight)
        g = np.moveaxis(np.tensordot(matrix, g, axes=([1], [dim])), 0, dim)
    return g


# -- forward ops ---------------------------------------------------------------------------

def _upsample_forward(name, has_align):
    def meta_rule(self, output_size, *args):
        return _forward_meta(name, self, output_size)

    def impl_fn(out, self, output_size, *args):
        _check_dtype(name, self)
        align_corners, scales = (args[0], args[1:]) if has_align else (False, args)
        scales = list(scales) + [None] * (_OPS[name][0] - len(scales))
        if out.numel() == 0:
            return
        x = self._np()
        if self.dtype.is_floating_point:
            compute = self.dtype.opmath
            x = x.astype(compute, copy=False)
            interpolate = _interpolate
        else:   # uint8: nearest copies; linear weights are double, as ATen's uint8 kernels'
            compute = np.dtype(np.float64)
            interpolate = _interpolate_uint8 if has_align else _interpolate
        plans = _plans(name, self._shape, out._shape[2:], align_corners, scales, compute)
        np.copyto(out._np(), interpolate(x, plans), casting="unsafe")

    meta(name)(meta_rule)
    impl(name)(impl_fn)


for _name, (_k, _mode, _, _) in _OPS.items():
    _upsample_forward(_name, _mode == "linear")


# -- backward ops --------------------------------------------------------------------------

def _upsample_backward(name, has_align):
    k = _OPS[name][0]
    backward = f"{name}_backward"

    def meta_rule(grad_output, output_size, input_size, *args):
        full_out = _common_check(k, tuple(input_size), output_size)
        ndim = len(grad_output._shape)
        if ndim != k + 2:
            raise RuntimeError(f"Expected grad_output to be a tensor of dimension {k + 2} but "
                               f"got: dimension {ndim}")
        for d, n in enumerate(full_out):
            if grad_output._shape[d] != n:
                raise RuntimeError(f"Expected grad_output to have the same shape as output; "
                                   f"output.size({d}) = {n} but got grad_output.size({d}) = "
                                   f"{grad_output._shape[d]}")
        shape = tuple(int(n) for n in input_size)
        strides = channels_last_strides(shape) if _is_channels_last(grad_output) else None
        return TensorMeta(shape, grad_output.dtype, strides)

    def impl_fn(out, grad_output, output_size, input_size, *args):
        align_corners, scales = (args[0], args[1:]) if has_align else (False, args)
        scales = list(scales) + [None] * (k - len(scales))
        compute = grad_output.dtype.opmath
        plans = _plans(name, input_size, output_size, align_corners, scales, compute)
        g = grad_output._np().astype(compute, copy=False)
        np.copyto(out._np(), _spread(g, plans, tuple(input_size)), casting="unsafe")

    meta(backward)(meta_rule)
    impl(backward)(impl_fn)


for _name, (_k, _mode, _, _) in _OPS.items():
    _upsample_backward(_name, _mode == "linear")


# -- .vec overloads -----------------------------------------------------------------------

def _output_size(input, output_size, scale_factors):
    """compute_output_size (UpSample.cpp): the given size, or floor(in * factor)."""
    k = len(input._shape) - 2
    if output_size is not None:
        if scale_factors is not None:
            raise RuntimeError("Must specify exactly one of output_size and scale_factors")
        return [int(n) for n in output_size]
    if scale_factors is not None:
        if len(scale_factors) != k:
            raise RuntimeError("Expected static_cast<int64_t>(scale_factors->size()) == "
                               "spatial_dimensions to be true, but got false.  (Could this error "
                               "message be improved?  If so, please report an enhancement "
                               "request to PyTorch.)")
        return [int(math.trunc(float(n) * f)) for n, f in zip(input._shape[2:], scale_factors)]
    raise RuntimeError("Must specify exactly one of output_size and scale_factors")


def _scale_values(scale_factors, k):
    return [None] * k if scale_factors is None else [float(f) for f in scale_factors[:k]]


def _vec(name, has_align):
    def call(input, output_size, scale_factors, *align_corners):
        sizes = _output_size(input, output_size, scale_factors)
        scales = _scale_values(scale_factors, len(sizes))
        return getattr(aten, name).default(input, sizes, *align_corners, *scales)

    if has_align:
        def vec_kernel(input, output_size, align_corners, scale_factors=None):
            return call(input, output_size, scale_factors, align_corners)
    else:
        def vec_kernel(input, output_size, scale_factors=None):
            return call(input, output_size, scale_factors)
    kernel(f"{name}_vec")(vec_kernel)


for _name, (_k, _mode, _, _) in _OPS.items():
    _vec(_name, _mode == "linear")
