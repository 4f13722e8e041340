"""``torch._utils``' unpickling half: the functions checkpoints name to rebuild tensors.

``torch.save`` pickles a tensor as a call, ``_rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, hooks)``, with the storage itself kept out of the
pickle (a persistent id, its bytes in their own zip record).  ``torch.load``
replays the call.  The names here are the ones PyTorch's files reference
(``torch._utils._rebuild_tensor_v2`` ...); ``glasstorch.serialization`` maps
those references onto these functions, and writes ours under those names.
Also here, as in torch._utils: ``ExceptionWrapper``, which carries an exception
from a DataLoader worker process to the main process.
"""
from __future__ import annotations

import sys
import traceback

from ._core.storage import TypedStorage
from ._core.tls import state as _tls
from ._tensor import Tensor, keys_for_device


def _rebuild_tensor(storage: TypedStorage, storage_offset, size, stride) -> Tensor:
    """A tensor over ``storage`` (PyTorch: ``empty(0).set_(storage, offset, size, stride)``),
    with ``set_``'s checks: a loaded storage cannot grow, so a view that does not
    fit is refused here rather than failing later on first access."""
    untyped, dtype = storage._untyped_storage, storage.dtype
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if all(size):
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if (last + 1) * dtype.itemsize > untyped.nbytes():
            raise RuntimeError("Trying to resize storage that is not resizable")
    device = untyped.device
    return Tensor._make(untyped, size, stride, storage_offset, dtype, device,
                        keys_for_device(device.type, _tls.inference_mode))


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    """What a pickled plain tensor calls.  Hooks are never serialized (the dict is
    always empty); ``metadata`` carries conj/neg bits glasstorch tensors never set."""
    tensor = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        tensor.requires_grad = True
    return tensor


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    """What a pickled tensor of a dtype without a legacy storage class (uint16/32/64)
    calls: its storage is saved untyped, the dtype passed on its own."""
    typed = TypedStorage(wrap_storage=storage._untyped_storage, dtype=dtype, _internal=True)
    return _rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad, backward_hooks)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """Meta tensors pickle their geometry only: they have no bytes to save."""
    from . import empty_strided
    return empty_strided(size, stride, dtype=dtype, device="meta", requires_grad=requires_grad)


def _rebuild_sparse_tensor(layout, data):
    """What a pickled sparse tensor calls: its component tensors (which pickle
    as any tensor) and sizes, ``(indices, values, size, is_coalesced)`` for
    COO, ``(compressed_indices, plain_indices, values, size)`` for the
    compressed layouts; the invariants are not checked, as in PyTorch."""
    from . import sparse
    from ._core.layout import sparse_coo
    if layout is sparse_coo:
        indices, values, size, *coalesced = data
        return sparse.sparse_coo_tensor(indices, values, size, check_invariants=False,
                                        is_coalesced=coalesced[0] if coalesced else None)
    compressed_indices, plain_indices, values, size = data
    return sparse.sparse_compressed_tensor(compressed_indices, plain_indices, values, size,
                                           layout=layout, check_invariants=False)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """What a pickled ``nn.Parameter`` calls."""
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """A Parameter that carried Python attributes when it was saved."""
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """(``torch._tensor._rebuild_from_type_v2``) A tensor subclass, or a tensor with
    Python attributes: rebuild the tensor, retype it, restore its attributes."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None:
        ret.__setstate__(state)
    else:
        ret = _set_obj_state(ret, state)
    return ret


def _get_obj_state(obj) -> dict:
    """The Python attributes a tensor (subclass) instance carries, in its ``__dict__``;
    our Tensor's own fields are slots, which are not state."""
    return dict(getattr(obj, "__dict__", None) or {})


def _set_obj_state(obj, state):
    """Restore what ``_get_obj_state`` saved (PyTorch also accepts ``(dict, slots)``)."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for name, value in (dict_state or {}).items():
        setattr(obj, name, value)
    for name, value in (slots_state or {}).items():
        setattr(obj, name, value)
    return obj


class KeyErrorMessage(str):
    """A message KeyError shows as is (KeyError would otherwise print its repr)."""

    __slots__ = ()

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception with its formatted traceback, picklable, so that a worker process
    or thread can hand it to another that re-raises it (``torch._utils.ExceptionWrapper``)."""

    def __init__(self, exc_info=None, where="in background"):
        # only the type and the text are kept: a traceback would pin every frame
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise an exception of the original type whose message is "Caught <Type>
        <where>." and the original traceback (RuntimeError when that type cannot be
        built from one message)."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # this frame, held by the exception's traceback, must not hold the exception:
            # that cycle would leave the frames below (a DataLoader iterator and its
            # workers) to the garbage collector instead of freeing them with the error
            del exception
