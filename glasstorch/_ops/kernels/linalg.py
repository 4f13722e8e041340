"""torch.linalg (ATen's native/LinearAlgebra.cpp, BatchLinearAlgebra.cpp): norms,
decompositions, solves and inverses, trace and cross.

    _linalg_svd(A)                U, S, Vh of each matrix (LAPACK's gesdd)
    linalg_svdvals(A)             its singular values, descending
    linalg_matrix_norm(A, ord)    "fro", "nuc", 2, -2 (extreme singular values),
                                  1, -1, inf, -inf (extreme column / row abs sums)
    linalg_norm(A, ord, dim)      vector_norm, or matrix_norm for 2 dims and an ord
    LU (getrf/getrs), det/slogdet, inv (getri), solve, Cholesky (potrf/potri/potrs),
    QR (geqrf/orgqr/ormqr), eigh (syevd), eig (geev), lstsq (gels*), LDL (sytrf),
    triangular solves (trsm), matrix_exp (Pade), and the composites over them.

The LAPACK routines are numpy's own (kernels/_lapack.py); the composites
(CompositeImplicitAutograd in ATen) are written over ops, as in ATen.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core import dtype as dt
from ..._core.allocator import out_of_memory
from ..._core.layout import contiguous_format
from ..._core.tls import state as _tls
from ..._dispatcher.dispatcher import ops
from ..._tensor import is_tensor_subclass_like
from ..registry import _resize_out
from ..._core.dtype import type_meta_name
from ..structured import broadcast_shapes, empty_tensor, TensorMeta, wrap_dim
from . import _lapack, impl, kernel, meta
from ._common import _no_meta_kernel, _not_implemented, _on_meta, _scalar_t, _triggered_at
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
    without compute_uv), from LAPACK's gesdd."""
    _check_matrix_input(A, "linalg.svd")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    real = _real(A.dtype)
    *batch, m, n = A.shape
    k = min(m, n)
    S = empty_tensor(batch + [k], real, A.device)
    u_cols, v_rows = (m, n) if full_matrices else (k, k)
    if compute_uv:
        U = empty_tensor(batch + [m, u_cols], A.dtype, A.device, _column_major(batch + [m, u_cols]))
        Vh = empty_tensor(batch + [v_rows, n], A.dtype, A.device,
                          _column_major(batch + [v_rows, n]))
    else:
        U, Vh = (empty_tensor((0,), A.dtype, A.device) for _ in range(2))
    if A.device.type == "meta":
        return U, S, Vh
    _check_lapack_dtype("linalg_svd_cpu", A)
    x = _fortran(A._np())
    count = x.shape[0]
    s = np.zeros((count, k), real.numpy)
    u = np.zeros((count, u_cols, m), x.dtype).swapaxes(-1, -2) if compute_uv else None
    vh = np.zeros((count, n, v_rows), x.dtype).swapaxes(-1, -2) if compute_uv else None
    dummy = np.zeros(1, x.dtype)
    job = (b"A" if full_matrices else b"S") if compute_uv else b"N"
    info = np.zeros(count, np.int32)
    for i in range(count):
        if not (m and n):
            continue
        info[i] = _lapack.gesdd(job, x[i], s[i], u[i] if compute_uv else dummy,
                                vh[i] if compute_uv else dummy.reshape(1, 1))
    _check_errors(_tensor_of(info.reshape(batch), dt.int32, A.device), "linalg.svd", A)
    S._np()[...] = s.reshape(batch + [k])
    if compute_uv:
        if not (m and n):       # an empty side: U and Vh are identities, as LAPACK leaves them
            u[...] = np.eye(m, u_cols, dtype=x.dtype)
            vh[...] = np.eye(v_rows, n, dtype=x.dtype)
        U._np()[...] = u.reshape(batch + [m, u_cols])
        Vh._np()[...] = vh.reshape(batch + [v_rows, n])
    return U, S, Vh


@kernel("linalg_svdvals")
def linalg_svdvals(A, *, driver=None):
    """CompositeImplicitAutograd: ``_linalg_svd``'s S, with U and Vh computed only
    when a gradient may be needed (its backward uses them)."""
    return aten._linalg_svd.default(A, False, _may_need_grad(A), driver=driver)[1]


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
        if ord > 0 and t.shape[d] == 0:     # the largest of no norms: zero, not amax's error
            shape = list(t.shape)
            d = wrap_dim(d, len(shape))
            shape[d:d + 1] = [1] if keepdim else []
            return aten.zeros.default(shape, dtype=t.dtype, device=t.device)
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
    diagonal = aten.arange.start_step(0, min(rows, cols) * (cols + 1), cols + 1, dtype=dt.int64,
                                      device=grad.device)   # (a tall matrix's diagonal ends early)
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
    """CrossKernel.cpp's loop: ``a1 * b2 - a2 * b1`` in scalar_t (float16/bfloat16
    round each product and the difference)."""
    axis = wrap_dim(dim, len(self._shape))
    compute = _scalar_t(self.dtype)
    out._np()[...] = np.cross(self._np().astype(compute, copy=False),
                              other._np().astype(compute, copy=False), axis=axis)


# == torch.linalg's decompositions, solves and inverses (BatchLinearAlgebra.cpp) ===========
#
# Each kernel copies every matrix into a column-major buffer, calls the LAPACK routine
# ATen calls (numpy's own LAPACK, kernels/_lapack.py) matrix by matrix, and writes the
# results into outputs laid out as ATen lays them out (mostly batches of column-major
# matrices).  Failures are LAPACK's ``info`` codes, which ``_linalg_check_errors`` turns
# into PyTorch's errors; the ``_ex`` variants return them instead.

class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError`` (c10::LinAlgError): a matrix LAPACK could not
    factor, invert or diagonalize."""


_FLOAT_TYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)
_ASSERT_AT = ('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
              'BatchLinearAlgebra.cpp":{}, please report a bug to PyTorch. ')
# _linalg_check_errors' messages for info > 0, chosen by a word of the api name (in this order)
_INFO_MESSAGES = (
    ("inv", "The diagonal element {} is zero, the inversion could not be completed because "
            "the input matrix is singular."),
    ("solve", "The solver failed because the input matrix is singular."),
    ("cholesky", "The factorization could not be completed because the input is not "
                 "positive-definite (the leading minor of order {} is not positive-definite)."),
    ("svd", "The algorithm failed to converge because the input matrix is ill-conditioned or "
            "has too many repeated singular values (error code: {})."),
    ("eig", "The algorithm failed to converge because the input matrix is ill-conditioned or "
            "has too many repeated eigenvalues (error code: {})."),
    ("lstsq", "The least squares solution could not be computed because the input matrix does "
              "not have full rank (error code: {})."),
)


@kernel("_linalg_check_errors")
def _linalg_check_errors(info, api_name, *, is_matrix):
    """The first nonzero LAPACK ``info`` as PyTorch's error: LinAlgError for a
    singular, indefinite or non-converging input; a batch's element is named."""
    if info.device.type == "meta" or info.numel() == 0:
        return
    values = info._np().reshape(-1)
    bad = np.flatnonzero(values)
    if not len(bad):
        return
    code = int(values[bad[0]])
    where = api_name if is_matrix else f"{api_name}: (Batch element {bad[0]})"
    if code < 0:
        if "svd" in api_name and code == -4:
            raise _LinAlgError(f"{where}: The algorithm failed to converge because the input "
                               "matrix contained non-finite values.")
        raise RuntimeError(_ASSERT_AT.format(1613) + f"{where}: Argument {-code} has illegal "
                           "value. Most certainly there is a bug in the implementation calling "
                           "the backend library.")
    for word, text in _INFO_MESSAGES:
        if word in api_name:
            raise _LinAlgError(f"{where}: " + text.format(code))
    if "lu_factor" in api_name:
        raise RuntimeError(f"{where}: U[{code},{code}] is zero and using it on lu_solve would "
                           "result in a division by zero. If you still want to perform the "
                           "factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")
    raise RuntimeError(_ASSERT_AT.format(1642) + f"{where}: Unknown error code: {code}.")


def _check_errors(info, api_name, A):
    aten._linalg_check_errors.default(info, api_name, is_matrix=A.dim() == 2)


# -- input checks (LinearAlgebraUtils.h) ---------------------------------------------------

def _check_square(A, fn_name, arg="A"):
    """squareCheckInputs."""
    if len(A._shape) < 2:
        raise RuntimeError(f"{fn_name}: The input tensor {arg} must have at least 2 dimensions.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"{fn_name}: A must be batches of square matrices, but they are "
                           f"{A._shape[-2]} by {A._shape[-1]} matrices")


def _check_floating(A, fn_name, low_precision=True):
    """checkFloatingOrComplex."""
    if A.dtype.category < dt.FLOATING:
        raise RuntimeError(f"{fn_name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._short}")
    if not low_precision and A.dtype not in _FLOAT_TYPES:
        raise RuntimeError(f"{fn_name}: Low precision dtypes not supported. Got {A.dtype._short}")


def _check_lapack_dtype(kernel_name, *tensors):
    """The CPU kernels' dispatch over float, double, cfloat and cdouble only."""
    for t in tensors:
        if t.dtype not in _FLOAT_TYPES:
            raise _not_implemented(kernel_name, t.dtype)


def _check_solver(A, b_shape, left, fn_name):
    """checkInputsSolver (``b_shape``: the right-hand side's shape)."""
    _check_square(A, fn_name)
    if len(b_shape) < 2:
        raise RuntimeError(f"{fn_name}: The input tensor B must have at least 2 dimensions.")
    if (A._shape[-2] != b_shape[-2]) if left else (A._shape[-1] != b_shape[-1]):
        raise RuntimeError(f"{fn_name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A._shape[-2]}x{A._shape[-1]} "
                           f"and {b_shape[-2]}x{b_shape[-1]})")


def _check_linear_solve(b, A, name):
    """linearSolveCheckInputs (the older solvers: cholesky_solve, triangular_solve)."""
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{b.dtype._short} and A of type {A.dtype._short} instead.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A._shape[-2]} by {A._shape[-1]} matrices")
    if A._shape[-1] != b._shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{A._shape[-1]} by {A._shape[-1]} but each b matrix is "
                           f"{b._shape[-2]} by {b._shape[-1]}")


def _batch_broadcast(a_shape, b_shape):
    """The broadcast of two operands' batch dims (all but the last two)."""
    return tuple(broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2])))


def _real(dtype):
    return dtype.to_real()


# -- numpy side: column-major copies, matrix by matrix ------------------------------------

def _fortran(a, batch=None, dtype=None, out=None):
    """Every matrix of ``a`` (..., m, n), broadcast to ``batch`` dims if given, as a
    column-major copy: an array (count, m, n) whose ``[i]`` is Fortran-contiguous.
    The copy is made in ``out``'s memory when that output is laid out so (a fresh
    output of a LAPACK kernel is), so LAPACK works in place in the result."""
    *own, m, n = a.shape
    batch = tuple(own) if batch is None else tuple(batch)
    x = _fortran_buffer(batch, m, n, np.dtype(dtype or a.dtype), out)
    if tuple(own) == batch and (a.flags.c_contiguous or np.swapaxes(a, -1, -2).flags.c_contiguous) \
            and all(_lapack.column_major_into(a_i, x_i) for a_i, x_i in zip(a.reshape(x.shape), x)):
        return x
    np.swapaxes(x, -1, -2).reshape(batch + (n, m))[...] = \
        np.swapaxes(np.broadcast_to(a, batch + (m, n)), -1, -2)
    return x


def _fortran_buffer(batch, m, n, dtype, out=None):
    """An uninitialized (count, m, n) array of column-major matrices, in ``out``'s
    memory when that output is laid out so (see ``_fortran``).  Memory the
    system refuses is PyTorch's DefaultCPUAllocator error (ATen's working copy
    is a tensor), not numpy's."""
    if out is not None and out.device.type == "cpu":
        swapped = np.swapaxes(out._np(), -1, -2)
        if swapped.flags.c_contiguous and swapped.dtype == dtype and \
                swapped.shape == batch + (n, m):
            return swapped.reshape((math.prod(batch), n, m)).swapaxes(-1, -2)
    shape = (math.prod(batch), n, m)
    try:
        return np.empty(shape, dtype).swapaxes(-1, -2)
    except MemoryError:
        raise out_of_memory(math.prod(shape) * dtype.itemsize) from None


def _finish(out, x):
    """Write the matrices ``x`` into ``out`` unless they are already its memory."""
    if not np.may_share_memory(x, out._np()):
        _write(out, x.reshape(out.shape))


def _keep_triangle(x, upper):
    """Zero the other triangle of each matrix in place (NaNs there too)."""
    n = x.shape[-1]
    mask = np.tri(x.shape[-2], n, dtype=bool) if not upper else ~np.tri(x.shape[-2], n, -1, dtype=bool)
    np.copyto(x, 0, where=~mask)


def _ld(rows):
    return max(1, rows)


def _index_map(own_batch, batch):
    """For each matrix of the broadcast ``batch``, the index of the operand's own."""
    return np.broadcast_to(np.arange(math.prod(own_batch)).reshape(own_batch), batch).reshape(-1)


def _getrf(x):
    """LU with partial pivoting of each matrix of ``x`` in place: (pivots int32, info)."""
    count, m, n = x.shape
    pivots = _lapack.int_array((count, min(m, n)))
    info = np.zeros(count, np.int32)
    for i in range(count):
        info[i] = _lapack.getrf(x[i], pivots[i])
    return pivots.astype(np.int32), info


def _getrs(lu, pivots, rhs, trans, which=None):
    """Solve op(A) X = rhs in place with the LU factors (``which[i]``: the factor of
    right-hand side ``i``)."""
    piv = pivots.astype(_lapack.INT)
    for i in range(rhs.shape[0]):
        j = i if which is None else which[i]
        _lapack.getrs(trans, lu[j], piv[j], rhs[i])


def _permutations(pivots, m):
    """LAPACK's sequential row swaps as permutations: ``rows[b]`` with A[rows] = L U."""
    rows = np.broadcast_to(np.arange(m), pivots.shape[:-1] + (m,)).copy()
    count = math.prod(pivots.shape[:-1])        # (not -1: the matrices may be empty)
    flat, piv = rows.reshape(count, m), pivots.reshape(count, pivots.shape[-1])
    for b in range(flat.shape[0]):
        for i, p in enumerate(piv[b]):
            p -= 1
            if p != i:
                flat[b, i], flat[b, p] = flat[b, p], flat[b, i]
    return rows


def _permutation_matrix(rows, dtype):
    """P with A = P L U: a one in row rows[j] of column j."""
    m = rows.shape[-1]
    P = np.zeros(rows.shape + (m,), dtype)
    np.put_along_axis(P, rows[..., :, None], 1, axis=-1)
    return np.swapaxes(P, -1, -2)


def _write(out, values):
    out._np()[...] = values


def _tensor_of(values, dtype, device, stride=None):
    t = empty_tensor(values.shape, dtype, device, stride)
    if t.numel():
        t._np()[...] = values
    return t


def _lu_sign(pivots):
    """The determinant of the permutation of each pivots row: +1 or -1 (two
    ufunc loops: this runs right after an LU has flushed the caches)."""
    swaps = np.add.reduce(pivots != np.arange(1, pivots.shape[-1] + 1, dtype=pivots.dtype), -1)
    return 1 - 2 * (swaps % 2)


def _on_cpu(*tensors):
    return not _on_meta(*tensors)


# -- LU: lu_factor, lu, lu_unpack, lu_solve ---------------------------------------------

@meta("linalg_lu_factor_ex")
def linalg_lu_factor_ex_meta(A, *, pivot=True, check_errors=False):
    if len(A._shape) < 2:
        raise RuntimeError("torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A._shape)} instead")
    *batch, m, n = A._shape
    return (TensorMeta(A._shape, A.dtype, _column_major(A._shape)),
            TensorMeta(batch + [min(m, n)], dt.int32), TensorMeta(batch, dt.int32))


def _lu_factor(A, pivot, name="lu_cpu"):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _check_lapack_dtype(name, A)
    x = _fortran(A._np())
    pivots, info = _getrf(x)
    return x, pivots, info


@impl("linalg_lu_factor_ex")
def linalg_lu_factor_ex_impl(outs, A, *, pivot=True, check_errors=False):
    LU, pivots, info = outs
    x, piv, inf = _lu_factor(A, pivot)
    *batch, m, n = A._shape
    _write(LU, x.reshape(A._shape))
    _write(pivots, piv.reshape(batch + [min(m, n)]))
    _write(info, inf.reshape(batch))
    if check_errors:
        _check_errors(info, "torch.linalg.lu_factor_ex", A)


@kernel("linalg_lu_factor")
def linalg_lu_factor(A, *, pivot=True):
    LU, pivots, info = aten.linalg_lu_factor_ex.default(A, pivot=pivot)
    _check_errors(info, "torch.linalg.lu_factor", A)
    return LU, pivots


@kernel("_lu_with_info")
def _lu_with_info(self, pivot=True, check_errors=True):
    return aten.linalg_lu_factor_ex.default(self, pivot=pivot, check_errors=False)


def _unpack_meta(shape, dtype, with_p, with_lu):
    *batch, m, n = shape
    k = min(m, n)
    empty = TensorMeta((0,), dtype)
    return (TensorMeta(batch + [m, m], dtype) if with_p else empty,
            TensorMeta(batch + [m, k], dtype) if with_lu else empty,
            TensorMeta(batch + [k, n], dtype) if with_lu else empty)


def _unpack_into(outs, lu, pivots, m, n, with_p=True, with_lu=True):
    """P, L, U of ``lu`` (..., m, n) and its 1-based ``pivots``."""
    P, L, U = outs
    k = min(m, n)
    if with_lu:
        _write(L, np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype))
        _write(U, np.triu(lu[..., :k, :]))
    if with_p:
        _write(P, _permutation_matrix(_permutations(pivots, m), lu.dtype))


@meta("linalg_lu")
def linalg_lu_meta(A, *, pivot=True):
    if len(A._shape) < 2:
        raise RuntimeError("linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._shape)} instead")
    return _unpack_meta(A._shape, A.dtype, pivot, True)


@impl("linalg_lu")
def linalg_lu_impl(outs, A, *, pivot=True):
    x, pivots, _ = _lu_factor(A, pivot)
    *batch, m, n = A._shape
    _unpack_into(outs, x.reshape(A._shape), pivots.reshape(batch + [min(m, n)]), m, n)


@meta("lu_unpack")
def lu_unpack_meta(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    if len(LU_data._shape) < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data._shape)} instead")
    if unpack_pivots and LU_pivots.dtype is not dt.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    return _unpack_meta(LU_data._shape, LU_data.dtype, unpack_pivots, unpack_data)


@impl("lu_unpack")
def lu_unpack_impl(outs, LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    *_, m, n = LU_data._shape
    _unpack_into(outs, LU_data._np(), LU_pivots._np(), m, n, unpack_pivots, unpack_data)


def _lu_solve_checks(LU, pivots, B, left, name="linalg.lu_solve"):
    _check_floating(LU, "torch.linalg.lu_solve")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {LU.dtype._short} and B of type {B.dtype._short} instead")
    if pivots.dtype is not dt.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    _check_square(LU, "torch.linalg.lu_solve")
    _check_solver(LU, B._shape, left, name)
    if LU._shape[-1] != pivots._shape[-1]:
        raise RuntimeError(f"{name}: Number of pivots per batch should be same as the dimension "
                           "of the matrix")
    if tuple(LU._shape[:-1]) != tuple(pivots._shape):
        raise RuntimeError(f"{name}: Expected LU.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots._shape)} instead")


def _result_layout(shape, left):
    """A solve's result: column-major matrices for AX = B, row-major for XA = B."""
    return _column_major(shape) if left and len(shape) >= 2 else None


@meta("linalg_lu_solve")
def linalg_lu_solve_meta(LU, pivots, B, *, left=True, adjoint=False):
    _lu_solve_checks(LU, pivots, B, left)
    shape = _batch_broadcast(B._shape, LU._shape) + tuple(B._shape[-2:])
    return TensorMeta(shape, B.dtype, _result_layout(shape, left))


def _solve_with_lu(lu, pivots, lu_batch, B, batch, left, trans, out=None):
    """X with op(A) X = B (left) or X op(A) = B, A = P L U given by ``lu`` (count, n, n)
    and ``pivots``; ``trans`` is op: "N", "T" or "C".  Returns (..., rows, cols),
    solved in ``out``'s memory where it is laid out so (see ``_fortran``)."""
    b = B if left else np.swapaxes(B, -1, -2)
    if not left:        # X op(A) = B  <=>  op(A)^T X^T = B^T
        if trans == "C":
            b, trans = np.conj(b), "N"
            conj_result = True
        else:
            trans, conj_result = ("T" if trans == "N" else "N"), False
    rhs = _fortran(b, batch, out=out if left else None)
    _getrs(lu, pivots, rhs, trans, _index_map(lu_batch, batch))
    result = rhs.reshape(tuple(batch) + rhs.shape[1:])
    if not left:
        result = np.swapaxes(np.conj(result) if conj_result else result, -1, -2)
    return result


@impl("linalg_lu_solve")
def linalg_lu_solve_impl(out, LU, pivots, B, *, left=True, adjoint=False):
    _check_lapack_dtype("linalg_lu_solve", LU)
    if not out.numel():
        return
    batch = _batch_broadcast(B._shape, LU._shape)
    trans = ("C" if LU.dtype.is_complex else "T") if adjoint else "N"
    lu = _fortran(LU._np())
    _write(out, _solve_with_lu(lu, pivots._np().reshape(-1, LU._shape[-1]), LU._shape[:-2],
                               B._np(), batch, left, trans))


@kernel("lu_solve")
def lu_solve(self, LU_data, LU_pivots):
    return aten.linalg_lu_solve.default(LU_data, LU_pivots, self)


@kernel("lu_solve_out")
def lu_solve_out(self, LU_data, LU_pivots, *, out):
    return aten.linalg_lu_solve.out(LU_data, LU_pivots, self, out=out)


# -- determinants: _linalg_det, _linalg_slogdet and their composites ----------------------

@meta("_linalg_det")
def _linalg_det_meta(A):
    _check_square(A, "linalg.det")
    _check_floating(A, "linalg.det")
    return (TensorMeta(A._shape[:-2], A.dtype), TensorMeta(A._shape, A.dtype, _column_major(A._shape)),
            TensorMeta(A._shape[:-1], dt.int32))


def _det_uses_transpose(A):
    return A.is_contiguous() and not A.dtype.is_complex


def _det_factors(A, LU=None):
    """LU of each matrix of A and what the determinants need: its diagonal and the sign
    of the permutation.  ATen factors A^T instead when A is row-major and real (that
    saves a copy; det A^T = det A), so LU and pivots are those of A^T then."""
    _check_lapack_dtype("lu_cpu", A)
    a = A._np()
    x = _fortran(np.swapaxes(a, -1, -2) if _det_uses_transpose(A) else a, out=LU)
    pivots, _ = _getrf(x)
    return x, pivots, np.diagonal(x, axis1=-2, axis2=-1), _lu_sign(pivots)


@impl("_linalg_det")
def _linalg_det_impl(outs, A):
    result, LU, pivots = outs
    x, piv, diagonal, sign = _det_factors(A, LU)
    with np.errstate(over="ignore", under="ignore"):
        _write(result, (np.prod(diagonal, axis=-1) * sign).reshape(A._shape[:-2]))
    _finish(LU, x)
    _write(pivots, piv.reshape(A._shape[:-1]))


@meta("_linalg_slogdet")
def _linalg_slogdet_meta(A):
    _check_square(A, "linalg.slogdet")
    _check_floating(A, "linalg.slogdet", low_precision=False)
    batch = A._shape[:-2]
    return (TensorMeta(batch, A.dtype), TensorMeta(batch, _real(A.dtype)),
            TensorMeta(A._shape, A.dtype, _column_major(A._shape)),
            TensorMeta(A._shape[:-1], dt.int32))


@impl("_linalg_slogdet")
def _linalg_slogdet_impl(outs, A):
    sign, logabsdet, LU, pivots = outs
    x, piv, diagonal, perm_sign = _det_factors(A, LU)
    magnitude = np.abs(diagonal)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = np.where(magnitude == 0, 0, diagonal / np.where(magnitude == 0, 1, magnitude))
        _write(logabsdet, np.sum(np.log(magnitude), axis=-1).reshape(A._shape[:-2]))
    _write(sign, (np.prod(unit, axis=-1) * perm_sign).reshape(A._shape[:-2]))
    _finish(LU, x)
    _write(pivots, piv.reshape(A._shape[:-1]))


@kernel("linalg_det")
def linalg_det(A):
    return aten._linalg_det.default(A)[0]


@kernel("det")
def det(self):
    return aten.linalg_det.default(self)


@kernel("linalg_slogdet")
def linalg_slogdet(A):
    sign, logabsdet, _, _ = aten._linalg_slogdet.default(A)
    return sign, logabsdet


@kernel("slogdet")
def slogdet(self):
    return aten.linalg_slogdet.default(self)


@kernel("logdet")
def logdet(self):
    """log det: log(sign) + log|det| for complex inputs; NaN where a real det is negative."""
    _check_square(self, "logdet")
    _check_floating(self, "logdet", low_precision=False)
    sign, logabsdet = aten.linalg_slogdet.default(self)
    if self.dtype.is_complex:
        return aten.add.Tensor(aten.log.default(sign), logabsdet)
    return aten.where.ScalarSelf(aten.eq.Scalar(sign, -1), math.nan, logabsdet)


# -- inverses ---------------------------------------------------------------------------

@meta("linalg_inv_ex")
def linalg_inv_ex_meta(A, *, check_errors=False):
    _check_square(A, "linalg.inv")
    _check_floating(A, "linalg.inv", low_precision=False)
    return TensorMeta(A._shape, A.dtype, _column_major(A._shape)), TensorMeta(A._shape[:-2], dt.int32)


@impl("linalg_inv_ex")
def linalg_inv_ex_impl(outs, A, *, check_errors=False):
    """ATen's: A's LU factors (getrf), then the solve against I (_lapack.getri),
    written in the result's memory; a singular A gives that solve's infs and NaNs."""
    inverse, info = outs
    _check_lapack_dtype("lu_cpu", A)
    x = _fortran(A._np())
    pivots, inf = _getrf(x)
    result = _fortran_buffer(tuple(A._shape[:-2]), *x.shape[1:], x.dtype, out=inverse)
    piv = pivots.astype(_lapack.INT)
    for i in range(x.shape[0]):
        _lapack.getri(x[i], piv[i], result[i])
    _finish(inverse, result)
    _write(info, inf.reshape(A._shape[:-2]))
    if check_errors:
        _check_errors(info, "linalg.inv_ex", A)


@kernel("linalg_inv")
def linalg_inv(A):
    inverse, info = aten.linalg_inv_ex.default(A)
    _check_errors(info, "linalg.inv", A)
    return inverse


@kernel("inverse")
def inverse(self):
    return aten.linalg_inv.default(self)


@kernel("linalg_inv_out")
def linalg_inv_out(A, *, out):
    """Through linalg_inv_ex's out= overload, as ATen: ``out`` gets its layout."""
    info = aten.empty.memory_format([0], dtype=dt.int32, device=A.device)
    aten.linalg_inv_ex.inverse(A, inverse=out, info=info)
    _check_errors(info, "linalg.inv", A)
    return out


# -- solve ------------------------------------------------------------------------------

def _is_vector_rhs(A, B):
    """linalg_solve_is_vector_rhs: B is a vector (or a batch of vectors matching A's)."""
    return len(B._shape) == 1 or (len(A._shape) - 1 == len(B._shape)
                                  and tuple(B._shape) == tuple(A._shape[:-1]))


@meta("_linalg_solve_ex")
def _linalg_solve_ex_meta(A, B, *, left=True, check_errors=False):
    _check_floating(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {A.dtype._short} and B of type {B.dtype._short} instead")
    vector = _is_vector_rhs(A, B)
    b_shape = tuple(B._shape) + (1,) if vector else tuple(B._shape)
    _check_solver(A, b_shape, left, "linalg.solve")
    if not left and vector:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not "
                           "supported for left=False. In this case linalg.solve is equivalent "
                           "to B / A.squeeze(-1)")
    shape = _batch_broadcast(b_shape, A._shape) + b_shape[-2:]
    shape = shape[:-1] if vector else shape
    return (TensorMeta(shape, B.dtype, _result_layout(shape, left)),
            TensorMeta(A._shape, A.dtype, _column_major(A._shape)),
            TensorMeta(A._shape[:-1], dt.int32), TensorMeta(A._shape[:-2], dt.int32))


@impl("_linalg_solve_ex")
def _linalg_solve_ex_impl(outs, A, B, *, left=True, check_errors=False):
    result, LU, pivots, info = outs
    _check_lapack_dtype("lu_cpu", A)
    x = _fortran(A._np(), out=LU)
    piv, inf = _getrf(x)
    _finish(LU, x)
    _write(pivots, piv.reshape(A._shape[:-1]))
    _write(info, inf.reshape(A._shape[:-2]))
    if check_errors:
        _check_errors(info, "torch.linalg.solve_ex", A)
    if not result.numel():
        return
    vector = _is_vector_rhs(A, B)
    b = B._np()[..., None] if vector else B._np()
    batch = _batch_broadcast(b.shape, A._shape)
    if vector:
        _write(result, _solve_with_lu(x, piv, A._shape[:-2], b, batch, left, "N")[..., 0])
    else:
        _finish(result, _solve_with_lu(x, piv, A._shape[:-2], b, batch, left, "N", out=result))


@kernel("linalg_solve_ex")
def linalg_solve_ex(A, B, *, left=True, check_errors=False):
    result, _, _, info = aten._linalg_solve_ex.default(A, B, left=left, check_errors=check_errors)
    return result, info


@kernel("linalg_solve")
def linalg_solve(A, B, *, left=True):
    result, info = aten.linalg_solve_ex.default(A, B, left=left)
    _check_errors(info, "torch.linalg.solve", A)
    return result


# -- Cholesky: linalg_cholesky_ex, cholesky, cholesky_inverse, cholesky_solve ------------

def _potrf(A, upper, out=None):
    """Cholesky factor of each matrix (its other triangle zeroed; in ``out``'s memory
    when it can be) and LAPACK's info."""
    x = _fortran(A._np(), out=out)
    n = A._shape[-1]
    uplo = b"U" if upper else b"L"
    info = np.array([_lapack.call("potrf", x.dtype, uplo, n, x[i], _ld(n))
                     for i in range(x.shape[0])], np.int32)
    _keep_triangle(x, upper)
    return x, info.reshape(A._shape[:-2])


@meta("linalg_cholesky_ex")
def linalg_cholesky_ex_meta(self, *, upper=False, check_errors=False):
    _check_square(self, "linalg.cholesky")
    _check_floating(self, "linalg.cholesky")
    return TensorMeta(self._shape, self.dtype, _column_major(self._shape)), \
        TensorMeta(self._shape[:-2], dt.int32)


@impl("linalg_cholesky_ex")
def linalg_cholesky_ex_impl(outs, self, *, upper=False, check_errors=False):
    L, info = outs
    _check_lapack_dtype("cholesky_cpu", self)
    factor, inf = _potrf(self, upper, L)
    _finish(L, factor)
    _write(info, inf)
    if check_errors:
        _check_errors(info, "linalg.cholesky_ex", self)


@kernel("linalg_cholesky")
def linalg_cholesky(self, *, upper=False):
    L, info = aten.linalg_cholesky_ex.default(self, upper=upper)
    _check_errors(info, "linalg.cholesky", self)
    return L


_CHOLESKY_WARNED = []


def _cholesky_old_meta(self, upper):
    if not _CHOLESKY_WARNED:        # TORCH_WARN_ONCE
        _CHOLESKY_WARNED.append(True)
        warnings.warn(
            "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed "
            "in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
            "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
            "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
            "equivalent results for all valid (symmetric positive definite) inputs."
            + _triggered_at("BatchLinearAlgebra.cpp:1765"), UserWarning, stacklevel=4)
    if not math.prod(self._shape):
        return TensorMeta(self._shape, self.dtype)
    _check_square(self, "cholesky")
    return TensorMeta(self._shape, self.dtype, _column_major(self._shape))


@kernel("cholesky")
def cholesky(self, upper=False):
    """The older spelling (a CPU kernel in ATen: its out= overload resizes ``out``
    row-major, the functional one gives column-major matrices)."""
    spec = _cholesky_old_meta(self, upper)
    out = empty_tensor(spec.shape, spec.dtype, self.device, spec.stride)
    if self.device.type == "meta" or not out.numel():
        return out
    _check_lapack_dtype("cholesky_cpu", self)
    factor, info = _potrf(self, upper, out)
    _check_errors(_tensor_of(info, dt.int32, self.device), "cholesky", self)
    _finish(out, factor)
    return out


@meta("cholesky_inverse")
def cholesky_inverse_meta(self, upper=False):
    _check_square(self, "cholesky_inverse")
    return TensorMeta(self._shape, self.dtype, _column_major(self._shape))


@impl("cholesky_inverse")
def cholesky_inverse_impl(out, self, upper=False):
    """(L L^H)^-1 from the factor L (U^H U from U): LAPACK's potri, mirrored."""
    _check_lapack_dtype("cholesky_inverse_out_cpu", self)
    x = _fortran(self._np())
    n = self._shape[-1]
    uplo = b"U" if upper else b"L"
    info = np.array([_lapack.call("potri", x.dtype, uplo, n, x[i], _ld(n))
                     for i in range(x.shape[0])], np.int32)
    _check_errors(_tensor_of(info.reshape(self._shape[:-2]), dt.int32, self.device),
                  "cholesky_inverse", self)
    half = np.triu(x) if upper else np.tril(x)
    strict = np.triu(x, 1) if upper else np.tril(x, -1)
    _write(out, (half + np.conj(np.swapaxes(strict, -1, -2))).reshape(self._shape))


@kernel("cholesky_solve")
def cholesky_solve(self, input2, upper=False):
    """Broadcast the batches, then ``_cholesky_solve_helper`` (LAPACK's potrs)."""
    if self.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {self.dim()} "
                           "dimensions instead")
    if input2.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.dim()} "
                           "dimensions instead")
    _check_linear_solve(self, input2, "cholesky_solve")
    batch = list(_batch_broadcast(self._shape, input2._shape))
    b = aten.expand.default(self, batch + list(self._shape[-2:]))
    A = aten.expand.default(input2, batch + list(input2._shape[-2:]))
    return aten._cholesky_solve_helper.default(b, A, upper)


@meta("_cholesky_solve_helper")
def _cholesky_solve_helper_meta(self, A, upper):
    return TensorMeta(self._shape, self.dtype, _column_major(self._shape))


@impl("_cholesky_solve_helper")
def _cholesky_solve_helper_impl(out, self, A, upper):
    _check_lapack_dtype("cholesky_solve_cpu", self)
    rhs, factor = _fortran(self._np()), _fortran(A._np())
    n, k = self._shape[-2:]
    uplo = b"U" if upper else b"L"
    for i in range(rhs.shape[0]):
        _lapack.call("potrs", rhs.dtype, uplo, n, k, factor[i], _ld(n), rhs[i], _ld(n))
    _write(out, rhs.reshape(self._shape))


# -- QR and Householder products: linalg_qr, geqrf, householder_product, ormqr -----------

def _qr_mode(mode):
    """(compute Q, reduced) of linalg.qr's mode."""
    modes = {"reduced": (True, True), "complete": (True, False), "r": (False, True)}
    if mode not in modes:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return modes[mode]


@meta("linalg_qr")
def linalg_qr_meta(A, mode="reduced"):
    if len(A._shape) < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _check_floating(A, "linalg.qr")
    compute_q, reduced = _qr_mode(mode)
    *batch, m, n = A._shape
    k = min(m, n)
    q_shape = batch + [m, k if reduced else m]
    r_shape = batch + [k if reduced or not compute_q else m, n]
    Q = TensorMeta(q_shape, A.dtype, _column_major(q_shape)) if compute_q else TensorMeta((0,), A.dtype)
    return Q, TensorMeta(r_shape, A.dtype, _column_major(r_shape))


def _geqrf(x):
    """Householder QR of each matrix of ``x`` in place; the scalars tau."""
    count, m, n = x.shape
    tau = np.zeros((count, min(m, n)), x.dtype)
    for i in range(count):
        _lapack.geqrf(x[i], tau[i])
    return tau


def _householder(x, tau, columns):
    """The first ``columns`` columns of the product of the reflectors stored below the
    diagonal of each matrix of ``x`` (m, n): LAPACK's orgqr / ungqr.  A new array."""
    count, m, n = x.shape
    k = tau.shape[-1]
    q = np.zeros((count, columns, m), x.dtype).swapaxes(-1, -2)
    q[:, :, :min(n, columns)] = x[:, :, :min(n, columns)]
    for i in range(count):
        _lapack.orgqr(q[i], min(k, columns), tau[i])
    return q


@impl("linalg_qr")
def linalg_qr_impl(outs, A, mode="reduced"):
    Q, R = outs
    _check_lapack_dtype("geqrf_cpu", A)
    compute_q, reduced = _qr_mode(mode)
    *batch, m, n = A._shape
    k = min(m, n)
    x = _fortran(A._np())
    tau = _geqrf(x)
    rows = k if reduced or not compute_q else m
    _write(R, np.triu(x[:, :rows, :]).reshape(batch + [rows, n]))
    if compute_q:
        columns = k if reduced else m
        _write(Q, _householder(x, tau, columns).reshape(batch + [m, columns]))


@kernel("qr")
def qr(self, some=True):
    return aten.linalg_qr.default(self, "reduced" if some else "complete")


@kernel("qr_out")
def qr_out(self, some=True, *, Q, R):
    return aten.linalg_qr.out(self, "reduced" if some else "complete", Q=Q, R=R)


@meta("geqrf")
def geqrf_meta(self):
    if len(self._shape) < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    *batch, m, n = self._shape
    return TensorMeta(self._shape, self.dtype, _column_major(self._shape)), \
        TensorMeta(batch + [min(m, n)], self.dtype)


@impl("geqrf")
def geqrf_impl(outs, self):
    a, tau = outs
    _check_lapack_dtype("geqrf_cpu", self)
    *batch, m, n = self._shape
    x = _fortran(self._np())
    t = _geqrf(x)
    _write(a, x.reshape(self._shape))
    _write(tau, t.reshape(batch + [min(m, n)]))


def _householder_checks(input, tau, name):
    if len(input._shape) - len(tau._shape) != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {len(tau._shape)} and input.ndim is equal to "
                           f"{len(input._shape)}")
    if len(input._shape) > 2 and tuple(tau._shape[:-1]) != tuple(input._shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._shape[:-1])}")
    if tau.dtype is not input.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype._short} does not match input dtype "
                           f"{input.dtype._short}")


@meta("linalg_householder_product")
def linalg_householder_product_meta(input, tau):
    name = "torch.linalg.householder_product"
    if len(input._shape) < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if input._shape[-2] < input._shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if input._shape[-1] < (tau._shape[-1] if tau._shape else 1):
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    _householder_checks(input, tau, name)
    return TensorMeta(input._shape, input.dtype, _column_major(input._shape))


@impl("linalg_householder_product")
def linalg_householder_product_impl(out, input, tau):
    _check_lapack_dtype("orgqr_cpu", input)
    n = input._shape[-1]
    x = _fortran(input._np())
    t = tau._np().reshape(x.shape[0], tau._shape[-1])      # (batch count given: tau may be empty)
    _write(out, _householder(x, t, n).reshape(input._shape))


@kernel("orgqr")
def orgqr(self, input2):
    return aten.linalg_householder_product.default(self, input2)


@kernel("orgqr_out")
def orgqr_out(self, input2, *, out):
    return aten.linalg_householder_product.out(self, input2, out=out)


@meta("ormqr")
def ormqr_meta(self, input2, input3, left=True, transpose=False):
    name = "torch.ormqr"
    if len(self._shape) < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if len(input3._shape) < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if input3._shape[side] < input2._shape[-1]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be greater than or equal to "
                           "tau.shape[-1]")
    if input3._shape[side] != self._shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if input2._shape[-1] > self._shape[-1]:
        raise RuntimeError(f"{name}: tau.shape[-1] must be less than or equal to input.shape[-1]")
    if len(self._shape) - len(input2._shape) != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {len(input2._shape)} and input.ndim is equal to "
                           f"{len(self._shape)}")
    if len(self._shape) != len(input3._shape):
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {len(input3._shape)} and "
                           f"input.ndim is equal to {len(self._shape)}")
    if len(self._shape) > 2:
        if tuple(input2._shape[:-1]) != tuple(self._shape[:-2]):
            raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                               f"input.shape[:-2], but got {list(input2._shape[:-1])}")
        if tuple(input3._shape[:-2]) != tuple(self._shape[:-2]):
            raise RuntimeError(f"{name}: Expected batch dimensions of other to be equal to "
                               f"input.shape[:-2], but got {list(input3._shape[:-2])}")
    for other, what in ((input2, "tau"), (input3, "other")):
        if other.dtype is not self.dtype:
            raise RuntimeError(f"{name}: Expected input and {what} to have the same dtype, but "
                               f"input has dtype {self.dtype._short} and {what} has dtype "
                               f"{other.dtype._short}")
    return TensorMeta(input3._shape, input3.dtype, _column_major(input3._shape))


@impl("ormqr")
def ormqr_impl(out, self, input2, input3, left=True, transpose=False):
    """op(Q) C or C op(Q), Q the Householder product of (self, input2): LAPACK's ormqr."""
    _check_lapack_dtype("ormqr_cpu", self)
    x, c = _fortran(self._np()), _fortran(input3._np())
    tau = input2._np().reshape(x.shape[0], input2._shape[-1])
    m, n = input3._shape[-2:]
    complex_ = x.dtype.kind == "c"
    trans = (b"C" if complex_ else b"T") if transpose else b"N"
    rows = self._shape[-2]
    for i in range(c.shape[0]):
        _lapack.call("unmqr" if complex_ else "ormqr", x.dtype, b"L" if left else b"R", trans,
                     m, n, tau.shape[-1], x[i], _ld(rows), tau[i], c[i], _ld(m))
    _write(out, c.reshape(input3._shape))


# -- eigenvalues: _linalg_eigh, linalg_eig, _linalg_eigvals -----------------------------

@meta("_linalg_eigh")
def _linalg_eigh_meta(A, UPLO="L", compute_v=True):
    _check_square(A, "linalg.eigh")
    if len(UPLO) != 1 or UPLO.upper() not in ("U", "L"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    vectors = TensorMeta(A._shape, A.dtype, _column_major(A._shape)) if compute_v else \
        TensorMeta((0,), A.dtype)
    return TensorMeta(A._shape[:-1], _real(A.dtype)), vectors


@impl("_linalg_eigh")
def _linalg_eigh_impl(outs, A, UPLO="L", compute_v=True):
    values, vectors = outs
    _check_lapack_dtype("linalg_eigh_cpu", A)
    x = _fortran(A._np(), out=vectors if compute_v else None)
    n = A._shape[-1]
    w = np.zeros((x.shape[0], n), _real(A.dtype).numpy)
    info = np.array([_lapack.syevd(b"V" if compute_v else b"N", UPLO.upper().encode(), x[i],
                                   w[i])
                     for i in range(x.shape[0])], np.int32)
    _write(values, w.reshape(A._shape[:-1]))
    if compute_v:
        _finish(vectors, x)
    _check_errors(_tensor_of(info.reshape(A._shape[:-2]), dt.int32, A.device), "linalg.eigh", A)


@kernel("linalg_eigh")
def linalg_eigh(self, UPLO="L"):
    return aten._linalg_eigh.default(self, UPLO, True)


def _may_need_grad(t):
    """_may_require_fw_or_bw_grad: decompositions keep the factors their gradients use."""
    from ...autograd.variable import has_fw_grad
    return (_tls.grad_enabled and t.requires_grad) or has_fw_grad(t)


@kernel("linalg_eigvalsh")
def linalg_eigvalsh(self, UPLO="L"):
    return aten._linalg_eigh.default(self, UPLO, _may_need_grad(self))[0]


def _eig_meta(self, name):
    _check_square(self, name)
    if self.dtype.category < dt.FLOATING:
        raise RuntimeError(f"Unknown Complex ScalarType for {self.dtype._short}")
    return self.dtype.to_complex() if not self.dtype.is_complex else self.dtype


def _geev(A, vectors):
    """Eigenvalues (and right eigenvectors) of each matrix: LAPACK's geev, the real
    routine's conjugate pairs of columns made complex vectors."""
    _check_lapack_dtype("linalg_eig_out_cpu", A)
    x = _fortran(A._np())
    count, n, _ = x.shape
    complex_dtype = A.dtype.to_complex().numpy
    w = np.zeros((count, n), complex_dtype)
    v = np.zeros((count, n, n), x.dtype).swapaxes(-1, -2) if vectors else None
    dummy = np.zeros(1, x.dtype)
    job = b"V" if vectors else b"N"
    info = np.zeros(count, np.int32)
    for i in range(count):
        vr = v[i] if vectors else dummy
        if x.dtype.kind == "c":
            info[i] = _lapack.call("geev", x.dtype, b"N", job, n, x[i], _ld(n), w[i], dummy, 1,
                                   vr, _ld(n))
        else:
            wr, wi = np.zeros(n, x.dtype), np.zeros(n, x.dtype)
            info[i] = _lapack.call("geev", x.dtype, b"N", job, n, x[i], _ld(n), wr, wi, dummy, 1,
                                   vr, _ld(n))
            w[i] = wr + 1j * wi
    if vectors and x.dtype.kind != "c":
        v = _real_eigenvectors(w, v).astype(complex_dtype)
    info = _tensor_of(info.reshape(A._shape[:-2]), dt.int32, A.device)
    return w.reshape(A._shape[:-1]), (v.reshape(A._shape) if vectors else None), info


def _real_eigenvectors(w, v):
    """geev's real storage of eigenvectors: for a conjugate pair (j, j+1) the columns
    hold the real and imaginary parts of the vector of w[j]."""
    result = v.astype(np.result_type(v.dtype, np.complex64))
    for b in range(w.shape[0]):
        j = 0
        while j < w.shape[1]:
            if w[b, j].imag != 0 and j + 1 < w.shape[1]:
                re, im = v[b, :, j], v[b, :, j + 1]
                result[b, :, j], result[b, :, j + 1] = re + 1j * im, re - 1j * im
                j += 2
            else:
                j += 1
    return result


@meta("linalg_eig")
def linalg_eig_meta(self):
    complex_dtype = _eig_meta(self, "linalg.eig")
    return TensorMeta(self._shape[:-1], complex_dtype), \
        TensorMeta(self._shape, complex_dtype, _column_major(self._shape))


@impl("linalg_eig")
def linalg_eig_impl(outs, self):
    values, vectors = outs
    w, v, info = _geev(self, True)
    _check_errors(info, "linalg.eig", self)
    _write(values, w)
    _write(vectors, v)


@meta("_linalg_eigvals")
def _linalg_eigvals_meta(self):
    return TensorMeta(self._shape[:-1], _eig_meta(self, "linalg.eigvals"))


@impl("_linalg_eigvals")
def _linalg_eigvals_impl(out, self):
    w, _, info = _geev(self, False)
    _check_errors(info, "torch.linalg.eigvals", self)
    _write(out, w)


@kernel("linalg_eigvals")
def linalg_eigvals(self):
    if _may_need_grad(self):
        return aten.linalg_eig.default(self)[0]
    return aten._linalg_eigvals.default(self)


# -- LDL: linalg_ldl_factor_ex, linalg_ldl_solve ---------------------------------------

def _ldl_routine(dtype, hermitian):
    """sytrf/sytrs, or hetrf/hetrs for a complex Hermitian input."""
    return "he" if hermitian and dtype.is_complex else "sy"


@meta("linalg_ldl_factor_ex")
def linalg_ldl_factor_ex_meta(self, *, hermitian=False, check_errors=False):
    _check_square(self, "torch.linalg.ldl_factor_ex")
    _check_floating(self, "torch.linalg.ldl_factor_ex")
    return (TensorMeta(self._shape, self.dtype, _column_major(self._shape)),
            TensorMeta(self._shape[:-1], dt.int32), TensorMeta(self._shape[:-2], dt.int32))


@impl("linalg_ldl_factor_ex")
def linalg_ldl_factor_ex_impl(outs, self, *, hermitian=False, check_errors=False):
    LD, pivots, info = outs
    _check_lapack_dtype("ldl_factor_cpu", self)
    x = _fortran(self._np())
    n = self._shape[-1]
    piv = _lapack.int_array((x.shape[0], n))
    name = _ldl_routine(self.dtype, hermitian) + "trf"
    inf = np.array([_lapack.call(name, x.dtype, b"L", n, x[i], _ld(n), piv[i])
                    for i in range(x.shape[0])], np.int32)
    _write(LD, np.tril(x).reshape(self._shape))
    _write(pivots, piv.reshape(self._shape[:-1]))
    _write(info, inf.reshape(self._shape[:-2]))
    if check_errors:
        _check_errors(info, "torch.linalg.ldl_factor_ex", self)


@kernel("linalg_ldl_factor")
def linalg_ldl_factor(self, *, hermitian=False):
    LD, pivots, info = aten.linalg_ldl_factor_ex.default(self, hermitian=hermitian)
    _check_errors(info, "torch.linalg.ldl_factor", self)
    return LD, pivots


@meta("linalg_ldl_solve")
def linalg_ldl_solve_meta(LD, pivots, B, *, hermitian=False):
    name = "torch.linalg.ldl_solve"
    _check_square(LD, name)
    _check_floating(LD, name)
    if len(B._shape) < 2:
        raise RuntimeError(f"{name}: Expected B to have at least 2 dimensions, but it has "
                           f"{len(B._shape)} dimensions instead")
    if tuple(LD._shape[:-1]) != tuple(pivots._shape):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots._shape)} instead")
    if pivots.dtype.category != dt.INTEGRAL:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {pivots.dtype._short}")
    if LD.dtype is not B.dtype:
        raise RuntimeError(f"{name}: LD dtype {LD.dtype._short} does not match b dtype "
                           f"{B.dtype._short}")
    _check_linear_solve(B, LD, name)
    shape = _batch_broadcast(B._shape, LD._shape) + tuple(B._shape[-2:])
    return TensorMeta(shape, B.dtype, _column_major(shape))


@impl("linalg_ldl_solve")
def linalg_ldl_solve_impl(out, LD, pivots, B, *, hermitian=False):
    _check_lapack_dtype("ldl_solve_cpu", LD)
    if not out.numel():
        return
    batch = _batch_broadcast(B._shape, LD._shape)
    factors = _fortran(LD._np())
    piv = pivots._np().reshape(-1, LD._shape[-1]).astype(_lapack.INT)
    rhs = _fortran(B._np(), batch)
    which = _index_map(LD._shape[:-2], batch)
    n, k = B._shape[-2:]
    name = _ldl_routine(LD.dtype, hermitian) + "trs"
    for i in range(rhs.shape[0]):
        _lapack.call(name, rhs.dtype, b"L", n, k, factors[which[i]], _ld(n), piv[which[i]],
                     rhs[i], _ld(n))
    _write(out, rhs.reshape(batch + (n, k)))


# -- triangular solves: linalg_solve_triangular, triangular_solve ---------------------------

def _trsm_batch(A, B, batch, upper, left, trans, unitriangular, dtype):
    """X with op(A) X = B (left) or X op(A) = B for triangular A (BLAS trsm), computed in
    ``dtype``: (..., m, k)."""
    a, rhs = _fortran(A._np(), batch, dtype.numpy), _fortran(B._np(), batch, dtype.numpy)
    _, m, k = rhs.shape
    n = a.shape[-1]
    for i in range(rhs.shape[0]):
        _lapack.trsm(rhs.dtype, "L" if left else "R", "U" if upper else "L", trans,
                     "U" if unitriangular else "N", m, k, a[i], _ld(n), rhs[i], _ld(m))
    return rhs.reshape(tuple(batch) + (m, k))


@meta("linalg_solve_triangular")
def linalg_solve_triangular_meta(self, B, *, upper, left=True, unitriangular=False):
    _check_solver(self, B._shape, left, "linalg.solve_triangular")
    shape = _batch_broadcast(B._shape, self._shape) + tuple(B._shape[-2:])
    return TensorMeta(shape, dt.promote_types(self.dtype, B.dtype), _column_major(shape))


@impl("linalg_solve_triangular")
def linalg_solve_triangular_impl(out, self, B, *, upper, left=True, unitriangular=False):
    _check_lapack_dtype("triangular_solve_cpu", out)
    if out.numel():
        _write(out, _trsm_batch(self, B, _batch_broadcast(B._shape, self._shape), upper, left,
                                "N", unitriangular, out.dtype))


_TRIANGULAR_WARNED = []


@meta("triangular_solve")
def triangular_solve_meta(self, A, upper=True, transpose=False, unitriangular=False):
    if not _TRIANGULAR_WARNED:      # TORCH_WARN_ONCE
        _TRIANGULAR_WARNED.append(True)
        warnings.warn(
            "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
            "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular "
            "has its arguments reversed and does not return a copy of one of the inputs.\n"
            "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
            "X = torch.linalg.solve_triangular(A, B)." + _triggered_at("BatchLinearAlgebra.cpp:2273"),
            UserWarning, stacklevel=4)
    for t, name in ((self, "b"), (A, "A")):
        if len(t._shape) < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 "
                               f"dimensions, but it has {len(t._shape)} dimensions instead")
    _check_linear_solve(self, A, "triangular_solve")
    batch = _batch_broadcast(self._shape, A._shape)
    x_shape, m_shape = batch + tuple(self._shape[-2:]), batch + tuple(A._shape[-2:])
    return (TensorMeta(x_shape, self.dtype, _column_major(x_shape)),
            TensorMeta(m_shape, A.dtype, _column_major(m_shape)))


@impl("triangular_solve")
def triangular_solve_impl(outs, self, A, upper=True, transpose=False, unitriangular=False):
    solution, cloned = outs
    _check_lapack_dtype("triangular_solve_cpu", self)
    batch = _batch_broadcast(self._shape, A._shape)
    _write(cloned, np.broadcast_to(A._np(), batch + tuple(A._shape[-2:])))
    if solution.numel():
        _write(solution, _trsm_batch(A, self, batch, upper, True, "T" if transpose else "N",
                                     unitriangular, self.dtype))


# -- matrix exponential ---------------------------------------------------------------------

# Padé approximant of degree 13 with scaling and squaring (Higham, "The scaling and
# squaring method for the matrix exponential revisited", 2005): the coefficients b_0..b_13
# and the 1-norm bounds below which lower degrees are accurate to unit roundoff.
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_PADE_THETA = {np.dtype(np.float64): (1.495585217958292e-002, 2.539398330063230e-001,
                                      9.504178996162932e-001, 2.097847961257068e+000,
                                      5.371920351148152e+000),
               np.dtype(np.float32): (4.258730016922831e-001, 1.880152677804762e+000,
                                      3.925724783138660e+000)}
_PADE_LOW = {3: (120., 60., 12., 1.), 5: (30240., 15120., 3360., 420., 30., 1.),
             7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
             9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160.,
                 110880., 3960., 90., 1.)}


def _expm(a):
    """exp of one square matrix (float64 or complex128 arithmetic for float64 inputs,
    the input's precision otherwise)."""
    n = a.shape[-1]
    identity = np.eye(n, dtype=a.dtype)
    norm = np.abs(a).sum(axis=0).max() if n else 0.0
    real = np.dtype(np.float32) if a.dtype in (np.float32, np.complex64) else np.dtype(np.float64)
    thetas = _PADE_THETA[real]
    for degree, theta in zip((3, 5, 7, 9), thetas):
        if norm <= theta:
            return _pade(a, _PADE_LOW[degree], identity)
    squarings = max(0, int(math.ceil(math.log2(norm / thetas[-1])))) if norm > thetas[-1] else 0
    a = a / (2.0 ** squarings)
    result = _pade13(a, identity)
    for _ in range(squarings):
        result = result @ result
    return result


def _pade(a, b, identity):
    a2 = a @ a
    powers = [identity, a2]
    while len(powers) < len(b) // 2:
        powers.append(powers[-1] @ a2)
    u = a @ sum(b[2 * j + 1] * p for j, p in enumerate(powers))
    v = sum(b[2 * j] * p for j, p in enumerate(powers))
    return np.linalg.solve(v - u, v + u)


def _pade13(a, identity):
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * identity)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * identity
    return np.linalg.solve(v - u, v + u)


@meta("linalg_matrix_exp")
def linalg_matrix_exp_meta(self):
    _check_square(self, "linalg.matrix_exp")
    _check_floating(self, "linalg.matrix_exp")
    return TensorMeta(self._shape, self.dtype)


@impl("linalg_matrix_exp")
def linalg_matrix_exp_impl(out, self):
    compute = self.dtype.opmath if self.dtype.category == dt.FLOATING else self.dtype.numpy
    a = self._np().astype(compute, copy=False)
    n = self._shape[-1]
    flat = a.reshape(-1, n, n)
    _write(out, np.stack([_expm(m) for m in flat]).reshape(self._shape) if flat.shape[0] else a)


@kernel("matrix_exp")
def matrix_exp(self):
    return aten.linalg_matrix_exp.default(self)


@kernel("matrix_exp_backward")
def matrix_exp_backward(self, grad):
    from ...autograd.formulas.linalg import linalg_matrix_exp_differential
    return linalg_matrix_exp_differential(self, grad, True)


# -- SVD composites: linalg_svd, svd ------------------------------------------------------

def _mH(t):
    """The conjugate transpose of each matrix (``Tensor.mH``)."""
    t = aten.transpose.int(t, -2, -1)
    return aten.conj.default(t) if t.dtype.is_complex else t


@kernel("linalg_svd")
def linalg_svd(A, full_matrices=True, *, driver=None):
    return aten._linalg_svd.default(A, full_matrices, True, driver=driver)


@kernel("svd")
def svd(self, some=True, compute_uv=True):
    """The older spelling: V instead of Vh, and zero U and V without compute_uv."""
    if self.dim() < 2:
        raise RuntimeError("linalg.svd: input should have at least 2 dimensions, but has "
                           f"{self.dim()} dimensions instead")
    if compute_uv:
        U, S, Vh = aten.linalg_svd.default(self, not some)
    else:
        S = aten.linalg_svdvals.default(self)
        *batch, m, n = self.shape
        U = aten.zeros.default(batch + [m, m], dtype=self.dtype, device=self.device)
        Vh = aten.zeros.default(batch + [n, n], dtype=self.dtype, device=self.device)
    return U, S, _mH(Vh)


# -- least squares ----------------------------------------------------------------------

_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@kernel("linalg_lstsq")
def linalg_lstsq(self, b, rcond=None, *, driver=None):
    """min ||A X - B|| with LAPACK's gels (QR), gelsy (pivoted QR, the CPU default),
    gelsd or gelss (SVD); the solution is a view of LAPACK's (max(m, n), k) buffer."""
    name = "torch.linalg.lstsq"
    if _on_meta(self, b):       # ATen's linalg_lstsq.out has CPU and CUDA kernels only
        raise _no_meta_kernel("linalg_lstsq.out")
    if self.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if b.dim() < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if self.dtype is not b.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {self.dtype._short} and other's dtype {b.dtype._short}")
    dim_diff = self.dim() - b.dim()
    if not 0 <= dim_diff <= 1:
        raise RuntimeError(f"{name}: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    b_shape = tuple(b.shape) + (1,) if dim_diff else tuple(b.shape)
    if self.shape[-2] != b_shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-1)" if dim_diff else
                           f"{name}: input.size(-2) should match other.size(-2)")
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if self.dtype not in _FLOAT_TYPES:
        raise RuntimeError("This function doesn't handle types other than float and double")
    *_, m, n = self.shape
    k = b_shape[-1]
    real = _real(self.dtype)
    if rcond is None:
        rcond = float(np.finfo(real.numpy).eps) * max(m, n)
    batch = _batch_broadcast(self.shape, b_shape)
    rows = max(m, n)
    buffer_shape = batch + (rows, k)
    buffer = empty_tensor(buffer_shape, self.dtype, self.device, _column_major(buffer_shape))
    ranked, with_sv = driver != "gels", driver in ("gelsd", "gelss")
    rank = empty_tensor(batch if ranked else (0,), dt.int64, self.device)
    sv = empty_tensor(batch + (min(m, n),) if with_sv else (0,), real, self.device)
    info = np.zeros(math.prod(batch), np.int32)
    if buffer.numel():
        a = _fortran(self._np(), batch)
        rhs = np.zeros((a.shape[0], k, rows), self.dtype.numpy).swapaxes(-1, -2)
        rhs[:, :m, :] = _fortran(b._np().reshape(b_shape), batch)
        ranks = np.zeros(a.shape[0], np.int64)
        values = np.zeros((a.shape[0], min(m, n)), real.numpy)
        for i in range(a.shape[0]):
            info[i], ranks[i] = _lstsq_one(driver, a[i], rhs[i], m, n, k, rcond, values[i])
        _write(buffer, rhs.reshape(buffer_shape))
        if ranked:
            _write(rank, ranks.reshape(batch))
        if with_sv:
            _write(sv, values.reshape(batch + (min(m, n),)))
    aten._linalg_check_errors.default(_tensor_of(info.reshape(batch), dt.int32, self.device),
                                      name, is_matrix=info.size <= 1)
    solution = aten.narrow.default(buffer, -2, 0, n)
    residuals = empty_tensor((0,), real, self.device)
    if m > n and driver != "gelsy" and _full_rank(rank, n, driver):
        raw = aten.narrow.default(buffer, -2, n, m - n)
        squares = aten.real.default(aten.mul.Tensor(raw, aten.conj_physical.default(raw))) \
            if raw.is_complex() else aten.pow.Tensor_Scalar(raw, 2)
        residuals = aten.sum.dim_IntList(squares, [-2], False)
    if dim_diff:
        solution = aten.squeeze.dim(solution, -1)
    return solution, residuals, rank, sv


def _full_rank(rank, n, driver):
    """gelsd and gelss leave residuals only where every matrix has full column rank."""
    if driver not in ("gelsd", "gelss"):
        return True
    return bool(np.all(rank._np() == n))


def _lstsq_one(driver, a, b, m, n, k, rcond, singular_values):
    """One LAPACK least-squares call on column-major ``a`` (m, n) and ``b`` (max(m, n), k),
    in place: (info, rank)."""
    ldb = _ld(max(m, n))
    if driver == "gels":
        return _lapack.gels(a, b), 0
    if driver == "gelsy":
        return _lapack.gelsy(a, b, rcond)
    rank = _lapack.scalar_int()
    info = _lapack.call(driver, a.dtype, m, n, k, a, _ld(m), b, ldb, singular_values,
                        rcond, rank)
    return info, rank.value


# -- composites: pinv, matrix_rank, cond, matrix_power, multi_dot, vander, vecdot, tensor ---

def _tolerances(input, atol, rtol, name="linalg.pinv"):
    """get_atol_rtol: float64 tensors; rtol defaults to eps * max(m, n), or 0 when a
    positive atol is given."""
    options = {"dtype": dt.float64, "device": input.device}
    for tol, what in ((atol, "atol"), (rtol, "rtol")):
        if tol is not None and hasattr(tol, "_shape") and tol.dtype.is_complex:
            raise RuntimeError(f"{name}: {what} tensor of complex type is not supported.")
    if not hasattr(atol, "_shape"):
        atol = aten.scalar_tensor.default(0.0 if atol is None else float(atol), **options)
    if rtol is None:
        eps = float(np.finfo(_real(input.dtype).numpy).eps) if input.dtype.category >= dt.FLOATING \
            else 0.0
        default = aten.scalar_tensor.default(eps * max(input.shape[-1], input.shape[-2]), **options)
        rtol = aten.where.ScalarSelf(aten.gt.Scalar(atol, 0), 0.0, default)
    elif not hasattr(rtol, "_shape"):
        rtol = aten.scalar_tensor.default(float(rtol), **options)
    return atol, rtol


def _pinv_check(self):
    if self.dtype not in _FLOAT_TYPES or self.dim() < 2:
        raise RuntimeError(f"linalg.pinv({self.dtype._short}{{{list(self.shape)}}}): expected a "
                           "tensor with 2 or more dimensions of float, double, cfloat or cdouble "
                           "types")


@kernel("linalg_pinv")
def linalg_pinv(self, *, atol=None, rtol=None, hermitian=False):
    """V diag(1/s) U^H over the singular values above max(atol, rtol * s_max) (the
    eigenvalues' magnitudes for a Hermitian input)."""
    _pinv_check(self)
    atol, rtol = _tolerances(self, atol, rtol)
    if self.numel() == 0 or not hermitian:
        U, S, V = aten.svd.default(self)
        if self.numel() == 0:
            return aten.matmul.default(V * aten.unsqueeze.default(aten.reciprocal.default(S), -2),
                                       _mH(U))
        largest = aten.narrow.default(S, -1, 0, 1)
        magnitude, left = S, V
    else:
        S, U = aten.linalg_eigh.default(self)
        magnitude = aten.abs.default(S)
        largest = aten.amax.default(magnitude, [-1], True)
        left = U
    tol = aten.maximum.default(aten.unsqueeze.default(atol, -1),
                               aten.unsqueeze.default(rtol, -1) * largest)
    inverted = aten.where.self(aten.gt.Tensor(magnitude, tol), aten.reciprocal.default(S),
                               aten.zeros.default([], dtype=S.dtype, device=S.device))
    inverted = aten._to_copy.default(inverted, dtype=self.dtype)
    return aten.matmul.default(left * aten.unsqueeze.default(inverted, -2), _mH(U))


@kernel("linalg_pinv_float")
def linalg_pinv_float(self, *, atol=None, rtol=None, hermitian=False):
    _pinv_check(self)
    atol, rtol = _tolerances(self, atol, rtol)
    return aten.linalg_pinv.atol_rtol_tensor(self, atol=atol, rtol=rtol, hermitian=hermitian)


@kernel("linalg_pinv_rcond")
def linalg_pinv_rcond(self, rcond, hermitian=False):
    """NumPy's rcond: a relative tolerance."""
    return aten.linalg_pinv.atol_rtol_float(self, atol=0.0, rtol=float(rcond),
                                            hermitian=hermitian)


@kernel("linalg_pinv_rcond_tensor")
def linalg_pinv_rcond_tensor(self, rcond, hermitian=False):
    if rcond.dtype.is_complex:
        raise RuntimeError("linalg.pinv: rcond tensor of complex type is not supported.")
    zero = aten.zeros.default([], dtype=dt.float64, device=self.device)
    return aten.linalg_pinv.atol_rtol_tensor(self, atol=zero, rtol=rcond, hermitian=hermitian)


@kernel("pinverse")
def pinverse(self, rcond=1e-15):
    return aten.linalg_pinv.default(self, rcond, False)


def _rank_check(input):
    if input.dim() < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 "
                           "dimensions.")
    if input.dtype not in _FLOAT_TYPES:
        raise RuntimeError("This function doesn't handle types other than float and double")


@kernel("linalg_matrix_rank")
def linalg_matrix_rank(input, *, atol=None, rtol=None, hermitian=False):
    """How many singular values (|eigenvalues| if Hermitian) exceed max(atol, rtol * s_max)."""
    _rank_check(input)
    atol, rtol = _tolerances(input, atol, rtol, "linalg.matrix_rank")
    if input.numel() == 0:
        return aten.zeros.default(list(input.shape[:-2]), dtype=dt.int64, device=input.device)
    if hermitian:
        S = aten.abs.default(aten.linalg_eigvalsh.default(input))
        largest = aten.amax.default(S, [-1], True)
    else:
        S = aten.linalg_svdvals.default(input)
        largest = aten.narrow.default(S, -1, 0, 1)
    tol = aten.maximum.default(aten.unsqueeze.default(atol, -1),
                               aten.unsqueeze.default(rtol, -1) * largest)
    return aten.sum.dim_IntList(aten.gt.Tensor(S, tol), [-1], False)


@kernel("linalg_matrix_rank_float")
def linalg_matrix_rank_float(self, *, atol=None, rtol=None, hermitian=False):
    _rank_check(self)
    atol, rtol = _tolerances(self, atol, rtol, "linalg.matrix_rank")
    return aten.linalg_matrix_rank.atol_rtol_tensor(self, atol=atol, rtol=rtol, hermitian=hermitian)


@kernel("linalg_matrix_rank_tol")
def linalg_matrix_rank_tol(self, tol, hermitian=False):
    """The older spelling: ``tol`` an absolute tolerance."""
    return aten.linalg_matrix_rank.atol_rtol_float(self, atol=float(tol), rtol=0.0,
                                                   hermitian=hermitian)


@kernel("linalg_matrix_rank_tol_tensor")
def linalg_matrix_rank_tol_tensor(input, tol, hermitian=False):
    zero = aten.zeros.default([], dtype=dt.float64, device=input.device)
    return aten.linalg_matrix_rank.atol_rtol_tensor(input, atol=tol, rtol=zero,
                                                    hermitian=hermitian)


_COND_NORMS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


@kernel("linalg_cond")
def linalg_cond(self, p=None):
    """||A|| ||A^-1|| in norm ``p``; 2 and -2 (and None) from the singular values."""
    if p not in _COND_NORMS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p:g}" if isinstance(p, float)
                           else f"linalg.cond got an invalid norm type: {p}")
    _check_matrix_input(self, "linalg.cond")
    if p in (None, 2, -2):
        if self.numel() == 0:
            return aten.zeros.default(list(self.shape[:-2]), dtype=_real(self.dtype),
                                      device=self.device)
        S = aten.linalg_svdvals.default(self)
        high, low = aten.narrow.default(S, -1, 0, 1), aten.narrow.default(S, -1, S.shape[-1] - 1, 1)
        ratio = aten.div.Tensor(high, low) if p != -2 else aten.div.Tensor(low, high)
        return aten.squeeze.dim(ratio, -1)
    return _cond_inverse(self, p)


@kernel("linalg_cond_str")
def linalg_cond_str(self, p):
    if p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    return _cond_inverse(self, p)


def _cond_inverse(self, p):
    """||A|| ||A^-1||; a singular matrix gives inf (its inverse does not exist)."""
    _check_matrix_input(self, "linalg.cond")
    if self.shape[-1] != self.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p:g}): A must be batches of square matrices, but "
                           f"they are {self.shape[-2]} by {self.shape[-1]} matrices"
                           if isinstance(p, (int, float)) else
                           f"linalg.cond(ord={p}): A must be batches of square matrices, but "
                           f"they are {self.shape[-2]} by {self.shape[-1]} matrices")
    if self.numel() == 0:
        return aten.zeros.default(list(self.shape[:-2]), dtype=_real(self.dtype),
                                  device=self.device)
    inverse, info = aten.linalg_inv_ex.default(self)
    singular = aten.unsqueeze.default(aten.unsqueeze.default(aten.gt.Scalar(info, 0), -1), -1)
    aten.masked_fill_.Scalar(inverse, singular, math.inf)      # in place, as ATen does
    norm = aten.linalg_matrix_norm.str_ord if isinstance(p, str) else aten.linalg_matrix_norm.default
    result = aten.mul.Tensor(norm(self, p), norm(inverse, p))
    return aten.nan_to_num.default(result, math.inf, math.inf)


@kernel("linalg_matrix_power")
def linalg_matrix_power(self, n):
    """A^n by repeated squaring; A^-n is (A^-1)^n and A^0 the identity."""
    if self.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    _check_square(self, "linalg.matrix_power")
    if n == 0:      # a clone of A overwritten: the result stays in A's autograd graph
        identity = aten.eye.default(self.shape[-1], dtype=self.dtype, device=self.device)
        result = aten.clone.default(self, memory_format=contiguous_format)
        return aten.copy_.default(result, identity)
    if n == 1:
        return aten.clone.default(self)
    a = self
    if n < 0:
        a, n = aten.linalg_inv.default(self), -n
    if n == 2:
        return aten.matmul.default(a, a)
    if n == 3:
        return aten.matmul.default(aten.matmul.default(a, a), a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else aten.matmul.default(z, z)
        if bit:
            result = z if result is None else aten.matmul.default(result, z)
    return result


@kernel("matrix_power")
def matrix_power(self, n):
    return aten.linalg_matrix_power.default(self, n)


def _multi_dot_order(sizes):
    """The cheapest parenthesization of a chain with dims ``sizes`` (matrix i is
    sizes[i] x sizes[i+1]): s[i][j] splits the product of matrices i..j."""
    count = len(sizes) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


@kernel("linalg_multi_dot")
def linalg_multi_dot(tensors):
    """A chain of matrix products in the cheapest order (the first and last operand
    may be vectors)."""
    count = len(tensors)
    if count < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {count}")
    first, last = tensors[0].dim(), tensors[-1].dim()
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, count - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {type_meta_name(tensors[0].dtype)} and tensor {i} "
                               f"{type_meta_name(t.dtype)}")
    mats = list(tensors)
    if first == 1:
        mats[0] = aten.unsqueeze.default(mats[0], 0)
    if last == 1:
        mats[-1] = aten.unsqueeze.default(mats[-1], -1)
    for i in range(count - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(mats[i].shape)} and {list(mats[i + 1].shape)} cannot be "
                               "multiplied")
    if count == 2:
        result = aten.mm.default(mats[0], mats[1])
    else:
        split = _multi_dot_order([m.shape[0] for m in mats] + [mats[-1].shape[1]])

        def chain(i, j):
            if i == j:
                return mats[i]
            return aten.mm.default(chain(i, split[i][j]), chain(split[i][j] + 1, j))
        result = chain(0, count - 1)
    shape = ([] if first == 1 else [result.shape[0]]) + ([] if last == 1 else [result.shape[1]])
    return aten.view.default(result, shape)


_CHAIN_WARNED = []


@kernel("chain_matmul")
def chain_matmul(matrices):
    if not _CHAIN_WARNED:       # TORCH_WARN_ONCE
        _CHAIN_WARNED.append(True)
        warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                      "release. Use torch.linalg.multi_dot instead, which accepts a list of two "
                      "or more tensors rather than multiple parameters."
                      + _triggered_at("LinearAlgebra.cpp:1095"), UserWarning, stacklevel=4)
    if not len(matrices):
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return aten.clone.default(matrices[0])
    return aten.linalg_multi_dot.default(matrices)


@kernel("linalg_vander")
def linalg_vander(x, *, N=None):
    """x^0, x^1, ... x^(N-1) along a new last dim (cumulative products; a scalar is
    a vector of one, and integers give int64, as cumprod promotes them)."""
    if x.dtype not in (dt.float32, dt.float64, dt.complex64, dt.complex128) and \
            x.dtype.category != dt.INTEGRAL:
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, "
                           f"but got {x.dtype._short}")
    if x.dim() == 0:
        x = aten.unsqueeze.default(x, -1)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    shape = list(x.shape) + [n - 1]
    powers = aten.cumprod.default(aten.expand.default(aten.unsqueeze.default(x, -1), shape), -1)
    ones = aten.ones.default(list(x.shape) + [1], dtype=powers.dtype, device=x.device)
    return aten.cat.default([ones, powers], -1)


@kernel("linalg_vecdot")
def linalg_vecdot(x, y, *, dim=-1):
    """sum(conj(x) * y) over ``dim``."""
    if x.dtype.category < dt.FLOATING:
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype._short}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {x.dtype._short} and y of type {y.dtype._short} instead")
    if x.dtype.is_complex:
        return aten.sum.dim_IntList(aten.mul.Tensor(aten.conj.default(x), y), [dim], False)
    return aten.sum.dim_IntList(aten.mul.Tensor(x, y), [dim], False)


@kernel("linalg_tensorinv")
def linalg_tensorinv(self, ind=2):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    head, tail = list(self.shape[:ind]), list(self.shape[ind:])
    rows, cols = math.prod(head), math.prod(tail)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    matrix = aten.reshape.default(self, [rows, cols])
    return aten.reshape.default(aten.linalg_inv.default(matrix), tail + head)


@kernel("linalg_tensorsolve")
def linalg_tensorsolve(self, other, dims=None):
    ndim = self.dim()
    if dims is not None:
        order = [d for d in range(ndim) if d not in [wrap_dim(d, ndim) for d in dims]] + \
            [wrap_dim(d, ndim) for d in dims]
        self = aten.permute.default(self, order)
    result_shape = list(self.shape[other.dim():])
    rows, cols = other.numel(), math.prod(result_shape)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    solution = aten.linalg_solve.default(aten.reshape.default(self, [rows, cols]),
                                         aten.reshape.default(other, [rows]))
    return aten.reshape.default(solution, result_shape)


@kernel("linalg_diagonal")
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return aten.diagonal.default(A, offset, dim1, dim2)


@kernel("linalg_matmul")
def linalg_matmul(self, other):
    return aten.matmul.default(self, other)
