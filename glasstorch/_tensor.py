"""The Tensor class (c10::TensorImpl plus torch.Tensor's Python surface).

A tensor is (storage, sizes, strides, storage_offset, dtype, device, key set)
plus autograd metadata.  This module knows no operator: the op registry
(``glasstorch._ops.registry``) installs methods such as ``add``, ``view`` and
``__add__`` when it loads the declarations, so imports run one way, downward.

What lives here is what PyTorch answers from the TensorImpl without calling an
operator: sizes, strides, contiguity, data pointers, numpy interop.
"""
from __future__ import annotations

import math
from copy import deepcopy as _deepcopy

import numpy as np

from ._core import dispatch_key as dk
from ._core import dtype as dt
from ._core.layout import channels_last, channels_last_3d, sparse_coo, sparse_csr, strided
from ._core.storage import TypedStorage, UntypedStorage, warn_typed_storage_removal
from ._core.tls import state as _tls, SUBCLASSES_DISABLED as _SUBCLASSES_DISABLED, overrides

__all__ = ["Tensor", "Size", "contiguous_strides", "channels_last_strides", "keys_for_device"]


class Size(tuple):
    """``torch.Size``: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, item):
        result = tuple.__getitem__(self, item)
        return Size(result) if isinstance(item, slice) else result

    # Internals keep plain tuples (``Tensor._shape``); only the public API
    # (``.shape``, ``.size()``) hands out Size objects.

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))


_CONTIGUOUS_STRIDES: dict = {}


def contiguous_strides(shape) -> tuple:
    """Row-major strides: ``stride[i] = prod(shape[i+1:])`` (size-0/1 dims use 1 as factor)."""
    hit = _CONTIGUOUS_STRIDES.get(shape)
    if hit is not None:
        return hit
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= max(shape[i], 1)
    strides = tuple(strides)
    if len(_CONTIGUOUS_STRIDES) < 4096:
        _CONTIGUOUS_STRIDES[tuple(shape)] = strides
    return strides


def channels_last_strides(shape) -> tuple:
    """NHWC order for a 4-d (N, C, H, W) shape: strides (C*H*W, 1, W*C, C)."""
    if len(shape) == 4:
        n, c, h, w = (max(s, 1) for s in shape)
        return (h * w * c, 1, w * c, c)
    if len(shape) == 5:  # channels_last_3d
        n, c, d, h, w = (max(s, 1) for s in shape)
        return (d * h * w * c, 1, h * w * c, w * c, c)
    raise RuntimeError("required rank 4 tensor to use channels_last format")


def _keys_for(backend: str, autograd: bool) -> int:
    bits = dk.key_bits(dk.DispatchKey[backend])
    if autograd:
        bits |= dk.ADINPLACEORVIEW | dk.key_bits(dk.DispatchKey["Autograd" + backend])
    bits |= dk.AUTOCAST_FOR_BACKEND.get(backend.lower(), 0)
    return bits


_KEYS = {(t, g): _keys_for(b, g) for t, b in (("cpu", "CPU"), ("cuda", "CUDA"), ("meta", "Meta"))
         for g in (True, False)}


def keys_for_device(device_type: str, inference: bool = False) -> int:
    """The key set PyTorch gives a fresh tensor (pytorch-facts §1.2): backend,
    ADInplaceOrView, Autograd<B>, Autocast<B>; inference tensors lack the two
    autograd keys."""
    return _KEYS[device_type, not inference]


class Tensor:
    """``torch.Tensor``.  Internals are slots; a ``__dict__`` holds what users attach
    (``t.name = ...``, ``mark_dynamic``), as a torch tensor allows."""

    __slots__ = ("_storage", "_shape", "_stride", "_offset", "dtype", "device", "_keys",
                 "_array", "_contiguous", "_base", "_version_counter", "_autograd_meta",
                 "__weakref__", "__dict__")

    # Set by glasstorch._tensor_str (printing is a frontend concern).
    _repr_impl = None

    def __new__(cls, *args, **kwargs):
        # ``torch.Tensor(data)`` / ``torch.Tensor(2, 3)``: the legacy constructor,
        # installed by the factories module.
        return cls._legacy_new(cls, *args, **kwargs)

    # -- construction (no operator: these only describe memory) -------------------

    @classmethod
    def _make(cls, storage, shape, stride, offset, dtype, device, keys):
        """Build a tensor over ``storage``; every op result is made here."""
        self = _new(cls)
        self._storage = storage
        self._shape = shape if type(shape) is tuple else tuple(shape)
        self._stride = stride
        self._contiguous = None
        self._offset = offset
        self.dtype = dtype
        self.device = device
        self._keys = keys
        self._array = None
        self._base = None
        self._version_counter = None
        self._autograd_meta = None
        return self

    @classmethod
    def _from_array(cls, array: np.ndarray, dtype, device):
        """A tensor whose storage is ``array`` (already counted by the allocator).

        The array must be C-contiguous; it becomes both the storage's bytes and
        this tensor's cached view.  (Every fresh CPU output is made here, so it is
        written flat rather than through ``_make``.)
        """
        shape = array.shape
        self = _new(cls)
        self._storage = _wrap_storage(array, device, _cpu_allocator)
        self._shape = shape
        self._stride = _CONTIGUOUS_STRIDES.get(shape) or contiguous_strides(shape)
        self._contiguous = True
        self._offset = 0
        self.dtype = dtype
        self.device = device
        self._keys = _CPU_KEYS_INFERENCE if _tls.inference_mode else _CPU_KEYS
        self._array = array
        self._base = None
        self._version_counter = None
        self._autograd_meta = None
        return self

    def as_subclass(self, cls):
        """``self.alias()`` (a dispatched view: AliasBackward0 when self requires
        grad) as an instance of ``cls``: no copy, no new storage."""
        from ._dispatcher.dispatcher import ops     # (the dispatcher imports this module)
        view = ops.aten.alias.default(self)
        cls._note_instance()
        out = cls._make(view._storage, view._shape, view._stride, view._offset, view.dtype,
                        view.device, view._keys | cls._python_keys)
        out._array = view._array
        out._base = view._base
        out._version_counter = view._version_counter
        out._autograd_meta = view._autograd_meta
        return out

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        """A ``cls`` instance aliasing ``data`` with no history (shared storage and
        version counter, as ``detach()``): how ``Parameter(t)`` is built."""
        cls._note_instance()
        out = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype,
                        data.device, data._keys | cls._python_keys)
        out._array = data._array
        out._version_counter = version_counter(data)
        if require_grad:
            if data.dtype.category < dt.FLOATING:
                raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                                   "gradients")
            out.requires_grad_(True)
        return out

    @staticmethod
    def _make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None,
                               dtype=None, layout=strided, device=None, pin_memory=False,
                               requires_grad=False, dispatch_sizes_strides_policy=None,
                               dispatch_device=False, dispatch_layout=False,
                               _extra_dispatch_keys=None, storage_size=None):
        """A ``cls`` instance with metadata and no data: its storage has no bytes
        (``data_ptr()`` is 0), so every op on it must be answered by ``cls``'s
        ``__torch_dispatch__``, which the Python key routes it to."""
        from ._core.device import device as Device
        from .fx.experimental.symbolic_shapes import hint_int
        size = tuple(map(_size_value, size))       # (symbolic sizes stay SymInts)
        stride = tuple(map(_size_value, strides)) if strides is not None else \
            contiguous_strides(size)
        dtype = dtype if dtype is not None else dt.get_default_dtype()
        dev = Device(device) if device is not None else Device("cpu")
        keys = keys_for_device(dev.type) | cls._python_keys | \
            (dk.DispatchKeySet(_extra_dispatch_keys).repr if _extra_dispatch_keys else 0)
        sizes, strides_now = tuple(map(hint_int, size)), tuple(map(hint_int, stride))
        nbytes = storage_size if storage_size is not None else \
            (1 + sum((n - 1) * st for n, st in zip(sizes, strides_now)) if all(sizes) else 0) * \
            dtype.itemsize
        storage = UntypedStorage._meta(hint_int(nbytes))
        storage.device = dev
        cls._note_instance()
        out = cls._make(storage, size, stride, _size_value(storage_offset or 0), dtype, dev, keys)
        if requires_grad:
            out.requires_grad_(True)
        return out

    # -- Python extension points (torch/_tensor.py, torch/overrides.py) -------------

    def __init_subclass__(cls, **kwargs):
        """A subclass defining ``__torch_dispatch__`` gets the Python keys on every
        instance; one defining a live ``__torch_function__`` turns on the
        override check of public functions (see ``_dispatcher/torch_function.py``)."""
        super().__init_subclass__(**kwargs)
        dispatch = getattr(cls.__torch_dispatch__, "__func__", cls.__torch_dispatch__)
        cls._python_keys = 0 if dispatch is _disabled_torch_dispatch_impl else \
            dk.PYTHON | dk.PYTHON_TLS_SNAPSHOT
        function = getattr(cls.__torch_function__, "__func__", cls.__torch_function__)
        cls._overrides_functions = function is not _disabled_torch_function_impl

    _python_keys = 0
    _overrides_functions = False

    @classmethod
    def _note_instance(cls) -> None:
        """The first instance of an overriding class turns the override check on
        (defining a class alone costs nothing: FakeTensor exists from import)."""
        if cls._overrides_functions and not overrides.subclasses:
            overrides.subclasses = True
            overrides.refresh()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default handler: run ``func`` with subclass handling off, then make
        tensor results instances of ``cls`` (so a subclass survives ``+``,
        ``.t()`` ...); NotImplemented if some overriding type isn't a base of cls."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        previous = _tls.torch_function
        _tls.torch_function = max(previous, _SUBCLASSES_DISABLED)
        try:
            result = func(*args, **kwargs)
        finally:
            _tls.torch_function = previous
        if _is_nowrap(func):
            return result
        return _convert(result, cls)

    def __deepcopy__(self, memo):
        """``copy.deepcopy``: new storage (one per original storage within a memo,
        so views stay views of one another), same geometry, requires_grad and grad."""
        if id(self) in memo:
            return memo[id(self)]
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                "be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001")
        if self._keys & dk.SPARSE:      # (PyTorch clones a COO tensor)
            out = self.detach().clone()
        elif self._keys & dk.SPARSE_CSR:
            raise NotImplementedError("Cannot access storage of SparseCsrTensorImpl")
        else:
            storage = memo.get(id(self._storage))
            if storage is None:
                storage = memo[id(self._storage)] = _clone_storage(self._storage)
            out = type(self)._make(storage, self._shape, self._stride, self._offset, self.dtype,
                                   self.device, self._keys)
        if self.requires_grad:
            out.requires_grad_(True)
        if self.grad is not None:
            out.grad = self.grad.__deepcopy__(memo)
        state = getattr(self, "__dict__", None)
        if state:
            out.__dict__.update({k: _deepcopy(v, memo) for k, v in state.items()})
        memo[id(self)] = out
        return out

    # -- the numpy view the kernels compute on ------------------------------------

    def _np(self) -> np.ndarray:
        """Zero-copy array over this tensor's bytes, built from (sizes, strides,
        offset, dtype) and cached: the CPU kernels' view of the tensor."""
        array = self._array
        data = self._storage._data
        owner = data if data is None or data.base is None else data.base  # numpy collapses bases
        if array is None or (array is not owner and array.base is not owner):
            # (re)build: first use, or the storage was reallocated by resize_ after
            # this view was cached (aliases must see the new bytes)
            array = self._array = _strided_view(self)
        return array

    # -- metadata ---------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._shape)
        return self._shape[_wrap_dim(dim, len(self._shape))]

    def stride(self, dim=None):
        if self._keys & dk.SPARSE_CSR:    # (NoStrides: what PyTorch raises)
            raise RuntimeError(self._stride.message)
        if dim is None:
            return self._stride
        return self._stride[_wrap_dim(dim, len(self._shape))]

    def storage_offset(self) -> int:
        return self._offset

    def dim(self) -> int:
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        return math.prod(self._shape)

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    @property
    def layout(self):
        keys = self._keys
        if keys & dk.SPARSE:
            return sparse_coo
        return self._storage.layout if keys & dk.SPARSE_CSR else strided

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    @property
    def is_sparse(self) -> bool:
        """A COO tensor (SparseCPU ...): ``is_sparse`` is False for CSR, as in PyTorch."""
        return bool(self._keys & dk.SPARSE)

    @property
    def is_sparse_csr(self) -> bool:
        """A CSR tensor (False for the other compressed layout, CSC, as in PyTorch)."""
        return bool(self._keys & dk.SPARSE_CSR) and self._storage.layout is sparse_csr

    def to_sparse_coo(self):
        """The COO form (torch/_tensor.py's ``to_sparse()`` spelled by layout)."""
        return self.to_sparse()

    @property
    def is_quantized(self) -> bool:
        return False

    def is_floating_point(self) -> bool:
        return self.dtype.category == dt.FLOATING

    def is_complex(self) -> bool:
        return self.dtype.category == dt.COMPLEX

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def is_contiguous(self, memory_format=None) -> bool:
        """True iff strides are the canonical ones for ``memory_format``
        (size-1 dims may have any stride, as in PyTorch); a compressed sparse
        tensor has no strides to judge and raises."""
        if self._keys & dk.SPARSE_CSR:
            raise RuntimeError(self._stride.message.replace("strides", "is_contiguous"))
        if memory_format is channels_last or memory_format is channels_last_3d:
            want_dim = 4 if memory_format is channels_last else 5
            if len(self._shape) != want_dim:
                return False
            return _strides_match(self._shape, self._stride, channels_last_strides(self._shape))
        return self._is_contiguous()

    def _is_contiguous(self) -> bool:
        """Row-major contiguity, cached (metadata changes go through _set_sizes_strides)."""
        c = self._contiguous
        if c is None:
            c = self._contiguous = _is_contiguous(self._shape, self._stride)
        return c

    def _set_sizes_strides(self, shape, stride, offset=None) -> None:
        """Change this tensor's metadata in place (resize_, transpose_, as_strided_ ...),
        dropping what was cached from the old metadata."""
        self._shape = tuple(shape)
        self._stride = tuple(stride)
        if offset is not None:
            self._offset = offset
        self._contiguous = None
        self._array = None

    def is_non_overlapping_and_dense(self) -> bool:
        """(False for a sparse tensor, as its TensorImpl keeps it.)"""
        if self._keys & (dk.SPARSE | dk.SPARSE_CSR):
            return False
        return _non_overlapping_and_dense(self._shape, self._stride)

    def untyped_storage(self) -> UntypedStorage:
        if self._keys & (dk.SPARSE | dk.SPARSE_CSR):    # its parts are in the slot instead
            impl = "SparseTensorImpl" if self._keys & dk.SPARSE else "SparseCsrTensorImpl"
            raise NotImplementedError(f"Cannot access storage of {impl}")
        return self._storage

    def share_memory_(self):
        """Move the storage into shared memory (a no-op if it is there already), so
        that sending the tensor to another process shares it instead of copying;
        every view of the storage follows.  Shared tensors cannot grow."""
        self._storage.share_memory_()
        return self

    def is_shared(self) -> bool:
        return self._storage.is_shared()

    def storage(self) -> TypedStorage:
        """The deprecated typed view of ``untyped_storage()`` (warns once, as PyTorch)."""
        warn_typed_storage_removal()
        return TypedStorage(wrap_storage=self._storage, dtype=self.dtype, _internal=True)

    def data_ptr(self) -> int:
        base = self._storage.data_ptr()
        return base + self._offset * self.dtype.itemsize if base else 0

    def _is_view(self) -> bool:
        return self._base is not None

    def _dispatch_key_set(self):
        """The spelling the seeds use; real PyTorch only has
        ``torch._C._dispatch_key_set(t)``, which we also provide."""
        return dk.DispatchKeySet(self._keys)

    # -- autograd metadata (c10's AutogradMeta: absent until a tensor needs it) ----

    def _meta_for_write(self) -> "AutogradMeta":
        meta = self._autograd_meta
        if meta is None:
            meta = self._autograd_meta = AutogradMeta()
        return meta

    @property
    def requires_grad(self) -> bool:
        meta = self._autograd_meta
        return meta is not None and meta.requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        self._meta_for_write().requires_grad = bool(value)

    @property
    def grad(self):
        meta = self._autograd_meta
        return None if meta is None else meta.grad

    @grad.setter
    def grad(self, value) -> None:
        self._meta_for_write().grad = value

    @property
    def grad_fn(self):
        meta = self._autograd_meta
        return None if meta is None else meta.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    # -- leaving the tensor world -------------------------------------------------

    def numpy(self, *, force=False) -> np.ndarray:
        """Zero-copy on CPU: writes through the array are seen by the tensor."""
        if self._keys & dk.PYTHON:
            raise RuntimeError(".numpy() is not supported for tensor subclasses.")
        if self._keys & (dk.SPARSE | dk.SPARSE_CSR):
            name = "Sparse" if self._keys & dk.SPARSE else "SparseCsr"
            raise TypeError(f"can't convert {name} layout tensor to numpy. Use Tensor.to_dense() "
                            "first.")
        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device.type} device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if self.dtype is dt.bfloat16:        # numpy has no bfloat16 of its own
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self._np()

    def __array__(self, dtype=None, copy=None):
        if self._keys & dk.PYTHON:
            raise RuntimeError(".numpy() is not supported for tensor subclasses.")
        array = self._cpu_array()
        return array.astype(dtype) if dtype is not None else array

    def _cpu_array(self) -> np.ndarray:
        """Host values for printing/tolist, whatever the device (meta has none)."""
        if self.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if self.device.type != "cpu":
            return self.cpu()._np()
        return self._np()

    def tolist(self):
        """Nested Python lists of Python numbers (bfloat16/float16 become floats)."""
        array = self._cpu_array()
        if self.dtype in (dt.bfloat16, dt.float16):
            array = array.astype(np.float32)
        return array.tolist()

    def __repr__(self, *, tensor_contents=None):
        return Tensor._repr_impl(self, tensor_contents=tensor_contents)

    def __format__(self, spec):
        if self.dim() == 0 and self.device.type != "meta" and type(self) is Tensor:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    __hash__ = object.__hash__

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __reduce_ex__(self, protocol):
        from .serialization import _rebuild_tensor_args
        return _rebuild_tensor_args(self)


from ._core.allocator import cpu_allocator as _cpu_allocator  # noqa: E402

_new = object.__new__
_wrap_storage = UntypedStorage._wrap
_CPU_KEYS = _KEYS["cpu", True]
_CPU_KEYS_INFERENCE = _KEYS["cpu", False]


# c10's ``is_wrapped_number`` flag, kept beside the tensors (they have fixed slots):
# id of a 0-dim tensor that stands for a Python number -> that number.  Only
# tensors that live for the whole process are entered (autograd's cached ones),
# so an id is never reused.  ``__torch_dispatch__`` handlers get the number back.
wrapped_numbers: dict = {}


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """``torch._C._disabled_torch_function_impl``: assigned as a class's
    ``__torch_function__``, it opts the class out of the protocol (Parameter does)."""
    previous = _tls.torch_function
    _tls.torch_function = max(previous, _SUBCLASSES_DISABLED)
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _tls.torch_function = previous


def _disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    """``torch._C._disabled_torch_dispatch_impl``: a class without a handler of its own."""
    return NotImplemented


Tensor.__torch_dispatch__ = _disabled_torch_dispatch_impl


def _is_nowrap(func) -> bool:
    """``torch.overrides.get_default_nowrap_functions``: getters whose result keeps
    its identity (``x.grad`` is the stored tensor, not a converted copy)."""
    return func == Tensor._base.__get__ or func == Tensor.grad.__get__


def _convert(value, cls):
    """Tensor results (also inside tuples and lists) become ``cls`` instances."""
    if isinstance(value, Tensor) and not isinstance(value, cls):
        return value.as_subclass(cls)
    if isinstance(value, (tuple, list)):
        converted = [_convert(v, cls) for v in value]
        if type(value) is list or type(value) is tuple:
            return type(value)(converted)
        if hasattr(value, "_make"):                  # a namedtuple
            return value._make(converted)
        return type(value)(converted)               # torch.return_types.*
    return value


def _clone_storage(storage) -> UntypedStorage:
    """A copy of ``storage``'s bytes (meta storage: just the size)."""
    if storage._data is None:
        return UntypedStorage._meta(storage._nbytes)
    array = _cpu_allocator.allocate(storage._data.shape, storage._data.dtype)
    array[...] = storage._data
    return _wrap_storage(array, storage.device, _cpu_allocator)


def is_tensor_subclass_like(t) -> bool:
    """ATen's ``isTensorSubclassLike``: a dispatch mode is on, or ``t``'s values
    live elsewhere (a ``__torch_dispatch__`` subclass, a BatchedTensor, a grad
    level's wrapper, a functional tensor).  Composite kernels then avoid
    in-place writes and data-dependent shortcuts, which such tensors cannot take."""
    return bool(_tls.dispatch_modes) or bool(t._keys & dk.TENSOR_SUBCLASS_LIKE)


def version_counter(t) -> list:
    """The tensor's version counter (c10::VariableVersion): a one-element list
    shared by a base, its views and ``detach()``; in-place ops bump it.  Made on
    first need, so tensors that are never viewed or modified don't pay for it."""
    vc = t._version_counter
    if vc is None:
        base = t._base
        vc = t._version_counter = version_counter(base) if base is not None else [0]
    return vc


class AutogradMeta:
    """c10's AutogradMeta: the autograd half of a tensor, created on first need
    so that tensors which never meet autograd pay nothing for it."""

    # Every tensor with autograd state has these four; the rest are class
    # defaults, stored per tensor (in its lazily made dict) only once set.
    __slots__ = ("requires_grad", "grad", "grad_fn", "output_nr", "__dict__")
    hooks = None                # tensor hooks of a leaf
    retains_grad = False
    grad_accumulator = None     # weakref to the leaf's AccumulateGrad
    post_acc_hooks = None
    attr_version = -1           # views: the version their grad_fn was made at
    creation_meta = 0           # views: CreationMeta (DEFAULT, NO_GRAD_MODE, ...)
    view_fn_name = None

    def __init__(self):
        self.requires_grad = False   # leaf flag; also True once the tensor has a grad_fn
        self.grad = None
        self.grad_fn = None
        self.output_nr = 0


def _wrap_dim(dim, ndim):
    """Negative dims count from the end; out-of-range raises PyTorch's IndexError."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        if hasattr(dim, "__index__"):
            dim = dim.__index__()
        else:
            raise TypeError(f"dim must be int, not {type(dim).__name__}")
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if dim < lo or dim > hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {dim})")
    return dim + (ndim or 1) if dim < 0 else dim  # a 0-d tensor wraps as if 1-d


def _strides_match(shape, stride, expected) -> bool:
    return all(s == e or n == 1 for n, s, e in zip(shape, stride, expected))


def _is_contiguous(shape, stride) -> bool:
    """Row-major contiguity; over symbolic sizes the comparisons guard, as
    PyTorch's check_contiguous_sizes_strides does (a mask sliced ``[:T, :T]``
    guards ``T != size``)."""
    if 0 in shape:  # an empty tensor is contiguous whatever its strides
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(stride)):
        if n == 0:
            return True
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def _non_overlapping_and_dense(shape, stride) -> bool:
    """Some permutation of the dims is contiguous (PyTorch's
    ``is_non_overlapping_and_dense``)."""
    if len(shape) == 1:
        return shape[0] < 2 or stride[0] == 1
    order = sorted(range(len(shape)), key=lambda i: (stride[i], shape[i]))
    expected = 1
    for i in order:
        if shape[i] == 1:
            continue
        if stride[i] != expected:
            return False
        expected *= shape[i]
    return True


# What a kernel that reads a meta (or fake) tensor's data raises, as ATen's
# data_ptr check words it.
NO_DATA_MESSAGE = (
    "The tensor has a non-zero number of elements, but its data is not allocated yet.\n"
    "If you're using torch.compile/export/fx, it is likely that we are erroneously tracing "
    "into a custom kernel. To fix this, please wrap the custom kernel into an opaque custom "
    "op. Please see the following for details: "
    "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html\n"
    "If you're using Caffe2, Caffe2 uses a lazy allocation, so you will need to call "
    "mutable_data() or raw_mutable_data() to actually allocate memory.")


def _strided_view(t: Tensor) -> np.ndarray:
    storage = t._storage
    data = storage._data
    if data is None:
        raise RuntimeError(NO_DATA_MESSAGE)
    itemsize = t.dtype.itemsize
    nbytes = storage._nbytes
    needed = 0
    if all(t._shape):
        needed = (t._offset + sum((n - 1) * s for n, s in zip(t._shape, t._stride)) + 1) * itemsize
        if needed > nbytes:
            raise RuntimeError(
                f"setStorage: sizes {list(t._shape)}, strides {list(t._stride)}, storage offset "
                f"{t._offset}, and itemsize {itemsize} requiring a storage size of {needed} are "
                f"out of bounds for storage of size {nbytes}")
    return np.ndarray(t._shape, t.dtype.numpy, buffer=data,
                      offset=t._offset * itemsize if needed else 0,
                      strides=tuple(s * itemsize for s in t._stride))


def _size_value(n):
    """A size as a wrapper subclass keeps it: an int, or a SymInt as it is."""
    from .fx.experimental.sym_node import SymInt
    return n if isinstance(n, SymInt) else int(n)
