"""How tensors and storages cross process boundaries (torch/multiprocessing/reductions.py).

``init_reductions`` registers these functions with ``multiprocessing``'s
``ForkingPickler``, the pickler behind ``Queue``, ``Pipe`` and process start-up
arguments.  Plain ``pickle`` still copies the bytes; through ForkingPickler:

    Tensor / Parameter   -> rebuild_tensor(cls, storage, (offset, size, stride, requires_grad))
    TypedStorage         -> rebuild_typed_storage(untyped storage, dtype)
    UntypedStorage       -> moved to shared memory in place (share_memory_), then
                            rebuild_storage_fd(cls, DupFd(fd), nbytes): the receiver
                            maps the same pages, no copy
                            (empty storages: rebuild_storage_empty)
    meta tensor          -> rebuild_meta_tensor(...): geometry only

``DupFd`` hands the descriptor over as ``multiprocessing`` does for any fd: to a
child being started, with the process; otherwise through the sender's
``resource_sharer`` thread over a Unix socket.  ``shared_cache`` maps each
shared file (its inode) to the live storage over it in this process, so views
of one storage arrive as views of one storage, and a storage sent back comes
back as itself.
"""
from __future__ import annotations

import os
import weakref
from multiprocessing import reduction
import multiprocessing.resource_sharer  # noqa: F401  (DupFd needs it outside process start)

from .._core.storage import LEGACY_STORAGE_CLASSES, TypedStorage, UntypedStorage
from .._tensor import Tensor
from .._utils import _rebuild_tensor

__all__ = ["init_reductions", "reduce_tensor", "reduce_storage", "rebuild_tensor",
           "rebuild_storage_fd", "shared_cache"]

shared_cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def fd_id(fd: int) -> tuple:
    """What identifies a shared file across processes: its inode and device."""
    stat = os.fstat(fd)
    return stat.st_ino, stat.st_dev


def _from_parameter_or_tensor(cls, t, requires_grad):
    """A Parameter gets requires_grad through its constructor (which checks that
    integer tensors do not ask for gradients); other tensors get it set."""
    from ..nn.parameter import Parameter
    if cls is Parameter:
        return Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def rebuild_tensor(cls, storage, metadata):
    storage_offset, size, stride, requires_grad = metadata
    return _from_parameter_or_tensor(cls, _rebuild_tensor(storage, storage_offset, size, stride),
                                     requires_grad)


def rebuild_meta_tensor(cls, size, stride, offset, dtype, storage_nbytes, requires_grad):
    storage = TypedStorage(wrap_storage=UntypedStorage(storage_nbytes, device="meta"),
                           dtype=dtype, _internal=True)
    return _from_parameter_or_tensor(cls, _rebuild_tensor(storage, offset, size, stride),
                                     requires_grad)


def reduce_tensor(tensor):
    """A tensor crosses as its storage (shared) plus its geometry; autograd history
    cannot cross, so only leaves may require grad."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue).")
    storage = tensor.untyped_storage()
    if storage.device.type == "meta":
        return rebuild_meta_tensor, (type(tensor), tensor.size(), tensor.stride(),
                                     tensor.storage_offset(), tensor.dtype, storage.nbytes(),
                                     tensor.requires_grad)
    metadata = (tensor.storage_offset(), tensor.size(), tensor.stride(), tensor.requires_grad)
    typed = TypedStorage(wrap_storage=storage, dtype=tensor.dtype, _internal=True)
    return rebuild_tensor, (type(tensor), typed, metadata)


def rebuild_storage_fd(cls, df, nbytes):
    fd = df.detach()
    storage = shared_cache.get(fd_id(fd))
    if storage is not None:       # already mapped here: the same storage object
        os.close(fd)
        return storage
    storage = cls._new_shared_fd_cpu(fd, nbytes)
    shared_cache[fd_id(fd)] = storage
    return storage


def rebuild_storage_empty(cls):
    return cls()


def reduce_storage(storage):
    if storage.device.type == "meta":
        raise RuntimeError("Cannot pickle meta storage; try pickling a meta tensor instead")
    if storage.nbytes() == 0:     # nothing to map
        return rebuild_storage_empty, (type(storage),)
    fd, nbytes = storage._share_fd_cpu_()
    shared_cache[fd_id(fd)] = storage
    return rebuild_storage_fd, (type(storage), reduction.DupFd(fd), nbytes)


def rebuild_typed_storage(storage, dtype):
    return TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)


def reduce_typed_storage(storage):
    return rebuild_typed_storage, (storage._untyped_storage, storage.dtype)


def rebuild_typed_storage_child(storage, storage_type):
    return storage_type(wrap_storage=storage, _internal=True)


def reduce_typed_storage_child(storage):
    """``torch.FloatStorage`` & co keep their class."""
    return rebuild_typed_storage_child, (storage._untyped_storage, type(storage))


def init_reductions() -> None:
    from ..nn.parameter import Parameter
    reduction.register(UntypedStorage, reduce_storage)
    reduction.register(TypedStorage, reduce_typed_storage)
    for storage_class in LEGACY_STORAGE_CLASSES.values():
        reduction.register(storage_class, reduce_typed_storage_child)
    reduction.register(Tensor, reduce_tensor)
    reduction.register(Parameter, reduce_tensor)

