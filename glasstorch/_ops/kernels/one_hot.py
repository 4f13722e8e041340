"""one_hot (ATen's Onehot.cpp), CompositeImplicitAutograd:

    one_hot(t, C)[..., c] = 1 if t[...] == c else 0        (int64, C = max(t) + 1 when -1)

The class range is checked on the values (aminmax), then ``scatter_`` writes the ones.
Meta tensors and tensors with a ``__torch_dispatch__`` (FakeTensor) have no values
to check: with ``num_classes`` given, the result is ``t.unsqueeze(-1) == arange(C)``.
"""
from __future__ import annotations

from ..._core import dispatch_key as dk
from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from . import kernel

__all__ = []

aten = ops.aten


@kernel("one_hot")
def one_hot(self, num_classes=-1):
    if self.dtype is not dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if self.device.type == "meta" or self._keys & dk.PYTHON:
        return _one_hot_without_values(self, num_classes)
    shape = list(self._shape)
    if self.numel() == 0:      # no values to infer the classes from
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return aten.empty.memory_format(shape + [num_classes], dtype=dt.int64,
                                        device=self.device)
    low, high = aten.aminmax.default(self)
    low, high = aten._local_scalar_dense.default(low), aten._local_scalar_dense.default(high)
    if low < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = high + 1
    elif num_classes <= high:
        raise RuntimeError("Class values must be smaller than num_classes.")
    result = aten.zeros.default(shape + [num_classes], dtype=dt.int64, device=self.device)
    return aten.scatter_.value(result, -1, aten.unsqueeze.default(self, -1), 1)


def _one_hot_without_values(self, num_classes):
    if self.numel() == 0 and num_classes <= 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if num_classes == -1:
        num_classes = aten._local_scalar_dense.default(aten.max.default(self)) + 1
    elif num_classes <= 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    index = aten.arange.default(num_classes, dtype=dt.int64, device=self.device)
    return aten._to_copy.default(aten.eq.Tensor(aten.unsqueeze.default(self, -1), index),
                                 dtype=dt.int64)
