"""Turning samples into batches (torch/utils/data/_utils/collate.py).

``default_collate(samples)`` merges a list of samples into one batch, recursing
through containers:

    tensors                 -> torch.stack(samples, 0)
    numpy arrays            -> as tensors, then stacked
    numpy scalars           -> torch.as_tensor(samples)
    float / int (and bool)  -> a float64 / int64 (bool) tensor
    str / bytes             -> the list, unchanged
    mappings                -> {key: collate([s[key] for s in samples])}
    namedtuples             -> the same namedtuple of collated fields
    other sequences         -> transposed, each position collated; tuples
                               become lists (PyTorch keeps this for backward
                               compatibility)

``default_convert(sample)`` is what a DataLoader without automatic batching
applies: numpy arrays become tensors, containers are converted inside, the
rest is left alone.

Dispatch is by ``default_collate_fn_map`` (element type -> function), which
users may extend, exactly as in PyTorch.
"""
from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from .... import Tensor, TypedStorage, UntypedStorage, as_tensor, float64, stack, tensor
from ...._tensor import contiguous_strides
from ...._utils import _rebuild_tensor
from .worker import get_worker_info

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn"]

# numpy dtype codes of strings (S, a, U) and Python objects (O): no tensor for those
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}"
)


def _rebuild_mapping(mapping, converted: dict):
    """``mapping`` with its values replaced, keeping the mapping's type when it can
    (a mutable mapping is copied then updated, so subclass attributes survive)."""
    try:
        if isinstance(mapping, collections.abc.MutableMapping):
            clone = copy.copy(mapping)
            clone.update(converted)
            return clone
        return type(mapping)(converted)
    except TypeError:     # the type cannot be copied/updated or built from a dict
        return converted


def _rebuild_sequence(sequence, converted: list):
    """``sequence``'s type holding ``converted`` (a list when that type cannot be built)."""
    try:
        if isinstance(sequence, collections.abc.MutableSequence):
            clone = copy.copy(sequence)
            for i, item in enumerate(converted):
                clone[i] = item
            return clone
        return type(sequence)(converted)
    except TypeError:     # e.g. range: neither settable nor buildable from a list
        return converted


def default_convert(data):
    """Convert numpy arrays (inside any containers) to tensors; leave the rest as is."""
    data_type = type(data)
    if isinstance(data, Tensor):
        return data
    if data_type.__module__ == "numpy" and data_type.__name__ not in ("str_", "string_"):
        if data_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):      # namedtuple
        return data_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples): a function of ``collate_fn_map`` for the
    first sample's type (exact type first, then the first key it is an instance of),
    else recurse through mappings, namedtuples and sequences."""
    elem = batch[0]
    elem_type = type(elem)

    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, collate_fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return collate_fn(batch, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: collate([d[key] for d in batch],
                                                    collate_fn_map=collate_fn_map)
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):      # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if any(len(sample) != elem_size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return collated
        return _rebuild_sequence(elem, collated)

    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    # glasstorch tensors are all dense and strided, so PyTorch's refusals of nested
    # and sparse batches have nothing to catch here.
    out = None
    if get_worker_info() is not None:
        # in a worker process, stack straight into shared memory: the batch then
        # reaches the main process without another copy
        elem = batch[0]
        shape = (len(batch), *elem.shape)
        storage = UntypedStorage._new_shared(len(batch) * elem.nbytes)
        out = _rebuild_tensor(TypedStorage(wrap_storage=storage, dtype=elem.dtype, _internal=True),
                              0, shape, contiguous_strides(shape))
    return stack(batch, 0, out=out)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,              # and np.memmap, a subclass
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,   # not string scalars
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Merge a list of samples into a batch (see the module docstring)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
