"""Noticing dead DataLoader workers (torch/utils/data/_utils/signal_handling.py and
torch/csrc/DataLoader.cpp).

A worker killed by a signal, or exiting with an error code, would leave the main
process waiting for its data.  Each multi-process iterator registers its
workers' pids (``_set_worker_pids``); a SIGCHLD handler, installed once in the
main thread, then checks those pids whenever a child changes state
(``_error_if_any_worker_fails``) and raises a RuntimeError naming the worker and
the signal or exit code.  It looks without reaping (``WNOWAIT``), so
``Process.is_alive()`` and ``join()`` still see the child's status.

In a worker, ``_set_worker_signal_handlers`` makes a fatal signal (SIGSEGV,
SIGBUS, SIGFPE...) print where it happened before the process dies of it (PyTorch
prints a one-line message from C; here Python's faulthandler prints the stack).
"""
from __future__ import annotations

import faulthandler
import os
import signal
import threading

_worker_pids: dict[int, set[int]] = {}
_SIGCHLD_handler_set = False


def _set_worker_pids(loader_id: int, pids: tuple) -> None:
    if loader_id in _worker_pids:
        raise ValueError("_set_worker_pids should be called only once for each "
                         "_BaseDataLoaderIter.")
    _worker_pids[loader_id] = set(pids)


def _remove_worker_pids(loader_id: int) -> None:
    if _worker_pids.pop(loader_id, None) is None:
        raise ValueError(f"Cannot find worker information for _BaseDataLoaderIter with id "
                         f"{loader_id}")


def _error_if_any_worker_fails() -> None:
    """Raise if a registered worker exited with an error code or was killed."""
    for pids in _worker_pids.values():
        for pid in pids:
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:       # already reaped
                continue
            if info is None:                # still running
                continue
            if info.si_code == os.CLD_EXITED and info.si_status != 0:
                message = (f"DataLoader worker (pid {pid}) exited unexpectedly with exit code "
                           f"{info.si_status}. Details are lost due to multiprocessing. "
                           "Rerunning with num_workers=0 may give better error trace.")
            elif info.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
                message = (f"DataLoader worker (pid {pid}) is killed by signal: "
                           f"{signal.strsignal(info.si_status)}. ")
                if info.si_status == signal.SIGBUS:
                    message += ("It is possible that dataloader's workers are out of shared "
                                "memory. Please try to raise your shared memory limit.")
            else:
                continue
            pids.clear()        # report once: the error will bring the other workers down
            raise RuntimeError(message)


def _set_SIGCHLD_handler() -> None:
    """Install (once, and only from the main thread, as signals require) the handler
    that checks workers, chained to any Python handler already there."""
    global _SIGCHLD_handler_set
    if _SIGCHLD_handler_set or threading.current_thread() is not threading.main_thread():
        return
    previous_handler = signal.getsignal(signal.SIGCHLD)
    if not callable(previous_handler):
        previous_handler = None

    def handler(signum, frame):
        from . import python_exit_status
        if not python_exit_status:      # at exit, multiprocessing terminates workers itself
            _error_if_any_worker_fails()
        if previous_handler is not None:
            previous_handler(signum, frame)

    signal.signal(signal.SIGCHLD, handler)
    _SIGCHLD_handler_set = True


def _set_worker_signal_handlers() -> None:
    faulthandler.enable()
