"""Reductions of a MaskedTensor (torch/masked/maskedtensor/reductions.py):
torch.masked's reduction over the kept elements; the result is masked where
no element was kept (``any`` of the mask over the reduced dims)."""
import glasstorch as torch

from .core import _apply_from, is_masked_tensor
from .creation import as_masked_tensor

__all__ = []

REDUCE_NAMES = ["sum", "mean", "amin", "amax", "argmin", "argmax", "prod", "all", "norm", "var",
                "std"]


def _masked_all(data, dim=None, keepdim=False, *, mask=None):
    """``all`` counting masked-out elements as True."""
    if mask is not None:
        data = data.masked_fill(~mask, True)
    return data.all() if dim is None else torch.all(data, dim=dim, keepdim=keepdim)


def _multidim_any(mask, dim, keepdim):
    for d in sorted([dim] if isinstance(dim, int) else dim, reverse=True):
        mask = torch.any(mask, dim=d, keepdim=keepdim)
    return mask


def _get_masked_fn(fn):
    return _masked_all if fn == "all" else getattr(torch.masked, fn)


def _reduce_all(fn, self):
    mask = self.get_mask()
    if fn == "all":
        result = _masked_all(self.get_data(), mask=mask)
    else:
        result = _get_masked_fn(fn)(self, mask=mask)
    return as_masked_tensor(result, torch.any(mask))


def _reduce_dim(fn, self, dim, keepdim=False, dtype=None):
    if not is_masked_tensor(self):
        raise TypeError("Input to reduce_dim must be a MaskedTensor")
    mask = self.get_mask()
    if fn == "all":
        result = _masked_all(self.get_data(), dim=dim, keepdim=keepdim, mask=mask)
    else:
        result = _get_masked_fn(fn)(self, dim=dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return as_masked_tensor(result, _multidim_any(mask, dim, keepdim))


def _torch_reduce(fn):
    """``x.sum()`` reduces everything; any other call takes (dim, keepdim, dtype)."""
    def reduce_fn(*args, **kwargs):
        if len(args) == 1 and not kwargs:
            return _reduce_all(fn, args[0])
        return _reduce_dim(fn, *args, **kwargs)
    return reduce_fn


NATIVE_REDUCE_MAP = {getattr(torch.ops.aten, n): _torch_reduce(n) for n in REDUCE_NAMES}
TORCH_REDUCE_MAP = {getattr(torch, n): _torch_reduce(n) for n in REDUCE_NAMES}
TENSOR_REDUCE_MAP = {getattr(torch.Tensor, n): _torch_reduce(n) for n in REDUCE_NAMES}

NATIVE_REDUCE_FNS = list(NATIVE_REDUCE_MAP)
TORCH_REDUCE_FNS = list(TORCH_REDUCE_MAP)
TENSOR_REDUCE_FNS = list(TENSOR_REDUCE_MAP)


def _apply_reduction(fn, *args, **kwargs):
    return _apply_from((NATIVE_REDUCE_MAP, TORCH_REDUCE_MAP, TENSOR_REDUCE_MAP), fn, *args,
                       **kwargs)
