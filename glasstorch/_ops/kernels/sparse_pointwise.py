"""The zero-preserving pointwise ops of sparse tensors: ``abs``, ``sin``,
``sqrt``, ``relu``, ``signbit``, ``isnan``, ``pow(t, 2)``... (f(0) == 0, so
the result keeps the operand's sparsity pattern and f runs on the stored
values only), and relu's gradient ``threshold_backward``.  ATen's
native/sparse/SparseUnaryOps.cpp (COO; ``pow_sparse_scalar`` is in
SparseTensorMath.cpp) and the unary ops of SparseCsrTensorMath.cpp (CSR).

Every kernel is one of a few generic ones given a dense op
(``aten.<op>.<overload>``, run on the values); they are registered by a loop
over the tables below (``abs_sparse``, ``abs_sparse_``, ``abs_sparse_out``,
``abs_sparse_csr`` ...), for exactly the ops, variants and layouts torch has
kernels for, so any other raises the dispatcher's "Could not run ... from
the 'SparseCPU' backend" as in torch.  The dense op decides the result dtype
and raises its own errors (frac of an int tensor, sign of a complex one ...).

COO: the functional op coalesces first (duplicates must be summed before a
non-linear f) and gives a coalesced result; the in-place op refuses an
uncoalesced tensor ("sin_ requires coalesced input"); the out= op resizes
``out`` with ``sparse_resize_`` and gives it the coalesced result's
elements in ``out``'s dtype (the dense out= op's casting rules apply).

CSR: the values change, the compressed indices are the operand's; out=
first does what ``copy_`` of compressed tensors does (the same number of
elements and rows, ``out``'s sizes kept; an ``out`` with no elements takes
the operand's sizes), then the dense out= op writes into its values.

As everywhere in the sparse family, a tensor's parts are never changed in
place: an in-place or out= result takes new parts (``_set_parts``), so a
``_values()`` taken before does not change (in torch it does).
"""
from __future__ import annotations

from ..._core.layout import sparse_csr
from ..._dispatcher.dispatcher import ops
from . import kernel
from .sparse import _set_parts, _with_values

aten = ops.aten

_COO_OUT_LAYOUTS = ("Expected self.is_sparse() && result.is_sparse() to be true, but got false.  "
                    "(Could this error message be improved?  If so, please report an enhancement "
                    "request to PyTorch.)")
_ASSERT = ('{} INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/sparse/'
           '{}":{}, please report a bug to PyTorch. ')


def _values(t):
    return t._storage.values


def _dense(name, overload="default"):
    return getattr(getattr(aten, name), overload)


def _into(values, dtype, dense_out, args):
    """The dense out= op on ``values`` into a new tensor of ``dtype`` (the
    values of an out= or in-place result)."""
    result = aten.empty.memory_format(list(values.shape), dtype=dtype, device=values.device)
    dense_out(values, *args, out=result)
    return result


# -- COO: SparseUnaryOps.cpp ---------------------------------------------------------------

def _coo(dense_fn, self, args):
    """coalesced_unary_ufunc: f on the coalesced values; a coalesced result."""
    c = aten.coalesce.default(self)
    return _with_values(c, dense_fn(_values(c), *args), True)


def _coo_out(dense_out, self, args, out):
    """coalesced_unary_ufunc_out: ``out`` takes the coalesced operand's
    indices (sizes by sparse_resize_) and f of its values in out's dtype."""
    if self is out:
        if not self.is_coalesced():
            raise RuntimeError("expected coalesced tensor for inplace operation")
    elif not (self.is_sparse and out.is_sparse):
        raise RuntimeError(_COO_OUT_LAYOUTS)
    return _coo_into(dense_out, self, args, out)


def _coo_into(dense_out, self, args, out):
    c = aten.coalesce.default(self)
    aten.sparse_resize_.default(out, list(c.shape), c.sparse_dim(), c.dense_dim())
    return _set_parts(out, _with_values(c, _into(_values(c), out.dtype, dense_out, args), True))


def _coo_inplace(name, dense_inplace, self, args):
    """<op>_sparse_: only a coalesced tensor (its indices stay); f in place on its values."""
    if not self.is_coalesced():
        raise RuntimeError(f"{name}_ requires coalesced input")
    values = aten.clone.default(_values(self))
    dense_inplace(values, *args)
    return _set_parts(self, _with_values(self, values, True))


def _pow_exponent(exponent):
    """pow_out_sparse_scalar's check: a zero exponent would make every missing
    element 1 (Scalar::toDouble first: a complex one must be real)."""
    if isinstance(exponent, complex):
        if exponent.imag:
            raise RuntimeError("value cannot be converted to type double without overflow")
        exponent = exponent.real
    if float(exponent) == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the "
                           "result tensor dense")


def _pow_sparse_out(self, exponent, out):
    """pow_out_sparse_scalar: no in-place shortcut (out may be self)."""
    if not out.is_sparse:
        raise RuntimeError(_ASSERT.format("r.is_sparse()", "SparseTensorMath.cpp", 168))
    if not self.is_sparse:
        raise RuntimeError(_ASSERT.format("t_.is_sparse()", "SparseTensorMath.cpp", 169))
    _pow_exponent(exponent)
    return _coo_into(aten.pow.Tensor_Scalar_out, self, (exponent,), out)


def _pow_sparse(self, exponent):
    """pow_sparse_scalar: pow_out_sparse_scalar into an empty COO tensor of
    self's dtype (so an integer tensor with a float exponent is refused as
    the dense out= op refuses it)."""
    empty = aten.sparse_coo_tensor.size([0], dtype=self.dtype, device=self.device)
    return _pow_sparse_out(self, exponent, empty)


# -- CSR: SparseCsrTensorMath.cpp -------------------------------------------------------------

def _csr(dense_fn, self, args):
    """get_result_tensor_for_unary_op: f on the values, the operand's indices."""
    return _with_values(self, dense_fn(_values(self), *args))


def _csr_inplace(dense_inplace, self, args):
    """unary_op_inplace: f in place on the values."""
    values = aten.clone.default(_values(self))
    dense_inplace(values, *args)
    return _set_parts(self, _with_values(self, values))


def _csr_out(dense_out, self, args, out):
    """unary_op_out: out takes self's elements (copy_sparse_compressed_, which
    checks the number of elements, then the rows, and leaves out's sizes; an
    ``out`` with no elements at all is first resized as self), then the dense
    out= op writes f of self's values into out's values."""
    if self.layout is not sparse_csr:
        raise RuntimeError(_ASSERT.format("self.is_sparse_csr()", "SparseCsrTensorMath.cpp", 170))
    if out.layout is not sparse_csr:
        raise RuntimeError(_ASSERT.format("result.is_sparse_csr()", "SparseCsrTensorMath.cpp",
                                          171))
    size = self._shape
    if out is not self and out.numel() != 0:
        if out._nnz() != self._nnz():
            raise RuntimeError("torch.copy_: only sparse compressed tensors with the same number "
                               "of specified elements are supported.")
        if out._shape[0] != self._shape[0]:
            raise RuntimeError("torch.copy_: expected shapes of self and src to match along "
                               "dimension 0 for SparseCsr layout but the corresponding dimensions "
                               f"of self and src are {out._shape[0]} and {self._shape[0]}, "
                               "respectively.")
        size = out._shape
    values = _into(_values(self), out.dtype, dense_out, args)
    _set_parts(out, _with_values(self, values))
    out._shape = size
    return out


# -- the kernels -------------------------------------------------------------------------

# zero-preserving ops with functional, in-place and out= kernels on COO and CSR
_UNARY = ("abs", "asin", "asinh", "atan", "atanh", "ceil", "deg2rad", "erf", "erfinv", "expm1",
          "floor", "frac", "log1p", "rad2deg", "round", "sgn", "sign", "sin", "sinh", "sqrt",
          "tan", "tanh", "trunc")
# bool results: functional and out= (signbit, isneginf, isposinf) or functional only
_PREDICATES_OUT = ("signbit", "isneginf", "isposinf")
_PREDICATES = ("isinf", "isnan")


def _register(kernel_name, body):
    body.__name__ = body.__qualname__ = kernel_name
    kernel(kernel_name)(body)


def _register_unary(name, inplace=True, out=True, layouts=("sparse", "sparse_csr")):
    """``<name>_<layout>`` kernels (and ``_`` / ``_out`` ones) applying
    ``aten.<name>`` (``aten.<name>_``, ``aten.<name>.out``) to the values; the
    dense ops are looked up per call (they are declared after kernels load)."""
    for layout in layouts:
        coo = layout == "sparse"

        def functional(self, generic=_coo if coo else _csr):
            return generic(_dense(name), self, ())
        _register(f"{name}_{layout}", functional)
        if inplace:
            if coo:
                def in_place(self):
                    return _coo_inplace(name, _dense(name + "_"), self, ())
            else:
                def in_place(self):
                    return _csr_inplace(_dense(name + "_"), self, ())
            _register(f"{name}_{layout}_", in_place)
        if out:
            def out_variant(self, out, generic=_coo_out if coo else _csr_out):
                return generic(_dense(name, "out"), self, (), out)
            _register(f"{name}_{layout}_out", out_variant)


for _name in _UNARY:
    _register_unary(_name)
for _name in _PREDICATES_OUT:
    _register_unary(_name, inplace=False)
for _name in _PREDICATES:
    _register_unary(_name, inplace=False, out=False)
_register_unary("relu", out=False)                   # relu_sparse / relu_sparse_csr
_register_unary("angle", inplace=False, layouts=("sparse_csr",))


# nan_to_num (COO only): its float arguments pass through to the dense op

@kernel("nan_to_num_sparse")
def nan_to_num_sparse(self, nan=None, posinf=None, neginf=None):
    return _coo(aten.nan_to_num.default, self, (nan, posinf, neginf))


@kernel("nan_to_num_sparse_out")
def nan_to_num_sparse_out(self, nan=None, posinf=None, neginf=None, out=None):
    return _coo_out(aten.nan_to_num.out, self, (nan, posinf, neginf), out)


@kernel("nan_to_num_sparse_")
def nan_to_num_sparse_(self, nan=None, posinf=None, neginf=None):
    """nan_to_num_sparse_: nan_to_num_sparse_out(self, self) after the check."""
    if not self.is_coalesced():
        raise RuntimeError("nan_to_num_ requires coalesced input")
    return _coo_out(aten.nan_to_num.out, self, (nan, posinf, neginf), self)


# pow(Tensor, Scalar) (COO only; no in-place: the coalesce could not be in place)

@kernel("pow_sparse_scalar")
def pow_sparse_scalar(self, exponent):
    return _pow_sparse(self, exponent)


@kernel("pow_out_sparse_scalar")
def pow_out_sparse_scalar(self, exponent, out):
    return _pow_sparse_out(self, exponent, out)


# threshold_backward (relu's gradient): f(g, x) = g where x > threshold, else 0, on the
# gradient's stored elements against self's (the same pattern: the gradient of a
# zero-preserving op's result)

def _threshold_grad(grad_output, self):
    """threshold_backward_sparse's gradient: grad_output, or self's elements with
    zero values when grad_output has none (zeros_like_with_indices)."""
    if not grad_output._nnz() and self._nnz() > 0:
        return _with_values(self, aten.zeros_like.default(_values(self)))
    return grad_output


def _threshold_self_values(self):
    return (self if self.is_coalesced() else aten.coalesce.default(self)).values()


def _threshold_backward_out(values, self_values, threshold, out):
    return aten.threshold_backward.grad_input(values, self_values, threshold, grad_input=out)


@kernel("threshold_backward_sparse")
def threshold_backward_sparse(grad_output, self, threshold):
    grad = _threshold_grad(grad_output, self)
    return _coo(aten.threshold_backward.default, grad, (_threshold_self_values(self), threshold))


@kernel("threshold_backward_sparse_out")
def threshold_backward_sparse_out(grad_output, self, threshold, grad_input):
    grad = _threshold_grad(grad_output, self)
    return _coo_out(_threshold_backward_out, grad, (_threshold_self_values(self), threshold),
                    grad_input)


@kernel("threshold_backward_sparse_compressed")
def threshold_backward_sparse_compressed(grad_output, self, threshold):
    return _csr(aten.threshold_backward.default, grad_output, (self.values(), threshold))


@kernel("threshold_backward_sparse_compressed_out")
def threshold_backward_sparse_compressed_out(grad_output, self, threshold, grad_input):
    return _csr_out(_threshold_backward_out, grad_output, (self.values(), threshold), grad_input)
