"""Matrix products (ATen's Blas.cpp and LinearAlgebra.cpp's products, in small).

Computing ops are structured (meta rule + impl):

    mm(a, b)                 out[i, j]    = sum_k a[i, k] b[k, j]
    bmm(a, b)                out[n, i, j] = sum_k a[n, i, k] b[n, k, j]
    addmm(s, a, b)           out = beta * s + alpha * (a @ b)      (s broadcast to out)
    baddbmm(s, a, b)         the same, batched
    addmv(s, m, v) / mv      out = beta * s + alpha * (m @ v)
    dot(a, b) / vdot(a, b)   sum_k a[k] b[k]   (vdot conjugates a)

The bodies hand the work to numpy's BLAS (``np.matmul(a, b, out=o)``; large 2-d
products split by rows over the intra-op threads, ``native.matmul``) on the
tensors' own strided views: float32/float64/complex go straight through;
float16/bfloat16 compute in float32 (their opmath type) and round once when
written, as PyTorch's CPU kernels do.

Composite ops (CompositeImplicitAutograd) are decompositions into other ops,
called through the dispatcher so a TorchDispatchMode sees what PyTorch shows:

    matmul   -> dot / mv / mm / bmm, with PyTorch's folding and broadcasting
    linear   -> t + addmm (2-D input with bias) | view + t + addmm + view | matmul (+ add)
    outer    -> view + mul

kron and tensordot (CompositeImplicitAutograd over views and products) are
at the end.
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import contiguous_format
from ..._dispatcher.dispatcher import ops
from ..structured import broadcast_shapes, result_type, sets_own_output, TensorMeta, wrap_dim
from . import impl, kernel, meta, native
from ._common import _scalar_t
from ._inner import inner, observed

aten = ops.aten




def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def expand_check(self, target, what=None):
    """``expand_size(self, target)``'s errors, raised as PyTorch's expand raises them."""
    shape = tuple(self._shape)
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand(torch.{_legacy_type(self.dtype)}{{{_sizes(shape)}}}, "
            f"size={_sizes(target)}): the number of sizes provided ({len(target)}) must be "
            f"greater or equal to the number of dimensions in the tensor ({len(shape)})")
    offset = len(target) - len(shape)
    for i, n in enumerate(shape):
        t = target[offset + i]
        if n != t and n != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({t}) must match the existing size ({n}) at "
                f"non-singleton dimension {offset + i}.  Target sizes: {_sizes(target)}.  "
                f"Tensor sizes: {_sizes(shape)}")


def _legacy_type(d) -> str:
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
             "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
             "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    return names.get(d.name, d.name) + "Tensor"


def not_implemented(kernel_name, d):
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{d._short}\'')


# -- numpy helpers -------------------------------------------------------------------

def _operand(t, compute):
    """The tensor's array in the compute type (a view when it already is)."""
    a = t._np()
    return a if a.dtype == compute else a.astype(compute)


def _scalar(value, compute):
    if compute.kind in "iub":
        if isinstance(value, complex):
            value = value.real
        return compute.type(int(value))
    return compute.type(value)


def _matmul(a, b, out):
    """``out = a @ b``: 2-d products split over the intra-op threads (native.matmul);
    a product over k = 1 is an outer product, one broadcast multiply (numpy's
    matmul would run its unblocked loop for such stacked matrices)."""
    if a.ndim == 2 and b.ndim == 2 and out.ndim == 2:
        native.matmul(a, b, out)
    elif a.shape[-1] == 1 and a.ndim >= 2 and b.ndim >= 2:
        native.outer_products(a, b, out)
    else:
        np.matmul(a, b, out=out)


def _matmul_into(out_arr, a, b, compute):
    """out = a @ b, computing in ``compute`` and rounding once on write."""
    if out_arr.dtype == compute:
        _matmul(a, b, out_arr)
    else:
        np.copyto(out_arr, np.matmul(a, b), casting="unsafe")


def _gemm_like(out, self, a, b, beta, alpha, kernel_name):
    """out = beta * self + alpha * (a @ b), self broadcast to out's shape."""
    d = out.dtype
    if d is dt.bool_:
        raise not_implemented(kernel_name, d)
    compute = d.opmath
    o = out._np()
    if out.numel() == 0:
        return
    x, y = _operand(a, compute), _operand(b, compute)
    beta_zero = beta == 0
    inplace = self is out
    if (beta_zero or not inplace) and alpha == 1 and o.dtype == compute:
        _matmul(x, y, o)
        prod = o
    else:
        prod = np.matmul(x, y)
        if alpha != 1:
            prod = np.multiply(prod, _scalar(alpha, compute), dtype=compute)
    if beta_zero:
        if prod is not o:
            np.copyto(o, prod, casting="unsafe")
        return
    s = _operand(self, compute)
    if beta != 1:
        s = np.multiply(s, _scalar(beta, compute), dtype=compute)
    if prod is o:
        np.add(o, s, out=o, casting="unsafe")
    elif o.dtype == compute:
        np.add(prod, s, out=o)
    else:
        np.copyto(o, np.add(prod, s, dtype=compute), casting="unsafe")


# -- mm / bmm / addmm / baddbmm ----------------------------------------------------------

def _blas_operands(result, m1, m2):
    """ATen's addmm_impl_cpu_ choosing a BLAS layout: the result is written as
    it is (or transposed, swapping the operands); an operand BLAS can read as
    it is gets ``resolve_conj``, a transposed one is passed untouched, any
    other is copied contiguous (``clone``).  Returns the operands to multiply
    (the same values; numpy reads any layout, so only an observer needs this)."""
    if result.numel() == 0:
        return m1, m2
    (rows, cols), (rs0, rs1) = result._shape, result._stride
    transpose_c = not (rs0 == 1 and (cols == 1 or rs1 >= max(1, rows))) and \
        rs1 == 1 and (rows == 1 or rs0 >= max(1, cols))
    inner.resolve_conj(result)
    first, second = (m2, m1) if transpose_c else (m1, m2)
    m, n = (cols, rows) if transpose_c else (rows, cols)
    k = first._shape[0 if transpose_c else 1]
    lead, other = (1, 0) if transpose_c else (0, 1)

    def blas_operand(t, as_is_ld, transposed_ld):
        stride = t._stride
        if stride[lead] == 1 and stride[other] >= max(1, as_is_ld):
            return inner.resolve_conj(t)
        if stride[other] == 1 and stride[lead] >= max(1, transposed_ld):
            return t
        return inner.clone(t, memory_format=contiguous_format)

    first, second = blas_operand(first, m, k), blas_operand(second, k, n)
    return (second, first) if transpose_c else (first, second)


@meta("mm")
def mm_meta(self, mat2):
    if len(self._shape) != 2:
        raise RuntimeError("self must be a matrix")
    if len(mat2._shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.dtype is not mat2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{dt.type_meta_name(self.dtype)} != {dt.type_meta_name(mat2.dtype)}")
    (m, k1), (k2, n) = self._shape, mat2._shape
    if k1 != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k1} and {k2}x{n})")
    return TensorMeta((m, n), self.dtype, None, self.device)


@impl("mm")
def mm_impl(out, self, mat2):
    if observed():
        self, mat2 = _blas_operands(out, self, mat2)
    d = out.dtype
    compute = d.opmath
    if compute == d.numpy:
        if d is dt.bool_:
            raise not_implemented("addmm_impl_cpu_", d)
        _matmul(self._np(), mat2._np(), out._np())
    else:
        np.copyto(out._np(), np.matmul(self._np().astype(compute), mat2._np().astype(compute)),
                  casting="unsafe")


def _addmm_checks(self, mat1, mat2):
    if self.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {self.dtype._short} "
                           f"and {mat2.dtype._short}")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {mat1.dtype._short} "
                           f"and {mat2.dtype._short}")
    if len(mat1._shape) != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {len(mat1._shape)}-D tensor")
    if len(mat2._shape) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {len(mat2._shape)}-D tensor")
    (m, k1), (k2, n) = mat1._shape, mat2._shape
    if k1 != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k1} and {k2}x{n})")
    return m, n


@meta("addmm")
@sets_own_output
def addmm_meta(self, mat1, mat2, beta=1, alpha=1):
    m, n = _addmm_checks(self, mat1, mat2)
    expand_check(self, (m, n))
    return TensorMeta((m, n), mat1.dtype)


@impl("addmm")
def addmm_impl(out, self, mat1, mat2, beta=1, alpha=1):
    if observed():
        # ATen's addmm_out_cpu: result = self expanded (copy_), then the product
        # added in place; the numpy gemm reads ``beta * self`` directly instead
        if self is not out:
            if self._shape != out._shape:
                self = inner.expand(self, list(out._shape))
            if beta != 0:
                inner.copy_(out, self)
        mat1, mat2 = _blas_operands(out, mat1, mat2)
    _gemm_like(out, self, mat1, mat2, beta, alpha, "addmm_impl_cpu_")


def _bmm_checks(batch1, batch2):
    if len(batch1._shape) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(batch2._shape) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    bs, rows, contraction = batch1._shape
    b2, k, cols = batch2._shape
    if b2 != bs or k != contraction:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bs}, {contraction}] but got: [{b2}, {k}].")
    return bs, rows, cols


def _bmm_dtype_check(batch1, batch2):
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {batch1.dtype._short} but found "
                           f"{batch2.dtype._short}")


@meta("bmm")
def bmm_meta(self, mat2):
    shape = _bmm_checks(self, mat2)
    _bmm_dtype_check(self, mat2)
    return TensorMeta(shape, mat2.dtype)


def _complex_product(a, b):
    """c10::complex's a * b, (ac - bd) + (ad + bc)i with each product and sum rounded
    on its own (numpy's complex multiply may fuse them, depending on the CPU)."""
    out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)), dtype=np.result_type(a, b))
    out.real = a.real * b.real - a.imag * b.imag
    out.imag = a.real * b.imag + a.imag * b.real
    return out


def _naive_bmm_applies(out, batch1, batch2) -> bool:
    """ATen's bmm_out_or_baddbmm_ multiplies small matrices (contraction x rows x
    columns under 400) with its own loop (baddbmm_cpu_kernel), not BLAS; its order
    of operations decides the float and complex results' last bits."""
    rows, contraction = batch1._shape[1:]
    return out.dtype in (dt.float32, dt.float64, dt.complex64, dt.complex128) and \
        contraction * rows * batch2._shape[2] < 400


def _naive_bmm(x, y):
    """baddbmm_cpu_kernel's sums: each element accumulated over k in order from zero."""
    acc = np.zeros(x.shape[:-1] + y.shape[-1:], dtype=x.dtype)
    for k in range(x.shape[-1]):
        a, b = x[..., k:k + 1], y[..., k:k + 1, :]
        acc += _complex_product(a, b) if acc.dtype.kind == "c" else a * b
    return acc


@impl("bmm")
def bmm_impl(out, self, mat2):
    if observed():   # ATen's bmm_out_or_baddbmm_ resolves both operands' conjugation
        self, mat2 = inner.resolve_conj(self), inner.resolve_conj(mat2)
    d = out.dtype
    if d is dt.bool_:
        raise not_implemented("bmm", d)
    if out.numel() and _naive_bmm_applies(out, self, mat2):
        np.copyto(out._np(), _naive_bmm(self._np(), mat2._np()))
    elif out.numel():
        _matmul_into(out._np(), _operand(self, d.opmath), _operand(mat2, d.opmath), d.opmath)


@meta("baddbmm")
@sets_own_output
def baddbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    if len(batch1._shape) == 3 and len(batch2._shape) == 3:
        expand_check(self, (batch1._shape[0], batch1._shape[1], batch2._shape[2]))
    if self.dtype is not batch1.dtype or self.dtype is not batch2.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {dt.type_meta_name(self.dtype)}, "
                           f"batch1: {dt.type_meta_name(batch1.dtype)}, batch2: {dt.type_meta_name(batch2.dtype)}")
    shape = _bmm_checks(batch1, batch2)
    return TensorMeta(shape, batch2.dtype)


@impl("baddbmm")
def baddbmm_impl(out, self, batch1, batch2, beta=1, alpha=1):
    if not (out.numel() and _naive_bmm_applies(out, batch1, batch2)):
        _gemm_like(out, self, batch1, batch2, beta, alpha, "baddbmm_with_gemm")
        return
    # baddbmm_cpu_kernel: alpha * sum, plus self * beta unless beta is zero
    compute = out.dtype.opmath
    multiply = _complex_product if compute.kind == "c" else np.multiply
    acc = _naive_bmm(batch1._np(), batch2._np())
    result = multiply(_scalar(alpha, compute), acc)
    if beta != 0:
        result = multiply(np.broadcast_to(self._np(), out._shape), _scalar(beta, compute)) + result
    np.copyto(out._np(), result)


# -- matrix @ vector, vector . vector -------------------------------------------------------

def _addmv_checks(self_dim, self_numel, self_size0, mat, vec):
    if not (len(mat._shape) == 2 and len(vec._shape) == 1 and self_dim <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {self_dim}, "
                           f"{len(mat._shape)}, {len(vec._shape)}")
    if not (mat._shape[1] == vec._shape[0] and (mat._shape[0] == self_numel or self_numel == 1)):
        raise RuntimeError(f"size mismatch, got input ({self_size0}), mat ({mat._shape[0]}x"
                           f"{mat._shape[1]}), vec ({vec._shape[0]})")


def _addmv_dtype_check(self_dtype, mat, vec):
    if not (self_dtype is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{self_dtype._short}, {mat.dtype._short}, and {vec.dtype._short}")


@meta("mv")
def mv_meta(self, vec):
    rows = self._shape[0] if self._shape else 1
    _addmv_checks(1, rows, rows, self, vec)
    _addmv_dtype_check(vec.dtype, self, vec)
    return TensorMeta((rows,), vec.dtype)


@impl("mv")
def mv_impl(out, self, vec):
    d = out.dtype
    if d is dt.bool_:
        raise not_implemented("addmv_impl_cpu", d)
    if out.numel():
        _matmul_into(out._np(), _operand(self, d.opmath), _operand(vec, d.opmath), d.opmath)


@meta("addmv")
@sets_own_output
def addmv_meta(self, mat, vec, beta=1, alpha=1):
    numel = self.numel()
    size0 = self._shape[0] if self._shape else 1
    _addmv_checks(len(self._shape), numel, size0, mat, vec)
    _addmv_dtype_check(self.dtype, mat, vec)
    return TensorMeta((mat._shape[0],), vec.dtype)


@impl("addmv")
def addmv_impl(out, self, mat, vec, beta=1, alpha=1):
    _gemm_like(out, self, mat, vec, beta, alpha, "addmv_impl_cpu")


def _dot_checks(name, self, other):
    if len(self._shape) != 1 or len(other._shape) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(self._shape)}D and "
                           f"{len(other._shape)}D tensors")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found "
                           f"{self.dtype._short} and {other.dtype._short}")
    n1, n2 = self._shape[0], other._shape[0]
    if n1 != n2:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n1}] and src [{n2}] to "
                           f"have the same number of elements, but got {n1} and {n2} elements "
                           "respectively")
    return TensorMeta((), self.dtype)


def _dot_op(name, np_fn):
    """dot and vdot: 1-d x 1-d -> 0-d, computed in opmath."""
    meta(name)(lambda self, other: _dot_checks(name, self, other))

    @impl(name)
    def body(out, self, other):
        d = out.dtype
        if d is dt.bool_:
            raise not_implemented(name, d)
        compute = d.opmath
        out._np()[()] = np_fn(_operand(self, compute), _operand(other, compute))
    body.__name__ = f"{name}_impl"


_dot_op("dot", np.dot)
_dot_op("vdot", np.vdot)


# -- einsum, decomposed as PyTorch decomposes it -----------------------------------------
#
# PyTorch's einsum is CompositeImplicitAutograd: autograd records the ops it
# decomposes into (permute, diagonal, unsqueeze, sum, mul, bmm, view), so its
# grad_fn is e.g. ViewBackward0.  This kernel reproduces that decomposition
# (ATen's Linear.cpp) for native_functions.yaml's einsum entry to use as
# ``dispatch: {CompositeImplicitAutograd: einsum}``.

_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS


def _subscript(label: str) -> int:
    """[A-Z] -> 0..25, [a-z] -> 26..51: the order implicit outputs and
    contraction dims are laid out in."""
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(s: int) -> str:
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def _einsum_operand_labels(lhs, num_ops):
    op_labels = [[] for _ in range(num_ops)]
    current, ellipsis_seen, i = 0, False, 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == ".":
            if ellipsis_seen:
                raise RuntimeError(f"einsum(): found '.' for operand {current} for which an "
                                   "ellipsis was already found")
            if lhs[i + 1:i + 3] != "..":
                raise RuntimeError(f"einsum(): found '.' for operand {current} that is not part "
                                   "of any ellipsis")
            op_labels[current].append(_ELLIPSIS)
            ellipsis_seen = True
            i += 2
        elif ch == ",":
            current += 1
            if current >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                                   "equation")
            ellipsis_seen = False
        elif ch != " ":
            if not (ch.isascii() and ch.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            op_labels[current].append(_subscript(ch))
        i += 1
    if current != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def _einsum_output_layout(equation, lhs, arrow, label_count, ell_num_dim):
    """Where each label goes in the aligned shape (output dims first, then the
    dims to contract): (label_perm_index, out_num_dim, perm_index, ell_index)."""
    label_perm_index = [-1] * _ELLIPSIS
    perm_index = ell_index = 0
    ell_in_output = False
    if arrow < 0:        # implicit output: the ellipsis, then labels seen once, sorted
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(_ELLIPSIS):
            if label_count[s] == 1:
                label_perm_index[s] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            ch = rhs[i]
            if ch == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                       "already found")
                if rhs[i + 1:i + 3] != "..":
                    raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                       "ellipsis (...)")
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
                i += 2
            elif ch != " ":
                if not (ch.isascii() and ch.isalpha()):
                    raise RuntimeError(f"einsum(): invalid subscript given at index "
                                       f"{len(lhs) + 2 + i} in the equation string, subscripts "
                                       "must be in [a-zA-Z]")
                s = _subscript(ch)
                if not (label_count[s] > 0 and label_perm_index[s] == -1):
                    raise RuntimeError(f"einsum(): output subscript {ch}" + (
                        " appears more than once in the output" if label_perm_index[s] > -1
                        else " does not appear in the equation for any input operand"))
                label_perm_index[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(_ELLIPSIS):
        if label_count[s] > 0 and label_perm_index[s] == -1:
            label_perm_index[s] = perm_index
            perm_index += 1
    return label_perm_index, out_num_dim, perm_index, ell_index


def _sumproduct_pair(left, right, sum_dims):
    """(left * right).sum(sum_dims, keepdim=True) by permuting both to
    (batch, rows, summed) x (batch, summed, cols) and one bmm."""
    if not sum_dims:
        return aten.mul.Tensor(left, right)
    summed = set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.dim()):
        sl, sr = left._shape[i] != 1, right._shape[i] != 1
        if i in summed:
            if sl and sr:
                if left._shape[i] != right._shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left._shape[i]
            elif sl:
                left = aten.sum.dim_IntList(left, [i], True)
            elif sr:
                right = aten.sum.dim_IntList(right, [i], True)
        elif sl and sr:
            if left._shape[i] != right._shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left._shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left._shape[i]
        else:
            ro.append(i)
            ro_size *= right._shape[i]
    out_size = ([left._shape[d] for d in lro] + [left._shape[d] for d in lo] +
                [1] * len(sum_dims) + [right._shape[d] for d in ro])
    out_permutation = [0] * len(out_size)
    for position, d in enumerate(lro + lo + list(sum_dims) + ro):
        out_permutation[d] = position
    left = aten.reshape.default(aten.permute.default(left, lro + lo + list(sum_dims) + ro),
                                [lro_size, lo_size, sum_size])
    right = aten.reshape.default(aten.permute.default(right, lro + list(sum_dims) + ro + lo),
                                 [lro_size, sum_size, ro_size])
    result = aten.view.default(aten.bmm.default(left, right), out_size)
    return aten.permute.default(result, out_permutation)


@kernel("einsum")
def einsum(equation, tensors, path=None):
    """Parse the equation; align every operand to (output dims, contracted
    dims) with diagonal (repeated labels), unsqueeze (missing labels) and
    permute; contract operands pairwise (left to right, or in ``path``'s order),
    summing a dim as soon as no other operand still has it; drop the
    contracted dims at the end."""
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(tensors)
    if path is not None:
        expected = 1 if num_ops == 1 else (num_ops - 1) * 2
        if len(path) != expected:
            raise RuntimeError(f"einsum(): expected contraction path given in path parameter to "
                               f"have size {expected} but got {len(path)}")
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _einsum_operand_labels(lhs, num_ops)

    label_count = [0] * _ELLIPSIS
    ell_num_dim = 0
    for i, (operand, labels) in enumerate(zip(tensors, op_labels)):
        ndims = operand.dim()
        nlabels = sum(1 for s in labels if s != _ELLIPSIS)
        has_ellipsis = _ELLIPSIS in labels
        for s in labels:
            if s == _ELLIPSIS:
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[s] += 1
        if (nlabels > ndims) if has_ellipsis else (nlabels != ndims):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) " +
                ("is more than the number of dimensions (" if has_ellipsis
                 else "does not match the number of dimensions (") +
                f"{ndims}) for operand {i}" +
                ("" if has_ellipsis else " and no ellipsis was given"))
    label_perm_index, out_num_dim, perm_index, ell_index = _einsum_output_layout(
        equation, lhs, arrow, label_count, ell_num_dim)

    label_size = [1] * _ELLIPSIS
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, (op, labels) in enumerate(zip(tensors, op_labels)):
        permutation = [-1] * perm_index
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                covered = tensors[i].dim() - (len(labels) - 1)
                for j in range(ell_num_dim - covered, ell_num_dim):
                    size = op._shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has "
                                f"size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                size = op._shape[dim]
                if size != 1:
                    if label_size[s] not in (1, size):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {i} "
                            f"which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:                                   # a repeated label: take the diagonal
                prev = permutation[label_perm_index[s]]
                if op._shape[dim] != op._shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the "
                        f"sizes don't match, {op._shape[dim]} != {op._shape[prev]}")
                op = aten.movedim.int(aten.diagonal.default(op, 0, prev, dim), -1, prev)
        for k, value in enumerate(permutation):
            if value == -1:
                op = aten.unsqueeze.default(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(aten.permute.default(op, permutation))

    steps = iter(path if path is not None else ())
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = sorted((next(steps), next(steps)))
            if i == j or i < 0 or j >= len(ops):
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}) " + (
                    "cannot contract an operand with itself" if i == j
                    else "operand index is out of bounds"))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_dims, b_dims = [], [], []
        for d in range(out_num_dim, perm_index):
            if a._shape[d] != 1 and b._shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a._shape[d] != 1:
                    a_dims.append(d)
                    dim_counts[d] = 0
                elif b._shape[d] != 1:
                    b_dims.append(d)
                    dim_counts[d] = 0
        if a_dims:
            a = aten.sum.dim_IntList(a, a_dims, True)
        if b_dims:
            b = aten.sum.dim_IntList(b, b_dims, True)
        result = _sumproduct_pair(a, b, sum_dims)
        if path is not None:
            ops.append(result)
        else:
            ops.insert(0, result)

    result = ops[0]
    if perm_index > out_num_dim:
        if num_ops > 1:     # every contracted dim is already 1: view them away
            return aten.view.default(result, list(result._shape[:out_num_dim]))
        return aten.sum.dim_IntList(result, list(range(out_num_dim, perm_index)))
    return result


# -- composites -------------------------------------------------------------------------

@kernel("outer")
def outer(self, vec2):
    if len(self._shape) != 1 or len(vec2._shape) != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {len(self._shape)}-D"
                           if len(self._shape) != 1 else
                           f"outer: Expected 1-D argument vec2, but got {len(vec2._shape)}-D")
    return aten.mul.Tensor(aten.view.default(self, [self._shape[0], 1]), vec2)


@kernel("ger")
def ger(self, vec2):
    return aten.outer.default(self, vec2)


def _squeeze0_(t):
    """``t.squeeze_(0)``; the view ``squeeze.dim`` while no in-place squeeze is declared."""
    try:
        return aten.squeeze_.dim(t, 0)
    except AttributeError:
        return aten.squeeze.dim(t, 0)


def _requires_grad(t) -> bool:
    return bool(t.requires_grad)


def _should_fold(tensor1, tensor2):
    """PyTorch's should_fold: fold the larger tensor's batch into mm/mv rows."""
    tensor1_larger = len(tensor1._shape) >= len(tensor2._shape)
    t1 = tensor1 if tensor1_larger else aten.transpose.int(tensor2, -2, -1)
    dim_t1 = len(t1._shape)
    dim_t2 = len(tensor2._shape) if tensor1_larger else len(tensor1._shape)
    if not (dim_t1 >= 3 and dim_t2 <= 2):
        return False
    if _requires_grad(tensor2 if tensor1_larger else tensor1):
        return True
    if len(tensor1._shape) == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, stride = t1._shape, t1._stride
    for i in range(dim_t1 - 2):
        if stride[i] != stride[i + 1] * shape[i + 1]:
            return False
    return True


@kernel("matmul")
def matmul(self, other):
    dim1, dim2 = len(self._shape), len(other._shape)
    if dim1 == 2 and dim2 == 2:                       # the hot path: one mm
        return aten.mm.default(self, other)
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{dim1}D and {dim2}D")
    if dim1 == 1 and dim2 == 1:
        return aten.dot.default(self, other)
    if dim1 == 2 and dim2 == 1:
        return aten.mv.default(self, other)
    if dim1 == 1 and dim2 == 2:
        return _squeeze0_(aten.mm.default(aten.unsqueeze.default(self, 0), other))
    # 3-D @ 3-D where exactly one batch is 1: drop it, so the other side can fold.
    if dim1 == 3 and dim2 == 3:
        b1, b2 = self._shape[0], other._shape[0]
        if b1 == 1 and b2 != 1:
            self = aten.squeeze.dim(self, 0)
            dim1 = 2
        elif b2 == 1 and b1 != 1:
            other = aten.squeeze.dim(other, 0)
            dim2 = 2
    if _should_fold(self, other):
        transpose = dim2 > dim1
        t1 = aten.transpose.int(other, -2, -1) if transpose else self
        t2 = (aten.t.default(self) if dim1 == 2 else self) if transpose else other
        sizes1 = t1._shape
        output_shape = list(sizes1[:-1])
        folded = math.prod(output_shape)
        t2_is_matrix = len(t2._shape) == 2
        if t2_is_matrix:
            output_shape.append(t2._shape[1])
        t1_folded = aten.reshape.default(t1, [folded, sizes1[-1]])
        if t2_is_matrix:
            output = aten._unsafe_view.default(aten.mm.default(t1_folded, t2), output_shape)
            if transpose:
                output = aten.contiguous.default(aten.transpose.int(output, -2, -1))
            return output
        return aten._unsafe_view.default(aten.mv.default(t1_folded, t2), output_shape)
    # general case: broadcast the batch dims and run one bmm
    s1, s2 = self._shape, other._shape
    n = s1[-2] if dim1 > 1 else 1
    m1 = s1[-1]
    batch1 = tuple(s1[:max(dim1 - 2, 0)])
    m2 = s2[-2] if dim2 > 1 else s2[0]
    p = s2[-1] if dim2 > 1 else 1
    batch2 = tuple(s2[:max(dim2 - 2, 0)])
    output_shape = list(broadcast_shapes(batch1, batch2))
    batch = math.prod(output_shape)
    t1 = aten.reshape.default(aten.expand.default(self, output_shape + [n, m1]), [batch, n, m1])
    if dim2 == 1:   # a vector on the right: bmm against it as a column, then drop it
        t2 = aten.reshape.default(aten.expand.default(other, output_shape + [m2]), [batch, m2])
        result = aten.squeeze.dim(aten.bmm.default(t1, aten.unsqueeze.default(t2, 2)), -1)
    else:
        t2 = aten.reshape.default(aten.expand.default(other, output_shape + [m2, p]),
                                  [batch, m2, p])
        result = aten.bmm.default(t1, t2)
    if dim1 > 1:
        output_shape.append(n)
    if dim2 > 1:
        output_shape.append(p)
    return aten._unsafe_view.default(result, output_shape)


@kernel("linear")
def linear(input, weight, bias=None):
    dim = len(input._shape)
    if bias is not None:
        if dim == 2:
            return aten.addmm.default(bias, input, aten.t.default(weight))
        if dim >= 1 and len(bias._shape) == 1 and _contiguous(input):
            # _flatten_nd_linear: fold the batch into addmm's rows
            sizes = input._shape
            inp = aten.view.default(input, [math.prod(sizes[:-1]), sizes[-1]])
            result = aten.addmm.default(bias, inp, aten.t.default(weight))
            return aten.view.default(result, list(sizes[:-1]) + [result._shape[1]])
    output = aten.matmul.default(input, aten.t.default(weight))
    if bias is not None:
        output = aten.add.Tensor(output, bias)
    return output


def _contiguous(t) -> bool:
    return t.is_contiguous()


# -- kron, tensordot (CompositeImplicitAutograd over products) -----------------------------

@kernel("kron")
def kron(self, other):
    """a (m, n) ⊗ b (p, q): a viewed (m, 1, n, 1) times b viewed (1, p, 1, q),
    flattened to (m*p, n*q); lower-rank operands get leading 1s."""
    ndim = max(len(self._shape), len(other._shape))
    a_shape = (1,) * (ndim - len(self._shape)) + self._shape
    b_shape = (1,) * (ndim - len(other._shape)) + other._shape
    a_view, b_view = [], []
    for m, p in zip(a_shape, b_shape):
        a_view += [m, 1]
        b_view += [1, p]
    product = aten.mul.Tensor(aten._unsafe_view.default(self, a_view),
                              aten._unsafe_view.default(other, b_view))
    return aten._unsafe_view.default(product, [m * p for m, p in zip(a_shape, b_shape)])


@kernel("tensordot")
def tensordot(self, other, dims_self, dims_other):
    """Contract dims_self of ``self`` with dims_other of ``other``: both are permuted
    to (free, contracted) / (contracted, free) matrices and multiplied with mm."""
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if self.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    contracted = 1
    a, b = self, other
    for d1, d2 in zip(dims_self, dims_other):
        s1, s2 = a._shape[wrap_dim(d1, len(a._shape))], b._shape[wrap_dim(d2, len(b._shape))]
        if s2 == 1:     # (summed in the operand's own dtype: integers stay as they are)
            a = aten.sum.dim_IntList(a, [d1], True, dtype=a.dtype)
        elif s1 == 1:
            b = aten.sum.dim_IntList(b, [d2], True, dtype=b.dtype)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in "
                               f"dim {d1} and second has size {s2} in dim {d2}")
        else:
            contracted *= s1
    wrapped_a = {wrap_dim(d, len(a._shape)) for d in dims_self}
    wrapped_b = {wrap_dim(d, len(b._shape)) for d in dims_other}
    free_a = [i for i in range(len(a._shape)) if i not in wrapped_a]
    free_b = [i for i in range(len(b._shape)) if i not in wrapped_b]
    result_shape = [a._shape[i] for i in free_a] + [b._shape[i] for i in free_b]
    rows = int(np.prod([a._shape[i] for i in free_a], dtype=np.int64))
    cols = int(np.prod([b._shape[i] for i in free_b], dtype=np.int64))
    left = aten.reshape.default(aten.permute.default(a, free_a + list(dims_self)),
                                [rows, contracted])
    right = aten.reshape.default(aten.permute.default(b, list(dims_other) + free_b),
                                 [contracted, cols])
    return aten.reshape.default(aten.mm.default(left, right), result_shape)


# -- addbmm: a batch of products summed; addr: an outer product added ----------------------

@meta("addbmm")
def addbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    """ATen's addbmm_out: ``self`` expanded to (batch1.size(1), batch2.size(2))
    first (so a 2-d batch1 fails there), then addbmm_impl_'s checks."""
    target = (batch1.size(1), batch2.size(2))
    expand_check(self, target)
    if len(batch1._shape) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(batch2._shape) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (n1, m, k1), (n2, k2, n) = batch1._shape, batch2._shape
    if n1 != n2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {n1} and "
                           f"{n2}")
    if k1 != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({m}x{k1} and {k2}x{n})")
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{batch1.dtype._short} and {batch2.dtype._short}")
    if self.dtype is not batch2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{self.dtype._short} and {batch2.dtype._short}")
    return TensorMeta(target, self.dtype)


@impl("addbmm")
def addbmm_impl(out, self, batch1, batch2, beta=1, alpha=1):
    """ATen's addbmm_impl_: ``out = beta * self``, then one ``addmm_`` per batch
    (each rounded to out's dtype, as ATen's loop writes the result each time)."""
    d = out.dtype
    if d is dt.bool_:
        raise not_implemented("addmm_impl_cpu_", d)
    compute, o = d.opmath, out._np()
    s = np.broadcast_to(_operand(self, compute), o.shape)
    if beta == 0:
        o[...] = 0
    else:
        np.copyto(o, s if beta == 1 else np.multiply(s, _scalar(beta, compute), dtype=compute),
                  casting="unsafe")
    if not o.size or not batch1._shape[2]:
        return
    x, y = _operand(batch1, compute), _operand(batch2, compute)
    for b in range(x.shape[0]):
        prod = np.matmul(x[b], y[b])
        if alpha != 1:
            prod = np.multiply(prod, _scalar(alpha, compute), dtype=compute)
        np.copyto(o, np.add(o, prod, dtype=compute), casting="unsafe")


def _integral_scalar_check(d, name, value):
    if not (d.is_floating_point or d.is_complex) and isinstance(value, float):
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating "
                           "point number.")


@meta("addr")
def addr_meta(self, vec1, vec2, beta=1, alpha=1):
    """ATen's addr: 1-d vec1 and vec2, ``self`` broadcast to their outer
    product's shape; the dtype promotes over all three (a TensorIterator)."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if len(v._shape) != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got "
                               f"{len(v._shape)}-D")
    expand_check(self, (vec1._shape[0], vec2._shape[0]))
    d = result_type(self, vec1, vec2)
    _integral_scalar_check(d, "beta", beta)
    _integral_scalar_check(d, "alpha", alpha)
    return TensorMeta((vec1._shape[0], vec2._shape[0]), d)


@impl("addr")
def addr_impl(out, self, vec1, vec2, beta=1, alpha=1):
    """ATen's addr_kernel, element by element: ``beta * self + alpha * v1 * v2``
    (self ignored when beta is 0); on bool ``(beta and self) or (alpha and v1 and v2)``.
    Its scalar and vector bodies both compute in scalar_t: float16/bfloat16 round
    every product and the sum (and beta, alpha first)."""
    d, o = out.dtype, out._np()
    compute = _scalar_t(d)
    v1 = _operand(vec1, compute)[:, None]
    v2 = _operand(vec2, compute)[None, :]
    s = _operand(self, compute)
    if d is dt.bool_:
        prod = np.logical_and(v1, v2) if alpha else np.zeros(o.shape, bool)
        np.copyto(o, np.logical_or(np.logical_and(s, bool(beta)), prod))
        return
    prod = np.multiply(np.multiply(_scalar(alpha, compute), v1, dtype=compute), v2,
                       dtype=compute)
    if beta != 0:
        prod = np.add(np.multiply(_scalar(beta, compute), s, dtype=compute), prod, dtype=compute)
    np.copyto(o, np.broadcast_to(prod, o.shape), casting="unsafe")
