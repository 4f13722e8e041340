"""3-d pooling, max unpooling and fractional max pooling (ATen's
DilatedMaxPool3d.cpp, AveragePool3d.cpp, AdaptiveAveragePooling3d.cpp,
AdaptiveMaxPooling3d.cpp, MaxUnpooling.cpp, FractionalMaxPool2d.cpp /
FractionalMaxPool3d.cpp and their CPU kernels).

Every pool here works on the last ``k`` dims of a (N, C, *spatial) or (C, *spatial)
input; a window's position in its plane is the flat index t * H * W + h * W + w
(what the ``indices`` outputs hold and the backward ops scatter to):

    max_pool3d            windows of a dilated, strided kernel over the input padded
                          with -inf; the first maximum wins
    avg_pool3d            window sums / (window size counting padding, or only the
                          elements inside, or divisor_override)
    adaptive pools        out[i] over input rows [floor(i * n / o), ceil((i + 1) * n / o))
    fractional_max_pool   window starts per axis from one uniform sample u:
                          start[i] = int((i + u) * a) - int(u * a), a = (n - k) / (o - 1),
                          the last one n - k (ATen's generate_intervals, in the input's type)
    max_unpool            out[flat index] = value; every other element 0

``max_pool3d`` and ``adaptive_avg_pool3d`` are CompositeImplicitAutograd (the
latter is ``mean`` for a 1x1x1 output), as in PyTorch.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..structured import TensorMeta
from . import impl, kernel, meta
from ._common import _array, _sizes, _write
from ._inner import inner
from .conv import _adaptive_matrix, _adaptive_ranges, _expand1, _list, pooling_output_shape

aten = ops.aten

def _triple(op, name, value, what, default=None):
    """An int[3] pooling argument: one value for all dims, or three (or, with a
    ``default``, none at all)."""
    v = _list(value) if value is not None else []
    if default is not None and not v:
        return list(default)
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise RuntimeError(f"{op}: {name} {what}")
    return v


def _pool3d_params(op, self, kernel_size, stride, padding, dilation, ceil_mode,
                   divisor_override=None):
    """max_pool3d / avg_pool3d's argument checks and pool3d_shape_check, in ATen's
    order; returns (k, s, p, d, out) per spatial dim."""
    if op == "max_pool3d":
        words = ("must either be a single int, or a tuple of three ints",
                 "must either be omitted, a single int, or a tuple of three ints",
                 "must either be a single int, or a tuple of three ints",
                 "must be either a single int, or a tuple of three ints")
    else:
        words = ("must be a single int, or a tuple of three ints",
                 "must be omitted, a single int, or a tuple of three ints",
                 "must be a single int, or a tuple of three ints", "")
    k = _triple(op, "kernel_size", kernel_size, words[0])
    s = _triple(op, "stride", stride, words[1], default=k)
    p = _triple(op, "padding", padding, words[2])
    d = _triple(op, "dilation", dilation, words[3]) if op == "max_pool3d" else [1, 1, 1]
    shape = tuple(self._shape)
    if len(shape) not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = [pooling_output_shape(n, kk, pp, ss, dd, ceil_mode)
           for n, kk, pp, ss, dd in zip(shape[-3:], k, p, s, d)]
    fn = "max_pool3d_with_indices_out_cpu_template()" if op == "max_pool3d" else \
        "avg_pool3d_out_frame()"
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} kH: "
                           f"{k[1]} kW: {k[2]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} "
                           f"dW: {s[2]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} "
                           f"dilationH: {d[1]} dilationW: {d[2]}")
    for i, n in enumerate(shape):
        if not (len(shape) == 5 and i == 0) and n <= 0:
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive "
                               f"length, but input has a shape of {_sizes(shape)} and non-batch "
                               f"dimension {n} has length zero!")
    if op == "avg_pool3d" and any(n < kk for n, kk in zip(shape[-3:], k)):
        t, h, w = shape[-3:]
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: "
                           f"{k[0]} kH: {k[1]} kW: {k[2]})")
    if any(kk // 2 < pp for kk, pp in zip(k, p)):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} "
                           f"padH: {p[1]}")
    if min(out) < 1:
        c = shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, shape[-3:]))}). "
                           f"Calculated output size: ({c}x{'x'.join(map(str, out))}). Output size "
                           "is too small")
    return k, s, p, d, out


def _windows(x, k, s, p, d, out, fill):
    """(..., *S) -> (..., *out, *k) windows over the input padded with ``fill`` (and
    extra at the end where ceil_mode makes the last window overhang)."""
    n = len(k)
    pads = []
    for size, kk, ss, pp, dd, oo in zip(x.shape[-n:], k, s, p, d, out):
        need = (oo - 1) * ss + dd * (kk - 1) + 1
        pads.append((pp, pp + max(0, need - size - 2 * pp)))
    if any(lo or hi for lo, hi in pads):
        x = np.pad(x, [(0, 0)] * (x.ndim - n) + pads, constant_values=fill)
    eff = tuple(dd * (kk - 1) + 1 for kk, dd in zip(k, d))
    win = sliding_window_view(x, eff, axis=tuple(range(-n, 0)))
    select = tuple(slice(None, oo * ss, ss) for oo, ss in zip(out, s)) + \
        tuple(slice(None, None, dd) for dd in d)
    return win[(Ellipsis,) + select]


def _flat_positions(arg, k, s, p, d, out, spatial):
    """Flat in-plane input index of each window's argmax (``arg`` indexes the
    flattened window)."""
    offsets = np.unravel_index(arg, k)
    flat = 0
    for axis in range(len(k)):
        shape = [1] * len(k)
        shape[axis] = -1
        start = (np.arange(out[axis]) * s[axis] - p[axis]).reshape(shape)
        flat = flat * spatial[axis] + start + offsets[axis] * d[axis]
    return flat


def _out_meta(self, spatial, dtype):
    return TensorMeta(tuple(self._shape[:-len(spatial)]) + tuple(spatial), dtype)


def _scatter_planes(out, grad_output, indices, k):
    """Add each plane's gradient at its flat in-plane indices (several windows may
    pick one element: those add up); the backward of every max pool here."""
    spatial = math.prod(out._shape[-k:])
    planes = math.prod(out._shape[:-k])
    window = math.prod(grad_output._shape[-k:])     # (not -1: there may be no planes)
    g = _array(grad_output, out.dtype.opmath).reshape(planes, window)
    idx = indices._np().astype(np.int64).reshape(planes, window)
    flat = (np.arange(planes)[:, None] * spatial + idx).ravel()
    total = np.bincount(flat, weights=g.ravel(), minlength=planes * spatial)
    _write(out, total.reshape(out._shape))


# -- max_pool3d ------------------------------------------------------------------------

@meta("max_pool3d_with_indices")
def max_pool3d_with_indices_meta(self, kernel_size, stride=(), padding=0, dilation=1,
                                 ceil_mode=False):
    *_, out = _pool3d_params("max_pool3d", self, kernel_size, stride, padding, dilation,
                             ceil_mode)
    return _out_meta(self, out, self.dtype), _out_meta(self, out, dt.int64)


@impl("max_pool3d_with_indices")
def max_pool3d_with_indices_impl(outs, self, kernel_size, stride=(), padding=0, dilation=1,
                                 ceil_mode=False):
    out, indices = outs
    k, s, p, d, o = _pool3d_params("max_pool3d", self, kernel_size, stride, padding, dilation,
                                   ceil_mode)
    if self.dtype is dt.bool_:
        raise NotImplementedError('"max_pool3d" not implemented for \'Bool\'')
    if out.numel() == 0:
        return
    x = _array(self, self.dtype.opmath)
    fill = -np.inf if x.dtype.kind in "fc" else np.iinfo(x.dtype).min
    win = _windows(x, k, s, p, d, o, fill)
    flat = win.reshape(win.shape[:-3] + (-1,))
    arg = np.argmax(flat, axis=-1)
    _write(out, np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0])
    _write(indices, _flat_positions(arg, k, s, p, d, o, self._shape[-3:]))


@kernel("max_pool3d")
def max_pool3d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return aten.max_pool3d_with_indices.default(self, kernel_size, stride, padding, dilation,
                                                ceil_mode)[0]


@meta("max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward_meta(grad_output, self, kernel_size, stride, padding,
                                          dilation, ceil_mode, indices):
    *_, out = _pool3d_params("max_pool3d", self, kernel_size, stride, padding, dilation,
                             ceil_mode)
    _check_grad_shape(grad_output, self, out)
    _check_grad_shape(indices, self, out)
    return TensorMeta(self._shape, self.dtype)


def _check_grad_shape(t, self, out):
    """check_dim_size over the channel and spatial dims."""
    ndim = len(self._shape)
    expected = [self._shape[-4]] + list(out)
    for dim, n in zip(range(ndim - 4, ndim), expected):
        if len(t._shape) != ndim or t._shape[dim] != n:
            raise RuntimeError(f"Expected tensor of dimension {ndim} and tensor.size[{dim}] == "
                               f"{n} but got: dimension {len(t._shape)} and tensor.size[{dim}] "
                               f"= {t._shape[dim] if dim < len(t._shape) else 0}")


@impl("max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward_impl(out, grad_output, self, kernel_size, stride, padding,
                                          dilation, ceil_mode, indices):
    inner.zero_(out)
    _scatter_planes(out, grad_output, indices, 3)


# -- avg_pool3d ------------------------------------------------------------------------

def _divisors(k, s, p, out, spatial, count_include_pad, divisor_override, compute):
    """avg_pool3d's divisor per output position."""
    if divisor_override is not None:
        return compute.type(divisor_override)
    total = 1
    for axis, (kk, ss, pp, oo, n) in enumerate(zip(k, s, p, out, spatial)):
        start = np.arange(oo) * ss - pp
        end = np.minimum(start + kk, n + pp)
        size = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        shape = [1] * len(k)
        shape[axis] = -1
        total = total * size.reshape(shape)
    return total.astype(compute)


@meta("avg_pool3d")
def avg_pool3d_meta(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                    count_include_pad=True, divisor_override=None):
    if self.dtype is dt.uint8:
        raise NotImplementedError("\"avg_pool3d_out_frame\" not implemented for 'Byte'")
    *_, out = _pool3d_params("avg_pool3d", self, kernel_size, stride, padding, 1, ceil_mode,
                             divisor_override)
    return _out_meta(self, out, self.dtype)


@impl("avg_pool3d")
def avg_pool3d_impl(out, self, kernel_size, stride=(), padding=0, ceil_mode=False,
                    count_include_pad=True, divisor_override=None):
    k, s, p, _, o = _pool3d_params("avg_pool3d", self, kernel_size, stride, padding, 1,
                                   ceil_mode, divisor_override)
    if self.dtype is dt.bool_:
        raise NotImplementedError('"avg_pool3d_out_frame" not implemented for \'Bool\'')
    if out.numel() == 0:
        return
    integral = self.dtype.category <= dt.INTEGRAL
    compute = np.dtype(np.float64) if integral else self.dtype.opmath
    win = _windows(_array(self, compute), k, s, p, (1, 1, 1), o, 0)
    total = win.sum(axis=(-3, -2, -1), dtype=compute)
    result = total / _divisors(k, s, p, o, self._shape[-3:], count_include_pad,
                               divisor_override, compute)
    _write(out, np.trunc(result) if integral else result)


@meta("avg_pool3d_backward")
def avg_pool3d_backward_meta(grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    *_, out = _pool3d_params("avg_pool3d", self, kernel_size, stride, padding, 1, ceil_mode,
                             divisor_override)
    _check_grad_shape(grad_output, self, out)
    return TensorMeta(self._shape, self.dtype)


@impl("avg_pool3d_backward")
def avg_pool3d_backward_impl(out, grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    """Spread g / divisor over every window: one strided slice of a padded buffer
    per kernel offset, cropped to the input at the end."""
    k, s, p, _, o = _pool3d_params("avg_pool3d", self, kernel_size, stride, padding, 1,
                                   ceil_mode, divisor_override)
    compute = out.dtype.opmath
    spatial = self._shape[-3:]
    g = _array(grad_output, compute) / _divisors(k, s, p, o, spatial, count_include_pad,
                                                 divisor_override, compute)
    full = [max(n + 2 * pp, (oo - 1) * ss + kk) for n, pp, oo, ss, kk in zip(spatial, p, o, s, k)]
    buf = np.zeros(tuple(self._shape[:-3]) + tuple(full), dtype=compute)
    for offset in np.ndindex(*k):
        buf[(Ellipsis,) + tuple(slice(i, i + ss * oo, ss)
                                for i, ss, oo in zip(offset, s, o))] += g
    _write(out, buf[(Ellipsis,) + tuple(slice(pp, pp + n) for pp, n in zip(p, spatial))])


# -- adaptive pools ----------------------------------------------------------------------

@kernel("adaptive_avg_pool3d")
def adaptive_avg_pool3d(self, output_size):
    output_size = _expand1(output_size, 3)
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if min(output_size) < 0:
        raise RuntimeError(f"adaptive_avg_pool3d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{', '.join(map(str, output_size))}}}")
    if output_size == [1, 1, 1]:
        return aten.mean.dim(self, [-1, -2, -3], True)
    return aten._adaptive_avg_pool3d.default(self, output_size)


def _adaptive3d_input_check(name, self):
    ndim = len(self._shape)
    for d in range(1, ndim):
        if self._shape[d] <= 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_sizes(self._shape)} with "
                               f"dimension {d} being empty")
    if ndim not in (4, 5):
        raise RuntimeError(f"{name}(): Expected 4D or 5D tensor, but got {_sizes(self._shape)}")


@meta("_adaptive_avg_pool3d")
def adaptive_avg_pool3d_meta(self, output_size):
    _adaptive3d_input_check("adaptive_avg_pool3d", self)
    output_size = _expand1(output_size, 3)
    if self.dtype.category <= dt.INTEGRAL:
        raise NotImplementedError(
            f'"adaptive_avg_pool3d_cpu" not implemented for \'{self.dtype._short}\'')
    return _out_meta(self, output_size, self.dtype)


def _along(x, matrices):
    """Apply (out, in) matrices to the last len(matrices) axes in turn."""
    n = len(matrices)
    for axis, m in enumerate(matrices):
        dim = x.ndim - n + axis
        x = np.moveaxis(np.tensordot(m, x, axes=([1], [dim])), 0, dim)
    return x


@impl("_adaptive_avg_pool3d")
def adaptive_avg_pool3d_impl(out, self, output_size):
    """Separable: out = A_t x A_h x A_w (each A averaging its windows)."""
    if out.numel() == 0:
        return
    compute = self.dtype.opmath
    spatial = self._shape[-3:]
    mats = [_adaptive_matrix(n, o, compute) for n, o in zip(spatial, out._shape[-3:])]
    _write(out, _along(_array(self, compute), mats))


@meta("_adaptive_avg_pool3d_backward")
def adaptive_avg_pool3d_backward_meta(grad_output, self):
    _grad_nonempty("adaptive_avg_pool3d_backward", grad_output)
    return TensorMeta(self._shape, self.dtype)


def _grad_nonempty(name, grad_output):
    for d in range(1, len(grad_output._shape)):
        if grad_output._shape[d] <= 0:
            raise RuntimeError(f"{name}(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes "
                               f"{_sizes(grad_output._shape)} with dimension {d} being empty")


@impl("_adaptive_avg_pool3d_backward")
def adaptive_avg_pool3d_backward_impl(out, grad_output, self):
    compute = out.dtype.opmath
    mats = [_adaptive_matrix(n, o, compute).T
            for n, o in zip(self._shape[-3:], grad_output._shape[-3:])]
    _write(out, _along(_array(grad_output, compute), mats))


@meta("adaptive_max_pool3d")
def adaptive_max_pool3d_meta(self, output_size):
    ndim = len(self._shape)
    if ndim not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: "
                           f"{_sizes(self._shape)}")
    _adaptive3d_input_check("adaptive_max_pool3d", self)
    output_size = _list(output_size)
    if len(output_size) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    return _out_meta(self, output_size, self.dtype), _out_meta(self, output_size, dt.int64)


@impl("adaptive_max_pool3d")
def adaptive_max_pool3d_impl(outs, self, output_size):
    """Each output cell: the first maximum of its adaptive window and its flat
    in-plane position."""
    out, indices = outs
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"adaptive_max_pool3d_cpu" not implemented for '
                                  f"'{self.dtype._short}'")
    if out.numel() == 0:
        return
    x = self._np()
    spatial = x.shape[-3:]
    values, flat = out._np(), indices._np()
    ranges = [_adaptive_ranges(n, o) for n, o in zip(spatial, out._shape[-3:])]
    for cell in np.ndindex(*out._shape[-3:]):
        bounds = [ranges[a][cell[a]] for a in range(3)]
        window = x[(Ellipsis,) + tuple(slice(lo, hi) for lo, hi in bounds)]
        window = window.reshape(x.shape[:-3] + (-1,))
        arg = np.argmax(window, axis=-1)
        values[(Ellipsis,) + cell] = np.take_along_axis(window, arg[..., None], -1)[..., 0]
        pos = np.unravel_index(arg, [hi - lo for lo, hi in bounds])
        flat[(Ellipsis,) + cell] = ((pos[0] + bounds[0][0]) * spatial[1]
                                    + pos[1] + bounds[1][0]) * spatial[2] + pos[2] + bounds[2][0]


@meta("adaptive_max_pool3d_backward")
def adaptive_max_pool3d_backward_meta(grad_output, self, indices):
    _grad_nonempty("adaptive_max_pool3d_backward", grad_output)
    return TensorMeta(self._shape, self.dtype)


@impl("adaptive_max_pool3d_backward")
def adaptive_max_pool3d_backward_impl(out, grad_output, self, indices):
    _scatter_planes(out, grad_output, indices, 3)


# -- max unpooling -----------------------------------------------------------------------

def _unpool_checks(k, self, indices, output_size, stride=None, padding=None):
    """max_unpooling{2,3}d's checks (MaxUnpooling.cpp)."""
    name = f"max_unpooling{k}d"
    if indices.dtype is not dt.int64:
        raise RuntimeError("elements in indices should be type int64" + (
            f" but got: {indices.dtype._short}" if k == 2 else ""))
    output_size = _list(output_size)
    dims = "(height, width)" if k == 2 else "(depth, height, width)"
    if k == 2 and len(output_size) != 2:
        raise RuntimeError(f"There should be exactly two elements {dims} in output_size, but got "
                           f"{len(output_size)} elements.")
    ndim = len(self._shape)
    if ndim not in (k + 1, k + 2):
        raise RuntimeError(f"Input to {name} should be a {k + 1}d or {k + 2}d Tensor, but got a "
                           f"tensor with {ndim} dimensions.")
    if k == 3:
        for label, v in (("output_size", output_size), ("stride", _list(stride)),
                         ("padding", _list(padding))):
            if len(v) != 3:
                colon = "" if label == "output_size" else ":"
                raise RuntimeError(f"There should be exactly three elements {dims} in {label}, "
                                   f"but got{colon} {len(v)} elements.")
    if tuple(self._shape) != tuple(indices._shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_sizes(self._shape)}) but got indices tensor with shape: "
                           f"{_sizes(indices._shape)}")
    for d in range(1, ndim):
        if self._shape[d] <= 0:
            raise RuntimeError(f"{name}_forward_out_cpu(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but got {_sizes(self._shape)} with "
                               f"dimension {d} being empty.")
    if k == 3 and min(_list(stride)) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: "
                           f"{_sizes(_list(stride))}")
    return output_size


def _unpool_impl(k, out, self, indices, output_size):
    """Each plane's values written at their flat indices (a later duplicate
    index overwrites an earlier one), zeros elsewhere."""
    inner.zero_(out)
    if out.numel() == 0:
        return
    spatial = math.prod(output_size)
    planes = math.prod(self._shape[:-k])
    idx = indices._np().astype(np.int64).reshape(planes, -1)
    bad = (idx < 0) | (idx >= spatial)
    if bad.any():
        sizes = "x".join(map(str, output_size))
        raise RuntimeError(f"Found an invalid max index: {idx[bad][0]} (output volumes are of "
                           f"size {sizes})")
    o = out._np().reshape(planes, spatial)
    np.put_along_axis(o, idx, self._np().reshape(planes, -1), axis=1)


@meta("max_unpool2d")
def max_unpool2d_meta(self, indices, output_size):
    output_size = _unpool_checks(2, self, indices, output_size)
    return _out_meta(self, output_size, self.dtype)


@impl("max_unpool2d")
def max_unpool2d_impl(out, self, indices, output_size):
    _unpool_impl(2, out, self, indices, _list(output_size))


@meta("max_unpool3d")
def max_unpool3d_meta(self, indices, output_size, stride, padding):
    output_size = _unpool_checks(3, self, indices, output_size, stride, padding)
    return _out_meta(self, output_size, self.dtype)


@impl("max_unpool3d")
def max_unpool3d_impl(out, self, indices, output_size, stride, padding):
    _unpool_impl(3, out, self, indices, _list(output_size))


# -- fractional max pooling ------------------------------------------------------------

def _fractional_checks(k, self, kernel_size, output_size):
    """fractional_max_pool{2,3}d's meta checks."""
    kernel_size, output_size = _list(kernel_size), _list(output_size)
    name = "fractional_max_pool2d" if k == 2 else "fractional_max_pool3d_out"
    ints = "Ints" if k == 2 else "three Ints"
    if len(kernel_size) != k:
        raise RuntimeError(f"fractional_max_pool{k}d: kernel_size must either be a single Int or "
                           f"tuple of {ints}")
    if len(output_size) != k:
        raise RuntimeError(f"fractional_max_pool{k}d: output_size must either be a single Int or "
                           f"tuple of {ints}")
    ndim = len(self._shape)
    if ndim not in (k + 1, k + 2):
        raise RuntimeError(f"{name}(): Expected {k + 1}D or {k + 2}D tensor, but got: "
                           f"{_sizes(self._shape)}")
    for d in range(1, ndim):
        if self._shape[d] <= 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{_sizes(self._shape)} with dimension {d} "
                               "being empty.")
    labels = ("time", "height", "width")[-k:]
    for label, o, kk, n in zip(labels, output_size, kernel_size, self._shape[-k:]):
        # ATen's 3-d check is strict (outputT + poolSizeT - 1 < inputT)
        if (o + kk - 1 > n) if k == 2 else (o + kk - 1 >= n):
            raise RuntimeError(f"{name}(): pool {label} {kk} too large relative to input "
                               f"{label} {n}")
    return kernel_size, output_size


def _check_samples(k, self, random_samples):
    """The CPU kernels' checks of ``_random_samples``: (N', C, k) in the input's type."""
    if self.dtype is not random_samples.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if len(random_samples._shape) != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got "
                           f"{len(random_samples._shape)}")
    n, c, d = random_samples._shape
    if n < (self._shape[0] if len(self._shape) == k + 2 else 1):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if c != self._shape[-k - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if d != k:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {k}; got {d}.")


def _intervals(sample, size_in, size_out, pool, compute):
    """generate_intervals: the window starts along one axis, for every plane
    (``sample`` holds one uniform number per plane)."""
    seq = np.zeros(sample.shape + (size_out,), dtype=np.int64)
    if size_out > 1:
        alpha = compute.type(size_in - pool) / compute.type(size_out - 1)
        i = np.arange(size_out).astype(compute)
        u = sample.astype(compute)[..., None]
        seq = (((i + u) * alpha).astype(compute).astype(np.int64)
               - (u * alpha).astype(compute).astype(np.int64))
    if size_out > 0:
        seq[..., -1] = size_in - pool
    return seq


def _fractional_impl(k, outs, self, kernel_size, output_size, random_samples):
    out, indices = outs
    kernel_size, output_size = _list(kernel_size), _list(output_size)
    _check_samples(k, self, random_samples)
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"fractional_max_pool{k}d_out_frame" not implemented for '
                                  f"'{self.dtype._short}'")
    if out.numel() == 0:
        return
    compute = self.dtype.opmath
    batched = len(self._shape) == k + 2
    x = _array(self, compute)
    if not batched:
        x = x[None]
    planes = x.shape[:2]
    samples = _array(random_samples, compute)[:planes[0]]
    spatial = x.shape[2:]
    # the samples' order: (width, height) for 2-d, (time, height, width) for 3-d
    order = [1, 0] if k == 2 else [0, 1, 2]
    starts = [_intervals(samples[..., order[a]], spatial[a], output_size[a], kernel_size[a],
                         compute) for a in range(k)]
    values = np.empty(planes + tuple(output_size), dtype=compute)
    where = np.empty(planes + tuple(output_size), dtype=np.int64)
    flat_x = x.reshape(planes + (-1,))
    offsets = np.stack(np.meshgrid(*[np.arange(kk) for kk in kernel_size], indexing="ij"),
                       -1).reshape(-1, k)
    for cell in np.ndindex(*output_size):
        pos = 0
        for a in range(k):
            pos = pos * spatial[a] + (starts[a][..., cell[a]][..., None] + offsets[:, a])
        window = np.take_along_axis(flat_x, pos, axis=-1)
        nan = np.isnan(window)
        # the first maximum, or the last NaN (ATen's ``val > max || isnan(val)``)
        arg = np.where(nan.any(-1), window.shape[-1] - 1 - np.argmax(nan[..., ::-1], -1),
                       np.argmax(window, -1))
        values[(Ellipsis,) + cell] = np.take_along_axis(window, arg[..., None], -1)[..., 0]
        where[(Ellipsis,) + cell] = np.take_along_axis(pos, arg[..., None], -1)[..., 0]
    _write(out, values if batched else values[0])
    _write(indices, where if batched else where[0])


def _fractional_meta(k, self, kernel_size, output_size, random_samples):
    _, output_size = _fractional_checks(k, self, kernel_size, output_size)
    return _out_meta(self, output_size, self.dtype), _out_meta(self, output_size, dt.int64)


@meta("fractional_max_pool2d")
def fractional_max_pool2d_meta(self, kernel_size, output_size, random_samples):
    return _fractional_meta(2, self, kernel_size, output_size, random_samples)


@impl("fractional_max_pool2d")
def fractional_max_pool2d_impl(outs, self, kernel_size, output_size, random_samples):
    _fractional_impl(2, outs, self, kernel_size, output_size, random_samples)


@meta("fractional_max_pool3d")
def fractional_max_pool3d_meta(self, kernel_size, output_size, random_samples):
    return _fractional_meta(3, self, kernel_size, output_size, random_samples)


@impl("fractional_max_pool3d")
def fractional_max_pool3d_impl(outs, self, kernel_size, output_size, random_samples):
    _fractional_impl(3, outs, self, kernel_size, output_size, random_samples)


def _fractional_backward_meta(k, grad_output, self, output_size, indices):
    expected = tuple(self._shape[:-k]) + tuple(_list(output_size))
    if tuple(grad_output._shape) != expected:
        raise RuntimeError(f"fractional_max_pool{k}d_backward(): grad_output to have shape "
                           f"{_sizes(expected)} but got {_sizes(grad_output._shape)}")
    return TensorMeta(self._shape, self.dtype)


@meta("fractional_max_pool2d_backward")
def fractional_max_pool2d_backward_meta(grad_output, self, kernel_size, output_size, indices):
    return _fractional_backward_meta(2, grad_output, self, output_size, indices)


@impl("fractional_max_pool2d_backward")
def fractional_max_pool2d_backward_impl(out, grad_output, self, kernel_size, output_size,
                                        indices):
    _scatter_planes(out, grad_output, indices, 2)


@meta("fractional_max_pool3d_backward")
def fractional_max_pool3d_backward_meta(grad_output, self, kernel_size, output_size, indices):
    return _fractional_backward_meta(3, grad_output, self, output_size, indices)


@impl("fractional_max_pool3d_backward")
def fractional_max_pool3d_backward_impl(out, grad_output, self, kernel_size, output_size,
                                        indices):
    _scatter_planes(out, grad_output, indices, 3)
