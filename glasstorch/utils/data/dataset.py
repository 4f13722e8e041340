"""Datasets (torch/utils/data/dataset.py).

Two kinds, as in PyTorch:

* map-style (``Dataset``): ``ds[key]`` and usually ``len(ds)``;
  ``TensorDataset``, ``StackDataset``, ``ConcatDataset``, ``Subset`` and the
  subsets ``random_split`` makes are map-style;
* iterable-style (``IterableDataset``): ``iter(ds)`` streams samples;
  ``ChainDataset`` chains several.

``ds1 + ds2`` concatenates map-style datasets and chains iterable ones.
"""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from typing import Generic, Iterable, TypeVar

from ... import randperm
from ...random import default_generator

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset",
           "Subset", "TensorDataset", "random_split"]

_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map from keys to samples: subclasses define ``__getitem__``, usually
    ``__len__`` (no default, see ``Sampler``), and may define ``__getitems__(keys)``
    returning a list of samples, which the DataLoader then uses per batch."""

    def __getitem__(self, index) -> _T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """A stream of samples: subclasses define ``__iter__``.  With DataLoader workers,
    each worker iterates its own copy; ``get_worker_info()`` lets ``__iter__`` or a
    ``worker_init_fn`` give each copy its share."""

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``."""

    def __init__(self, *tensors) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets of one length side by side: sample ``i`` is the tuple (positional
    datasets) or dict (keyword datasets) of their samples ``i``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or"
                             "``dict``- (via ``kwargs``) like input/output, but both types "
                             "are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = list(args or kwargs.values())
        self._length = len(datasets[0])
        if any(self._length != len(dataset) for dataset in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list):
        """A batch, asking each part for all ``indices`` at once when it can."""
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        columns = {key: self._column(dataset, indices) for key, dataset in parts}
        if named:
            return [{key: column[row] for key, column in columns.items()}
                    for row in range(len(indices))]
        return [tuple(column[row] for column in columns.values()) for row in range(len(indices))]

    @staticmethod
    def _column(dataset, indices):
        if not callable(getattr(dataset, "__getitems__", None)):
            return [dataset[i] for i in indices]
        items = dataset.__getitems__(indices)
        if len(items) != len(indices):
            raise ValueError("Nested dataset's output size mismatch."
                             f" Expected {len(indices)}, got {len(items)}")
        return items

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[_T_co]):
    """Map-style datasets one after another; ``cumulative_sizes[k]`` is the length of
    the first ``k + 1`` together."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[dataset_idx - 1] if dataset_idx > 0 else 0
        return self.datasets[dataset_idx][idx - start]

    @property
    def cummulative_sizes(self):
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained lazily."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset[_T_co]):
    """``dataset`` seen through ``indices``: ``subset[i] == dataset[indices[i]]``.

    A subclass overriding ``__getitem__`` must override ``__getitems__`` too (the
    DataLoader would otherwise bypass its ``__getitem__``).
    """

    def __init__(self, dataset: Dataset[_T_co], indices) -> None:
        self.dataset = dataset
        self.indices = indices
        if (type(self).__getitem__ is not Subset.__getitem__
                and type(self).__getitems__ is Subset.__getitems__):
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        parent_indices = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(parent_indices)
        return [self.dataset[i] for i in parent_indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths, generator=default_generator) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given lengths.

    ``lengths`` may be fractions summing to 1: each split gets
    ``floor(frac * len(dataset))`` items, then the remainder is dealt one item at
    a time to the splits in order (round robin).  The order comes from
    ``randperm(len(dataset), generator=generator)``.
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[end - length:end])
            for end, length in zip(itertools.accumulate(lengths), lengths)]


def _lengths_from_fractions(fractions, total: int) -> list[int]:
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(total * frac))
    for i in range(total - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. "
                          "This might result in an empty dataset.", stacklevel=3)
    return lengths
