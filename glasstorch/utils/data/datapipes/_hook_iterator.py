"""The wrapper every ``IterDataPipe.__iter__`` gets
(torch/utils/data/datapipes/_hook_iterator.py).

``_IterDataPipeMeta`` hands each class's ``__iter__`` to ``hook_iterator``,
which wraps it so that

* only the newest iterator of a DataPipe is valid: creating an iterator bumps
  the DataPipe's ``_valid_iterator_id`` (and calls ``reset()``), and an older
  iterator that asks for its next item raises PyTorch's RuntimeError;
* ``_number_of_samples_yielded`` counts the items handed out (snapshots
  fast-forward by it);
* while a profiler records, each step is a ``record_function`` range named
  after the DataPipe and its arguments (``Mapper(datapipe=..., fn=f, ...)``);
* an exception raised inside a generator ``__iter__`` gets the line
  "This exception is thrown by __iter__ of X(args)" appended to its message.
"""
from __future__ import annotations

import functools
import inspect
from enum import Enum


class _SnapshotState(Enum):
    """Where a DataPipe stands for snapshot restoration: ``NotStarted`` (may be
    restored, the next iterator resets), ``Restored`` (the next iterator continues
    from the restored point without a reset), ``Iterating`` (resets on a new
    iterator)."""

    NotStarted = 0
    Restored = 1
    Iterating = 2


def _simplify_obj_name(obj) -> str:
    """A function shows as its name, anything else as its repr."""
    return obj.__name__ if inspect.isfunction(obj) else repr(obj)


def _strip_datapipe_from_name(name: str) -> str:
    return name.replace("IterDataPipe", "").replace("MapDataPipe", "")


def _generate_input_args_string(obj) -> str:
    """``name=value, ...`` for the attributes of ``obj`` named like its class's
    constructor parameters (in alphabetical order, as ``inspect.getmembers`` lists them)."""
    params = set(inspect.signature(obj.__class__).parameters)
    return ", ".join(f"{name}={_simplify_obj_name(value)}"
                     for name, value in inspect.getmembers(obj) if name in params)


def _generate_iterdatapipe_msg(datapipe, simplify_dp_name: bool = False) -> str:
    text = f"{datapipe.__class__.__name__}({_generate_input_args_string(datapipe)})"
    return _strip_datapipe_from_name(text) if simplify_dp_name else text


def _gen_invalid_iterdatapipe_msg(datapipe) -> str:
    return ("This iterator has been invalidated because another iterator has been created "
            f"from the same IterDataPipe: {_generate_iterdatapipe_msg(datapipe)}\n"
            "This may be caused by multiple references to the same IterDataPipe. We recommend "
            "using `.fork()` if that is necessary.")


_feedback_msg = ("\nFor feedback regarding this single iterator per IterDataPipe constraint, "
                 "feel free to comment on this issue: https://github.com/pytorch/data/issues/45.")


def _check_iterator_valid(datapipe, iterator_id) -> None:
    """Raise unless ``iterator_id`` is still ``datapipe``'s valid iterator (for the
    children of ``fork``/``demux``, their container's too)."""
    if getattr(datapipe, "_is_child_datapipe", False) is True:
        if not hasattr(datapipe, "_check_valid_iterator_id"):
            raise RuntimeError("ChildDataPipe must have method `_check_valid_iterator_id`.")
        if not datapipe._check_valid_iterator_id(iterator_id):
            raise RuntimeError(
                "This iterator has been invalidated, because a new iterator has been created "
                "from one of the ChildDataPipes of "
                f"{_generate_iterdatapipe_msg(datapipe.main_datapipe)}." + _feedback_msg)
    elif datapipe._valid_iterator_id != iterator_id:
        raise RuntimeError(_gen_invalid_iterdatapipe_msg(datapipe) + _feedback_msg)


def _set_datapipe_valid_iterator_id(datapipe):
    """A new iterator starts: bump the valid id and reset the DataPipe (a child of
    ``fork``/``demux`` lets its container decide); returns the new id."""
    if getattr(datapipe, "_is_child_datapipe", False) is True:
        if not hasattr(datapipe, "_set_main_datapipe_valid_iterator_id"):
            raise RuntimeError(
                "ChildDataPipe must have method `_set_main_datapipe_valid_iterator_id`.")
        datapipe._set_main_datapipe_valid_iterator_id()
    else:
        previous = datapipe._valid_iterator_id
        datapipe._valid_iterator_id = 0 if previous is None else previous + 1
        datapipe.reset()
    return datapipe._valid_iterator_id


def _profiler_enabled() -> bool:
    """Whether a profiler is recording now (``torch.autograd._profiler_enabled``)."""
    from ....profiler import _collector
    return bool(_collector._active)


def _profiler_range(datapipe):
    """The ``record_function`` range of one step of ``datapipe``."""
    from ....autograd.profiler import record_function
    if not hasattr(datapipe, "_profile_name"):
        datapipe._profile_name = _generate_iterdatapipe_msg(datapipe, simplify_dp_name=True)
    return record_function(datapipe._profile_name)


class _IteratorDecorator:
    """The iterator handed out by a non-generator ``__iter__``: checks validity and
    counts samples around each ``next``."""

    def __init__(self, iterator, datapipe, iterator_id, has_next_method) -> None:
        self.iterator = iterator
        self.datapipe = datapipe
        self.iterator_id = iterator_id
        self._profiler_enabled = _profiler_enabled()
        # a DataPipe that is its own iterator counts its samples in its wrapped __next__
        self.self_and_has_next_method = iterator is datapipe and has_next_method

    def __iter__(self):
        return self

    def _get_next(self):
        _check_iterator_valid(self.datapipe, self.iterator_id)
        result = next(self.iterator)
        if not self.self_and_has_next_method:
            self.datapipe._number_of_samples_yielded += 1
        return result

    def __next__(self):
        if self._profiler_enabled:
            with _profiler_range(self.datapipe):
                return self._get_next()
        return self._get_next()

    def __getattr__(self, name):
        return getattr(self.iterator, name)


def _annotate_exception(e: Exception, datapipe) -> None:
    """Append which DataPipe's ``__iter__`` raised ``e`` to its message (once)."""
    origin = "thrown by __iter__ of"
    if not hasattr(e.args, "__len__"):
        return
    full_msg = f"{origin} {datapipe.__class__.__name__}({_generate_input_args_string(datapipe)})"
    if not e.args or not isinstance(e.args[0], str):
        e.args = (f"\nThis exception is {full_msg}",)
    elif origin not in e.args[0] and "single iterator per IterDataPipe constraint" not in e.args[0]:
        e.args = (e.args[0] + f"\nThis exception is {full_msg}",) + e.args[1:]


def hook_iterator(namespace) -> None:
    """Replace ``namespace["__iter__"]`` (and ``__next__``, if any) by the
    checking, counting, profiling wrappers described in the module docstring."""
    func = namespace["__iter__"]

    if inspect.isgeneratorfunction(func):
        @functools.wraps(func)
        def wrap_generator(*args, **kwargs):
            gen = func(*args, **kwargs)
            datapipe = args[0]
            if datapipe._fast_forward_iterator:     # restored from a snapshot
                it = datapipe._fast_forward_iterator
                datapipe._fast_forward_iterator = None
                datapipe._snapshot_state = _SnapshotState.Iterating
                yield from it
                return
            iterator_id = _set_datapipe_valid_iterator_id(datapipe)
            profiling = _profiler_enabled()
            try:
                if profiling:
                    with _profiler_range(datapipe):
                        response = gen.send(None)
                else:
                    response = gen.send(None)
                while True:
                    datapipe._number_of_samples_yielded += 1
                    request = yield response
                    if profiling:
                        with _profiler_range(datapipe):
                            _check_iterator_valid(datapipe, iterator_id)
                            response = gen.send(request)
                    else:
                        _check_iterator_valid(datapipe, iterator_id)
                        response = gen.send(request)
            except StopIteration:
                return
            except Exception as e:
                _annotate_exception(e, datapipe)
                raise

        namespace["__iter__"] = wrap_generator
        return

    has_next = "__next__" in namespace
    if has_next:
        next_func = namespace["__next__"]

        @functools.wraps(next_func)
        def wrap_next(*args, **kwargs):
            datapipe = args[0]
            if _profiler_enabled():
                with _profiler_range(datapipe):
                    result = next_func(*args, **kwargs)
            else:
                result = next_func(*args, **kwargs)
            datapipe._number_of_samples_yielded += 1
            return result

        namespace["__next__"] = wrap_next

    @functools.wraps(func)
    def wrap_iter(*args, **kwargs):
        iter_ret = func(*args, **kwargs)
        datapipe = args[0]
        datapipe._snapshot_state = _SnapshotState.Iterating
        if datapipe._fast_forward_iterator:
            iter_ret, datapipe._fast_forward_iterator = datapipe._fast_forward_iterator, None
            return iter_ret
        iterator_id = _set_datapipe_valid_iterator_id(datapipe)
        return _IteratorDecorator(iter_ret, datapipe, iterator_id, has_next)

    namespace["__iter__"] = wrap_iter
