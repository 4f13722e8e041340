"""Convolution and pooling (ATen's Convolution.cpp, Pooling.cpp, AdaptiveAveragePooling.cpp).

    convolution   out[n, o, y, x] = bias[o] + sum_{c, i, j} in[n, c, y*s + i*d - p, x*s + j*d - p]
                                                         * weight[o, c, i, j]
                  (per group; transposed=True is the adjoint of that map)

The CPU body is im2col + one matrix product per group, done with numpy:
``sliding_window_view`` gives every receptive field as a strided view (no copy),
``tensordot`` gathers them into columns and hands the product to BLAS.

``conv1d`` / ``conv2d`` (and their ``padding=`` string overloads) are
CompositeImplicitAutograd: they add/remove the batch dim and call
``convolution``, as PyTorch does, and so are ``conv_transpose1d`` /
``conv_transpose2d`` (``convolution`` with transposed=True); ``max_pool2d`` calls
``max_pool2d_with_indices``; ``adaptive_avg_pool2d`` is ``mean`` for a 1x1
output and ``_adaptive_avg_pool2d`` otherwise.  The 1-d pools (max, avg,
adaptive avg / max) are the 2-d ones over an unsqueezed height-1 input.

    adaptive_max_pool2d   out[..., i, j] = max over the adaptive window
                          rows [floor(i H / OH), ceil((i + 1) H / OH)), same for columns;
                          indices are flat h * W + w positions

Their backward ops (max_pool2d_with_indices_backward, avg_pool2d_backward,
_adaptive_avg_pool2d_backward) are at the end; convolution_backward follows the
forward's route in conv_backends.py.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..._tensor import channels_last_strides, _is_contiguous
from ..structured import TensorMeta, wrap_dim
from . import impl, kernel, meta
from ._common import _array, _sizes, _write
from ._inner import inner, observed

aten = ops.aten

_LEGACY = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
           "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
           "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _list(v) -> list:
    return [int(x) for x in v] if isinstance(v, (list, tuple)) else [int(v)]


def _expand_param(name, value, k):
    """expand_param_if_needed: one value is repeated; else there must be k of them."""
    value = _list(value)
    if len(value) == 1:
        return value * k
    if len(value) != k:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values "
                           f"to match the convolution dimensions, but got {name}={value}")
    return value


def _is_channels_last(t) -> bool:
    return (len(t._shape) == 4 and not _is_contiguous(t._shape, t._stride)
            and t._stride == channels_last_strides(t._shape))


# -- convolution ------------------------------------------------------------------------

def _conv_params(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    k = len(weight._shape) - 2
    if k < 1:
        raise RuntimeError("weight should have at least three dimensions")
    stride = _expand_param("stride", stride, k)
    padding = _expand_param("padding", padding, k)
    dilation = _expand_param("dilation", dilation, k)
    output_padding = _expand_param("output_padding", output_padding, k)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    return k, stride, padding, dilation, output_padding


@meta("convolution")
def convolution_meta(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                     groups):
    k, stride, padding, dilation, output_padding = _conv_params(
        input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    ishape, wshape = tuple(input._shape), tuple(weight._shape)
    if len(ishape) != k + 2:
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to "
                           f"conv{k}d, but got input of size: {_sizes(ishape)}"
                           if k <= 3 else
                           f"Expected {k + 2}-dimensional input for {k + 2}-dimensional weight "
                           f"{_sizes(wshape)}, but got {len(ishape)}-dimensional input of size "
                           f"{_sizes(ishape)} instead")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"Input type (torch.{_LEGACY[input.dtype.name]}Tensor) and weight type "
                           f"(torch.{_LEGACY[weight.dtype.name]}Tensor) should be the same or "
                           "input should be a MKLDNN tensor and weight is a dense tensor")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type (torch.{_LEGACY[input.dtype.name]}Tensor) and bias type "
                           f"(torch.{_LEGACY[bias.dtype.name]}Tensor) should be the same")
    n, c = ishape[0], ishape[1]
    spatial = ishape[2:]
    kernel_size = wshape[2:]
    if wshape[0] % groups != 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size "
                           f"[{_sizes(wshape)}] instead")
    if not transposed:
        if c != wshape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_sizes(wshape)}, expected "
                               f"input{_sizes(ishape)} to have {wshape[1] * groups} channels, but "
                               f"got {c} channels instead")
        out_channels = wshape[0]
        padded = [s + 2 * p for s, p in zip(spatial, padding)]
        eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, kernel_size)]
        if any(e > ps for e, ps in zip(eff, padded)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than "
                "actual input size")
        out_spatial = [(ps - e) // s + 1 for ps, e, s in zip(padded, eff, stride)]
    else:
        if c != wshape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_sizes(wshape)}, expected "
                               f"input{_sizes(ishape)} to have {wshape[0]} channels, but got {c} "
                               "channels instead")
        out_channels = wshape[1] * groups
        out_spatial = [(i - 1) * s - 2 * p + d * (kk - 1) + op + 1 for i, s, p, d, kk, op in
                       zip(spatial, stride, padding, dilation, kernel_size, output_padding)]
    if bias is not None and (len(bias._shape) != 1 or bias._shape[0] != out_channels):
        raise RuntimeError(f"Given {'transposed=1, ' if transposed else ''}weight of size "
                           f"{_sizes(wshape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size "
                           f"{_sizes(bias._shape)} instead")
    if transposed:
        _check_output_padding(output_padding, stride, dilation)
    shape = (n, out_channels, *out_spatial)
    stride_out = channels_last_strides(shape) if (
        len(shape) == 4 and (_is_channels_last(input) or _is_channels_last(weight))) else None
    return TensorMeta(shape, input.dtype, stride_out)


def _check_output_padding(output_padding, stride, dilation):
    """The transposed CPU kernels' check (slow_conv_transpose2d/3d), which see a
    1-d convolution as a 2-d one of height 1."""
    if all(op < s or op < d for op, s, d in zip(output_padding, stride, dilation)):
        return
    names = ("depth", "height", "width")[-max(len(stride), 2):]
    values = ([0], [1], [1]) if len(stride) == 1 else ([], [], [])
    parts = []
    for label, extra, given in (("output_padding", values[0], output_padding),
                                ("stride", values[1], stride), ("dilation", values[2], dilation)):
        parts += [f"{label}_{n}: {v}" for n, v in zip(names, extra + list(given))]
    raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                       + " ".join(parts))


def _conv_forward(x, w, stride, padding, dilation, groups, compute):
    """x (N, C, *S), w (O, C/g, *K) -> (N, O, *out) in ``compute``."""
    k = w.ndim - 2
    if any(padding):
        x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, w.shape[2:])]
    axes = tuple(range(2, 2 + k))
    win = sliding_window_view(x, eff, axis=axes)             # (N, C, *out_full, *eff)
    win = win[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)
              + tuple(slice(None, None, d) for d in dilation)]
    n = x.shape[0]
    out_c = w.shape[0]
    cg, og = w.shape[1], out_c // groups
    out_spatial = win.shape[2:2 + k]
    out = np.empty((n, out_c) + tuple(out_spatial), dtype=compute)
    contract_win = [1] + list(range(2 + k, 2 + 2 * k))
    contract_w = list(range(1, 2 + k))
    for g in range(groups):
        wg = win[:, g * cg:(g + 1) * cg]
        res = np.tensordot(wg, w[g * og:(g + 1) * og], axes=(contract_win, contract_w))
        out[:, g * og:(g + 1) * og] = np.moveaxis(res, -1, 1)
    return out


def _conv_transposed(x, w, stride, padding, dilation, output_padding, groups, compute):
    """The adjoint: dilate the input by the stride, pad by d*(k-1)-p, and correlate with
    the spatially flipped kernel whose in/out channels are swapped per group."""
    k = w.ndim - 2
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    kernel_size = w.shape[2:]
    dil_shape = [(s - 1) * st + 1 for s, st in zip(spatial, stride)]
    xd = np.zeros((n, c, *dil_shape), dtype=compute)
    xd[(slice(None), slice(None)) + tuple(slice(None, None, st) for st in stride)] = x
    pads = []
    for kk, d, p, op in zip(kernel_size, dilation, padding, output_padding):
        lo = d * (kk - 1) - p
        pads.append((lo, lo + op))
    # negative padding crops
    crop = tuple(slice(max(-lo, 0), (xd.shape[2 + i] - max(-hi, 0))) for i, (lo, hi) in
                 enumerate(pads))
    xd = xd[(slice(None), slice(None)) + crop]
    xd = np.pad(xd, [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in pads])
    cin_g = c // groups
    og = w.shape[1]
    # (C_in, O/g, *K) -> per group (O/g, C_in/g, *K), flipped
    wf = np.flip(w, axis=tuple(range(2, 2 + k)))
    wt = wf.reshape(groups, cin_g, og, *kernel_size).swapaxes(1, 2).reshape(
        groups * og, cin_g, *kernel_size)
    return _conv_forward(xd, wt, [1] * k, [0] * k, dilation, groups, compute)


@impl("convolution")
def convolution_impl(out, input, weight, bias, stride, padding, dilation, transposed,
                     output_padding, groups):
    if observed():   # ATen's route, op by op: _convolution and its backend (conv_backends.py)
        from ... import are_deterministic_algorithms_enabled     # the context's flags
        result = inner._convolution(input, weight, bias, stride, padding, dilation, transposed,
                                    output_padding, groups, False,
                                    are_deterministic_algorithms_enabled(), True, True)
        np.copyto(out._np(), result._np())
        return
    write_convolution(out, input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups)


def write_convolution(out, input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups, accumulate=False):
    """The convolution's values into ``out`` (every backend's arithmetic);
    ``accumulate`` adds them to what ``out`` holds (a bias copied in first)."""
    if out.numel() == 0 or out.device.type == "meta":
        return
    d = out.dtype
    if d is dt.bool_:
        raise NotImplementedError('"slow_conv2d_cpu" not implemented for \'Bool\'')
    compute = d.opmath
    k = len(weight._shape) - 2
    stride = _expand_param("stride", stride, k)
    padding = _expand_param("padding", padding, k)
    dilation = _expand_param("dilation", dilation, k)
    output_padding = _expand_param("output_padding", output_padding, k)
    x = input._np().astype(compute, copy=False)
    w = weight._np().astype(compute, copy=False)
    if input.numel() == 0 or weight.numel() == 0:
        res = np.zeros(out._shape, dtype=compute)
    elif transposed:
        res = _conv_transposed(x, w, stride, padding, dilation, output_padding, groups, compute)
    else:
        res = _conv_forward(x, w, stride, padding, dilation, groups, compute)
    if bias is not None:
        res += bias._np().astype(compute, copy=False).reshape((-1,) + (1,) * k)
    if accumulate:
        res += out._np()
    np.copyto(out._np(), res, casting="unsafe")


# -- conv1d / conv2d -------------------------------------------------------------------------

def _expand1(value, k) -> list:
    value = _list(value)
    return value * k if len(value) == 1 else value


def _batchify(input, k, name=None):
    batched = len(input._shape) == k + 2
    if not batched and len(input._shape) != k + 1:
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to "
                           f"{name or f'conv{k}d'}, but got input of size: "
                           f"{_sizes(input._shape)}")
    return (input if batched else aten.unsqueeze.default(input, 0)), batched


def _real_and_imag(t):
    """ATen's complex_to_real: the real and imaginary parts as views."""
    pairs = aten.view_as_real.default(aten.resolve_conj.default(t))
    return aten.select.int(pairs, -1, 0), aten.select.int(pairs, -1, 1)


def _convolution(input, weight, bias, *params):
    """aten.convolution, or for complex inputs ATen's complex_convolution (what
    conv1d/2d/3d and conv_transpose1d/2d/3d call): three real convolutions by
    Gauss's trick, a = conv(xr, wr, br), b = conv(xi, wi), c = conv(xr + xi,
    wr + wi, br + bi), then a - b + i (c - a - b)."""
    if not input.dtype.is_complex:
        return aten.convolution.default(input, weight, bias, *params)
    x_r, x_i = _real_and_imag(input)
    w_r, w_i = _real_and_imag(weight)
    b_r, b_i = _real_and_imag(bias) if bias is not None else (None, None)
    a = aten.convolution.default(x_r, w_r, b_r, *params)
    b = aten.convolution.default(x_i, w_i, None, *params)
    c = aten.convolution.default(aten.add.Tensor(x_r, x_i), aten.add.Tensor(w_r, w_i),
                                 None if bias is None else aten.add.Tensor(b_r, b_i), *params)
    imag = aten.sub.Tensor(aten.sub.Tensor(c, a), b)
    return aten.add.Tensor(aten.sub.Tensor(a, b), aten.mul.Tensor(imag, 1j))


def _conv_nd(input, weight, bias, stride, padding, dilation, groups, k):
    input, batched = _batchify(input, k)
    out = _convolution(input, weight, bias, _expand1(stride, k), _expand1(padding, k),
                       _expand1(dilation, k), False, [0] * k, groups)
    return out if batched else aten.squeeze.dim(out, 0)


def _conv_padding_nd(input, weight, bias, stride, padding, dilation, groups, k):
    input, batched = _batchify(input, k)
    stride = _expand1(stride, k)
    dilation = _expand1(dilation, k)
    if padding == "valid":
        pad_l = [0] * k
    elif padding == "same":
        pad_l = [0] * k
        pad_nd = [0] * (2 * k)
        symmetric = True
        for i in range(k):
            s = stride[0] if len(stride) == 1 else stride[i]
            if s != 1:
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            d = dilation[0] if len(dilation) == 1 else dilation[i]
            total = d * (weight._shape[i + 2] - 1)
            pad_l[i] = total // 2
            if total % 2:
                symmetric = False
                pad_nd[2 * (k - 1 - i) + 1] = 1
        if not symmetric:
            warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                          "require a zero-padded copy of the input be created", UserWarning,
                          stacklevel=5)
            input = aten.constant_pad_nd.default(input, pad_nd)
    else:
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    out = _convolution(input, weight, bias, stride, pad_l, dilation, False, [0] * k, groups)
    return out if batched else aten.squeeze.dim(out, 0)


@kernel("conv1d")
def conv1d(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 1)


@kernel("conv2d")
def conv2d(input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 2)


@kernel("conv1d_padding")
def conv1d_padding(input, weight, bias=None, stride=(1,), padding="valid", dilation=(1,),
                   groups=1):
    return _conv_padding_nd(input, weight, bias, stride, padding, dilation, groups, 1)


@kernel("conv2d_padding")
def conv2d_padding(input, weight, bias=None, stride=(1, 1), padding="valid", dilation=(1, 1),
                   groups=1):
    return _conv_padding_nd(input, weight, bias, stride, padding, dilation, groups, 2)


def _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                       k):
    input, batched = _batchify(input, k, f"conv_transpose{k}d")
    out = _convolution(input, weight, bias, _expand1(stride, k), _expand1(padding, k),
                       _expand1(dilation, k), True, _expand1(output_padding, k), groups)
    return out if batched else aten.squeeze.dim(out, 0)


@kernel("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,),
                     groups=1, dilation=(1,)):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 1)


@kernel("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=(1, 1), padding=(0, 0),
                     output_padding=(0, 0), groups=1, dilation=(1, 1)):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 2)


@kernel("conv3d")
def conv3d(input, weight, bias=None, stride=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1),
           groups=1):
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 3)


@kernel("conv3d_padding")
def conv3d_padding(input, weight, bias=None, stride=(1, 1, 1), padding="valid",
                   dilation=(1, 1, 1), groups=1):
    return _conv_padding_nd(input, weight, bias, stride, padding, dilation, groups, 3)


@kernel("conv_transpose3d")
def conv_transpose3d(input, weight, bias=None, stride=(1, 1, 1), padding=(0, 0, 0),
                     output_padding=(0, 0, 0), groups=1, dilation=(1, 1, 1)):
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 3)


# -- pooling -------------------------------------------------------------------------------

def _pool_pair(op, name, value, what, default=None):
    """An int[2] pooling argument: one value for both dims, or two (or, with a
    ``default``, none at all)."""
    v = _list(value) if value is not None else []
    if default is not None and not v:
        return list(default)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise RuntimeError(f"{op}: {name} {what}")
    return v


def pooling_output_shape(size, k, pad, stride, dilation, ceil_mode):
    """ATen's pooling_output_shape (Pool.h), argument checks included."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > ((k - 1) * dilation + 1) // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={k} and dilation={dilation}")
    numerator = size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = numerator // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_params(op, self, kernel_size, stride, padding, dilation, ceil_mode,
                 divisor_override=None):
    """The checks and output size of max_pool2d / avg_pool2d, in ATen's order
    (the meta functions, then pool2d_shape_check)."""
    kh, kw = _pool_pair(op, "kernel_size", kernel_size,
                        "must either be a single int, or a tuple of two ints")
    sh, sw = _pool_pair(op, "stride", stride,
                        "must either be omitted, a single int, or a tuple of two ints",
                        default=(kh, kw))
    ph, pw = _pool_pair(op, "padding", padding,
                        "must either be a single int, or a tuple of two ints")
    dh, dw = _pool_pair(op, "dilation", dilation,
                        "must be either a single int, or a tuple of two ints")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    shape = tuple(self._shape)
    ndim = len(shape)
    channels_last = _is_channels_last(self)
    if op == "max_pool2d" and ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    c, h, w = (shape[wrap_dim(d, ndim)] for d in (-3, -2, -1))
    oh = pooling_output_shape(h, kh, ph, sh, dh, ceil_mode)
    ow = pooling_output_shape(w, kw, pw, sw, dw, ceil_mode)
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} "
                           f"dilationW: {dw}")
    valid_dims = ndim >= 3 and shape[1] != 0 and shape[2] != 0
    if channels_last:
        if not (ndim == 4 and valid_dims and shape[3] != 0):
            raise RuntimeError("Expected 4D (batch mode) tensor expected for input with "
                               "channels_last layout with optional 0 dim batch size for input, "
                               f"but got: {_sizes(shape)}")
    elif not ((ndim == 3 and shape[0] != 0 and valid_dims)
              or (ndim == 4 and valid_dims and shape[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{_sizes(shape)}")
    if kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}")
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")
    return (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow)


def _pool_out_meta(self, oh, ow, dtype):
    shape = tuple(self._shape[:-2]) + (oh, ow)
    stride = channels_last_strides(shape) if _is_channels_last(self) else None
    return TensorMeta(shape, dtype, stride)


def _pool_windows(x, k, s, p, d, out_hw, fill):
    """(..., H, W) -> (..., OH, OW, kh, kw) windows over the input padded with ``fill``
    (and extra on the bottom/right when ceil_mode makes the last window overhang)."""
    h, w = x.shape[-2:]
    need_h = (out_hw[0] - 1) * s[0] + d[0] * (k[0] - 1) + 1
    need_w = (out_hw[1] - 1) * s[1] + d[1] * (k[1] - 1) + 1
    extra_h = max(0, need_h - h - 2 * p[0])
    extra_w = max(0, need_w - w - 2 * p[1])
    if p[0] or p[1] or extra_h or extra_w:
        pad = [(0, 0)] * (x.ndim - 2) + [(p[0], p[0] + extra_h), (p[1], p[1] + extra_w)]
        x = np.pad(x, pad, constant_values=fill)
    eff = (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1)
    win = sliding_window_view(x, eff, axis=(-2, -1))
    return win[..., :out_hw[0] * s[0]:s[0], :out_hw[1] * s[1]:s[1], ::d[0], ::d[1]]


@meta("max_pool2d_with_indices")
def max_pool2d_with_indices_meta(self, kernel_size, stride=(), padding=0, dilation=1,
                                 ceil_mode=False):
    *_, (oh, ow) = _pool_params("max_pool2d", self, kernel_size, stride, padding, dilation,
                                ceil_mode)
    return (_pool_out_meta(self, oh, ow, self.dtype), _pool_out_meta(self, oh, ow, dt.int64))


@impl("max_pool2d_with_indices")
def max_pool2d_with_indices_impl(outs, self, kernel_size, stride=(), padding=0, dilation=1,
                                 ceil_mode=False):
    out, indices = outs
    k, s, p, d, (oh, ow) = _pool_params("max_pool2d", self, kernel_size, stride, padding,
                                        dilation, ceil_mode)
    if self.dtype is dt.bool_:
        raise NotImplementedError('"max_pool2d" not implemented for \'Bool\'')
    compute = self.dtype.opmath
    x = self._np().astype(compute, copy=False)
    fill = -np.inf if compute.kind in "fc" else np.iinfo(compute).min
    win = _pool_windows(x, k, s, p, d, (oh, ow), fill)
    flat = win.reshape(win.shape[:-2] + (k[0] * k[1],))
    arg = np.argmax(flat, axis=-1)
    np.copyto(out._np(), np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0],
              casting="unsafe")
    ki, kj = np.divmod(arg, k[1])
    rows = np.arange(oh)[:, None] * s[0] - p[0] + ki * d[0]
    cols = np.arange(ow)[None, :] * s[1] - p[1] + kj * d[1]
    np.copyto(indices._np(), rows * self._shape[-1] + cols, casting="unsafe")


@kernel("max_pool2d")
def max_pool2d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return aten.max_pool2d_with_indices.default(self, kernel_size, stride, padding, dilation,
                                                ceil_mode)[0]


def _avg_params(self, kernel_size, stride, padding, ceil_mode, divisor_override):
    return _pool_params("avg_pool2d", self, kernel_size, stride, padding, 1, ceil_mode,
                        divisor_override)


@meta("avg_pool2d")
def avg_pool2d_meta(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                    count_include_pad=True, divisor_override=None):
    *_, (oh, ow) = _avg_params(self, kernel_size, stride, padding, ceil_mode, divisor_override)
    return _pool_out_meta(self, oh, ow, self.dtype)


@impl("avg_pool2d")
def avg_pool2d_impl(out, self, kernel_size, stride=(), padding=0, ceil_mode=False,
                    count_include_pad=True, divisor_override=None):
    k, s, p, _, (oh, ow) = _avg_params(self, kernel_size, stride, padding, ceil_mode,
                                       divisor_override)
    if self.dtype is dt.bool_:
        raise NotImplementedError('"avg_pool2d_out_frame" not implemented for \'Bool\'')
    integral = self.dtype.category <= dt.INTEGRAL
    compute = np.dtype(np.float64) if integral else self.dtype.opmath
    x = self._np().astype(compute, copy=False)
    win = _pool_windows(x, k, s, p, (1, 1), (oh, ow), 0)
    total = win.sum(axis=(-2, -1), dtype=compute)
    h, w = self._shape[-2:]
    if divisor_override is not None:
        divisor = compute.type(divisor_override)
    else:
        def spans(n_out, stride_, pad, ksize, size):
            start = np.arange(n_out) * stride_ - pad
            end = np.minimum(start + ksize, size + pad)
            pool = end - start
            valid = np.minimum(end, size) - np.maximum(start, 0)
            return pool, valid
        pool_h, valid_h = spans(oh, s[0], p[0], k[0], h)
        pool_w, valid_w = spans(ow, s[1], p[1], k[1], w)
        if count_include_pad:
            divisor = (pool_h[:, None] * pool_w[None, :]).astype(compute)
        else:
            divisor = (valid_h[:, None] * valid_w[None, :]).astype(compute)
    result = total / divisor
    if integral:
        result = np.trunc(result)
    np.copyto(out._np(), result, casting="unsafe")


@kernel("adaptive_avg_pool2d")
def adaptive_avg_pool2d(self, output_size):
    output_size = _expand1(output_size, 2)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if output_size[0] < 0 or output_size[1] < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{output_size[0]}, {output_size[1]}}}")
    if output_size == [1, 1]:
        if self.dtype.category <= dt.INTEGRAL:
            raise NotImplementedError(
                f'"adaptive_avg_pool2d" not implemented for \'{self.dtype._short}\'')
        return aten.mean.dim(self, [-1, -2], True)
    return aten._adaptive_avg_pool2d.default(self, output_size)


@meta("_adaptive_avg_pool2d")
def adaptive_avg_pool2d_meta(self, output_size):
    output_size = _expand1(output_size, 2)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    ndim = len(self._shape)
    if ndim not in (3, 4) or any(n == 0 for n in self._shape[-2:]):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{_sizes(self._shape)}")
    if self.dtype.category <= dt.INTEGRAL:
        raise NotImplementedError(
            f'"adaptive_avg_pool2d" not implemented for \'{self.dtype._short}\'')
    return _pool_out_meta(self, output_size[0], output_size[1], self.dtype)


def _adaptive_ranges(size_in, size_out):
    return [((o * size_in) // size_out, -((-(o + 1) * size_in) // size_out))
            for o in range(size_out)]


@impl("_adaptive_avg_pool2d")
def adaptive_avg_pool2d_impl(out, self, output_size):
    oh, ow = _expand1(output_size, 2)
    if out.numel() == 0:
        return
    compute = self.dtype.opmath
    x = self._np().astype(compute, copy=False)
    h, w = x.shape[-2:]
    rows = np.stack([x[..., a:b, :].mean(axis=-2, dtype=compute)
                     for a, b in _adaptive_ranges(h, oh)], axis=-2)       # (..., OH, W)
    res = np.stack([rows[..., a:b].mean(axis=-1, dtype=compute)
                    for a, b in _adaptive_ranges(w, ow)], axis=-1)        # (..., OH, OW)
    np.copyto(out._np(), res, casting="unsafe")



# -- 1-d pooling (CompositeImplicitAutograd: a 2-d pool over an (…, 1, L) view) --------

def _check_dim_range(name, self, low, high):
    ndim = len(self._shape)
    if not low <= ndim < high:
        raise RuntimeError(f"Expected {low} to {high - 1} dimensions, but got {ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {name})")


def _check_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode):
    """ATen's check_max_pool1d (MaxPooling.h), after max_pool1d's own shape check."""
    shape = tuple(self._shape)
    if not ((len(shape) == 2 and shape[0] != 0 and shape[1] != 0)
            or (len(shape) == 3 and shape[1] != 0 and shape[2] != 0)):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{_sizes(shape)}")
    for name, value, allowed, what in (
            ("kernel_size", kernel_size, (1,), "an int, list of ints or tuple of ints"),
            ("stride", stride, (0, 1), "None, an int, list of ints, or tuple of ints"),
            ("padding", padding, (1,), "an int, list of ints, or tuple of ints"),
            ("dilation", dilation, (1,), "an int, list of ints or tuple of ints")):
        if len(_list(value)) not in allowed:
            raise RuntimeError(f"max_pool1d() {name} must be {what} of size 1 but got size "
                               f"{len(_list(value))}")
    (k,), (p,), (d,) = _list(kernel_size), _list(padding), _list(dilation)
    s = _list(stride)[0] if _list(stride) else k
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = pooling_output_shape(shape[-1], k, p, s, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def _as_2d_args(kernel_size, stride, padding, dilation=None):
    """1-d pooling arguments as the 2-d ones of a height-1 window (stride
    defaults to the kernel size)."""
    k = _list(kernel_size)
    s = _list(stride) or k
    args = [[1] + k, [1] + s, [0] + _list(padding)]
    return args + [[1] + _list(dilation)] if dilation is not None else args


@kernel("max_pool1d_with_indices")
def max_pool1d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,),
                            ceil_mode=False):
    _check_dim_range("max_pool1d", self, 2, 4)
    out, indices = aten.max_pool2d_with_indices.default(
        aten.unsqueeze.default(self, -2), *_as_2d_args(kernel_size, stride, padding, dilation),
        ceil_mode)
    return aten.squeeze.dim(out, -2), aten.squeeze.dim(indices, -2)


@kernel("max_pool1d")
def max_pool1d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """On CPU without autograd PyTorch runs its own loop (max_pool1d_impl, floating
    types only); the values are those of max_pool1d_with_indices, which it
    takes otherwise."""
    _check_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode)
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"max_pool1d_impl" not implemented for '
                                  f"'{self.dtype._short}'")
    return aten.max_pool1d_with_indices.default(self, kernel_size, stride, padding, dilation,
                                                ceil_mode)[0]


@kernel("avg_pool1d")
def avg_pool1d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False,
               count_include_pad=True):
    _check_dim_range("avg_pool1d", self, 2, 4)
    out = aten.avg_pool2d.default(aten.unsqueeze.default(self, -2),
                                  *_as_2d_args(kernel_size, stride, padding), ceil_mode,
                                  count_include_pad)
    return aten.squeeze.dim(out, -2)


@kernel("adaptive_avg_pool1d")
def adaptive_avg_pool1d(self, output_size):
    _check_dim_range("adaptive_avg_pool1d", self, 2, 4)
    out = aten.adaptive_avg_pool2d.default(aten.unsqueeze.default(self, -2),
                                           [1] + _list(output_size))
    return aten.squeeze.dim(out, -2)


@kernel("adaptive_max_pool1d")
def adaptive_max_pool1d(self, output_size):
    _check_dim_range("adaptive_max_pool1d", self, 2, 4)
    out, indices = aten.adaptive_max_pool2d.default(aten.unsqueeze.default(self, -2),
                                                    [1] + _list(output_size))
    return aten.squeeze.dim(out, -2), aten.squeeze.dim(indices, -2)


# -- adaptive max pooling --------------------------------------------------------------

def _adaptive_max_params(self, output_size):
    output_size = _expand1(output_size, 2)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    ndim = len(self._shape)
    if ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{_sizes(self._shape)}")
    for d in range(1, ndim):
        if self._shape[d] == 0:
            raise RuntimeError(f"adaptive_max_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes "
                               f"{_sizes(self._shape)} with dimension {d} being empty")
    shape = tuple(self._shape[:-2]) + tuple(output_size)
    if any(n < 0 for n in shape):
        negative = next(n for n in shape if n < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: "
                           f"{_sizes(shape)}")
    return output_size


@meta("adaptive_max_pool2d")
def adaptive_max_pool2d_meta(self, output_size):
    oh, ow = _adaptive_max_params(self, output_size)
    return _pool_out_meta(self, oh, ow, self.dtype), _pool_out_meta(self, oh, ow, dt.int64)


@impl("adaptive_max_pool2d")
def adaptive_max_pool2d_impl(outs, self, output_size):
    """Each output cell takes the max (first one, or the first NaN) of its
    adaptive window and the window position's flat index h * W + w."""
    out, indices = outs
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"adaptive_max_pool2d" not implemented for '
                                  f"'{self.dtype._short}'")
    oh, ow = _expand1(output_size, 2)
    if out.numel() == 0:
        return
    x = self._np()
    h, w = x.shape[-2:]
    values, flat = out._np(), indices._np()
    for i, (h0, h1) in enumerate(_adaptive_ranges(h, oh)):
        for j, (w0, w1) in enumerate(_adaptive_ranges(w, ow)):
            window = x[..., h0:h1, w0:w1].reshape(x.shape[:-2] + (-1,))
            arg = np.argmax(window, axis=-1)
            values[..., i, j] = np.take_along_axis(window, arg[..., None], axis=-1)[..., 0]
            rows, cols = np.divmod(arg, w1 - w0)
            flat[..., i, j] = (rows + h0) * w + cols + w0


@meta("adaptive_max_pool2d_backward")
def adaptive_max_pool2d_backward_meta(grad_output, self, indices):
    ndim = len(self._shape)
    if ndim not in (3, 4) or len(grad_output._shape) != ndim:
        raise RuntimeError(f"adaptive_max_pooling2d_backward(): Expected 3D or 4D grad_output, "
                           f"but got: {_sizes(grad_output._shape)}")
    if grad_output.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {self.dtype._short} for `gradInput` but got dtype "
                           f"{grad_output.dtype._short}")
    strides = channels_last_strides(self._shape) if _is_channels_last(self) else None
    return TensorMeta(self._shape, self.dtype, strides)


def scatter_to_argmax(out, grad_output, self, indices):
    """Each plane's gradient added at its flat argmax positions (windows may
    share an input element: those add up).  The backward of max pooling."""
    h, w = self._shape[-2:]
    planes = math.prod(self._shape[:-2])
    window = math.prod(grad_output._shape[-2:])     # (not -1: there may be no planes)
    g = grad_output._np().astype(out.dtype.opmath, copy=False).reshape(planes, window)
    idx = indices._np().astype(np.int64).reshape(planes, window)
    flat = (np.arange(planes)[:, None] * (h * w) + idx).ravel()
    total = np.bincount(flat, weights=g.ravel(), minlength=planes * h * w)
    np.copyto(out._np(), total.reshape(self._shape), casting="unsafe")


impl("adaptive_max_pool2d_backward")(scatter_to_argmax)


# -- padding ------------------------------------------------------------------------------

@meta("constant_pad_nd")
def constant_pad_nd_meta(self, pad, value=0):
    pad = _list(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    ndim = len(self._shape)
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)} while the input has {ndim} "
                           "dimensions.")
    shape = list(self._shape)
    for i in range(len(pad) // 2):
        dim = ndim - 1 - i
        new = shape[dim] + pad[2 * i] + pad[2 * i + 1]
        if new < 0:
            raise RuntimeError(f"The input size {shape[dim]}, plus negative padding "
                               f"{pad[2 * i]} and {pad[2 * i + 1]} resulted in a negative output "
                               f"size, which is invalid. Check dimension {dim} of your input.")
        shape[dim] = new
    shape = tuple(shape)
    stride = channels_last_strides(shape) if _is_channels_last(self) else None
    return TensorMeta(shape, self.dtype, stride)


@impl("constant_pad_nd")
def constant_pad_nd_impl(out, self, pad, value=0):
    pad = _list(pad)
    o = out._np()
    if o.size == 0:
        return
    ndim = len(self._shape)
    src = [slice(None)] * ndim
    dst = [slice(None)] * ndim
    for i in range(len(pad) // 2):
        dim = ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = self._shape[dim]
        src[dim] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[dim] = slice(max(lo, 0), max(lo, 0) + max(n - max(-lo, 0) - max(-hi, 0), 0))
    o[...] = value
    np.copyto(o[tuple(dst)], self._np()[tuple(src)], casting="unsafe")


# -- backward ops of convolution and pooling (what their gradient formulas call) -----------

def _like_memory_format(t):
    """Strides of a fresh tensor shaped like ``t`` in ``t``'s suggested memory
    format (channels_last for a channels_last 4-d tensor, else contiguous)."""
    return channels_last_strides(t._shape) if _is_channels_last(t) else None


# -- pooling ----------------------------------------------------------------------------

def _pool_grad_checks(name, grad_output, self, out_hw):
    if grad_output.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {dt.type_meta_name(self.dtype)} for `gradOutput` but got "
                           f"dtype {dt.type_meta_name(grad_output.dtype)}")
    expected = tuple(self._shape[:-2]) + tuple(out_hw)
    if tuple(grad_output._shape) != expected:
        raise RuntimeError(f"{name}: expected grad_output of shape {_sizes(expected)}, but got "
                           f"{_sizes(grad_output._shape)}")


@meta("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward_meta(grad_output, self, kernel_size, stride, padding,
                                          dilation, ceil_mode, indices):
    *_, out_hw = _pool_params("max_pool2d", self, kernel_size, stride, padding, dilation,
                              ceil_mode)
    _pool_grad_checks("max_pool2d_with_indices_backward", grad_output, self, out_hw)
    if tuple(indices._shape) != tuple(grad_output._shape):
        raise RuntimeError(f"max_pool2d_with_indices_backward: indices of shape "
                           f"{_sizes(indices._shape)} don't match grad_output of shape "
                           f"{_sizes(grad_output._shape)}")
    return TensorMeta(self._shape, self.dtype, _like_memory_format(self))


@impl("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward_impl(out, grad_output, self, kernel_size, stride, padding,
                                          dilation, ceil_mode, indices):
    """Each plane's gradient is added at its argmax positions (overlapping
    windows may pick the same input element: those add up); ATen's kernel
    clears the gradient first (``zero_``)."""
    inner.zero_(out)
    scatter_to_argmax(out, grad_output, self, indices)


@meta("avg_pool2d_backward")
def avg_pool2d_backward_meta(grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    *_, out_hw = _pool_params("avg_pool2d", self, kernel_size, stride, padding, 1, ceil_mode)
    _pool_grad_checks("avg_pool2d_backward", grad_output, self, out_hw)
    return TensorMeta(self._shape, self.dtype, _like_memory_format(self))


def _window_spans(n_out, stride, pad, k, size):
    """Per output position: the window's length counting padding, and the
    number of its elements inside the input (avg_pool2d's divisors)."""
    start = np.arange(n_out) * stride - pad
    end = np.minimum(start + k, size + pad)
    return end - start, np.minimum(end, size) - np.maximum(start, 0)


@impl("avg_pool2d_backward")
def avg_pool2d_backward_impl(out, grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    """Spread g / divisor over every window: for each kernel offset (i, j), one
    strided slice of a padded buffer gets the whole output grid at once; the
    padding is cropped off at the end.  ATen's kernel clears the gradient
    first (``zero_``)."""
    inner.zero_(out)
    (kh, kw), (sh, sw), (ph, pw), _, (oh, ow) = _pool_params(
        "avg_pool2d", self, kernel_size, stride, padding, 1, ceil_mode)
    compute = out.dtype.opmath
    h, w = self._shape[-2:]
    if divisor_override is not None:
        divisor = compute.type(divisor_override)
    else:
        pool_h, valid_h = _window_spans(oh, sh, ph, kh, h)
        pool_w, valid_w = _window_spans(ow, sw, pw, kw, w)
        divisor = (np.outer(pool_h, pool_w) if count_include_pad
                   else np.outer(valid_h, valid_w)).astype(compute)
    g = _array(grad_output, compute) / divisor
    full_h = max(h + 2 * ph, (oh - 1) * sh + kh)
    full_w = max(w + 2 * pw, (ow - 1) * sw + kw)
    buf = np.zeros(tuple(self._shape[:-2]) + (full_h, full_w), dtype=compute)
    for i in range(kh):
        for j in range(kw):
            buf[..., i:i + sh * oh:sh, j:j + sw * ow:sw] += g
    _write(out, buf[..., ph:ph + h, pw:pw + w])


@meta("_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward_meta(grad_output, self):
    ndim = len(self._shape)
    if ndim not in (3, 4) or len(grad_output._shape) != ndim:
        raise RuntimeError(f"adaptive_avg_pool2d_backward(): Expected 3D or 4D grad_output, but "
                           f"got {_sizes(grad_output._shape)}")
    if grad_output.dtype is not self.dtype:
        raise RuntimeError(f"adaptive_avg_pool2d_backward_out_cpu_template: Expected dtype "
                           f"{dt.type_meta_name(self.dtype)} for `grad_output` but got dtype "
                           f"{dt.type_meta_name(grad_output.dtype)}")
    return TensorMeta(self._shape, self.dtype, _like_memory_format(self))


def _adaptive_matrix(size_in, size_out, compute):
    """(size_out, size_in): row o averages input positions [start(o), end(o))."""
    m = np.zeros((size_out, size_in), dtype=compute)
    for o, (a, b) in enumerate(_adaptive_ranges(size_in, size_out)):
        m[o, a:b] = compute.type(1) / (b - a)
    return m


@impl("_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward_impl(out, grad_output, self):
    """Adaptive average pooling is separable, out = A_h @ x @ A_w^T, so the
    gradient is A_h^T @ g @ A_w."""
    compute = out.dtype.opmath
    h, w = self._shape[-2:]
    oh, ow = grad_output._shape[-2:]
    a_h, a_w = _adaptive_matrix(h, oh, compute), _adaptive_matrix(w, ow, compute)
    _write(out, np.matmul(np.matmul(a_h.T, _array(grad_output, compute)), a_w))


# -- convolution ------------------------------------------------------------------------
