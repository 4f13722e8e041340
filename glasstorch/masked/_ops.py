"""``torch.masked._ops``: reductions and normalizations that ignore masked-out
elements (torch/masked/_ops.py).

Every function follows one recipe, as PyTorch's Python implementation does:
broadcast the boolean ``mask`` to the input's shape, replace the masked-out
elements by the identity of the operation (0 for sum, 1 for prod, -inf for
amax, NaN for median ...) with ``where``, then run the ordinary op.  The
functions are compositions of registered ops, so autograd, vmap and tracing
see ordinary op calls; only strided tensors are handled (PyTorch's sparse COO
and CSR branches are not ported).
"""
from __future__ import annotations

import builtins

import glasstorch as torch
from glasstorch import Tensor

from .maskedtensor.core import is_masked_tensor
from .maskedtensor.creation import as_masked_tensor

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "norm", "var", "std", "softmax", "log_softmax", "softmin",
           "normalize"]

# Integer dtypes that sum/prod widen to int64 when no dtype is given (as torch.sum does).
_PROMOTED_TO_INT64 = {torch.uint8, torch.bool, torch.int8, torch.int16, torch.int32}

_REDUCTIONS = {"sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm",
               "var", "std", "logsumexp"}
_NORMALIZATIONS = {"softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"}


def _reduction_identity(op_name: str, input: Tensor, *args):
    """The scalar tensor that leaves ``op_name``'s result unchanged when added to
    the reduced elements (masked-out elements are replaced by it), or None where
    no such value exists (mean, var, std).  ``args`` carries norm's ``ord``."""
    dtype, device = input.dtype, input.device
    name = op_name.rsplit(".", 1)[-1]

    def scalar(value, dt=dtype):
        return torch.tensor(value, dtype=dt, device=device)

    def integer_bound(which):
        # the extreme of an integer dtype: signed ones and uint8 only
        if torch.is_signed(input) or dtype == torch.uint8:
            return scalar(getattr(torch.iinfo(dtype), which))
        return None

    if name in {"sum", "cumsum"}:
        return scalar(0)
    if name in {"prod", "cumprod"}:
        return scalar(1)
    if name in {"amax", "argmax", "logaddexp", "logsumexp"}:
        if torch.is_floating_point(input):
            return scalar(-torch.inf)
        if name == "logsumexp" and torch.is_complex(input):
            return scalar(complex(-torch.inf, 0))
        bound = integer_bound("min")
        if bound is not None:
            return bound
    elif name in {"amin", "argmin"}:
        if torch.is_floating_point(input):
            return scalar(torch.inf)
        bound = integer_bound("max")
        if bound is not None:
            return bound
    elif name in {"mean", "var", "std"}:
        return None
    elif name == "norm":
        ord = args[0] if args else 2
        if ord == float("-inf"):
            if not torch.is_floating_point(input):
                raise AssertionError(f"input must be floating point, got {input.dtype}")
            return scalar(torch.inf)
        return scalar(0)
    elif name == "median":
        # NaN: median runs as nanmedian, which skips NaNs
        return scalar(torch.nan, dtype if torch.is_floating_point(input) else torch.float)
    raise NotImplementedError(f"identity of {name} on {dtype} input")


def _canonical_dim(dim, ndim: int) -> tuple[int, ...]:
    """``dim`` (None, an int or a sequence of ints) as a sorted tuple of
    non-negative dims; None and ``()`` mean every dim."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    seen: list[int] = []
    for d in ((dim,) if isinstance(dim, (int, torch.SymInt)) else dim):
        if d in seen:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {d})")
        seen.append(d % ndim)
    return tuple(sorted(seen))


def _any(input: Tensor, dim: tuple, keepdim: bool) -> Tensor:
    """``any`` over several dims, one at a time from the last."""
    for d in reversed(dim):
        input = input.any(dim=d, keepdim=keepdim)
    return input


def _check_strided(input: Tensor, what: str) -> None:
    if input.layout != torch.strided:
        raise NotImplementedError(f"glasstorch.masked: {what} of a {input.layout} tensor is not "
                                  "supported (only strided tensors)")


def _where(mask: Tensor, input: Tensor, fill_value: Tensor) -> Tensor:
    """``where(mask, input, fill_value)`` (PyTorch's also takes sparse masks)."""
    _check_strided(mask, "_where")
    return torch.where(mask, input, fill_value)


def _input_mask(input: Tensor, *args, **kwargs) -> Tensor:
    """The ``mask`` keyword as a bool tensor of ``input``'s shape: broadcast (a
    mask of more dims than the input is refused) and converted to bool."""
    if input.layout not in {torch.strided, torch.sparse_coo, torch.sparse_csr}:
        raise ValueError("_input_mask expects strided or sparse COO or sparse CSR tensor "
                         f"but got {input.layout}")
    mask = kwargs.get("mask")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    _check_strided(input, "_input_mask")
    _check_strided(mask, "_input_mask")
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = torch.broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=torch.bool)


def _output_mask(op, input: Tensor, *args, **kwargs) -> Tensor:
    """The mask of ``op(input, *args, **kwargs)``'s result: for a reduction, the
    dims reduced with ``any``; for a normalization, the input mask itself."""
    if not callable(op):
        raise ValueError(f"_output_mask expected masked operation (got {type(op).__name__} object)")
    if op.__name__ in _REDUCTIONS:
        if op.__name__ == "norm" and args:
            args = args[1:]   # drop ord
        dim = args[0] if args else kwargs.get("dim")
        mask = _input_mask(input, *args, **kwargs)
        return _any(mask, _canonical_dim(dim, input.ndim), bool(kwargs.get("keepdim", False)))
    if op.__name__ in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    raise ValueError("_output_mask expected masked operation "
                     f"(got callable {op.__module__}.{op.__name__})")


def _fill_masked_out(op, input: Tensor, mask, *args) -> Tensor:
    """``input`` with its masked-out elements replaced by ``op``'s identity."""
    if mask is None:
        return input
    if not callable(op):
        raise ValueError("_combine_input_and_mask expected masked operation "
                         f"(got {type(op).__name__} object)")
    fill = _reduction_identity(op.__name__, input, *args)
    return _where(_input_mask(input, mask=mask), input, fill)


class _Combine(torch.autograd.Function):
    """A MaskedTensor's data with its masked-out elements filled; the gradient
    goes back to the MaskedTensor as a MaskedTensor of the same mask."""

    @staticmethod
    def forward(ctx, op, data, mask, *args):
        ctx.save_for_backward(mask)
        ctx.mark_non_differentiable(mask)
        ctx.n_args = len(args)
        return _fill_masked_out(op, data, mask, *args)

    @staticmethod
    def backward(ctx, grad_output):
        (mask,) = ctx.saved_tensors
        grad = grad_output.get_data() if is_masked_tensor(grad_output) else grad_output
        return (None, as_masked_tensor(grad, mask), None) + (None,) * ctx.n_args


def _combine_input_and_mask(op, input, mask, *args) -> Tensor:
    """The tensor ``op`` reduces: ``input`` with masked-out elements replaced by
    the identity of ``op`` (a MaskedTensor brings its own mask)."""
    if is_masked_tensor(input):
        return _Combine.apply(op, input.get_data(), input.get_mask(), *args)
    return _fill_masked_out(op, input, mask, *args)


def _sum_prod_dtype(input: Tensor, dtype):
    """sum/prod's result dtype: small integers and bool widen to int64."""
    if dtype is not None:
        return dtype
    return torch.int64 if input.dtype in _PROMOTED_TO_INT64 else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:  # noqa: A001
    """Sum over ``dim`` of the elements ``mask`` keeps (masked-out count as 0)."""
    dtype = _sum_prod_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    filled = _combine_input_and_mask(sum, input, mask)
    _check_strided(filled, "masked sum")
    return torch.sum(filled, dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Product over ``dim`` of the elements ``mask`` keeps (masked-out count as 1);
    one dim at a time, as torch.prod takes a single dim."""
    dtype = _sum_prod_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    result = _combine_input_and_mask(prod, input, mask)
    _check_strided(result, "masked prod")
    result = result.to(dtype=dtype)
    for d in reversed(dims):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def _cumulative(op, identity_op, input, dim, dtype, mask) -> Tensor:
    """cumsum/cumprod along ``dim`` with masked-out elements as the identity."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    filled = _combine_input_and_mask(identity_op, input, mask)
    _check_strided(filled, f"masked {op.__name__}")
    return op(filled, d, dtype=dtype).to(dtype=dtype)


def cumsum(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Running sum along ``dim`` in which masked-out elements add 0."""
    return _cumulative(torch.cumsum, sum, input, dim, dtype, mask)


def cumprod(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Running product along ``dim`` in which masked-out elements multiply by 1."""
    return _cumulative(torch.cumprod, prod, input, dim, dtype, mask)


def _extreme(op, masked_op, input, dim, keepdim, dtype, mask) -> Tensor:
    """amax/amin over ``dim`` with masked-out elements as -inf/+inf (or the
    integer dtype's bounds); the result is cast to ``dtype``."""
    dtype = input.dtype if dtype is None else dtype
    filled = _combine_input_and_mask(masked_op, input, mask)
    _check_strided(filled, f"masked {masked_op.__name__}")
    return op(filled, _canonical_dim(dim, filled.ndim), bool(keepdim)).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Maximum over ``dim`` of the elements ``mask`` keeps."""
    return _extreme(torch.amax, amax, input, dim, keepdim, dtype, mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Minimum over ``dim`` of the elements ``mask`` keeps."""
    return _extreme(torch.amin, amin, input, dim, keepdim, dtype, mask)


def _arg_extreme(op, masked_op, input, dim, keepdim, dtype, mask) -> Tensor:
    """argmax/argmin over the kept elements; as in torch, the index is cast to
    ``dtype`` (the input's dtype by default)."""
    dtype = input.dtype if dtype is None else dtype
    filled = _combine_input_and_mask(masked_op, input, mask)
    _check_strided(filled, f"masked {masked_op.__name__}")
    return op(filled, dim, bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Index of the maximum over ``dim`` among the elements ``mask`` keeps."""
    return _arg_extreme(torch.argmax, argmax, input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Index of the minimum over ``dim`` among the elements ``mask`` keeps."""
    return _arg_extreme(torch.argmin, argmin, input, dim, keepdim, dtype, mask)


def _sum_and_count(input, dim, keepdim, dtype, mask):
    """The masked sum over ``dim`` (in ``dtype``), the int64 number of kept
    elements it adds, and the broadcast mask, for mean, var and std (the count
    first, as torch, so that a bad ``dim`` fails where it fails there)."""
    if mask is None:
        ones = torch.ones(input.shape, dtype=torch.int64, device=input.device)
        count = sum(ones, dim, keepdim=keepdim)
        return sum(input, dim, keepdim=keepdim, dtype=dtype), count, None
    inmask = _input_mask(input, mask=mask)
    count = inmask.sum(dim=dim, keepdim=bool(keepdim))
    return sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask), count, inmask


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Mean over ``dim`` of the elements ``mask`` keeps; NaN where none is kept."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    _check_strided(input, "masked mean")
    total, count, _ = _sum_and_count(input, dim, keepdim, dtype, mask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Median along one ``dim`` of the kept elements (nanmedian over the input
    with masked-out elements as NaN); integer inputs are computed in float32
    and must keep an element in every slice."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = torch.is_floating_point(input)
    if not is_float:
        input = input.to(dtype=torch.float)
    filled = _combine_input_and_mask(median, input, mask)
    _check_strided(filled, "masked median")
    result = torch.nanmedian(filled, d, keepdim).values
    if is_float:
        return result
    if torch.isnan(result).any():
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return result.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """log(sum(exp)) over ``dim`` of the kept elements (masked-out ones are -inf)."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    filled = _combine_input_and_mask(logsumexp, input, mask)
    _check_strided(filled, "masked logsumexp")
    return torch.logsumexp(filled, dims, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None) -> Tensor:
    """logaddexp(input, other) -> Tensor with each operand's masked-out elements
    taken as -inf, so a masked pair gives the other operand (both: -inf)."""
    dtype = input.dtype if dtype is None else dtype
    if input.layout != torch.strided or other.layout != torch.strided:
        raise ValueError(f"masked logaddexp expects strided tensors (got {input.layout} tensor "
                         f"for input, {other.layout} for other)")
    a = _combine_input_and_mask(logaddexp, input, input_mask)
    b = _combine_input_and_mask(logaddexp, other, other_mask)
    return torch.logaddexp(a, b).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Vector ``ord``-norm over ``dim`` of the kept elements (masked-out ones are
    0, or +inf for ord=-inf)."""
    dtype = input.dtype if dtype is None else dtype
    filled = _combine_input_and_mask(norm, input, mask, ord)
    _check_strided(filled, "masked norm")
    return torch.linalg.vector_norm(filled, ord, _canonical_dim(dim, input.ndim), bool(keepdim),
                                    dtype=dtype)


def _std_var(input, dim, unbiased, *, correction, keepdim, dtype, mask, take_sqrt) -> Tensor:
    """Variance (or its square root) of the kept elements: the masked mean,
    then the masked sum of squared deviations over (count - correction),
    clamped at 0; NaN where nothing is kept."""
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    if correction is not None:
        correction = torch.sym_float(correction)
    else:
        correction = 1.0 if unbiased is None or unbiased else 0.0
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = torch.float32
    compute_dtype = dtype if (dtype.is_floating_point or dtype.is_complex) else torch.float32
    _check_strided(input, "masked std/var")
    total, count, inmask = _sum_and_count(input, dim, True, dtype, mask)
    deviation = torch.subtract(input, torch.divide(total, count))
    squares = sum(deviation * deviation.conj(), dim, keepdim=keepdim, dtype=compute_dtype,
                  mask=inmask)
    if not keepdim:
        count = count.reshape(squares.shape)
    if correction != 0:
        real = compute_dtype.to_real() if compute_dtype.is_complex else compute_dtype
        count = torch.subtract(count.to(real), correction)
        count = torch.maximum(count, count.new_zeros([]))
    result = torch.divide(squares, count).to(dtype=dtype)
    return torch.sqrt(result) if take_sqrt else result


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor:
    """Variance over ``dim`` of the kept elements (``correction`` defaults to 1)."""
    return _std_var(input, dim, unbiased, correction=correction, keepdim=keepdim, dtype=dtype,
                    mask=mask, take_sqrt=False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor:
    """Standard deviation over ``dim`` of the kept elements."""
    return _std_var(input, dim, unbiased, correction=correction, keepdim=keepdim, dtype=dtype,
                    mask=mask, take_sqrt=True)


def _softmax_like(fn, identity_op, input, dim, dtype, mask) -> Tensor:
    """``fn`` (a softmax of nn.functional) along ``dim`` with masked-out elements
    given zero weight (-inf for softmax, +inf for softmin)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    filled = _combine_input_and_mask(identity_op, input, mask)
    _check_strided(filled, f"masked {fn.__name__}")
    return fn(filled, d, dtype=dtype)


def softmax(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Softmax along ``dim`` over the kept elements; masked-out ones get 0."""
    return _softmax_like(torch.nn.functional.softmax, amax, input, dim, dtype, mask)


def log_softmax(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Log-softmax along ``dim`` over the kept elements; masked-out ones get -inf."""
    return _softmax_like(torch.nn.functional.log_softmax, amax, input, dim, dtype, mask)


def softmin(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Softmin along ``dim`` over the kept elements; masked-out ones get 0."""
    return _softmax_like(torch.nn.functional.softmin, amin, input, dim, dtype, mask)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None) -> Tensor:
    """``input / max(norm(input, ord, dim), eps)`` with the norm over the kept
    elements; masked-out elements of the result are 0."""
    dtype = input.dtype if dtype is None else dtype
    filled = _combine_input_and_mask(sum, input, mask)
    _check_strided(filled, "masked normalize")
    denom = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return torch.divide(filled, torch.maximum(denom, denom.new_full([], eps)))
