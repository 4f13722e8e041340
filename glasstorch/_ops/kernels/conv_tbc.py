"""Time-batch-channel 1-d convolution (ATen's ConvolutionTBC.cpp): what torch.conv_tbc
/ F.conv_tbc call.

    input (T, B, Cin), weight (K, Cin, Cout), bias (Cout,), pad
    -> output (T - K + 1 + 2 pad, B, Cout): bias, plus for each kernel tap k the
       overlapping time steps' input @ weight[k]

conv_tbc is CompositeExplicitAutograd and conv_tbc_backward CompositeImplicitAutograd,
both written with ops as ATen's (one addmm per tap on time-shifted slices).
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from . import kernel

aten = ops.aten


def _check(self, weight, bias):
    if self.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if self.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output "
                           "channels).")


def _taps(ilen, olen, kw, pad):
    """Per kernel tap: (input start, output start, length) of the overlap."""
    real_pad = (olen - ilen + kw - 1) // 2
    for k in range(kw):
        i_shift, o_shift = max(0, k - real_pad), max(0, real_pad - k)
        length = min(ilen + real_pad - k, olen) - o_shift
        if length > 0:
            yield k, i_shift, o_shift, length


@kernel("conv_tbc")
def conv_tbc(self, weight, bias, pad=0):
    _check(self, weight, bias)
    ilen, batch, planes_in = self.shape
    kw, planes_out = weight.shape[0], weight.shape[2]
    olen = ilen - kw + 1 + pad * 2
    output = aten.empty.memory_format([olen, batch, planes_out], dtype=self.dtype,
                                      device=self.device)
    aten.copy_.default(output, aten.expand.default(bias, list(output.shape)))
    for k, i_shift, o_shift, length in _taps(ilen, olen, kw, pad):
        inp = aten.view.default(aten.narrow.default(self, 0, i_shift, length),
                                [length * batch, planes_in])
        out = aten.view.default(aten.narrow.default(output, 0, o_shift, length),
                                [length * batch, planes_out])
        aten.addmm_.default(out, inp, aten.select.int(weight, 0, k))
    return output


@kernel("conv_tbc_backward")
def conv_tbc_backward(self, input, weight, bias, pad):
    """(d input, d weight, d bias) of conv_tbc; ``self`` is the output gradient."""
    ilen, batch, planes_in = input.shape
    kw, planes_out = weight.shape[0], weight.shape[2]
    olen = ilen - kw + 1 + pad * 2
    taps = list(_taps(ilen, olen, kw, pad))
    d_input = aten.zeros_like.default(input)
    for k, i_shift, o_shift, length in taps:
        d_out = aten.view.default(aten.narrow.default(self, 0, o_shift, length),
                                  [length * batch, planes_out])
        d_in = aten.view.default(aten.narrow.default(d_input, 0, i_shift, length),
                                 [length * batch, planes_in])
        aten.addmm_.default(d_in, d_out, aten.t.default(aten.select.int(weight, 0, k)))
    d_weight = aten.zeros_like.default(weight)
    for k, i_shift, o_shift, length in taps:
        d_out = aten.view.default(aten.narrow.default(self, 0, o_shift, length),
                                  [length * batch, planes_out])
        inp = aten.t.default(aten.view.default(aten.narrow.default(input, 0, i_shift, length),
                                               [length * batch, planes_in]))
        aten.addmm_.default(aten.select.int(d_weight, 0, k), inp, d_out)
    d_bias = aten.zeros_like.default(bias)
    aten.copy_.default(d_bias, aten.sum.dim_IntList(aten.sum.dim_IntList(self, [0]), [0]))
    return d_input, d_weight, d_bias
