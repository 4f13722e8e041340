"""``Shuffler`` (``shuffle`` of a MapDataPipe) (torch/utils/data/datapipes/map/combinatorics.py)."""
from __future__ import annotations

import random
from typing import Iterator, TypeVar

from ..datapipe import IterDataPipe, MapDataPipe, _hooked_state
from ..iter.combinatorics import _draw_seed

__all__ = ["ShufflerIterDataPipe"]

_T_co = TypeVar("_T_co", covariant=True)


class ShufflerIterDataPipe(IterDataPipe[_T_co]):
    """The items of a MapDataPipe at ``indices`` (all, by default) in an order drawn
    at each ``reset`` with ``random.Random(seed).sample``: the seed is the one given
    by ``set_seed``, else an int64 drawn from glasstorch's default generator.  An
    IterDataPipe: ``list(map_dp.shuffle())``."""

    def __init__(self, datapipe: MapDataPipe[_T_co], *, indices: list | None = None) -> None:
        super().__init__()
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._enabled = True
        self._seed = None
        self._rng = random.Random()
        self._shuffled_indices: list = self.indices

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed: int):
        self._seed = seed
        return self

    def __iter__(self) -> Iterator[_T_co]:
        if not self._enabled:
            for idx in self.indices:
                yield self.datapipe[idx]
        else:
            while self._shuffled_indices:
                yield self.datapipe[self._shuffled_indices.pop()]

    def reset(self) -> None:
        if self._enabled and self._seed is None:
            self._seed = _draw_seed()
        # (disabled and unseeded: seeded from the system, the order is not used)
        self._rng.seed(self._seed)
        self._seed = None
        self._shuffled_indices = self._rng.sample(self.indices, len(self.indices))

    def __len__(self) -> int:
        return len(self.datapipe)

    def __getstate__(self):
        return _hooked_state(IterDataPipe, (
            self.datapipe, self.indices, self._enabled, self._seed, self._rng.getstate(),
            self._shuffled_indices, self._valid_iterator_id, self._number_of_samples_yielded))

    def __setstate__(self, state):
        (self.datapipe, self.indices, self._enabled, self._seed, rng_state,
         self._shuffled_indices, self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._rng = random.Random()
        self._rng.setstate(rng_state)


MapDataPipe.register_datapipe_as_function("shuffle", ShufflerIterDataPipe)
