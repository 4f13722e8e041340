"""``torch._inductor.utils``: helpers around Inductor, for now its cache in tests.

``fresh_inductor_cache()`` (also ``fresh_cache``) gives a block of code an
empty on-disk cache, as torch's does:

    with torch._inductor.utils.fresh_inductor_cache():
        torch.compile(fn)(x)        # compiles its kernels anew, into a new temp dir

Only the disk cache is fresh: functions already compiled in this process
keep their compiled code (``torch._dynamo.reset()`` forgets that), as in torch.
"""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import tempfile
from typing import Any, Iterator

log = logging.getLogger(__name__)

_registered_caches: list = []


def clear_on_fresh_cache(obj: Any) -> Any:
    """Register ``obj`` (anything with ``cache_clear()``, e.g. a ``functools.cache``
    function) to be cleared on entering and leaving ``fresh_cache``."""
    if not callable(getattr(obj, "cache_clear", None)):
        raise AttributeError(f"{obj} does not have a cache_clear method")
    _registered_caches.append(obj)
    return obj


def clear_caches() -> None:
    """Clear every registered in-memory cache."""
    for obj in _registered_caches:
        obj.cache_clear()


@contextlib.contextmanager
def _set_env(key: str, value: str) -> Iterator[None]:
    """``os.environ[key] = value`` for a block; the old value (or its absence) after."""
    old = os.environ.get(key)
    os.environ[key] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = old


def cache_entries_of(root: str) -> dict:
    """The files of the compiled kernels under the cache ``root``: file name ->
    size in bytes (the ``.c``, ``.so`` and ``.sha256`` of each entry; files
    being written, which still have temporary names, and locks left out)."""
    from .codecache import ENTRY_FILE
    entries = {}
    for directory, _, files in os.walk(root):
        for name in files:
            if ".lock" in name or not ENTRY_FILE.fullmatch(name):
                continue
            try:
                entries[name] = os.path.getsize(os.path.join(directory, name))
            except OSError:       # removed meanwhile
                pass
    return entries


def _remove(path: str) -> None:
    """``rmtree``, logging (not raising) what cannot be removed."""
    def failed(func, name, error):
        log.warning("Failed to remove temporary cache dir at %s", path, exc_info=error)
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=failed)
    else:
        shutil.rmtree(path, onerror=failed)


@contextlib.contextmanager
def fresh_cache(cache_entries: dict | None = None, dir: str | None = None,
                delete: bool = True) -> Iterator[None]:
    """A new, empty Inductor cache for the block: ``TORCHINDUCTOR_CACHE_DIR`` (and
    ``TRITON_CACHE_DIR``, its ``triton`` subdirectory, as torch sets it) point at
    a directory made by ``tempfile.mkdtemp(dir=dir)``; their previous values, or
    their absence, come back after.

    When the block ends normally: a ``cache_entries`` dict (which must be
    empty) receives the entries the block compiled, file name -> size (torch
    lists its Triton kernels there, so on a CPU build torch leaves it empty;
    glasstorch lists its C kernels' files); then, with ``delete``, the
    directory is removed (a failure to remove it is logged, not raised).  When
    the block raises, the directory is kept for inspection (logged) and the
    error goes on.  Registered in-memory caches are cleared on entry and exit.
    """
    clear_caches()
    inductor_cache_dir = tempfile.mkdtemp(dir=dir)
    try:
        with _set_env("TORCHINDUCTOR_CACHE_DIR", inductor_cache_dir):
            log.debug("Using inductor cache dir %s", inductor_cache_dir)
            triton_cache_dir = os.path.join(inductor_cache_dir, "triton")
            with _set_env("TRITON_CACHE_DIR", triton_cache_dir):
                yield
                if isinstance(cache_entries, dict):
                    assert len(cache_entries) == 0, "expected empty cache_entries dict"
                    cache_entries.update(cache_entries_of(inductor_cache_dir))
        if delete:
            _remove(inductor_cache_dir)
    except Exception:
        log.warning("on error, temporary cache dir kept at %s", inductor_cache_dir)
        raise
    finally:
        clear_caches()


# torch's older names, kept by torch for backward compatibility
fresh_inductor_cache = fresh_cache
clear_on_fresh_inductor_cache = clear_on_fresh_cache
clear_inductor_caches = clear_caches
