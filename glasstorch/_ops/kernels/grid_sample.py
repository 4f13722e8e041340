"""Sampling an input at grid locations, and affine grids (ATen's GridSampler.cpp,
GridSampler.h, cpu/GridSamplerKernel.cpp, AffineGridGenerator.cpp): what
F.grid_sample and F.affine_grid call.

    grid_sampler_2d   input (N, C, H, W), grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo)
    grid_sampler_3d   input (N, C, D, H, W), grid (N, Do, Ho, Wo, 3) -> (N, C, Do, Ho, Wo)

grid[..., 0] is x (the last input dim), grid[..., 1] is y, grid[..., 2] is z,
each normalized to [-1, 1].  A coordinate is unnormalized to pixels
(align_corners: -1 and 1 are the corner pixels' centres, else their outer
edges), then the padding mode maps it into the input: zeros (taps outside
read 0), border (clip), reflection (reflect off the borders, then clip).
Modes: 0 bilinear (2^k taps, weights the products of 1 - distance), 1 nearest
(rounded half to even), 2 bicubic (4 x 4 taps, cubic convolution with
A = -0.75; the padding applies to each tap, 2-d only).

The backward ops return the gradient of the input (taps' weights times the
output gradient, added back) and of the grid (the weights' derivatives times
the tapped values, through the unnormalize and padding maps); output_mask[0]
False leaves the input's out.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..structured import TensorMeta
from . import impl, kernel, meta
from ._common import _allocate_masked, _array, _scalar_t, _sizes, _write

aten = ops.aten

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2
_CUBIC_A = -0.75


# -- checks (GridSampler.h's check_grid_sampler_common / _2d / _3d) ------------------------

def _check_common(input, grid):
    shape, gshape = tuple(input._shape), tuple(grid._shape)
    if shape[0] != gshape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {_sizes(shape)} and grid with sizes "
                           f"{_sizes(gshape)}")
    if gshape[-1] != len(shape) - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {len(shape) - 2} in last "
                           f"dimension, but got grid with sizes {_sizes(gshape)}")
    for i in range(2, len(shape)):
        if shape[i] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {_sizes(shape)} with dimension "
                               f"{i} being empty")


def _check(input, grid, interpolation_mode, k):
    _check_common(input, grid)
    if not (input.dim() == k + 2 and grid.dim() == k + 2):
        raise RuntimeError(f"grid_sampler(): expected {k + 2}D input and grid with same number "
                           f"of dimensions, but got input with sizes {_sizes(input._shape)} and "
                           f"grid with sizes {_sizes(grid._shape)}")
    if k == 3 and interpolation_mode == BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _check_dtypes(name, input, grid):
    if input.dtype.category != dt.FLOATING:
        raise NotImplementedError(f'"{name}_cpu_kernel_impl" not implemented for '
                                  f"'{input.dtype._short}'")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._short} but found "
                           f"{grid.dtype._short}")


# -- coordinates (GridSampler.h) -----------------------------------------------------------

def _unnormalize(coord, size, align_corners):
    """Pixel coordinate, and its derivative by the normalized one."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _clip(coord, size):
    """Clip into [0, size - 1]; the derivative is 0 on and beyond the borders.
    (maximum/minimum keep a bfloat16 coordinate bfloat16; np.clip widens it.)"""
    clipped = np.minimum(np.maximum(coord, 0), size - 1)
    return clipped, ((coord > 0) & (coord < size - 1)).astype(coord.dtype)


def _reflect(coord, twice_low, twice_high):
    """Reflect off low and high until inside; the derivative is +-1."""
    if twice_low == twice_high:
        return np.zeros_like(coord), np.zeros_like(coord)
    # in the coordinate's type (a Python float would widen a bfloat16 array)
    low, span = coord.dtype.type(twice_low / 2), coord.dtype.type((twice_high - twice_low) / 2)
    shifted = coord - low
    sign = np.where(shifted < 0, -1, 1).astype(coord.dtype)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    even = np.floor(shifted / span) % 2 == 0
    return (np.where(even, extra + low, span - extra + low),
            np.where(even, sign, -sign).astype(coord.dtype))


def _pad(coord, size, padding_mode, align_corners):
    """compute_coordinates: the padding mode's map, and its derivative."""
    if padding_mode == BORDER:
        return _clip(coord, size)
    if padding_mode == REFLECTION:
        if align_corners:
            coord, d_reflect = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord, d_reflect = _reflect(coord, -1, 2 * size - 1)
        coord, d_clip = _clip(coord, size)
        return coord, d_reflect * d_clip
    return coord, np.ones_like(coord)


def _source(coord, size, padding_mode, align_corners):
    """grid_sampler_compute_source_index, with its derivative; a non-finite or
    huge coordinate reads as -100 (outside), as safe_downgrade_to_int_range."""
    coord, d_unnorm = _unnormalize(coord, size, align_corners)
    coord, d_pad = _pad(coord, size, padding_mode, align_corners)
    with np.errstate(over="ignore"):    # (2 ** 31 is inf in float16: no half value exceeds it)
        bad = ~np.isfinite(coord) | (np.abs(coord) > 2.0 ** 31)
    return np.where(bad, -100, coord).astype(coord.dtype), d_unnorm * d_pad


def _cubic_coefficients(t):
    """The four cubic-convolution weights of taps -1, 0, 1, 2 at fraction t,
    and their derivatives by t (UpSample.h's get_cubic_upsample_coefficients,
    in t's type as its scalar_t)."""
    a = t.dtype.type(_CUBIC_A)

    def near(x):        # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):         # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    def d_near(x):
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def d_far(x):
        return (3 * a * x - 10 * a) * x + 8 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    slopes = [d_far(t + 1), d_near(t), -d_near(1 - t), -d_far(2 - t)]
    return weights, slopes


# -- the taps --------------------------------------------------------------------------------

class _Sampler:
    """The taps one call reads: per tap, the (clamped) input index of every
    output location, whether it is inside, its weight, and the weight's
    derivative by each pixel coordinate (grid component order x, y, z)."""

    def __init__(self, input, grid, interpolation_mode, padding_mode, align_corners, compute):
        self.sizes = tuple(input._shape[2:])            # (D,) H, W
        k = len(self.sizes)
        g = _array(grid, compute)
        n = g.shape[0]
        self.batch = np.arange(n).reshape((n,) + (1,) * (g.ndim - 2))
        # component i of the grid addresses input dim -1 - i
        sizes = [self.sizes[-1 - i] for i in range(k)]
        self.taps = []          # (indices per input dim, inside mask, weight, d weight per component)
        if interpolation_mode == BICUBIC:
            self._bicubic(g, sizes, padding_mode, align_corners)
            return
        coords, self.mult = [], []
        for i in range(k):
            c, m = _source(g[..., i], sizes[i], padding_mode, align_corners)
            coords.append(c)
            self.mult.append(m)
        if interpolation_mode == NEAREST:
            self._add([np.rint(c) for c in coords], sizes, np.ones_like(coords[0]), None)
            return
        low = [np.floor(c) for c in coords]
        frac = [c - lo for c, lo in zip(coords, low)]
        # corners in ATen's order: the x offset varies fastest (nw, ne, sw, se ...)
        for corner in itertools.product((0, 1), repeat=k):
            offsets = corner[::-1]                     # per component
            factors = [f if o else (lo + 1 - c) for f, o, lo, c in
                       zip(frac, offsets, low, coords)]
            weight = factors[0]
            for f in factors[1:]:
                weight = weight * f
            slopes = []
            for i in range(k):
                s = np.full_like(coords[0], 1.0 if offsets[i] else -1.0)
                for j in range(k):
                    if j != i:
                        s = s * factors[j]
                slopes.append(s)
            self._add([lo + o for lo, o in zip(low, offsets)], sizes, weight, slopes)

    def _bicubic(self, g, sizes, padding_mode, align_corners):
        (x, mx), (y, my) = (_unnormalize(g[..., i], sizes[i], align_corners) for i in range(2))
        self.mult = [np.full_like(x, mx), np.full_like(y, my)]
        x0, y0 = np.floor(x), np.floor(y)
        (wx, sx), (wy, sy) = _cubic_coefficients(x - x0), _cubic_coefficients(y - y0)
        self.cubic = (wx, wy)
        for i in range(4):
            for j in range(4):
                cx, _ = _pad(x0 - 1 + j, sizes[0], padding_mode, align_corners)
                cy, _ = _pad(y0 - 1 + i, sizes[1], padding_mode, align_corners)
                # get_value_bounded truncates the padded coordinate toward zero
                self._add([np.trunc(cx), np.trunc(cy)], sizes, wx[j] * wy[i],
                          [sx[j] * wy[i], wx[j] * sy[i]])

    def _add(self, positions, sizes, weight, slopes):
        inside = np.ones(weight.shape, dtype=bool)
        index = []
        for p, size in zip(positions, sizes):
            inside &= (p >= 0) & (p < size)
            index.append(np.clip(np.nan_to_num(p), 0, size - 1).astype(np.int64))
        # input dims in order (D, H, W): components reversed
        self.taps.append((index[::-1], inside, weight, slopes))

    def gather(self, x, index, inside):
        """x (N, C, *sizes) at one tap: (N, *out, C), 0 outside."""
        channels_last = np.moveaxis(x, 1, -1)
        values = channels_last[(self.batch,) + tuple(index)]
        return values * inside[..., None]

    def flat(self, index):
        """Each output location's linear index into (N, *sizes)."""
        lin = np.broadcast_to(self.batch, index[0].shape)
        for i, size in zip(index, self.sizes):
            lin = lin * size + i
        return lin.reshape(-1)


def _sample(out, input, grid, interpolation_mode, padding_mode, align_corners):
    """The forward.  float16/bfloat16 compute in their own type, rounding after
    every operation, as ATen's scalar CPU loops for them do (scalar_t
    arithmetic); float32/float64 in themselves."""
    if out.numel() == 0:
        return
    compute = _scalar_t(input.dtype)
    x = _array(input, compute)
    sampler = _Sampler(input, grid, interpolation_mode, padding_mode, align_corners, compute)
    if interpolation_mode == BICUBIC:
        # ATen interpolates each of the 4 rows along x, then the rows along y
        wx, wy = sampler.cubic
        rows = [_weighted_sum(sampler, x, sampler.taps[4 * i:4 * i + 4], wx) for i in range(4)]
        result = None
        for row, w in zip(rows, wy):
            term = row * w[..., None]
            result = term if result is None else result + term
    else:
        result = _weighted_sum(sampler, x, sampler.taps, [w for _, _, w, _ in sampler.taps])
    _write(out, np.moveaxis(result, -1, 1))


def _weighted_sum(sampler, x, taps, weights):
    """sum of tap value * weight, added in the taps' order: (N, *out, C)."""
    result = None
    for (index, inside, _, _), weight in zip(taps, weights):
        term = sampler.gather(x, index, inside) * weight[..., None]
        result = term if result is None else result + term
    return result


def _sample_backward(grad_input, grad_grid, grad_output, input, grid, interpolation_mode,
                     padding_mode, align_corners):
    compute = input.dtype.opmath
    if grad_input is not None:
        _write(grad_input, np.zeros(grad_input._shape, compute))
    if grad_grid is not None:
        _write(grad_grid, np.zeros(grad_grid._shape, compute))
    if grad_output.numel() == 0 or input.numel() == 0:
        return
    x = _array(input, compute)
    gy = np.moveaxis(_array(grad_output, compute), 1, -1)         # (N, *out, C)
    sampler = _Sampler(input, grid, interpolation_mode, padding_mode, align_corners, compute)
    channels = x.shape[1]
    gx = np.zeros((int(np.prod((x.shape[0],) + sampler.sizes)), channels), compute)
    g_coords = [np.zeros(gy.shape[:-1], compute) for _ in sampler.sizes]
    for index, inside, weight, slopes in sampler.taps:
        if grad_input is not None:
            np.add.at(gx, sampler.flat(index),
                      (gy * (weight * inside)[..., None]).reshape(-1, channels))
        if grad_grid is not None and slopes is not None:
            dot = (sampler.gather(x, index, inside) * gy).sum(-1)
            for i, s in enumerate(slopes):
                g_coords[i] += dot * s
    if grad_input is not None:
        shape = (x.shape[0],) + sampler.sizes + (channels,)
        _write(grad_input, np.moveaxis(gx.reshape(shape), -1, 1))
    if grad_grid is not None and interpolation_mode != NEAREST:
        _write(grad_grid, np.stack([g * m for g, m in zip(g_coords, sampler.mult)], -1))


# -- the ops -----------------------------------------------------------------------------------

def _out_meta(input, grid):
    return TensorMeta((input._shape[0], input._shape[1]) + tuple(grid._shape[1:-1]), input.dtype)


@meta("grid_sampler_2d")
def grid_sampler_2d_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    _check(input, grid, interpolation_mode, 2)
    return _out_meta(input, grid)


@impl("grid_sampler_2d")
def grid_sampler_2d_impl(out, input, grid, interpolation_mode, padding_mode, align_corners):
    _check_dtypes("grid_sampler_2d", input, grid)
    _sample(out, input, grid, interpolation_mode, padding_mode, align_corners)


@meta("grid_sampler_3d")
def grid_sampler_3d_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    _check(input, grid, interpolation_mode, 3)
    return _out_meta(input, grid)


@impl("grid_sampler_3d")
def grid_sampler_3d_impl(out, input, grid, interpolation_mode, padding_mode, align_corners):
    _check_dtypes("grid_sampler_3d", input, grid)
    _sample(out, input, grid, interpolation_mode, padding_mode, align_corners)


def _backward(k, grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
              output_mask):
    _check(input, grid, interpolation_mode, k)
    specs = [TensorMeta(tuple(input._shape), input.dtype) if output_mask[0] else None,
             TensorMeta(tuple(grid._shape), grid.dtype)]
    grad_input, grad_grid = _allocate_masked(specs, input.device)
    if input.device.type != "meta":
        _check_dtypes(f"grid_sampler_{k}d_backward", input, grid)
        _sample_backward(grad_input, grad_grid, grad_output, input, grid, interpolation_mode,
                         padding_mode, align_corners)
    return grad_input, grad_grid


@kernel("grid_sampler_2d_backward")
def grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
                             align_corners, output_mask):
    return _backward(2, grad_output, input, grid, interpolation_mode, padding_mode,
                     align_corners, output_mask)


@kernel("grid_sampler_3d_backward")
def grid_sampler_3d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
                             align_corners, output_mask):
    return _backward(3, grad_output, input, grid, interpolation_mode, padding_mode,
                     align_corners, output_mask)


@kernel("grid_sampler")
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """The 4-d or 5-d op by the input's rank (ATen's cuDNN route is CUDA's)."""
    _check_common(input, grid)
    op = aten.grid_sampler_2d if input.dim() == 4 else aten.grid_sampler_3d
    return op.default(input, grid, interpolation_mode, padding_mode, align_corners)


def _check_float(input, grid):
    """The scalar fallback reads float tensors only."""
    for t in (input, grid):
        if t.dtype is not dt.float32:
            raise RuntimeError(f"expected scalar type Float but found {t.dtype._short}")


@kernel("_grid_sampler_2d_cpu_fallback")
def _grid_sampler_2d_cpu_fallback(input, grid, interpolation_mode, padding_mode, align_corners):
    """ATen's scalar 2-d loop, kept as an op of its own: the same sampling."""
    _check(input, grid, interpolation_mode, 2)
    out = aten.empty.memory_format(list(_out_meta(input, grid).shape), dtype=input.dtype,
                                   device=input.device)
    if input.device.type != "meta":
        _check_float(input, grid)
        _sample(out, input, grid, interpolation_mode, padding_mode, align_corners)
    return out


@kernel("_grid_sampler_2d_cpu_fallback_backward")
def _grid_sampler_2d_cpu_fallback_backward(grad_output, input, grid, interpolation_mode,
                                           padding_mode, align_corners):
    if input.device.type != "meta":
        _check_float(input, grid)
    return _backward(2, grad_output, input, grid, interpolation_mode, padding_mode,
                     align_corners, (True, True))


# -- affine grids (AffineGridGenerator.cpp) ----------------------------------------------------

def _base_line(steps, align_corners, like):
    """linspace(-1, 1) over a dim of ``steps`` points (0 for one point), pulled in
    by (steps - 1) / steps without align_corners."""
    if steps <= 1:
        return aten.zeros.default([1], dtype=like.dtype, device=like.device)
    line = aten.linspace.default(-1, 1, steps, dtype=like.dtype, device=like.device)
    if not align_corners:
        line = aten.div.Scalar(aten.mul.Scalar(line, steps - 1), steps)
    if line.dtype is not like.dtype:    # (ATen copies it into a grid of theta's dtype)
        line = aten._to_copy.default(line, dtype=like.dtype)
    return line


def _base_grid(theta, size, align_corners):
    """(N, *spatial, k + 1): the x, y (z) of every output point, and a 1."""
    n, spatial = size[0], list(size[2:])
    k = len(spatial)
    columns = []
    for i in range(k):
        # component i varies along spatial dim k - 1 - i
        shape = [1] * k
        shape[k - 1 - i] = spatial[k - 1 - i]
        line = _base_line(spatial[k - 1 - i], align_corners, theta)
        columns.append(aten.expand.default(aten.view.default(line, shape), spatial))
    columns.append(aten.ones.default(spatial, dtype=theta.dtype, device=theta.device))
    base = aten.stack.default(columns, -1)
    return aten.expand.default(aten.unsqueeze.default(base, 0), [n] + spatial + [k + 1])


def _check_affine_size(size):
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")


@kernel("affine_grid_generator")
def affine_grid_generator(theta, size, align_corners):
    """base grid (N, P, k + 1) @ theta^T (N, k + 1, k) -> (N, *spatial, k)."""
    _check_affine_size(size)
    size = [int(s) for s in size]
    k = len(size) - 2
    points = int(np.prod(size[2:]))
    base = aten.reshape.default(_base_grid(theta, size, align_corners), [size[0], points, k + 1])
    grid = aten.bmm.default(base, aten.transpose.int(theta, 1, 2))
    return aten.view.default(grid, [size[0]] + size[2:] + [k])


@kernel("affine_grid_generator_backward")
def affine_grid_generator_backward(grad, size, align_corners):
    """grad (N, *spatial, k) -> (N, k, k + 1): (base grid^T @ grad)^T, a
    transposed view as ATen's."""
    _check_affine_size(size)
    size = [int(s) for s in size]
    k = len(size) - 2
    points = int(np.prod(size[2:]))
    base = aten.reshape.default(_base_grid(grad, size, align_corners), [size[0], points, k + 1])
    flat = aten.view.default(grad, [size[0], points, k])
    return aten.transpose.int(aten.bmm.default(aten.transpose.int(base, 1, 2), flat), 1, 2)
