"""``Batcher`` (``batch``), ``UnBatcher`` (``unbatch``) and ``Grouper`` (``groupby``)
(torch/utils/data/datapipes/iter/grouping.py)."""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterator, Sized, TypeVar

from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe, _hooked_state
from ..utils.common import _check_unpickable_fn, _no_valid_length

__all__ = ["BatcherIterDataPipe", "GrouperIterDataPipe", "UnBatcherIterDataPipe"]

_T_co = TypeVar("_T_co", covariant=True)


def _batch_count(datapipe, batch_size: int, drop_last: bool) -> int:
    """How many batches of ``batch_size`` the sized ``datapipe`` makes."""
    if drop_last:
        return len(datapipe) // batch_size
    return (len(datapipe) + batch_size - 1) // batch_size


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe[DataChunk]):
    """Consecutive items in batches of ``batch_size`` (``wrapper_class`` lists,
    ``DataChunk`` by default); a short last batch unless ``drop_last``."""

    datapipe: IterDataPipe
    batch_size: int
    drop_last: bool

    def __init__(self, datapipe: IterDataPipe, batch_size: int, drop_last: bool = False,
                 wrapper_class: type[DataChunk] = DataChunk) -> None:
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        super().__init__()
        self.datapipe = datapipe
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.wrapper_class = wrapper_class

    def __iter__(self) -> Iterator[DataChunk]:
        batch: list = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self) -> int:
        if isinstance(self.datapipe, Sized):
            return _batch_count(self.datapipe, self.batch_size, self.drop_last)
        raise _no_valid_length(self)


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    """The items of the batches (lists), ``unbatch_level`` levels deep (-1: all the way)."""

    def __init__(self, datapipe: IterDataPipe, unbatch_level: int = 1) -> None:
        self.datapipe = datapipe
        self.unbatch_level = unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, unbatch_level=self.unbatch_level)

    def _dive(self, element, unbatch_level):
        if unbatch_level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if unbatch_level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, unbatch_level=max(unbatch_level - 1, -1))
        elif unbatch_level == -1:
            yield element
        else:
            raise IndexError(
                f"unbatch_level {self.unbatch_level} exceeds the depth of the DataPipe")


@functional_datapipe("groupby")
class GrouperIterDataPipe(IterDataPipe[DataChunk]):
    """Items grouped by ``group_key_fn`` into ``DataChunk``s (with their key when
    ``keep_key``).  A group is yielded when it reaches ``group_size``; when
    ``buffer_size`` items are held, the largest group is yielded (dropped if
    smaller than ``guaranteed_group_size`` and ``drop_remaining``, else an error);
    at the end the remaining groups follow."""

    def __init__(self, datapipe: IterDataPipe[_T_co], group_key_fn: Callable[[_T_co], Any], *,
                 keep_key: bool = False, buffer_size: int = 10000,
                 group_size: int | None = None, guaranteed_group_size: int | None = None,
                 drop_remaining: bool = False) -> None:
        _check_unpickable_fn(group_key_fn)
        self.datapipe = datapipe
        self.group_key_fn = group_key_fn
        self.keep_key = keep_key
        self.max_buffer_size = buffer_size
        self.buffer_elements: defaultdict[Any, list] = defaultdict(list)
        self.curr_buffer_size = 0
        self.group_size = group_size
        self.guaranteed_group_size = None
        if group_size is not None and buffer_size is not None:
            if not 0 < group_size <= buffer_size:
                raise AssertionError("group_size must be > 0 and <= buffer_size")
            self.guaranteed_group_size = group_size
        if guaranteed_group_size is not None:
            if group_size is None or not 0 < guaranteed_group_size <= group_size:
                raise AssertionError("guaranteed_group_size must be > 0 and <= group_size and "
                                     "group_size must be set")
            self.guaranteed_group_size = guaranteed_group_size
        self.drop_remaining = drop_remaining
        self.wrapper_class = DataChunk

    def _remove_biggest_key(self):
        """Take the largest group (the first found among equals) out of the buffer;
        ``None`` when it is too small to yield."""
        biggest_key, biggest_size = None, 0
        for key, elements in self.buffer_elements.items():
            if len(elements) > biggest_size:
                biggest_key, biggest_size = key, len(elements)
        too_small = self.guaranteed_group_size is not None and \
            biggest_size < self.guaranteed_group_size
        if too_small and not self.drop_remaining:
            raise RuntimeError("Failed to group items", str(self.buffer_elements[biggest_key]))
        result_to_yield = None if too_small else self.buffer_elements[biggest_key]
        self.curr_buffer_size -= biggest_size
        del self.buffer_elements[biggest_key]
        return result_to_yield

    def _output(self, key, group):
        result = self.wrapper_class(group)
        return (key, result) if self.keep_key else result

    def __iter__(self):
        for x in self.datapipe:
            key = self.group_key_fn(x)
            self.buffer_elements[key].append(x)
            self.curr_buffer_size += 1
            if self.group_size is not None and self.group_size == len(self.buffer_elements[key]):
                yield self._output(key, self.buffer_elements[key])
                self.curr_buffer_size -= len(self.buffer_elements[key])
                del self.buffer_elements[key]
            if self.curr_buffer_size == self.max_buffer_size:
                result_to_yield = self._remove_biggest_key()
                if result_to_yield is not None:
                    # (keyed with the current item's key, as PyTorch does)
                    yield self._output(key, result_to_yield)
        for key in tuple(self.buffer_elements.keys()):
            group = self.buffer_elements.pop(key)
            self.curr_buffer_size -= len(group)
            yield self._output(key, group)

    def reset(self) -> None:
        self.curr_buffer_size = 0
        self.buffer_elements = defaultdict(list)

    def __getstate__(self):
        return _hooked_state(IterDataPipe, (
            self.datapipe, self.group_key_fn, self.keep_key, self.max_buffer_size,
            self.group_size, self.guaranteed_group_size, self.drop_remaining, self.wrapper_class,
            self._valid_iterator_id, self._number_of_samples_yielded))

    def __setstate__(self, state):
        (self.datapipe, self.group_key_fn, self.keep_key, self.max_buffer_size, self.group_size,
         self.guaranteed_group_size, self.drop_remaining, self.wrapper_class,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self.curr_buffer_size = 0
        self.buffer_elements = defaultdict(list)

    def __del__(self) -> None:
        self.buffer_elements.clear()
