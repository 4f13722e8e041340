"""The DataPipe type system (torch/utils/data/datapipes/_typing.py).

``issubtype(left, right)`` and ``issubinstance(data, type)`` decide subtyping
over ``typing`` annotations: ``Union``s and bounded or constrained
``TypeVar``s are expanded into their members, Python's number types are
compared through their abstract classes (``bool`` < ``int`` < ``float`` <
``complex``), and generic containers compare their arguments.
``_DataPipeType`` holds one annotation; ``argument_validation`` and
``runtime_validation`` use it through a DataPipe's ``type`` attribute.

Subscripting (``IterDataPipe[int]``) is ``typing``'s generic alias, as in
PyTorch 2.13, whose metaclass leaves classes untouched and so gives DataPipes
no ``type`` attribute unless a class sets one itself.

The metaclasses: ``_DataPipeMeta`` (``MapDataPipe``) adds nothing to
``ABCMeta``; ``_IterDataPipeMeta`` wraps each ``IterDataPipe`` class's
``__iter__`` (``_hook_iterator.hook_iterator``) and ``reset`` (skipped right
after a snapshot restoration, which must survive the first ``iter()``).
"""
from __future__ import annotations

import functools
import numbers
from abc import ABCMeta
from typing import Any, Generic, TypeVar, Union, _GenericAlias, _type_repr, get_args

from ._hook_iterator import _SnapshotState, hook_iterator


class GenericMeta(ABCMeta):
    """The base metaclass of DataPipes."""


class Integer(numbers.Integral):
    """``int`` as an abstract class, so that ``bool`` is its subtype."""


class Boolean(numbers.Integral):
    """``bool`` as an abstract class."""


# Python types compared through abstract classes (bool < int < float < complex)
TYPE2ABC = {
    bool: Boolean,
    int: Integer,
    float: numbers.Real,
    complex: numbers.Complex,
    dict: dict,
    list: list,
    set: set,
    tuple: tuple,
    None: type(None),
}


def issubtype(left, right, recursive=True) -> bool:
    """Whether type ``left`` is a subtype of type ``right``: every member of a
    ``Union``/``TypeVar`` on the left must fit some member on the right."""
    left = TYPE2ABC.get(left, left)
    right = TYPE2ABC.get(right, right)
    if right is Any or left == right:
        return True
    if isinstance(right, _GenericAlias) and getattr(right, "__origin__", None) is Generic:
        return True
    if right is type(None):
        return False
    constraints = _decompose_type(right)
    if not constraints or Any in constraints:
        return True
    if left is Any:
        return False
    variants = _decompose_type(left)
    if not variants:
        return False
    return all(_issubtype_with_constraints(v, constraints, recursive) for v in variants)


def _decompose_type(t, to_list=True):
    """The member types of a ``TypeVar`` (its bound or constraints) or a ``Union``;
    any other type is ``[t]``, or ``None`` when ``to_list`` is false."""
    if isinstance(t, TypeVar):
        ts = [t.__bound__] if t.__bound__ is not None else list(t.__constraints__)
    elif getattr(t, "__origin__", None) == Union:
        ts = get_args(t)
    elif not to_list:
        return None
    else:
        ts = [t]
    return [TYPE2ABC.get(member, member) for member in ts]


def _issubtype_with_constraints(variant, constraints, recursive=True) -> bool:
    """Whether ``variant`` fits one of ``constraints``; nested ``Union``s and
    ``TypeVar``s on either side are expanded."""
    if variant in constraints:
        return True
    members = _decompose_type(variant, to_list=False)
    if members is not None:
        return all(_issubtype_with_constraints(v, constraints, recursive) for v in members)

    if getattr(variant, "__origin__", None) is not None:
        v_origin, v_args = variant.__origin__, get_args(variant) or None
    else:
        v_origin, v_args = variant, None

    for constraint in constraints:
        inner = _decompose_type(constraint, to_list=False)
        if inner is not None:
            if _issubtype_with_constraints(variant, inner, recursive):
                return True
        elif getattr(constraint, "__origin__", None) is not None:
            if v_origin == constraint.__origin__:
                if not recursive:
                    return True
                c_args = get_args(constraint) or None
                if not c_args:
                    return True
                if (v_args is not None and len(v_args) == len(c_args)
                        and all(issubtype(va, ca) for va, ca in zip(v_args, c_args))):
                    return True
        elif v_origin == constraint:    # Tuple[int] is a Tuple
            return True
    return False


def issubinstance(data, data_type) -> bool:
    """Whether the value ``data`` belongs to ``data_type``, looking into the items
    of tuples, lists, sets and dicts when the type gives their item types."""
    if not issubtype(type(data), data_type, recursive=False):
        return False
    dt_args = get_args(data_type) or None
    if isinstance(data, tuple):
        if not dt_args:
            return True
        return len(dt_args) == len(data) and all(
            issubinstance(d, t) for d, t in zip(data, dt_args))
    if isinstance(data, (list, set)):
        return not dt_args or all(issubinstance(d, dt_args[0]) for d in data)
    if isinstance(data, dict):
        if not dt_args:
            return True
        kt, vt = dt_args
        return all(issubinstance(k, kt) and issubinstance(v, vt) for k, v in data.items())
    return True


class _DataPipeType:
    """One type annotation (``param``), as a DataPipe's ``type``."""

    def __init__(self, param) -> None:
        self.param = param

    def __repr__(self) -> str:
        return _type_repr(self.param)

    def __eq__(self, other):
        if isinstance(other, _DataPipeType):
            return self.param == other.param
        return NotImplemented

    def __hash__(self):
        return hash(self.param)

    def issubtype(self, other) -> bool:
        # the Generic check reads ``other.param`` first, as PyTorch does
        if isinstance(other.param, _GenericAlias) and \
                getattr(other.param, "__origin__", None) is Generic:
            return True
        if isinstance(other, _DataPipeType):
            return issubtype(self.param, other.param)
        if isinstance(other, type):
            return issubtype(self.param, other)
        raise TypeError(f"Expected '_DataPipeType' or 'type', but found {type(other)}")

    def issubtype_of_instance(self, other) -> bool:
        return issubinstance(other, self.param)


class _DataPipeMeta(GenericMeta):
    """Metaclass of ``MapDataPipe`` (and base of ``IterDataPipe``'s)."""


class _IterDataPipeMeta(_DataPipeMeta):
    """Metaclass of ``IterDataPipe``: hooks ``__iter__`` and ``reset`` of each class."""

    def __new__(cls, name, bases, namespace, **kwargs):
        if "reset" in namespace:
            namespace["reset"] = _conditional_reset(namespace["reset"])
        if "__iter__" in namespace:
            hook_iterator(namespace)
        return super().__new__(cls, name, bases, namespace, **kwargs)


def _conditional_reset(reset_func):
    """``reset`` that runs only when not just restored from a snapshot (so a
    restored DataPipe keeps its state through the first ``iter()``)."""

    @functools.wraps(reset_func)
    def conditional_reset(*args, **kwargs) -> None:
        datapipe = args[0]
        if datapipe._snapshot_state in (_SnapshotState.Iterating, _SnapshotState.NotStarted):
            datapipe._number_of_samples_yielded = 0
            datapipe._fast_forward_iterator = None
            reset_func(*args, **kwargs)
        datapipe._snapshot_state = _SnapshotState.Iterating

    return conditional_reset
