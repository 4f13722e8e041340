"""Helpers of the built-in DataPipes (torch/utils/data/datapipes/utils/common.py):
checking the functions given to ``map``/``filter``, listing and opening files,
``StreamWrapper`` (a file handle that closes itself), deprecation warnings."""
from __future__ import annotations

import fnmatch
import functools
import importlib.util
import inspect
import os
import warnings
from io import IOBase
from typing import Any, Callable, Iterable

__all__ = ["validate_input_col", "StreamWrapper", "get_file_binaries_from_pathnames",
           "get_file_pathnames_from_root", "match_masks", "validate_pathname_binary_tuple"]


def dill_available() -> bool:
    """Whether ``dill`` (which pickles lambdas) is installed."""
    return importlib.util.find_spec("dill") is not None


def _import_dill():
    """The ``dill`` module, or ``None`` when it is not installed."""
    if not dill_available():
        return None
    import dill
    return dill


DILL_AVAILABLE = dill_available()


def _no_valid_length(datapipe) -> TypeError:
    """The error of ``len()`` on a DataPipe whose length is unknown."""
    return TypeError(f"{type(datapipe).__name__} instance doesn't have valid length")


def validate_input_col(fn: Callable, input_col: int | tuple | list | None) -> None:
    """Raise ValueError unless ``fn`` can take the ``input_col`` columns
    (one per column, positionally) and has no required keyword-only parameter."""
    try:
        sig = inspect.signature(fn)
    except ValueError:      # a builtin without a signature: nothing to check
        return
    input_col_size = len(input_col) if isinstance(input_col, (list, tuple)) else 1

    kind = inspect.Parameter
    pos = [p for p in sig.parameters.values()
           if p.kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD)]
    var_positional = any(p.kind is kind.VAR_POSITIONAL for p in sig.parameters.values())
    non_default_kw_only = [p for p in sig.parameters.values()
                           if p.kind is kind.KEYWORD_ONLY and p.default is p.empty]

    target = fn.func if isinstance(fn, functools.partial) else fn
    fn_name = getattr(target, "__name__", repr(target))

    if non_default_kw_only:
        raise ValueError(f"The function {fn_name} takes {len(non_default_kw_only)} "
                         f"non-default keyword-only parameters, which is not allowed.")
    if len(sig.parameters) < input_col_size:
        if not var_positional:
            raise ValueError(f"The function {fn_name} takes {len(sig.parameters)} "
                             f"parameters, but {input_col_size} are required.")
    elif (len(pos) > input_col_size and any(p.default is p.empty for p in pos[input_col_size:])) \
            or (len(pos) < input_col_size and not var_positional):
        raise ValueError(f"The function {fn_name} takes {len(pos)} "
                         f"positional parameters, but {input_col_size} are required.")


def _is_local_fn(fn):
    """Whether ``fn`` (a function, or a callable object) was defined inside a function."""
    if hasattr(fn, "__code__"):
        return fn.__code__.co_flags & inspect.CO_NESTED
    if hasattr(fn, "__qualname__"):
        return "<locals>" in fn.__qualname__
    fn_type = type(fn)
    if hasattr(fn_type, "__qualname__"):
        return "<locals>" in fn_type.__qualname__
    return False


def _check_unpickable_fn(fn: Callable) -> None:
    """TypeError for a non-callable; a warning for a lambda or local function,
    which ``pickle`` (so DataLoader workers under spawn) cannot take without dill."""
    if not callable(fn):
        raise TypeError(f"A callable function is expected, but {type(fn)} is provided.")
    if isinstance(fn, functools.partial):
        fn = fn.func
    if dill_available():
        return
    if _is_local_fn(fn):
        warnings.warn("Local function is not supported by pickle, please use "
                      "regular python function or functools.partial instead.", stacklevel=2)
    elif getattr(fn, "__name__", None) == "<lambda>":
        warnings.warn("Lambda function is not supported by pickle, please use "
                      "regular python function or functools.partial instead.", stacklevel=2)


def match_masks(name: str, masks: str | list[str]) -> bool:
    """Whether ``name`` matches the glob ``masks`` (any of them; none matches all)."""
    if not masks:
        return True
    if isinstance(masks, str):
        return fnmatch.fnmatch(name, masks)
    return any(fnmatch.fnmatch(name, mask) for mask in masks)


def get_file_pathnames_from_root(root: str, masks: str | list[str], recursive: bool = False,
                                 abspath: bool = False, non_deterministic: bool = False):
    """The files under ``root`` (or ``root`` itself, a file) matching ``masks``,
    sorted per folder unless ``non_deterministic``."""
    def onerror(err: OSError):
        warnings.warn(err.filename + " : " + err.strerror, stacklevel=2)
        raise err

    if os.path.isfile(root):
        path = os.path.abspath(root) if abspath else root
        if match_masks(os.path.basename(path), masks):
            yield path
        return
    for path, dirs, files in os.walk(root, onerror=onerror):
        if abspath:
            path = os.path.abspath(path)
        if not non_deterministic:
            files.sort()
        for f in files:
            if match_masks(f, masks):
                yield os.path.join(path, f)
        if not recursive:
            break
        if not non_deterministic:
            dirs.sort()     # in place: os.walk descends in this order


def get_file_binaries_from_pathnames(pathnames: Iterable, mode: str, encoding: str | None = None):
    """``(pathname, StreamWrapper(open file))`` for each pathname."""
    if not isinstance(pathnames, Iterable):
        pathnames = [pathnames]
    if mode in ("b", "t"):
        mode = "r" + mode
    for pathname in pathnames:
        if not isinstance(pathname, str):
            raise TypeError(f"Expected string type for pathname, but got {type(pathname)}")
        yield pathname, StreamWrapper(open(pathname, mode, encoding=encoding))  # noqa: SIM115


def validate_pathname_binary_tuple(data: tuple[str, IOBase]) -> None:
    """TypeError unless ``data`` is ``(str, stream)``."""
    if not isinstance(data, tuple):
        raise TypeError(f"pathname binary data should be tuple type, but it is type {type(data)}")
    if len(data) != 2:
        raise TypeError(f"pathname binary stream tuple length should be 2, but got {len(data)}")
    if not isinstance(data[0], str):
        raise TypeError("pathname within the tuple should have string type pathname, but it "
                        f"is type {type(data[0])}")
    if not isinstance(data[1], (IOBase, StreamWrapper)):
        raise TypeError("binary stream within the tuple should have IOBase or"
                        f"its subclasses as type, but it is type {type(data[1])}")


# deprecated functional names -> keyword arguments of _deprecation_warning (none at present)
_iter_deprecated_functional_names: dict[str, dict] = {}
_map_deprecated_functional_names: dict[str, dict] = {}


def _deprecation_warning(old_class_name: str, *, deprecation_version: str, removal_version: str,
                         old_functional_name: str = "", old_argument_name: str = "",
                         new_class_name: str = "", new_functional_name: str = "",
                         new_argument_name: str = "",
                         deprecate_functional_name_only: bool = False) -> None:
    """FutureWarning that a DataPipe, its functional name or an argument is deprecated."""
    if new_functional_name and not old_functional_name:
        raise ValueError("Old functional API needs to be specified for the deprecation warning.")
    if new_argument_name and not old_argument_name:
        raise ValueError("Old argument name needs to be specified for the deprecation warning.")
    if old_functional_name and old_argument_name:
        raise ValueError(
            "Deprecating warning for functional API and argument should be separated.")

    msg = f"`{old_class_name}()`"
    if deprecate_functional_name_only and old_functional_name:
        msg = f"{msg}'s functional API `.{old_functional_name}()` is"
    elif old_functional_name:
        msg = f"{msg} and its functional API `.{old_functional_name}()` are"
    elif old_argument_name:
        msg = f"The argument `{old_argument_name}` of {msg} is"
    else:
        msg = f"{msg} is"
    msg = (f"{msg} deprecated since {deprecation_version} and will be removed in "
           f"{removal_version}.\nSee https://github.com/pytorch/data/issues/163 for details.")
    if new_class_name or new_functional_name:
        alternatives = []
        if new_class_name:
            alternatives.append(f"`{new_class_name}()`")
        if new_functional_name:
            alternatives.append(f"`.{new_functional_name}()`")
        msg = f"{msg}\nPlease use {' or '.join(alternatives)} instead."
    if new_argument_name:
        msg = f"{msg}\nPlease use `{old_class_name}({new_argument_name}=)` instead."
    warnings.warn(msg, FutureWarning, stacklevel=2)


class StreamWrapper:
    """A file handle from ``FileOpener`` (or a stream derived from one, its
    child) that is closed when garbage collected; ``autoclose`` closes a parent
    once its last child is closed."""

    session_streams: dict[Any, int] = {}
    debug_unclosed_streams: bool = False

    def __init__(self, file_obj, parent_stream=None, name=None) -> None:
        self.file_obj = file_obj
        self.child_counter = 0
        self.parent_stream = parent_stream
        self.close_on_last_child = False
        self.name = name
        self.closed = False
        if parent_stream is not None:
            if not isinstance(parent_stream, StreamWrapper):
                raise RuntimeError(
                    f"Parent stream should be StreamWrapper, {type(parent_stream)} was given")
            parent_stream.child_counter += 1
        if StreamWrapper.debug_unclosed_streams:
            StreamWrapper.session_streams[self] = 1

    @classmethod
    def close_streams(cls, v, depth=0) -> None:
        """Close the StreamWrappers found in ``v`` (looking into dicts, lists and
        tuples, at most 10 levels deep)."""
        if depth > 10:
            return
        if isinstance(v, StreamWrapper):
            v.close()
        elif isinstance(v, dict):
            for vv in v.values():
                cls.close_streams(vv, depth=depth + 1)
        elif isinstance(v, (list, tuple)):
            for vv in v:
                cls.close_streams(vv, depth=depth + 1)

    def __getattr__(self, name):
        return getattr(self.__dict__["file_obj"], name)

    def close(self, *args, **kwargs) -> None:
        if self.closed:
            return
        if StreamWrapper.debug_unclosed_streams:
            del StreamWrapper.session_streams[self]
        parent = getattr(self, "parent_stream", None)
        if parent is not None:
            parent.child_counter -= 1
            if not parent.child_counter and parent.close_on_last_child:
                parent.close()
        try:
            self.file_obj.close(*args, **kwargs)
        except AttributeError:
            pass
        self.closed = True

    def autoclose(self) -> None:
        """Close when the last child stream closes (now, if there is none)."""
        self.close_on_last_child = True
        if self.child_counter == 0:
            self.close()

    def __dir__(self):
        attrs = list(self.__dict__.keys()) + list(StreamWrapper.__dict__.keys())
        attrs += dir(self.file_obj)
        return list(set(attrs))

    def __del__(self) -> None:
        if not self.closed:
            self.close()

    def __iter__(self):
        yield from self.file_obj

    def __next__(self):
        return next(self.file_obj)

    def __repr__(self) -> str:
        if self.name is None:
            return f"StreamWrapper<{self.file_obj!r}>"
        return f"StreamWrapper<{self.name},{self.file_obj!r}>"

    def __getstate__(self):
        return self.file_obj

    def __setstate__(self, obj):
        self.file_obj = obj
