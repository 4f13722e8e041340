"""DataLoader (torch/utils/data/dataloader.py): a dataset, a sampler and a collate
function, iterated batch by batch.

    DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, collate_fn, ...)
      index sampler   batch_sampler (automatic batching) or sampler (batch_size=None);
                      by default BatchSampler(RandomSampler or SequentialSampler)
      fetcher         _utils/fetch.py: indices -> samples -> collate_fn -> batch
      iterator        _SingleProcessDataLoaderIter (num_workers=0: fetches in this process)
                      or _MultiProcessingDataLoaderIter (num_workers>0: worker processes)

Random draws happen where PyTorch makes them: each iterator draws a
``base_seed`` from ``generator`` (or the default generator) when it is created,
then a shuffling RandomSampler draws its own seed when the first batch is
requested (at creation with workers, which prefetch), so after
``manual_seed(s)`` the batches are PyTorch's.

Workers (``num_workers > 0``), as PyTorch runs them:

    main process                                  worker i (_utils/worker.py)
    index_queues[i].put((task idx, indices))  ->  fetch + collate (into shared memory)
    data = worker_result_queue.get()          <-  put((task idx, batch or ExceptionWrapper))

``prefetch_factor * num_workers`` tasks are outstanding at a time, handed round
robin to the workers still active; batches are returned in task order (kept
aside when they arrive early) unless ``in_order=False``.  Each worker owns a
copy of the dataset (forked, or pickled for "spawn"/"forkserver" contexts), is
seeded from ``base_seed + worker_id`` and calls ``worker_init_fn``; an
IterableDataset copy that runs out answers once and gets no more tasks.
Worker exceptions are re-raised here ("Caught X in DataLoader worker process
N."); a worker that dies is reported by the SIGCHLD handler of
``_utils/signal_handling.py`` or by the liveness check made every
``MP_STATUS_CHECK_INTERVAL`` seconds; ``timeout`` bounds each wait.  Workers
are shut down (asked to exit, joined, terminated if need be) when the epoch
ends, when the iterator is garbage collected (a loop left early), or, with
``persistent_workers``, when the DataLoader's iterator goes away; between
epochs persistent workers get a ``_ResumeIteration``.

DataPipes, as PyTorch supports them: the DataLoader keeps an ``IterDataPipe``
or ``MapDataPipe`` in a serialization wrapper; ``shuffle`` switches the
pipeline's ``Shuffler``s on or off (``shuffle=True`` without one only warns:
the Shuffler it appends is not the pipeline iterated, as in PyTorch); each
iterator draws a shared seed from ``generator`` (before ``base_seed``) and
seeds every random DataPipe from it, in the main process and in each worker
alike; sharding DataPipes (``sharding_filter``) are sharded over the
distributed ranks in the main process (num_workers=0) or over ranks times
workers in the workers.

``pin_memory``: glasstorch has no page-locked memory; the flag is accepted and,
as in PyTorch without an accelerator, warned about when iterating.
"""
from __future__ import annotations

import functools
import itertools
import math
import multiprocessing
import multiprocessing.util
import os
import pickle
import queue
import time
import warnings
from typing import Generic, TypeVar

from ... import Generator, cuda, empty, int64
from ... import distributed as dist
from ... import multiprocessing as gt_multiprocessing
from ..._utils import ExceptionWrapper
from . import _utils, graph_settings
from .datapipes.datapipe import (IterDataPipe, MapDataPipe, _IterDataPipeSerializationWrapper,
                                 _MapDataPipeSerializationWrapper)
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


def _get_distributed_settings():
    """``(world size, rank)`` of the default process group; ``(1, 0)`` without one."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def _sharding_worker_init_fn(worker_init_fn, world_size, rank_id, worker_id) -> None:
    """A DataPipe worker's init: shard the worker's copy over all ranks' workers
    (rank-major order), then call the user's ``worker_init_fn``."""
    info = get_worker_info()
    if info is None:
        raise AssertionError("Worker info is None in sharding worker init function")
    datapipe = info.dataset
    if not isinstance(datapipe, (IterDataPipe, MapDataPipe)):
        raise AssertionError("datapipe must be an instance of IterDataPipe or MapDataPipe")
    graph_settings.apply_sharding(datapipe, info.num_workers * world_size,
                                  worker_id * world_size + rank_id)
    if worker_init_fn is not None:
        worker_init_fn(worker_id)


def _share_dist_seed(generator, pg) -> int:
    """An int64 from ``generator``: rank 0's, broadcast over ``pg`` when there is one."""
    shared_seed = empty((), dtype=int64).random_(generator=generator)
    if isinstance(pg, dist.ProcessGroup):
        dist.broadcast(shared_seed, src=0, group=pg)
    return shared_seed.item()


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
        if isinstance(dataset, IterDataPipe):
            self.dataset = _IterDataPipeSerializationWrapper(dataset)
        elif isinstance(dataset, MapDataPipe):
            self.dataset = _MapDataPipeSerializationWrapper(dataset)

        # dataset checks come first: an IterableDataset takes no sampler at all
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if isinstance(dataset, IterDataPipe):
                # (a Shuffler appended here is not the wrapped pipeline's, as in PyTorch)
                if shuffle is not None:
                    dataset = graph_settings.apply_shuffle_settings(dataset, shuffle=shuffle)
            elif shuffle not in {False, None}:
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
        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def check_worker_number_rationality(self) -> None:
        """Warn when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        max_workers = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if max_workers is not None and self.num_workers <= max_workers:
            return
        suggestion = (
            "DataLoader is not able to compute a suggested max number of worker in current "
            "system." if max_workers is None else
            f"Our suggested max number of worker in current system is {max_workers}"
            f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, which is "
            "smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. "
                      f"{suggestion} Please be aware that excessive worker creation might get "
                      "DataLoader running slow or even freeze, lower the worker number to avoid "
                      "potential slowness/freeze if necessary.", stacklevel=2)

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
        self._shared_seed = None
        self._pg = None
        if isinstance(self._dataset, IterDataPipe):
            if dist.is_available() and dist.is_initialized():
                self._pg = dist.new_group(backend="gloo")
            self._seed_datapipe(loader)
        self._world_size, self._rank = _get_distributed_settings()
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

    def _seed_datapipe(self, loader) -> None:
        """Draw the shared seed and seed the DataPipe's random steps from it."""
        self._shared_seed = _share_dist_seed(loader.generator, self._pg)
        shared_rng = Generator()
        shared_rng.manual_seed(self._shared_seed)
        self._dataset = graph_settings.apply_random_seed(self._dataset, shared_rng)

    def _reset(self, loader, first_iter=False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if isinstance(self._dataset, IterDataPipe):
            self._seed_datapipe(loader)

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
        if isinstance(self._dataset, (IterDataPipe, MapDataPipe)):
            graph_settings.apply_sharding(self._dataset, self._world_size, self._rank)
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()                   # may raise StopIteration
        return self._dataset_fetcher.fetch(index)    # may raise StopIteration


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """``num_workers > 0``: batches loaded by worker processes (see the module docstring).

    Task bookkeeping: ``_send_idx`` counts tasks sent, ``_rcvd_idx`` is the next task
    to return; ``_task_info[idx]`` is ``(worker_id,)`` while outstanding and
    ``(worker_id, data)`` once it arrived early.
    """

    _shutdown = True    # until workers exist: __del__ of a half-built iterator does nothing

    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        context = loader.multiprocessing_context or gt_multiprocessing
        self._worker_init_fn = loader.worker_init_fn
        if isinstance(self._dataset, (IterDataPipe, MapDataPipe)):
            self._worker_init_fn = functools.partial(_sharding_worker_init_fn,
                                                     self._worker_init_fn, self._world_size,
                                                     self._rank)
        self._data_queue = context.Queue()      # all workers' results
        self._worker_pids_set = False
        self._shutdown = False
        self._workers_done_event = context.Event()
        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()    # indices left unread must not block exit
            w = context.Process(
                target=_utils.worker._worker_loop,
                args=(self._dataset_kind, self._dataset, index_queue, self._data_queue,
                      self._workers_done_event,
                      self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                      self._worker_init_fn, i, self._num_workers, self._shared_seed))
            w.daemon = True     # multiprocessing terminates daemons when Python exits
            try:
                w.start()
            except (TypeError, AttributeError, pickle.PicklingError):
                warnings.warn(
                    "Got pickle error when attempting to start a worker Process. This might be "
                    "because the worker Process arguments are not picklable. Python 3.14+ changed "
                    "the multiprocessing start method in non-Mac POSIX platforms to 'forkserver', "
                    "which requires the worker Process arguments to be picklable. You can also "
                    "try multiprocessing.set_start_method('fork').", stacklevel=2)
                raise
            self._index_queues.append(index_queue)
            self._workers.append(w)
        # a process forked later (another loader's worker) inherits this object, not
        # its workers: there it must never try to shut them down
        multiprocessing.util.register_after_fork(self, _MultiProcessingDataLoaderIter._disown)
        _utils.signal_handling._set_worker_pids(id(self), tuple(w.pid for w in self._workers))
        _utils.signal_handling._set_SIGCHLD_handler()
        self._worker_pids_set = True
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        # whether each worker still has data this epoch (an IterableDataset copy can end)
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:      # persistent workers: start their new epoch, wait for each
            for index_queue in self._index_queues:
                index_queue.put(_utils.worker._ResumeIteration(self._shared_seed))
            resumed = 0
            while resumed < self._num_workers:
                returned, _ = self._get_data()
                if isinstance(returned, _utils.worker._ResumeIteration):
                    resumed += 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout=_utils.MP_STATUS_CHECK_INTERVAL):
        """``(True, data)``, or ``(False, None)`` after ``timeout`` seconds without data;
        raises if a worker died meanwhile (the SIGCHLD handler may raise first, from
        inside the wait: that error becomes this one's cause)."""
        try:
            return True, self._data_queue.get(timeout=timeout)
        except Exception as e:
            failed_workers = []
            for worker_id, w in enumerate(self._workers):
                if self._workers_status[worker_id] and not w.is_alive():
                    failed_workers.append(w)
                    self._mark_worker_as_unavailable(worker_id)
            if failed_workers:
                pids = ", ".join(str(w.pid) for w in failed_workers)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if not success:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _next_data(self):
        while True:
            # skip tasks whose worker ran out of data before answering them
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:     # it arrived early
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            idx, data = self._get_data()
            if isinstance(data, _utils.worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            if not self._in_order:
                return self._process_data(data, self._task_info.pop(idx)[0])
            self._task_info[idx] += (data,)     # keep it until its turn

    def _try_put_index(self) -> None:
        """Draw the next index and send it to the next active worker in the cycle (out
        of order: the next one with fewer than its share of outstanding tasks)."""
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id] and (
                    self._in_order or
                    self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id) -> None:
        """Tell a worker to exit (its dataset copy ended, it died, or we shut down)."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        """Ask every worker to exit, join them, terminate any that do not; once, and not
        while Python exits (multiprocessing then terminates the daemonic workers)."""
        if _utils.python_exit_status or self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id)
            deadline = time.monotonic() + _utils.MP_STATUS_CHECK_INTERVAL
            for w in self._workers:     # all together get what PyTorch gives each
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            if self._worker_pids_set:
                _utils.signal_handling._remove_worker_pids(id(self))
                self._worker_pids_set = False
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)

    def _disown(self) -> None:
        self._shutdown = True

    def __del__(self) -> None:
        self._shutdown_workers()
