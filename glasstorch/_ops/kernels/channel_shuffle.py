"""Channel shuffle (ATen's ChannelShuffle.cpp, cpu/ChannelShuffleKernel.cpp): what
F.channel_shuffle / nn.ChannelShuffle call.

    (N, C, *) with C = g * k  ->  view (N, g, k, *), swap g and k, flatten back:
    output channel i * g + j is input channel j * k + i

channel_shuffle checks and calls the CPU kernel native_channel_shuffle; the
result keeps the input's memory format (channels-last stays channels-last).
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from . import kernel
from ._common import _sizes
from .view import suggest_memory_format

aten = ops.aten


def _check(self, groups):
    if self.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {_sizes(self._shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    channels = self._shape[1]
    if channels % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {channels} "
                           f"channels and {groups} groups.")


def _shuffled(self, groups):
    """The shuffle in view ops: (N, g, k, *) -> (N, k, g, *) -> (N, C, *)."""
    shape = list(self._shape)
    n, c, rest = shape[0], shape[1], shape[2:]
    split = aten.view.default(aten.contiguous.default(self), [n, groups, c // groups] + rest)
    return aten.reshape.default(aten.transpose.int(split, 1, 2), shape)


@kernel("channel_shuffle")
def channel_shuffle(self, groups):
    _check(self, groups)
    return aten.native_channel_shuffle.default(self, groups)


@kernel("native_channel_shuffle")
def native_channel_shuffle(self, groups):
    _check(self, groups)
    out = aten.empty.memory_format(list(self._shape), dtype=self.dtype, device=self.device,
                                   memory_format=suggest_memory_format(self))
    if self.device.type != "meta" and self.numel():
        aten.copy_.default(out, _shuffled(self, groups))
    return out
