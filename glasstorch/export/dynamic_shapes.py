"""``torch.export.dynamic_shapes``: saying which sizes may vary.

``dynamic_shapes`` mirrors the inputs (a dict by parameter name, or a tuple in
order); for each tensor it gives, per dimension, a ``Dim`` (a named symbolic
size with a range; tensors sharing a Dim share the size), a hint
(``Dim.AUTO``, ``Dim.DYNAMIC``, ``Dim.STATIC``), an int (static, that value)
or None (static).  Every other dimension is static: export specialises it and
the exported program guards it.
"""
from __future__ import annotations

import dataclasses
import enum

__all__ = ["Dim", "dims"]

_INT_OO = float("inf")


class _DimHintType(enum.Enum):
    AUTO = enum.auto()
    STATIC = enum.auto()
    DYNAMIC = enum.auto()


@dataclasses.dataclass
class _DimHint:
    """``Dim.AUTO`` / ``Dim.DYNAMIC`` / ``Dim.STATIC``, optionally bounded:
    ``Dim.DYNAMIC(min=2, max=64)``."""

    type: _DimHintType
    min: int | None = None
    max: int | None = None
    _factory: bool | None = True

    def __call__(self, min=None, max=None) -> "_DimHint":
        if not self._factory:
            raise TypeError(f"'{type(self)}' object is not callable")
        if min is not None and min < 0:
            raise AssertionError(f"min must be non-negative, got {min}")
        if max is not None and max < 0:
            raise AssertionError(f"max must be non-negative, got {max}")
        if min is not None and max is not None and min > max:
            raise AssertionError(f"min must be <= max, got min={min}, max={max}")
        return _DimHint(self.type, min=min, max=max, _factory=False)

    def __repr__(self):
        parts = [self.type.name] + [f"{k}={v}" for k, v in (("min", self.min), ("max", self.max))
                                    if v is not None]
        return f"DimHint({', '.join(parts)})"


class Dim:
    """A named dynamic size: ``Dim("batch", min=2, max=1024)`` (min defaults
    to 0, max to no bound)."""

    AUTO = _DimHint(_DimHintType.AUTO)
    DYNAMIC = _DimHint(_DimHintType.DYNAMIC)
    STATIC = _DimHint(_DimHintType.STATIC)

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None):
        low = 0 if min is None else min
        high = _INT_OO if max is None else max
        if not high > low:
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if not name.isidentifier():
            raise AssertionError(f"Dim name must be a valid identifier, got {name}")
        self.__name__ = name
        self.min, self.max = low, high

    def __repr__(self):
        parts = [repr(self.__name__)]
        if self.min != 2:          # 2, the old default, goes unsaid
            parts.append(f"min={self.min}")
        if self.max != _INT_OO:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"


def dims(*names: str, min: int | None = None, max: int | None = None) -> tuple:
    """Several Dims with the same range: ``batch, seq = dims("batch", "seq")``."""
    return tuple(Dim(name, min=min, max=max) for name in names)


def format_range(low, high) -> str:
    """A symbol's range as PyTorch prints it: ``VR[2, int_oo]``."""
    show = lambda v: "int_oo" if v == _INT_OO else "-int_oo" if v == -_INT_OO else str(v)
    return f"VR[{show(low)}, {show(high)}]"
