"""``Concater`` (``concat``) and ``Zipper`` (``zip``) of MapDataPipes
(torch/utils/data/datapipes/map/combining.py)."""
from __future__ import annotations

from typing import Sized, TypeVar

from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ["ConcaterMapDataPipe", "ZipperMapDataPipe"]

_T_co = TypeVar("_T_co", covariant=True)


def _check_inputs(datapipes) -> None:
    if len(datapipes) == 0:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `MapDataPipe`")
    if not all(isinstance(dp, Sized) for dp in datapipes):
        raise TypeError("Expected all inputs to be `Sized`")


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    """The MapDataPipes one after another: index ``len(dp0)`` is ``dp1[0]``."""

    def __init__(self, *datapipes: MapDataPipe) -> None:
        _check_inputs(datapipes)
        self.datapipes = datapipes

    def __getitem__(self, index) -> _T_co:
        offset = 0
        for dp in self.datapipes:
            if index - offset < len(dp):
                return dp[index - offset]
            offset += len(dp)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self) -> int:
        return sum(len(dp) for dp in self.datapipes)


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe[tuple[_T_co, ...]]):
    """Index ``i`` is the tuple of each MapDataPipe's item ``i``; as long as the shortest."""

    def __init__(self, *datapipes: MapDataPipe[_T_co]) -> None:
        _check_inputs(datapipes)
        self.datapipes = datapipes

    def __getitem__(self, index) -> tuple[_T_co, ...]:
        res = []
        for dp in self.datapipes:
            try:
                res.append(dp[index])
            except IndexError as e:
                raise IndexError(f"Index {index} is out of range for one of the input "
                                 f"MapDataPipes {dp}.") from e
        return tuple(res)

    def __len__(self) -> int:
        return min(len(dp) for dp in self.datapipes)
