"""Untyped storage (c10::StorageImpl): a flat run of bytes on a device.

Storage knows no dtype and no shape; tensors and their views describe how to
read it.  On CPU the bytes live in a C-contiguous numpy array owned by the
storage (whatever dtype it was allocated with); a tensor's array view is built
over it with the tensor's own dtype, sizes, strides and offset:

    element (i0..in) lives at byte  itemsize * (storage_offset + sum(ik * stride_k))

Shared memory (``share_memory_()``, what ``torch.multiprocessing`` sends between
processes) keeps that layout: the numpy array is then a window on a mapped
anonymous shared file (``_SharedFile``), still counted by the CPU allocator.
"""
from __future__ import annotations

import mmap
import os
import warnings
from collections.abc import Sequence

import numpy as np

from . import dtype as dt
from .allocator import cpu_allocator, meta_allocator
from .device import device as Device

_CPU = Device("cpu")
_META = Device("meta")
_new = object.__new__


class UntypedStorage:
    """``torch.UntypedStorage``: bytes from an allocator, shared by views."""

    # ``_shared``: the _SharedFile holding the bytes, set only on shared storages (an
    # unset slot reads as not shared, so ordinary storages never pay for it)
    __slots__ = ("_data", "_nbytes", "device", "_allocator", "_ptr", "_shared", "__weakref__")

    def __init__(self, *args, device=None):
        """Public constructor: ``UntypedStorage(nbytes, device=...)`` (zeroed here,
        uninitialized in PyTorch; zero is a valid 'uninitialized'), or
        ``UntypedStorage(sequence of ints)`` (each taken modulo 256)."""
        if len(args) > 1:
            raise TypeError(
                f"torch.UntypedStorage() received an invalid combination of arguments - got "
                f"({', '.join(type(a).__name__ for a in args)}), but expected one of:\n"
                " * (*, int allocator = None, torch.device device = None)\n"
                " * (int size, *, int allocator = None, torch.device device = None)\n"
                " * (object sequence, *, int allocator = None, torch.device device = None)\n")
        data = args[0] if args else 0
        values = None
        if not isinstance(data, int):
            values = _byte_values(data)
        nbytes = len(values) if values is not None else data
        if nbytes < 0:
            raise RuntimeError("[enforce fail at alloc_cpu.cpp:98] ((ptrdiff_t)nbytes) >= 0. "
                               "alloc_cpu() seems to have been called with negative number: "
                               f"{nbytes % 2**64}")
        dev = Device(device) if device is not None else _CPU
        if dev.type == "cpu":
            self._adopt(cpu_allocator.allocate(int(nbytes), np.uint8), _CPU, cpu_allocator)
            if values is not None:
                self._data[...] = values
        elif dev.type == "meta":
            self._init_meta(int(nbytes))
        else:
            from ..cuda import _lazy_init  # raises the CUDA-unavailable error
            _lazy_init()
            raise NotImplementedError(f"storage on {dev}")

    @classmethod
    def _wrap(cls, array: np.ndarray, device, allocator) -> "UntypedStorage":
        """Storage over memory the allocator has just counted (the fast path)."""
        self = _new(cls)
        self._data = array
        self._nbytes = array.nbytes
        self.device = device
        self._allocator = allocator
        self._ptr = None
        return self

    @classmethod
    def _meta(cls, nbytes: int) -> "UntypedStorage":
        self = cls.__new__(cls)
        self._init_meta(nbytes)
        return self

    def _adopt(self, array, device, allocator):
        self._data = array
        self._nbytes = array.nbytes
        self.device = device
        self._allocator = allocator
        self._ptr = None

    def _init_meta(self, nbytes):
        self._data = None
        self._nbytes = nbytes
        self.device = _META
        self._allocator = meta_allocator
        self._ptr = 0
        meta_allocator.allocate(nbytes)

    def __del__(self):
        allocator = getattr(self, "_allocator", None)
        if allocator is not None:
            allocator.free(self._nbytes)

    # -- the bytes ---------------------------------------------------------------

    def _bytes(self) -> np.ndarray:
        """The storage as a flat uint8 array (zero-copy)."""
        return self._data.reshape(-1).view(np.uint8)

    def nbytes(self) -> int:
        return self._nbytes

    size = nbytes

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        if self._ptr is None:
            self._ptr = self._data.__array_interface__["data"][0] if self._nbytes else 0
        return self._ptr

    def tolist(self):
        _check_has_data(self)
        return self._bytes().tolist()

    def __len__(self):
        return self._nbytes

    def __getitem__(self, i):
        return int(self._bytes()[i])

    def __setitem__(self, i, value):
        self._bytes()[i] = value

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    def __reduce__(self):
        """Plain pickling (``pickle``, ``multiprocessing``) carries the bytes
        (``torch.save`` instead writes them to their own record)."""
        payload = self._nbytes if self._data is None else self._bytes().tobytes()
        return _untyped_storage_from, (payload, str(self.device))

    def _resize_(self, nbytes: int) -> None:
        """Grow in place, keeping the old bytes (``resize_`` on a tensor uses this)."""
        if nbytes <= self._nbytes:
            return
        if self._data is None:
            meta_allocator.resize(self._nbytes, nbytes)
            self._nbytes = nbytes
            return
        # memory we don't own (from_numpy) or a mapped shared file: a fixed size
        if self._allocator is None or self.is_shared():
            raise RuntimeError("Trying to resize storage that is not resizable")
        fresh = cpu_allocator.allocate(nbytes, np.uint8)
        fresh[: self._nbytes] = self._bytes()
        self._allocator.free(self._nbytes)
        self._adopt(fresh, self.device, cpu_allocator)

    # -- shared memory (torch.multiprocessing's file_descriptor strategy) ------------

    def is_shared(self) -> bool:
        return getattr(self, "_shared", None) is not None

    def share_memory_(self) -> "UntypedStorage":
        """Move the bytes into shared memory, in place (no-op if already there): views
        keep seeing them, and pickling for another process then sends a file
        descriptor instead of a copy.  glasstorch shares through file descriptors
        under either sharing-strategy name."""
        self._share_fd_cpu_()
        return self

    def _share_fd_cpu_(self) -> tuple:
        """``(fd, nbytes)`` of the shared file holding this storage, moving the bytes
        there first if needed (PyTorch's THPStorage_shareFd)."""
        if self.device.type != "cpu":
            raise RuntimeError("_share_fd_: only available on CPU")
        if not self.is_shared():
            shared = _SharedFile.create(self._nbytes)
            array = _map(shared, self._nbytes)
            array[:] = self._bytes()
            if self._allocator is not None:
                self._allocator.free(self._nbytes)
            self._adopt(array, self.device, cpu_allocator)
            self._shared = shared
        return self._shared.fd, self._nbytes

    @classmethod
    def _new_shared(cls, nbytes: int) -> "UntypedStorage":
        """A fresh storage of ``nbytes`` (zeroed) directly in shared memory."""
        return cls._new_shared_fd_cpu(_SharedFile.create(nbytes), nbytes)

    @classmethod
    def _new_shared_fd_cpu(cls, fd, nbytes: int) -> "UntypedStorage":
        """A storage over the shared file ``fd`` (a ``_SharedFile`` or a descriptor,
        e.g. received from another process, which the storage then owns)."""
        shared = fd if isinstance(fd, _SharedFile) else _SharedFile(fd)
        self = cls._wrap(_map(shared, nbytes), _CPU, cpu_allocator)
        self._shared = shared
        return self

    def __repr__(self):
        head = f"[torch.storage.UntypedStorage(device={self.device}) of size {self._nbytes}]"
        if self._data is None:
            return head
        body = "\n".join(f" {v}" for v in self._bytes().tolist())
        return body + "\n" + head if body else head


def _check_has_data(storage) -> None:
    if storage.device.type == "meta":
        raise NotImplementedError("Not available for 'meta' device type")


def _byte_values(sequence) -> np.ndarray:
    """``UntypedStorage(sequence)``'s bytes: ints, each taken modulo 256."""
    if not isinstance(sequence, (list, tuple, bytes, bytearray, str, range)):
        raise RuntimeError(f"torch.UntypedStorage(): Expected a sequence type, but got "
                           f"{type(sequence).__name__}")
    for item in sequence:
        if not isinstance(item, int):
            raise RuntimeError(
                f"torch.UntypedStorage(): tried to construct a storage from a sequence "
                f"({type(sequence).__name__}), but one of the items was of type "
                f"{type(item).__name__} instead of int")
    return np.array([v % 256 for v in sequence], dtype=np.uint8)


class _SharedFile:
    """An anonymous shared-memory file (Linux ``memfd_create``) and its descriptor:
    PyTorch's file_descriptor strategy (shm_open, unlink, keep the fd) without a
    name to leak.  Processes that hold the descriptor map the same pages; the
    memory goes back to the system once every descriptor and mapping is gone."""

    __slots__ = ("fd",)

    def __init__(self, fd: int):
        self.fd = fd

    @classmethod
    def create(cls, nbytes: int) -> "_SharedFile":
        fd = os.memfd_create("glasstorch_shared", os.MFD_CLOEXEC)
        os.ftruncate(fd, nbytes)
        return cls(fd)

    def __del__(self):
        os.close(self.fd)


def _map(shared: _SharedFile, nbytes: int) -> np.ndarray:
    """The first ``nbytes`` of ``shared`` mapped as a writable uint8 array, counted by
    the CPU allocator.  It is a view (``[:]``) of the frombuffer array, so numpy
    gives the tensors' views built on it the same base as it has: that is how
    ``Tensor._np()`` recognises its cached view as current."""
    if not nbytes:              # nothing to map: an empty array stands for the bytes
        return cpu_allocator.adopt(np.empty(0, np.uint8))
    return cpu_allocator.adopt(np.frombuffer(mmap.mmap(shared.fd, nbytes), np.uint8)[:])


def _untyped_storage_from(payload, device) -> UntypedStorage:
    """Inverse of ``UntypedStorage.__reduce__``: bytes (or, on meta, a size)."""
    if device == "meta":
        return UntypedStorage._meta(payload)
    array = cpu_allocator.allocate(len(payload), np.uint8)
    array[:] = np.frombuffer(payload, np.uint8)
    return UntypedStorage._wrap(array, _CPU, cpu_allocator)


class TypedStorage:
    """``torch.TypedStorage``: an UntypedStorage read as elements of one dtype.

    Deprecated in PyTorch but still what ``Tensor.storage()`` returns and what
    checkpoints name: ``torch.save`` records each tensor's storage under its
    legacy type name (``torch.FloatStorage`` ...).  ``size()`` counts elements.
    """

    is_sparse = False

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        """``TypedStorage(size | sequence, dtype=, device=)`` allocates (the default
        dtype when none is given); ``TypedStorage(wrap_storage=u, dtype=)`` reads
        the untyped storage ``u`` as ``dtype``."""
        if not _internal:
            warn_typed_storage_removal()
        if wrap_storage is not None:
            if args:
                raise RuntimeError(_TYPED_SIGNATURES + "No positional arguments should be given "
                                   "when using 'wrap_storage'")
            if dtype is None:
                raise RuntimeError(_TYPED_SIGNATURES + "Argument 'dtype' must be specified")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(_TYPED_SIGNATURES + "Argument 'wrap_storage' must be "
                                f"UntypedStorage, but got {type(wrap_storage)}")
            self._untyped_storage = wrap_storage
            self.dtype = dtype
            return
        if len(args) > 1:
            raise RuntimeError(_TYPED_SIGNATURES + "Too many positional arguments")
        self.dtype = dtype if dtype is not None else dt.get_default_dtype()
        data = args[0] if args else 0
        if isinstance(data, int):
            self._untyped_storage = UntypedStorage(data * self.dtype.itemsize, device=device)
            return
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        from .._creation import tensor      # (the storage layer sits below tensors)
        self._untyped_storage = tensor(list(data), dtype=self.dtype,
                                       device=device)._storage

    @property
    def device(self):
        return self._untyped_storage.device

    def _size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def size(self) -> int:
        return self._size()

    __len__ = size

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def share_memory_(self) -> "TypedStorage":
        self._untyped_storage.share_memory_()
        return self

    def _pickle_storage_type(self) -> str:
        """The legacy class name checkpoints use for this dtype (``FloatStorage``)."""
        return LEGACY_STORAGE_CLASSES[self.dtype].__name__

    def _elements(self) -> np.ndarray:
        return self._untyped_storage._bytes()[: self._size() * self.dtype.itemsize].view(
            self.dtype.numpy)

    def tolist(self):
        _check_has_data(self._untyped_storage)
        return self._elements().tolist()

    def __getitem__(self, i):
        return self._elements()[i].item()

    def __reduce__(self):
        return _typed_storage_from, (self._untyped_storage, self.dtype)

    def __repr__(self):
        head = (f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) "
                f"of size {self._size()}]")
        if self._untyped_storage._data is None:
            return head
        body = "\n".join(f" {v}" for v in self.tolist())
        return body + "\n" + head if body else head


def _typed_storage_from(untyped, dtype) -> TypedStorage:
    return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)


_TYPED_SIGNATURES = (
    "TypedStorage.__init__ received an invalid combination of arguments. Expected one of:\n"
    " * (*, torch.device device, torch.dtype dtype)\n"
    " * (int size, *, torch.device device, torch.dtype dtype)\n"
    " * (Sequence data, *, torch.device device, torch.dtype dtype)\n"
    " * (*, UntypedStorage wrap_storage, torch.dtype dtype)\n")


class _LegacyStorageMeta(type):
    """The metaclass of ``torch.FloatStorage`` & co: calling one makes a
    TypedStorage of its dtype (CPU only), and any TypedStorage of that dtype is
    an instance of it."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, TypedStorage) and obj.dtype is cls.dtype

    def __call__(cls, *args, wrap_storage=None, **kwargs):
        shown = (f"<class 'torch.{cls.__name__}'>.__new__ received an invalid combination of "
                 "arguments. Expected one of:\n * no arguments\n * (int size)\n"
                 " * (Sequence data)\n * (*, UntypedStorage wrap_storage)\n")
        for name in kwargs:
            if name not in ("device", "dtype"):
                raise TypeError(f"TypedStorage.__new__() got an unexpected keyword argument "
                                f"'{name}'")
            raise RuntimeError(shown + f"Keyword argument '{name}' cannot be specified")
        if len(args) > 1:
            raise RuntimeError(shown + "Too many positional arguments")
        if args and not isinstance(args[0], (int, Sequence)):
            raise TypeError(shown + f"Argument type not recognized: {type(args[0])}")
        warn_typed_storage_removal()
        return TypedStorage(*args, wrap_storage=wrap_storage, dtype=cls.dtype, _internal=True)


# torch.FloatStorage & co: one legacy class per dtype, with the class-level ``dtype``
# checkpoints look up when they name a storage type.
LEGACY_STORAGE_CLASSES = {
    d: _LegacyStorageMeta(d._short + "Storage", (TypedStorage,),
                          {"dtype": d, "__module__": __name__})
    for d in dt.ALL_DTYPES if d not in dt.BAREBONES_UNSIGNED    # (these have none)
}

_TYPED_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
    "be the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
    "of tensor.storage()")
_warned_typed_storage = False


def warn_typed_storage_removal(stacklevel=2) -> None:
    """PyTorch warns once per process when user code touches TypedStorage."""
    global _warned_typed_storage
    if not _warned_typed_storage:
        _warned_typed_storage = True
        warnings.warn(_TYPED_STORAGE_WARNING, UserWarning, stacklevel=stacklevel + 1)
