"""Native CPU loops: ``native.c`` compiled on first use with the system compiler.

Like Inductor's C++ backend, this compiles C source at run time (``cc -O3
-march=native -fopenmp``), caches the shared library on disk keyed by the
source, the flags and the CPU, and loads it with ctypes.  When no compiler is
available, or ``GLASSTORCH_NATIVE=0``, ``available()`` is False and kernels
keep their numpy path: the native loops are a fast path, never the only path.

Intra-op threads follow ``torch.set_num_threads`` / ``get_num_threads``: the
OpenMP loops here, and matrix products, whose output rows are split among that
many threads each calling single-threaded BLAS (``matmul``), as at::parallel_for
splits work.  numpy's OpenBLAS is pinned to one thread (found through ctypes):
its own thread hand-offs spin, and on a small, shared machine a product that
takes 1 ms on one core took 5 ms on two.
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import ctypes.util
import functools
import hashlib
import math
import os
import platform
import shutil
import subprocess
import tempfile
import warnings

import numpy as np

from ..._core.allocator import out_of_memory
from ..._core.startup_cache import cache_dir as _cache_dir, user_cache_root  # noqa: F401

_SOURCE = os.path.join(os.path.dirname(__file__), "native.c")
VECMATH_HEADER = os.path.join(os.path.dirname(__file__), "vecmath.h")
_FLAGS = ["-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off",
          "-fopenmp", "-shared", "-fPIC", "-std=c11"]
_lib = None
_tried = False
_threads = None


def _cpu_id() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return platform.processor()


def compile_to(command: list, path: str) -> subprocess.CompletedProcess:
    """Run the compiler ``command`` with ``-o`` a temporary file beside ``path``,
    then move it to ``path`` atomically, so a concurrent reader sees either no
    file or a whole one.  On failure nothing is left behind; the completed
    process (with the compiler's output) is returned either way."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=os.path.splitext(path)[1], dir=directory)
    os.close(fd)
    result = subprocess.run([*command, "-o", tmp], capture_output=True, text=True)
    if result.returncode != 0:
        os.unlink(tmp)
    else:
        os.replace(tmp, path)
    return result


def build(source_path: str):
    """Compile the C file ``source_path`` with these flags and load it; the shared
    library is cached on disk keyed by the source, the flags and the CPU.  None
    when there is no compiler or the compilation fails."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    with open(source_path, "rb") as f:
        source = f.read()
    with open(VECMATH_HEADER, "rb") as f:       # included by native.c
        source += f.read()
    key = hashlib.sha256(source + " ".join(_FLAGS).encode() + _cpu_id().encode()).hexdigest()[:16]
    stem = os.path.splitext(os.path.basename(source_path))[0]
    path = os.path.join(_cache_dir(), f"{stem}-{key}.so")
    if not os.path.exists(path) and \
            compile_to([compiler, *_FLAGS, source_path, "-lm"], path).returncode != 0:
        return None
    return load_library(path)


def companion(source_path: str, declare):
    """The loader of a C file compiled like native.c (fft.c, sorting.c, lapack.c):
    its first call builds the file and returns ``declare(lib)`` (which sets
    the functions' argtypes), every later call the same; None where native
    loops are off, no compiler exists or the build fails."""
    @functools.cache
    def load():
        try:
            lib = build(source_path) if library() is not None else None
        except OSError:
            lib = None
        return declare(lib) if lib is not None else None
    return load


def _build():
    lib = build(_SOURCE)
    if lib is None:
        return None
    f32p = ctypes.POINTER(ctypes.c_float)
    i64 = ctypes.c_int64
    lib.gt_exp_f32.argtypes = [f32p, f32p, i64]
    lib.gt_binary_f32.argtypes = [ctypes.c_int, f32p, f32p, f32p, i64]
    f64p = ctypes.POINTER(ctypes.c_double)
    lib.gt_libm_f64.argtypes = [ctypes.c_int, f64p, f64p, i64]
    lib.gt_libm_f32.argtypes = [ctypes.c_int, f32p, f32p, i64]
    lib.gt_normal_fill16_f32.argtypes = [f32p, i64, ctypes.c_float, ctypes.c_float, ctypes.c_int]
    lib.gt_normal_fill16_f64.argtypes = [f64p, i64, ctypes.c_double, ctypes.c_double]
    for suffix, p in (("f32", f32p), ("f64", f64p)):
        getattr(lib, f"gt_nll_cascade_{suffix}").argtypes = [
            p, p, ctypes.POINTER(ctypes.c_uint8), i64, ctypes.c_int, p, p]
    lib.gt_softmax_f32.argtypes = [f32p, f32p, i64, i64, ctypes.c_int, ctypes.c_int,
                                   ctypes.c_int, ctypes.c_int]
    lib.gt_softmax_backward_f32.argtypes = [f32p, f32p, f32p, i64, i64] + [ctypes.c_int] * 6
    f32 = ctypes.c_float
    lib.gt_gelu_f32.argtypes = [f32p, f32p, i64]
    lib.gt_gelu_backward_f32.argtypes = [f32p, f32p, f32p, i64]
    cint = ctypes.c_int
    for suffix, ptr, scalar in (("f32", f32p, f32), ("f64", f64p, ctypes.c_double)):
        getattr(lib, f"gt_axpy_{suffix}").argtypes = [ptr, ptr, scalar, ptr, i64, cint]
        getattr(lib, f"gt_addcmul_{suffix}").argtypes = [ptr, ptr, ptr, scalar, ptr, i64, cint]
        getattr(lib, f"gt_addcdiv_{suffix}").argtypes = [ptr, ptr, ptr, scalar, ptr, i64]
        getattr(lib, f"gt_lerp_{suffix}").argtypes = [ptr, ptr, scalar, ptr, i64, cint]
    for fn in (lib.gt_cascade_sum_f32, lib.gt_cascade_sum_f64):
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p] + [i64] * 6 + [cint]
    for fn in (lib.gt_sum_contiguous_f32, lib.gt_sum_contiguous_f64):
        fn.argtypes = [ctypes.c_void_p, i64, cint]
        fn.restype = ctypes.c_double
    for fn in (lib.gt_sum_chunks_f32, lib.gt_sum_chunks_f64):
        fn.argtypes = [ctypes.c_void_p, i64, i64, cint, ctypes.c_void_p]
    for fn in (lib.gt_real_to_complex_f32, lib.gt_real_to_complex_f64):
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, i64]
    lib.gt_set_num_threads.argtypes = [ctypes.c_int]
    lib.gt_get_num_threads.restype = ctypes.c_int
    if _threads is not None:
        lib.gt_set_num_threads(_threads)
    return lib


# libgomp's spin before an idle worker sleeps: ~20 ns a round here, so about
# 0.4 ms.  Consecutive kernels then find the workers awake (a sleeping one
# took 30-100 us to wake on these VMs), and a matrix product right after a
# loop (``matmul``'s row blocks on the intra-op threads) loses its core to a
# spinning worker for that long at most.  Measured on the 2-core dev box,
# glasstorch alone: MLP training step 11.1 -> 10.0 ms, fft of 512x512
# 252 -> 213 us; sleeping at once (PASSIVE) and libgomp's own default (300000,
# what torch runs with, ~6 ms) were both slower for the MLP.
OPENMP_SPIN_ROUNDS = 20000


def load_library(path):
    """Load a compiled C library, with OpenMP's idle workers spinning
    OPENMP_SPIN_ROUNDS rounds before they sleep (``GOMP_SPINCOUNT``, read once
    when libgomp loads; a process that loaded it before, e.g. by importing
    torch first, keeps its own).  A spin count or wait policy the user set is
    kept."""
    ours = "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ
    if ours:
        os.environ["GOMP_SPINCOUNT"] = str(OPENMP_SPIN_ROUNDS)
    try:
        return ctypes.CDLL(path)
    finally:
        if ours:
            del os.environ["GOMP_SPINCOUNT"]


def check_scratch(refused: int) -> None:
    """A C routine's result: the bytes of scratch the system refused it (0: it
    ran), raised as PyTorch's DefaultCPUAllocator error."""
    if refused:
        raise out_of_memory(refused)


def library():
    """The loaded library, or None (built once per process, on first use)."""
    global _lib, _tried
    if not _tried:
        _tried = True
        if os.environ.get("GLASSTORCH_NATIVE", "1") != "0":
            try:
                _lib = _build()
            except OSError:
                _lib = None
    return _lib


def _ptr(array: np.ndarray):
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def usable(*arrays) -> bool:
    """The native loops take C-contiguous float32 arrays."""
    return all(a.dtype == np.float32 and a.flags.c_contiguous for a in arrays) and \
        library() is not None


def exp(x: np.ndarray, out: np.ndarray) -> None:
    library().gt_exp_f32(_ptr(x), _ptr(out), x.size)


BINARY_OPS = {"add": 0, "sub": 1, "mul": 2, "div": 3}
MIN_PARALLEL = 1 << 18   # below this, thread start-up costs more than it saves


def binary(op: str, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> bool:
    """``out = a op b`` for large, equal-shape, contiguous float32 arrays; returns
    False (nothing done) when the arrays don't qualify."""
    if out.size < MIN_PARALLEL or a.shape != out.shape or b.shape != out.shape or \
            not usable(a, b, out):
        return False
    library().gt_binary_f32(BINARY_OPS[op], _ptr(a), _ptr(b), _ptr(out), out.size)
    return True


def same_shape(*arrays) -> bool:
    """Equal-shape, C-contiguous float32 arrays and a loaded library: what the
    elementwise loops below take."""
    shape = getattr(arrays[0], "shape", None)
    return all(isinstance(a, np.ndarray) and a.shape == shape for a in arrays) and \
        usable(*arrays)


_REAL_TO_COMPLEX = {(np.dtype(np.float32), np.dtype(np.complex64)): "f32",
                    (np.dtype(np.float64), np.dtype(np.complex128)): "f64"}
MIN_REAL_TO_COMPLEX = 1 << 12   # elements; below, numpy's cast costs less than a ctypes call


def real_to_complex(src: np.ndarray, dst: np.ndarray) -> bool:
    """``dst[...] = src`` for C-contiguous float32 -> complex64 or float64 ->
    complex128 arrays of one shape (native.c's loop, on the intra-op threads);
    False (nothing done) when the arrays do not qualify."""
    suffix = _REAL_TO_COMPLEX.get((src.dtype, dst.dtype))
    if suffix is None or dst.size < MIN_REAL_TO_COMPLEX or src.shape != dst.shape or \
            not (src.flags.c_contiguous and dst.flags.c_contiguous) or library() is None:
        return False
    getattr(library(), f"gt_real_to_complex_{suffix}")(src.ctypes.data, dst.ctypes.data,
                                                       dst.size)
    return True


def gelu(x: np.ndarray, out: np.ndarray) -> None:
    library().gt_gelu_f32(_ptr(x), _ptr(out), x.size)


def gelu_backward(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    library().gt_gelu_backward_f32(_ptr(grad), _ptr(x), _ptr(out), x.size)


_FUSED_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def fusable(*arrays) -> bool:
    """Equal-shape, C-contiguous arrays, all float32 or all float64, and a loaded
    library: what the fused loops below take."""
    first = arrays[0]
    return isinstance(first, np.ndarray) and first.dtype in _FUSED_SUFFIX and all(
        isinstance(a, np.ndarray) and a.shape == first.shape and a.dtype == first.dtype and
        a.flags.c_contiguous for a in arrays) and library() is not None


def _fused_loop(name: str, out: np.ndarray):
    return getattr(library(), f"gt_{name}_{_FUSED_SUFFIX[out.dtype]}")


_C_TYPES = {np.dtype(np.float32): ctypes.c_float, np.dtype(np.float64): ctypes.c_double}


def _ptr_of(array: np.ndarray):
    return array.ctypes.data_as(ctypes.POINTER(_C_TYPES[array.dtype]))


def axpy(a: np.ndarray, b: np.ndarray, alpha: float, out: np.ndarray) -> None:
    """``out = a + alpha * b``: one fused multiply-add per element where ATen's
    loop fuses it (``fused()``), else two roundings."""
    _fused_loop("axpy", out)(_ptr_of(a), _ptr_of(b), alpha, _ptr_of(out), out.size, fused())


def addcmul(s, t1, t2, value: float, out, divide: bool = False) -> None:
    """``out = s + value * t1 * t2`` (fused as ``axpy``), or ``s + value * t1 / t2``."""
    args = (_ptr_of(s), _ptr_of(t1), _ptr_of(t2), value, _ptr_of(out), out.size)
    if divide:
        _fused_loop("addcdiv", out)(*args)
    else:
        _fused_loop("addcmul", out)(*args, fused())


def lerp(s: np.ndarray, e: np.ndarray, weight: float, out: np.ndarray) -> None:
    _fused_loop("lerp", out)(_ptr_of(s), _ptr_of(e), weight, _ptr_of(out), out.size, fused())


def erf(x, complement: bool = False) -> np.ndarray:
    """erf (or erfc) of any real array, in float64 (libm's)."""
    return libm("erfc" if complement else "erf", x)


_LIBM = ("erf", "erfc", "log", "log1p", "cos", "sin", "exp", "tan", "acos", "lgamma")


def libm(name: str, x) -> np.ndarray:
    """libm's ``name`` (one of _LIBM) of any real array, in float64: the native
    loop when the library is there, else the C library's function called element
    by element (not Python's math module: its lgamma is CPython's own)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    lib = library()
    if lib is None:
        return np.asarray(np.frompyfunc(c_function(name), 1, 1)(x), dtype=np.float64)
    out = np.empty_like(x)
    f64p = ctypes.POINTER(ctypes.c_double)
    lib.gt_libm_f64(_LIBM.index(name), x.ctypes.data_as(f64p), out.ctypes.data_as(f64p), x.size)
    return out


def softmax(x: np.ndarray, out: np.ndarray, log: bool, lanes: int, halves: bool,
            use_libm: bool) -> None:
    """float32 softmax / log_softmax of the rows of C-contiguous 2-d ``x`` in ATen's
    order (kernels/softmax_order.py)."""
    library().gt_softmax_f32(_ptr(x), _ptr(out), x.shape[0], x.shape[1], int(log), lanes,
                             int(halves), int(use_libm))


def softmax_backward(g: np.ndarray, y: np.ndarray, out: np.ndarray, log: bool, lanes: int,
                     halves: bool, use_libm: bool, fused_: int, fused_tail: bool) -> None:
    """The gradient of float32 softmax / log_softmax rows (kernels/softmax_order.py)."""
    library().gt_softmax_backward_f32(_ptr(g), _ptr(y), _ptr(out), g.shape[0], g.shape[1],
                                      int(log), lanes, int(halves), int(use_libm), fused_,
                                      int(fused_tail))


def nll_cascade(terms: np.ndarray, weights: np.ndarray, ignored: np.ndarray, power: int):
    """nll_loss's (loss, weight) sums in ATen's order (native.c's gt_nll_cascade)."""
    suffix = "f32" if terms.dtype == np.float32 else "f64"
    ctype = ctypes.c_float if suffix == "f32" else ctypes.c_double
    loss, weight = ctype(), ctype()
    p = ctypes.POINTER(ctype)
    getattr(library(), f"gt_nll_cascade_{suffix}")(
        terms.ctypes.data_as(p), weights.ctypes.data_as(p),
        ignored.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), terms.size, power,
        ctypes.byref(loss), ctypes.byref(weight))
    return terms.dtype.type(loss.value), terms.dtype.type(weight.value)


_LIBM_F32 = ("expf", "logf", "cosf", "sinf", "acosf")


def libm_f32(name: str, x) -> np.ndarray:
    """libm's float32 ``name`` (one of _LIBM_F32) of a float32 array: the native loop,
    else the C library called element by element."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.empty_like(x)
    lib = library()
    if lib is not None:
        lib.gt_libm_f32(_LIBM_F32.index(name), _ptr(x), _ptr(out), x.size)
        return out
    fn = c_function(name, ctypes.c_float)
    out.ravel()[:] = [fn(v) for v in x.ravel().tolist()]
    return out


def normal_fill16(blocks: np.ndarray, mean, std, vectorized: bool) -> bool:
    """Box-Muller over C-contiguous (k, 16) uniform draws in place, as ATen's
    normal_fill rounds it (native.c's gt_normal_fill16; random.py's
    ``_normal_fill`` holds the numpy emulation): float32 with avx_mathfun's
    log/sincos when ``vectorized`` (AVX2/AVX512) else libm's float functions,
    float64 with libm's.  False (nothing done) without the library."""
    lib = library()
    if lib is None or not blocks.flags.c_contiguous:
        return False
    if blocks.dtype == np.float32:
        lib.gt_normal_fill16_f32(_ptr(blocks), blocks.size // 16, mean, std, int(vectorized))
    else:
        lib.gt_normal_fill16_f64(_ptr_of(blocks), blocks.size // 16, mean, std)
    return True


@functools.cache
def _c_library():
    """The C library (libm's functions are in it, or in libm beside it)."""
    return ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


@functools.cache
def c_function(name: str, ctype=ctypes.c_double):
    """The C library's function ``name`` of one ``ctype`` value: libm's own, where
    Python's math module has its own (lgamma) or raises at the edges (exp, acos)."""
    fn = getattr(_c_library(), name)
    fn.restype, fn.argtypes = ctype, [ctype]
    return fn


def fma(a, b, c):
    """a * b + c rounded once (float32 or float64 arrays/scalars, finite values),
    in numpy.  float32: the product is exact in float64, the sum is rounded to
    odd (where that matters), then to float32.  float64: Boldo and Melquiond's emulation: the exact
    product (Dekker) and TwoSum, their error terms added rounded to odd, then
    one rounding."""
    out_type = np.result_type(a, b, c)
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    if out_type == np.float32:
        # rounding the float64 sum to float32 can only go wrong where that sum lies
        # exactly halfway between two float32 values (or is a float32 subnormal):
        # only those elements are redone, rounded to odd
        p, c = np.broadcast_arrays(a * b, c)
        s = np.array(p + c)
        suspect = ((s.view(np.int64) & 0x1FFFFFFF) == 0x10000000) | \
            ((np.abs(s) < 2.0 ** -126) & (s != 0))
        if suspect.any():
            s[suspect] = _round_to_odd(*_two_sum(p[suspect], c[suspect]))
        return s.astype(np.float32)
    p = a * b
    (ah, al), (bh, bl) = _split(a), _split(b)
    p_err = ((ah * bh - p) + ah * bl + al * bh) + al * bl    # a * b == p + p_err exactly
    s, s_err = _two_sum(p, c)
    v, v_err = _two_sum(s_err, p_err)
    r = s + _round_to_odd(v, v_err)
    return np.where((r == 0) & (s == 0), s, r)     # -0 * x + -0 is -0, as from a real fma


def _split(x):
    """Veltkamp's split of float64 ``x`` into hi + lo, each of at most 26 bits
    (values above 2^995 are split scaled down by 2^28, so that nothing overflows)."""
    huge = np.abs(x) > 2.0 ** 995
    scaled = np.where(huge, x * 2.0 ** -28, x)
    t = 134217729.0 * scaled
    hi = t - (t - scaled)
    hi = np.where(huge, hi * 2.0 ** 28, hi)
    return hi, x - hi


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_to_odd(v, err):
    """v (= RN(v + err)) moved to the odd neighbour toward ``err`` when inexact and even."""
    even = (np.asarray(v).view(np.int64) & 1) == 0
    toward = np.where(err > 0, np.inf, -np.inf)
    return np.where((err != 0) & even, np.nextafter(v, toward), v)


def multiply_add(a, b, c):
    """a * b + c as ATen's CPU kernels round it under the capability: fused
    (``fma``) under AVX2/AVX512, else a rounded product and a rounded sum.
    Infinities and NaNs come out of the plain expression, as from a real fma.
    Operands of the reduced float types (a 0-d float16 or bfloat16 next to the
    other) compute in float32, as ATen's opmath does."""
    wide = np.float64 if any(np.asarray(v).dtype == np.float64 for v in (a, b, c)) \
        else np.float32
    a, b, c = (np.asarray(v, dtype=wide) if np.asarray(v).dtype != wide else v for v in (a, b, c))
    plain = a * b + c
    if not fused():
        return plain
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.isfinite(plain), fma(a, b, c), plain)


def cascade_sum(address_in: int, address_out: int, strides, size0: int, size1: int,
                itemsize: int, nan: bool) -> None:
    """One 2-d step of ATen's cascade_sum loop (see native.c): ``strides`` are
    the byte strides (in0, in1, out0, out1); float32 when ``itemsize`` is 4."""
    lib = library()
    fn = lib.gt_cascade_sum_f32 if itemsize == 4 else lib.gt_cascade_sum_f64
    fn(address_in, address_out, *strides, size0, size1, int(nan))


def sum_chunks(address: int, n: int, chunk: int, itemsize: int, nan: bool,
               partial: np.ndarray) -> None:
    """The per-thread partial sums of ``n`` contiguous elements, ranges of ``chunk``
    elements summed on the OpenMP threads into ``partial`` (parallel_reduce)."""
    fn = library().gt_sum_chunks_f32 if itemsize == 4 else library().gt_sum_chunks_f64
    fn(address, n, chunk, int(nan), partial.ctypes.data)


def sum_contiguous(address: int, n: int, itemsize: int, nan: bool) -> float:
    """``cascade_sum`` of ``n`` contiguous elements in one step, returned."""
    lib = library()
    fn = lib.gt_sum_contiguous_f32 if itemsize == 4 else lib.gt_sum_contiguous_f64
    return fn(address, n, int(nan))


# -- CPU capability (ATen's DispatchStub: which vectorized kernels run) --------------------

_capability = None


def cpu_capability() -> str:
    """"DEFAULT", "AVX2" or "AVX512", decided as ATen decides at start-up: the
    ``ATEN_CPU_CAPABILITY`` variable (default/avx2/avx512) if set and valid, else
    the CPU: AVX512 needs avx512vl+bw+dq and fma, AVX2 needs avx2 and fma.  It
    decides whether loops fuse multiply-adds (``fused``), so results equal those
    of PyTorch run under the same setting."""
    global _capability
    if _capability is None:
        chosen = {"default": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}.get(
            os.environ.get("ATEN_CPU_CAPABILITY", ""))
        if chosen is None:
            if "ATEN_CPU_CAPABILITY" in os.environ:
                warnings.warn("ignoring invalid value for ATEN_CPU_CAPABILITY: "
                              f"{os.environ['ATEN_CPU_CAPABILITY']}")
            flags = set(_cpu_id().split())
            if {"avx512vl", "avx512bw", "avx512dq", "fma"} <= flags:
                chosen = "AVX512"
            elif {"avx2", "fma"} <= flags:
                chosen = "AVX2"
            else:
                chosen = "DEFAULT"
        _capability = chosen
    return _capability


def sum_vector_width(itemsize: int) -> int:
    """Lanes of the ``Vectorized<T>`` ATen's sum loop uses: 32 bytes under every
    capability (DEFAULT's Vectorized is a 32-byte array, and sum and nansum are
    not dispatched to AVX512 kernels: an AVX512 CPU runs the AVX2 ones)."""
    return 32 // itemsize


def fused() -> int:
    """1 where ATen's CPU kernels are compiled with FMA (AVX2, AVX512), else 0."""
    return int(cpu_capability() != "DEFAULT")


def numpy_blas_paths() -> list:
    """The BLAS libraries numpy's wheels bundle (``numpy.libs`` on Linux,
    ``.libs`` or ``.dylibs`` beside numpy elsewhere)."""
    import glob
    root = os.path.dirname(np.__file__)
    return [path for folder in (os.path.join(root, os.pardir, "numpy.libs"),
                                os.path.join(root, ".libs"), os.path.join(root, ".dylibs"))
            for path in sorted(glob.glob(os.path.join(folder, "*blas*")))]


def _openblas_set_threads():
    """numpy's OpenBLAS ``set_num_threads`` entry point, or None (another BLAS, or
    none found).  Opening the same path again returns the already-loaded library."""
    for path in numpy_blas_paths():
        try:
            blas = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(blas, name, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                return fn
    return None


def set_num_threads(n: int) -> None:
    """``torch.set_num_threads``: intra-op threads for native loops and matmul."""
    global _threads
    if not isinstance(n, int) or n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads = n
    lib = library()
    if lib is not None:
        lib.gt_set_num_threads(n)


_blas_threads = _openblas_set_threads()
if _blas_threads is not None:
    _blas_threads(1)
_pool = None
MIN_PARALLEL_MATMUL = 1 << 21   # multiply-adds; below this a thread hand-off costs more


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = a @ b`` for 2-d arrays: the rows of ``out`` split among the intra-op
    threads (the calling thread takes the first block), each a single-threaded
    BLAS call; numpy releases the GIL inside it."""
    _split_first_dim(np.matmul, a, b, out, a.shape[0] * a.shape[1] * b.shape[1], split_b=False)


def outer_products(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = a @ b`` for stacked matrices with k = 1, (..., m, 1) @ (..., 1, n):
    one broadcast multiply (bitwise the product), split like ``matmul``."""
    _split_first_dim(np.multiply, a, b, out, out.size, split_b=True)


def _split_first_dim(fn, a, b, out, work: int, split_b: bool) -> None:
    """``fn(a, b, out=out)`` with ``out``'s first dim split among the intra-op
    threads when the work is large enough: ``a``'s too, and ``b``'s when
    ``split_b`` (stacked operands; one of size 1 there broadcasts, unsplit)."""
    global _pool
    m = out.shape[0]
    threads = min(get_num_threads(), m) if work >= MIN_PARALLEL_MATMUL else 1
    if threads < 2 or not out.flags.c_contiguous:
        fn(a, b, out=out)
        return
    if _pool is None or _pool._max_workers < threads - 1:
        _pool = concurrent.futures.ThreadPoolExecutor(threads - 1, "glasstorch-intraop")
    bounds = [m * i // threads for i in range(threads + 1)]

    def rows(x, lo, hi):
        return x if x.ndim < out.ndim or x.shape[0] == 1 else x[lo:hi]

    def part(lo, hi):
        return rows(a, lo, hi), (rows(b, lo, hi) if split_b else b)
    futures = [_pool.submit(fn, *part(lo, hi), out=out[lo:hi])
               for lo, hi in zip(bounds[1:-1], bounds[2:])]
    fn(*part(0, bounds[1]), out=out[:bounds[1]])
    for f in futures:
        f.result()


def get_num_threads() -> int:
    """``torch.get_num_threads``."""
    lib = library()
    if lib is not None:
        return lib.gt_get_num_threads()
    return _threads or os.cpu_count() or 1
