"""Upsampling (ATen's UpSample.h, UpSample{Nearest,Linear,Bilinear,Bicubic}*.cpp,
UpSampleTrilinear3d.cpp and the CPU kernels of cpu/UpSampleKernel.cpp).

Every mode is separable: along each spatial axis, output position ``o`` reads a
few input positions ("taps") with weights, computed as ATen computes them (in
float32 for float32 and lower, as ATen's ``opmath`` / ``float scale``):

    nearest         src = min(floor(o * scale), in - 1)        (o if out == in,
                                                                  o >> 1 if out == 2 * in)
    nearest-exact   src = min(floor((o + 0.5) * scale), in - 1)
    linear          real = scale * o                           (align_corners)
                         = max(scale * (o + 0.5) - 0.5, 0)     (otherwise)
                    i0 = min(floor(real), in - 1), i1 = i0 + (i0 < in - 1),
                    out = (1 - l) * x[i0] + l * x[i1],  l = clamp(real - i0, 0, 1)
    cubic           real as linear but not clamped at 0; taps i0 - 1 .. i0 + 2
                    (clamped into the input), Keys' cubic weights with A = -0.75
    antialiased     (``_upsample_*_aa``, Pillow's resampling) every input position
                    within ``support`` of the centre scale * (o + 0.5) weighs
                    filter((i - centre + 0.5) / max(scale, 1)), normalized to sum 1;
                    filters: triangle (bilinear), Keys' cubic with A = -0.5
                    (bicubic), Lanczos-3 (lanczos)

    scale = (in - 1) / (out - 1) with align_corners (0 if out == 1),
            else 1 / scales[d] when a scale factor was given, else in / out.

The forward gathers rows with ``np.take``; uint8 images follow ATen's fixed-point
kernels (weights scaled to int16, each pass rounded and saturated).  The
backward ops apply the transposed interpolation matrix along each axis (a
scatter-add).  The ``.vec`` overloads (output_size or scale_factors, as
F.interpolate calls them) are CompositeImplicitAutograd: they resolve the
output size and call the sized op.
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

_NEAREST = "compute_indices_weights_nearest"
_AA = "compute_index_ranges_weights"

# op -> (spatial dims, interpolation mode, name in the dtype error, dtypes besides the
#        floating ones it takes (None: float32/float64 only, and these))
_OPS = {
    "upsample_nearest1d": (1, "nearest", _NEAREST, (dt.uint8,)),
    "upsample_nearest2d": (2, "nearest", "upsample_nearest2d_channels_last", (dt.uint8,)),
    "upsample_nearest3d": (3, "nearest", _NEAREST, (dt.uint8,)),
    "_upsample_nearest_exact1d": (1, "nearest-exact", _NEAREST, (dt.uint8,)),
    "_upsample_nearest_exact2d": (2, "nearest-exact", "upsample_nearest2d_channels_last",
                                  (dt.uint8,)),
    "_upsample_nearest_exact3d": (3, "nearest-exact", _NEAREST, (dt.uint8,)),
    "upsample_linear1d": (1, "linear", "compute_indices_weights_linear", ()),
    "upsample_bilinear2d": (2, "linear", "upsample_bilinear2d_channels_last", (dt.uint8,)),
    "upsample_trilinear3d": (3, "linear", "compute_indices_weights_linear", ()),
    "upsample_bicubic2d": (2, "cubic", "compute_indices_weights_cubic", (dt.uint8,)),
    "_upsample_bilinear2d_aa": (2, "aa-linear", _AA, None),
    "_upsample_bicubic2d_aa": (2, "aa-cubic", _AA, None),
    "_upsample_lanczos2d_aa": (2, "aa-lanczos", _AA, None),
}


def _has_align(name) -> bool:
    return _OPS[name][1] not in ("nearest", "nearest-exact")


def _common_check(k, input_size, output_size):
    """upsample_{1,2,3}d_common_check: the full output shape."""
    output_size = [int(n) for n in output_size]
    if len(output_size) != k:
        raise RuntimeError(f"It is expected output_size equals to {k}, but got size "
                           f"{len(output_size)}")
    if len(input_size) != k + 2:
        raise RuntimeError(f"It is expected input_size equals to {k + 2}, but got size "
                           f"{len(input_size)}")
    spatial = list(input_size[2:])
    if any(n <= 0 for n in spatial + output_size):
        names = ("D", "H", "W")[-k:]
        given = ", ".join(f"{n}: {v}" for n, v in zip(names, spatial))
        wanted = ", ".join(f"{n}: {v}" for n, v in zip(names, output_size))
        sep = " and " if k == 1 else " "
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
    if extra is None:
        ok = t.dtype in (dt.float32, dt.float64, dt.uint8)
    else:
        ok = t.dtype.is_floating_point or t.dtype in extra
    if not ok:
        raise NotImplementedError(f'"{label}" not implemented for \'{t.dtype._short}\'')


# -- taps and weights per axis -------------------------------------------------------------
# An axis' plan is (index, weight): (taps, out) arrays of input positions and their
# weights (weight None: nearest, one tap of weight 1).

def _scale(size_in, size_out, scale, compute):
    """compute_scales_value: 1 / scale factor when one was given, else in / out."""
    if scale is not None and scale > 0:
        return compute.type(1.0 / scale)
    return compute.type(size_in) / compute.type(size_out)


def _area_scale(size_in, size_out, align_corners, scale, compute):
    """area_pixel_compute_scale."""
    if align_corners:
        return (compute.type(size_in - 1) / compute.type(size_out - 1) if size_out > 1
                else compute.type(0))
    return _scale(size_in, size_out, scale, compute)


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


def _source_index(size_in, size_out, align_corners, scale, compute, cubic):
    """area_pixel_compute_source_index, then guard_index_and_lambda: the first tap's
    position and the fraction past it."""
    ratio = _area_scale(size_in, size_out, align_corners, scale, compute)
    out = np.arange(size_out).astype(compute)
    if align_corners:
        real = ratio * out
    else:
        real = ratio * (out + compute.type(0.5)) - compute.type(0.5)
        if not cubic:
            real = np.maximum(real, compute.type(0))
    i0 = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), size_in - 1)
    lam = np.clip(real - i0, 0, 1).astype(compute)
    return i0, lam


def _linear_plan(size_in, size_out, align_corners, scale, compute):
    out = np.arange(size_out)
    if size_out == size_in:
        return np.stack([out, out]), np.stack([np.ones(size_out, compute),
                                               np.zeros(size_out, compute)])
    i0, l1 = _source_index(size_in, size_out, align_corners, scale, compute, False)
    i1 = i0 + (i0 < size_in - 1)
    return np.stack([i0, i1]), np.stack([compute.type(1) - l1, l1])


def _keys_cubic(x, a):
    """Keys' cubic convolution kernel (UpSample.h's cubic_convolution1/2)."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0)).astype(x.dtype)


def _cubic_plan(size_in, size_out, align_corners, scale, compute):
    i0, t = _source_index(size_in, size_out, align_corners, scale, compute, True)
    a = compute.type(-0.75)
    one = compute.type(1)
    weights = np.stack([_keys_cubic(t + one, a), _keys_cubic(t, a), _keys_cubic(one - t, a),
                        _keys_cubic(one - t + one, a)])
    index = np.stack([np.clip(i0 + j - 1, 0, size_in - 1) for j in range(4)])
    return index, weights


def _lanczos3(x):
    x = np.abs(x)
    return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0).astype(x.dtype)


# antialiased mode -> (filter, taps of the filter at scale 1)
_AA_FILTERS = {
    "aa-linear": (lambda x: np.maximum(1 - np.abs(x), 0).astype(x.dtype), 2),
    "aa-cubic": (lambda x: _keys_cubic(x, x.dtype.type(-0.5)), 4),
    "aa-lanczos": (_lanczos3, 6),
}


def _aa_plan(mode, size_in, size_out, align_corners, scale, compute):
    """_compute_indices_min_size_weights_aa: per output position, the input window
    [xmin, xmin + xsize) and its normalized filter weights (zero-padded to the
    widest window)."""
    fn, interp = _AA_FILTERS[mode]
    ratio = _area_scale(size_in, size_out, align_corners, scale, compute)
    support = compute.type(interp * 0.5) * ratio if ratio >= 1 else compute.type(interp * 0.5)
    taps = int(math.ceil(support)) * 2 + 1
    invscale = compute.type(1) / ratio if ratio >= 1 else compute.type(1)
    center = ratio * (np.arange(size_out).astype(compute) + compute.type(0.5))
    xmin = np.maximum((center - support + compute.type(0.5)).astype(np.int64), 0)
    xsize = np.clip(np.minimum((center + support + compute.type(0.5)).astype(np.int64),
                               size_in) - xmin, 0, taps)
    j = np.arange(taps)[:, None]
    w = fn(((j + xmin - center + compute.type(0.5)) * invscale).astype(compute))
    w = np.where(j < xsize, w, compute.type(0))
    total = w.sum(axis=0)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w).astype(compute)
    return np.minimum(xmin + j, size_in - 1), w


def _axis_plan(name, size_in, size_out, align_corners, scale, compute):
    mode = _OPS[name][1]
    if mode == "linear":
        return _linear_plan(size_in, size_out, align_corners, scale, compute)
    if mode == "cubic":
        return _cubic_plan(size_in, size_out, align_corners, scale, compute)
    if mode.startswith("aa-"):
        return _aa_plan(mode, size_in, size_out, align_corners, scale, compute)
    return _nearest_index(size_in, size_out, scale, mode == "nearest-exact")[None], None


def _plans(name, input_size, output_size, align_corners, scales, compute):
    k = _OPS[name][0]
    return [_axis_plan(name, input_size[2 + i], output_size[i], align_corners, scales[i],
                       compute) for i in range(k)]


def _axis_shape(ndim, dim):
    shape = [1] * ndim
    shape[dim] = -1
    return shape


def _interpolate(x, plans):
    """Apply each axis' plan in turn, from the last axis to the first (so 2-d
    linear is h0 * (w0 * x00 + w1 * x01) + h1 * (w0 * x10 + w1 * x11))."""
    for axis in reversed(range(len(plans))):
        dim = x.ndim - len(plans) + axis
        index, weight = plans[axis]
        total = None
        for tap in range(index.shape[0]):
            part = np.take(x, index[tap], axis=dim)
            if weight is not None:
                part = part * weight[tap].reshape(_axis_shape(x.ndim, dim))
            total = part if total is None else total + part
        x = total
    return x


def _merge_taps(index, weight):
    """Taps that read the same (clamped) input position become one: their
    weights add up in the first of them (as ATen's uint8 weights accumulate)."""
    weight = weight.copy()
    for tap in range(1, index.shape[0]):
        for earlier in range(tap):
            same = index[tap] == index[earlier]
            weight[earlier] = np.where(same, weight[earlier] + weight[tap], weight[earlier])
            weight[tap] = np.where(same, 0.0, weight[tap])
            index[tap] = np.where(same, index[earlier], index[tap])
    return index, weight


def _interpolate_uint8(x, plans):
    """Interpolation of uint8 images as ATen's uint8 kernels do it (Pillow's fixed
    point): per axis, last first, the (double) weights become integers scaled by
    2**precision (rounded half away from zero), the largest precision keeping the
    biggest weight under 2**15; each pass rounds and saturates to uint8."""
    for axis in reversed(range(len(plans))):
        dim = x.ndim - len(plans) + axis
        if plans[axis][1] is None:      # an axis kept as it is (antialiased modes): no pass
            x = np.take(x, plans[axis][0][0], axis=dim)
            continue
        index, weight = _merge_taps(*plans[axis])
        top = weight.max()
        precision = next((p for p in range(22) if int(0.5 + top * (1 << (p + 1))) >= 1 << 15),
                         22)
        scaled = weight * (1 << precision)
        fixed = np.where(scaled < 0, scaled - 0.5, scaled + 0.5).astype(np.int64)
        total = np.int64(1 << (precision - 1))
        for tap in range(index.shape[0]):
            total = total + (np.take(x, index[tap], axis=dim).astype(np.int64)
                             * fixed[tap].reshape(_axis_shape(x.ndim, dim)))
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
        index, weight = plans[axis]
        for tap in range(index.shape[0]):
            np.add.at(matrix, (index[tap], columns), 1 if weight is None else weight[tap])
        g = np.moveaxis(np.tensordot(matrix, g, axes=([1], [dim])), 0, dim)
    return g


_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}


def _split_args(name, args, kwargs):
    """(align_corners, per-axis scales) from the ops' trailing arguments, given by
    position or by their schema names."""
    k = _OPS[name][0]
    names = (("align_corners",) if _has_align(name) else ()) + _SCALE_NAMES[k]
    values = list(args) + [kwargs.get(n) for n in names[len(args):]]
    align_corners, scales = (values[0], values[1:]) if _has_align(name) else (False, values)
    return align_corners, scales


# -- forward ops ---------------------------------------------------------------------------

def _upsample_forward(name):
    mode = _OPS[name][1]

    def meta_rule(self, output_size, *args, **kwargs):
        return _forward_meta(name, self, output_size)

    def impl_fn(out, self, output_size, *args, **kwargs):
        _check_dtype(name, self)
        align_corners, scales = _split_args(name, args, kwargs)
        if out.numel() == 0:
            return
        x = self._np()
        if mode.startswith("aa-") and tuple(out._shape) == tuple(self._shape):
            np.copyto(out._np(), x)     # separable_upsample_generic_Nd_kernel_impl's shortcut
            return
        if self.dtype.is_floating_point:
            compute = self.dtype.opmath
            x = x.astype(compute, copy=False)
            interpolate = _interpolate
        else:   # uint8: nearest copies; other weights are double, as ATen's uint8 kernels'
            compute = np.dtype(np.float64)
            interpolate = _interpolate if mode == "nearest" or mode == "nearest-exact" \
                else _interpolate_uint8
        plans = _plans(name, self._shape, out._shape[2:], align_corners, scales, compute)
        if mode.startswith("aa-"):      # axes whose size stays are not resampled
            plans = [(np.arange(n)[None], None) if n == self._shape[2 + i] else plan
                     for i, (n, plan) in enumerate(zip(out._shape[2:], plans))]
        np.copyto(out._np(), interpolate(x, plans), casting="unsafe")

    meta(name)(meta_rule)
    impl(name)(impl_fn)


for _name in _OPS:
    _upsample_forward(_name)


# -- backward ops --------------------------------------------------------------------------

def _upsample_backward(name):
    k = _OPS[name][0]
    backward = f"{name}_backward"

    def meta_rule(grad_output, output_size, input_size, *args, **kwargs):
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

    def impl_fn(out, grad_output, output_size, input_size, *args, **kwargs):
        align_corners, scales = _split_args(name, args, kwargs)
        compute = grad_output.dtype.opmath
        plans = _plans(name, input_size, output_size, align_corners, scales, compute)
        g = grad_output._np().astype(compute, copy=False)
        np.copyto(out._np(), _spread(g, plans, tuple(input_size)), casting="unsafe")

    meta(backward)(meta_rule)
    impl(backward)(impl_fn)


for _name in _OPS:
    _upsample_backward(_name)


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


def _vec(name):
    def call(input, output_size, scale_factors, *align_corners):
        sizes = _output_size(input, output_size, scale_factors)
        scales = _scale_values(scale_factors, len(sizes))
        return getattr(aten, name).default(input, sizes, *align_corners, *scales)

    if _has_align(name):
        def vec_kernel(input, output_size, align_corners, scale_factors=None):
            return call(input, output_size, scale_factors, align_corners)
    else:
        def vec_kernel(input, output_size, scale_factors=None):
            return call(input, output_size, scale_factors)
    kernel(f"{name}_vec")(vec_kernel)


for _name in _OPS:
    _vec(_name)
