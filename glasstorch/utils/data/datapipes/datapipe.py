"""DataPipe base classes (torch/utils/data/datapipes/datapipe.py).

A DataPipe is a dataset built by chaining steps, each step a small class:

    IterableWrapper(range(10)).map(f).filter(g).batch(4)

``IterDataPipe`` (an ``IterableDataset``) streams items; ``MapDataPipe`` (a
``Dataset``) is indexed.  ``functional_datapipe("map")`` registers a class in
the base class's ``functions`` table, and ``dp.map(...)`` (looked up by
``__getattr__``) calls ``Mapper(dp, ...)``.  An ``IterDataPipe`` allows one
valid iterator at a time (see ``_hook_iterator``).  ``repr``/``str`` show the
class name.  The ``*_hook`` class attributes let ``graph.traverse_dps`` pickle a
pipeline to find the DataPipes it is made of.
"""
from __future__ import annotations

import functools
import pickle
from typing import Callable, Iterable, Iterator, TypeVar

from ..dataset import Dataset, IterableDataset
from ._hook_iterator import _SnapshotState
from ._typing import _DataPipeMeta, _IterDataPipeMeta
from .utils.common import (_deprecation_warning, _import_dill, _iter_deprecated_functional_names,
                           _map_deprecated_functional_names)

__all__ = ["DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe"]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)

# functional forms whose result is never traced as a DataFrame pipe
UNTRACABLE_DATAFRAME_PIPES = ["batch", "groupby", "_dataframes_as_tuples", "trace_as_dataframe"]


class DataChunk(list[_T]):
    """A batch made by ``batch``/``groupby``: a list that keeps its items."""

    def __init__(self, items: Iterable[_T]) -> None:
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self) -> Iterator[_T]:
        yield from super().__iter__()

    def raw_iterator(self) -> Iterator[_T]:
        yield from self.items


def _functional_attribute(owner, datapipe, attribute_name, deprecated):
    """``datapipe.<name>``: the registered function bound to ``datapipe``."""
    if attribute_name not in owner.functions:
        # (PyTorch's message lacks the closing quote)
        raise AttributeError(
            f"'{datapipe.__class__.__name__}' object has no attribute '{attribute_name}")
    if attribute_name in deprecated:
        _deprecation_warning(**deprecated[attribute_name])
    f = owner.functions[attribute_name]
    function = functools.partial(f, datapipe)
    functools.update_wrapper(wrapper=function, wrapped=f, assigned=("__doc__",))
    return function


def _register_as_function(owner, function_name, class_function, cls_to_register, *bound):
    """Store ``partial(class_function, cls_to_register, *bound)`` as ``owner.functions[name]``."""
    if function_name in owner.functions:
        raise Exception(  # noqa: TRY002  (PyTorch's type)
            f"Unable to add DataPipe function name {function_name} as it is already taken")
    function = functools.partial(class_function, cls_to_register, *bound)
    functools.update_wrapper(wrapper=function, wrapped=cls_to_register, assigned=("__doc__",))
    owner.functions[function_name] = function


def _hooked_state(owner, state):
    """``state`` as pickled: passed through ``owner.getstate_hook`` while graph
    traversal sets one."""
    hook = owner.getstate_hook
    return hook(state) if hook is not None else state


class _DataPipeHooks:
    """What both DataPipe kinds share: the function table's use, the pickling
    hooks of graph traversal, and the class-name ``repr``.  Each kind keeps its own
    ``functions`` and hooks (class attributes of ``IterDataPipe``/``MapDataPipe``)."""

    def __getstate__(self):
        return _hooked_state(self._hook_owner(), self.__dict__)

    def __reduce_ex__(self, *args, **kwargs):
        hook = self._hook_owner().reduce_ex_hook
        if hook is not None:
            try:
                return hook(self)
            except NotImplementedError:
                pass
        return super().__reduce_ex__(*args, **kwargs)

    @classmethod
    def register_function(cls, function_name, function) -> None:
        cls.functions[function_name] = function

    @classmethod
    def set_getstate_hook(cls, hook_fn) -> None:
        owner = cls._hook_owner()
        if owner.getstate_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing getstate_hook")
        owner.getstate_hook = hook_fn

    @classmethod
    def set_reduce_ex_hook(cls, hook_fn) -> None:
        owner = cls._hook_owner()
        if owner.reduce_ex_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing reduce_ex_hook")
        owner.reduce_ex_hook = hook_fn

    def __repr__(self) -> str:
        if self.repr_hook is not None:
            return self.repr_hook(self)
        return str(self.__class__.__qualname__)

    def __str__(self) -> str:
        if self.str_hook is not None:
            return self.str_hook(self)
        return str(self.__class__.__qualname__)

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions.keys())


class IterDataPipe(_DataPipeHooks, IterableDataset[_T_co], metaclass=_IterDataPipeMeta):
    """Iterable-style DataPipe: subclasses define ``__iter__`` and, if they keep
    state between passes, ``reset()`` (called whenever a new iterator starts).
    Creating a second iterator invalidates the first."""

    functions: dict[str, Callable] = {}
    reduce_ex_hook: Callable | None = None
    getstate_hook: Callable | None = None
    str_hook: Callable | None = None
    repr_hook: Callable | None = None
    _valid_iterator_id: int | None = None
    _number_of_samples_yielded: int = 0
    _snapshot_state: _SnapshotState = _SnapshotState.NotStarted
    _fast_forward_iterator: Iterator | None = None

    @staticmethod
    def _hook_owner():
        return IterDataPipe

    def __iter__(self) -> Iterator[_T_co]:
        return self

    def __getattr__(self, attribute_name):
        return _functional_attribute(IterDataPipe, self, attribute_name,
                                     _iter_deprecated_functional_names)

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register,
                                      enable_df_api_tracing=False) -> None:
        _register_as_function(cls, function_name, _make_iter_pipe, cls_to_register,
                              function_name, enable_df_api_tracing)

    def reset(self) -> None:
        """Return to the initial state; a no-op unless a subclass keeps buffers or
        counters.  Called each time an iterator is created."""


def _make_iter_pipe(cls, function_name, enable_df_api_tracing, source_dp, *args, **kwargs):
    """``source_dp.<function_name>(...)``: ``cls(source_dp, ...)``, traced as a
    DataFrame pipe when asked to or when the source is one."""
    result_pipe = cls(source_dp, *args, **kwargs)
    if isinstance(result_pipe, IterDataPipe) and \
            (enable_df_api_tracing or isinstance(source_dp, DFIterDataPipe)) and \
            function_name not in UNTRACABLE_DATAFRAME_PIPES:
        result_pipe = result_pipe.trace_as_dataframe()
    return result_pipe


class DFIterDataPipe(IterDataPipe):
    """An ``IterDataPipe`` of DataFrames."""

    def _is_dfpipe(self) -> bool:
        return True


class MapDataPipe(_DataPipeHooks, Dataset[_T_co], metaclass=_DataPipeMeta):
    """Map-style DataPipe: subclasses define ``__getitem__`` and usually ``__len__``."""

    functions: dict[str, Callable] = {}
    reduce_ex_hook: Callable | None = None
    getstate_hook: Callable | None = None
    str_hook: Callable | None = None
    repr_hook: Callable | None = None

    @staticmethod
    def _hook_owner():
        return MapDataPipe

    def __getattr__(self, attribute_name):
        return _functional_attribute(MapDataPipe, self, attribute_name,
                                     _map_deprecated_functional_names)

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register) -> None:
        _register_as_function(cls, function_name, _make_map_pipe, cls_to_register)


def _make_map_pipe(cls, source_dp, *args, **kwargs):
    return cls(source_dp, *args, **kwargs)


class _DataPipeSerializationWrapper:
    """What the DataLoader keeps of a DataPipe: pickles it with ``pickle``, or with
    ``dill`` (when installed) where ``pickle`` fails (lambdas)."""

    def __init__(self, datapipe) -> None:
        self._datapipe = datapipe

    def __getstate__(self):
        try:
            return pickle.dumps(self._datapipe), False
        except Exception:
            dill = _import_dill()
            if dill is None:
                raise
            return dill.dumps(self._datapipe), True

    def __setstate__(self, state):
        value, use_dill = state
        self._datapipe = _import_dill().loads(value) if use_dill else pickle.loads(value)

    def __len__(self) -> int:
        try:
            return len(self._datapipe)
        except Exception as e:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length") from e


class _IterDataPipeSerializationWrapper(_DataPipeSerializationWrapper, IterDataPipe):
    def __init__(self, datapipe) -> None:
        super().__init__(datapipe)
        self._datapipe_iter = None

    def __iter__(self):
        self._datapipe_iter = iter(self._datapipe)
        return self

    def __next__(self):
        if self._datapipe_iter is None:
            raise AssertionError(
                "Iterator has not been initialized; call __iter__() before __next__()")
        return next(self._datapipe_iter)


class _MapDataPipeSerializationWrapper(_DataPipeSerializationWrapper, MapDataPipe):
    def __getitem__(self, idx):
        return self._datapipe[idx]
