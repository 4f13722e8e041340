"""Functionalization's ops: view copies, scatters and ``zero``.

A *view copy* (``view_copy``, ``t_copy``, ``slice_copy`` ...) is its view's
values in a fresh contiguous tensor: what ``functionalize(f,
remove="mutations_and_views")`` writes where ``f`` took a view, so the graph has
no aliasing left (PyTorch's ``{view}_copy`` ops, tag ``view_copy``):

    view_copy(x, size) == view(x, size).clone(memory_format=contiguous_format)

The multi-output views (split, split_with_sizes, unbind) have copies that
return one such clone per piece, and hand-written out= overloads taking a
list ``out``: split_copy's copies each piece into its ``out`` as it is (no
resize, ``copy_`` broadcasts), the other two check dtypes and resize first,
as PyTorch's do.

A *scatter* is the inverse of a view when a write through the view is
replayed onto its base (FunctionalInverses in PyTorch):

    out = clone(self); view(out, *args).copy_(src); return out

The output keeps ``self``'s strides, as PyTorch's Note [*_scatter ops preserve
strides] asks.  All are CompositeExplicitAutogradNonFunctional kernels over
dispatched ops, so CPU and Meta share them; their gradients are in
derivatives.yaml.
"""
from __future__ import annotations

from ..._core.dtype import type_meta_name
from ..._core.layout import contiguous_format
from ..._dispatcher.dispatcher import ops
from ..registry import _resize_out
from . import kernel

aten = ops.aten

# Each view copy: the view op it copies (by name: the ops are defined after the
# kernels load).
_VIEW_COPIES = {
    "view_copy": "view.default",
    "view_copy_dtype": "view.dtype",
    "_reshape_alias_copy": "_reshape_alias.default",
    "t_copy": "t.default",
    "transpose_copy": "transpose.int",
    "permute_copy": "permute.default",
    "unsqueeze_copy": "unsqueeze.default",
    "squeeze_copy": "squeeze.default",
    "squeeze_copy_dim": "squeeze.dim",
    "squeeze_copy_dims": "squeeze.dims",
    "select_copy": "select.int",
    "slice_copy": "slice.Tensor",
    "expand_copy": "expand.default",
    "as_strided_copy": "as_strided.default",
    "unfold_copy": "unfold.default",
    "alias_copy": "alias.default",
    "detach_copy": "detach.default",
    "lift_fresh_copy": "lift_fresh.default",
}

# Each multi-output view copy: its view, and its out= kernel's name in errors
# and whether that kernel resizes (PyTorch's three differ).
_MULTI_VIEW_COPIES = {
    "split_copy": ("split.Tensor", "split_copy_Tensor_out()", False),
    "split_with_sizes_copy": ("split_with_sizes.default", "split_with_sizes_copy_out", True),
    "unbind_copy": ("unbind.int", "unbind_copy_int_out", True),
}

# Each scatter: the view whose inverse it is.
_SCATTERS = {
    "slice_scatter": "slice.Tensor",
    "select_scatter": "select.int",
    "diagonal_scatter": "diagonal.default",
    "as_strided_scatter": "as_strided.default",
}


def _op(name):
    packet, overload = name.split(".")
    return getattr(getattr(aten, packet), overload)


def _view_copy_kernel(view):
    def view_copy(self, *args, **kwargs):
        return aten.clone.default(_op(view)(self, *args, **kwargs),
                                  memory_format=contiguous_format)
    return view_copy


def _multi_view_copy_kernel(view):
    def multi_view_copy(self, *args, **kwargs):
        return [aten.clone.default(piece, memory_format=contiguous_format)
                for piece in _op(view)(self, *args, **kwargs)]
    return multi_view_copy


def _multi_view_copy_out_kernel(view, name, resizes):
    def multi_view_copy_out(self, *args, out, **kwargs):
        pieces = _op(view)(self, *args, **kwargs)
        if len(out) != len(pieces):
            raise RuntimeError(f"{name} expected an out= argument of size {len(pieces)}, "
                               f"got size {len(out)}")
        for target, piece in zip(out, pieces):
            if resizes:
                if target.dtype is not piece.dtype:
                    raise RuntimeError(f"Expected out tensor to have dtype "
                                       f"{type_meta_name(piece.dtype)}, but got "
                                       f"{type_meta_name(target.dtype)} instead")
                if tuple(target.shape) != tuple(piece.shape):
                    _resize_out(target, piece.shape)
            aten.copy_.default(target, piece)
    return multi_view_copy_out


def _scatter_kernel(view):
    def scatter(self, src, *args, **kwargs):
        output = aten.clone.default(self)
        target = _op(view)(output, *args, **kwargs)
        if tuple(target.shape) != tuple(src.shape):
            raise RuntimeError("expected src to have a size equal to the slice of self. "
                               f"src size = {list(src.shape)}, slice size = {list(target.shape)}")
        aten.copy_.default(target, src)
        return output
    return scatter


for _name, _view in _VIEW_COPIES.items():
    kernel(_name)(_view_copy_kernel(_view))
for _name, (_view, _out_name, _resizes) in _MULTI_VIEW_COPIES.items():
    kernel(_name)(_multi_view_copy_kernel(_view))
    kernel(f"{_name}_out")(_multi_view_copy_out_kernel(_view, _out_name, _resizes))
for _name, _view in _SCATTERS.items():
    kernel(_name)(_scatter_kernel(_view))


@kernel("zero")
def zero(self):
    """zero_'s functional form: a zeroed copy with self's strides."""
    return aten.zero_.default(aten.clone.default(self))
