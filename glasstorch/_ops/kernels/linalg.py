"""torch.linalg (ATen's native/LinearAlgebra.cpp, BatchLinearAlgebra.cpp): matrix
norms and the singular values they need, trace and cross.

    _linalg_svd(A)                U, S, Vh of each matrix (LAPACK's gesdd through numpy)
    linalg_svdvals(A)             its singular values, descending
    linalg_matrix_norm(A, ord)    "fro", "nuc", 2, -2 (extreme singular values),
                                  1, -1, inf, -inf (extreme column / row abs sums)
    linalg_norm(A, ord, dim)      vector_norm, or matrix_norm for 2 dims and an ord

matrix_norm and norm are CompositeImplicitAutograd over ops, as in ATen.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core import dtype as dt
from ..._core.tls import state as _tls
from ..._dispatcher.dispatcher import ops
from ..._tensor import is_tensor_subclass_like
from ..registry import _resize_out
from ..structured import broadcast_shapes, empty_tensor, TensorMeta, wrap_dim
from . import impl, kernel, meta
from ._common import _not_implemented, _triggered_at
from .reduction import check_linalg_norm_dtype

__all__ = []

aten = ops.aten


def _check_matrix_input(A, fn_name, low_precision=True):
    """checkIsMatrix and checkFloatingOrComplex."""
    if A.dim() < 2:
        raise RuntimeError(f"{fn_name}: The input tensor A must have at least 2 dimensions.")
    if A.dtype.category < dt.FLOATING:
        raise RuntimeError(f"{fn_name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._short}")
    if not low_precision and A.dtype in (dt.float16, dt.bfloat16):
        raise RuntimeError(f"{fn_name}: Low precision dtypes not supported. Got "
                           f"{A.dtype._short}")


def _column_major(shape):
    """LAPACK's layout: each matrix column-major, the batch outside."""
    *batch, m, n = shape
    stride = [1, max(m, 1)]
    acc = max(m, 1) * max(n, 1)
    for size in reversed(batch):
        stride.insert(0, acc)
        acc *= max(size, 1)
    return tuple(stride)


@kernel("_linalg_svd")
def _linalg_svd(A, full_matrices=False, compute_uv=True, *, driver=None):
    """U, S, Vh of each matrix (S real and descending; U and Vh column-major, empty
    without compute_uv), from numpy's LAPACK gesdd."""
    _check_matrix_input(A, "linalg.svd", low_precision=False)
    real = dt.float32 if A.dtype is dt.complex64 else \
        dt.float64 if A.dtype is dt.complex128 else A.dtype
    *batch, m, n = A.shape
    k = min(m, n)
    S = empty_tensor(batch + [k], real, A.device)
    if compute_uv:
        u_cols, v_rows = (m, n) if full_matrices else (k, k)
        U = empty_tensor(batch + [m, u_cols], A.dtype, A.device, _column_major(batch + [m, u_cols]))
        Vh = empty_tensor(batch + [v_rows, n], A.dtype, A.device,
                          _column_major(batch + [v_rows, n]))
    else:
        U, Vh = (empty_tensor((0,), A.dtype, A.device) for _ in range(2))
    if A.device.type != "meta" and A.numel():
        if compute_uv:
            u, sv, vh = np.linalg.svd(A._np(), full_matrices=full_matrices)
            U._np()[...], Vh._np()[...] = u, vh
        else:
            sv = np.linalg.svd(A._np(), compute_uv=False)
        S._np()[...] = sv.astype(real.numpy)
    return U, S, Vh


@kernel("linalg_svdvals")
def linalg_svdvals(A, *, driver=None):
    """CompositeImplicitAutograd: ``_linalg_svd``'s S, with U and Vh computed only
    when a gradient may be needed (its backward uses them)."""
    needs_uv = _tls.grad_enabled and A.requires_grad
    return aten._linalg_svd.default(A, False, needs_uv, driver=driver)[1]


def _into(out, result):
    """A composite's out= overload: resize_output, then copy."""
    if tuple(out.shape) != tuple(result.shape):
        _resize_out(out, result.shape)
    return aten.copy_.default(out, result)


def _backshift(d0, d1, ndim):
    """create_dim_backshift_permutation: the other dims in order, then d0, d1."""
    return [d for d in range(ndim) if d not in (d0, d1)] + [d0, d1]


def _matrix_checks(A, dim, dtype, low_precision):
    _check_matrix_input(A, "linalg.matrix_norm", low_precision)
    if len(dim) != 2:
        shown = " ".join(map(str, dim))      # a std::vector, as c10 prints one
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {shown}")
    d0, d1 = wrap_dim(dim[0], A.dim()), wrap_dim(dim[1], A.dim())
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    check_linalg_norm_dtype("linalg.matrix_norm", A.dtype, dtype)
    return d0, d1


def _by_singular_values(A, d0, d1, keepdim, dtype, reduce):
    """``reduce`` over the last dim of the singular values of the (d0, d1) matrices."""
    if dtype is not None:
        A = aten._to_copy.default(A, dtype=dtype)
    permutation = _backshift(d0, d1, A.dim())
    result = reduce(aten.linalg_svdvals.default(aten.permute.default(A, permutation)))
    if keepdim:
        reverse = [permutation.index(d) for d in range(A.dim())]
        result = aten.permute.default(aten.unsqueeze.default(result, -1), reverse)
    return result


@kernel("linalg_matrix_norm")
def linalg_matrix_norm(self, ord, dim=(-2, -1), keepdim=False, *, dtype=None):
    ord = float(ord)
    if abs(ord) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    d0, d1 = _matrix_checks(self, list(dim), dtype, low_precision=abs(ord) != 2.0)

    def extreme(t, d):
        return aten.amax.default(t, [d], keepdim) if ord > 0 else aten.amin.default(t, [d], keepdim)
    if abs(ord) == 2.0:
        return _by_singular_values(self, d0, d1, keepdim, dtype, lambda s: extreme(s, -1))
    if ord in (math.inf, -math.inf):      # the 1-norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    return extreme(aten.linalg_vector_norm.default(self, 1.0, [d0], keepdim, dtype=dtype), d1)


@kernel("linalg_matrix_norm_str")
def linalg_matrix_norm_str(self, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    d0, d1 = _matrix_checks(self, list(dim), dtype, low_precision=ord != "nuc")
    if ord == "fro":
        return aten.linalg_vector_norm.default(self, 2, [d0, d1], keepdim, dtype=dtype)
    return _by_singular_values(self, d0, d1, keepdim, dtype,
                               lambda s: aten.sum.dim_IntList(s, [-1], keepdim))


def _norm_dim_check(dim):
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got [{', '.join(map(str, dim))}]")


def _ord_needs_matrix_input(self):
    if self.dim() not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {self.dim()}D.")


@kernel("linalg_norm")
def linalg_norm(self, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A matrix norm for an ord and two dims (given, or those of a 2-d input),
    else a vector norm (ord None: the 2-norm, which is also Frobenius)."""
    _norm_dim_check(dim)
    if dim is None and ord is not None:
        _ord_needs_matrix_input(self)
    if ord is not None and (len(dim) == 2 if dim is not None else self.dim() == 2):
        return aten.linalg_matrix_norm.default(self, ord, list(dim or (0, 1)), keepdim,
                                               dtype=dtype)
    return aten.linalg_vector_norm.default(self, 2 if ord is None else ord, dim, keepdim,
                                           dtype=dtype)


@kernel("linalg_norm_str")
def linalg_norm_str(self, ord, dim=None, keepdim=False, *, dtype=None):
    _norm_dim_check(dim)
    if dim is None:
        _ord_needs_matrix_input(self)
    return aten.linalg_matrix_norm.str_ord(self, ord, list(dim or (0, 1)), keepdim, dtype=dtype)


def _out_kernel(name, functional):
    @kernel(name)
    def out_variant(self, *args, out, **kwargs):
        return _into(out, functional(self, *args, **kwargs))


for _name, _fn in (("linalg_matrix_norm_out", linalg_matrix_norm),
                   ("linalg_matrix_norm_str_out", linalg_matrix_norm_str),
                   ("linalg_norm_out", linalg_norm), ("linalg_norm_str_out", linalg_norm_str)):
    _out_kernel(_name, _fn)


# -- trace ---------------------------------------------------------------------------------

@meta("trace")
def trace_meta(self):
    if len(self._shape) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{len(self._shape)}")
    if self.dtype is dt.bool_:
        raise _not_implemented("trace", self.dtype)
    return TensorMeta((), dt.int64 if self.dtype.category == dt.INTEGRAL else self.dtype)


@impl("trace")
def trace_impl(out, self):
    d = np.diagonal(self._np())
    out._np()[...] = d.sum(dtype=out.dtype.opmath)


@kernel("trace_backward")
def trace_backward(grad, sizes):
    """The gradient on the diagonal of a zero matrix of ``sizes``."""
    if len(sizes) != 2:
        raise RuntimeError("expected matrix input")
    rows, cols = sizes
    flat = aten.zeros.default([rows * cols], dtype=grad.dtype, device=grad.device)
    diagonal = aten.arange.start_step(0, rows * cols, cols + 1, dtype=dt.int64,
                                      device=grad.device)
    if is_tensor_subclass_like(grad):                       # (a batched grad: out of place)
        flat = aten.index_fill.int_Tensor(flat, 0, diagonal, grad)
    else:
        aten.index_fill_.int_Tensor(flat, 0, diagonal, grad)
    return aten.view.default(flat, list(sizes))


# -- cross (Cross.cpp) ---------------------------------------------------------------------

_CROSS_WARNED = []


@kernel("cross")
def cross(self, other, dim=None):
    if dim is None:
        if not _CROSS_WARNED:   # TORCH_WARN_ONCE
            _CROSS_WARNED.append(True)
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                          "Please either pass the dim explicitly or simply use "
                          "torch.linalg.cross.\nThe default value of dim will change to agree "
                          "with that of linalg.cross in a future release."
                          + _triggered_at("Cross.cpp:63"), UserWarning, stacklevel=4)
        if 3 not in self._shape:
            raise RuntimeError("no dimension of size 3 in input")
        dim = self._shape.index(3)
    return aten.linalg_cross.default(self, other, dim=dim)


@meta("linalg_cross")
def linalg_cross_meta(self, other, *, dim=-1):
    if len(self._shape) != len(other._shape):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    ndim = len(self._shape)
    wrapped = wrap_dim(dim, ndim)
    if self._shape[wrapped] != 3 or other._shape[wrapped] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self._shape[wrapped]} and {other._shape[wrapped]}")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype._short} but found "
                           f"{other.dtype._short}")
    return TensorMeta(broadcast_shapes(self._shape, other._shape), self.dtype)


@impl("linalg_cross")
def linalg_cross_impl(out, self, other, *, dim=-1):
    axis = wrap_dim(dim, len(self._shape))
    compute = self.dtype.opmath
    out._np()[...] = np.cross(self._np().astype(compute, copy=False),
                              other._np().astype(compute, copy=False), axis=axis)
