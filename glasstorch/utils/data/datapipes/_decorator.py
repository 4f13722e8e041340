"""DataPipe decorators (torch/utils/data/datapipes/_decorator.py).

* ``functional_datapipe(name)``: register a DataPipe class as ``dp.<name>(...)``;
* ``non_deterministic`` (on a class, or with a function of the constructor's
  arguments deciding per instance) and ``guaranteed_datapipes_determinism()``
  (while it is alive, constructing a non-deterministic DataPipe is a TypeError);
* ``argument_validation`` (constructor arguments annotated with a DataPipe class
  must be IterDataPipes whose ``type`` fits the annotation's ``type``);
* ``runtime_validation`` (each item ``__iter__`` yields must be an instance of the
  DataPipe's ``type``), switched off while a ``runtime_validation_disabled()`` lives.
"""
from __future__ import annotations

import inspect
from functools import wraps
from typing import Any, Callable, get_type_hints

from ._typing import _DataPipeMeta
from .datapipe import IterDataPipe, MapDataPipe


class functional_datapipe:
    """Class decorator: ``@functional_datapipe("map")`` makes ``dp.map(...)`` build the class."""

    name: str

    def __init__(self, name: str, enable_df_api_tracing=False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if issubclass(cls, IterDataPipe):
            if isinstance(cls, type):
                if not isinstance(cls, _DataPipeMeta):
                    raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
            elif not isinstance(cls, non_deterministic) and not (
                    hasattr(cls, "__self__") and isinstance(cls.__self__, non_deterministic)):
                # a class wrapped by non_deterministic
                raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
            IterDataPipe.register_datapipe_as_function(
                self.name, cls, enable_df_api_tracing=self.enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


_determinism: bool = False


class guaranteed_datapipes_determinism:
    """From construction until the ``with`` block ends, non-deterministic
    DataPipes refuse to be built."""

    prev: bool

    def __init__(self) -> None:
        global _determinism
        self.prev = _determinism
        _determinism = True

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        global _determinism
        _determinism = self.prev


class non_deterministic:
    """Mark an IterDataPipe class non-deterministic: ``@non_deterministic`` always,
    ``@non_deterministic(fn)`` when ``fn(*constructor args)`` returns True."""

    cls: type[IterDataPipe] | None = None
    deterministic_fn: Callable[..., bool]

    def __init__(self, arg) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError("Only `IterDataPipe` can be decorated with `non_deterministic`"
                                f", but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:    # decorating a class: this call constructs it
            if _determinism:
                raise TypeError(
                    f"{self.cls.__name__} is non-deterministic, but you set "
                    "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                    "DataPipe if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        # non_deterministic(fn) applied to the class
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError(
                f"Only `IterDataPipe` can be decorated, but {args[0].__name__} is found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs) -> IterDataPipe:
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required "
                            f"to return a boolean value, but {type(res)} is found")
        if _determinism and res:
            raise TypeError(
                f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                "'guaranteed_datapipes_determinism'. You can turn off determinism "
                "for this DataPipe if that is acceptable for your application")
        return self.cls(*args, **kwargs)


def argument_validation(f):
    """Check, at each call of ``f``, the arguments annotated with a DataPipe class."""
    signature = inspect.signature(f)
    hints = get_type_hints(f)

    @wraps(f)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for argument_name, value in bound.arguments.items():
            hint = hints.get(argument_name)
            if not isinstance(hint, _DataPipeMeta):
                continue
            if not isinstance(value, IterDataPipe):
                raise TypeError(f"Expected argument '{argument_name}' as a IterDataPipe, "
                                f"but found {type(value)}")
            if not value.type.issubtype(hint.type):
                raise TypeError(f"Expected type of argument '{argument_name}' as a subtype of "
                                f"hint {hint.type}, but found {value.type}")
        return f(*args, **kwargs)

    return wrapper


_runtime_validation_enabled: bool = True


class runtime_validation_disabled:
    """From construction until the ``with`` block ends, ``runtime_validation`` checks nothing."""

    prev: bool

    def __init__(self) -> None:
        global _runtime_validation_enabled
        self.prev = _runtime_validation_enabled
        _runtime_validation_enabled = False

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        global _runtime_validation_enabled
        _runtime_validation_enabled = self.prev


def runtime_validation(f):
    """Decorate ``__iter__``: each item must be an instance of ``self.type``."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @wraps(f)
    def wrapper(self):
        if not _runtime_validation_enabled:
            yield from f(self)
            return
        for d in f(self):
            if not self.type.issubtype_of_instance(d):
                raise RuntimeError(
                    f"Expected an instance as subtype of {self.type}, but found {d}({type(d)})")
            yield d

    return wrapper
