"""``Filter`` (``filter``) (torch/utils/data/datapipes/iter/selecting.py)."""
from __future__ import annotations

from typing import Callable, Iterator, TypeVar

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import StreamWrapper, _check_unpickable_fn, validate_input_col

__all__ = ["FilterIterDataPipe"]

_T_co = TypeVar("_T_co", covariant=True)


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe[_T_co]):
    """The items for which ``filter_fn`` (of the item, or of its ``input_col``
    columns) returns True; it must return a bool.  Streams in dropped items are closed."""

    datapipe: IterDataPipe[_T_co]
    filter_fn: Callable

    def __init__(self, datapipe: IterDataPipe[_T_co], filter_fn: Callable,
                 input_col=None) -> None:
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(filter_fn)
        self.filter_fn = filter_fn
        self.input_col = input_col
        validate_input_col(filter_fn, input_col)

    def _apply_filter_fn(self, data) -> bool:
        if self.input_col is None:
            return self.filter_fn(data)
        if isinstance(self.input_col, (list, tuple)):
            return self.filter_fn(*(data[col] for col in self.input_col))
        return self.filter_fn(data[self.input_col])

    def __iter__(self) -> Iterator[_T_co]:
        for data in self.datapipe:
            condition = self._apply_filter_fn(data)
            if not isinstance(condition, bool):
                raise ValueError("Boolean output is required for `filter_fn` of "
                                 "FilterIterDataPipe, got", type(condition))
            if condition:
                yield data
            else:
                StreamWrapper.close_streams(data)
