"""``torch.utils.cpp_extension``: C++ extensions compiled just in time.

``load_inline(name, cpp_sources, functions=[...])`` and ``load(name, sources)``
build ordinary PyTorch extension sources with the system compiler
(``c++ -O2 -shared -fPIC -std=c++17``) and return a module of Python
functions.  The sources compile unchanged because ``#include
<torch/extension.h>`` finds glasstorch's header first: a small C++ surface
(``at::Tensor`` with ``data_ptr<T>()``, sizes and strides, ``torch::empty_like``,
``TORCH_CHECK``, ``AT_DISPATCH_FLOATING_TYPES``, ``PYBIND11_MODULE``,
``TORCH_LIBRARY`` ...; the header lists it) over a C ABI:

* the library is loaded with ctypes; each tensor crosses as a struct of data
  pointer (storage offset applied), dtype code (c10::ScalarType), device,
  ndim, sizes and strides in elements; scalars as int64 / double / bool
  (``glasstorch/include/glasstorch/extension_abi.h`` documents it, and
  ``_cpp_abi.py`` is the Python half);
* tensors the C++ code makes (``torch::empty_like``, ``x.contiguous()``) come
  from a callback into glasstorch, so their bytes come from glasstorch's
  allocator, the work goes through the dispatcher, and the result is a real
  glasstorch tensor;
* a C++ exception (``TORCH_CHECK``) is caught at the boundary and raised as the
  Python exception PyTorch raises (RuntimeError with the message).

The returned functions take glasstorch tensors, so one can be registered as
the CPU kernel of a custom operator (``Library.impl(name, ext.fn, "CPU")``);
``TORCH_LIBRARY`` blocks in the sources register themselves.

Builds are cached: the build directory (``build_directory``, else
``$TORCH_EXTENSIONS_DIR/<name>``, else ``get_default_build_root()/py311_cpu/<name>``)
keeps the library with a hash of its sources, flags and compiler, and an
unchanged extension is not compiled again.  Within one process a changed
extension is rebuilt as ``<name>_v1``, ``<name>_v2`` ... (a library cannot be
loaded twice under one path), as PyTorch does.  A lock file in the build
directory serializes concurrent builds.  What every extension shares (the
runtime, ``glasstorch/csrc/extension_runtime.cpp``, and a precompiled
``torch/extension.h``) is built once per compiler into ``<root>/prebuilt/``,
so a small extension builds in about half a second.  CUDA sources are
refused: glasstorch builds CPU extensions only.  Calls hold the GIL, as
pybind11's do by default.
"""
from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shlex
import subprocess
import sys
import threading

from .._ops.kernels import native
from . import _cpp_abi

__all__ = ["load", "load_inline", "include_paths", "get_default_build_root"]

logger = logging.getLogger(__name__)

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INCLUDE_DIR = os.path.join(_PACKAGE_DIR, "include")
_RUNTIME_SOURCE = os.path.join(_PACKAGE_DIR, "csrc", "extension_runtime.cpp")
_RUNTIME_OBJECT = "extension_runtime.o"
_CXX_FLAGS = ["-O2", "-shared", "-fPIC", "-std=c++17", "-DTORCH_API_INCLUDE_EXTENSION_H"]
_C_FLAGS = ["-O2", "-fPIC", "-c"]
_CUDA_SUFFIXES = (".cu", ".cuh")
_C_SUFFIXES = (".c",)


def get_default_build_root() -> str:
    """The folder under which extensions are built, one subfolder each
    (``$XDG_CACHE_HOME/glasstorch_extensions``); user-specific, as PyTorch's."""
    return os.path.realpath(os.path.join(native.user_cache_root(), "glasstorch_extensions"))


def include_paths(device_type: str = "cpu", torch_include_dirs=True) -> list[str]:
    """The include directories an extension is compiled with: glasstorch's
    headers (``torch/extension.h`` and the C ABI)."""
    return [_INCLUDE_DIR] if torch_include_dirs else []


def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None,
         extra_ldflags=None, extra_include_paths=None, build_directory=None, verbose=False,
         with_cuda=None, with_sycl=None, is_python_module=True, is_standalone=False,
         keep_intermediates=True):
    """Build ``sources`` (C++ files, or C files for plain C code) into the
    extension ``name`` and load it: a module of the functions its
    ``PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)`` block defines, or, when
    ``is_python_module`` is False, the library's path (its ``TORCH_LIBRARY``
    operators registered)."""
    if is_python_module and is_standalone:
        raise ValueError("`is_python_module` and `is_standalone` are mutually exclusive.")
    if is_standalone:
        raise NotImplementedError("glasstorch does not build standalone executables "
                                  "(is_standalone=True)")
    sources = [sources] if isinstance(sources, str) else sources
    return _jit_compile(name, [os.path.abspath(s) for s in sources],
                        extra_cflags, extra_ldflags, extra_include_paths,
                        build_directory or _get_build_directory(name, verbose), verbose,
                        with_cuda or with_sycl, is_python_module)


def load_inline(name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None,
                extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None,
                extra_ldflags=None, extra_include_paths=None, build_directory=None,
                verbose=False, with_cuda=None, with_sycl=None, is_python_module=True,
                with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False,
                no_implicit_headers=False):
    """Build an extension from source strings: ``cpp_sources`` are joined into
    ``main.cpp`` after ``#include <torch/extension.h>``, and ``functions`` (a
    list of names, or a dict of name -> docstring) get generated bindings, as
    in PyTorch.  See ``load`` for the rest."""
    build_directory = build_directory or _get_build_directory(name, verbose)
    cpp_sources = [cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources)
    cuda_sources = [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources or [])
    sycl_sources = [sycl_sources] if isinstance(sycl_sources, str) else list(sycl_sources or [])
    if cuda_sources or sycl_sources or with_cuda or with_sycl:
        _refuse_gpu(name)
    if not no_implicit_headers:
        cpp_sources.insert(0, "#include <torch/extension.h>")
    if functions is not None:
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, list):
            functions = {f: f for f in functions}
        elif not isinstance(functions, dict):
            raise ValueError("Expected 'functions' to be a list or dict, but was "
                             f"{type(functions)}")
        cpp_sources.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        cpp_sources += [f'm.def("{fn}", torch::wrap_pybind_function({fn}), "{doc}");'
                        for fn, doc in functions.items()]
        cpp_sources.append("}")
    os.makedirs(build_directory, exist_ok=True)
    source_path = os.path.join(build_directory, "main.cpp")
    _maybe_write(source_path, "\n".join(cpp_sources))
    return _jit_compile(name, [source_path], extra_cflags, extra_ldflags, extra_include_paths,
                        build_directory, verbose, False, is_python_module)


# -- building --------------------------------------------------------------------------

class _ExtensionVersioner:
    """Per process, per name: a version bumped whenever the sources or flags
    change, so a rebuilt extension gets a new library name (``name_v1``)."""

    def __init__(self):
        self.entries: dict = {}

    def bump_version_if_changed(self, name: str, build_hash: str) -> tuple:
        """(old version or None, new version)."""
        old = self.entries.get(name)
        if old is None:
            self.entries[name] = (0, build_hash)
        elif old[1] != build_hash:
            self.entries[name] = (old[0] + 1, build_hash)
        return (None if old is None else old[0]), self.entries[name][0]


_versioner = _ExtensionVersioner()
_build_lock = threading.Lock()


def _jit_compile(name, sources, extra_cflags, extra_ldflags, extra_include_paths,
                 build_directory, verbose, with_cuda, is_python_module):
    if with_cuda is None:
        with_cuda = any(s.endswith(_CUDA_SUFFIXES) for s in sources)
    if with_cuda:
        _refuse_gpu(name)
    include_dirs = [_INCLUDE_DIR, *(extra_include_paths or [])]
    cflags, ldflags = list(extra_cflags or []), list(extra_ldflags or [])
    with _build_lock:
        build_hash = _build_hash(sources, include_dirs, cflags, ldflags, build_directory)
        old_version, version = _versioner.bump_version_if_changed(name, build_hash)
        if version > 0:
            if version != old_version and verbose:
                logger.info("The input conditions for extension module %s have changed.", name)
                logger.info("Bumping to version %s and re-building as %s_v%s...",
                            version, name, version)
            name = f"{name}_v{version}"
        library_path = os.path.join(build_directory, f"{name}.so")
        if version != old_version or not os.path.exists(library_path):   # (or it failed)
            with _BuildDirectoryLock(build_directory):
                _build(name, sources, include_dirs, cflags, ldflags, build_directory,
                       library_path, build_hash, verbose)
        elif verbose:
            logger.debug("No modifications detected for re-loaded extension module %s, "
                         "skipping build step...", name)
    if verbose:
        logger.info("Loading extension module %s...", name)
    return _cpp_abi.load_library(library_path, name, is_python_module)


def _build(name, sources, include_dirs, cflags, ldflags, build_directory, library_path,
           build_hash, verbose):
    """Compile and link unless the library there was built from these same
    inputs (its hash is kept beside it), e.g. by an earlier process."""
    stamp = library_path + ".hash"
    if os.path.exists(library_path) and _read(stamp) == build_hash:
        if verbose:
            logger.debug("Extension module %s is up to date, skipping build step...", name)
        return
    if verbose:
        logger.info("Building extension module %s...", name)
    includes = [f"-I{d}" for d in include_dirs]
    objects = []
    for source in sources:
        if source.endswith(_C_SUFFIXES):   # plain C: compiled by cc, then linked in
            obj = os.path.join(build_directory, os.path.basename(source) + ".o")
            _run(name, [_compiler("CC", "cc"), *_C_FLAGS, *includes, *cflags, source], obj,
                 verbose)
            objects.append(obj)
    cxx_sources = [s for s in sources if not s.endswith(_C_SUFFIXES)]
    if cflags:   # the user's flags: the runtime is compiled with them
        runtime = [_RUNTIME_SOURCE]
    else:
        prebuilt = _prebuilt_support(verbose)
        includes = [f"-I{prebuilt}", *includes]
        runtime = [os.path.join(prebuilt, _RUNTIME_OBJECT)]
    _run(name, [_compiler("CXX", "c++"), *_CXX_FLAGS, f"-DTORCH_EXTENSION_NAME={name}",
                *includes, *cflags, *cxx_sources, *runtime, *objects, *ldflags], library_path,
         verbose)
    with open(stamp, "w") as f:
        f.write(build_hash)


def _prebuilt_support(verbose) -> str:
    """A folder, built once per compiler and glasstorch checkout, holding what
    every extension built with the default flags shares: the runtime object
    (``extension_runtime.cpp`` compiled) and ``torch/extension.h.gch``, a
    precompiled header.  Put first on the include path, it lets GCC load the
    parsed header instead of parsing it again (most of a small extension's
    build time); a compiler that cannot use it (clang) reads the header."""
    cxx = _compiler("CXX", "c++")
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256("\0".join([cxx, version, _INCLUDE_DIR, *_CXX_FLAGS,
                                    *map(_read, _support_files())]).encode()).hexdigest()[:16]
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or get_default_build_root()
    folder = os.path.join(root, "prebuilt", key)
    pch = os.path.join(folder, "torch", "extension.h.gch")
    runtime = os.path.join(folder, _RUNTIME_OBJECT)
    if not (os.path.exists(pch) and os.path.exists(runtime)):
        with _BuildDirectoryLock(folder):
            stub = os.path.join(folder, "extension_pch.h")
            _maybe_write(stub, "#include <torch/extension.h>\n")
            # a second ``#include <torch/extension.h>`` finds this file beside the .gch
            # (not the .gch again): it includes the real header, whose guards are set
            os.makedirs(os.path.join(folder, "torch"), exist_ok=True)
            _maybe_write(os.path.join(folder, "torch", "extension.h"),
                         f'#include "{os.path.join(_INCLUDE_DIR, "torch", "extension.h")}"\n')
            compile_pch = [cxx, *_CXX_FLAGS, f"-I{_INCLUDE_DIR}", "-x", "c++-header", stub]
            compile_runtime = [cxx, *_CXX_FLAGS, "-c", f"-I{folder}", f"-I{_INCLUDE_DIR}",
                               _RUNTIME_SOURCE]
            for command, output in ((compile_pch, pch), (compile_runtime, runtime)):
                if not os.path.exists(output):
                    _run("glasstorch_extension_runtime", command, output, verbose)
    return folder


def _run(name, command, output, verbose):
    if verbose:
        print(shlex.join([*command, "-o", output]), flush=True)
    result = native.compile_to(command, output)
    if verbose and (result.stdout or result.stderr):
        print(result.stdout + result.stderr, end="", flush=True)
    if result.returncode != 0:
        command_line = shlex.join([*command, "-o", output])
        raise RuntimeError(f"Error building extension '{name}': {command_line}\n"
                           f"{result.stdout}{result.stderr}")


def _compiler(variable, default) -> str:
    return os.environ.get(variable) or default


def _build_hash(sources, include_dirs, cflags, ldflags, build_directory) -> str:
    """What the library depends on: sources, flags, compilers, glasstorch's headers
    and runtime."""
    h = hashlib.sha256()
    for part in (*sources, *cflags, *ldflags, *include_dirs, build_directory,
                 _compiler("CXX", "c++"), _compiler("CC", "cc"), *_CXX_FLAGS):
        h.update(part.encode() + b"\0")
    for path in (*sources, *_support_files()):
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def _support_files() -> list:
    """glasstorch's side of every extension: the headers and the runtime source."""
    return sorted(os.path.join(root, f) for root, _, files in os.walk(_INCLUDE_DIR)
                  for f in files) + [_RUNTIME_SOURCE]


class _BuildDirectoryLock:
    """An exclusive lock on ``<build_directory>/lock`` (PyTorch's FileBaton,
    as a flock: a crashed build leaves no stale lock behind)."""

    def __init__(self, build_directory):
        os.makedirs(build_directory, exist_ok=True)
        self.path = os.path.join(build_directory, "lock")

    def __enter__(self):
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def _get_build_directory(name: str, verbose: bool) -> str:
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    if root is None:
        python = f"py{sys.version_info.major}{sys.version_info.minor}{getattr(sys, 'abiflags', '')}"
        root = os.path.join(get_default_build_root(), f"{python}_cpu")
    if verbose:
        logger.info("Using %s as PyTorch extensions root...", root)
    build_directory = os.path.join(root, name)
    os.makedirs(build_directory, exist_ok=True)
    return build_directory


def _maybe_write(path: str, content: str) -> None:
    """Write unless the file already holds ``content`` (keeps its mtime)."""
    if _read(path) != content:
        with open(path, "w") as f:
            f.write(content)


def _read(path: str):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _refuse_gpu(name: str):
    from .. import cuda
    reason = ("CUDA is not available (torch.cuda.is_available() is False)"
              if not cuda.is_available() else "glasstorch does not compile CUDA code")
    raise RuntimeError(f"Error building extension '{name}': glasstorch builds C++ extensions "
                       f"for the CPU only, and this one has CUDA (or SYCL) sources: {reason}. "
                       "Bind a CPU implementation instead.")
