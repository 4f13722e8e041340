"""``MaskedTensor`` (torch/masked/maskedtensor/core.py): a wrapper tensor
subclass holding a data tensor and a bool mask of the same shape.  Ops reach
it through ``__torch_function__`` (reductions, which become torch.masked's
reductions) and ``__torch_dispatch__`` (elementwise and shape ops, which run
on the data and carry the mask); the tables live in ``_ops_refs``.  Only
strided data and masks are supported (PyTorch also takes sparse COO/CSR)."""
from __future__ import annotations

import warnings

import glasstorch as torch

__all__ = ["MaskedTensor", "is_masked_tensor"]

_SUPPORTED_DTYPES = {torch.float16, torch.float32, torch.float64, torch.bool, torch.int8,
                     torch.int16, torch.int32, torch.int64}


def is_masked_tensor(obj, /) -> bool:
    """Whether ``obj`` is a MaskedTensor."""
    return isinstance(obj, MaskedTensor)


def _tensors_match(a, b, exact=True, rtol=1e-05, atol=1e-08) -> bool:
    """Two plain tensors of one layout with equal (or close) values."""
    if is_masked_tensor(a) or is_masked_tensor(b):
        raise ValueError("Neither `a` nor `b` can be a MaskedTensor.")
    if a.layout != b.layout:
        raise ValueError(f"`a` and `b` must have the same layout. Got {a.layout} and {b.layout}")
    if a.dtype != b.dtype:
        b = b.type(a.dtype)
    if exact:
        return a.dim() == b.dim() and bool(torch.eq(a, b).all().item())
    return a.dim() == b.dim() and torch.allclose(a, b, rtol=rtol, atol=atol)


def _masks_match(a, b) -> bool:
    """Equal masks where both are MaskedTensors (anything else matches)."""
    if is_masked_tensor(a) and is_masked_tensor(b):
        return _tensors_match(a.get_mask(), b.get_mask(), exact=True)
    return True


def _map_mt_args_kwargs(args, kwargs, map_fn):
    """``args`` (as a list) and ``kwargs`` with ``map_fn`` applied to each
    MaskedTensor, also inside lists and tuples."""
    def one(a):
        if is_masked_tensor(a):
            return map_fn(a)
        if isinstance(a, (list, tuple)) and not torch.is_tensor(a):
            items = [one(x) for x in a]
            return items if isinstance(a, list) else tuple(items)
        return a
    return [one(a) for a in args], {k: one(v) for k, v in (kwargs or {}).items()}


def _wrap_result(result_data, result_mask):
    """MaskedTensors of the data and masks, through lists and tuples."""
    if isinstance(result_data, (list, tuple)):
        wrapped = [_wrap_result(r, m) for r, m in zip(result_data, result_mask)]
        return wrapped if isinstance(result_data, list) else tuple(wrapped)
    if torch.is_tensor(result_data):
        return MaskedTensor(result_data, result_mask)
    return NotImplemented


def _op_tables(names, inplace_names, helper):
    """(aten op -> handler) for ``names`` and for their in-place spellings
    ``inplace_names``: each handler is ``helper(op, args, kwargs, inplace)``."""
    def table(spellings, inplace):
        ops = [getattr(torch.ops.aten, n) for n in spellings]
        return {op: (lambda op: lambda *args, **kwargs: helper(op, args, kwargs, inplace))(op)
                for op in ops}
    return table(names, False), table(inplace_names, True)


def _apply_from(tables, fn, *args, **kwargs):
    """The handler of ``fn`` in the first of ``tables`` that has one, called."""
    for table in tables:
        if fn in table:
            return table[fn](*args, **kwargs)
    return NotImplemented


def _masked_tensor_str(data, mask, formatter) -> str:
    """Nested lists of the values, masked-out ones shown as ``--``."""
    if data.dim() == 1:
        items = [formatter.format(v) if isinstance(v, float) else str(v)
                 for v in data.tolist()]
        kept = mask.tolist()
        width = max((len(s) if k else 8) for s, k in zip(items, kept))
        return "[" + ", ".join(s if k else "--".rjust(width) for s, k in zip(items, kept)) + "]"
    rows = [_masked_tensor_str(d, m, formatter) for d, m in zip(data, mask)]
    rows = ["\n".join("  " + line for line in r.split("\n")) for r in rows]
    return "[\n" + ",\n".join(rows) + "\n]"


def _get_data(a):
    return a._masked_data if is_masked_tensor(a) else a


def _maybe_get_mask(a):
    return a.get_mask() if is_masked_tensor(a) else None


class MaskedTensor(torch.Tensor):
    """A tensor whose elements are valid only where ``mask`` is True."""

    @staticmethod
    def __new__(cls, data, mask, requires_grad=False):
        if is_masked_tensor(data) or not torch.is_tensor(data):
            raise TypeError("data must be a Tensor")
        if is_masked_tensor(mask) or not torch.is_tensor(mask):
            raise TypeError("mask must be a Tensor")
        warnings.warn("The PyTorch API of MaskedTensors is in prototype stage and will change in "
                      "the near future. Please open a Github issue for features requests and see "
                      "our documentation on the torch.masked module for further information "
                      "about the project.", UserWarning, stacklevel=2)
        if data.requires_grad:
            warnings.warn("It is not recommended to create a MaskedTensor with a tensor that "
                          "requires_grad. To avoid this, you can use data.detach().clone()",
                          UserWarning, stacklevel=2)
        return torch.Tensor._make_wrapper_subclass(
            cls, data.size(), device=data.device, dtype=data.dtype, layout=data.layout,
            requires_grad=requires_grad, dispatch_sizes_strides_policy="strides",
            dispatch_layout=True)

    def __init__(self, data, mask, requires_grad=False):
        if data.layout != mask.layout:
            raise TypeError("data and mask must have the same layout.")
        self._masked_data = data.clone()
        self._masked_mask = mask.clone()
        self._validate_members()

    def _validate_members(self):
        data, mask = self._masked_data, self.get_mask()
        if type(data) is not type(mask):
            raise TypeError(f"data and mask must have the same type. Got {type(data)} and "
                            f"{type(mask)}")
        if data.layout != torch.strided:
            if data.layout in {torch.sparse_coo, torch.sparse_csr}:
                raise NotImplementedError("glasstorch's MaskedTensor takes strided data only")
            raise TypeError(f"data layout of {data.layout} is not supported.")
        if mask.dtype != torch.bool:
            raise TypeError("mask must have dtype bool.")
        if data.dtype not in _SUPPORTED_DTYPES:
            raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
        if data.dim() != mask.dim():
            raise ValueError("data.dim() must equal mask.dim()")
        if data.size() != mask.size():
            raise ValueError("data.size() must equal mask.size()")

    @staticmethod
    def _from_values(data, mask):
        """A MaskedTensor of ``data`` whose gradient flows back to ``data``."""
        return _Constructor.apply(data, mask)

    def _set_data_mask(self, data, mask):
        self._masked_data = data
        self._masked_mask = mask
        self._validate_members()

    def __repr__(self):
        formatter = "{0:8.4f}"
        if self.dim() == 0:
            value = self.get_data().item()
            text = formatter.format(value) if isinstance(value, float) else str(value)
            kept = self.get_mask().item()
            return f"MaskedTensor({text if kept else '--'}, {kept})"
        body = _masked_tensor_str(self.get_data(), self.get_mask(), formatter)
        return "MaskedTensor(\n" + "\n".join("  " + line for line in body.split("\n")) + "\n)"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ._ops_refs import _MASKEDTENSOR_FUNCTION_TABLE
        kwargs = kwargs or {}
        if func in _MASKEDTENSOR_FUNCTION_TABLE:
            return _MASKEDTENSOR_FUNCTION_TABLE[func](*args, **kwargs)
        return super().__torch_function__(func, types, args, kwargs)

    @classmethod
    def unary(cls, fn, data, mask):
        return MaskedTensor(fn(data), mask)

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs):
        from ._ops_refs import _MASKEDTENSOR_DISPATCH_TABLE
        func = func.overloadpacket
        if func in _MASKEDTENSOR_DISPATCH_TABLE:
            return _MASKEDTENSOR_DISPATCH_TABLE[func](*args, **kwargs)
        warnings.warn(f"{func.__name__} is not implemented in __torch_dispatch__ for "
                      "MaskedTensor.\nIf you would like this operator to be supported, please "
                      "file an issue for a feature request at "
                      "https://github.com/pytorch/maskedtensor/issues with a minimal "
                      "reproducible code snippet.\nIn the case that the semantics for the "
                      "operator are not trivial, it would be appreciated to also include a "
                      "proposal for the semantics.", stacklevel=2)
        return NotImplemented

    def __lt__(self, other):
        return MaskedTensor(self.get_data() < _get_data(other), self.get_mask())

    def to_tensor(self, value):
        """The data with masked-out elements replaced by ``value``."""
        return self.get_data().masked_fill(~self.get_mask(), value)

    def get_data(self):
        """The data tensor; its gradient comes back as a MaskedTensor of this mask."""
        return _GetData.apply(self)

    def get_mask(self):
        return self._masked_mask

    def is_sparse_coo(self):
        return self.layout == torch.sparse_coo

    def is_sparse_csr(self):
        return self.layout == torch.sparse_csr

    @property
    def is_sparse(self):
        return self.is_sparse_coo() or self.is_sparse_csr()


class _Constructor(torch.autograd.Function):
    """MaskedTensor(data, mask), differentiable in ``data``."""

    @staticmethod
    def forward(ctx, data, mask):
        return MaskedTensor(data, mask)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class _GetData(torch.autograd.Function):
    """A MaskedTensor's data, differentiable: the gradient is masked like it."""

    @staticmethod
    def forward(ctx, self):
        ctx.mask = self.get_mask()
        return self._masked_data.detach()

    @staticmethod
    def backward(ctx, grad_output):
        if is_masked_tensor(grad_output):
            return grad_output
        return MaskedTensor(grad_output, ctx.mask)
