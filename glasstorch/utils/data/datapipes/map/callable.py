"""``Mapper`` (``map``) (torch/utils/data/datapipes/map/callable.py)."""
from __future__ import annotations

from typing import Callable, TypeVar

from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe
from ..utils.common import _check_unpickable_fn

__all__ = ["MapperMapDataPipe", "default_fn"]

_T_co = TypeVar("_T_co", covariant=True)


def default_fn(data):
    return data


@functional_datapipe("map")
class MapperMapDataPipe(MapDataPipe[_T_co]):
    """``fn(datapipe[index])`` at each index."""

    datapipe: MapDataPipe
    fn: Callable

    def __init__(self, datapipe: MapDataPipe, fn: Callable = default_fn) -> None:
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(fn)
        self.fn = fn

    def __len__(self) -> int:
        return len(self.datapipe)

    def __getitem__(self, index) -> _T_co:
        return self.fn(self.datapipe[index])
