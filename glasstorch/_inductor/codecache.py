"""``torch._inductor.codecache``: generated C compiled once and kept on disk.

An entry's key hashes the C source, the compiler flags, the compiler's
version and the CPU's feature flags.  It lives in
``$TORCHINDUCTOR_CACHE_DIR`` (default ``<tmp>/torchinductor_<user>``) as
``<key[:2]>/c<key>.c``, the shared library ``c<key>.so`` and ``c<key>.sha256``,
the library's checksum.

Every file is written to a temporary name and moved into place, and the
checksum only after its library.  A library is loaded only when its bytes
match its checksum; anything else (a truncated file, a half-written one,
garbage) is compiled again.  So two processes compiling the same kernel
at once both succeed (the second move replaces a whole file with an equal
one), and a damaged entry costs a recompilation, never a crash.
"""
from __future__ import annotations

import ctypes
import functools
import getpass
import hashlib
import os
import shutil
import subprocess
import tempfile

from .._ops.kernels import native
from . import config

FLAGS = ["-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-fno-trapping-math",
         "-ffp-contract=off", "-shared", "-fPIC", "-std=gnu11"]


def cache_dir() -> str:
    root = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if root:
        return root
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return os.path.join(tempfile.gettempdir(), f"torchinductor_{user}")


def compiler() -> str | None:
    return config.cpp.cxx or shutil.which("cc") or shutil.which("gcc")


@functools.cache
def _compiler_version(path: str) -> str:
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""


def available() -> bool:
    """A C compiler is there (else compiled graphs run their ATen kernels)."""
    return os.environ.get("GLASSTORCH_NATIVE", "1") != "0" and compiler() is not None


def flags() -> list:
    extra = ["-mprefer-vector-width=512"] if "avx512f" in native._cpu_id() else []
    return FLAGS + extra + list(config.cpp.extra_flags)


def _no_builtin(source: str) -> list:
    # GCC merges sin and cos of one value into sincos, which has no vector version
    return [f"-fno-builtin-{f}" for f in ("sin", "sinf", "cos", "cosf") if f + "(" in source]


def key_of(source: str) -> str:
    cc = compiler() or ""
    text = "\0".join([source, " ".join(flags()), _compiler_version(cc), native._cpu_id()])
    return hashlib.sha256(text.encode()).hexdigest()


def _checksum(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _write_atomic(path: str, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class CompileError(RuntimeError):
    """The C compiler rejected generated code (a bug in glasstorch)."""


def load(source: str):
    """The compiled library of ``source`` (a ctypes.CDLL), from the cache when
    a verified entry exists, else compiled now and stored."""
    key = key_of(source)
    directory = os.path.join(cache_dir(), key[:2])
    os.makedirs(directory, exist_ok=True)
    stem = os.path.join(directory, f"c{key}")
    so, sums = stem + ".so", stem + ".sha256"
    expected = _read(sums)
    if expected is None or _checksum(so) != expected:
        _write_atomic(stem + ".c", source)
        result = native.compile_to([compiler(), *flags(), *_no_builtin(source), stem + ".c",
                                    "-lm", "-lmvec"], so)
        if result.returncode != 0:
            raise CompileError(f"C compilation failed for {stem}.c:\n{result.stderr}")
        _write_atomic(sums, _checksum(so))
    return native._load_passive(so)


def path_of(source: str) -> str:
    """Where ``source``'s entry lives (without the extension)."""
    key = key_of(source)
    return os.path.join(cache_dir(), key[:2], f"c{key}")


def void_p():
    return ctypes.c_void_p
