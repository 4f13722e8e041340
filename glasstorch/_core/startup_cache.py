"""What importing glasstorch builds from its declarations, kept between runs.

Importing glasstorch parses ``native_functions.yaml`` and ``derivatives.yaml``
and compiles one argument parser per overload (about 1800 small functions).
That is half of the import's time, and it gives the same result every time
for the same files and the same Python.  So the parsed YAML and the parsers'
code objects are stored with ``marshal`` in one file per Python version,
under the user cache directory (``$GLASSTORCH_CACHE_DIR``, default
``~/.cache/glasstorch``), keyed by the SHA-256 of their source text.

The file is read once at import; entries made during the import are written
back at its end (``save``), to a temporary name moved into place.  A missing,
unreadable or damaged file is an empty cache: everything is built as before.
``GLASSTORCH_STARTUP_CACHE=0`` turns the cache off.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile

_entries: dict | None = None
_dirty = False


def user_cache_root() -> str:
    """``$XDG_CACHE_HOME`` or ``~/.cache``: where compiled code is kept between runs."""
    return os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")


def cache_dir() -> str:
    """glasstorch's own cache: ``$GLASSTORCH_CACHE_DIR``, else ``<user cache>/glasstorch``."""
    return os.environ.get("GLASSTORCH_CACHE_DIR") or os.path.join(user_cache_root(), "glasstorch")


def _path() -> str:
    tag = sys.implementation.cache_tag or "python"
    return os.path.join(cache_dir(), f"startup-{tag}.marshal")


def _enabled() -> bool:
    return os.environ.get("GLASSTORCH_STARTUP_CACHE", "1") != "0"


def _cache() -> dict:
    global _entries
    if _entries is None:
        _entries = {}
        if _enabled():
            try:
                with open(_path(), "rb") as f:
                    loaded = marshal.load(f)
                if isinstance(loaded, dict):
                    _entries = loaded
            except (OSError, EOFError, ValueError, TypeError):
                pass
    return _entries


def _key(kind: str, text: str) -> str:
    return kind + ":" + hashlib.sha256(text.encode()).hexdigest()


def cached(kind: str, text: str, build):
    """``build()``, the value derived from ``text`` (marshal-able), from the
    cache when ``text`` was seen before."""
    global _dirty
    entries = _cache()
    key = _key(kind, text)
    if key not in entries:
        entries[key] = build()
        _dirty = True
    return entries[key]


def compile_cached(source: str, filename: str, mode: str = "exec"):
    """``compile(source, filename, mode)``, the code object kept between runs."""
    return cached(f"code:{filename}:{mode}", source, lambda: compile(source, filename, mode))


def save() -> None:
    """Write the cache back if this import added to it (never raises)."""
    global _dirty
    if not (_dirty and _enabled()):
        return
    path = _path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            marshal.dump(_entries, f)
        os.replace(tmp, path)
        _dirty = False
    except (OSError, ValueError):
        pass
