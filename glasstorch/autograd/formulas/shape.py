"""Helpers for the gradients of views, shape ops, joins, indexing, copies and
random ops (derivatives.yaml's views section; PyTorch's FunctionsManual.cpp).

Most view gradients undo the view: a transpose is transposed back, a squeeze
unsqueezed, a select or slice is written into zeros of the input's shape (the
``*_backward`` aten ops).  Gathering ops (index, index_select, gather, take,
masked_select) scatter-*add* their gradient back, so an element picked twice
gets both contributions.  Joins split the gradient; splits join it.
"""
from __future__ import annotations

from ..._core.tls import state as _tls
from ..._dispatcher.dispatcher import ops
from ..._tensor import _wrap_dim
from ..._ops.structured import broadcast_shapes
from .common import handle_r_to_c

__all__ = ["unsqueeze_to", "permute_backwards", "slice_backward_wrapper",
           "cat_tensors_backward", "stack_tensors_backward", "unbind_backward",
           "split_backward", "repeat_backward", "roll_backward", "constant_pad_nd_backward",
           "to_copy_backward", "zeros_from_options", "index_backward", "index_select_backward",
           "gather_backward", "take_backward", "masked_select_backward", "masked_fill_backward",
           "block_diag_backward", "index_copy_source_backward", "scatter_reduce_backward",
           "index_reduce_backward"]

aten = ops.aten
_INT64_MAX = 2**63 - 1


def unsqueeze_to(grad, *dim_and_sizes):
    """Undo a squeeze: ``unsqueeze_to(grad, sizes)`` (every size-1 dim of the
    input) or ``unsqueeze_to(grad, dim_or_dims, sizes)`` (only the named dims
    that had size 1; the others were not squeezed)."""
    *dim, sizes = dim_and_sizes
    ndim = len(sizes)
    if not dim:
        dims = range(ndim)
    else:
        named = dim[0] if isinstance(dim[0], (list, tuple)) else [dim[0]]
        dims = sorted({_wrap_dim(d, ndim) for d in named})
    for d in dims:                       # ascending, so earlier dims are back in place
        if d < ndim and sizes[d] == 1:
            grad = aten.unsqueeze.default(grad, d)
    return grad


def permute_backwards(grad, dims):
    """Permute back with the inverse permutation."""
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[_wrap_dim(d, ndim)] = i
    return aten.permute.default(grad, inverse)


def slice_backward_wrapper(grad, input_sizes, dim, start, end, step):
    """slice_backward with slice's optional bounds made explicit."""
    return aten.slice_backward.default(grad, list(input_sizes), dim,
                                       0 if start is None else start,
                                       _INT64_MAX if end is None else end, step)


def cat_tensors_backward(grad, sizes, dtypes, dim):
    """Each input gets its own stretch of the gradient along ``dim``.  Legacy
    1-D empty inputs (which cat skips) get an empty gradient."""
    def legacy_empty(shape):
        return len(shape) == 1 and shape[0] == 0
    ref = next((s for s in sizes if not legacy_empty(s)), sizes[0])
    dim = _wrap_dim(dim, len(ref))
    grads, offset = [], 0
    for shape, dtype in zip(sizes, dtypes):
        if legacy_empty(shape):
            grads.append(aten.zeros.default([0], dtype=grad.dtype, device=grad.device))
            continue
        size = shape[dim]
        grads.append(handle_r_to_c(dtype, aten.narrow.default(grad, dim, offset, size)))
        offset += size
    return grads


def stack_tensors_backward(grad, dim, dtypes):
    """Input i gets the gradient's slice i along the new dim."""
    return [handle_r_to_c(dtype, aten.select.int(grad, dim, i)) for i, dtype in enumerate(dtypes)]


def unbind_backward(grads, dim):
    """Stack the outputs' gradients back (undefined ones arrive as zeros)."""
    return aten.stack.default(list(grads), dim)


def split_backward(grads, dim):
    """split / split_with_sizes: concatenate the outputs' gradients (undefined
    ones arrive as zeros of their output's shape)."""
    return aten.cat.default(list(grads), dim)


def repeat_backward(grad, repeats, input_shape):
    """Sum the copies: the new leading dims, then each repeated dim viewed as
    (repeat, size) pairs and summed over the repeat axes."""
    if 0 in repeats:
        return aten.zeros.default(list(input_shape), dtype=grad.dtype, device=grad.device)
    for _ in range(len(repeats) - len(input_shape)):
        grad = aten.sum.dim_IntList(grad, [0], False)
    paired, sum_dims = [], []
    for repeat, size in zip(repeats[len(repeats) - len(input_shape):], input_shape):
        if repeat != 1:
            sum_dims.append(len(paired))
            paired.append(repeat)
        paired.append(size)
    if not sum_dims:
        return grad
    return aten.sum.dim_IntList(aten.reshape.default(grad, paired), sum_dims, False)


def roll_backward(grad, shifts, dims):
    """Roll back: negated shifts, in reverse order (so repeated dims unwind)."""
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    return aten.roll.default(grad, [-s for s in reversed(shifts)], list(reversed(dims)))


def constant_pad_nd_backward(grad, pad):
    """Padding undone by the opposite (negative) padding."""
    return aten.constant_pad_nd.default(grad, [-p for p in pad], 0)


def to_copy_backward(grad, self_options):
    """Back to the input's dtype and device (the real part for a real input)."""
    dtype, device = self_options
    grad = handle_r_to_c(dtype, grad)
    if grad.dtype is dtype and grad.device == device:
        return grad
    return aten._to_copy.default(grad, dtype=dtype, device=device)


def zeros_from_options(sizes, options):
    """``zeros_like(x)`` from the sizes and options saved instead of ``x``."""
    dtype, device = options
    return aten.zeros.default(list(sizes), dtype=dtype, device=device)


def index_backward(grad, self_sizes, self_dtype, indices):
    """index.Tensor: accumulate the gradient into zeros at the indices, so
    duplicate indices add up."""
    zeros = aten.new_zeros.default(grad, list(self_sizes), dtype=self_dtype)
    return aten.index_put.default(zeros, list(indices), grad, True)


def index_select_backward(grad, self_sizes, dim, index):
    """Slice i of the gradient is added back at input slice ``index[i]``."""
    zeros = aten.new_zeros.default(grad, list(self_sizes))
    return aten.index_add.default(zeros, _wrap_dim(dim, len(self_sizes)), index, grad)


def gather_backward(grad, self_sizes, dim, index):
    """Each gradient element is added back where gather read it from."""
    zeros = aten.new_zeros.default(grad, list(self_sizes))
    return aten.scatter_add.default(zeros, dim, index, grad)


def take_backward(grad, self, index):
    """take reads the input as 1-D: put the gradient back, accumulating."""
    return aten.put.default(aten.zeros_like.default(self), index, grad, True)


def masked_select_backward(grad, self, mask):
    """The selected gradient scattered back over the (broadcast) input."""
    shape = broadcast_shapes(self._shape, mask._shape)
    zeros = aten.zeros_like.default(aten.expand.default(self, list(shape)))
    return aten.masked_scatter.default(zeros, mask, grad)


def masked_fill_backward(grad, mask):
    """A filled-in tensor value gets the sum of the gradient where it was written."""
    zero = aten.scalar_tensor.default(0, dtype=grad.dtype, device=grad.device)
    return aten.sum.default(aten.where.self(mask, grad, zero))


# -- block_diag ----------------------------------------------------------------------------

def block_diag_backward(grad, sizes, dtypes):
    """Input i gets its block of the gradient (a 0-d or 1-d input's block reshaped
    back; a 1-d empty input gets an empty gradient, as in PyTorch)."""
    grads, row, col = [], 0, 0
    for shape, dtype in zip(sizes, dtypes):
        shape = list(shape)
        if shape == [0]:
            grads.append(aten.zeros.default([0], dtype=grad.dtype, device=grad.device))
            continue
        rows, cols = shape if len(shape) == 2 else (1, shape[0] if shape else 1)
        block = aten.slice.Tensor(aten.slice.Tensor(grad, 0, row, row + rows), 1, col,
                                  col + cols)
        if len(shape) != 2:
            block = aten.reshape.default(block, shape)
        grads.append(handle_r_to_c(dtype, block))
        row, col = row + rows, col + cols
    return grads


# -- index_copy, scatter_reduce ------------------------------------------------------------

def index_copy_source_backward(grad, dim, index, source):
    """The slices of the gradient that the copy wrote (a 0-d source takes its one slice)."""
    if source.dim() > 0:
        return aten.expand.default(aten.index_select.default(grad, dim, index),
                                   list(source._shape))
    return aten.index_select.default(grad, dim, aten.squeeze.dim(index, 0))


def scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result):
    """Gradients of scatter_reduce for (self, src), as PyTorch's scatter_reduce_backward:
    sum passes grad through; mean divides it by each position's count; prod multiplies
    by the product of the others (a single zero handled by recomputing without it);
    amax/amin split it evenly among the elements equal to the result."""
    if reduce == "sum":
        grad_self, grad_src = grad, aten.gather.default(grad, dim, index)
    elif reduce == "mean":
        counts = aten.ones_like.default(grad) if include_self else aten.zeros_like.default(grad)
        counts = aten.scatter_add.default(counts, dim, index, aten.ones_like.default(src))
        counts = aten.masked_fill.Scalar(counts, aten.eq.Scalar(counts, 0), 1)
        grad_self = aten.div.Tensor(grad, counts)
        grad_src = aten.gather.default(grad_self, dim, index)
    elif reduce == "prod":
        grad_self, grad_src = _scatter_prod_backward(grad, self, dim, index, src, include_self,
                                                     result)
    elif reduce in ("amax", "amin"):
        value = aten.gather.default(result, dim, index)
        self_is_result = aten.eq.Tensor(self, result)
        src_is_result = aten.eq.Tensor(src, value)
        ties = aten.scatter_add.default(aten.to.dtype(self_is_result, self.dtype), dim, index,
                                        aten.to.dtype(src_is_result, self.dtype))
        share = aten.div.Tensor(grad, ties)
        grad_self = aten.mul.Tensor(self_is_result, share)
        grad_src = aten.mul.Tensor(src_is_result, aten.gather.default(share, dim, index))
    else:
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    if not include_self:
        grad_self = aten.scatter.value(grad_self, dim, index, 0)
    return grad_self, grad_src


def _scatter_prod_backward(grad, self, dim, index, src, include_self, result):
    nonzero_self = aten.masked_fill.Scalar(self, aten.eq.Scalar(self, 0), 1)
    nonzero_self_result = aten.scatter_reduce.two(nonzero_self, dim, index, src, "prod",
                                                  include_self=include_self)
    grad_self = aten.div.Tensor(aten.mul.Tensor(grad, nonzero_self_result), nonzero_self)
    src_zero = aten.eq.Scalar(src, 0)
    zeros_at = aten.scatter_add.default(aten.zeros_like.default(self), dim, index,
                                        aten.to.dtype(src_zero, self.dtype))
    src_zeros = aten.gather.default(zeros_at, dim, index)
    single_zero = aten.bitwise_and.Tensor(src_zero, aten.eq.Scalar(src_zeros, 1))
    if _tls.grad_enabled and bool(aten.any.default(aten.gt.Scalar(src_zeros, 1))):
        raise RuntimeError(
            "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
            "scattered to the same position. This is because the gradient will be different "
            "based on the order of the scattered elements.")
    without_zero = aten.scatter_reduce.two(self, dim, index,
                                           aten.masked_fill.Scalar(src, single_zero, 1), "prod",
                                           include_self=include_self)
    grad_src = aten.where.self(
        single_zero, aten.gather.default(aten.mul.Tensor(grad, without_zero), dim, index),
        aten.div.Tensor(aten.gather.default(aten.mul.Tensor(grad, result), dim, index),
                        aten.masked_fill.Scalar(src, src_zero, 1)))
    return grad_self, grad_src


def index_reduce_backward(grad, self, dim, index, source, reduce, include_self, result):
    """Gradients of index_reduce for (self, source), as PyTorch's
    index_reduce_backward: scatter_reduce_backward's cases with index_select /
    index_add / index_fill in place of gather / scatter_add / scatter."""
    if reduce == "prod":
        nonzero_self = aten.masked_fill.Scalar(self, aten.eq.Scalar(self, 0), 1)
        nonzero_self_result = aten.index_reduce.default(nonzero_self, dim, index, source,
                                                        reduce, include_self=include_self)
        grad_self = aten.div.Tensor(aten.mul.Tensor(grad, nonzero_self_result), nonzero_self)
        src_zero = aten.eq.Scalar(source, 0)
        zeros_at = aten.index_add.default(aten.zeros_like.default(self), dim, index,
                                          aten.to.dtype(src_zero, self.dtype))
        src_zeros = aten.index_select.default(zeros_at, dim, index)
        single_zero = aten.bitwise_and.Tensor(src_zero, aten.eq.Scalar(src_zeros, 1))
        if _tls.grad_enabled and bool(aten.any.default(aten.gt.Scalar(src_zeros, 1))):
            raise RuntimeError("index_reduce(): Double backward is unsupported for source when "
                               ">1 zeros in source are scattered to the same position. This is "
                               "because the gradient will be different based on the order of "
                               "the scattered elements.")
        without_zero = aten.index_reduce.default(self, dim, index,
                                                 aten.masked_fill.Scalar(source, single_zero, 1),
                                                 reduce, include_self=include_self)
        grad_source = aten.where.self(
            single_zero,
            aten.index_select.default(aten.mul.Tensor(grad, without_zero), dim, index),
            aten.div.Tensor(aten.index_select.default(aten.mul.Tensor(grad, result), dim, index),
                            aten.masked_fill.Scalar(source, src_zero, 1)))
    elif reduce == "mean":
        counts = aten.ones_like.default(grad) if include_self else aten.zeros_like.default(grad)
        counts = aten.index_add.default(counts, dim, index, aten.ones_like.default(source))
        counts = aten.masked_fill.Scalar(counts, aten.eq.Scalar(counts, 0), 1)
        grad_self = aten.div.Tensor(grad, counts)
        grad_source = aten.div.Tensor(aten.index_select.default(grad, dim, index),
                                      aten.index_select.default(counts, dim, index))
    else:
        value = aten.index_select.default(result, dim, index)
        self_is_result = aten.to.dtype(aten.eq.Tensor(self, result), self.dtype)
        source_is_result = aten.to.dtype(aten.eq.Tensor(source, value), self.dtype)
        ties = aten.index_add.default(self_is_result, dim, index, source_is_result)
        share = aten.div.Tensor(grad, ties)
        grad_self = aten.mul.Tensor(self_is_result, share)
        grad_source = aten.mul.Tensor(source_is_result,
                                      aten.index_select.default(share, dim, index))
    if not include_self:
        grad_self = aten.index_fill.int_Scalar(grad_self, dim, index, 0)
    return grad_self, grad_source
