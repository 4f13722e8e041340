"""``torch.nn.utils.rnn``: PackedSequence and the pad/pack helpers.

A PackedSequence holds the valid timesteps of a batch of sequences, time-major
(``data``), with ``batch_sizes[t]`` the number of sequences still running at
step t (a CPU int64 tensor); ``sorted_indices`` records how the batch was
reordered by decreasing length when packing did not require sorted input.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ... import (arange, as_tensor, empty_like, float16, float32, float64, int8, int16, int32,
                 int64, sort, uint8)
from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

aten = ops.aten


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """Made by pack_padded_sequence / pack_sequence, consumed by RNN, LSTM and GRU."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        else:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data`` converted as ``Tensor.to`` would; the indices follow its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        non_blocking = kwargs.get("non_blocking", False)

        def follow(t):
            return t.to(data.device, non_blocking=non_blocking)
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, follow),
                          _bind(self.unsorted_indices, follow))

    def cpu(self, *args, **kwargs):
        return self.to(*args, **{**kwargs, "device": "cpu"})

    def double(self):
        return self.to(dtype=float64)

    def float(self):
        return self.to(dtype=float32)

    def half(self):
        return self.to(dtype=float16)

    def long(self):
        return self.to(dtype=int64)

    def int(self):
        return self.to(dtype=int32)

    def short(self):
        return self.to(dtype=int16)

    def char(self):
        return self.to(dtype=int8)

    def byte(self):
        return self.to(dtype=uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The inverse of a permutation of 0..n-1 (``None`` stays ``None``)."""
    if permutation is None:
        return None
    output = empty_like(permutation)
    output.scatter_(0, permutation, arange(0, permutation.numel(), device=permutation.device))
    return output


def pack_padded_sequence(input, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (T, B, *) batch (or (B, T, *) with ``batch_first``) of
    sequences of the given lengths; unsorted lengths need ``enforce_sorted=False``."""
    if not isinstance(lengths, Tensor):
        lengths = as_tensor(lengths, dtype=int64, device="cpu")
    else:
        lengths = lengths.to(dtype=int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = aten._pack_padded_sequence.default(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """Inverse of pack_padded_sequence: (padded batch, lengths), in the original order."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
        max_seq_length = total_length
    padded_output, lengths = aten._pad_packed_sequence.default(
        sequence.data, sequence.batch_sizes, batch_first, padding_value, max_seq_length)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return (padded_output.index_select(batch_dim, unsorted_indices),
                lengths[unsorted_indices.cpu()])
    return padded_output, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """Stack variable-length sequences (L_i, *) into one padded (T_max, B, *) tensor."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    return aten.pad_sequence.default(list(sequences), batch_first, padding_value, padding_side)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """Split a padded batch back into its sequences (transposes a time-major input in
    place, as PyTorch does)."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    idx = arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """pack_padded_sequence of pad_sequence(sequences)."""
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences a PackedSequence holds."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
