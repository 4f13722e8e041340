"""Spectral ops (ATen's native/SpectralOps.cpp, mkl/SpectralOps.cpp, the window
factories of TensorFactories.cpp): torch.fft, stft/istft and the windows.

    _fft_c2c(x, dim, norm, forward)       complex -> complex over ``dim``
    _fft_r2c(x, dim, norm, onesided)      real -> complex (forward; last dim halved
                                          when onesided, else the full spectrum)
    _fft_c2r(x, dim, norm, last_dim_size) complex (Hermitian, halved) -> real (inverse)

Those three primitives carry the derivatives; every ``fft_*`` function is
CompositeImplicitAutograd over them, as in ATen: it promotes the dtype, pads or
trims the input to ``n``/``s`` (``constant_pad_nd`` / ``slice``), turns ``norm``
into an integer normalization (0 none, 1 by 1/sqrt(n), 2 by 1/n) and conjugates
where a transform runs the other way (ifft of a real input is the conjugate of
its forward r2c; hfft is c2r of the conjugate).

The primitives run one pass per transformed dim: fft.c (kernels/fft_native.py)
for power-of-two lengths over many lines, where MKL's DFTI runs in PyTorch
(a primitive's fft.c passes in one call: one parallel region), numpy's
pocketfft otherwise (and without a C compiler); numpy >= 2 keeps
float32/complex64 inputs in single precision, older numpy rounds on the write
into ``out``.
Output strides follow MKL's ``_exec_fft``: the batch dims outermost in the
input's stride order, then the transformed dims contiguous.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import strided
from ..._dispatcher.dispatcher import ops
from ..structured import TensorMeta, empty_tensor, wrap_dim
from . import fft_native, kernel
from ._common import _on_meta, _sizes, _triggered_at
from .factory import _dtype, _empty, like_strides
from .linalg import _into

__all__ = []

aten = ops.aten

# fft_norm_mode (SpectralOpsUtils.h)
NORM_NONE, NORM_BY_ROOT_N, NORM_BY_N = 0, 1, 2


# -- the primitives: output layouts (what the Meta device needs) ---------------------

def _exec_fft_strides(shape, in_stride, dims):
    """``_exec_fft``'s output layout: the untransformed (batch) dims outermost,
    ordered by the input's strides (largest first), then ``dims`` contiguous in
    their given order."""
    batch = sorted((d for d in range(len(shape)) if d not in dims), key=lambda d: -in_stride[d])
    stride = [0] * len(shape)
    acc = 1
    for d in reversed(dims):
        stride[d] = acc
        acc *= max(shape[d], 1)
    for d in reversed(batch):
        stride[d] = acc
        acc *= shape[d]
    return tuple(stride)


def _sorted_dims(self, dim, exclude_last=False):
    """The transformed dims, largest input stride first (the last one kept last
    for r2c, whose halved dim must come last)."""
    end = len(dim) - int(exclude_last)
    return sorted(dim[:end], key=lambda d: -self._stride[d]) + list(dim[end:])


def _check_dtype(self, complex_input):
    if complex_input and not self.dtype.is_complex:
        raise RuntimeError(f"Only supports complex dtypes, but found: {self.dtype._short}")
    if not complex_input and not self.dtype.is_floating_point:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {self.dtype._short}")


def _c2c_meta(self, dim):
    if not dim:         # a clone
        return TensorMeta(self._shape, self.dtype, like_strides(self, None))
    return TensorMeta(self._shape, self.dtype,
                      _exec_fft_strides(self._shape, self._stride, _sorted_dims(self, dim)))


def _fft_c2c_meta(self, dim, normalization, forward):
    _check_dtype(self, complex_input=True)
    return _c2c_meta(self, list(dim))


def _fft_r2c_meta(self, dim, normalization, onesided):
    _check_dtype(self, complex_input=False)
    shape = list(self._shape)
    if onesided:
        shape[dim[-1]] = shape[dim[-1]] // 2 + 1
    return TensorMeta(shape, self.dtype.to_complex(),
                      _exec_fft_strides(shape, self._stride, _sorted_dims(self, dim, True)))


def _fft_c2r_meta(self, dim, normalization, last_dim_size):
    """MKL runs the c2c transforms of all but the last dim first; the real output's
    batch dims follow that intermediate's strides."""
    _check_dtype(self, complex_input=True)
    stride = self._stride if len(dim) == 1 else _c2c_meta(self, list(dim[:-1])).stride
    shape = list(self._shape)
    shape[dim[-1]] = last_dim_size
    return TensorMeta(shape, self.dtype.to_real(), _exec_fft_strides(shape, stride, [dim[-1]]))


# -- the primitives: fft.c, or pocketfft through numpy --------------------------------

# numpy's ``norm`` for a forward / inverse transform with ATen's normalization
_NP_NORM = {True: ("backward", "ortho", "forward"), False: ("forward", "ortho", "backward")}


def _fill_conjugate_symmetry(full, half, dims, n):
    """``_fft_fill_with_conjugate_symmetry_``: the full spectrum of a real signal
    from its halved one, X[k] = conj(X[-k]) (indices modulo each dim's size)."""
    last = dims[-1]
    h = half.shape[last]
    head = [slice(None)] * full.ndim
    head[last] = slice(0, h)
    full[tuple(head)] = half
    if n <= h:
        return
    mirrored = half
    for d in dims[:-1]:
        mirrored = np.roll(np.flip(mirrored, d), 1, d)
    source = [slice(None)] * full.ndim
    source[last] = slice(n - h, 0, -1)
    head[last] = slice(h, n)
    np.conjugate(mirrored[tuple(source)], out=full[tuple(head)])


def _scale(normalization, n):
    """The factor one pass of length ``n`` applies (the passes' product is ATen's)."""
    return (1.0, 1.0 / math.sqrt(n), 1.0 / n)[normalization]


def _c2c_passes(src, dst, dims, forward, normalization, first=None, last=None):
    """dst = the c2c transform of src over ``dims``, one pass per dim (dst's most
    contiguous first; in place in dst after the first), after fft.c's pass
    ``first`` (which writes src) and before its pass ``last`` (which reads dst)
    when given.  Consecutive fft.c passes run in one call (``fft_native.run``);
    a pass fft.c does not take runs in numpy between them.  A pass planned
    now copies its src when that layout does not merge (fft_native._plan), so
    src may have such a layout only when it is already complete."""
    passes = [first] if first is not None else []
    for d in sorted(dims, key=lambda d: abs(dst.strides[d])):
        n = dst.shape[d]
        planned = fft_native.c2c(src, dst, d, forward, _scale(normalization, n))
        if planned is None:
            fft_native.run(passes)
            passes = []
            transform = np.fft.fft if forward else np.fft.ifft
            dst[...] = transform(src, axis=d, norm=_NP_NORM[forward][normalization])
        else:
            passes.append(planned)
        src = dst
    fft_native.run(passes + [last] if last is not None else passes)


def _fft_c2c_impl(out, self, dim, normalization, forward):
    if not dim or not out.numel():
        out._np()[...] = self._np()
        return
    _c2c_passes(self._np(), out._np(), list(dim), forward, normalization)


def _fft_r2c_impl(out, self, dim, normalization, onesided):
    """The r2c pass over the last dim, then c2c passes over the others; a
    two-sided one-dim transform is mirrored by fft.c, others from the halved one."""
    if not out.numel():
        return
    x, o, dims = self._np(), out._np(), list(dim)
    last, n = dims[-1], self._shape[dims[-1]]
    mirrored = not onesided and len(dims) == 1
    half = o if onesided or mirrored else \
        np.empty(o.shape[:last] + (n // 2 + 1,) + o.shape[last + 1:], o.dtype)
    first = fft_native.r2c(x, half, last, _scale(normalization, n), mirrored)
    if first is None:
        half, mirrored = np.fft.rfft(x, axis=last, norm=_NP_NORM[True][normalization]), False
    _c2c_passes(half, half, dims[:-1], True, normalization, first=first)
    if onesided:
        if half is not o:
            o[...] = half
    elif not mirrored:
        _fill_conjugate_symmetry(o, half, dims, n)


def _fft_c2r_impl(out, self, dim, normalization, last_dim_size):
    """c2c (inverse) passes over all but the last dim into a working copy, then the
    c2r pass over the last dim into ``out``."""
    if not out.numel():
        return
    x, o, dims = self._np(), out._np(), list(dim)
    last, n = dims[-1], last_dim_size
    x = x[(slice(None),) * last + (slice(0, n // 2 + 1),)]
    work = x
    if len(dims) > 1:   # laid out as ``o``: the c2r pass reads it without a copy
        order = sorted(range(x.ndim), key=lambda d: -abs(o.strides[d]))
        work = np.empty([x.shape[d] for d in order], x.dtype)
        if order != sorted(order):
            work = work.transpose([order.index(d) for d in range(x.ndim)])
    final = fft_native.c2r(work, o, last, _scale(normalization, n)) \
        if x.shape[last] == n // 2 + 1 else None
    _c2c_passes(x, work, dims[:-1], False, normalization, last=final)
    if final is None:
        o[...] = np.fft.irfft(work, n=n, axis=last, norm=_NP_NORM[False][normalization])


def _primitive(name, layout, compute):
    """The CPU/Meta kernel of a primitive and its out= kernel.  Not structured in
    ATen: out= computes the result, then resize_output (out's own strides when
    it is reused) and copy_."""
    @kernel(name)
    def functional(self, *args):
        spec = layout(self, *args)
        result = empty_tensor(spec.shape, spec.dtype, self.device, spec.stride)
        if not _on_meta(self):
            compute(result, self, *args)
        return result

    @kernel(name + "_out")
    def out_variant(self, *args, out):
        return _into(out, functional(self, *args))


_primitive("_fft_c2c", _fft_c2c_meta, _fft_c2c_impl)
_primitive("_fft_r2c", _fft_r2c_meta, _fft_r2c_impl)
_primitive("_fft_c2r", _fft_c2r_meta, _fft_c2r_impl)


# -- torch.fft (CompositeImplicitAutograd) -------------------------------------------

def _norm_from_string(norm, forward):
    if norm is None or norm == "backward":
        return NORM_NONE if forward else NORM_BY_N
    if norm == "forward":
        return NORM_BY_N if forward else NORM_NONE
    if norm == "ortho":
        return NORM_BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(t, require_complex=False):
    """promote_tensor_fft: integers become the default float dtype; only float,
    double (and their complex types) have CPU transforms."""
    dtype = t.dtype
    if not dtype.is_complex:
        if not dtype.is_floating_point:
            dtype = dt.get_default_dtype()
        if dtype not in (dt.float32, dt.float64):
            raise RuntimeError(f"Unsupported dtype {dtype._short}")
        if require_complex:
            dtype = dtype.to_complex()
    return t if dtype is t.dtype else aten.to.dtype(t, dtype)


def _wrap(dim, ndim):
    """maybe_wrap_dim without wrapping scalars."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def _resize_fft_input(x, dims, sizes):
    """Trim (``slice``) or zero-pad (one ``constant_pad_nd``) each dim to its size."""
    pad = [0] * (2 * x.dim())
    grow = False
    original = x._shape
    for d, n in zip(dims, sizes):
        if original[d] < n:
            grow = True
            pad[2 * (x.dim() - 1 - d) + 1] = n - original[d]
        elif original[d] > n:
            x = aten.slice.Tensor(x, d, 0, n)
    return aten.constant_pad_nd.default(x, pad) if grow else x


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _one_dim(x, n, dim):
    dim = _wrap(dim, x.dim())
    length = x._shape[dim] if n is None else n
    return dim, length


def _c2c(name, out, x, n, dim, norm, forward):
    if not x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex input tensor, but got {x.dtype._short}")
    dim, length = _one_dim(x, n, dim)
    _check_points(length)
    if n is not None:
        x = _resize_fft_input(x, [dim], [n])
    mode = _norm_from_string(norm, forward)
    if out is not None:
        return aten._fft_c2c.out(x, [dim], mode, forward, out=out)
    return aten._fft_c2c.default(x, [dim], mode, forward)


def _r2c(name, out, x, n, dim, norm, forward, onesided):
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {x.dtype._short}")
    if out is not None and not out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex output tensor, but got {out.dtype._short}")
    x = _promote(x)
    dim, length = _one_dim(x, n, dim)
    _check_points(length)
    if n is not None:
        x = _resize_fft_input(x, [dim], [n])
    mode = _norm_from_string(norm, forward)
    if out is not None and forward:
        return aten._fft_r2c.out(x, [dim], mode, onesided, out=out)
    result = aten._fft_r2c.default(x, [dim], mode, onesided)
    if forward:
        return result
    # no native inverse r2c: the conjugate of the forward one
    return aten.conj_physical.out(result, out=out) if out is not None else aten.conj.default(result)


def _c2r(name, out, x, n, dim, norm, forward):
    if out is not None and not out.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got "
                           f"{out.dtype._short}")
    x = _promote(x, require_complex=True)
    dim = _wrap(dim, x.dim())
    length = 2 * (x._shape[dim] - 1) if n is None else n
    _check_points(length)
    if n is not None:
        x = _resize_fft_input(x, [dim], [n // 2 + 1])
    mode = _norm_from_string(norm, forward)
    if forward:     # hfft: the c2r (inverse) transform of the conjugate
        x = aten.conj.default(x)
    if out is not None:
        return aten._fft_c2r.out(x, [dim], mode, length, out=out)
    return aten._fft_c2r.default(x, [dim], mode, length)


def fft_fft(self, n=None, dim=-1, norm=None, out=None):
    if self.dtype.is_complex:
        return _c2c("fft", out, self, n, dim, norm, forward=True)
    return _r2c("fft", out, self, n, dim, norm, forward=True, onesided=False)


def fft_ifft(self, n=None, dim=-1, norm=None, out=None):
    if self.dtype.is_complex:
        return _c2c("ifft", out, self, n, dim, norm, forward=False)
    return _r2c("ifft", out, self, n, dim, norm, forward=False, onesided=False)


def fft_rfft(self, n=None, dim=-1, norm=None, out=None):
    return _r2c("rfft", out, self, n, dim, norm, forward=True, onesided=True)


def fft_irfft(self, n=None, dim=-1, norm=None, out=None):
    return _c2r("irfft", out, self, n, dim, norm, forward=False)


def fft_hfft(self, n=None, dim=-1, norm=None, out=None):
    return _c2r("hfft", out, self, n, dim, norm, forward=True)


def fft_ihfft(self, n=None, dim=-1, norm=None, out=None):
    return _r2c("ihfft", out, self, n, dim, norm, forward=False, onesided=True)


# -- n-dimensional transforms --------------------------------------------------------

def _shape_and_dims(x, s, dim):
    """canonicalize_fft_shape_and_dim_args: the transformed dims (wrapped, unique;
    by default the last len(s) dims, or all) and their lengths (-1 in ``s``
    keeps a dim's size)."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        dims = [_wrap(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x._shape[d] if n == -1 else n for d, n in zip(dims, s)]
    else:
        if dims is None:
            dims = list(range(ndim))
        shape = [x._shape[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _c2r_shape_and_dims(name, x, s, dim):
    """canonicalize_fft_c2r_shape_and_dim_args: also the real output's last-dim
    length (by default 2 * (size - 1)); the input's last dim is read to n // 2 + 1."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    last_dim_size = 2 * (x._shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_points(last_dim_size)
    shape[-1] = last_dim_size // 2 + 1
    return shape, dims, last_dim_size


def _fftn_c2c(out, x, shape, dims, norm, forward):
    x = _resize_fft_input(x, dims, shape)
    mode = _norm_from_string(norm, forward)
    if out is not None:
        return aten._fft_c2c.out(x, dims, mode, forward, out=out)
    return aten._fft_c2c.default(x, dims, mode, forward)


def fft_fftn(self, s=None, dim=None, norm=None, out=None):
    shape, dims = _shape_and_dims(self, s, dim)
    return _fftn_c2c(out, _promote(self, require_complex=True), shape, dims, norm, forward=True)


def fft_ifftn(self, s=None, dim=None, norm=None, out=None):
    shape, dims = _shape_and_dims(self, s, dim)
    return _fftn_c2c(out, _promote(self, require_complex=True), shape, dims, norm, forward=False)


def fft_rfftn(self, s=None, dim=None, norm=None, out=None):
    shape, dims = _shape_and_dims(self, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    if self.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{self.dtype._short}")
    x = _resize_fft_input(_promote(self), dims, shape)
    mode = _norm_from_string(norm, forward=True)
    if out is not None:
        return aten._fft_r2c.out(x, dims, mode, True, out=out)
    return aten._fft_r2c.default(x, dims, mode, True)


def _c2r_maybe_out(out, x, dims, mode, last_dim_size):
    if out is not None:
        return aten._fft_c2r.out(x, dims, mode, last_dim_size, out=out)
    return aten._fft_c2r.default(x, dims, mode, last_dim_size)


def fft_irfftn(self, s=None, dim=None, norm=None, out=None):
    shape, dims, last_dim_size = _c2r_shape_and_dims("irfftn", self, s, dim)
    x = _resize_fft_input(_promote(self, require_complex=True), dims, shape)
    return _c2r_maybe_out(out, x, dims, _norm_from_string(norm, forward=False), last_dim_size)


def fft_hfftn(self, s=None, dim=None, norm=None, out=None):
    """c2c over all but the last dim, then c2r of the conjugate over the last."""
    shape, dims, last_dim_size = _c2r_shape_and_dims("hfftn", self, s, dim)
    x = _resize_fft_input(_promote(self, require_complex=True), dims, shape)
    mode = _norm_from_string(norm, forward=True)
    if len(dims) > 1:
        x = aten._fft_c2c.default(x, dims[:-1], mode, True)
    return _c2r_maybe_out(out, aten.conj.default(x), [dims[-1]], mode, last_dim_size)


def fft_ihfftn(self, s=None, dim=None, norm=None, out=None):
    """r2c over the last dim, conjugated, then the inverse c2c over the others."""
    shape, dims = _shape_and_dims(self, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize_fft_input(_promote(self), dims, shape)
    mode = _norm_from_string(norm, forward=False)
    half = aten._fft_r2c.default(x, [dims[-1]], mode, True)
    if len(dims) == 1:
        return aten.conj_physical.out(half, out=out) if out is not None else aten.conj.default(half)
    half = aten.conj_physical.default(half)
    if out is not None:
        return aten._fft_c2c.out(half, dims[:-1], mode, False, out=out)
    return aten._fft_c2c.default(half, dims[:-1], mode, False)


_FUNCTIONS = {
    "fft_fft": fft_fft, "fft_ifft": fft_ifft, "fft_rfft": fft_rfft, "fft_irfft": fft_irfft,
    "fft_hfft": fft_hfft, "fft_ihfft": fft_ihfft,
    "fft_fftn": fft_fftn, "fft_ifftn": fft_ifftn, "fft_rfftn": fft_rfftn,
    "fft_irfftn": fft_irfftn, "fft_hfftn": fft_hfftn, "fft_ihfftn": fft_ihfftn,
    # the 2-d ones are the n-d ones over dims (-2, -1)
    "fft_fft2": fft_fftn, "fft_ifft2": fft_ifftn, "fft_rfft2": fft_rfftn,
    "fft_irfft2": fft_irfftn, "fft_hfft2": fft_hfftn, "fft_ihfft2": fft_ihfftn,
}


def _register(name, fn):
    kernel(name)(lambda self, *args, **kwargs: fn(self, *args, **kwargs))
    kernel(name + "_out")(lambda self, *args, out, **kwargs: fn(self, *args, out=out, **kwargs))


for _name, _fn in _FUNCTIONS.items():
    _register(_name, _fn)


# -- fftfreq, rfftfreq (CompositeExplicitAutograd factories) and the shifts --------

def _scalar_type(dtype):
    """The numpy scalar type a dtype computes in (float32 for the half types)."""
    return np.dtype(dtype.opmath).type


def _check_freq_dtype(dtype, name):
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")


def _fill_frequencies(out, integers, n, d):
    """``out`` = integers / (n * d), computed as ATen does: a multiply by the
    reciprocal, in the dtype's compute precision."""
    if out.dtype.is_complex:        # (arange has no complex loop)
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{out.dtype._short}\'')
    if out.device.type == "meta":
        return out
    compute = _scalar_type(out.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.divide(1.0, np.float64(n) * d)
        out._np()[...] = integers.astype(compute) * compute(scale)
    return out


def _frequencies_out(n, d, out, name, integers):
    _check_freq_dtype(out.dtype, name)
    aten.resize_.default(out, [integers.size])
    return _fill_frequencies(out, integers, n, d)


def _fftfreq_integers(n):
    return np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])


@kernel("fft_fftfreq")
def fft_fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = _dtype(dtype)
    _check_freq_dtype(dtype, "fftfreq")
    return _fill_frequencies(_empty((n,), dtype, device), _fftfreq_integers(n), n, d)


@kernel("fft_fftfreq_out")
def fft_fftfreq_out(n, d=1.0, *, out):
    return _frequencies_out(n, d, out, "fftfreq", _fftfreq_integers(n))


@kernel("fft_rfftfreq")
def fft_rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = _dtype(dtype)
    _check_freq_dtype(dtype, "rfftfreq")
    return _fill_frequencies(_empty((n // 2 + 1,), dtype, device), np.arange(n // 2 + 1), n, d)


@kernel("fft_rfftfreq_out")
def fft_rfftfreq_out(n, d=1.0, *, out):
    return _frequencies_out(n, d, out, "rfftfreq", np.arange(n // 2 + 1))


def _shift(x, dim, shift_of):
    dims = list(range(x.dim())) if dim is None else [wrap_dim(d, x.dim()) for d in dim]
    return aten.roll.default(x, [shift_of(x._shape[d]) for d in dims], dims)


@kernel("fft_fftshift")
def fft_fftshift(self, dim=None):
    """``roll`` by half of each dim: the zero frequency to the centre."""
    return _shift(self, dim, lambda n: n // 2)


@kernel("fft_ifftshift")
def fft_ifftshift(self, dim=None):
    return _shift(self, dim, lambda n: (n + 1) // 2)


# -- window functions (CompositeExplicitAutograd factories) --------------------------

def _options_text(dtype, layout, device):
    """How c10 prints the TensorOptions of a factory call."""
    shown_layout = "Strided (default)" if layout is None else "Strided"
    return (f"TensorOptions(dtype={dt.type_meta_name(dtype)}, device={device or 'cpu'}, "
            f"layout={shown_layout}, requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))")


def _window_checks(name, window_length, dtype, layout, device):
    """window_function_checks."""
    if layout is not None and layout is not strided:
        raise RuntimeError(f"{name} is not implemented for sparse types, got: "
                           f"{_options_text(dtype, layout, device)}")
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"{_options_text(dtype, layout, device)}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")


def _window(name, window_length, periodic, dtype, layout, device, values):
    """A window of ``window_length`` points: ``values(n, length, step, scalar)``
    computes it over the symmetric window of ``length`` points (one more when
    periodic, whose last point is dropped) from ``n`` = arange(length), in the
    dtype's compute precision; ``step`` rounds to the dtype, as each of ATen's
    in-place ops (arange, mul_, cos_ ...) does, and ``scalar`` is a Python
    number those ops take, rounded to the dtype too."""
    dtype = _dtype(dtype)
    _window_checks(name, window_length, dtype, layout, device)
    out = _empty((window_length,), dtype, device)
    if out.device.type == "meta" or window_length == 0:
        return out
    if window_length == 1:
        out._np()[...] = 1
        return out
    if dtype.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dtype._short}\'')
    length = window_length + 1 if periodic else window_length
    compute = _scalar_type(dtype)

    def step(a):
        return a.astype(dtype.numpy).astype(compute)

    def scalar(v):
        return compute(dtype.numpy.type(v))
    with np.errstate(invalid="ignore"):
        window = values(step(np.arange(length, dtype=compute)), length, step, scalar)
    out._np()[...] = window[:window_length]
    return out


@kernel("hann_window")
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=None):
    _window_checks("hann_window", window_length, _dtype(dtype), layout, device)
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, layout=layout,
                          device=device)


@kernel("hamming_window")
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=None):
    """alpha - beta cos(2 pi n / (N - 1))."""
    def values(n, length, step, c):
        angle = step(n * c(2 * math.pi / (length - 1)))
        return step(step(step(np.cos(angle)) * c(-beta)) + c(alpha))
    return _window("hamming_window", window_length, periodic, dtype, layout, device, values)


@kernel("bartlett_window")
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=None):
    """The triangle: 2n / (N - 1) up to the middle, 2 - 2n / (N - 1) after."""
    def values(n, length, step, c):
        ramp = step(n * c(2.0 / (length - 1)))
        rising = ((length - 1) >> 1) + 1
        ramp[rising:] = step(step(-ramp[rising:]) + c(2))
        return ramp
    return _window("bartlett_window", window_length, periodic, dtype, layout, device, values)


@kernel("blackman_window")
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=None):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    def values(n, length, step, c):
        angle = step(n * c(math.pi / (length - 1)))
        far = step(step(np.cos(step(angle * c(4)))) * c(0.08))
        near = step(step(np.cos(step(angle * c(2)))) * c(0.5))
        return step(step(far - near) + c(0.42))
    return _window("blackman_window", window_length, periodic, dtype, layout, device, values)


@kernel("kaiser_window")
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=None):
    """I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta), a = (N - 1) / 2 (one kernel:
    rounded once)."""
    def values(n, length, step, scalar):
        c = n.dtype.type        # one kernel in the compute type: its scalars unrounded
        alpha = c((length - 1) / 2.0)
        ratio = (n - alpha) / alpha
        argument = c(beta) * np.sqrt(np.abs(c(1) - ratio * ratio))
        return step((np.i0(argument.astype(np.float64)) / np.i0(np.float64(beta))).astype(c))
    return _window("kaiser_window", window_length, periodic, dtype, layout, device, values)


# -- stft / istft (CompositeImplicitAutograd) ----------------------------------------

def _optional(value):
    return "None" if value is None else str(int(value)) if isinstance(value, bool) else str(value)


def _tensor_name(t):
    """A tensor as c10 names its type in these messages: torch.FloatTensor."""
    return f"torch.{t.dtype._short}Tensor"


def _window_text(window):
    return "None" if window is None else f"{_tensor_name(window)}{{{_sizes(window._shape)}}}"


# TORCH_WARN_ONCE: each warning once per process
_NO_WINDOW, _RETURN_REAL, _NO_ISTFT_WINDOW, _PADDED = [], [], [], []


def _warn_once(seen, message, where):
    if not seen:
        seen.append(True)
        warnings.warn(message + _triggered_at(where), UserWarning, stacklevel=4)


@kernel("stft")
def stft(self, n_fft, hop_length=None, win_length=None, window=None, normalized=False,
         onesided=None, return_complex=None, align_to_window=None):
    """Frames of ``n_fft`` samples every ``hop_length`` (an ``as_strided`` view),
    windowed, each transformed (r2c onesided for real input, else c2c); the
    result is (batch?, freq, frames)."""
    if window is None:
        _warn_once(_NO_WINDOW, "A window was not provided. A rectangular window will be "
                   "applied,which is known to cause spectral leakage. Other windows such as "
                   "torch.hann_window or torch.hamming_window are recommended to reduce "
                   "spectral leakage.To suppress this warning and use a rectangular window, "
                   "explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                   "SpectralOps.cpp:835")
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length

    def fail(problem):
        raise RuntimeError(
            f"stft({_tensor_name(self)}{_sizes(self._shape)}, n_fft={n_fft}, "
            f"hop_length={hop_length}, win_length={win_length}, window={_window_text(window)}, "
            f"normalized={int(normalized)}, onesided={_optional(onesided)}, "
            f"return_complex={_optional(return_complex)}, "
            f"align_to_window={_optional(align_to_window)}) : {problem}")

    if window is not None and window.device != self.device:
        raise RuntimeError(f"stft input and window must be on the same device but got self on "
                           f"{self.device} and window on {window.device}")
    if return_complex is None:
        if not (self.dtype.is_complex or (window is not None and window.dtype.is_complex)):
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    if not return_complex:
        _warn_once(_RETURN_REAL,
                   "stft with return_complex=False is deprecated. In a future pytorch release, "
                   "stft will return complex tensors for all inputs, and return_complex=False "
                   "will raise an error.\nNote: you can still call torch.view_as_real on the "
                   "complex output to recover the old return format.", "SpectralOps.cpp:874")
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        fail("expected a tensor of floating point or complex values")
    if self.dim() not in (1, 2):
        fail("expected a 1D or 2D tensor")
    x = aten.unsqueeze.default(self, 0) if self.dim() == 1 else self
    batch, length = x._shape
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.dim() != 1 or window._shape[0] != win_length):
        fail(f"expected a 1D window tensor of size equal to win_length={win_length}, but got "
             f"window with size {_sizes(window._shape)}")

    full_window = window
    left = (n_fft - win_length) // 2
    if win_length < n_fft:      # the window centred in n_fft points
        full_window = aten.constant_pad_nd.default(
            window if window is not None else aten.ones.default([win_length], dtype=self.dtype,
                                                                device=self.device),
            [left, n_fft - win_length - left])
    if align_to_window:         # frames start where the window does
        frames = 1 + (length - win_length) // hop_length
        x = aten.constant_pad_nd.default(x, [left, n_fft - win_length - left])
    else:
        frames = 1 + (length - n_fft) // hop_length
    x = aten.as_strided.default(x, [batch, frames, n_fft],
                                [x._stride[0], hop_length * x._stride[1], x._stride[1]],
                                x._offset)
    if full_window is not None:
        x = aten.mul.Tensor(x, full_window)

    complex_fft = x.dtype.is_complex
    onesided = not complex_fft if onesided is None else onesided
    mode = NORM_BY_ROOT_N if normalized else NORM_NONE
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = aten._fft_c2c.default(x, [2], mode, True)
    else:
        out = aten._fft_r2c.default(x, [2], mode, onesided)
    aten.transpose_.default(out, 1, 2)       # (batch, freq, frames), in place as ATen
    if self.dim() == 1:
        aten.squeeze_.dim(out, 0)
    return out if return_complex else aten.view_as_real.default(out)



@kernel("stft_center")
def stft_center(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
                pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
                align_to_window=None):
    """stft of the signal padded by n_fft // 2 on each side (``pad_mode``) when
    ``center``, so frame t is centred on sample t * hop_length."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    x = self
    if center:
        extra = max(3, self.dim()) - self.dim()
        pad = n_fft // 2
        padded = aten.pad.default(aten.view.default(self, [1] * extra + list(self._shape)),
                                  [pad, pad], pad_mode)
        x = aten.view.default(padded, list(padded._shape[extra:]))
    return stft(x, n_fft, hop_length, win_length, window, normalized, onesided, return_complex,
                align_to_window)


@kernel("istft")
def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of stft by weighted overlap-add: each frame's inverse
    transform times the window, summed where the frames overlap
    (``unfold_backward``), divided by the summed squared window."""
    if window is None:
        _warn_once(_NO_ISTFT_WINDOW, "A window was not provided. A rectangular window will be "
                   "applied.Please provide the same window used by stft to make the inversion "
                   "lossless.To suppress this warning and use a rectangular window, explicitly "
                   "set `window=torch.ones(n_fft, device=<device>)`.", "SpectralOps.cpp:1035")
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    shown = (f"istft(CPU{self.dtype._short}Type{_sizes(self._shape)}, n_fft={n_fft}, "
             f"hop_length={hop_length}, win_length={win_length}, window={_window_text(window)}, "
             f"center={int(center)}, normalized={int(normalized)}, "
             f"onesided={_optional(onesided)}, length={_optional(length)}, "
             f"return_complex={int(return_complex)}) ")

    def fail(problem):
        raise RuntimeError(shown + problem)

    if window is not None and window.device != self.device:
        raise RuntimeError(f"istft input and window must be on the same device but got self "
                           f"on {self.device} and window on {window.device}")
    if not self.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    real_view = aten.view_as_real.default(aten.resolve_conj.default(self))
    ndim = real_view.dim()
    frames = real_view._shape[wrap_dim(-2, ndim)]
    fft_size = real_view._shape[wrap_dim(-3, ndim)]
    expected_length = n_fft + hop_length * (frames - 1)
    if real_view.numel() == 0:
        fail(": input tensor cannot be empty.")
    if ndim not in (3, 4):
        fail(f": expected a tensor with 3 or 4 dimensions, but got {ndim}")
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop_length <= win_length:
        fail(": expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window._shape[0] != win_length):
        fail(": Invalid window shape. window has to be 1D and length of `win_length`")

    full_window = window if window is not None else aten.ones.default(
        [win_length], dtype=real_view.dtype, device=self.device)
    if win_length != n_fft:
        left = (n_fft - win_length) // 2
        full_window = aten.constant_pad_nd.default(full_window, [left, n_fft - win_length - left],
                                                   0)
    x = self if ndim == 4 else aten.unsqueeze.default(self, 0)
    x = aten.transpose.int(x, 1, 2)        # (channel, frames, fft_size)
    mode = NORM_BY_ROOT_N if normalized else NORM_BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = aten._fft_c2c.default(x, [x.dim() - 1], mode, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = aten.narrow.default(x, -1, 0, n_fft // 2 + 1)
        x = aten._fft_c2r.default(x, [x.dim() - 1], mode, n_fft)
    frames_out = aten.mul.Tensor(x, aten.view.default(full_window, [1, 1, n_fft]))
    y = aten.unfold_backward.default(frames_out, [frames_out._shape[0], expected_length], 1,
                                     n_fft, hop_length)
    squared = aten.expand.default(aten.pow.Tensor_Scalar(full_window, 2), [1, frames, n_fft])
    envelope = aten.unfold_backward.default(squared, [1, expected_length], 1, n_fft, hop_length)

    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else expected_length
    y = aten.slice.Tensor(y, 1, start, end, 1)
    envelope = aten.slice.Tensor(envelope, 1, start, end, 1)
    lowest = aten.lt.Scalar(aten.min.default(aten.abs.default(envelope)), 1e-11)
    if aten.equal.default(lowest, aten.new_ones.default(lowest, [])):   # is_scalar_tensor_true
        fail("window overlap add min: 1\n[ CPUBoolType{} ]")
    y = aten.div.Tensor(y, envelope)
    if ndim == 3:
        y = aten.squeeze.dim(y, 0)
    if end > expected_length:
        _warn_once(_PADDED, "The length of signal is shorter than the length parameter. "
                   "Result is being padded with zeros in the tail. Please check your center "
                   "and hop_length settings.", "SpectralOps.cpp:1199")
        y = aten.constant_pad_nd.default(y, [0, end - expected_length], 0)
    return y
