"""Matrix products (ATen's LinearAlgebra.cpp / Blas.cpp, in small).

Computing ops are structured (meta rule + impl):

    mm(a, b)                 out[i, j]    = sum_k a[i, k] b[k, j]
    bmm(a, b)                out[n, i, j] = sum_k a[n, i, k] b[n, k, j]
    addmm(s, a, b)           out = beta * s + alpha * (a @ b)      (s broadcast to out)
    baddbmm(s, a, b)         the same, batched
    addmv(s, m, v) / mv      out = beta * s + alpha * (m @ v)
    dot(a, b) / vdot(a, b)   sum_k a[k] b[k]   (vdot conjugates a)

The bodies hand the work to numpy's BLAS (``np.matmul(a, b, out=o)``) on the
tensors' own strided views: float32/float64/complex go straight through;
float16/bfloat16 compute in float32 (their opmath type) and round once when
written, as PyTorch's CPU kernels do.

Composite ops (CompositeImplicitAutograd) are decompositions into other ops,
called through the dispatcher so a TorchDispatchMode sees what PyTorch shows:

    matmul   -> dot / mv / mm / bmm, with PyTorch's folding and broadcasting
    linear   -> t + addmm (2-D input with bias) | view + t + addmm + view | matmul (+ add)
    outer    -> view + mul
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor
from ..structured import TensorMeta, broadcast_shapes
from . import impl, kernel, meta

aten = ops.aten

# caffe2::TypeMeta names, which PyTorch prints for `tensor.dtype()` in messages.
TYPEMETA_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def typemeta(d) -> str:
    return TYPEMETA_NAMES.get(d.name, d.name)


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def expand_check(self, target, what=None):
    """``expand_size(self, target)``'s errors, raised as PyTorch's expand raises them."""
    shape = tuple(self._shape)
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand(torch.{_legacy_type(self.dtype)}{{{_shape_str(shape)}}}, "
            f"size={_shape_str(target)}): the number of sizes provided ({len(target)}) must be "
            f"greater or equal to the number of dimensions in the tensor ({len(shape)})")
    offset = len(target) - len(shape)
    for i, n in enumerate(shape):
        t = target[offset + i]
        if n != t and n != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({t}) must match the existing size ({n}) at "
                f"non-singleton dimension {offset + i}.  Target sizes: {_shape_str(target)}.  "
                f"Tensor sizes: {_shape_str(shape)}")


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


def _matmul_into(out_arr, a, b, compute):
    """out = a @ b, computing in ``compute`` and rounding once on write."""
    if out_arr.dtype == compute:
        np.matmul(a, b, out=out_arr)
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
        np.matmul(x, y, out=o)
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

@meta("mm")
def mm_meta(self, mat2):
    if len(self._shape) != 2:
        raise RuntimeError("self must be a matrix")
    if len(mat2._shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.dtype is not mat2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{typemeta(self.dtype)} != {typemeta(mat2.dtype)}")
    (m, k1), (k2, n) = self._shape, mat2._shape
    if k1 != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k1} and {k2}x{n})")
    return TensorMeta((m, n), self.dtype, None, self.device)


@impl("mm")
def mm_impl(out, self, mat2):
    d = out.dtype
    compute = d.opmath
    if compute == d.numpy:
        if d is dt.bool_:
            raise not_implemented("addmm_impl_cpu_", d)
        np.matmul(self._np(), mat2._np(), out=out._np())
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
def addmm_meta(self, mat1, mat2, beta=1, alpha=1):
    m, n = _addmm_checks(self, mat1, mat2)
    expand_check(self, (m, n))
    return TensorMeta((m, n), mat1.dtype)


@impl("addmm")
def addmm_impl(out, self, mat1, mat2, beta=1, alpha=1):
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


@impl("bmm")
def bmm_impl(out, self, mat2):
    d = out.dtype
    if d is dt.bool_:
        raise not_implemented("bmm", d)
    if out.numel():
        _matmul_into(out._np(), _operand(self, d.opmath), _operand(mat2, d.opmath), d.opmath)


@meta("baddbmm")
def baddbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    if len(batch1._shape) == 3 and len(batch2._shape) == 3:
        expand_check(self, (batch1._shape[0], batch1._shape[1], batch2._shape[2]))
    if self.dtype is not batch1.dtype or self.dtype is not batch2.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {typemeta(self.dtype)}, "
                           f"batch1: {typemeta(batch1.dtype)}, batch2: {typemeta(batch2.dtype)}")
    shape = _bmm_checks(batch1, batch2)
    return TensorMeta(shape, batch2.dtype)


@impl("baddbmm")
def baddbmm_impl(out, self, batch1, batch2, beta=1, alpha=1):
    _gemm_like(out, self, batch1, batch2, beta, alpha, "baddbmm_with_gemm")


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


# -- einsum (a direct kernel for now: numpy's contraction) -------------------------------------

def _parse_einsum(equation, shapes):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(shapes) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    sizes: dict = {}
    ell_shape: tuple = ()
    parsed = []
    for term, shape in zip(terms, shapes):
        labels = []
        if "..." in term:
            before, _, after = term.partition("...")
            n_ell = len(shape) - len(before) - len(after)
            if n_ell < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(before) + len(after)}) is more than the number of "
                                   f"dimensions ({len(shape)}) for operand {len(parsed)}")
            ell = tuple(shape[len(before):len(before) + n_ell])
            ell_shape = broadcast_shapes(ell_shape, ell)
            labels = list(before) + ["..."] + list(after)
            dims = list(shape[:len(before)]) + [None] + list(shape[len(before) + n_ell:])
        else:
            if len(term) != len(shape):
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({len(term)}) does not "
                    f"match the number of dimensions ({len(shape)}) for operand {len(parsed)} and "
                    "no ellipsis was given")
            labels = list(term)
            dims = list(shape)
        for label, n in zip(labels, dims):
            if label == "...":
                continue
            if not label.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index "
                                   f"{eq.index(label)} in the equation string, subscripts must "
                                   "be in [a-zA-Z]")
            prev = sizes.get(label)
            if prev is None or prev == 1:
                sizes[label] = n
            elif n != 1 and n != prev:
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes "
                                   f"(original->remapped): {list(shapes)}")
        parsed.append(labels)
    if arrow:
        out_labels = list(rhs.replace("...", "."))
    else:
        counts: dict = {}
        for labels in parsed:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        out_labels = (["."] if any("..." in p for p in parsed) else []) + \
            sorted(k for k, c in counts.items() if c == 1 and k != "...")
    out_shape = []
    for label in out_labels:
        if label == ".":
            out_shape.extend(ell_shape)
        else:
            if label not in sizes:
                raise RuntimeError(f"einsum(): output subscript {label} does not appear in the "
                                   "equation for any input operand")
            out_shape.append(sizes[label])
    return tuple(out_shape)


@meta("einsum")
def einsum_meta(equation, tensors, path=None):
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    d = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not d:
            raise RuntimeError(f"expected scalar type {d._short} but found {t.dtype._short}")
    return TensorMeta(_parse_einsum(equation, [t._shape for t in tensors]), d)


@impl("einsum")
def einsum_impl(out, equation, tensors, path=None):
    d = out.dtype
    compute = d.opmath
    arrays = [_operand(t, compute) for t in tensors]
    result = np.einsum(equation.replace(" ", ""), *arrays, optimize=len(arrays) > 2)
    np.copyto(out._np(), result, casting="unsafe")


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
            inp = aten.reshape.default(input, [math.prod(sizes[:-1]), sizes[-1]])
            result = aten.addmm.default(bias, inp, aten.t.default(weight))
            return aten.view.default(result, list(sizes[:-1]) + [result._shape[1]])
    output = aten.matmul.default(input, aten.t.default(weight))
    if bias is not None:
        output = aten.add.Tensor(output, bias)
    return output


def _contiguous(t) -> bool:
    return t.is_contiguous()
