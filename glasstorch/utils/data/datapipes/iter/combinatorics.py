"""``Sampler`` and ``Shuffler`` (``shuffle``)
(torch/utils/data/datapipes/iter/combinatorics.py)."""
from __future__ import annotations

import random
from typing import Iterator, Sized, TypeVar

from ..... import empty, int64
from ...sampler import Sampler, SequentialSampler
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe, _hooked_state
from ..utils.common import _no_valid_length

__all__ = ["SamplerIterDataPipe", "ShufflerIterDataPipe"]

_T_co = TypeVar("_T_co", covariant=True)


class SamplerIterDataPipe(IterDataPipe[_T_co]):
    """The items of ``sampler(*sampler_args, data_source=datapipe, **sampler_kwargs)``
    (by default a ``SequentialSampler``: its indices)."""

    datapipe: IterDataPipe
    sampler: Sampler

    def __init__(self, datapipe: IterDataPipe, sampler: type[Sampler] = SequentialSampler,
                 sampler_args: tuple | None = None, sampler_kwargs: dict | None = None) -> None:
        if not isinstance(datapipe, Sized):
            raise AssertionError("Sampler class requires input datapipe implemented `__len__`")
        super().__init__()
        self.datapipe = datapipe
        self.sampler_args = () if sampler_args is None else sampler_args
        self.sampler_kwargs = {} if sampler_kwargs is None else sampler_kwargs
        self.sampler_kwargs["data_source"] = self.datapipe
        self.sampler = sampler(*self.sampler_args, **self.sampler_kwargs)

    def __iter__(self) -> Iterator[_T_co]:
        return iter(self.sampler)

    def __len__(self) -> int:
        if isinstance(self.sampler, Sized):
            return len(self.sampler)
        raise _no_valid_length(self)


def _draw_seed() -> int:
    """One int64 from the default generator: the seed of an unseeded shuffle."""
    return int(empty((), dtype=int64).random_().item())


@functional_datapipe("shuffle")
class ShufflerIterDataPipe(IterDataPipe[_T_co]):
    """Shuffle through a buffer of ``buffer_size`` items: once the buffer is full,
    each new item takes the place of a random one, which is yielded; at the end
    the buffer empties in random order.

    The draws come from a ``random.Random`` seeded at each ``reset`` (each new
    iterator) with the seed given by ``set_seed`` (the DataLoader gives one per
    epoch), else with an int64 drawn from glasstorch's default generator;
    ``set_shuffle(False)`` passes the items through.
    """

    datapipe: IterDataPipe[_T_co]
    buffer_size: int

    def __init__(self, datapipe: IterDataPipe[_T_co], *, buffer_size: int = 10000,
                 unbatch_level: int = 0) -> None:
        super().__init__()
        self._buffer: list = []
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        self.datapipe = datapipe if unbatch_level == 0 else \
            datapipe.unbatch(unbatch_level=unbatch_level)
        self.buffer_size = buffer_size
        self._enabled = True
        self._seed = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed: int):
        self._seed = seed
        return self

    def __iter__(self) -> Iterator[_T_co]:
        if not self._enabled:
            yield from self.datapipe
            return
        for x in self.datapipe:
            if len(self._buffer) == self.buffer_size:
                idx = self._rng.randint(0, len(self._buffer) - 1)
                val, self._buffer[idx] = self._buffer[idx], x
                yield val
            else:
                self._buffer.append(x)
        while self._buffer:
            idx = self._rng.randint(0, len(self._buffer) - 1)
            yield self._buffer.pop(idx)

    def __len__(self) -> int:
        if isinstance(self.datapipe, Sized):
            return len(self.datapipe)
        raise _no_valid_length(self)

    def reset(self) -> None:
        self._buffer = []
        if self._enabled:
            if self._seed is None:
                self._seed = _draw_seed()
            self._rng.seed(self._seed)
            self._seed = None

    def __getstate__(self):
        state = (self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer,
                 self._rng.getstate(), self._valid_iterator_id, self._number_of_samples_yielded)
        return _hooked_state(IterDataPipe, state)

    def __setstate__(self, state):
        (self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer, rng_state,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._rng = random.Random()
        self._rng.setstate(rng_state)

    def __del__(self) -> None:
        self._buffer.clear()
