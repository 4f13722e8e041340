"""``Batcher`` (``batch``) of a MapDataPipe (torch/utils/data/datapipes/map/grouping.py)."""
from __future__ import annotations

from typing import Sized

from .._decorator import functional_datapipe
from ..datapipe import DataChunk, MapDataPipe
from ..iter.grouping import _batch_count
from ..utils.common import _no_valid_length

__all__ = ["BatcherMapDataPipe"]


@functional_datapipe("batch")
class BatcherMapDataPipe(MapDataPipe[DataChunk]):
    """Index ``i`` is the batch of items ``i * batch_size`` to ``(i + 1) * batch_size - 1``
    (shorter at the end unless ``drop_last``)."""

    def __init__(self, datapipe: MapDataPipe, batch_size: int, drop_last: bool = False,
                 wrapper_class: type[DataChunk] = DataChunk) -> None:
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        super().__init__()
        self.datapipe = datapipe
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.wrapper_class = wrapper_class

    def __getitem__(self, index) -> DataChunk:
        batch: list = []
        try:
            batch.extend(self.datapipe[i]
                         for i in range(index * self.batch_size, (index + 1) * self.batch_size))
            return self.wrapper_class(batch)
        except IndexError as e:
            if not self.drop_last and batch:
                return self.wrapper_class(batch)
            raise IndexError(f"Index {index} is out of bound.") from e

    def __len__(self) -> int:
        if isinstance(self.datapipe, Sized):
            return _batch_count(self.datapipe, self.batch_size, self.drop_last)
        raise _no_valid_length(self)
