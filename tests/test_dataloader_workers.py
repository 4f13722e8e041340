"""DataLoader worker processes and torch.multiprocessing against real PyTorch.

Both libraries start real worker processes here, so the scenarios compare what
crosses the process boundary: batches and their order with 0, 1 and 3 workers,
worker seeding (random augmentation drawn inside workers), persistent workers,
out-of-order delivery, worker errors, a worker killed by a signal, timeouts; and
for glasstorch alone: shared-memory storages, no orphan processes, no torch in
a spawned worker.  Datasets stay tiny: each scenario starts processes.
"""
from __future__ import annotations

import gc
import os
import random
import re
import signal
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glasstorch
from glasstorch.multiprocessing import reductions

from .test_data import attempt, augmenting, same, squares, stream


def no_pids(message):
    """A message with process ids replaced (they differ between runs)."""
    return re.sub(r"pid(\(s\))? \d+", r"pid\1 N", message)


def pid_dataset(lib, n, *, slow_index=None, kill_index=None):
    """Item i: (i, the pid of the process that loaded it).  ``kill_index``: that item
    kills its worker with SIGKILL (after a moment, so that the main process is
    waiting for data when it learns of it); ``slow_index``: that item takes a second."""
    class Pids(lib.utils.data.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            if i == kill_index:
                time.sleep(0.2)
                os.kill(os.getpid(), signal.SIGKILL)
            if i == slow_index:
                time.sleep(1)
            return i, os.getpid()
    return Pids()


def gone(pid) -> bool:
    """Whether no process (not even a zombie) has this pid any more."""
    return not os.path.exists(f"/proc/{pid}")


# -- batches, order and seeds as PyTorch gives them -------------------------------------


@pytest.mark.parametrize("num_workers", [0, 1, 3])
def test_batches_and_order_match_torch(num_workers):
    def scenario(lib):
        data = lib.utils.data
        lib.manual_seed(5)
        random.seed(6)
        np.random.seed(7)
        generator = lib.Generator().manual_seed(8)
        tensors = data.TensorDataset(lib.arange(22.).reshape(11, 2), lib.arange(11))

        def init(worker_id):        # draws from the worker's seeded generators
            info = data.get_worker_info()
            info.dataset.offset = float(lib.randint(0, 100, ()).item()) + worker_id

        class Offset(data.Dataset):
            offset = 0.0

            def __len__(self):
                return 5

            def __getitem__(self, i):
                return self.offset + i

        extra = {} if num_workers == 0 else dict(worker_init_fn=init)
        return (list(data.DataLoader(tensors, batch_size=3, shuffle=True, generator=generator,
                                     num_workers=num_workers)),
                list(data.DataLoader(augmenting(lib, 7), batch_size=2, shuffle=True,
                                     num_workers=num_workers)),
                list(data.DataLoader(Offset(), batch_size=2, num_workers=num_workers, **extra)),
                list(data.DataLoader(stream(lib, 7), batch_size=3, num_workers=num_workers)),
                list(data.DataLoader(stream(lib, 8, shard=True), batch_size=3,
                                     num_workers=num_workers)),
                list(data.DataLoader(squares(lib, 5), batch_size=None, num_workers=num_workers)),
                lib.rand(2), random.random(), np.random.rand())
    same(scenario)


@settings(max_examples=6)
@given(n=st.integers(0, 9), batch_size=st.integers(1, 4), num_workers=st.integers(1, 3),
       prefetch_factor=st.integers(1, 3), drop_last=st.booleans(), shard=st.booleans())
def test_iterable_dataset_sharding_matches_torch(n, batch_size, num_workers, prefetch_factor,
                                                 drop_last, shard):
    """Workers' copies of an IterableDataset end at different times; the batches
    that come back, and their order, are PyTorch's."""
    same(lambda lib: list(lib.utils.data.DataLoader(
        stream(lib, n, shard=shard), batch_size=batch_size, drop_last=drop_last,
        num_workers=num_workers, prefetch_factor=prefetch_factor)))


def test_persistent_workers_keep_processes_and_streams():
    def scenario(lib):
        data = lib.utils.data
        lib.manual_seed(3)
        loader = data.DataLoader(augmenting(lib, 5), batch_size=2, shuffle=True, num_workers=2,
                                 persistent_workers=True)
        return list(loader), list(loader), lib.rand(1)
    same(scenario)

    loader = glasstorch.utils.data.DataLoader(pid_dataset(glasstorch, 4), batch_size=2,
                                              num_workers=2, persistent_workers=True)
    epochs = [{int(p) for _, pids in loader for p in pids} for _ in range(2)]
    assert epochs[0] == epochs[1] and len(epochs[0]) == 2 and os.getpid() not in epochs[0]
    del loader
    gc.collect()
    assert all(gone(pid) for pid in epochs[0])


def test_out_of_order_delivery_gives_the_same_batches():
    # worker 0 is slow on its first item, so worker 1's batches may come first
    def batches(lib, in_order):
        return sorted(b[0].tolist() for b in lib.utils.data.DataLoader(
            pid_dataset(lib, 8, slow_index=0), batch_size=2, num_workers=2, in_order=in_order))
    import torch
    expected = [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert batches(torch, False) == batches(glasstorch, False) == expected


# -- errors --------------------------------------------------------------------------------


@pytest.fixture
def quick_torch_shutdown(monkeypatch):
    """After an error PyTorch's workers can take MP_STATUS_CHECK_INTERVAL (5 s) to be
    joined; shorten PyTorch's wait (glasstorch's workers exit at once)."""
    import torch
    monkeypatch.setattr(torch.utils.data._utils, "MP_STATUS_CHECK_INTERVAL", 0.05)


def test_worker_exception_is_reraised_as_torch_does(quick_torch_shutdown):
    def scenario(lib):
        data = lib.utils.data

        class Faulty(data.Dataset):
            def __len__(self):
                return 6

            def __getitem__(self, i):
                if i == 3:
                    raise ValueError(f"bad item {i}")
                if i == 5:
                    raise KeyError(i)
                return i

        def parts(fn):
            kind, message = attempt(fn)
            lines = message.splitlines()
            return kind, lines[0], lines[1], lines[-1]
        return (parts(lambda: list(data.DataLoader(Faulty(), batch_size=2, num_workers=2))),
                parts(lambda: list(data.DataLoader(Faulty(), sampler=[5], num_workers=1))))
    out = same(scenario)
    assert "Caught ValueError in DataLoader worker process 1." in str(out)


def test_killed_worker_gives_torchs_error(quick_torch_shutdown):
    def scenario(lib):
        try:
            list(lib.utils.data.DataLoader(pid_dataset(lib, 8, kill_index=0), batch_size=2,
                                           num_workers=2))
        except RuntimeError as error:
            return no_pids(str(error)), no_pids(str(error.__cause__))
        raise AssertionError("the killed worker went unnoticed")
    assert same(scenario)[1] == ("tuple", (
        "DataLoader worker (pid(s) N) exited unexpectedly",
        "DataLoader worker (pid N) is killed by signal: Killed. "))


def test_timeout_raises_torchs_error(quick_torch_shutdown):
    same(lambda lib: attempt(lambda: list(lib.utils.data.DataLoader(
        pid_dataset(lib, 2, slow_index=0), num_workers=1, timeout=0.1))))


# -- processes and shared memory (glasstorch only) -----------------------------------------


def test_leaving_a_loop_early_leaves_no_worker_processes():
    loader = glasstorch.utils.data.DataLoader(pid_dataset(glasstorch, 12), batch_size=2,
                                              num_workers=3)
    for _, pids in loader:
        break
    it = iter(loader)
    next(it)
    workers = [w.pid for w in it._workers]
    del it
    gc.collect()
    assert len(workers) == 3 and all(gone(pid) for pid in workers)
    assert int(pids[0]) != os.getpid()


def test_batches_from_workers_are_shared_glasstorch_tensors():
    data = glasstorch.utils.data
    base = glasstorch.arange(6.)
    leaf = glasstorch.ones(2, requires_grad=True)
    items = data.DataLoader([(base, base[2:], leaf)], batch_size=None, num_workers=1)
    (got_base, got_view, got_leaf), = list(items)
    stacked, = list(data.DataLoader(data.TensorDataset(base), batch_size=6, num_workers=1))
    assert type(stacked[0]) is glasstorch.Tensor and stacked[0].is_shared()
    assert stacked[0].tolist() == base.tolist()
    assert got_view.untyped_storage() is got_base.untyped_storage()       # views stay views
    assert got_view.storage_offset() == 2 and got_view.tolist() == [2, 3, 4, 5]
    assert got_leaf.requires_grad and got_leaf.is_leaf


def test_spawned_worker_never_imports_torch():
    from ._spawn_datasets import Probe
    batches = list(glasstorch.utils.data.DataLoader(Probe(), batch_size=2, num_workers=1,
                                                    multiprocessing_context="spawn"))
    assert [b[0].tolist() for b in batches] == [[0, 1], [2, 3]]
    assert [b[1].tolist() for b in batches] == [[False, False], [False, False]]


def test_share_memory_matches_torch():
    def scenario(lib):
        x = lib.arange(6.)
        view = x[2:]
        flags = [x.is_shared()]
        flags.append(x.share_memory_() is x)
        view[0] = 9.0
        flags += [x.is_shared(), view.is_shared(), x.untyped_storage().is_shared(),
                  lib.empty(0).share_memory_().is_shared(), lib.empty(2, device="meta").is_shared(),
                  lib.UntypedStorage(3).share_memory_().is_shared()]
        return (flags, x, attempt(lambda: lib.empty(2, device="meta").share_memory_()),
                (x + 1).is_shared())
    same(scenario)


def test_share_memory_keeps_allocator_books_and_releases_the_file():
    from glasstorch._core.allocator import cpu_allocator

    def shared_file(fd):
        try:
            return os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:glasstorch_shared")
        except FileNotFoundError:
            return False
    x = glasstorch.ones(1000)
    stats = cpu_allocator.stats
    current, allocations, frees = stats.current, stats.allocations, stats.frees
    x.share_memory_()
    assert (stats.current, stats.allocations, stats.frees) == (current, allocations + 1,
                                                               frees + 1)
    fd, nbytes = x.untyped_storage()._share_fd_cpu_()
    assert nbytes == 4000 and shared_file(fd)
    assert x._np() is x._np()           # the cached numpy view stays valid
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        x.resize_(2000)
    del x
    gc.collect()
    assert stats.current == current - 4000 and not shared_file(fd)


def test_forking_pickler_round_trips_match_torch():
    import torch
    from multiprocessing.reduction import ForkingPickler

    def scenario(lib):
        def round_trip(value):
            return ForkingPickler.loads(ForkingPickler.dumps(value))
        x = lib.arange(4.)
        param = lib.nn.Parameter(lib.ones(2))
        back = round_trip((x, x[1:], param, lib.empty(2, 3, device="meta")))
        storage = lib.UntypedStorage(4)
        return (back, back[0].data_ptr() == x.data_ptr(), back[1].storage_offset(),
                type(back[2]).__name__, back[2].requires_grad, back[3].device.type,
                round_trip(storage).is_shared(), x.is_shared(),
                attempt(lambda: ForkingPickler.dumps(param * 2)),
                attempt(lambda: ForkingPickler.dumps(lib.UntypedStorage(2, device="meta"))))
    same(scenario)
    assert torch.multiprocessing.get_all_sharing_strategies() == \
        glasstorch.multiprocessing.get_all_sharing_strategies()
    assert glasstorch.multiprocessing.get_sharing_strategy() == "file_descriptor"
    for lib in (torch, glasstorch):
        with pytest.raises(AssertionError, match="invalid sharing strategy 'x'"):
            lib.multiprocessing.set_sharing_strategy("x")
    x = glasstorch.arange(3)         # within one process the cache gives the storage back
    back = ForkingPickler.loads(ForkingPickler.dumps(x))
    assert back.untyped_storage() is x.untyped_storage()
    assert reductions.shared_cache[reductions.fd_id(x.untyped_storage()._share_fd_cpu_()[0])] \
        is x.untyped_storage()


def test_tensor_sent_to_a_process_is_shared_both_ways():
    ctx = glasstorch.multiprocessing.get_context("fork")
    queue, answers = ctx.Queue(), ctx.Queue()
    process = ctx.Process(target=_double_in_place, args=(queue, answers))
    process.start()
    x = glasstorch.arange(3.)
    queue.put(x)
    assert answers.get(timeout=30) is True
    process.join(timeout=30)
    assert process.exitcode == 0 and x.tolist() == [0.0, 2.0, 4.0]


def _double_in_place(queue, answers):
    received = queue.get()
    received.mul_(2)
    answers.put(received.is_shared())


# -- spawn / start_processes ---------------------------------------------------------------


def _fill_or_fail(i, out, how):
    """Process ``i`` of a group: write into the shared ``out``, or fail as ``how``
    says (one process each, so which failure is reported does not race)."""
    if how == "raise" and i == 1:
        raise ValueError(f"bad {i}")
    if how == "exit" and i == 0:
        os._exit(3)
    if how == "kill" and i == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    out[i] = i + 10


def test_start_processes_reports_failures_as_torch_does():
    def scenario(lib):
        mp = lib.multiprocessing

        def outcome(how):
            out = lib.zeros(2).share_memory_()
            try:
                result = mp.start_processes(_fill_or_fail, args=(out, how), nprocs=2,
                                            start_method="fork")
            except (mp.ProcessRaisedException, mp.ProcessExitedException) as error:
                lines = str(error).splitlines()
                return (type(error).__name__, error.error_index, lines[:4], lines[-1],
                        getattr(error, "exit_code", None), getattr(error, "signal_name", None))
            return result, out
        context = mp.start_processes(_fill_or_fail, args=(lib.zeros(2), "fine"), nprocs=2,
                                     join=False, start_method="fork")
        while not context.join():
            pass
        return ([outcome(how) for how in ("fine", "raise", "exit", "kill")],
                len(context.pids()), context.join())
    out = same(scenario)
    assert "ValueError: bad 1" in str(out)
