"""Samples for the spectral ops (glasstorch/_ops/kernels/spectral.py): the FFT
primitives, torch.fft, stft/istft and the window factories.

ifft and ihfft of a real input end in ``conj`` (ATen's lazy conjugate view,
ConjBackward0); glasstorch's conj is a copy (ConjPhysicalBackward0), so the ifft
samples take complex input and ihfft's functional overload is exempt here: its
values, strides, out= and gradients are compared in tests/test_fft.py."""
from ..opinfo import EXEMPT, sample

EXEMPT["aten::fft_ihfft"] = (
    "its result is conj(r2c): PyTorch's lazy conj names the node ConjBackward0, "
    "glasstorch's copying conj ConjPhysicalBackward0; tests/test_fft.py compares the rest")
EXEMPT["aten::istft"] = (
    "data-dependent (its window-envelope check reads a value): no Meta in PyTorch either; "
    "values, gradients and errors in tests/test_fft.py")


# -- the primitives ------------------------------------------------------------------

@sample("aten::_fft_r2c")
def r2c_onesided(make, lib):
    return (make(3, 6, dtype="float64"), [0, 1], 2, True), {}


@sample("aten::_fft_r2c")
def r2c_full_noncontiguous(make, lib):
    return (make(4, 5, noncontiguous=True), [1], 1, False), {}


@sample("aten::_fft_r2c.out")
def r2c_out(make, lib):
    return (make(2, 5), [1], 0, True), {"out": make(0, dtype="complex64")}


@sample("aten::_fft_c2r")
def c2r_two_dims(make, lib):
    return (make(3, 4, dtype="complex128"), [0, 1], 2, 6), {}


@sample("aten::_fft_c2r.out")
def c2r_out(make, lib):
    return (make(2, 3, dtype="complex64"), [1], 1, 5), {"out": make(0)}


@sample("aten::_fft_c2c")
def c2c_backward_transform(make, lib):
    return (make(2, 3, 4, dtype="complex128"), [0, 2], 2, False), {}


@sample("aten::_fft_c2c.out")
def c2c_out(make, lib):
    return (make(3, 4, dtype="complex64"), [0], 0, True), {"out": make(0, dtype="complex64")}


# -- torch.fft -----------------------------------------------------------------------

_ONE_DIM = {
    "fft": [((4, 5), "float64", {"n": 7, "norm": "ortho"}),
            ((3, 4), "complex64", {"dim": 0})],
    "ifft": [((3, 5), "complex128", {"n": 4, "norm": "forward"})],
    "rfft": [((3, 6), "float64", {"dim": 0, "norm": "backward"}), ((5,), "int64", {})],
    "irfft": [((3, 4), "complex128", {"n": 7})],
    "hfft": [((2, 4), "complex128", {"norm": "ortho"})],
}
_N_DIM = {
    "fft2": [((2, 3, 4), "float64", {"s": (4, 3)})],
    "ifft2": [((3, 4), "complex128", {"norm": "ortho"})],
    "rfft2": [((3, 6), "float64", {"dim": (1, 0)})],
    "irfft2": [((3, 4), "complex128", {"s": (3, 5)})],
    "hfft2": [((2, 3), "complex128", {})],
    "ihfft2": [((4, 5), "float64", {"norm": "forward"})],
    "fftn": [((2, 3, 4), "complex128", {"dim": (0, 2)})],
    "ifftn": [((3, 4), "float64", {"s": (5, -1)})],
    "rfftn": [((2, 3, 4), "float64", {})],
    "irfftn": [((2, 3, 4), "complex128", {"s": (4, 6), "norm": "ortho"})],
    "hfftn": [((3, 3), "complex128", {"dim": (1, 0)})],
    "ihfftn": [((2, 3, 4), "float64", {"dim": (0, 2)})],
}
_COMPLEX_OUT = {"fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "rfft2", "ihfft2", "fftn",
                "ifftn", "rfftn", "ihfftn"}


def _fft_sample(name, shape, dtype, kwargs, out):
    def fn(make, lib):
        x = make(*shape, dtype=dtype)
        extra = {}
        if out:
            wide = "complex128" if dtype in ("float64", "complex128") else "complex64"
            narrow = "float64" if dtype in ("float64", "complex128") else "float32"
            extra["out"] = make(0, dtype=wide if name in _COMPLEX_OUT else narrow)
        return (x,), {**kwargs, **extra}
    fn.__name__ = f"{name}_{'x'.join(map(str, shape))}_{dtype}{'_out' if out else ''}"
    return fn


for _name, _cases in {**_ONE_DIM, **_N_DIM}.items():
    for _shape, _dtype, _kwargs in _cases:
        sample(f"aten::fft_{_name}")(_fft_sample(_name, _shape, _dtype, _kwargs, False))
        sample(f"aten::fft_{_name}.out")(_fft_sample(_name, _shape, _dtype, _kwargs, True))
sample("aten::fft_ihfft.out")(_fft_sample("ihfft", (3, 5), "float64", {"n": 6}, True))


@sample("aten::fft_fftfreq")
def fftfreq_spacing(make, lib):
    return (7, 0.25), {"dtype": lib.float64}


@sample("aten::fft_fftfreq.out")
def fftfreq_out(make, lib):
    return (6,), {"out": make(0)}


@sample("aten::fft_rfftfreq")
def rfftfreq_default(make, lib):
    return (8,), {}


@sample("aten::fft_rfftfreq.out")
def rfftfreq_out(make, lib):
    return (9, 2.0), {"out": make(0, dtype="float64")}


@sample("aten::fft_fftshift")
def fftshift_all(make, lib):
    return (make(3, 4, dtype="float64"),), {}


@sample("aten::fft_ifftshift")
def ifftshift_dims(make, lib):
    return (make(3, 5, 2, dtype="complex128"),), {"dim": (0, 1)}


# -- stft / istft --------------------------------------------------------------------

@sample("aten::stft")
def stft_hann(make, lib):
    window = lib.hann_window(8, dtype=lib.float64, device=make.device)
    return (make(2, 20, dtype="float64"), 8), {"hop_length": 3, "window": window,
                                               "return_complex": True}


@sample("aten::stft.center")
def stft_centered_short_window(make, lib):
    return (make(30, dtype="float64"), 8), {"hop_length": 2, "win_length": 6,
                                            "window": make(6, dtype="float64"),
                                            "normalized": True, "return_complex": True}


# -- window functions ----------------------------------------------------------------

@sample("aten::hann_window")
def hann(make, lib):
    return (9,), {}


@sample("aten::hann_window.periodic")
def hann_symmetric(make, lib):
    return (8, False), {"dtype": lib.float64}


@sample("aten::hamming_window")
def hamming(make, lib):
    return (7,), {"dtype": lib.float64}


@sample("aten::hamming_window.periodic")
def hamming_symmetric(make, lib):
    return (6, False), {}


@sample("aten::hamming_window.periodic_alpha")
def hamming_alpha(make, lib):
    return (6, True, 0.6), {"dtype": lib.float64}


@sample("aten::hamming_window.periodic_alpha_beta")
def hamming_alpha_beta(make, lib):
    return (9, False, 0.5, 0.3), {}


@sample("aten::bartlett_window")
def bartlett(make, lib):
    return (8,), {}


@sample("aten::bartlett_window.periodic")
def bartlett_symmetric(make, lib):
    return (7, False), {"dtype": lib.float64}


@sample("aten::blackman_window")
def blackman(make, lib):
    return (10,), {"dtype": lib.float64}


@sample("aten::blackman_window.periodic")
def blackman_symmetric(make, lib):
    return (5, False), {}


@sample("aten::kaiser_window")
def kaiser(make, lib):
    return (9,), {"dtype": lib.float64}


@sample("aten::kaiser_window.periodic")
def kaiser_symmetric(make, lib):
    return (8, False), {}


@sample("aten::kaiser_window.beta")
def kaiser_beta(make, lib):
    return (7, True, 4.5), {"dtype": lib.float64}
