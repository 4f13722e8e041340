"""``torch.masked``: reductions and normalizations that skip masked-out
elements (``_ops``), and the prototype ``MaskedTensor`` subclass that carries
its mask through ops (``maskedtensor``), as torch/masked/__init__.py."""
from ._ops import (  # noqa: F401  (the private helpers torch.masked re-exports too)
    _canonical_dim,
    _combine_input_and_mask,
    _input_mask,
    _output_mask,
    _reduction_identity,
    _where,
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logaddexp,
    logsumexp,
    mean,
    median,
    norm,
    normalize,
    prod,
    softmax,
    softmin,
    std,
    sum,
    var,
)
from .maskedtensor.core import is_masked_tensor, MaskedTensor
from .maskedtensor.creation import as_masked_tensor, masked_tensor

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
           "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp", "masked_tensor",
           "MaskedTensor", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
