"""``torch.nn.modules.padding``: constant/zero, reflection, replication and circular
padding of the last 1, 2 or 3 dims (modules around F.pad)."""
from __future__ import annotations

from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]

_sextuple = _ntuple(6)


class _PadNd(Module):
    """F.pad(input, self.padding, self._mode); ``_tuple`` normalizes ``padding``."""

    __constants__ = ["padding"]
    _mode = None
    _tuple = None

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = type(self)._tuple(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"
    _dims = None            # accepted input dims

    def _check_input_dim(self, input) -> None:
        if input.dim() not in self._dims:
            raise ValueError(f"expected {self._dims[0]}D or {self._dims[1]}D input (got "
                             f"{input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    _tuple = staticmethod(_pair)
    _dims = (2, 3)


class CircularPad2d(_CircularPadNd):
    _tuple = staticmethod(_quadruple)
    _dims = (3, 4)


class CircularPad3d(_CircularPadNd):
    _tuple = staticmethod(_sextuple)
    _dims = (4, 5)


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _tuple = None

    def __init__(self, padding, value: float) -> None:
        super().__init__()
        self.value = value
        self.padding = type(self)._tuple(padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _tuple = staticmethod(_pair)


class ConstantPad2d(_ConstantPadNd):
    _tuple = staticmethod(_quadruple)


class ConstantPad3d(_ConstantPadNd):
    _tuple = staticmethod(_sextuple)


class ReflectionPad1d(_PadNd):
    _mode, _tuple = "reflect", staticmethod(_pair)


class ReflectionPad2d(_PadNd):
    _mode, _tuple = "reflect", staticmethod(_quadruple)


class ReflectionPad3d(_PadNd):
    _mode, _tuple = "reflect", staticmethod(_sextuple)


class ReplicationPad1d(_PadNd):
    _mode, _tuple = "replicate", staticmethod(_pair)


class ReplicationPad2d(_PadNd):
    _mode, _tuple = "replicate", staticmethod(_quadruple)


class ReplicationPad3d(_PadNd):
    _mode, _tuple = "replicate", staticmethod(_sextuple)


class _ZeroPad:
    """Mixed into ZeroPadNd ahead of ConstantPadNd: the value is 0 and the repr
    shows only the padding."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    pass


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    pass


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    pass
