"""Non-constant padding (ATen's ReflectionPad.cpp, ReplicationPadding.cpp, PadNd.cpp).

    reflection_pad{1,2,3}d    out[j] = x[reflect(j - pad_left)]   (mirror, edge not repeated)
    replication_pad{1,2,3}d   out[j] = x[clamp(j - pad_left, 0, n - 1)]
    *_backward                the adjoint: each output gradient added to its source
    _pad_circular             out[j] = x[(j - pad_left) mod n], as ATen builds it:
                              new_empty + slice + copy_ (so it is differentiable
                              through those ops)
    pad / _pad_enum           F.pad's dispatcher over the modes (constant ->
                              constant_pad_nd)

Negative pads crop.  ``pad`` covers the last len(pad) / 2 dims, last dim first;
the index maps are computed per padded dim and applied with ``np.take``.
"""
from __future__ import annotations

import numpy as np

from ..._dispatcher.dispatcher import ops
from ..._tensor import channels_last_strides
from ..structured import TensorMeta
from . import impl, kernel, meta
from ._common import _sizes
from .conv import _is_channels_last

aten = ops.aten

_MODES = {"reflect": 0, "replicate": 1, "circular": 2, "constant": 3}


def _source_index(size, left, out_size, mode):
    """For each output position along one dim, the input position it copies."""
    j = np.arange(out_size) - left
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j >= size, 2 * (size - 1) - j, j)
    return np.clip(j, 0, size - 1)


def _pad_meta(name, mode, self, padding):
    """Checks and output shape of {reflection,replication}_pad{k}d."""
    k = int(name[-2])
    padding = [int(p) for p in padding]
    if len(padding) != 2 * k:
        extra = f", but got: {len(padding)}" if mode == "reflect" else ""
        raise RuntimeError(f"padding size is expected to be {2 * k}{extra}")
    shape = tuple(self._shape)
    ndim = len(shape)
    batch = 1 if ndim == k + 2 else 0
    if ndim not in (k + 1, k + 2) or any(n == 0 for n in shape[batch:]):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{_sizes(shape)}")
    out = list(shape)
    for i in range(k):
        dim = ndim - 1 - i
        left, right = padding[2 * i], padding[2 * i + 1]
        if mode == "reflect" and (left >= shape[dim] or right >= shape[dim]):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({left}, "
                               f"{right}) at dimension {dim} of input {_sizes(shape)}")
        out[dim] = shape[dim] + left + right
    if k == 1 and out[-1] < 1:
        raise RuntimeError(f"input (W: {shape[-1]}) is too small. Calculated output W: "
                           f"{out[-1]}")
    if any(n < 0 for n in out):
        negative = next(n for n in out if n < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: "
                           f"{_sizes(out)}")
    out = tuple(out)
    strides = channels_last_strides(out) if _is_channels_last(self) else None
    return TensorMeta(out, self.dtype, strides)


def _check_dtype(name, t):
    if t.dtype.name == "bool":
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')


def _index_maps(shape, padding, out_shape, mode):
    """(dim, source index) for each padded dim."""
    ndim = len(shape)
    return [(ndim - 1 - i, _source_index(shape[ndim - 1 - i], padding[2 * i],
                                         out_shape[ndim - 1 - i], mode))
            for i in range(len(padding) // 2)]


def _pad_forward(name, mode):
    def meta_rule(self, padding):
        return _pad_meta(name, mode, self, padding)

    def impl_fn(out, self, padding):
        _check_dtype(name, self)
        if out.numel() == 0:
            return
        x = self._np()
        for dim, index in _index_maps(self._shape, padding, out._shape, mode):
            x = np.take(x, index, axis=dim)
        np.copyto(out._np(), x)

    meta(name)(meta_rule)
    impl(name)(impl_fn)


def _pad_backward(name, mode):
    k = int(name[-2])

    def meta_rule(grad_output, self, padding):
        expected = _pad_meta(name, mode, self, padding).shape
        ndim = len(self._shape)
        for label, dim in (("width", ndim - 1), ("height", ndim - 2), ("depth", ndim - 3))[:k]:
            if grad_output._shape[dim] != expected[dim]:
                raise RuntimeError(f"gradOutput {label} unexpected. Expected: {expected[dim]}, "
                                   f"Got: {grad_output._shape[dim]}")
        if grad_output.dtype is not self.dtype:
            raise RuntimeError(f"expected scalar type {grad_output.dtype._short} but found "
                               f"{self.dtype._short}")
        strides = channels_last_strides(self._shape) if _is_channels_last(self) else None
        return TensorMeta(self._shape, self.dtype, strides)

    def impl_fn(out, grad_output, self, padding):
        compute = out.dtype.opmath
        g = grad_output._np().astype(compute, copy=False)
        for dim, index in reversed(_index_maps(self._shape, padding, grad_output._shape, mode)):
            moved = np.moveaxis(g, dim, -1)
            total = np.zeros(moved.shape[:-1] + (self._shape[dim],), dtype=compute)
            np.add.at(total, (Ellipsis, index), moved)
            g = np.moveaxis(total, -1, dim)
        np.copyto(out._np(), g, casting="unsafe")

    meta(f"{name}_backward")(meta_rule)
    impl(f"{name}_backward")(impl_fn)


for _k in (1, 2, 3):
    for _prefix, _mode in (("reflection", "reflect"), ("replication", "replicate")):
        _pad_forward(f"{_prefix}_pad{_k}d", _mode)
        _pad_backward(f"{_prefix}_pad{_k}d", _mode)


# -- circular / pad dispatch -------------------------------------------------------------

@kernel("_pad_circular")
def _pad_circular(self, pad):
    """Copy the input into the middle of a new tensor, then, dim by dim (last
    first), copy its far end into the left pad and its near end into the right."""
    pad = [int(p) for p in pad]
    in_shape = list(self._shape)
    out_shape = list(in_shape)
    dims = [len(in_shape) - 1 - i for i in range(len(pad) // 2)]
    for i, dim in enumerate(dims):
        left, right = pad[2 * i], pad[2 * i + 1]
        out_shape[dim] = in_shape[dim] + left + right
        if left > in_shape[dim] or right > in_shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = aten.new_empty.default(self, out_shape, dtype=self.dtype, layout=self.layout,
                                 device=self.device)
    out_slice, in_slice = out, self
    for i, dim in enumerate(dims):
        left, right = pad[2 * i], pad[2 * i + 1]
        out_slice = aten.slice.Tensor(out_slice, dim, max(left, 0),
                                      out_shape[dim] - max(right, 0))
        in_slice = aten.slice.Tensor(in_slice, dim, max(-left, 0), in_shape[dim] - max(-right, 0))
    aten.copy_.default(out_slice, in_slice)
    for i, dim in enumerate(dims):
        left, right = pad[2 * i], pad[2 * i + 1]
        size = out_shape[dim]
        if left > 0:
            aten.copy_.default(aten.slice.Tensor(out, dim, 0, left),
                               aten.slice.Tensor(out, dim, size - left - max(right, 0),
                                                 size - max(right, 0)))
        if right > 0:
            aten.copy_.default(aten.slice.Tensor(out, dim, size - right, size),
                               aten.slice.Tensor(out, dim, max(left, 0), max(left, 0) + right))
    return out


_NON_CONSTANT = {  # (len(pad), input dims) -> per mode: reflect, replicate, circular
    2: (2, 3, ("reflection_pad1d", "replication_pad1d", "_pad_circular")),
    4: (3, 4, ("reflection_pad2d", "replication_pad2d", "_pad_circular")),
    6: (4, 5, ("reflection_pad3d", "replication_pad3d", "_pad_circular")),
}


def _pad_by_mode(self, pad, mode, value):
    """at::native::_pad_enum (called directly by ``pad``, as in ATen)."""
    ndim = len(self._shape)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > ndim * 2:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{ndim}")
    if mode == _MODES["constant"]:
        return aten.constant_pad_nd.default(self, pad, 0.0 if value is None else value)
    names = {v: k for k, v in _MODES.items()}
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{names[mode]}" doesn\'t take in value argument')
    low, high, ops_by_mode = _NON_CONSTANT.get(len(pad), (None, None, None))
    if ops_by_mode is not None and ndim in (low, high):
        return getattr(aten, ops_by_mode[mode]).default(self, pad)
    raise NotImplementedError(
        f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
        "Supported combinations for non-constant padding:\n"
        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


@kernel("_pad_enum")
def _pad_enum(self, pad, mode, value=None):
    return _pad_by_mode(self, [int(p) for p in pad], mode, value)


@kernel("pad")
def pad(self, pad, mode="constant", value=None):
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    return _pad_by_mode(self, [int(p) for p in pad], _MODES[mode], value)
