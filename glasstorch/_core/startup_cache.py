"""What importing glasstorch builds from its declarations, kept between runs.

Importing glasstorch parses ``native_functions.yaml`` and ``derivatives.yaml``
and compiles about 2200 small functions: an argument parser per Python
signature, a gradient formula per derivative, an autograd kernel per
differentiable op and a key-set function per argument layout.  That is half
of the import's time, and it gives the same result every time for the same
files and the same Python.  So the parsed YAML and the functions'
code objects are stored with ``marshal`` in one file per Python version,
under the user cache directory (``$GLASSTORCH_CACHE_DIR``, default
``~/.cache/glasstorch``), keyed by the SHA-256 of their source text.

The file is read once at import; entries made during the import are written
back at its end (``save``), to a temporary name moved into place.  A missing,
unreadable or damaged file (its checksum tells) is an empty cache: everything
is built as before.
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
_DIGEST_SIZE = hashlib.sha256().digest_size


def user_cache_root() -> str:
    """``$XDG_CACHE_HOME`` or ``~/.cache``: where compiled code is kept between runs."""
    return os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")


def cache_dir() -> str:
    """glasstorch's own cache: ``$GLASSTORCH_CACHE_DIR``, else ``<user cache>/glasstorch``."""
    return os.environ.get("GLASSTORCH_CACHE_DIR") or os.path.join(user_cache_root(), "glasstorch")


def _path() -> str:
    tag = sys.implementation.cache_tag or "python"
    return os.path.join(cache_dir(), f"startup-{tag}-v2.marshal")


def _enabled() -> bool:
    return os.environ.get("GLASSTORCH_STARTUP_CACHE", "1") != "0"


def _cache() -> dict:
    global _entries
    if _entries is None:
        _entries = _read() if _enabled() else {}
    return _entries


def _read() -> dict:
    """The entries of the cache file; none when it is missing or damaged.  The
    file is the SHA-256 of the marshalled entries, then those: damage that
    still unmarshals (a changed byte in a name) is caught too."""
    try:
        with open(_path(), "rb") as f:
            data = f.read()
        digest, payload = data[:_DIGEST_SIZE], data[_DIGEST_SIZE:]
        if hashlib.sha256(payload).digest() == digest:
            loaded = marshal.loads(payload)
            if isinstance(loaded, dict):
                return loaded
    except (OSError, EOFError, ValueError, TypeError):
        pass
    return {}


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


def cached_yaml(kind: str, text: str):
    """The YAML document ``text``, parsed with libyaml's safe loader where there
    is one, from the cache when seen before.  ``yaml`` itself is imported only
    to parse: a warm start does without it (~20 ms)."""
    def parse():
        import yaml
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return cached(kind, text, parse)


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
        payload = marshal.dumps(_entries)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)
        except OSError:
            os.unlink(tmp)
            raise
        _dirty = False
    except (OSError, ValueError):
        pass
