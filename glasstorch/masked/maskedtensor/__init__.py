"""``torch.masked.maskedtensor``: the MaskedTensor subclass and the tables of
ops it implements (torch/masked/maskedtensor/)."""
from .core import is_masked_tensor, MaskedTensor  # noqa: F401
