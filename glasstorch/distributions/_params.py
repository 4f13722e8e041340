"""What most distributions' constructors and ``expand`` share: broadcasting the
parameters together and expanding them to a new batch shape (PyTorch writes this
out per class)."""
from numbers import Number

import glasstorch as torch
from .utils import broadcast_all


def set_broadcast(dist, names, values):
    """Store ``values`` broadcast together under ``names``; return the batch shape
    (empty when every value is a plain number)."""
    tensors = broadcast_all(*values)
    for name, tensor in zip(names, tensors):
        setattr(dist, name, tensor)
    if all(isinstance(v, Number) for v in values):
        return torch.Size()
    return tensors[0].size()


def expand_params(dist, cls, batch_shape, names, _instance=None, event_shape=None):
    """A new ``cls`` with the tensors ``names`` (those present) expanded to
    ``batch_shape`` (plus ``event_shape``), validation as ``dist``'s."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = torch.Size(batch_shape)
    event_shape = dist._event_shape if event_shape is None else event_shape
    for name in names:
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(batch_shape + event_shape))
    super(cls, new).__init__(batch_shape, event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new


def probs_or_logits(probs, logits):
    """The one of ``probs`` / ``logits`` given (PyTorch's error when not exactly one)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)
