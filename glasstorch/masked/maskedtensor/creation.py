"""``torch.masked.masked_tensor`` / ``as_masked_tensor``
(torch/masked/maskedtensor/creation.py): the MaskedTensor analogues of
``torch.tensor`` (a new leaf) and ``torch.as_tensor`` (keeps autograd history)."""
from .core import MaskedTensor

__all__ = ["as_masked_tensor", "masked_tensor"]


def masked_tensor(data, mask, requires_grad=False) -> MaskedTensor:
    """A MaskedTensor leaf holding copies of ``data`` and ``mask``."""
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask) -> MaskedTensor:
    """A MaskedTensor whose gradient flows back to ``data``."""
    return MaskedTensor._from_values(data, mask)
