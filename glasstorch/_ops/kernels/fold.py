"""Sliding-block extraction and its adjoint (ATen's Im2Col.cpp, Col2Im.cpp,
im2col_shape_check.h): what F.unfold and F.fold call.

    im2col   (N, C, H, W) -> (N, C * kh * kw, L): column l holds the (dilated)
             kh x kw block at block position l (row-major over the L = bh * bw
             positions of the zero-padded input), channel-major then kernel
             row then kernel column
    col2im   the adjoint: (N, C * kh * kw, L) -> (N, C, H, W), every column's
             values added back at their block's positions (overlaps sum)

An unbatched input (one dim less) gives an unbatched result.
"""
from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..structured import TensorMeta
from . import impl, meta
from ._common import _array, _sizes, _write
from .conv import _list


def _check_dtype(op, t):
    """The CPU loops cover floating, complex and bool tensors."""
    if t.dtype.category <= dt.INTEGRAL and t.dtype is not dt.bool_:
        raise NotImplementedError(f'"{op}_out_cpu" not implemented for \'{t.dtype._short}\'')


def _pairs(op, **params):
    """Each argument as two ints ("It is expected kernel_size equals to 2 ...")."""
    values = []
    for name, value in params.items():
        value = _list(value)
        if len(value) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
        values.append(value)
    return values


def _block_checks(kernel_size, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} "
                           f"kernel_width: {kw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dh} "
                           f"dilation_width: {dw}")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {ph} "
                           f"pad_width: {pw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} "
                           f"stride_width: {sw}")


def _blocks(size, k, d, p, s):
    """Block positions along one axis (div_rtn rounds toward -inf)."""
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _describe(kernel_size, dilation, padding, stride=None):
    text = (f"kernel_size=({kernel_size[0]}, {kernel_size[1]}), dilation=({dilation[0]}, "
            f"{dilation[1]}), padding=({padding[0]}, {padding[1]})")
    return text + (f", stride=({stride[0]}, {stride[1]})" if stride is not None else "")


def _im2col_params(self, kernel_size, dilation, padding, stride):
    kernel_size, dilation, padding, stride = _pairs(
        "im2col", kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    _block_checks(kernel_size, dilation, padding, stride)
    shape = tuple(self._shape)
    ndim = len(shape)
    if ndim < 3:    # ATen reads input.size(1) and input.size(2) first
        bad, top = (1 if ndim <= 1 else 2), max(ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-top}, {top - 1}],"
                         f" but got {bad})")
    if not ((ndim == 3 and shape[0] and shape[1] and shape[2])
            or (ndim == 4 and shape[1] and shape[2] and shape[3])):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {_sizes(shape)}")
    h, w = shape[-2:]
    bh = _blocks(h, kernel_size[0], dilation[0], padding[0], stride[0])
    bw = _blocks(w, kernel_size[1], dilation[1], padding[1], stride[1])
    if bh < 1 or bw < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), "
                           f"{_describe(kernel_size, dilation, padding)}, calculated shape of the "
                           f"array of sliding blocks as ({bh}, {bw}), but its components must be "
                           "at least one.")
    return kernel_size, dilation, padding, stride, (bh, bw)


@meta("im2col")
def im2col_meta(self, kernel_size, dilation, padding, stride):
    kernel_size, _, _, _, (bh, bw) = _im2col_params(self, kernel_size, dilation, padding, stride)
    c = self._shape[-3]
    shape = (c * kernel_size[0] * kernel_size[1], bh * bw)
    return TensorMeta(tuple(self._shape[:-3]) + shape, self.dtype)


def _positions(blocks, k, d, p, s):
    """(k, blocks) input row of each kernel offset at each block position."""
    return np.arange(k)[:, None] * d + np.arange(blocks)[None, :] * s - p


@impl("im2col")
def im2col_impl(out, self, kernel_size, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw), (bh, bw) = _im2col_params(
        self, kernel_size, dilation, padding, stride)
    _check_dtype("im2col", self)
    if out.numel() == 0:
        return
    x = self._np()
    x = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(ph, ph), (pw, pw)])
    rows = _positions(bh, kh, dh, 0, sh)            # (kh, bh) in the padded input
    cols = _positions(bw, kw, dw, 0, sw)            # (kw, bw)
    blocks = x[..., rows[:, None, :, None], cols[None, :, None, :]]   # (..., C, kh, kw, bh, bw)
    _write(out, blocks.reshape(out._shape))


def _col2im_params(self, output_size, kernel_size, dilation, padding, stride):
    output_size, kernel_size, dilation, padding, stride = _pairs(
        "col2im", output_size=output_size, kernel_size=kernel_size, dilation=dilation,
        padding=padding, stride=stride)
    _block_checks(kernel_size, dilation, padding, stride)
    shape = tuple(self._shape)
    ndim = len(shape)
    if not ((ndim == 2 and shape[0] and shape[1]) or (ndim == 3 and shape[1] and shape[2])):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {_sizes(shape)}")
    planes = shape[-2]
    kh, kw = kernel_size
    if planes % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={planes} and "
                           f"kernel_size=({kh}, {kw}).")
    bh = _blocks(output_size[0], kh, dilation[0], padding[0], stride[0])
    bw = _blocks(output_size[1], kw, dilation[1], padding[1], stride[1])
    given = (f"Given output_size=({output_size[0]}, {output_size[1]}), "
             f"{_describe(kernel_size, dilation, padding, stride)}, ")
    if shape[-1] != bh * bw:
        raise RuntimeError(f"{given}expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
                           f"input.size(2)={shape[-1]}.")
    if bh < 1 or bw < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as ({bh}, "
                           f"{bw}), which is too small (non-positive).")
    return output_size, kernel_size, dilation, padding, stride, (bh, bw)


@meta("col2im")
def col2im_meta(self, output_size, kernel_size, dilation, padding, stride):
    output_size, (kh, kw), *_ = _col2im_params(self, output_size, kernel_size, dilation,
                                               padding, stride)
    c = self._shape[-2] // (kh * kw)
    return TensorMeta(tuple(self._shape[:-2]) + (c,) + tuple(output_size), self.dtype)


@impl("col2im")
def col2im_impl(out, self, output_size, kernel_size, dilation, padding, stride):
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw), (bh, bw) = _col2im_params(
        self, output_size, kernel_size, dilation, padding, stride)
    _check_dtype("col2im", self)
    if out.numel() == 0:
        return
    compute = out.dtype.opmath
    lead = tuple(self._shape[:-2])
    c = self._shape[-2] // (kh * kw)
    cols = _array(self, compute).reshape(lead + (c, kh, kw, bh, bw))
    buf = np.zeros(lead + (c, h + 2 * ph, w + 2 * pw), dtype=compute)
    for i in range(kh):
        for j in range(kw):
            buf[..., i * dh:i * dh + sh * (bh - 1) + 1:sh,
                j * dw:j * dw + sw * (bw - 1) + 1:sw] += cols[..., i, j, :, :]
    _write(out, buf[..., ph:ph + h, pw:pw + w])
