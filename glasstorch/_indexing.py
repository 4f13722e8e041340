"""Python indexing (torch/csrc/autograd/python_variable_indexing.cpp) and the
torch-level shape helpers that are not operators.

``x[index]`` walks the index left to right over the dims of ``x``:

    int i        select(dim, i)            the dim goes away
    slice        slice(dim, start, stop, step)
    None         unsqueeze(dim)            a new dim of size 1
    ...          skip the dims not named by the rest of the index
    True/False   unsqueeze(dim) + an index of [0] / []
    tensor/list  remembered as an index tensor at this dim (a bool mask covers
                 as many dims as it has)

Everything but the index tensors is a view.  If any index tensor was seen,
one ``index.Tensor`` call finishes the job (advanced indexing: a copy).
``x[i] = v`` does the same walk, then ``copy_``/``fill_`` into the view, or
``index_put_`` when index tensors are involved.
"""
from __future__ import annotations

import sys
import warnings

import numpy as np

from ._core import dtype as dt
from ._core.device import device as Device
from ._dispatcher import torch_function as _torch_function
from ._dispatcher.binding import _is_symint
from ._dispatcher.dispatcher import dispatcher, ops
from ._ops import registry as _registry
from ._ops.structured import checked_convert, empty_tensor
from ._tensor import Size, Tensor

__all__ = ["broadcast_shapes", "unbind", "chunk", "tensor_split", "split_with_sizes",
           "split_copy", "split_with_sizes_copy", "unbind_copy", "hsplit", "vsplit", "dsplit", "cat", "concat", "concatenate", "stack"]

INT64_MAX = sys.maxsize
_CPU = Device("cpu")
_INTS = (int, np.integer)

_slice = ops.aten.slice.Tensor
_select = ops.aten.select.int
_unsqueeze = ops.aten.unsqueeze.default
_alias = ops.aten.alias.default
_index = ops.aten.index.Tensor
_index_put_ = ops.aten.index_put_.default
_copy_ = ops.aten.copy_.default
_view = ops.aten.view.default
_expand = ops.aten.expand.default
_unbind = ops.aten.unbind.int


def _fill_op():
    """``fill_.Tensor`` when the factories module declares it, else None."""
    global _FILL
    if _FILL is None:
        entry = dispatcher.find("aten::fill_.Tensor")
        if entry is not None:
            _FILL = ops.aten.fill_.Tensor
    return _FILL


_FILL = None


def _bad_index(x):
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                      f"Variables are valid indices (got {type(x).__name__})")


def _as_int(x):
    if isinstance(x, _INTS) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, Tensor) and not x._shape and x.dtype.category <= dt.INTEGRAL:
        return int(x._cpu_array()[()])
    if _is_symint(x):               # a symbolic bound stays symbolic (no guard)
        return x
    if hasattr(x, "__index__"):
        return x.__index__()
    raise TypeError("slice indices must be integers or None or have an __index__ method")


def _apply_slice(self, dim, sl):
    step = sl.step
    if step is None:
        step = 1
    else:
        step = _as_int(step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        if step < 0:
            raise ValueError("step must be greater than zero")
    start = 0 if sl.start is None else _as_int(sl.start)
    stop = INT64_MAX if sl.stop is None else _as_int(sl.stop)
    if step == 1:
        return _slice(self, dim, start, stop)
    return _slice(self, dim, start, stop, step)


def _apply_select(self, dim, i, position=None):
    """select(dim, i); an error names the index's position in the index tuple,
    as PyTorch's does."""
    shape = self._shape
    if not shape:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    size = shape[dim]
    if i < -size or i >= size:
        raise IndexError(f"index {i} is out of bounds for dimension "
                         f"{dim if position is None else position} with size {size}")
    return _select(self, dim, i)


def _as_tuple(index):
    """PyTorch's treatSequenceAsTuple: a list holding slices/None/.../sequences/tensors
    is a multi-dim index; a plain list of numbers is one index tensor."""
    if type(index) is tuple:
        return index
    if isinstance(index, list) and len(index) < 32:
        for x in index:
            if x is None or x is Ellipsis or isinstance(x, (slice, Tensor, list, tuple)):
                warnings.warn(
                    "Using a non-tuple sequence for multidimensional indexing is deprecated and "
                    "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                    "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                    "which will result either in an error or a different result", UserWarning,
                    stacklevel=3)
                return tuple(index)
    return (index,)


def _to_index_tensor(x):
    from ._creation import tensor
    if isinstance(x, np.ndarray):
        if x.dtype == np.bool_ or x.dtype.kind in "iu":
            return tensor(x)
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    try:
        t = tensor(x)
    except (TypeError, ValueError):
        raise _bad_index(x) from None
    if t.dtype.category > dt.INTEGRAL:
        if t.dtype.category != dt.FLOATING:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        t = t.long()        # a list of numbers indexes as long (indexing_tensor_from_data)
    if t.numel() == 0:  # x[[]]: an empty long index
        t = tensor(np.zeros(t._shape, np.int64))
    return t


def _bool_index(value: bool):
    out = empty_tensor((1,) if value else (0,), dt.int64, _CPU)
    if value:
        out._np()[0] = 0
    return out


def _apply_slicing(self, indices):
    """Walk the index: (the view so far, list of index tensors | None)."""
    ndim = len(self._shape)
    specified = 0
    for x in indices:
        if x is None or x is Ellipsis or isinstance(x, bool):
            continue
        if isinstance(x, Tensor) and x.dtype in (dt.bool_, dt.uint8):
            specified += len(x._shape)
        else:
            specified += 1
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = self
    dim = 0
    tensors = None

    def record(t):
        nonlocal tensors
        if tensors is None:
            tensors = []
        tensors.extend([None] * (dim - len(tensors)))
        tensors.append(t)

    for position, x in enumerate(indices):
        if isinstance(x, bool) or (isinstance(x, Tensor) and not x._shape and x.dtype is dt.bool_):
            flag = bool(x) if isinstance(x, bool) else bool(x._cpu_array()[()])
            result = _unsqueeze(result, dim)
            record(_bool_index(flag))
            dim += 1
        elif isinstance(x, _INTS):
            result = _apply_select(result, dim, int(x), position)
        elif type(x) is slice:
            if not _is_full_slice(x, result, dim):   # x[:, i]: no op for the ':'
                result = _apply_slice(result, dim, x)
            dim += 1
        elif x is Ellipsis:  # (PyTorch lets every ellipsis expand, not just one)
            dim += ndim - specified
        elif x is None:
            result = _unsqueeze(result, dim)
            dim += 1
        elif isinstance(x, Tensor):
            if not x._shape and x.dtype.category == dt.INTEGRAL and x.dtype is not dt.uint8:
                result = _apply_select(result, dim, int(x._cpu_array()[()]), position)
                continue
            if x.dtype.category > dt.INTEGRAL:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            record(x)
            dim += len(x._shape) if x.dtype in (dt.bool_, dt.uint8) else 1
        elif isinstance(x, str):        # a sequence to PyTorch, of an element type it lacks
            raise TypeError("new(): invalid data type 'str'")
        elif isinstance(x, (list, tuple, np.ndarray)):
            t = _to_index_tensor(x)
            record(t)
            dim += len(t._shape) if t.dtype is dt.bool_ else 1
        else:
            raise _bad_index(x)
    return result, tensors


def _is_full_slice(x, t, dim) -> bool:
    """applySlice's shortcut: ``start == 0``, ``stop >= size`` and ``step == 1`` (as
    written, before clamping) return the tensor itself, so no slice op is dispatched or
    recorded.  Over a symbolic size or bound it holds only when known for every value
    (``x[:, :n]`` with n = x.shape[1]), so ``x[:, 0]`` keeps its slice under make_fx's
    symbolic mode, and ``mask[:T]`` asks no guard of ``T``."""
    if dim >= len(t._shape):
        return False
    try:
        start = 0 if x.start is None else _as_int(x.start)
        stop = INT64_MAX if x.stop is None else _as_int(x.stop)
        step = 1 if x.step is None else _as_int(x.step)
    except TypeError:
        return False                    # _apply_slice raises it
    size = t._shape[dim]
    if type(size) is int and not any(map(_is_symint, (start, stop, step))):
        return step == 1 and start == 0 and size <= stop
    # PyTorch's size symbols range up to infinity, so an open end (INT64_MAX) is not
    # known to cover them (ours stop below INT64_MAX so that slice clamps decide)
    from .fx.experimental.symbolic_shapes import statically_known_true
    return (stop != INT64_MAX and statically_known_true(step == 1)
            and statically_known_true(start == 0) and statically_known_true(size <= stop))


def _getitem(self, index):
    tp = type(index)
    if tp is slice:                      # x[1:3]: the hot path, one op call
        return _apply_slice(self, 0, index)
    if tp is int:
        return _apply_select(self, 0, index)
    if index is None:
        return _unsqueeze(self, 0)
    result, tensors = _apply_slicing(self, _as_tuple(index))
    if tensors is not None:
        return _index(result, tensors)
    if result is self:                   # x[...] / x[()]: a new alias, never self
        return _alias(self)
    return result


def _scalar_tensor(value, dtype):
    """A 0-dim CPU tensor of ``dtype`` holding a Python number (PyTorch's
    valueToTensor: made outside dispatch, like ``torch.tensor``)."""
    from ._creation import _lift_fresh
    out = empty_tensor((), dtype, _CPU)
    out._np()[()] = checked_convert(value, dtype)   # out of range: PyTorch's error
    return _lift_fresh(out)                         # (a dispatch mode sees it lifted)


def _strip_leading_ones(value):
    shape = value._shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return _view(value, list(shape[k:])) if k else value


_ASSIGNABLE = (bool, int, float, complex, np.integer)   # valueToTensor's Python numbers


def _value_tensor(self, value):
    """The right-hand side of ``x[i] = v``: a tensor, or a number made one; anything
    else is refused, as PyTorch's setitem does."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _ASSIGNABLE):
        return _scalar_tensor(value, self.dtype)
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    raise TypeError(f"can't assign a {name} to a {self.type()}")


def _assign(view, value):
    """copy_to: a 0-dim CPU value fills; else it is expanded to the view (PyTorch's
    expand error for a misfit) and copied."""
    if value.device.type == "cpu" and not value._shape:
        fill = _fill_op()
        if fill is not None:
            fill(view, value)
            return
    src = _strip_leading_ones(value)
    if src._shape != view._shape:
        src = _expand(src, list(view._shape))
    _copy_(view, src)


def _setitem(self, index, value):
    value = _value_tensor(self, value)
    if type(index) is slice:
        # x[:] = v writes x itself (copy_/fill_ on x, not on a slice of it)
        _assign(self if _is_full_slice(index, self, 0) else _apply_slice(self, 0, index), value)
        return
    if type(index) is int:
        _assign(_apply_select(self, 0, index), value)
        return
    result, tensors = _apply_slicing(self, _as_tuple(index))
    if tensors is None:
        _assign(result, value)
        return
    _index_put_(result, tensors, value)


def _iter(self):
    if not self._shape:
        raise TypeError("iteration over a 0-d tensor")
    return iter(_unbind(self, 0))


def _T(self):
    n = len(self._shape)
    if n not in (0, 2):
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor.", UserWarning, stacklevel=2)
    if n == 0:
        return _alias(self)
    return ops.aten.permute.default(self, list(range(n - 1, -1, -1)))


def _mT(self):
    n = len(self._shape)
    if n < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {n}-D tensor.")
    return ops.aten.transpose.int(self, -2, -1)


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem
Tensor.__iter__ = _iter
Tensor.T = property(_T)
Tensor.mT = property(_mT)


# -- torch-level functions ------------------------------------------------------------

def broadcast_shapes(*shapes) -> Size:
    """``torch.broadcast_shapes``: the shape all ``shapes`` broadcast to."""
    shapes = tuple((s,) if isinstance(s, _INTS) else s for s in shapes if s is not None)
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * max(len(s) for s in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] == 1:
                continue
            if common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! "
                    f"Mismatching argument at index {arg_idx} had {shape}; but expected shape "
                    f"should be broadcastable to {common}")
    return Size(common)


def _tupled(fn, name):
    """Python bindings return ``Tensor[]`` results as tuples (an out= overload
    returning ``()`` gives None; what ``__torch_function__`` returns, such as
    an FX Proxy, is left as it is)."""
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        return tuple(result) if isinstance(result, list) else result
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = fn.__doc__
    wrapper._signatures = getattr(fn, "_signatures", None)
    return wrapper


_torch_fns = _registry.FUNCTIONS["torch"]
unbind = _tupled(_torch_fns["unbind"], "unbind")
chunk = _tupled(_torch_fns["chunk"], "chunk")
tensor_split = _tupled(_torch_fns["tensor_split"], "tensor_split")
split_with_sizes = _tupled(_torch_fns["split_with_sizes"], "split_with_sizes")
split_copy = _tupled(_torch_fns["split_copy"], "split_copy")
split_with_sizes_copy = _tupled(_torch_fns["split_with_sizes_copy"], "split_with_sizes_copy")
unbind_copy = _tupled(_torch_fns["unbind_copy"], "unbind_copy")


for _name in ("unbind", "chunk", "tensor_split", "split_with_sizes"):
    setattr(Tensor, _name, _tupled(getattr(Tensor, _name), _name))


def _split_method(self, split_size, dim=0):
    """``Tensor.split``: an int means equal chunks, a list means these sizes."""
    if isinstance(split_size, Tensor):
        try:
            split_size = int(split_size.item())
        except (ValueError, RuntimeError):
            pass
    if isinstance(split_size, _INTS) and not isinstance(split_size, bool):
        return tuple(ops.aten.split.Tensor(self, int(split_size), dim))
    return tuple(ops.aten.split_with_sizes.default(self, [int(s) for s in split_size], dim))


def hsplit(input, indices_or_sections):
    if input.dim() < 1:
        raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a "
                           f"tensor with {input.dim()} dimensions!")
    dim = 0 if input.dim() == 1 else 1
    return _sections_split(input, indices_or_sections, dim, "hsplit")


def vsplit(input, indices_or_sections):
    if input.dim() < 2:
        raise RuntimeError("torch.vsplit requires a tensor with at least 2 dimension, but got a "
                           f"tensor with {input.dim()} dimensions!")
    return _sections_split(input, indices_or_sections, 0, "vsplit")


def dsplit(input, indices_or_sections):
    if input.dim() < 3:
        raise RuntimeError("torch.dsplit requires a tensor with at least 3 dimension, but got a "
                           f"tensor with {input.dim()} dimensions!")
    return _sections_split(input, indices_or_sections, 2, "dsplit")


def _sections_split(input, spec, dim, name):
    if isinstance(spec, _INTS):
        size = input._shape[dim]
        if spec == 0 or size % spec:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size "
                               f"{spec}!")
        return tensor_split(input, int(spec), dim)
    return tensor_split(input, list(spec), dim)


Tensor.split = _split_method
Tensor.hsplit = hsplit
Tensor.vsplit = vsplit
Tensor.dsplit = dsplit


_cat = _torch_fns["cat"]
_stack = _torch_fns["stack"]


def cat(tensors, dim=0, *, out=None):
    """``torch.cat`` (also ``concat``/``concatenate``).  An empty list has no
    tensor to dispatch on, so it is refused here, with PyTorch's error."""
    if isinstance(tensors, (list, tuple)) and not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    return _cat(tensors, dim) if out is None else _cat(tensors, dim, out=out)


def stack(tensors, dim=0, *, out=None):
    """``torch.stack``: see ``cat`` for why the empty list is checked here."""
    if isinstance(tensors, (list, tuple)) and not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    result = _stack(tensors, dim)
    if out is None:
        return result
    if out._shape != result._shape:
        ops.aten.resize_.default(out, list(result._shape))
    return ops.aten.copy_.default(out, result)


def _c_bound(fn, name):
    """``fn`` as PyTorch binds it in C: ``__torch_function__`` (and so FX) sees the
    call as written (``torch.stack([x, x])``, no default ``dim``), by ``name``."""
    public = _torch_function.overridable(fn, name, python_level=False)
    public.__module__ = "torch"
    return public


concat, concatenate = (_c_bound(cat, name) for name in ("concat", "concatenate"))
cat, stack = _c_bound(cat, "cat"), _c_bound(stack, "stack")
