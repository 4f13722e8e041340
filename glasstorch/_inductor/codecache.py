"""``torch._inductor.codecache``: generated C compiled once and kept on disk.

An entry's key hashes the C source, the compiler command and flags, the
compiler's version and the CPU's feature flags.  It lives in
``$TORCHINDUCTOR_CACHE_DIR`` (default ``<tmp>/torchinductor_<user>``, read at
each compilation, so ``fresh_inductor_cache`` can move it) as
``<key[:2]>/c<key>.c``, the shared library ``c<key>.so`` and ``c<key>.sha256``,
the library's checksum.

Every file is written to a temporary name and moved into place, and the
checksum only after its library.  An entry is used only when it is whole: its
checksum file holds a SHA-256, the library's bytes match it, and the ``.c``
holds exactly the source being compiled; and a library that still fails to
load (``dlopen`` refuses it) counts as damaged.  Anything else (a truncated,
empty or garbage library, a missing or garbled checksum, a stale or missing
``.c``) is compiled again and the entry rewritten.  So a damaged entry costs a
recompilation, never a crash or the load of a bad library; and two processes
compiling the same kernel at once both succeed (each moves a whole file over
an equal one; a checksum that ends up naming the other process's library only
costs a later recompilation).

Decisions where there is no cache to use:

* A cache directory that cannot be written (read-only, not a directory, no
  permission) does not stop compilation: a verified entry already there is
  still loaded, and otherwise the kernel is compiled into a private
  directory of this process (``tempfile.mkdtemp``, removed at exit; its
  entries are not shared with other processes), with one ``RuntimeWarning``
  per cache directory.  Compiled code stays compiled; only sharing is lost.
* No C compiler (``GLASSTORCH_NATIVE=0``, or ``$CC`` / ``config.cpp.cxx``
  naming a program that is not there, or neither ``cc`` nor ``gcc`` on the
  ``PATH``): ``available()`` is False and ``compile_fx`` runs each graph as its
  ATen kernels.  A compiler that is named but missing is not replaced by
  another one.
* A compiler that rejects the generated C raises ``CompileError``;
  ``compile_fx`` then warns and runs that graph as its ATen kernels (a
  compiler without OpenMP or libmvec must not stop a program).
"""
from __future__ import annotations

import atexit
import functools
import getpass
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import warnings

from .._ops.kernels import native
from . import config

FLAGS = ["-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-fno-trapping-math",
         "-ffp-contract=off", "-shared", "-fPIC", "-std=gnu11",
         "-Werror=implicit-function-declaration",   # an error in newer compilers: fail alike
         "-Wl,-Bsymbolic"]   # a C wrapper's calls reach its own library's kernels, whatever
                             # another loaded library of the same names exports

# the files of a cache entry: c<sha256 hex>.<c|so|sha256>
ENTRY_FILE = re.compile(r"c[0-9a-f]{64}\.(c|so|sha256)")
_HEX = re.compile(r"[0-9a-f]{64}")


def cache_dir() -> str:
    root = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if root:
        return root
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return os.path.join(tempfile.gettempdir(), f"torchinductor_{user}")


def _compiler_command() -> list | None:
    """The compiler as a command (``$CC`` may carry words, ``ccache gcc``) with
    its program resolved on the ``PATH``; None when it is not there."""
    if config.cpp.cxx:
        words = shlex.split(config.cpp.cxx)
        program = shutil.which(words[0]) if words else None
        return [program, *words[1:]] if program else None
    program = shutil.which("cc") or shutil.which("gcc")
    return [program] if program else None


def compiler() -> str | None:
    """The C compiler's executable, or None when there is none."""
    command = _compiler_command()
    return command[0] if command else None


@functools.cache
def _compiler_version(path: str) -> str:
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""


_cpu_id = functools.cache(native._cpu_id)


def available() -> bool:
    """A C compiler is there (else compiled graphs run their ATen kernels)."""
    return os.environ.get("GLASSTORCH_NATIVE", "1") != "0" and _compiler_command() is not None


def flags() -> list:
    extra = ["-mprefer-vector-width=512"] if "avx512f" in _cpu_id() else []
    return FLAGS + extra + list(config.cpp.extra_flags)


def _no_builtin(source: str) -> list:
    # GCC merges sin and cos of one value into sincos, which has no vector version
    return [f"-fno-builtin-{f}" for f in ("sin", "sinf", "cos", "cosf") if f + "(" in source]


def key_of(source: str) -> str:
    command = _compiler_command() or [""]
    text = "\0".join([source, " ".join(command), " ".join(flags()),
                      _compiler_version(command[0]), _cpu_id()])
    return hashlib.sha256(text.encode()).hexdigest()


def _checksum(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _recorded_checksum(path: str) -> str | None:
    """The SHA-256 a checksum file records; None when it is missing or garbled."""
    data = _read_bytes(path)
    if data is None:
        return None
    text = data.decode("ascii", "replace").strip()
    return text if _HEX.fullmatch(text) else None


def _write_atomic(path: str, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class CompileError(RuntimeError):
    """The C compiler rejected generated code (a bug in glasstorch)."""


def _stem(root: str, key: str) -> str:
    return os.path.join(root, key[:2], f"c{key}")


def _load_entry(stem: str, source: str):
    """The library of a whole, verified entry; None when the entry is missing,
    damaged or stale, or its library does not load."""
    expected = _recorded_checksum(stem + ".sha256")
    if expected is None or _checksum(stem + ".so") != expected:
        return None
    if _read_bytes(stem + ".c") != source.encode("utf-8"):
        return None
    try:
        return native.load_library(stem + ".so")
    except OSError:
        return None


def _store(stem: str, source: str) -> None:
    """Write the entry: the C, then its library, then the library's checksum,
    each moved into place whole.  OSError when the directory cannot be written."""
    os.makedirs(os.path.dirname(stem), exist_ok=True)
    for suffix in (".c", ".so", ".sha256"):
        # a directory where an entry's file belongs (nothing writes one there, but
        # it would stop every later move into place)
        if os.path.isdir(stem + suffix) and not os.path.islink(stem + suffix):
            shutil.rmtree(stem + suffix, ignore_errors=True)
    _write_atomic(stem + ".c", source)
    so = stem + ".so"
    result = native.compile_to([*_compiler_command(), *flags(), *_no_builtin(source),
                                stem + ".c", "-lm", "-lmvec"], so)
    if result.returncode != 0:
        raise CompileError(f"C compilation failed for {stem}.c:\n{result.stderr}")
    checksum = _checksum(so)
    if checksum is None:   # moved away under us (a concurrent cleanup)
        raise FileNotFoundError(so)
    _write_atomic(stem + ".sha256", checksum)


_private = None
_warned = set()


def _private_dir() -> str:
    """This process's own cache, for when the shared one cannot be written."""
    global _private
    if _private is None or not os.path.isdir(_private):
        _private = tempfile.mkdtemp(prefix="torchinductor_private_")
        atexit.register(shutil.rmtree, _private, True)
    return _private


def load(source: str):
    """The compiled library of ``source`` (a ctypes.CDLL), from the cache when
    a verified entry exists, else compiled now and stored."""
    key = key_of(source)
    root = cache_dir()
    stem = _stem(root, key)
    library = _load_entry(stem, source)
    if library is not None:
        return library
    try:
        _store(stem, source)
    except OSError as error:
        private = _private_dir()
        if root not in _warned:
            _warned.add(root)
            warnings.warn(f"the Inductor cache directory {root} cannot be written ({error}); "
                          f"compiling into this process's own directory {private}",
                          RuntimeWarning, stacklevel=2)
        stem = _stem(private, key)
        library = _load_entry(stem, source)
        if library is not None:
            return library
        _store(stem, source)
    return native.load_library(stem + ".so")


def path_of(source: str) -> str:
    """Where ``source``'s entry lives (without the extension)."""
    return _stem(cache_dir(), key_of(source))

