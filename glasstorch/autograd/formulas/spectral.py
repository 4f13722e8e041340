"""FFT gradients (FunctionsManual.cpp's fft_r2c_backward and fft_c2r_backward).

The adjoint of a DFT is the DFT the other way with the same normalization, so
_fft_c2c's gradient is _fft_c2c with ``forward`` flipped (derivatives.yaml);
the real <-> complex transforms also account for the half of the spectrum the
onesided layout leaves out."""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops

__all__ = ["fft_r2c_backward", "fft_c2r_backward"]

aten = ops.aten


def fft_r2c_backward(grad, dim, normalization, onesided, last_dim_size):
    """A onesided r2c is a c2c of the real input with half the outputs dropped:
    the gradient pads the dropped half with zeros, runs the inverse c2c and
    keeps the real part."""
    if onesided:
        last = dim[-1]
        missing = last_dim_size - grad.shape[last]
        if missing > 0:
            full_shape = list(grad.shape)
            full_shape[last] = last_dim_size
            full = aten.new_zeros.default(grad, full_shape)
            aten.copy_.default(aten.slice.Tensor(full, last, 0, grad.shape[last]), grad)
            grad = full
    return aten.real.default(aten._fft_c2c.default(grad, dim, normalization, False))


def fft_c2r_backward(grad, dim, normalization):
    """A c2r reads the onesided half and implies the other by conjugate symmetry:
    the gradient is the onesided r2c of ``grad``, with the entries whose mirror
    image lies outside the half (1 .. n - half) counted twice."""
    half = aten._fft_r2c.default(grad, dim, normalization, True)
    doubled = grad.shape[dim[-1]] - half.shape[dim[-1]]
    if doubled > 0:
        aten.mul_.Scalar(aten.narrow.default(half, dim[-1], 1, doubled), 2)
    return half
