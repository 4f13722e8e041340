"""``torch.fx.passes.shape_prop``: run a GraphModule on example inputs and note
each node's tensor metadata (``node.meta["tensor_meta"]``) and result type
(``node.meta["type"]``)."""
from __future__ import annotations

from typing import NamedTuple

from ..._core.layout import channels_last, channels_last_3d, contiguous_format
from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    shape: object
    dtype: object
    requires_grad: bool
    stride: tuple
    memory_format: object
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(t: Tensor) -> TensorMetadata:
    memory_format = next((f for f in (contiguous_format, channels_last, channels_last_3d)
                          if t.is_contiguous(memory_format=f)), None)
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, t.stride(), memory_format, False,
                          {})


class ShapeProp(Interpreter):
    def run_node(self, n):
        result = super().run_node(n)
        found = []

        def extract(value):
            if isinstance(value, Tensor):
                found.append(value)
                return _extract_tensor_metadata(value)
            return value
        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        return super().run(*args)
