"""``IterableWrapper`` (torch/utils/data/datapipes/iter/utils.py)."""
from __future__ import annotations

import copy
import warnings
from typing import Iterable, Iterator, Sized, TypeVar

from ..datapipe import IterDataPipe
from ..utils.common import _no_valid_length

__all__ = ["IterableWrapperIterDataPipe"]

_T = TypeVar("_T")


class IterableWrapperIterDataPipe(IterDataPipe[_T]):
    """An iterable as an IterDataPipe.  Each pass iterates a deep copy (unless
    ``deepcopy=False``), so in-place changes made downstream do not reach the source."""

    def __init__(self, iterable: Iterable[_T], deepcopy: bool = True) -> None:
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self) -> Iterator[_T]:
        source_data = self.iterable
        if self.deepcopy:
            try:
                source_data = copy.deepcopy(self.iterable)
            except TypeError:
                warnings.warn("The input iterable can not be deepcopied, please be aware of "
                              "in-place modification would affect source data.", stacklevel=2)
        yield from source_data

    def __len__(self) -> int:
        if isinstance(self.iterable, Sized):
            return len(self.iterable)
        raise _no_valid_length(self)
