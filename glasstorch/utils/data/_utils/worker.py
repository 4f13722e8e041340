"""DataLoader worker processes (torch/utils/data/_utils/worker.py).

``_worker_loop`` is what each of a DataLoader's ``num_workers`` processes runs:

    seed random, glasstorch and numpy      from base_seed + worker_id, as PyTorch does
    an IterDataPipe's random steps         seeded from the iterator's shared seed, as in the
                                           main process (so every worker shuffles alike)
    WorkerInfo (get_worker_info())         id, num_workers, seed, this process's dataset
    worker_init_fn(worker_id), fetcher     an error here is sent back with the first task
    loop: index_queue.get()
        (idx, index)                       fetch -> data_queue.put((idx, batch)); the
                                           batch's tensors cross in shared memory; an
                                           exception crosses as an ExceptionWrapper; an
                                           exhausted IterableDataset copy answers
                                           _IterableDatasetStopIteration once
        _ResumeIteration                   persistent workers: a new epoch (new shared
                                           seed), new fetcher
        None                               exit

The loop polls every MP_STATUS_CHECK_INTERVAL seconds and exits if its parent
died (``ManagerWatchdog``), so no worker outlives the main process.
"""
from __future__ import annotations

import os
import queue
import random
from dataclasses import dataclass

import numpy as np

from .... import Generator, manual_seed, set_num_threads
from ...._utils import ExceptionWrapper
from . import MP_STATUS_CHECK_INTERVAL, signal_handling

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


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of each new epoch (and echoed back)."""

    seed: int | None = None


class ManagerWatchdog:
    """Whether the process that started this worker is still alive: an orphaned
    worker is re-parented, so its parent pid changes."""

    def __init__(self) -> None:
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self) -> bool:
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


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


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 shared_seed) -> None:
    """The body of worker process ``worker_id`` (see the module docstring)."""
    from ..dataloader import _DatasetKind
    from ..datapipes.datapipe import IterDataPipe
    from ..graph_settings import apply_random_seed
    global _worker_info
    try:
        signal_handling._set_worker_signal_handlers()
        set_num_threads(1)
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(_generate_state(base_seed, worker_id))
        shared_rng = Generator()
        if isinstance(dataset, IterDataPipe):
            if shared_seed is None:
                raise AssertionError("shared_seed must be provided for IterDataPipe workers")
            shared_rng.manual_seed(shared_seed)
            dataset = apply_random_seed(dataset, shared_rng)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)

        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                  collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        # Set once this worker's copy of an iterable dataset is exhausted: from then
        # on (as once done_event is set) tasks are skipped until the final None.
        iteration_end = False
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))       # acknowledge
                iteration_end = False
                if isinstance(dataset, IterDataPipe):
                    if r.seed is None:
                        raise AssertionError("resume iteration seed is None for IterDataPipe")
                    shared_rng.manual_seed(r.seed)
                    dataset = apply_random_seed(dataset, shared_rng)
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                      collate_fn, drop_last)
                continue
            if r is None:                       # the final signal
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r             # don't hold the batch while waiting
    except KeyboardInterrupt:
        pass                                    # the main process raises it
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
