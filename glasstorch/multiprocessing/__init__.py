"""``torch.multiprocessing``: the standard ``multiprocessing`` module, with tensors
that cross process boundaries through shared memory instead of being copied.

Everything ``multiprocessing`` exports is here (``Process``, ``Queue``,
``get_context``, ``set_start_method`` ...), and ``spawn``/``start_processes``
(spawn.py) start a group of processes and report the first failure.  Importing this module registers
the reducers of ``reductions.py`` with ``multiprocessing``'s ForkingPickler, so
a tensor put on a queue or passed to a started process is moved to shared
memory (``Tensor.share_memory_()``) and the receiver maps the same bytes.

Sharing strategies: PyTorch offers ``"file_descriptor"`` (the default on Linux)
and ``"file_system"``.  glasstorch implements file_descriptor only, over
anonymous ``memfd`` files, which have no name that could leak; both names are
accepted, and under ``"file_system"`` storages still travel as descriptors.
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException,  # noqa: F401
                    spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

if sys.platform in ("darwin", "win32"):
    _sharing_strategy = "file_system"
    _all_sharing_strategies = {"file_system"}
else:
    _sharing_strategy = "file_descriptor"
    _all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy) -> None:
    """Choose how CPU tensors are shared (one of ``get_all_sharing_strategies()``)."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, "
                             f"expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    return _sharing_strategy


def get_all_sharing_strategies() -> set:
    return _all_sharing_strategies


init_reductions()
