"""``torch.signal.windows``: SciPy-style window functions, written in Python
over ops as torch's are (torch/signal/windows/windows.py): each samples a curve
on ``linspace`` points, so ``requires_grad=True`` gives a differentiable window.

``sym=True`` gives a symmetric window (filter design); ``sym=False`` the
periodic one (spectral analysis): the symmetric window of M + 1 points without
its last point."""
import math
from collections.abc import Iterable

from .._core import dtype as _dt
from .._core.layout import strided
from .._creation import tensor
from .._dispatcher.dispatcher import ops as _ops_table

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]

_aten = _ops_table.aten


def _checks(name, M, dtype, layout):
    """The checks every window makes first (ValueError, as torch's)."""
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dt.float32, _dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _prepare(name, M, dtype, layout):
    dtype = dtype if dtype is not None else _dt.get_default_dtype()
    _checks(name, M, dtype, layout)
    return dtype


def _factory(op, size, dtype, device, requires_grad):
    t = op([size], dtype=dtype, device=device)
    return t.requires_grad_() if requires_grad else t


def _points(start, end, M, dtype, device, requires_grad):
    """M evenly spaced points from start to end (the curve's sample positions)."""
    return _factory(lambda size, **kw: _aten.linspace.default(start, end, size[0], **kw),
                    M, dtype, device, requires_grad)


def _denominator(M, sym):
    """The symmetric window's span: M - 1 points apart, or M for the periodic one."""
    return M - 1 if sym else M


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None,
                requires_grad=False):
    """exp(-|n - center| / tau) (the Poisson window)."""
    dtype = _prepare("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _factory(_aten.empty.memory_format, 0, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _points(-center / tau, (M - 1 - center) / tau, M, dtype, device, requires_grad)
    return _aten.exp.default(_aten.neg.default(_aten.abs.default(k)))


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """sin(pi (n + 0.5) / M) (the sine window)."""
    dtype = _prepare("cosine", M, dtype, layout)
    if M == 0:
        return _factory(_aten.empty.memory_format, 0, dtype, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _points(0.5 * step, (M - 0.5) * step, M, dtype, device, requires_grad)
    return _aten.sin.default(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None,
             requires_grad=False):
    """exp(-((n - c) / std)^2 / 2), centred on the window."""
    dtype = _prepare("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _factory(_aten.empty.memory_format, 0, dtype, device, requires_grad)
    first = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _points(first * scale, (first + M - 1) * scale, M, dtype, device, requires_grad)
    return _aten.exp.default(_aten.neg.default(_aten.pow.Tensor_Scalar(k, 2)))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None,
           requires_grad=False):
    """I0(beta sqrt(1 - (2n / N - 1)^2)) / I0(beta), N = M - 1 (symmetric) or M:
    ``torch.kaiser_window`` of the same length (periodic when not ``sym``)."""
    dtype = _prepare("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    window = _aten.kaiser_window.beta(M, not sym, float(beta), dtype=dtype, device=device)
    return window.requires_grad_() if requires_grad else window


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None,
                   requires_grad=False):
    """sum_i (-1)^i a_i cos(2 pi i n / N), N = M - 1 (symmetric) or M."""
    dtype = _prepare("general_cosine", M, dtype, layout)
    if M == 0:
        return _factory(_aten.empty.memory_format, 0, dtype, device, requires_grad)
    if M == 1:
        return _factory(_aten.ones.default, 1, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / _denominator(M, sym)
    k = _points(0, (M - 1) * step, M, dtype, device, requires_grad)
    signed = tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                    requires_grad=requires_grad)
    order = _factory(lambda size, **kw: _aten.arange.default(size[0], **kw), signed.shape[0],
                     dtype, device, requires_grad)
    terms = _aten.mul.Tensor(_aten.unsqueeze.default(signed, -1),
                             _aten.cos.default(_aten.mul.Tensor(
                                 _aten.unsqueeze.default(order, -1), k)))
    return _aten.sum.dim_IntList(terms, [0])


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / N)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_cosine with a = (0.42, 0.5, 0.08)."""
    _prepare("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window (Nuttall's coefficients)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The triangle 1 - |2n / N - 1|."""
    dtype = _prepare("bartlett", M, dtype, layout)
    if M == 0:
        return _factory(_aten.empty.memory_format, 0, dtype, device, requires_grad)
    if M == 1:
        return _factory(_aten.ones.default, 1, dtype, device, requires_grad)
    k = _points(-1, -1 + (M - 1) * 2 / _denominator(M, sym), M, dtype, device, requires_grad)
    return _aten.rsub.Scalar(_aten.abs.default(k), 1)
