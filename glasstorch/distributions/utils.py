"""Helpers the distributions share (torch.distributions.utils)."""
from functools import update_wrapper
from numbers import Number

import glasstorch as torch
import glasstorch.nn.functional as F

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]


def _is_tensor_like(value):
    return isinstance(value, torch.Tensor) or hasattr(type(value), "__torch_function__")


def broadcast_all(*values):
    """The values broadcast together; numbers become tensors of the first tensor's
    dtype and device (the default dtype when there is none)."""
    if not all(_is_tensor_like(v) or isinstance(v, Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(_is_tensor_like(v) for v in values):
        options = {"dtype": torch.get_default_dtype()}
        for v in values:
            if isinstance(v, torch.Tensor):
                options = {"dtype": v.dtype, "device": v.device}
                break
        values = [v if _is_tensor_like(v) else torch.tensor(v, **options) for v in values]
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    """N(0, 1) draws of ``shape``: ``empty(...).normal_()``, PyTorch's stream."""
    return torch.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from log-odds (binary) or unnormalized log-probabilities."""
    if is_binary:
        return torch.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """``probs`` clamped into [eps, 1 - eps] of its dtype."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Log-odds (binary) or log-probabilities of clamped ``probs``."""
    clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(clamped) - torch.log1p(-clamped)
    return torch.log(clamped)


class lazy_property:
    """A method computed on first access (with grad enabled) and then stored on the
    instance, replacing the descriptor."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy property looks like on the class: a property as well."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    arange = torch.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below diagonal ``diag``) of the last two dims,
    row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: a lower-triangular matrix filled row by
    row from the last dim."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]
                             + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > torch.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         f"expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + torch.Size((n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
