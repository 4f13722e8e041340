"""quantile and nanquantile: CompositeImplicitAutograd, as in ATen's native/Sorting.cpp.

The input is sorted along the reduced dim (flattened when ``dim`` is None), each
q becomes a fractional rank in [0, n - 1], and the values at the ranks below and
above are gathered and interpolated (linear, lower, higher, midpoint, nearest).
Every step is an op, so autograd records the gathers and the lerp.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from ..._core import dispatch_key as dk, dtype as dt
from ..._core.layout import strided
from ..._core.tls import state as _tls
from ..registry import _resize_out
from ..structured import wrap_dim
from . import kernel

__all__ = []

aten = ops.aten
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _checks(self, q):
    """Sorting.cpp's quantile_checks (nanquantile's messages say quantile() too)."""
    if self.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self.dtype not in (dt.float32, dt.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype is not self.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if q.device != self.device:
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
    # Checked on CPU only (no accelerator sync), and only on concrete values
    # (is_scalar_tensor_true: a fake or subclass q is not read).
    if self.device.type == "cpu" and not (_tls.dispatch_modes or q._keys & dk.PYTHON) and not \
            bool(aten.all.default(aten.logical_and.default(aten.ge.Scalar(q, 0),
                                                           aten.le.Scalar(q, 1)))):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")


def _output_shape(self, q, dim, keepdim):
    """q's length first (a 1-d q), then the input's shape with ``dim`` removed
    (kept as 1 with keepdim; every dim reduced when ``dim`` is None)."""
    if dim is not None and self.dim() > 0:
        shape = list(self.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
    else:
        shape = [1] * self.dim() if keepdim else []
    return ([q.numel()] if q.dim() > 0 else []) + shape


def _quantile(self, q, dim, keepdim, interpolation, ignore_nan):
    if not isinstance(q, type(self)):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        q = aten.scalar_tensor.default(q, dtype=self.dtype, layout=strided, device=self.device)
    _checks(self, q)
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if dim is not None:
        dim = wrap_dim(dim, self.dim())
    out_shape = _output_shape(self, q, dim, keepdim)

    if dim is None:
        source = aten.reshape.default(self, [self.numel()])     # ATen's flatten
    elif dim == self.dim() - 1:
        source = self
    else:
        source = aten.transpose.int(aten.unsqueeze.default(self, -1), dim, -1)
    values = aten.sort.default(source)[0]
    # View the sorted rows as (*out_shape without q's dim, n), q treated as 1-d.
    in_shape = (out_shape[1:] if q.dim() > 0 else out_shape) + [values.shape[-1]]
    values = aten.view.default(values, in_shape)
    if values.shape[-1] > 2 ** 24:
        raise RuntimeError("quantile() input tensor is too large")

    if ignore_nan:
        is_nan = aten.isnan.default(values)
        # Ranks over the non-NaN values; an all-NaN row gets rank 0 (its value is NaN).
        count = aten.sum.dim_IntList(aten.logical_not_.default(is_nan), [-1], True)
        ranks = aten.mul.Tensor(q, aten.sub.Scalar(count, 1))
        aten.masked_fill_.Scalar(ranks, aten.lt.Scalar(ranks, 0), 0)
    else:
        # A row holding a NaN takes the last rank: its sorted value, NaN.
        last = values.shape[-1] - 1
        ranks = aten.mul.Scalar(q, last)
        ranks, has_nan = aten.broadcast_tensors.default(
            [ranks, aten.any.dim(aten.isnan.default(values), -1, True)])
        ranks = aten.masked_fill.Scalar(ranks, has_nan, last)
    if interpolation == "lower":
        aten.floor_.default(ranks)
    elif interpolation == "higher":
        aten.ceil_.default(ranks)
    elif interpolation == "nearest":
        aten.round_.default(ranks)

    below = _as_index(ranks)
    result = aten.gather.default(values, -1, below)
    if interpolation in ("linear", "midpoint"):
        weights = aten.full_like.default(ranks, 0.5) if interpolation == "midpoint" else \
            aten.sub.Tensor(ranks, below)
        above = aten.gather.default(values, -1, _as_index(aten.ceil_.default(ranks)))
        aten.lerp_.Tensor(result, above, weights)
    # In place, as ATen reshapes its result (autograd then records SqueezeBackward4).
    if q.dim() == 0:
        return aten.squeeze_.dim(result, -1)
    aten.transpose_.default(aten.unsqueeze_.default(result, 0), 0, -1)
    return aten.squeeze_.dim(result, -1)


def _as_index(ranks):
    """The ranks as int64 indices (ATen's ``toType`` with the tensor's options)."""
    return aten._to_copy.default(ranks, dtype=dt.int64, layout=strided, device=ranks.device)


def _into(out, self, result):
    """quantile_out: ``out`` must have the input's dtype; it is resized and filled."""
    if out.dtype is not self.dtype:
        raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    if tuple(out.shape) != tuple(result.shape):
        _resize_out(out, result.shape)
    return aten.copy_.default(out, result)


def _register(name, ignore_nan):
    @kernel(name)
    def functional(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _quantile(self, q, dim, keepdim, interpolation, ignore_nan)

    @kernel(name + "_out")
    def out_variant(self, q, dim=None, keepdim=False, *, interpolation="linear", out):
        return _into(out, self, _quantile(self, q, dim, keepdim, interpolation, ignore_nan))


_register("quantile", False)
_register("nanquantile", True)
