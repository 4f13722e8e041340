"""Pixel shuffle (ATen's PixelShuffle.cpp): sub-pixel rearrangements.

    pixel_shuffle(x, r)     (*, C r^2, H, W) -> (*, C, H r, W r),
                            out[..., c, h r + i, w r + j] = x[..., c r^2 + i r + j, h, w]
    pixel_unshuffle(x, r)   the inverse, (*, C, H r, W r) -> (*, C r^2, H, W)

Each is a reshape, a transpose of the sub-pixel axes and a copy; each is the
other's gradient.
"""
from __future__ import annotations

import numpy as np

from ..._tensor import channels_last_strides
from ..structured import TensorMeta
from . import impl, meta
from .conv import _is_channels_last


def _check(name, self, factor, what):
    ndim = len(self._shape)
    if ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def _out_meta(self, shape):
    shape = tuple(shape)
    strides = channels_last_strides(shape) if _is_channels_last(self) else None
    return TensorMeta(shape, self.dtype, strides)


@meta("pixel_shuffle")
def pixel_shuffle_meta(self, upscale_factor):
    r = int(upscale_factor)
    _check("pixel_shuffle", self, r, "upscale_factor")
    *batch, c, h, w = self._shape
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return _out_meta(self, (*batch, c // (r * r), h * r, w * r))


@impl("pixel_shuffle")
def pixel_shuffle_impl(out, self, upscale_factor):
    r = int(upscale_factor)
    *batch, c, h, w = self._shape
    x = self._np().reshape(*batch, c // (r * r), r, r, h, w)
    n = len(batch)
    # (..., C, i, j, H, W) -> (..., C, H, i, W, j)
    order = list(range(n + 1)) + [n + 3, n + 1, n + 4, n + 2]
    np.copyto(out._np(), x.transpose(order).reshape(out._shape))


@meta("pixel_unshuffle")
def pixel_unshuffle_meta(self, downscale_factor):
    r = int(downscale_factor)
    _check("pixel_unshuffle", self, r, "downscale_factor")
    *batch, c, h, w = self._shape
    for what, dim, size in (("height", -2, h), ("width", -1, w)):
        if size % r != 0:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({dim})={size} is not divisible "
                               f"by {r}")
    return _out_meta(self, (*batch, c * r * r, h // r, w // r))


@impl("pixel_unshuffle")
def pixel_unshuffle_impl(out, self, downscale_factor):
    r = int(downscale_factor)
    *batch, c, h, w = self._shape
    x = self._np().reshape(*batch, c, h // r, r, w // r, r)
    n = len(batch)
    # (..., C, H, i, W, j) -> (..., C, i, j, H, W)
    order = list(range(n + 1)) + [n + 2, n + 4, n + 1, n + 3]
    np.copyto(out._np(), x.transpose(order).reshape(out._shape))
