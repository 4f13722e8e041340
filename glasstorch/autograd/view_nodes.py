"""Nodes for views and in-place ops on views (torch/csrc/autograd/functions/
tensor.cpp: CopySlices; VariableHooks::grad_fn's AsStridedBackward0 regeneration).

``x = base[1:]; x.mul_(2)``: the in-place op's own node (MulBackward0) computes
the gradient of the slice, but the gradient must flow to the *base*.  The base
therefore gets a ``CopySlices`` node: given the gradient of the whole base, it
runs MulBackward0 on the slice of it that the view covers, writes the result
back into that slice, and passes the other inputs' gradients through.
"""
from __future__ import annotations

from .graph import Node
from .variable import gradient_edge, requires_grad


class CopySlices(Node):
    """History of a base after an in-place op on one of its views."""

    __slots__ = ("base_geometry", "view_geometry", "fn")
    _name_prefix = "torch::autograd::"

    def __init__(self, base, view, fn):
        super().__init__()
        self.base_geometry = (base._shape, base._stride, base._offset)
        self.view_geometry = (view._shape, view._stride, view._offset)
        self.fn = fn
        base_edge = gradient_edge(base) if requires_grad(base) else None
        self._next_edges = (base_edge,) + tuple(fn._next_edges[1:])
        self._input_metadata = ((base._shape, base.dtype, base.device),)

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return [None] * len(self._next_edges)
        shape, stride, offset = self.base_geometry
        result = grad.new_empty_strided(shape, stride)
        result.copy_(grad)
        view_shape, view_stride, view_offset = self.view_geometry
        grad_slice = result.as_strided(view_shape, view_stride, view_offset - offset)
        res = self.fn.apply([grad_slice.clone()])
        outputs = [result] + [None] * (len(self._next_edges) - 1)
        for i, g in enumerate(res):
            if i == 0:
                if g is None:
                    grad_slice.zero_()
                else:
                    grad_slice.copy_(g)
            else:
                outputs[i] = g
        return outputs

    def release_variables(self):
        self.fn.release_variables()

    @property
    def _saved_fn(self):
        return self.fn


def as_strided_backward_node(view, base):
    """The regenerated grad_fn of a view whose base changed in place:
    AsStridedBackward0 from the base's geometry to the view's."""
    from .variable_type import NODE_CLASSES
    node = NODE_CLASSES["aten::as_strided"]()
    node._next_edges = (gradient_edge(base),)
    node._slot_map = {"self": [0]}
    node._input_metadata = ((view._shape, view.dtype, view.device),)
    node._raw_saved_self_geometry = (base._shape, base._stride, base._offset)
    node._raw_saved_size = view._shape
    node._raw_saved_stride = view._stride
    node._raw_saved_storage_offset = view._offset
    return node
