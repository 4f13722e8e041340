"""``torch.nn.modules._functions``: autograd Functions behind some modules
(CrossMapLRN2d's legacy cross-channel LRN)."""
from __future__ import annotations

from ... import cat, stack
from ...autograd.function import Function


class CrossMapLRN2d(Function):
    """The legacy Lua-Torch cross-channel LRN of 4-d input (torch.nn.modules._functions'
    CrossMapLRN2d): a running window sum of squares over channels (its window and
    its hand-written backward are Lua Torch's, kept as they are)."""

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        channels = input.size(1)
        square = input.pow(2)
        pre_pad = int((size - 1) / 2 + 1)
        sums = [square[:, :min(pre_pad, channels)].sum(1)]
        for c in range(1, channels):
            current = sums[-1]
            if c < channels - pre_pad + 1:
                current = current + square[:, c + pre_pad - 1]
            if c > pre_pad:
                current = current - square[:, c - pre_pad]
            sums.append(current)
        scale = stack(sums, 1).mul(alpha / size).add(k)
        output = scale.pow(-beta).mul(input)
        ctx.size, ctx.alpha, ctx.beta, ctx.scale = size, alpha, beta, scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        size, channels = ctx.size, input.size(1)
        ratio = grad_output * output / ctx.scale
        head = int(size - (size - 1) / 2)       # zero channels before and after the ratios
        rest = tuple(ratio.shape[2:])
        padded = cat([ratio.new_zeros((ratio.size(0), head) + rest), ratio,
                      ratio.new_zeros((ratio.size(0), size - 1 - head) + rest)], 1)
        grad_input = ctx.scale.pow(-ctx.beta).mul(grad_output)
        accum = padded[:, :size - 1].sum(1)
        rows = []
        for c in range(channels):
            accum = accum + padded[:, c + size - 1]
            rows.append(accum)
            accum = accum - padded[:, c]
        factor = 2 * ctx.alpha * ctx.beta / size
        return grad_input - factor * input * stack(rows, 1), None, None, None, None
