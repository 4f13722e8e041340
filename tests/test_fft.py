"""torch.fft, stft/istft and the window functions (glasstorch/_ops/kernels/spectral.py)
against real PyTorch: values (to float32 / pocketfft rounding), dtypes, shapes,
output strides (MKL's layout), gradients (float64 gradcheck, and equal to
torch's), out=, and errors with torch's types and messages."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt

from .differential import differential
from .helpers import assert_same

ONE_DIM = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_DIM = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
         "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}
NORMS = [None, "backward", "forward", "ortho"]


def values(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * rng.standard_normal(shape)
    elif np.dtype(dtype).kind in "iu":
        data = np.round(data * 3)
    return data.astype(dtype)


def compare(fn, data, dtype, permute=None):
    """fn(lib, x) in both libraries on the same values (optionally a permuted view):
    the same result (``check``), or the same error."""
    def case(lib):
        x = lib.tensor(data)
        return fn(lib, x if permute is None else x.permute(*permute))
    try:
        theirs = case(torch)
    except (RuntimeError, IndexError):
        differential(case, may_raise=True)
        return
    check(case(gt), theirs, dtype)


def check(ours, theirs, dtype):
    """Values, dtype, shape, and the strides of every dim of size > 1 (glasstorch's
    conj is a copy, whose size-1 dims get contiguous strides; ATen's is a view)."""
    tol = 1e-4 if dtype in ("float32", "complex64", "int64") else 1e-10
    assert_same(ours, theirs.resolve_conj(), atol=tol, rtol=tol, strides=False)
    assert [st for st, n in zip(ours.stride(), ours.shape) if n > 1] == \
        [st for st, n in zip(theirs.stride(), theirs.shape) if n > 1]


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3)
dtypes = st.sampled_from(["float32", "float64", "complex64", "complex128", "int64"])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), shape=shapes, dtype=dtypes, name=st.sampled_from(ONE_DIM),
       norm=st.sampled_from(NORMS), n=st.one_of(st.none(), st.integers(1, 8)),
       dim=st.integers(-3, 2), transposed=st.booleans())
def test_one_dim_transforms_match_pytorch(seed, shape, dtype, name, norm, n, dim, transposed):
    permute = list(reversed(range(len(shape)))) if transposed else None
    compare(lambda L, x: getattr(L.fft, name)(x, n=n, dim=dim, norm=norm),
            values(seed, shape, dtype), dtype, permute)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), shape=st.lists(st.integers(1, 4), min_size=2, max_size=3),
       dtype=dtypes, name=st.sampled_from(N_DIM), norm=st.sampled_from(NORMS),
       data_s=st.data(), transposed=st.booleans())
def test_n_dim_transforms_match_pytorch(seed, shape, dtype, name, norm, data_s, transposed):
    data = values(seed, shape, dtype)
    ndim = len(shape)
    if name.endswith("2"):
        dims = data_s.draw(st.sampled_from([None, (0, 1), (1, 0), (-1, 0)]))
        count = 2
    else:
        dims = data_s.draw(st.one_of(st.none(), st.permutations(range(ndim)).map(
            lambda p: tuple(p[:data_s.draw(st.integers(1, ndim))]))))
        count = len(dims) if dims is not None else data_s.draw(st.integers(1, ndim))
    s = data_s.draw(st.one_of(st.none(), st.lists(st.sampled_from([-1, 1, 3, 6]),
                                                   min_size=count, max_size=count)))
    kwargs = {"norm": norm}
    if s is not None:
        kwargs["s"] = s
    if dims is not None:
        kwargs["dim"] = dims
    permute = list(reversed(range(ndim))) if transposed else None
    compare(lambda L, x: getattr(L.fft, name)(x, **kwargs), data, dtype, permute)


@pytest.mark.parametrize("name", ONE_DIM + N_DIM)
def test_gradients_match_pytorch_and_gradcheck(name):
    """float64 gradcheck and gradgradcheck (complex inputs and outputs seen as
    real pairs), and the gradient of a complex-weighted sum equal to torch's."""
    real_input = name in REAL_ONLY or name.startswith("i") and name[1] != "r"
    for dtype in (["float64"] if name in REAL_ONLY else ["float64", "complex128"]):
        shape = (3, 4) if name[-1] in "2n" else (5,)
        data = values(7, shape, dtype)
        kwargs = {"norm": "ortho"} if real_input else {}

        def case(L):
            x = L.tensor(data, requires_grad=True)
            y = getattr(L.fft, name)(x, **kwargs)
            w = L.tensor(values(8, tuple(y.shape), "complex128"))
            L.view_as_real((y * w).sum().reshape(1)).sum().backward()
            return x.grad
        differential(case)

        def as_real(x):
            inner = gt.view_as_complex(x) if dtype.startswith("complex") else x
            y = getattr(gt.fft, name)(inner, **kwargs)
            return gt.view_as_real(y) if y.dtype.is_complex else y
        packed = np.stack([data.real, data.imag], -1) if dtype.startswith("complex") else data
        x = gt.tensor(packed, requires_grad=True)
        assert gt.autograd.gradcheck(as_real, (x,))
        assert gt.autograd.gradgradcheck(as_real, (x,))


@pytest.mark.parametrize("call", [
    lambda L: L.fft.fft(L.ones(3), norm="bad"),
    lambda L: L.fft.fft(L.ones(3), norm="FORWARD"),
    lambda L: L.fft.fft(L.ones(3).half()),
    lambda L: L.fft.rfft(L.ones(3, dtype=L.bfloat16)),
    lambda L: L.fft.fft(L.ones(3), n=0),
    lambda L: L.fft.hfft(L.ones(3), n=-1),
    lambda L: L.fft.irfft(L.ones(1)),
    lambda L: L.fft.fft(L.ones(3), dim=2),
    lambda L: L.fft.fft(L.ones(())),
    lambda L: L.fft.fft2(L.ones(3)),
    lambda L: L.fft.fftn(L.ones(3, 3), dim=(0, 0)),
    lambda L: L.fft.fftn(L.ones(3, 3), s=(1, 2, 3)),
    lambda L: L.fft.fftn(L.ones(3, 3), s=(1, 2), dim=(0,)),
    lambda L: L.fft.fftn(L.ones(3, 3), s=(0, 2)),
    lambda L: L.fft.rfft(L.ones(3, dtype=L.complex64)),
    lambda L: L.fft.ihfft(L.ones(3, dtype=L.complex64)),
    lambda L: L.fft.rfftn(L.ones(3, dtype=L.complex64)),
    lambda L: L.fft.rfftn(L.ones(())),
    lambda L: L.fft.irfftn(L.ones(())),
    lambda L: L.fft.hfftn(L.ones(3), dim=()),
    lambda L: L.fft.ihfftn(L.ones(())),
    lambda L: L.fft.fft(L.ones(3), out=L.empty(3)),
    lambda L: L.fft.irfft(L.ones(3), out=L.empty(3, dtype=L.complex64)),
    lambda L: L.fft.fftfreq(4, dtype=L.int64),
    lambda L: L.fft.rfftfreq(4, out=L.empty(0, dtype=L.int32)),
    lambda L: L.fft.fftfreq(4, dtype=L.complex64),
    lambda L: L.fft.fftshift(L.ones(3), dim=5),
    lambda L: L.ops.aten._fft_c2c(L.ones(3), [0], 0, True),
    lambda L: L.ops.aten._fft_r2c(L.ones(3, dtype=L.complex64), [0], 0, True),
    lambda L: L.ops.aten._fft_c2r(L.ones(3), [0], 0, 4),
])
def test_errors_match_pytorch(call):
    differential(call, may_raise=True)


@pytest.mark.parametrize("call", [
    lambda L: L.fft.fft(L.ones(3), n=2, out=L.empty(2, dtype=L.complex128)),
    lambda L: L.fft.fft(L.ones(3, dtype=L.complex64), out=L.empty(3, dtype=L.complex128)),
    lambda L: L.fft.ifft(L.arange(4.), out=L.empty(4, dtype=L.complex64)),
    lambda L: L.fft.ihfft2(L.arange(16.).view(4, 4), out=L.empty(0, dtype=L.complex64)),
    lambda L: L.fft.hfft2(L.ones(4, 4, dtype=L.complex64), out=L.empty(0)),
    lambda L: L.fft.irfftn(L.ones(3, 4, dtype=L.complex128), out=L.empty(0)),
    lambda L: L.fft.rfft2(L.arange(12.).view(3, 4), out=L.empty(0, dtype=L.complex128)),
    lambda L: L.fft.fft(L.ones(3, 4).t(), out=L.empty(3, 4, dtype=L.complex64).t()),
    lambda L: L.fft.fftfreq(5, out=L.empty(0)),
    lambda L: L.fft.rfftfreq(5, 0.1, out=L.empty(0, dtype=L.float64)),
])
def test_out_matches_pytorch(call):
    def case(L):
        result = call(L)
        return result, tuple(result.stride())
    differential(case)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 8])
@pytest.mark.parametrize("d", [1.0, 0.3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frequencies_match_pytorch(n, d, dtype):
    differential(lambda L: (L.fft.fftfreq(n, d, dtype=getattr(L, dtype)),
                            L.fft.rfftfreq(n, d, dtype=getattr(L, dtype))))


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2), [1]])
def test_shifts_match_pytorch(dim):
    data = values(3, (3, 4, 5), "float64")
    differential(lambda L: (L.fft.fftshift(L.tensor(data), dim), L.fft.ifftshift(L.tensor(data),
                                                                                  dim)))


def test_namespace_matches_pytorch():
    assert gt.fft.__all__ == torch.fft.__all__
    for name in ONE_DIM + N_DIM + ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]:
        assert callable(getattr(gt.fft, name))
    assert sorted(gt.signal.windows.__all__) == sorted(torch.signal.windows.__all__)


def test_meta_device_shapes_and_strides():
    x = torch.ones(3, 4, 5).permute(2, 0, 1)
    for name in ("fft", "rfft", "ihfft"):
        theirs = getattr(torch.fft, name)(x.to("meta"), dim=1)
        ours = getattr(gt.fft, name)(gt.ones(3, 4, 5).permute(2, 0, 1).to("meta"), dim=1)
        assert_same(ours, theirs)
    theirs = torch.fft.irfftn(torch.ones(3, 4, 5, dtype=torch.complex64, device="meta"))
    ours = gt.fft.irfftn(gt.ones(3, 4, 5, dtype=gt.complex64, device="meta"))
    assert_same(ours, theirs)


# -- stft / istft --------------------------------------------------------------------

SIGNAL = values(11, (2, 40), "float64")
COMPLEX_SIGNAL = values(12, (2, 40), "complex128")


@pytest.mark.parametrize("call", [
    lambda L, x: L.stft(x[0], 8, return_complex=True),
    lambda L, x: L.stft(x, 8, hop_length=3, window=L.hann_window(8, dtype=L.float64),
                        return_complex=True),
    lambda L, x: L.stft(x, 8, win_length=5, window=L.hann_window(5, dtype=L.float64),
                        return_complex=False),
    lambda L, x: L.stft(x, 8, win_length=6, return_complex=True, normalized=True,
                        onesided=False),
    lambda L, x: L.stft(x, 8, center=False, return_complex=True,
                        window=L.ones(8, dtype=L.float64)),
    lambda L, x: L.stft(x, 8, pad_mode="constant", return_complex=True,
                        window=L.ones(8, dtype=L.float64)),
    lambda L, x: L.stft(x, 8, pad_mode="replicate", return_complex=True,
                        window=L.ones(8, dtype=L.float64)),
    lambda L, x: L.stft(x, 8, 2, 6, L.ones(6, dtype=L.float64), False, return_complex=True,
                        align_to_window=True),
    lambda L, x: x.stft(8, 2, 8, L.ones(8, dtype=L.float64), False, "reflect", True,
                        return_complex=True),
    lambda L, x: L.stft(x.float(), 8, return_complex=True, window=L.hamming_window(8)),
    lambda L, x: L.stft(x + 1j * x.flip(1), 8, window=L.ones(8, dtype=L.float64)),
])
def test_stft_matches_pytorch(call):
    def case(L):
        result = call(L, L.tensor(SIGNAL))
        return result, tuple(result.stride())
    differential(case)


@pytest.mark.parametrize("window,kwargs", [
    ("hann_window", {"hop_length": 2}),
    ("hann_window", {"hop_length": 2, "win_length": 6, "normalized": True, "length": 38}),
    ("hamming_window", {"hop_length": 2, "center": False}),
    ("hann_window", {"hop_length": 2, "length": 50}),
    ("ones", {"onesided": False}),
])
def test_istft_inverts_stft_like_pytorch(window, kwargs):
    """Values of stft -> istft, and the gradient back through both."""
    def case(L):
        w = getattr(L, window)(kwargs.get("win_length", 8), dtype=L.float64)
        x = L.tensor(SIGNAL, requires_grad=True)
        spectrum = L.stft(x, 8, window=w, return_complex=True,
                          **{k: v for k, v in kwargs.items() if k != "length"})
        y = L.istft(spectrum, 8, window=w, **kwargs)
        y.pow(2).sum().backward()
        return y, x.grad
    differential(case)


def test_istft_complex_and_method_like_pytorch():
    def case(L):
        window = L.hann_window(8, dtype=L.float64)
        spectrum = L.stft(L.tensor(COMPLEX_SIGNAL), 8, hop_length=2, window=window)
        return (L.istft(spectrum, 8, hop_length=2, window=window, return_complex=True),
                spectrum[0].istft(8, 2, 8, window, True, False, False, None, True))
    differential(case)


def test_stft_gradcheck():
    window = gt.hann_window(8, dtype=gt.float64)

    def fn(x):
        return gt.view_as_real(gt.stft(x, 8, hop_length=3, window=window, return_complex=True))
    x = gt.tensor(SIGNAL[:, :20], requires_grad=True)
    assert gt.autograd.gradcheck(fn, (x,))


@pytest.mark.parametrize("call", [
    lambda L: L.stft(L.ones(10), 4),
    lambda L: L.stft(L.ones(10, dtype=L.int64), 4, return_complex=True),
    lambda L: L.stft(L.ones(2, 2, 10), 4, return_complex=True),
    lambda L: L.stft(L.ones(10), 12, center=False, return_complex=True),
    lambda L: L.stft(L.ones(10), 4, hop_length=0, return_complex=True),
    lambda L: L.stft(L.ones(10), 4, win_length=5, return_complex=True),
    lambda L: L.stft(L.ones(10), 4, window=L.ones(3), return_complex=True),
    lambda L: L.stft(L.ones(10), 4, align_to_window=True, return_complex=True),
    lambda L: L.stft(L.ones(10, dtype=L.complex64), 4, window=L.ones(4), onesided=True),
    lambda L: L.istft(L.ones(3, 4), 4),
    lambda L: L.istft(L.ones(3, 4, dtype=L.complex64), 4, window=L.zeros(4)),
    lambda L: L.istft(L.ones(5, 4, dtype=L.complex64), 4, window=L.ones(4), hop_length=8),
    lambda L: L.istft(L.ones(0, 4, dtype=L.complex64), 4, window=L.ones(4)),
    lambda L: L.istft(L.ones(4, dtype=L.complex64), 4, window=L.ones(4)),
    lambda L: L.istft(L.ones(4, 4, dtype=L.complex64), 4, window=L.ones(3)),
    lambda L: L.istft(L.ones(2, 2, 4, 4, dtype=L.complex64), 4, window=L.ones(4)),
    lambda L: L.istft(L.ones(5, 4, dtype=L.complex64), 8, window=L.ones(4), hop_length=5),
    lambda L: L.istft(L.ones(3, 4, dtype=L.complex64), 4, window=L.ones(4), onesided=True,
                      return_complex=True),
])
def test_stft_errors_match_pytorch(call):
    differential(call, may_raise=True)


def test_stft_warnings_like_pytorch():
    """torch warns once per process: the first call in each library warns."""
    from glasstorch._ops.kernels import spectral
    for seen in (spectral._NO_WINDOW, spectral._RETURN_REAL):
        seen.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gt.stft(gt.ones(10), 4, return_complex=False)
    messages = [str(w.message) for w in caught]
    assert messages[0].startswith("A window was not provided. A rectangular window will be "
                                  "applied,which is known to cause spectral leakage.")
    assert messages[1].startswith("stft with return_complex=False is deprecated.")
    assert messages[1].endswith("(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                                "native/SpectralOps.cpp:874.)")


# -- windows -------------------------------------------------------------------------

WINDOWS = ["hann_window", "hamming_window", "bartlett_window", "blackman_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8, 33])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_windows_match_pytorch(name, length, periodic, dtype):
    theirs = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype))
    ours = getattr(gt, name)(length, periodic, dtype=getattr(gt, dtype))
    # half types: ATen rounds after each step, with its own cos: one ulp apart at most
    tol = {"float32": 1e-6, "float64": 1e-12, "float16": 2.5e-3, "bfloat16": 8e-3}[dtype]
    assert_same(ours, theirs, atol=tol, rtol=tol)


@pytest.mark.parametrize("call", [
    lambda L: L.hamming_window(9, False, 0.6),
    lambda L: L.hamming_window(9, True, 0.6, 0.3, dtype=L.float64),
    lambda L: L.kaiser_window(9, False, 5.0),
    lambda L: L.kaiser_window(10, True, 0.0, dtype=L.float64),
    lambda L: L.hann_window(6, device="meta").shape,
    lambda L: L.blackman_window(5, requires_grad=True),
    lambda L: L.fft.fftfreq(5, requires_grad=True, dtype=L.float64),
])
def test_window_arguments_match_pytorch(call):
    differential(call)


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("call", [
    lambda L, w: getattr(L, w)(-1),
    lambda L, w: getattr(L, w)(3, dtype=L.int64),
    lambda L, w: getattr(L, w)(3, dtype=L.complex64),
])
def test_window_errors_match_pytorch(name, call):
    differential(lambda L: call(L, name), may_raise=True)


SIGNAL_WINDOWS = {
    "bartlett": {}, "blackman": {}, "cosine": {}, "exponential": {"tau": 0.7},
    "gaussian": {"std": 1.5}, "general_cosine": {"a": [0.46, 0.23, 0.31]},
    "general_hamming": {"alpha": 0.6}, "hamming": {}, "hann": {}, "kaiser": {"beta": 3.0},
    "nuttall": {},
}


@pytest.mark.parametrize("name", sorted(SIGNAL_WINDOWS))
@pytest.mark.parametrize("length", [0, 1, 6, 9])
@pytest.mark.parametrize("sym", [True, False])
def test_signal_windows_match_pytorch(name, length, sym):
    kwargs = SIGNAL_WINDOWS[name]
    differential(lambda L: getattr(L.signal.windows, name)(length, sym=sym, dtype=L.float64,
                                                           **kwargs))


@pytest.mark.parametrize("call", [
    lambda L: L.signal.windows.hann(-1),
    lambda L: L.signal.windows.gaussian(4, dtype=L.float16),
    lambda L: L.signal.windows.exponential(4, tau=0),
    lambda L: L.signal.windows.exponential(4, center=1.0),
    lambda L: L.signal.windows.gaussian(4, std=-1),
    lambda L: L.signal.windows.kaiser(4, beta=-1),
    lambda L: L.signal.windows.general_cosine(4, a=[]),
    lambda L: L.signal.windows.general_cosine(4, a=3),
])
def test_signal_window_errors_match_pytorch(call):
    differential(call, may_raise=True)
