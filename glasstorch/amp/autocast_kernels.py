"""Autocast kernels: the casts autocast applies before an op runs (PyTorch's
``cached_cast`` and ``WrapFunction_`` policies in ``aten/src/ATen/autocast_mode.h``,
and the ``TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)`` registrations of
``autocast_mode.cpp``).

Every op on a list of ``policies.py`` gets one kernel at its device's Autocast
key.  Autocast sits *above* Autograd, so the kernel runs first:

    mm(a, b) with AutocastCPU enabled
      AutocastCPU kernel:  exclude AutocastCPU in this thread
                           a16 = a.to(bfloat16); b16 = b.to(bfloat16)   (aten::to -> _to_copy)
                           mm(a16, b16)        <- called again from the top
        AutogradCPU kernel: records MmBackward0 over a16, b16 (and ToCopyBackward0 for the casts)
          CPU kernel:       computes in bfloat16

Because the casts are ordinary op calls made above Autograd, the graph holds
them, and gradients flow back to the fp32 weights in fp32.
"""
from __future__ import annotations

import weakref

from .._core.dtype import float32, float64
from .._dispatcher.dispatcher import ops
from .._core.tls import state as _tls
from .._tensor import Tensor
from ..library import Library
from . import autocast_state
from .autocast_state import AUTOCAST_KEYS, cast_cache
from .policies import (APPEND_DTYPE_OVERLOAD, BANNED, BANNED_MESSAGE, FP32, FP32_APPEND_DTYPE,
                       FP32_SET_OPT_DTYPE, LOWER_PRECISION_FP, POLICIES, PROMOTE)

__all__ = ["is_eligible", "cached_cast", "make_autocast_kernel", "register_autocast_kernels"]

_to_dtype = ops.aten.to.dtype
_autocast_tls = autocast_state.state


def is_eligible(value, device_type: str) -> bool:
    """A floating-point tensor on the autocast device, and not float64."""
    return (isinstance(value, Tensor) and value.device.type == device_type
            and value.dtype.is_floating_point and value.dtype is not float64)


def cached_cast(to, value, device_type: str):
    """``value.to(to)`` if it is eligible and of another dtype, else ``value``.

    Casts of fp32 leaf weights (requires_grad, not a view) to the lower
    precision dtype are cached until the outermost ``autocast`` region exits,
    so a weight used by several ops in a forward pass is cast once."""
    if not is_eligible(value, device_type) or value.dtype is to:
        return value
    if (to is _autocast_tls.dtypes[device_type] and value.dtype is float32 and value.requires_grad
            and value.is_leaf and not value._is_view() and _autocast_tls.cache_enabled):
        hit = cast_cache.get(id(value))
        if hit is not None and hit[0]() is value:
            return hit[1]
        cast = _to_dtype(value, to)
        cast_cache[id(value)] = (weakref.ref(value), cast)
        return cast
    return _to_dtype(value, to)


# -- reading and rewriting an op's tensor arguments ----------------------------------

def _tensor_arguments(schema):
    """(position, name, is_list) of each ``Tensor``, ``Tensor?`` and ``Tensor[]``
    argument.  ``Tensor?[]`` (index_put's indices) is neither cast nor looked at,
    as in PyTorch, whose cast helpers have no overload for it."""
    return [(i, a.name, str(a.type) == "Tensor[]") for i, a in enumerate(schema.arguments)
            if str(a.type) in ("Tensor", "Tensor?", "Tensor[]")]


def _tensors_in(tensor_args, args, kwargs):
    for i, name, is_list in tensor_args:
        value = args[i] if i < len(args) else kwargs.get(name)
        if is_list:
            yield from value
        elif value is not None:
            yield value


def _map_tensors(tensor_args, args, kwargs, fn):
    """New (args, kwargs) with ``fn`` applied to every tensor argument."""
    args = list(args)
    for i, name, is_list in tensor_args:
        if i < len(args):
            args[i] = [fn(t) for t in args[i]] if is_list else fn(args[i])
        elif name in kwargs:
            kwargs[name] = [fn(t) for t in kwargs[name]] if is_list else fn(kwargs[name])
    return args, kwargs


def _promote_type(tensor_args, args, kwargs, device_type):
    """The widest floating type among the eligible tensors, starting from the lower
    precision dtype: any float32 wins; float64 tensors are ignored."""
    lower = _autocast_tls.dtypes[device_type]
    current = lower
    for t in _tensors_in(tensor_args, args, kwargs):
        if current is float64:
            raise RuntimeError("promote type is double in at::autocast::prioritize")
        if not is_eligible(t, device_type):
            continue
        if current is float32 or t.dtype is float32:
            current = float32
        elif not (current is lower and t.dtype is lower):
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _first_argument(args, kwargs, schema):
    return args[0] if args else kwargs.get(schema.arguments[0].name)


def _all_arguments(schema, args, kwargs):
    """Every argument's value in schema order, defaults filled in."""
    values = list(args)
    for a in schema.arguments[len(args):]:
        values.append(kwargs[a.name] if a.name in kwargs else a.default_value)
    return values


# -- one kernel per (op, policy, device) ----------------------------------------------

def _prepare_for(op, policy, device_type):
    """``prepare(args, kwargs) -> (op to call, args, kwargs)`` for one policy."""
    schema = op._schema
    tensor_args = _tensor_arguments(schema)

    def cast_all_to(dtype_of):
        def prepare(args, kwargs):
            to = dtype_of(args, kwargs)
            args, kwargs = _map_tensors(tensor_args, args, kwargs,
                                        lambda t: cached_cast(to, t, device_type))
            return op, args, kwargs
        return prepare

    if policy == LOWER_PRECISION_FP:
        return cast_all_to(lambda args, kwargs: _autocast_tls.dtypes[device_type])
    if policy == FP32:
        return cast_all_to(lambda args, kwargs: float32)
    if policy == PROMOTE:
        return cast_all_to(lambda args, kwargs: _promote_type(tensor_args, args, kwargs,
                                                             device_type))
    if policy == FP32_SET_OPT_DTYPE:
        dtype_args = [(i, a.name) for i, a in enumerate(schema.arguments)
                      if str(a.type) == "ScalarType?"]

        def prepare(args, kwargs):
            if is_eligible(_first_argument(args, kwargs, schema), device_type):
                args = list(args)
                for i, name in dtype_args:
                    if i < len(args):
                        if args[i] is None:
                            args[i] = float32
                    elif kwargs.get(name) is None:
                        kwargs[name] = float32
            return op, args, kwargs
        return prepare
    if policy == FP32_APPEND_DTYPE:
        base, _, overload = APPEND_DTYPE_OVERLOAD[_short_name(op)].partition(".")
        target = getattr(getattr(ops.aten, base), overload)

        def prepare(args, kwargs):
            first = _first_argument(args, kwargs, schema)
            out_type = float32 if is_eligible(first, device_type) else first.dtype
            return target, _all_arguments(schema, args, kwargs), {"dtype": out_type}
        return prepare
    raise ValueError(f"unknown autocast policy {policy!r}")


def _short_name(op) -> str:
    """``aten::norm.Scalar`` -> ``norm.Scalar`` (the spelling of policies.py)."""
    return op._name.partition("::")[2]


def make_autocast_kernel(op, policy: str, device_type: str):
    """The autocast kernel of ``op`` under ``policy`` for ``device_type``: exclude
    this device's Autocast key, cast the arguments, call the op again from the top."""
    if policy == BANNED:
        def banned(*args, **kwargs):
            raise RuntimeError(BANNED_MESSAGE)
        return banned
    prepare = _prepare_for(op, policy, device_type)
    key_bit = autocast_state.KEY_BITS[device_type]

    def autocast_kernel(*args, **kwargs):
        previous = _tls.excluded
        _tls.excluded = previous | key_bit
        try:
            target, args, kwargs = prepare(args, kwargs)
            return target(*args, **kwargs)
        finally:
            _tls.excluded = previous
    autocast_kernel.__name__ = autocast_kernel.__qualname__ = \
        f"{policy}_{_short_name(op).replace('.', '_')}_autocast_{device_type}"
    return autocast_kernel


def _overload(name: str):
    base, _, overload = name.partition(".")
    packet = getattr(ops.aten, base, None)
    return None if packet is None else packet._overloads.get(overload or "default")


def register_autocast_kernels() -> Library:
    """Register a kernel at AutocastCPU / AutocastCUDA for every listed op that
    glasstorch has (ops it lacks are skipped: they fall through when added)."""
    lib = Library("aten", "IMPL")
    for device_type, table in POLICIES.items():
        for policy, names in table.items():
            for name in names:
                op = _overload(name)
                if op is not None:
                    lib.impl(op, make_autocast_kernel(op, policy, device_type),
                             AUTOCAST_KEYS[device_type])
    return lib
