"""Which kernel a convolution runs: ATen's ``_convolution`` and its CPU backend ops
(Convolution.cpp, mkldnn/Conv.cpp, ConvolutionMM2d.cpp).

    convolution -> _convolution -> mkldnn_convolution              (oneDNN)
                                -> thnn_conv2d -> _slow_conv2d_forward  (im2col + gemm)

``convolution`` is ``_convolution`` with the context's cuDNN flags.
``_convolution`` sees a 1-d convolution as a 2-d one of height 1 (``unsqueeze``
before, ``squeeze`` after), picks a backend from dtype, device and sizes
(``select_backend``), makes the operands contiguous in the backend's memory
format, and calls the backend's op, once per group where the backend has no
groups of its own (then ``cat``).  The profiler shows that whole sequence under
``aten::convolution``; glasstorch's ``convolution`` kernel takes this route
while observed (kernels/_inner.py) and computes directly otherwise.  Every
backend computes with the same numpy code (conv.py's ``write_convolution``).

The backends' own allocations are ATen's too: oneDNN writes into a buffer of
its own that ``mkldnn_to_dense`` copies into a new tensor (``empty``,
``as_strided_``, ``resize_``), after an ``empty({0})`` output it then drops;
channels-last operands share their memory with oneDNN instead (``resize_`` of
that first output).  ``_slow_conv2d_forward`` views the weight as a matrix,
makes its im2col buffer (a view of the input for a 1x1 kernel), and starts from
a copy of the bias.

Backends glasstorch does not spell out op by op (dilated, transposed or 3-d
slow kernels; ``_convolution`` computes those itself) and NNPACK, which wants
float32 batches of 16 or more, where oneDNN always comes first, are noted
where chosen.
"""
from __future__ import annotations

import math
import os

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..._core import dtype as dt
from ..._core.layout import channels_last, contiguous_format
from ..._dispatcher.dispatcher import ops
from ..._tensor import channels_last_strides, contiguous_strides
from ..structured import empty_tensor, TensorMeta
from . import kernel
from ._common import _allocate_masked, _array, _check_same_dtype, _write
from ._inner import inner, inner_op, observed
from .conv import (_conv_forward, _conv_transposed, _expand_param, _is_channels_last, _LEGACY,
                   convolution_meta, write_convolution)
from .native import _cpu_id, get_num_threads

aten = ops.aten

# oneDNN's ISAs, in order (ONEDNN_MAX_CPU_ISA caps the one it uses)
_ONEDNN_ISAS = ["SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE",
                "AVX512_CORE_VNNI", "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX",
                "AVX512_CORE_AMX_FP16"]


def _onednn_bf16() -> bool:
    """mkldnn_bf16_device_check: oneDNN computes bfloat16 from AVX512_CORE on
    (avx512bw, vl, dq), unless ONEDNN_MAX_CPU_ISA caps it below."""
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    if cap in _ONEDNN_ISAS and _ONEDNN_ISAS.index(cap) < _ONEDNN_ISAS.index("AVX512_CORE"):
        return False
    return {"avx512bw", "avx512vl", "avx512dq"} <= set(_cpu_id().split())


def _onednn_fp16() -> bool:
    """mkldnn_fp16_device_check: float16 needs AVX512_CORE_FP16 (avx512_fp16) or AMX."""
    return "avx512_fp16" in _cpu_id().split() and \
        os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper() in ("ALL", "DEFAULT") + tuple(
            _ONEDNN_ISAS[_ONEDNN_ISAS.index("AVX512_CORE_FP16"):])


def _use_mkldnn(input, weight, stride, dilation, transposed, output_padding, groups) -> bool:
    """ConvParams::use_mkldnn: float32 work that is big enough for oneDNN to pay off
    (ATen's heuristic: groups, a kernel over 3x3, a batch, or 20480+ elements)."""
    if input.device.type != "cpu":
        return False
    if transposed and any(op >= s for op, s in zip(output_padding, stride)):
        return False
    if input.dtype is dt.bfloat16 and _onednn_bf16() or \
            input.dtype is dt.float16 and _onednn_fp16():
        return True
    if input.dtype is not dt.float32:
        return False
    n, c, h, w = input._shape[:4]
    kh, kw = weight._shape[-2:]
    return ((any(s != 1 for s in stride) or any(d != 1 for d in dilation) or n >= 16
             or kw != 1 or kh != 1 or get_num_threads() > 1)
            and (groups > 1 or (kw > 3 and kh > 3) or n > 1 or n * c * h * w > 20480))


def select_backend(input, weight, stride, dilation, transposed, output_padding, groups) -> str:
    """_select_conv_backend for CPU tensors: "empty", "mkldnn", "mkldnn_transpose",
    "slow2d", or "direct" (a slow kernel glasstorch computes without its op)."""
    if input._shape[0] == 0 or input._shape[1] == 0:
        return "empty"
    if _use_mkldnn(input, weight, stride, dilation, transposed, output_padding, groups):
        return "mkldnn_transpose" if transposed else "mkldnn"
    if transposed or len(input._shape) == 5 or any(d != 1 for d in dilation):
        return "direct"     # slow_conv_transpose2d/3d, slow_conv3d, slow_conv_dilated2d/3d
    inner._nnpack_available()   # use_nnpack: false whenever oneDNN declined float32
    return "slow2d"


def _memory_format(input, weight, backend):
    """determine_backend_memory_format: channels-last 4-d operands stay channels
    last in oneDNN and the slow 2-d kernel."""
    if backend in ("mkldnn", "mkldnn_transpose", "slow2d") and len(input._shape) == 4 and (
            _is_channels_last(input) or _is_channels_last(weight)):
        return channels_last
    return None


def _contiguous(t, memory_format=contiguous_format):
    """Tensor::contiguous: no op (and no event) for a tensor already laid out so."""
    if t is None or t.is_contiguous(memory_format=memory_format):
        return t
    return inner.contiguous(t, memory_format=memory_format)


def _onednn_amx_bf16() -> bool:
    """oneDNN runs bfloat16 convolutions on AMX tiles (amx_bf16, unless
    ONEDNN_MAX_CPU_ISA caps it below AVX512_CORE_AMX); it then writes its
    result channels-last."""
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    if cap in _ONEDNN_ISAS and _ONEDNN_ISAS.index(cap) < _ONEDNN_ISAS.index("AVX512_CORE_AMX"):
        return False
    return "amx_bf16" in _cpu_id().split()


def mkldnn_dense_output(shape, like, *, dropped_first=True, onednn_layout=False):
    """The tensor a oneDNN result lands in, made as ATen makes it: ``empty({0})``
    (the output oneDNN would have shared, dropped when it did not) then
    mkldnn_to_dense: ``empty``, ``as_strided_`` to oneDNN's strides, ``resize_``.
    ``onednn_layout``: a forward convolution's result, which oneDNN writes
    channels-last for 4-d bfloat16 on AMX; ATen then makes it ``contiguous``."""
    if observed():
        if dropped_first:
            inner.empty([0], dtype=like.dtype, device=like.device)
        out = inner.empty(list(shape), dtype=like.dtype, device=like.device)
        blocked = (onednn_layout and len(shape) == 4 and like.dtype is dt.bfloat16
                   and _onednn_amx_bf16())
        strides = channels_last_strides(tuple(shape)) if blocked else \
            contiguous_strides(tuple(shape))
        aten.as_strided_.default(out, list(shape), list(strides))
        if blocked:
            out = inner.contiguous(out)
        return inner.resize_(out, list(shape))
    return inner.empty(list(shape), dtype=like.dtype, device=like.device)


def _params(weight, stride, padding, dilation, output_padding):
    """ConvParams: each parameter expanded to the spatial dims, a 1-d convolution's
    as a 2-d one's of height 1 (view1d_as_2d); and whether it was 1-d."""
    k = len(weight._shape) - 2
    params = [_expand_param(name, value, k) for name, value in
              (("stride", stride), ("padding", padding), ("dilation", dilation),
               ("output_padding", output_padding))]
    if k == 1:
        params = [[first] + rest for first, rest in zip((1, 0, 1, 0), params)]
    return k == 1, params


@kernel("_convolution")
@inner_op("aten::_convolution")
def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups, benchmark, deterministic, cudnn_enabled, allow_tf32):
    """ATen's _convolution: checks, 1-d as 2-d, the backend's op (see the module doc)."""
    result = convolution_meta(input, weight, bias, stride, padding, dilation, transposed,
                              output_padding, groups)
    one_d, (stride, padding, dilation, output_padding) = _params(
        weight, stride, padding, dilation, output_padding)
    if one_d:
        input = inner.unsqueeze(_contiguous(input), 2)
        weight = inner.unsqueeze(weight, 2)
    backend = select_backend(input, weight, stride, dilation, transposed, output_padding, groups)
    fmt = _memory_format(input, weight, backend) or contiguous_format
    if backend == "empty":
        output = _empty_backend(input, weight, bias, result.shape if not one_d else
                                result.shape[:2] + (1,) + result.shape[2:])
    elif backend in ("mkldnn", "mkldnn_transpose"):
        input, weight, bias = _contiguous(input, fmt), _contiguous(weight, fmt), _contiguous(bias)
        if backend == "mkldnn":
            output = inner.mkldnn_convolution(input, weight, bias, padding, stride, dilation,
                                              groups)
        else:   # mkldnn_convolution_transpose: a stub, not an op
            output = mkldnn_dense_output(_output_shape(result.shape, one_d), input)
            write_convolution(output, input, weight, bias, stride, padding, dilation, True,
                              output_padding, groups)
    elif backend == "slow2d":
        input, weight = _contiguous(input, fmt), _contiguous(weight, fmt)
        kernel_size = list(weight._shape[2:])
        if groups == 1:
            output = inner.thnn_conv2d(input, weight, kernel_size, bias, stride, padding)
        else:
            outputs = [inner.thnn_conv2d(_group(input, 1, groups, g), _group(weight, 0, groups, g),
                                         kernel_size, _group(bias, 0, groups, g), stride, padding)
                       for g in range(groups)]
            output = aten.cat.default(outputs, 1)
    else:
        output = empty_tensor(_output_shape(result.shape, one_d), input.dtype, input.device)
        write_convolution(output, input, weight, bias, stride, padding, dilation, transposed,
                          output_padding, groups)
    return inner.squeeze(output, 2) if one_d else output


def _output_shape(shape, one_d):
    return tuple(shape[:2]) + (1,) + tuple(shape[2:]) if one_d else tuple(shape)


def _group(t, dim, groups, g):
    """subtensor: group ``g``'s slice of ``t`` along ``dim``, made contiguous."""
    if t is None:
        return None
    n = t._shape[dim] // groups
    fmt = channels_last if _is_channels_last(t) else None
    return _contiguous(inner.narrow(t, dim, n * g, n), fmt)


def _empty_backend(input, weight, bias, shape):
    """ConvBackend::Empty (no batch or no channels): the product of the (empty)
    input with a weight element, shaped as the output."""
    weight_view = aten._unsafe_view.default(weight, [-1])
    if input._shape[1] == 0:
        output = aten.mul.Tensor(aten.view.default(input, [-1]), weight_view)
    else:
        output = aten.mul.Tensor(input, inner.select(weight_view, 0, 0))
    if bias is not None:
        aten.add_.Tensor(output, inner.select(bias, 0, 0))
    return aten.view.default(output, list(shape))


def _conv_output_size(input, weight, padding, stride, dilation):
    return [input._shape[0], weight._shape[0]] + [
        (n + 2 * p - d * (kk - 1) - 1) // s + 1 for n, kk, p, s, d in
        zip(input._shape[2:], weight._shape[2:], padding, stride, dilation)]


@kernel("mkldnn_convolution")
@inner_op("aten::mkldnn_convolution")
def mkldnn_convolution(self, weight, bias, padding, stride, dilation, groups):
    """oneDNN's convolution (ATen's CPU backend for float32 and bfloat16)."""
    if self.dtype not in (dt.float32, dt.bfloat16, dt.float16):
        raise RuntimeError("itensor_view_from_dense expects float/bfloat16/half/int8/fp8 tensor "
                           f"input{_LEGACY[self.dtype.name]}")
    k = len(self._shape) - 2
    padding, stride, dilation = (_expand_param(name, value, k) for name, value in
                                 (("padding", padding), ("stride", stride),
                                  ("dilation", dilation)))
    convolution_meta(self, weight, bias, stride, padding, dilation, False, [0] * k, groups)
    shape = _conv_output_size(self, weight, padding, stride, dilation)
    if len(shape) == 4 and (_is_channels_last(self) or _is_channels_last(weight)):
        output = inner.empty([0], dtype=self.dtype, device=self.device)
        inner.resize_(output, shape, memory_format=channels_last)
        self, weight = _contiguous(self, channels_last), _contiguous(weight, channels_last)
    else:
        output = mkldnn_dense_output(shape, self, onednn_layout=True)
    write_convolution(output, self, weight, bias, stride, padding, dilation, False, [0] * k,
                      groups)
    return output


@kernel("_nnpack_available")
@inner_op("aten::_nnpack_available")
def _nnpack_available():
    """PyTorch's x86 builds include NNPACK."""
    return True


@kernel("thnn_conv2d")
@inner_op("aten::thnn_conv2d")
def thnn_conv2d(self, weight, kernel_size, bias=None, stride=(1, 1), padding=(0, 0)):
    """CompositeImplicitAutograd: its autograd is _slow_conv2d_forward's."""
    return aten._slow_conv2d_forward.default(self, weight, kernel_size, bias, stride, padding)


@kernel("_slow_conv2d_forward")
@inner_op("aten::_slow_conv2d_forward")
def _slow_conv2d_forward(self, weight, kernel_size, bias, stride, padding):
    """ATen's im2col + gemm kernel (groups of one; _convolution splits the others)."""
    stride, padding = _expand_param("stride", stride, 2), _expand_param("padding", padding, 2)
    kernel_size = _expand_param("kernel_size", kernel_size, 2)
    convolution_meta(self, weight, bias, stride, padding, [1, 1], False, [0, 0], 1)
    output = inner.empty([0], dtype=self.dtype, device=self.device)
    shape = _conv_output_size(self, weight, padding, stride, [1, 1])
    if observed():  # the weight as a matrix and the im2col buffer (numpy needs neither)
        inner.view(weight, [weight._shape[0], -1])
        _im2col_buffer(self, kernel_size, stride, padding, shape[2:])
    inner.resize_(output, shape)
    if bias is not None:
        inner.copy_(output, inner.reshape(bias, [-1, 1, 1]))
    write_convolution(output, self, weight, None, stride, padding, [1, 1], False, [0, 0], 1,
                      accumulate=bias is not None)
    return output


def convolution_backward_route(grad_output, input, weight, bias_sizes, stride, padding,
                               dilation, transposed, output_padding, groups, output_mask,
                               compute):
    """convolution_backward as ATen runs it, op by op: 1-d as 2-d, the backend's
    choice, contiguous operands, then oneDNN's backward (the gradients allocated as
    it allocates them: grad_input after an ``empty({0})``, each one copied out of
    oneDNN's buffer; ``compute(outs, grad_output, input, weight, stride, padding,
    dilation, output_padding)`` fills them) or ``_slow_conv2d_backward`` per group.
    None for the slow kernels not spelled out op by op (the caller computes)."""
    one_d, (stride, padding, dilation, output_padding) = _params(
        weight, stride, padding, dilation, output_padding)
    if one_d:
        input = _contiguous(input)
        grad_output, input, weight = (inner.unsqueeze(t, 2) for t in (grad_output, input, weight))
    backend = select_backend(input, weight, stride, dilation, transposed, output_padding, groups)
    if backend == "slow2d":
        outs = _slow2d_backward(grad_output, input, weight, stride, padding, groups, output_mask)
    elif backend in ("mkldnn", "mkldnn_transpose"):
        outs = _mkldnn_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                                output_padding, output_mask, backend, compute)
    else:
        return None
    if one_d:
        outs[:2] = [inner.squeeze(t, 2) if t is not None else None for t in outs[:2]]
    return tuple(outs)


def _slow2d_backward(grad_output, input, weight, stride, padding, groups, output_mask):
    """The slow kernel's backward, once per group (narrowed operands) and joined."""
    fmt = _memory_format(input, weight, "slow2d") or contiguous_format
    input, weight = _contiguous(input, fmt), _contiguous(weight, fmt)
    kernel_size = list(weight._shape[2:])
    if groups == 1:
        return list(inner._slow_conv2d_backward(grad_output, input, weight, kernel_size, stride,
                                                padding, output_mask))
    per_group = [inner._slow_conv2d_backward(
        _group(grad_output, 1, groups, g), _group(input, 1, groups, g),
        _group(weight, 0, groups, g), kernel_size, stride, padding, output_mask)
        for g in range(groups)]
    return [aten.cat.default([grads[i] for grads in per_group], 1 if i == 0 else 0)
            if output_mask[i] else None for i in range(3)]


def _mkldnn_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                     output_padding, output_mask, backend, compute):
    """oneDNN's backward: each gradient made as its forward makes the output."""
    fmt = _memory_format(input, weight, backend)
    input, weight, grad_output = (_contiguous(t, fmt or contiguous_format)
                                  for t in (input, weight, grad_output))
    shapes = (input._shape, weight._shape,
              tuple(bias_sizes) if bias_sizes is not None else (grad_output._shape[1],))
    outs = [None] * 3
    if output_mask[0]:
        if fmt is channels_last:    # oneDNN writes into it in place
            outs[0] = inner.resize_(inner.empty([0], dtype=grad_output.dtype,
                                                device=grad_output.device),
                                    list(shapes[0]), memory_format=channels_last)
        else:
            outs[0] = mkldnn_dense_output(shapes[0], grad_output)
    for i in (1, 2):
        if output_mask[i]:
            outs[i] = mkldnn_dense_output(shapes[i], grad_output, dropped_first=False)
    compute(outs, grad_output, input, weight, stride, padding, dilation, output_padding)
    if fmt is channels_last and outs[1] is not None:     # oneDNN's plain weight layout
        outs[1] = outs[1].to(memory_format=channels_last)
    return outs


@kernel("_slow_conv2d_backward")
@inner_op("aten::_slow_conv2d_backward.output_mask")
def _slow_conv2d_backward(grad_output, self, weight, kernel_size, stride, padding, output_mask):
    """The im2col kernel's gradients: each starts as ``empty({0})``, is resized
    and zeroed; grad_bias is a ``sum`` over batch and space; grad_weight goes
    through the im2col buffer again (a view of the input for a 1x1 kernel)."""
    stride, padding = _expand_param("stride", stride, 2), _expand_param("padding", padding, 2)
    kernel_size = _expand_param("kernel_size", kernel_size, 2)
    grad_input, grad_weight, grad_bias = (
        inner.empty([0], dtype=grad_output.dtype, device=grad_output.device) if want else None
        for want in output_mask)
    if grad_input is not None:
        if observed():
            inner.view(weight, [weight._shape[0], -1])
            _contiguous(grad_output)     # each of ATen's two passes makes its own copy
        aten.resize_as_.default(grad_input, self)
        inner.zero_(grad_input)
    if grad_bias is not None:
        aten.sum.IntList_out(grad_output, [0, 2, 3], out=grad_bias)
    if grad_weight is not None:
        inner.resize_(grad_weight, list(weight._shape))
        inner.zero_(grad_weight)
        if observed():
            inner.view(grad_weight, [weight._shape[0], -1])
            _im2col_buffer(_contiguous(self), kernel_size, stride, padding,
                           _contiguous(grad_output)._shape[2:])
    if self.device.type != "meta":
        _convolution_backward_cpu([grad_input, grad_weight, None], grad_output, self, weight,
                                  stride, padding, [1, 1], False, [0, 0], 1)
    return grad_input, grad_weight, grad_bias


def _im2col_buffer(input, kernel_size, stride, padding, out_spatial):
    """The columns the im2col kernel multiplies (numpy needs none): a view of the
    input for a 1x1 kernel with stride 1 and no padding, else a new buffer."""
    n, c = input._shape[:2]
    columns = math.prod(out_spatial)
    if kernel_size == [1, 1] and stride == [1, 1] and padding == [0, 0]:
        aten.detach.default(inner.view(input, [n, c, columns]))
    else:
        inner.empty([n, c * math.prod(kernel_size), columns], dtype=input.dtype,
                    device=input.device)


# -- convolution_backward (Convolution.cpp): the gradients through the same route ----------

def _conv_weight_grad(x, gy, kernel_size, stride, padding, dilation, groups, compute):
    """d<conv(x, w), gy>/dw: every receptive field of x times the output
    gradient there, summed over the batch and the output positions."""
    k = len(kernel_size)
    if any(padding):
        x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, kernel_size)]
    win = sliding_window_view(x, eff, axis=tuple(range(2, 2 + k)))
    out_spatial = gy.shape[2:]
    win = win[(slice(None), slice(None))
              + tuple(slice(None, n * s, s) for n, s in zip(out_spatial, stride))
              + tuple(slice(None, None, d) for d in dilation)]
    cg = x.shape[1] // groups
    og = gy.shape[1] // groups
    grad = np.empty((gy.shape[1], cg) + tuple(kernel_size), dtype=compute)
    batch_and_space = [0] + list(range(2, 2 + k))
    for g in range(groups):
        grad[g * og:(g + 1) * og] = np.tensordot(gy[:, g * og:(g + 1) * og],
                                                 win[:, g * cg:(g + 1) * cg],
                                                 axes=(batch_and_space, batch_and_space))
    return grad


def _conv_backward_specs(grad_output, input, weight, bias_sizes, output_mask):
    strides = None
    if len(input._shape) == 4 and (_is_channels_last(input) or _is_channels_last(weight)):
        strides = channels_last_strides
    out_channels = grad_output._shape[1]
    shapes = (tuple(input._shape), tuple(weight._shape),
              tuple(bias_sizes) if bias_sizes is not None else (out_channels,))
    return [TensorMeta(shape, grad_output.dtype,
                       strides(shape) if strides is not None and i < 2 else None)
            if want else None for i, (shape, want) in enumerate(zip(shapes, output_mask))]


@kernel("convolution_backward")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    """convolution is bilinear in (input, weight): grad_input is the adjoint map
    applied to grad_output (a transposed convolution, or a plain one for a
    transposed forward), grad_weight correlates input with grad_output (their
    roles swap for a transposed forward), grad_bias sums grad_output."""
    for t in (weight, grad_output):
        _check_same_dtype(input, t)
    specs = _conv_backward_specs(grad_output, input, weight, bias_sizes, output_mask)
    if observed() and input.device.type == "cpu":   # ATen's route, op by op
        outs = convolution_backward_route(
            grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
            output_padding, groups, output_mask,
            lambda outs, gy, x, w, s, p, d, op: _convolution_backward_cpu(
                outs, gy, x, w, s, p, d, transposed, op, groups))
        if outs is not None:
            return outs
    outs = _allocate_masked(specs, input.device)
    if input.device.type == "cpu":
        _convolution_backward_cpu(outs, grad_output, input, weight, stride, padding, dilation,
                                  transposed, output_padding, groups)
    return outs


def _convolution_backward_cpu(outs, grad_output, input, weight, stride, padding, dilation,
                              transposed, output_padding, groups):
    grad_input, grad_weight, grad_bias = outs
    k = len(weight._shape) - 2
    stride = _expand_param("stride", stride, k)
    padding = _expand_param("padding", padding, k)
    dilation = _expand_param("dilation", dilation, k)
    compute = grad_output.dtype.opmath
    gy, x, w = (_array(t, compute) for t in (grad_output, input, weight))
    kernel_size = w.shape[2:]
    empty = gy.size == 0 or x.size == 0 or w.size == 0
    if grad_input is not None:
        if empty:
            res = np.zeros(x.shape, dtype=compute)
        elif transposed:    # (output_padding's extra rows/columns reach no input)
            res = _conv_forward(gy, w, stride, padding, dilation, groups, compute)
            res = res[(Ellipsis,) + tuple(slice(0, n) for n in x.shape[2:])]
        else:
            fit = [n - ((m - 1) * s - 2 * p + d * (kk - 1) + 1) for n, m, s, p, d, kk in
                   zip(x.shape[2:], gy.shape[2:], stride, padding, dilation, kernel_size)]
            res = _conv_transposed(gy, w, stride, padding, dilation, fit, groups, compute)
        _write(grad_input, res)
    if grad_weight is not None:
        if empty:
            res = np.zeros(w.shape, dtype=compute)
        elif transposed:
            res = _conv_weight_grad(gy, x, kernel_size, stride, padding, dilation, groups,
                                    compute)
        else:
            res = _conv_weight_grad(x, gy, kernel_size, stride, padding, dilation, groups,
                                    compute)
        _write(grad_weight, res)
    if grad_bias is not None:
        _write(grad_bias, gy.sum(axis=(0,) + tuple(range(2, gy.ndim)), dtype=compute))
