"""BatchedTensor: what a function under ``vmap`` sees (functorch's BatchedTensorImpl).

A BatchedTensor wraps a *physical* tensor ``value`` that has one extra
dimension, ``bdim``, holding the examples of level ``level``'s vmap.  Its own
sizes and strides are the *logical* ones: ``value``'s without ``bdim``.  It has
no bytes of its own: every op on it reaches the FuncTorchBatched key, whose
batching rule unwraps ``value``, runs the op once on the whole batch, and
wraps the result (``_functorch/batch_rules``).

    x = torch.randn(3, 5)              vmap(f)(x): f sees
    BatchedTensor(lvl=1, bdim=0, value=x)  with shape (5,)

``value`` may itself be a BatchedTensor of an outer level (nested vmap).
"""
from __future__ import annotations

from .._core import dispatch_key as dk
from .._core.dispatch_key import DispatchKey
from .._core.storage import UntypedStorage
from .._tensor import Tensor, _disabled_torch_function_impl, keys_for_device

__all__ = ["BatchedTensor", "add_batch_dim", "remove_batch_dim", "is_batched_at",
           "make_transform_tensor", "adopt_geometry"]

_BATCHED_KEY = dk.key_bits(DispatchKey.FuncTorchBatched)


class BatchedTensor(Tensor):
    """A tensor batched over ``bdim`` of ``value`` at vmap level ``level``."""

    __torch_function__ = _disabled_torch_function_impl   # a C++ tensor in PyTorch: no override

    def __repr__(self, *, tensor_contents=None):
        inner = repr(self._value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n    {inner}\n)"


def make_transform_tensor(cls, value: Tensor, shape, stride, key: int):
    """A ``cls`` tensor of the given logical geometry standing for ``value``: no
    bytes of its own (a meta storage as large as the geometry reaches, which is
    what forward AD's layout checks read), the keys of ``value``'s device plus
    ``key`` (what functorch's wrappers' C++ constructors do; the hot path of
    every batched or grad-tracked op, so built directly)."""
    extent = 1 + sum((n - 1) * st for n, st in zip(shape, stride)) if all(shape) else 0
    storage = UntypedStorage._meta((value._offset + extent) * value.dtype.itemsize)
    storage.device = value.device
    return cls._make(storage, shape, stride, value._offset, value.dtype, value.device,
                     keys_for_device(value.device.type) | key)


def adopt_geometry(tensor, other) -> None:
    """``tensor`` takes ``other``'s sizes, strides and offset: an in-place view
    (``squeeze_``, ``t_`` ...) on a transform's tensor."""
    tensor._shape, tensor._stride, tensor._offset = other._shape, other._stride, other._offset
    tensor._contiguous = None


def _make_batched(value: Tensor, bdim: int, level: int) -> BatchedTensor:
    shape, stride = value._shape, value._stride
    out = make_transform_tensor(BatchedTensor, value, shape[:bdim] + shape[bdim + 1:],
                                stride[:bdim] + stride[bdim + 1:], _BATCHED_KEY)
    out._value = value
    out._bdim = bdim
    out._level = level
    return out


def add_batch_dim(tensor: Tensor, bdim: int, level: int) -> BatchedTensor:
    """``torch._C._functorch._add_batch_dim``: ``tensor``'s dim ``bdim`` becomes
    the batch of ``level`` (a negative ``bdim`` counts from the end)."""
    if bdim < 0:
        bdim += tensor.dim()
    return _make_batched(tensor, bdim, level)


def is_batched_at(tensor, level: int) -> bool:
    return isinstance(tensor, BatchedTensor) and tensor._level == level


def remove_batch_dim(tensor, level: int, batch_size: int, out_dim: int):
    """``torch._C._functorch._remove_batch_dim``: the physical tensor with
    ``level``'s batch at ``out_dim``; a tensor not batched at ``level`` (an
    output that did not depend on the inputs) is expanded to ``batch_size``."""
    if not is_batched_at(tensor, level):
        expanded = tensor.unsqueeze(out_dim)
        sizes = list(expanded.shape)
        sizes[out_dim] = batch_size
        return expanded.expand(sizes)
    if tensor._bdim == (out_dim if out_dim >= 0 else out_dim + tensor._value.dim()):
        return tensor._value
    return tensor._value.movedim(tensor._bdim, out_dim)
