"""``torch.nn.modules.conv``: Conv1d/2d/3d, ConvTranspose1d/2d/3d.

A convolution with padding_mode 'reflect' / 'replicate' / 'circular' pads
with F.pad first, then convolves without padding; 'same' padding is resolved
here into the per-side amounts F.pad needs.  The weights are initialized as
PyTorch's (kaiming_uniform_(a=sqrt(5)), then the bias from U(-1/sqrt(fan_in), +)),
so the same manual_seed gives the same weights."""
from __future__ import annotations

import math

from ... import empty, empty_like, contiguous_format
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import _fan_in_uniform_, _register_bias
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._pad_amounts()
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(shape, **factory_kwargs))
        _register_bias(self, bias, out_channels, factory_kwargs)
        self.reset_parameters()

    def _pad_amounts(self):
        """F.pad's padding list (last dim first, left then right) for a
        non-zeros padding_mode; 'same' puts the odd extra element on the right."""
        if not isinstance(self.padding, str):
            return _reverse_repeat_tuple(self.padding, 2)
        amounts = [0, 0] * len(self.kernel_size)
        if self.padding == "same":
            for d, k, i in zip(self.dilation, self.kernel_size,
                               range(len(self.kernel_size) - 1, -1, -1)):
                total = d * (k - 1)
                amounts[2 * i] = total // 2
                amounts[2 * i + 1] = total - total // 2
        return amounts

    def reset_parameters(self) -> None:
        with no_grad():
            if not self.weight.is_contiguous():
                temp_weight = empty_like(self.weight, memory_format=contiguous_format)
                init.kaiming_uniform_(temp_weight, a=math.sqrt(5))
                self.weight.copy_(temp_weight)
            else:
                init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                _fan_in_uniform_(self.bias, self.weight)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _ConvForward(_ConvNd):
    """Conv1d / Conv2d: ``_conv`` is F.conv1d or F.conv2d, ``_tuple`` the
    matching n-tuple normalizer."""

    _conv = None
    _tuple = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None) -> None:
        n = type(self)._tuple
        super().__init__(in_channels, out_channels, n(kernel_size), n(stride),
                         padding if isinstance(padding, str) else n(padding), n(dilation),
                         False, n(0), groups, bias, padding_mode, device=device, dtype=dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, type(self)._tuple(0), self.dilation,
                        self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvForward):
    _conv = staticmethod(F.conv1d)
    _tuple = staticmethod(_single)


class Conv2d(_ConvForward):
    _conv = staticmethod(F.conv2d)
    _tuple = staticmethod(_pair)


class Conv3d(_ConvForward):
    _conv = staticmethod(F.conv3d)
    _tuple = staticmethod(_triple)


class _ConvTransposeNd(_ConvNd):
    """ConvTranspose1d / ConvTranspose2d; ``output_size`` in forward picks the
    output_padding that reaches it."""

    _conv = None
    _tuple = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{self.__class__.__name__}")
        n = type(self)._tuple
        super().__init__(in_channels, out_channels, n(kernel_size), n(stride), n(padding),
                         n(dilation), True, n(output_padding), groups, bias, padding_mode,
                         device=device, dtype=dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{num_non_spatial_dims + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            smallest = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1)
                        + 1)
            min_sizes.append(smallest)
            max_sizes.append(smallest + stride[d] - 1)
        for size, smallest, largest in zip(output_size, min_sizes, max_sizes):
            if size < smallest or size > largest:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        k = len(self.kernel_size)
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for ConvTranspose{k}d")
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, k, self.dilation)
        return type(self)._conv(input, self.weight, self.bias, self.stride, self.padding,
                                output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _conv = staticmethod(F.conv_transpose1d)
    _tuple = staticmethod(_single)


class ConvTranspose2d(_ConvTransposeNd):
    _conv = staticmethod(F.conv_transpose2d)
    _tuple = staticmethod(_pair)


class ConvTranspose3d(_ConvTransposeNd):
    _conv = staticmethod(F.conv_transpose3d)
    _tuple = staticmethod(_triple)
