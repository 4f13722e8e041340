"""``SequenceWrapper`` (torch/utils/data/datapipes/map/utils.py)."""
from __future__ import annotations

import copy
import warnings
from typing import TypeVar

from ..datapipe import MapDataPipe

__all__ = ["SequenceWrapperMapDataPipe"]

_T = TypeVar("_T")


class SequenceWrapperMapDataPipe(MapDataPipe[_T]):
    """A sequence (or mapping) as a MapDataPipe, deep-copied at construction unless
    ``deepcopy=False``."""

    def __init__(self, sequence, deepcopy: bool = True) -> None:
        self.sequence = sequence
        if deepcopy:
            try:
                self.sequence = copy.deepcopy(sequence)
            except TypeError:
                warnings.warn("The input sequence can not be deepcopied, please be aware of "
                              "in-place modification would affect source data", stacklevel=2)

    def __getitem__(self, index: int) -> _T:
        return self.sequence[index]

    def __len__(self) -> int:
        return len(self.sequence)
