"""Shape ops of a MaskedTensor (torch/masked/maskedtensor/passthrough.py):
run once on the data and once on the mask, so the mask follows the elements."""
import glasstorch as torch

from .core import _map_mt_args_kwargs, _wrap_result

__all__ = []

PASSTHROUGH_FNS = [getattr(torch.ops.aten, name) for name in (
    "select", "transpose", "split", "t", "slice", "slice_backward", "select_backward", "index",
    "expand", "view", "_unsafe_view", "_reshape_alias", "cat", "unsqueeze", "unfold",
    "unfold_backward", "im2col", "col2im", "stack")]


def _is_pass_through_fn(fn):
    return fn in PASSTHROUGH_FNS


def _apply_pass_through_fn(fn, *args, **kwargs):
    data_args, data_kwargs = _map_mt_args_kwargs(args, kwargs, lambda x: x.get_data())
    mask_args, mask_kwargs = _map_mt_args_kwargs(args, kwargs, lambda x: x.get_mask())
    return _wrap_result(fn(*data_args, **data_kwargs), fn(*mask_args, **mask_kwargs))
