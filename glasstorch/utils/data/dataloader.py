"""DataLoader (torch/utils/data/dataloader.py): a dataset, a sampler and a collate
function, iterated batch by batch.

    DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, collate_fn, ...)
      index sampler   batch_sampler (automatic batching) or sampler (batch_size=None);
                      by default BatchSampler(RandomSampler or SequentialSampler)
      fetcher         _utils/fetch.py: indices -> samples -> collate_fn -> batch
      iterator        _SingleProcessDataLoaderIter (num_workers=0) or
                      _MultiProcessingDataLoaderIter (num_workers>0, simulated: see below)

Random draws happen where PyTorch makes them: each iterator draws a
``base_seed`` from ``generator`` (or the default generator) when it is created,
then a shuffling RandomSampler draws its own seed when the first batch is
requested (at creation with workers, which prefetch), so after
``manual_seed(s)`` the batches are PyTorch's.

Note [Simulated workers]: with ``num_workers > 0`` glasstorch loads in the main
process, but as PyTorch's workers would: ``num_workers`` simulated workers
(_utils/worker.py), each with its own copy of the dataset (a shallow one: where
PyTorch's forked worker owns a full copy, containers the dataset mutates in
place are shared here), its ``WorkerInfo`` (``get_worker_info()`` answers
inside it), ``worker_init_fn`` called once, and ``random``/torch/numpy seeded
from ``base_seed + worker_id`` in generator states of its own.  Tasks go round
robin to the active workers with PyTorch's prefetching (``prefetch_factor *
num_workers`` index batches in flight) and come back in order, so the batches —
an IterableDataset replicated or sharded per worker, random augmentations drawn
inside workers, worker errors ("Caught ... in DataLoader worker process N") —
are the ones PyTorch gives (``in_order=False`` keeps that order too).  Nothing
runs in parallel, hence a one-time warning.  Real processes would need tensors
pickled across process boundaries and PyTorch's shutdown and error machinery;
the simulation keeps the results identical and deterministic instead.
``timeout`` and ``multiprocessing_context`` are validated, otherwise unused.

``pin_memory``: glasstorch has no page-locked memory; the flag is accepted and,
as in PyTorch without an accelerator, warned about when iterating.
"""
from __future__ import annotations

import itertools
import math
import multiprocessing
import warnings
from collections import deque
from typing import Generic, TypeVar

from ... import cuda, empty, int64
from . import _utils
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_T_co = TypeVar("_T_co", covariant=True)

default_collate = _utils.collate.default_collate
default_convert = _utils.collate.default_convert
get_worker_info = _utils.worker.get_worker_info


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        fetcher = (_utils.fetch._MapDatasetFetcher if kind == _DatasetKind.Map
                   else _utils.fetch._IterableDatasetFetcher)
        return fetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """``None`` forever: the sampler of an IterableDataset (keys mean nothing there)."""

    def __iter__(self):
        return itertools.repeat(None)


class DataLoader(Generic[_T_co]):
    """Iterate over ``dataset`` in batches (see the module docstring)."""

    __initialized = False

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        # dataset checks come first: an IterableDataset takes no sampler at all
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self.__initialized = True
        self._IterableDataset_len_called = None   # len(self) of an IterableDataset, to check
        self._iterator = None

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        if multiprocessing_context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(multiprocessing_context, str):
                valid_start_methods = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in valid_start_methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {valid_start_methods!r}, but got "
                                     f"multiprocessing_context={multiprocessing_context!r}")
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={multiprocessing_context}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                           "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        # persistent workers outlive an epoch: one iterator, reset for each new pass
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What the iterator draws keys from: batches of keys when auto-collating."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Map:
            return len(self._index_sampler)
        # An IterableDataset's own length, in batches; remembered so that the iterator
        # can warn if the stream turns out longer.
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else math.ceil(
                length / self.batch_size)
        return length


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                          f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                          stacklevel=3)
        if loader.pin_memory and not cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(empty((), dtype=int64).random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)    # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            message = (f"Length of IterableDataset {self._dataset} was reported to be "
                       f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                       f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                message += ("For multiprocessing data-loading, this could be caused by not "
                            "properly configuring the IterableDataset replica at each worker. "
                            "Please see https://pytorch.org/docs/stable/data.html#torch.utils."
                            "data.IterableDataset for examples.")
            warnings.warn(message, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()                   # may raise StopIteration
        return self._dataset_fetcher.fetch(index)    # may raise StopIteration


_warned_simulated_workers = False


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """``num_workers > 0``: PyTorch's task bookkeeping over simulated workers
    (Note [Simulated workers] above)."""

    def __init__(self, loader) -> None:
        super().__init__(loader)
        global _warned_simulated_workers
        if not _warned_simulated_workers:
            _warned_simulated_workers = True
            warnings.warn(f"DataLoader(num_workers={self._num_workers}): glasstorch runs the "
                          "workers one after another in the main process; batches and worker "
                          "seeds are PyTorch's, but loading is not parallel.", stacklevel=3)
        self._prefetch_factor = loader.prefetch_factor
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")

        def make_fetcher(dataset):
            return _DatasetKind.create_fetcher(self._dataset_kind, dataset,
                                               self._auto_collation, self._collate_fn,
                                               self._drop_last)

        self._workers = [
            _utils.worker.SimulatedWorker(
                worker_id, self._num_workers, self._base_seed, self._dataset,
                self._dataset_kind == _DatasetKind.Iterable, make_fetcher,
                loader.worker_init_fn)
            for worker_id in range(self._num_workers)]
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False) -> None:
        super()._reset(loader, first_iter)
        self._tasks = deque()      # (worker id, index) sent and not yet returned, in order
        # whether each worker still has data this epoch (an IterableDataset copy can end)
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for worker in self._workers:
                worker.resume()
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        """Draw the next index and give it to the next active worker in the cycle."""
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                self._tasks.append((worker_id, index))
                return

    def _next_data(self):
        while self._tasks:
            worker_id, index = self._tasks.popleft()
            if not self._workers_status[worker_id]:
                continue                        # that worker's stream ended before this task
            try:
                data = self._workers[worker_id].fetch(index)
            except Exception:
                self._try_put_index()           # a task came back, even as an error
                raise
            ended = isinstance(data, _utils.worker._IterableDatasetStopIteration)
            if ended:
                self._workers_status[worker_id] = False
            self._try_put_index()               # one task back, one out
            if not ended:
                return data
        raise StopIteration
