"""``torch.nn.modules.normalization``: LayerNorm, GroupNorm, RMSNorm (elementwise
affine parameters initialized to ones / zeros)."""
from __future__ import annotations

import numbers

from ... import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._functions import CrossMapLRN2d as _cross_map_lrn2d
from .linear import _register_bias
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def _as_shape(normalized_shape) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


def _register_affine_params(module, shape, affine: bool, bias: bool, factory_kwargs) -> None:
    """A normalization layer's ``weight`` and ``bias`` of ``shape`` (left for
    ``_reset_affine_params`` to fill), or None where ``affine`` / ``bias`` is off."""
    if affine:
        module.weight = Parameter(empty(shape, **factory_kwargs))
        _register_bias(module, bias, shape, factory_kwargs)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine_params(module, affine: bool) -> None:
    """The identity transform: weight ones, bias zeros."""
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalizes over the trailing ``normalized_shape`` dims."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine_params(self, self.normalized_shape, elementwise_affine, bias,
                                factory_kwargs)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine_params(self, self.elementwise_affine)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
                "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class GroupNorm(Module):
    """Normalizes each group of num_channels / num_groups channels per sample."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine_params(self, num_channels, affine, bias, factory_kwargs)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine_params(self, self.affine)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return ("{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}"
                .format(**self.__dict__, use_bias=self.bias is not None))


class RMSNorm(Module):
    """x / sqrt(mean(x**2) + eps) over the trailing dims (eps=None: the dtype's
    machine epsilon), times an optional weight."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}"
                .format(**self.__dict__))


class LocalResponseNorm(Module):
    """Each channel divided by (k + alpha * mean of the squares of ``size``
    neighbouring channels) ** beta (F.local_response_norm)."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class CrossMapLRN2d(Module):
    """Lua Torch's cross-channel local response normalization of 4-d input."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
