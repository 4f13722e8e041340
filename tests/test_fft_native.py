"""torch.fft through fft.c (kernels/fft_native.py) against real PyTorch (MKL):
power-of-two lengths over many lines, every primitive (c2c, r2c one- and
two-sided, c2r), float32/float64, every norm, rows and columns, batched,
transposed, strided and flipped inputs; the pocketfft fallback (no C
compiler), and the other CPU paths in a fresh process.  Values agree to
rounding relative to the spectrum's scale: 2e-5 (float32), 1e-12 (float64).
Last, issue 16's other speed change: wide solves split among threads."""
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch._ops.kernels import fft_native, native

pytestmark = pytest.mark.skipif(fft_native._library() is None,
                                reason="no C compiler on this machine")

TOL = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-12, "complex128": 1e-12}
NORMS = [None, "forward", "ortho"]


def _data(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _close(ours, theirs, dtype):
    """Same dtype, shape and strides; values within TOL of the result's scale."""
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert [s for s, n in zip(ours.stride(), ours.shape) if n > 1] == \
        [s for s, n in zip(theirs.stride(), theirs.shape) if n > 1]
    a, b = ours.numpy(), theirs.resolve_conj().numpy()
    scale = max(float(np.abs(b).max()), 1e-30)
    assert float(np.abs(a - b).max()) <= TOL[dtype] * scale


@pytest.fixture
def passes(monkeypatch):
    """How many passes fft.c ran (by kind), so a test proves it took the C path."""
    counts = {"c2c": 0, "r2c": 0, "c2r": 0}
    run = fft_native.run

    def counting(passes):
        for p in passes:
            counts[p.kind] += 1
        run(passes)
    monkeypatch.setattr(fft_native, "run", counting)
    return counts


CASES = [   # (function, input kind and shape, kwargs, the passes fft.c runs)
    ("fft", "c", (48, 256), {}, {"c2c": 1}),
    ("ifft", "c", (48, 256), {}, {"c2c": 1}),
    ("fft", "r", (48, 256), {}, {"r2c": 1}),            # two-sided r2c, mirrored in C
    ("ifft", "r", (48, 256), {}, {"r2c": 1}),
    ("rfft", "r", (48, 256), {}, {"r2c": 1}),
    ("ihfft", "r", (48, 256), {}, {"r2c": 1}),
    ("irfft", "c", (48, 129), {}, {"c2r": 1}),
    ("hfft", "c", (48, 129), {}, {"c2r": 1}),
    ("fft2", "c", (64, 128), {}, {"c2c": 2}),
    ("ifft2", "c", (64, 128), {}, {"c2c": 2}),
    ("fft2", "r", (64, 128), {}, {"c2c": 2}),
    ("rfft2", "r", (64, 128), {}, {"r2c": 1, "c2c": 1}),
    ("irfft2", "c", (64, 65), {}, {"c2r": 1, "c2c": 1}),
    ("fftn", "c", (64, 128), {"dim": (0, 1)}, {"c2c": 2}),
    ("rfftn", "r", (64, 128), {"dim": (1, 0)}, {"r2c": 1, "c2c": 1}),
    ("irfftn", "c", (33, 128), {"dim": (1, 0)}, {"c2r": 1, "c2c": 1}),
]


@pytest.mark.parametrize("fn,kind,shape,kwargs,expected", CASES)
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_power_of_two_transforms_take_fft_c(fn, kind, shape, kwargs, expected, precision,
                                            passes):
    """Each torch.fft function on power-of-two lengths: every pass in fft.c."""
    dtype = precision if kind == "r" else \
        {"float32": "complex64", "float64": "complex128"}[precision]
    x = _data(0, shape, dtype)
    for norm in NORMS:
        ours = getattr(gt.fft, fn)(gt.tensor(x), norm=norm, **kwargs)
        theirs = getattr(torch.fft, fn)(torch.tensor(x), norm=norm, **kwargs)
        _close(ours, theirs, str(theirs.dtype).replace("torch.", ""))
    assert passes == {k: v * len(NORMS) for k, v in {"c2c": 0, "r2c": 0, "c2r": 0,
                                                       **expected}.items()}


VIEWS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.transpose(0, -1),
    "strided": lambda t: t[::2],
    "flipped": lambda t: t.flip(-1),
    "expanded": lambda t: t[:1].expand(t.shape[0], *t.shape[1:]),
}


@settings(max_examples=60, deadline=None)
@given(log_n=st.integers(1, 10), lines=st.integers(8, 40), extra=st.sampled_from([1, 3, 17]),
       dtype=st.sampled_from(["float32", "float64", "complex64", "complex128"]),
       fn=st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]),
       dim=st.sampled_from([0, 1, -1]),
       norm=st.sampled_from([None, "backward", "forward", "ortho"]),
       view=st.sampled_from(list(VIEWS)), seed=st.integers(0, 2**16))
def test_one_dim_transforms_match_torch(log_n, lines, extra, dtype, fn, dim, norm, view, seed):
    """Any dim of a 3-d input (rows, columns, lines with 1 < inner < lanes) and any
    layout; the length is the transformed one (irfft/hfft: the real output's)."""
    real_in = fn in ("rfft", "ihfft")
    if real_in and dtype.startswith("complex"):
        dtype = {"complex64": "float32", "complex128": "float64"}[dtype]
    n = 2 ** log_n
    shape = [lines, extra, 4]
    shape[dim] = n // 2 + 1 if fn in ("irfft", "hfft") else n
    x = _data(seed, shape, dtype)
    kwargs = {"n": n} if fn in ("irfft", "hfft") else {}
    ours = getattr(gt.fft, fn)(VIEWS[view](gt.tensor(x)), dim=dim, norm=norm, **kwargs)
    theirs = getattr(torch.fft, fn)(VIEWS[view](torch.tensor(x)), dim=dim, norm=norm, **kwargs)
    _close(ours, theirs, str(theirs.dtype).replace("torch.", ""))


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.sampled_from([2, 4, 8, 16, 32, 64, 5, 12]), min_size=2, max_size=3),
       dtype=st.sampled_from(["float32", "float64", "complex64", "complex128"]),
       fn=st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]),
       norm=st.sampled_from(NORMS), permuted=st.booleans(), seed=st.integers(0, 2**16))
def test_n_dim_transforms_match_torch(sizes, dtype, fn, norm, permuted, seed):
    """Several dims at once, some of a length fft.c leaves to pocketfft (5, 12):
    the passes mix, and the output keeps MKL's layout."""
    if fn in ("rfftn", "ihfftn") and dtype.startswith("complex"):
        dtype = {"complex64": "float32", "complex128": "float64"}[dtype]
    x = _data(seed, [9] + sizes, dtype)

    def run(lib):
        t = lib.tensor(x)
        if permuted:
            t = t.permute(*reversed(range(t.dim())))
        return getattr(lib.fft, fn)(t, dim=tuple(range(-len(sizes), 0)), norm=norm)
    theirs = run(torch)
    _close(run(gt), theirs, str(theirs.dtype).replace("torch.", ""))


@pytest.mark.parametrize("precision,n", [("float32", 256), ("float32", 1024),
                                         ("float64", 64), ("float64", 512)])
def test_long_rows_four_step_match_torch(precision, n, passes):
    """Contiguous rows of n >= lanes^2 complex (the real transforms: half of n) run
    line by line as four-step transforms: a line count that is no multiple of
    the lanes, every norm, both directions, one- and two-sided r2c, c2r (whose
    X[0] and X[n/2] imaginary parts are dropped), and a batch of rows whose
    stride is not the row length."""
    complex_dtype = {"float32": "complex64", "float64": "complex128"}[precision]
    whole, left = (lambda t: t), (lambda t: t[:, :n])          # left: rows 2n apart
    calls = [("fft", _data(5, (9, n), complex_dtype), whole),
             ("ifft", _data(5, (9, 2 * n), complex_dtype), left),
             ("rfft", _data(6, (3, 3, 2 * n), precision), whole),
             ("fft", _data(7, (9, 2 * n), precision), whole),
             ("irfft", _data(8, (9, n + 1), complex_dtype), whole),
             ("hfft", _data(9, (2, 5, n + 1), complex_dtype), whole)]
    for fn, x, view in calls:
        for norm in NORMS:
            theirs = getattr(torch.fft, fn)(view(torch.tensor(x)), norm=norm)
            _close(getattr(gt.fft, fn)(view(gt.tensor(x)), norm=norm), theirs,
                   str(theirs.dtype).replace("torch.", ""))
    assert passes == {"c2c": 2 * len(NORMS), "r2c": 2 * len(NORMS), "c2r": 2 * len(NORMS)}


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32, 512, 1024])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_column_tiles_match_torch(n, dtype, passes):
    """Columns of whole tiles (the gather fused with dif's first stage: radix-2
    for odd log2 n, radix-4 for even, n = 4 its last stage too), forward and
    inverse, every norm."""
    x = _data(n, (n, 48), dtype)
    for fn in ("fft", "ifft"):
        for norm in NORMS:
            theirs = getattr(torch.fft, fn)(torch.tensor(x), dim=0, norm=norm)
            _close(getattr(gt.fft, fn)(gt.tensor(x), dim=0, norm=norm), theirs, dtype)
    assert passes["c2c"] == 2 * len(NORMS)


def test_a_transform_runs_its_passes_in_one_call(monkeypatch):
    """The passes of an n-d transform go to fft.c together (one parallel region),
    irfftn's c2c passes writing a work array in the real output's dim order
    (here a transposed one) for the c2r pass to read; a dim fft.c leaves to
    pocketfft (12) splits them around it."""
    calls = []
    run = fft_native.run

    def recording(passes):
        calls.append([p.kind for p in passes])
        run(passes)
    monkeypatch.setattr(fft_native, "run", recording)
    c, r = _data(0, (16, 12, 32), "complex64"), _data(1, (16, 12, 32), "float32")
    half = _data(2, (16, 12, 17), "complex64")
    for fn, x, dim in (("fftn", c, (0, 2)), ("rfftn", r, (0, 2)), ("irfftn", half, (0, 2)),
                       ("irfftn", half.transpose(2, 1, 0), (2, 0)), ("fftn", c, None)):
        theirs = getattr(torch.fft, fn)(torch.tensor(x), dim=dim)
        _close(getattr(gt.fft, fn)(gt.tensor(x), dim=dim), theirs,
               str(theirs.dtype).replace("torch.", ""))
    assert calls == [["c2c", "c2c"], ["r2c", "c2c"], ["c2c", "c2r"], ["c2c", "c2r"], ["c2c"],
                     ["c2c"]]


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_share_large_transforms(threads):
    """Transforms large enough to wake the intra-op threads (fft.c's
    FFT_PARALLEL_WORK): chunks claimed from both ends, passes waiting for the
    one before; the values are those of one thread, bit for bit, and torch's.
    Rows of 257 complex (rfft2's half spectrum) share cache lines between
    neighbouring tiles; 300 rows leave a partial chunk of lines."""
    r = _data(2, (512, 512), "float32")
    c = _data(3, (512, 512), "complex64")
    h = _data(4, (512, 257), "complex64")
    calls = [("fft2", r, {}), ("rfft2", r, {}), ("ifft2", c, {}), ("irfft2", h, {}),
             ("fft", _data(5, (300, 512), "float32"), {}),
             ("fftn", _data(6, (4, 64, 256), "complex128"), {}),
             ("irfft", _data(7, (600, 257), "complex128"), {}),
             ("ifft", c.T, {"dim": 0})]
    saved = gt.get_num_threads()
    try:
        for fn, x, kwargs in calls:
            gt.set_num_threads(1)
            single = getattr(gt.fft, fn)(gt.tensor(x), **kwargs).numpy()
            gt.set_num_threads(threads)
            ours = getattr(gt.fft, fn)(gt.tensor(x), **kwargs)
            np.testing.assert_array_equal(ours.numpy(), single)
            theirs = getattr(torch.fft, fn)(torch.tensor(x), **kwargs)
            _close(ours, theirs, str(theirs.dtype).replace("torch.", ""))
    finally:
        gt.set_num_threads(saved)


@pytest.mark.parametrize("threads", [1, 2])
def test_real_to_complex_copies_match_torch(threads, monkeypatch):
    """copy_'s real -> complex cast (to(), copy_, torch.fft's promotion of real
    inputs) through native.c's loop: torch's bits, on one thread and split
    among two (above 2^17 elements), NaN, infinities and -0.0 kept; small,
    strided and mixed-precision copies keep numpy's cast."""
    taken = []
    loop = native.real_to_complex

    def recording(src, dst):
        taken.append(loop(src, dst))
        return taken[-1]
    monkeypatch.setattr(native, "real_to_complex", recording)
    rng = np.random.default_rng(threads)

    def values(shape, dtype):
        x = rng.standard_normal(shape)
        x.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
        return x.astype(dtype)
    cases = [(values((600, 300), "float32"), "complex64", lambda t: t, True),
             (values((64, 100), "float64"), "complex128", lambda t: t, True),
             (values((10, 10), "float32"), "complex64", lambda t: t, False),
             (values((300, 80), "float32"), "complex64", lambda t: t.t(), False),
             (values((300, 80), "float32"), "complex128", lambda t: t, False)]
    saved = gt.get_num_threads()
    try:
        gt.set_num_threads(threads)
        for x, dtype, view, native_loop in cases:
            theirs = view(torch.tensor(x)).to(getattr(torch, dtype))
            ours = view(gt.tensor(x)).to(getattr(gt, dtype))
            bits = np.uint64 if dtype == "complex128" else np.uint32
            np.testing.assert_array_equal(np.ascontiguousarray(ours.numpy()).view(bits),
                                          np.ascontiguousarray(theirs.numpy()).view(bits))
            assert taken.pop() == native_loop
            into = gt.zeros(tuple(ours.shape), dtype=getattr(gt, dtype))
            into.copy_(view(gt.tensor(x)))
            np.testing.assert_array_equal(into.numpy(), theirs.numpy())
            assert taken.pop() == native_loop
        finite = cases[0][0][8:520, :256].copy()
        _close(gt.fft.fft2(gt.tensor(finite)), torch.fft.fft2(torch.tensor(finite)), "complex64")
        assert taken.pop()
    finally:
        gt.set_num_threads(saved)


def test_non_hermitian_input_to_c2r_drops_what_torch_drops():
    """irfft reads only the real parts of X[0] and X[n/2], as MKL does."""
    x = _data(1, (16, 33), "complex64")
    _close(gt.fft.irfft(gt.tensor(x)), torch.fft.irfft(torch.tensor(x)), "float32")
    _close(gt.fft.irfft2(gt.tensor(x)), torch.fft.irfft2(torch.tensor(x)), "float32")


def test_out_gradients_and_threads(passes):
    """out= keeps torch's semantics and gradients flow (the primitives' formulas);
    one intra-op thread gives the same values as several."""
    x = _data(2, (32, 64), "float64")
    a, b = gt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (gt.fft.rfft2(a).abs() ** 2).sum().backward()
    (torch.fft.rfft2(b).abs() ** 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-9)
    out = gt.empty((32, 64), dtype=gt.complex128)
    gt.fft.fft(gt.tensor(x), out=out)
    _close(out, torch.fft.fft(torch.tensor(x)), "complex128")
    threads = gt.get_num_threads()
    try:
        gt.set_num_threads(1)
        single = gt.fft.fft2(gt.tensor(x)).numpy()
    finally:
        gt.set_num_threads(threads)
    np.testing.assert_array_equal(single, gt.fft.fft2(gt.tensor(x)).numpy())
    assert passes["r2c"] and passes["c2c"]


def test_without_a_compiler_pocketfft_gives_the_same(monkeypatch, passes):
    """No C compiler (the library never loads): every pass falls back to numpy."""
    monkeypatch.setattr(fft_native, "_library", lambda: None)
    for fn, kind in (("fft2", "c"), ("rfft2", "r"), ("irfft2", "c"), ("fft", "r")):
        dtype = "complex64" if kind == "c" else "float32"
        x = _data(3, (64, 64), dtype)
        theirs = getattr(torch.fft, fn)(torch.tensor(x))
        _close(getattr(gt.fft, fn)(gt.tensor(x)), theirs, str(theirs.dtype)[6:])
    assert passes == {"c2c": 0, "r2c": 0, "c2r": 0}


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 ISA levels")
@pytest.mark.parametrize("march", ["x86-64-v3", "x86-64"])
def test_builds_for_older_cpus(monkeypatch, passes, march):
    """fft.c compiled for AVX2 (x86-64-v3) and for the SSE2 baseline, where the
    64-byte vectors split into smaller registers: the same values, for tiles
    and for the four-step rows (the last two)."""
    monkeypatch.setattr(native, "_FLAGS", [f"-march={march}" if f == "-march=native" else f
                                           for f in native._FLAGS])
    monkeypatch.setattr(fft_native, "_library", native.companion(fft_native._SOURCE,
                                                                 fft_native._declare))
    for fn, dtype, shape in (("fft2", "complex64", (32, 64)), ("rfft2", "float64", (64, 32)),
                             ("irfft", "complex64", (40, 65)), ("fft", "float32", (24, 128)),
                             ("fft", "float32", (40, 512)), ("ifft", "complex128", (20, 512))):
        x = _data(4, shape, dtype)
        theirs = getattr(torch.fft, fn)(torch.tensor(x))
        _close(getattr(gt.fft, fn)(gt.tensor(x)), theirs, str(theirs.dtype)[6:])
    assert sum(passes.values()) == 8


_SCRIPT = """
import numpy as np, torch, glasstorch as gt
from glasstorch._ops.kernels import fft_native
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 128)).astype(np.float32)
for fn in ("fft2", "rfft2", "fft"):
    a = getattr(gt.fft, fn)(gt.tensor(x)).numpy()
    b = getattr(torch.fft, fn)(torch.tensor(x)).numpy()
    assert np.abs(a - b).max() <= 2e-5 * np.abs(b).max(), fn
h = np.fft.rfft2(x).astype(np.complex64)
a, b = gt.fft.irfft2(gt.tensor(h)).numpy(), torch.fft.irfft2(torch.tensor(h)).numpy()
assert np.abs(a - b).max() <= 2e-5 * np.abs(b).max()
print("native" if fft_native._library() is not None else "pocketfft")
"""


@pytest.mark.parametrize("env,path", [
    ({"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
      "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}, "native"),
    ({"GLASSTORCH_NATIVE": "0"}, "pocketfft"),
])
def test_other_cpu_paths_in_a_fresh_process(env, path):
    """AVX2 ATen/oneDNN/numpy, and native loops off: the values still match torch's."""
    result = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                            env={**os.environ, **env},
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-1] == path


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_wide_solves_split_among_threads_match_torch(threads):
    """The other half of issue 16's speed item (kernels/_lapack.py): getrs on a wide
    right-hand side runs its column ranges on the intra-op threads; solve,
    lu_solve (adjoint, left=False) and a batch give torch's values."""
    rng = np.random.default_rng(threads)
    a = rng.standard_normal((3, 130, 130)) + 8 * np.eye(130)
    b = rng.standard_normal((3, 130, 131))
    saved = gt.get_num_threads()
    try:
        gt.set_num_threads(threads)
        for dtype in ("float64", "complex128"):
            A = a.astype(dtype)
            B = (b + 1j * b[:, ::-1] if dtype == "complex128" else b).astype(dtype)
            theirs = torch.linalg.solve(torch.tensor(A), torch.tensor(B))
            np.testing.assert_allclose(gt.linalg.solve(gt.tensor(A), gt.tensor(B)).numpy(),
                                       theirs.numpy(), rtol=1e-10, atol=1e-10)
            LU, piv = torch.linalg.lu_factor(torch.tensor(A))
            for kwargs in ({"adjoint": True}, {"left": False}):
                rhs = B if kwargs.get("left", True) else B.swapaxes(-1, -2)
                ours = gt.linalg.lu_solve(gt.tensor(LU.numpy()), gt.tensor(piv.numpy()),
                                          gt.tensor(rhs), **kwargs)
                theirs = torch.linalg.lu_solve(LU, piv, torch.tensor(rhs), **kwargs)
                np.testing.assert_allclose(ours.resolve_conj().numpy(),
                                           theirs.resolve_conj().numpy(), rtol=1e-10, atol=1e-10)
    finally:
        gt.set_num_threads(saved)
