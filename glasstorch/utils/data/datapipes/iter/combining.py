"""DataPipes that join or split streams (torch/utils/data/datapipes/iter/combining.py):
``Concater`` (``concat``), ``Forker`` (``fork``), ``Demultiplexer`` (``demux``),
``Multiplexer`` (``mux``), ``Zipper`` (``zip``).

``fork`` and ``demux`` return child DataPipes reading from one container that
iterates the source once and buffers what some children have not read yet
(at most ``buffer_size`` items, -1: unbounded, else BufferError).  A new
iterator on a child, once the children have started, restarts them all (with a
warning when some had not finished); an iterator of a child made before that
restart raises PyTorch's invalidation error.
"""
from __future__ import annotations

import copy as copymodule
import warnings
from abc import ABC, abstractmethod
from collections import deque
from typing import Iterator, Sized, TypeVar

from .._decorator import functional_datapipe
from .._hook_iterator import _SnapshotState
from ..datapipe import IterDataPipe, _hooked_state
from ..utils.common import StreamWrapper, _check_unpickable_fn, _no_valid_length

__all__ = ["ConcaterIterDataPipe", "DemultiplexerIterDataPipe", "ForkerIterDataPipe",
           "MultiplexerIterDataPipe", "ZipperIterDataPipe"]

_T_co = TypeVar("_T_co", covariant=True)


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    """The items of each DataPipe in turn."""

    def __init__(self, *datapipes: IterDataPipe) -> None:
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `IterDataPipe`")
        self.datapipes = datapipes

    def __iter__(self) -> Iterator:
        for dp in self.datapipes:
            yield from dp

    def __len__(self) -> int:
        if all(isinstance(dp, Sized) for dp in self.datapipes):
            return sum(len(dp) for dp in self.datapipes)
        raise _no_valid_length(self)


@functional_datapipe("fork")
class ForkerIterDataPipe(IterDataPipe):
    """``num_instances`` children that each yield every item of ``datapipe``
    (as is, or a ``"shallow"``/``"deep"`` copy); one instance is the source itself."""

    def __new__(cls, datapipe: IterDataPipe, num_instances: int, buffer_size: int = 1000,
                copy=None):
        if num_instances < 1:
            raise ValueError(
                f"Expected `num_instances` larger than 0, but {num_instances} is found")
        if num_instances == 1:
            return datapipe
        container = _ForkerIterDataPipe(datapipe, num_instances, buffer_size, copy)
        return [_ChildDataPipe(container, i) for i in range(num_instances)]


class _ContainerTemplate(ABC):
    """What a container behind child DataPipes provides."""

    @abstractmethod
    def get_next_element_by_instance(self, instance_id: int): ...

    @abstractmethod
    def is_every_instance_exhausted(self) -> bool: ...

    @abstractmethod
    def reset(self) -> None: ...

    @abstractmethod
    def get_length_by_instance(self, instance_id: int):
        """TypeError where the children have no length (so ``list(child)`` still works)."""


def _no_op(x):
    return x


class _ForkerIterDataPipe(IterDataPipe, _ContainerTemplate):
    """The container of ``fork``'s children.

    Child ``i`` has read ``child_pointers[i]`` items; ``buffer`` holds the items
    from the slowest child's position (``slowest_ptr``) up to the fastest's
    (``leading_ptr``); ``end_ptr`` is the length once the source ran out.
    """

    def __init__(self, datapipe: IterDataPipe, num_instances: int, buffer_size: int = 1000,
                 copy=None) -> None:
        self.main_datapipe = datapipe
        self._datapipe_iterator = None
        self.num_instances = num_instances
        self.buffer: deque = deque()
        self.buffer_size = buffer_size
        if self.buffer_size < 0:
            warnings.warn("Unlimited buffer size is set for `fork`, "
                          "please be aware of OOM at random places", UserWarning, stacklevel=2)
        copy_fns = {None: _no_op, "shallow": copymodule.copy, "deep": copymodule.deepcopy}
        if copy not in copy_fns:
            raise ValueError(f"Unknown copy method `{copy}` requested, choose one of None, "
                             "`shallow` or `deep`.")
        self.copy_fn = copy_fns[copy]
        self._reset_pointers()

    def _reset_pointers(self) -> None:
        self._datapipe_iterator = None
        self.buffer = deque()
        self.child_pointers = [0] * self.num_instances
        self.slowest_ptr = 0
        self.leading_ptr = 0
        self.end_ptr = None
        self._child_stop = [True] * self.num_instances

    def __len__(self) -> int:
        return len(self.main_datapipe)

    def get_next_element_by_instance(self, instance_id: int):
        if self._datapipe_iterator is None and self._child_stop[instance_id]:
            self._datapipe_iterator = iter(self.main_datapipe)
            self._snapshot_state = _SnapshotState.Iterating
            self._child_stop = [False] * self.num_instances
        try:
            while not self._child_stop[instance_id]:
                self.child_pointers[instance_id] += 1
                pointer = self.child_pointers[instance_id]
                if self.end_ptr is not None and pointer == self.end_ptr:
                    self._child_stop[instance_id] = True
                    break
                if self.buffer and pointer <= self.leading_ptr:
                    return_val = self.buffer[pointer - self.slowest_ptr - 1]
                else:   # this child leads: read the source
                    self.leading_ptr = pointer
                    try:
                        return_val = next(self._datapipe_iterator)
                        self.buffer.append(return_val)
                    except StopIteration:
                        self._child_stop[instance_id] = True
                        self._datapipe_iterator = None
                        self.end_ptr = self.leading_ptr
                        continue
                if pointer == self.slowest_ptr + 1:     # the slowest child moved on
                    new_min = min(self.child_pointers)
                    if self.slowest_ptr < new_min:
                        self.slowest_ptr = new_min
                        self.buffer.popleft()
                if self.buffer_size >= 0 and self.leading_ptr > self.buffer_size + self.slowest_ptr:
                    raise BufferError("ForkerIterDataPipe buffer overflow,"
                                      f"buffer size {self.buffer_size} is insufficient.")
                yield self.copy_fn(return_val)
        finally:
            self._child_stop[instance_id] = True
            if all(self._child_stop):
                self._datapipe_iterator = None
                self._cleanup()

    def is_every_instance_exhausted(self) -> bool:
        return self.end_ptr is not None and all(self._child_stop)

    def get_length_by_instance(self, instance_id: int) -> int:
        return len(self.main_datapipe)

    def reset(self) -> None:
        self._reset_pointers()

    def __getstate__(self):
        return _hooked_state(IterDataPipe, (
            self.main_datapipe, self.num_instances, self.buffer_size, self.copy_fn,
            self._valid_iterator_id, self._number_of_samples_yielded))

    def __setstate__(self, state):
        (self.main_datapipe, self.num_instances, self.buffer_size, self.copy_fn,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._reset_pointers()

    def _cleanup(self) -> None:
        while self.buffer:
            StreamWrapper.close_streams(self.buffer.popleft())

    def __del__(self) -> None:
        self._cleanup()


class _ChildDataPipe(IterDataPipe):
    """Child ``instance_id`` of a ``fork``/``demux`` container (``main_datapipe``).

    Its iterators are valid while both its own and the container's valid
    iterator ids are theirs: a new iterator on any child of a container that
    has started makes the container restart, invalidating every older one.
    """

    _is_child_datapipe: bool = True

    def __init__(self, main_datapipe: IterDataPipe, instance_id: int) -> None:
        if not isinstance(main_datapipe, _ContainerTemplate):
            raise AssertionError("main_datapipe must implement _ContainerTemplate")
        self.main_datapipe = main_datapipe
        self.instance_id = instance_id

    def __iter__(self):
        return self.main_datapipe.get_next_element_by_instance(self.instance_id)

    def __len__(self) -> int:
        return self.main_datapipe.get_length_by_instance(self.instance_id)

    def _set_main_datapipe_valid_iterator_id(self) -> int:
        """A new iterator of this child: the first child iterator of a pass takes the
        container's id; one made when this child already has that id restarts the
        container (new id, buffers cleared)."""
        main = self.main_datapipe
        if main._valid_iterator_id is None:
            main._valid_iterator_id = 0
        elif main._valid_iterator_id == self._valid_iterator_id:
            main._valid_iterator_id += 1
            if not main.is_every_instance_exhausted():
                warnings.warn("Some child DataPipes are not exhausted when __iter__ is called. "
                              "We are resetting the buffer and each child DataPipe will read "
                              "from the start again.", UserWarning, stacklevel=2)
            main.reset()
        self._valid_iterator_id = main._valid_iterator_id
        return self._valid_iterator_id

    def _check_valid_iterator_id(self, iterator_id) -> bool:
        return iterator_id == self._valid_iterator_id == self.main_datapipe._valid_iterator_id


@functional_datapipe("demux")
class DemultiplexerIterDataPipe(IterDataPipe):
    """``num_instances`` children; child ``i`` yields the items for which
    ``classifier_fn`` returns ``i`` (``None``: dropped if ``drop_none``)."""

    def __new__(cls, datapipe: IterDataPipe, num_instances: int, classifier_fn,
                drop_none: bool = False, buffer_size: int = 1000):
        if num_instances < 1:
            raise ValueError(
                f"Expected `num_instances` larger than 0, but {num_instances} is found")
        _check_unpickable_fn(classifier_fn)
        container = _DemultiplexerIterDataPipe(datapipe, num_instances, classifier_fn,
                                               drop_none, buffer_size)
        return [_ChildDataPipe(container, i) for i in range(num_instances)]


class _DemultiplexerIterDataPipe(IterDataPipe, _ContainerTemplate):
    """The container of ``demux``'s children: one queue of pending items per child."""

    def __init__(self, datapipe: IterDataPipe, num_instances: int, classifier_fn,
                 drop_none: bool, buffer_size: int) -> None:
        self.main_datapipe = datapipe
        self.num_instances = num_instances
        self.buffer_size = buffer_size
        if self.buffer_size < 0:
            warnings.warn("Unlimited buffer size is set for `demux`, "
                          "please be aware of OOM at random places", UserWarning, stacklevel=2)
        self.classifier_fn = classifier_fn
        self.drop_none = drop_none
        self._reset_buffers()

    def _reset_buffers(self) -> None:
        self._datapipe_iterator = None
        self.current_buffer_usage = 0
        self.child_buffers = [deque() for _ in range(self.num_instances)]
        self._child_stop = [True] * self.num_instances
        self.main_datapipe_exhausted = False

    def _find_next(self, instance_id: int):
        """Read the source until an item for ``instance_id`` comes, queueing the others."""
        while True:
            if self.main_datapipe_exhausted or self._child_stop[instance_id]:
                raise StopIteration
            if self._datapipe_iterator is None:
                raise ValueError(
                    "_datapipe_iterator has not been set, likely because this private method "
                    "is called directly without invoking get_next_element_by_instance() first.")
            value = next(self._datapipe_iterator)
            classification = self.classifier_fn(value)
            if classification is None and self.drop_none:
                StreamWrapper.close_streams(value)
                continue
            if classification is None or not 0 <= classification < self.num_instances:
                raise ValueError("Output of the classification fn should be between 0 and "
                                 f"{self.num_instances - 1}. {classification} is returned.")
            if classification == instance_id:
                return value
            self.child_buffers[classification].append(value)
            self.current_buffer_usage += 1
            if self.buffer_size >= 0 and self.current_buffer_usage > self.buffer_size:
                raise BufferError(f"DemultiplexerIterDataPipe buffer overflow, buffer size "
                                  f"{self.buffer_size} is insufficient.")

    def get_next_element_by_instance(self, instance_id: int):
        if self._datapipe_iterator is None and self._child_stop[instance_id]:
            self._datapipe_iterator = iter(self.main_datapipe)
            self._snapshot_state = _SnapshotState.Iterating
            self.main_datapipe_exhausted = False
            self._child_stop = [False] * self.num_instances
        try:
            while not self._child_stop[instance_id]:
                if self.child_buffers[instance_id]:
                    self.current_buffer_usage -= 1
                    yield self.child_buffers[instance_id].popleft()
                else:
                    try:
                        yield self._find_next(instance_id)
                    except StopIteration:
                        self._child_stop[instance_id] = True
                        self.main_datapipe_exhausted = True
                        self._datapipe_iterator = None
        finally:
            self._child_stop[instance_id] = True
            if all(self._child_stop):
                self._datapipe_iterator = None
            if self.child_buffers[instance_id]:
                self._cleanup(instance_id)

    def is_every_instance_exhausted(self) -> bool:
        return self.main_datapipe_exhausted and all(self._child_stop)

    def get_length_by_instance(self, instance_id: int) -> int:
        raise TypeError

    def reset(self) -> None:
        self._reset_buffers()

    def __getstate__(self):
        return _hooked_state(IterDataPipe, (
            self.main_datapipe, self.num_instances, self.buffer_size, self.classifier_fn,
            self.drop_none, self._valid_iterator_id, self._number_of_samples_yielded))

    def __setstate__(self, state):
        (self.main_datapipe, self.num_instances, self.buffer_size, self.classifier_fn,
         self.drop_none, self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._reset_buffers()

    def _cleanup(self, instance_id: int | None = None) -> None:
        ids = range(self.num_instances) if instance_id is None else [instance_id]
        for i in ids:
            q = self.child_buffers[i]
            while q:
                StreamWrapper.close_streams(q.popleft())

    def __del__(self) -> None:
        self._cleanup()


@functional_datapipe("mux")
class MultiplexerIterDataPipe(IterDataPipe):
    """One item from each DataPipe in turn, until the shortest ends (the round in
    which it ends is dropped)."""

    def __init__(self, *datapipes) -> None:
        self.datapipes = datapipes
        self.buffer: list = []      # the current round

    def __iter__(self):
        iterators = [iter(x) for x in self.datapipes]
        while iterators:
            for it in iterators:
                try:
                    self.buffer.append(next(it))
                except StopIteration:
                    self.buffer.clear()
                    return
            yield from self.buffer
            self.buffer.clear()

    def __len__(self) -> int:
        if all(isinstance(dp, Sized) for dp in self.datapipes):
            return min(len(dp) for dp in self.datapipes) * len(self.datapipes)
        raise _no_valid_length(self)

    def reset(self) -> None:
        self.buffer = []

    def __getstate__(self):
        return _hooked_state(IterDataPipe, (
            self.datapipes, self._valid_iterator_id, self._number_of_samples_yielded))

    def __setstate__(self, state):
        self.datapipes, self._valid_iterator_id, self._number_of_samples_yielded = state
        self.buffer = []

    def __del__(self) -> None:
        self.buffer.clear()


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe[tuple[_T_co]]):
    """Tuples of one item of each DataPipe, until the shortest ends."""

    def __init__(self, *datapipes: IterDataPipe) -> None:
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError(
                "All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        super().__init__()
        self.datapipes = datapipes

    def __iter__(self) -> Iterator[tuple[_T_co]]:
        iterators = [iter(datapipe) for datapipe in self.datapipes]
        yield from zip(*iterators)

    def __len__(self) -> int:
        if all(isinstance(dp, Sized) for dp in self.datapipes):
            return min(len(dp) for dp in self.datapipes)
        raise _no_valid_length(self)
