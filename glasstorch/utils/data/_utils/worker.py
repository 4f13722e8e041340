"""DataLoader workers (torch/utils/data/_utils/worker.py), simulated in the main process.

PyTorch starts ``num_workers`` processes; worker ``i`` gets a copy of the
dataset, seeds ``random``, torch and numpy from ``base_seed + i``, runs
``worker_init_fn(i)`` and then fetches the batches the main process sends it.
glasstorch runs each worker in the main process instead (see the Note in
dataloader.py).  A ``SimulatedWorker`` keeps everything a worker process would
own — a shallow copy of the dataset, its ``WorkerInfo``, its own fetcher and its
own states of the three random generators — and installs them only while it
works (``_as_current``), so the main process's RNG streams are untouched and
the worker's streams are the ones PyTorch's worker would have.
"""
from __future__ import annotations

import contextlib
import copy
import random
import traceback
from dataclasses import dataclass

import numpy as np

from .... import random as torch_random
from ...._core.generator import Generator

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's ``WorkerInfo``; ``None`` in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's answer once its copy of an iterable dataset is exhausted."""

    worker_id: int


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """Worker ``worker_id``'s numpy seed: four 32-bit words from numpy's SeedSequence
    hashing of ``[worker_id, base_seed low, base_seed high, 0]`` (as PyTorch does,
    so numpy's stream differs from ``random``'s that share ``base_seed + worker_id``)."""
    mask32 = 0xFFFFFFFF
    hash_const = 0x43B0D7E5                  # SeedSequence INIT_A

    def hash_word(value):
        nonlocal hash_const
        value = (value ^ hash_const) & mask32
        hash_const = (hash_const * 0x931E8875) & mask32      # MULT_A
        value = (value * hash_const) & mask32
        return value ^ (value >> 16)

    def mix(x, y):
        result = ((0xCA01F9DD * x) - (0x4973F715 * y)) & mask32   # MIX_MULT_L, MIX_MULT_R
        return result ^ (result >> 16)

    pool = [hash_word(v) for v in (worker_id, base_seed & mask32, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hash_word(pool[src]))

    out_const = 0x8B51F9DD                   # INIT_B
    state = []
    for word in pool:
        word = (word ^ out_const) & mask32
        out_const = (out_const * 0x58F38DED) & mask32         # MULT_B
        word = (word * out_const) & mask32
        state.append(word ^ (word >> 16))
    return state


def _rng_states():
    return torch_random.get_rng_state(), random.getstate(), np.random.get_state()


def _set_rng_states(states) -> None:
    torch_state, python_state, numpy_state = states
    torch_random.set_rng_state(torch_state)
    random.setstate(python_state)
    np.random.set_state(numpy_state)


def reraise_from_worker(exc: BaseException, worker_id: int):
    """Raise ``exc`` as PyTorch re-raises a worker's exception in the main process:
    same type, message "Caught <Type> in DataLoader worker process <id>." followed by
    the original traceback (RuntimeError when the type cannot take a message)."""
    exc_type = type(exc)
    formatted = "".join(traceback.format_exception(exc_type, exc, exc.__traceback__))
    msg = (f"Caught {exc_type.__name__} in DataLoader worker process {worker_id}.\n"
           f"Original {formatted}")
    if exc_type is KeyError:
        msg = _KeyErrorMessage(msg)
    elif getattr(exc_type, "message", None):
        raise exc_type(message=msg) from None
    try:
        reraised = exc_type(msg)
    except Exception:
        raise RuntimeError(msg) from None
    raise reraised from None


class _KeyErrorMessage(str):
    """A message KeyError shows as is (KeyError would otherwise print its repr)."""

    __slots__ = ()

    def __repr__(self):
        return self


class SimulatedWorker:
    """Worker ``worker_id`` of a DataLoader iterator, run in the main process."""

    def __init__(self, worker_id, num_workers, base_seed, dataset, iterable, make_fetcher,
                 init_fn):
        seed = base_seed + worker_id
        self.id = worker_id
        self._iterable = iterable
        self.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                               dataset=copy.copy(dataset))
        self._make_fetcher = make_fetcher
        self._rng = (Generator().manual_seed(seed).get_state(), random.Random(seed).getstate(),
                     np.random.RandomState(_generate_state(base_seed, worker_id)).get_state())
        self._init_error = None
        with self._as_current():
            try:
                if init_fn is not None:
                    init_fn(worker_id)
                self._fetcher = make_fetcher(self.info.dataset)
            except Exception as exc:    # reported with the worker's first batch, as PyTorch does
                self._init_error = exc

    @contextlib.contextmanager
    def _as_current(self):
        """Run as this worker: its WorkerInfo and RNG states installed, the caller's
        restored afterwards."""
        global _worker_info
        outer_rng, outer_info = _rng_states(), _worker_info
        _set_rng_states(self._rng)
        _worker_info = self.info
        try:
            yield
        finally:
            _worker_info = outer_info
            self._rng = _rng_states()
            _set_rng_states(outer_rng)

    def fetch(self, index):
        """The worker's answer to one task: the data, an ``_IterableDatasetStopIteration``,
        or (raised) its exception, re-raised as PyTorch's main process does."""
        if self._init_error is not None:      # a worker that failed to start fails every task
            reraise_from_worker(self._init_error, self.id)
        with self._as_current():
            try:
                return self._fetcher.fetch(index)
            except StopIteration as stop:
                if self._iterable:
                    return _IterableDatasetStopIteration(self.id)
                error = stop
            except Exception as exc:
                error = exc
        reraise_from_worker(error, self.id)

    def resume(self) -> None:
        """A new epoch with persistent workers: a fresh fetcher, RNG streams continue."""
        with self._as_current():
            self._fetcher = self._make_fetcher(self.info.dataset)
