"""``torch.nn.modules.linear``: Identity, Linear, Bilinear.

Initialization draws from the default generator exactly as PyTorch's does
(kaiming_uniform_(a=sqrt(5)) for the weight, then U(-1/sqrt(fan_in), +) for
the bias), so the same manual_seed gives the same weights bit for bit."""
from __future__ import annotations

import math

from ... import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Bilinear", "Identity", "Linear"]


def _register_bias(module, bias: bool, size, factory_kwargs) -> None:
    """``module.bias``: an uninitialized Parameter of ``size``, or None without ``bias``."""
    if bias:
        module.bias = Parameter(empty(size, **factory_kwargs))
    else:
        module.register_parameter("bias", None)


def _fan_in_uniform_(bias, weight) -> None:
    """Linear's and Conv's bias init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in from ``weight``."""
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    init.uniform_(bias, -bound, bound)


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b, with W of shape (out_features, in_features)."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), **factory_kwargs))
        _register_bias(self, bias, out_features, factory_kwargs)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            _fan_in_uniform_(self.bias, self.weight)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's ``out_proj``: a Linear that quantization tools leave alone
    (PyTorch keeps it a distinct class for that; it computes as Linear)."""


class Bilinear(Module):
    """y[..., o] = x1 A[o] x2 + b[o], with A of shape (out, in1, in2)."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features),
                                      **factory_kwargs))
        _register_bias(self, bias, out_features, factory_kwargs)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features="
                             f"{self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
