"""Padded and packed sequences (ATen's PackedSequence.cpp).

    pad_sequence(seqs)                 (T_max, B, *) (or (B, T_max, *)) filled with
                                       padding_value, each sequence copied in at the
                                       start (padding_side right) or the end (left)
    _pack_padded_sequence(x, lengths)  the valid steps, time-major: ``data`` (sum(lengths), *)
                                       and ``batch_sizes[t]`` = number of sequences longer than t
    _pad_packed_sequence(data, bs)     the inverse: padded (T, B, *) and the lengths
    _pack_padded_sequence_backward     scatters the packed gradient back into a zero
                                       padded tensor

``lengths`` and ``batch_sizes`` are CPU int64 tensors (read here as Python ints).
Only _pack_padded_sequence has a kernel of its own (CompositeExplicitAutograd,
with a gradient formula); the rest are decompositions.
"""
from __future__ import annotations

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..structured import empty_tensor
from . import kernel

aten = ops.aten


def _check_long_cpu(tensor) -> None:
    if tensor.dim() != 1 or tensor.device.type != "cpu" or tensor.dtype is not dt.int64:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{tensor.dim()}D {tensor.device.type} {tensor.dtype._short} tensor")


@kernel("pad_sequence")
def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    max_len = max(s._shape[0] for s in sequences)
    lead = [len(sequences), max_len] if batch_first else [max_len, len(sequences)]
    out = aten.full.default(lead + list(first._shape[1:]), padding_value, dtype=first.dtype,
                            device=first.device)
    for i, seq in enumerate(sequences):
        length = seq._shape[0]
        start = 0 if padding_side == "right" else max_len - length
        if batch_first:
            target = aten.slice.Tensor(aten.select.int(out, 0, i), 0, start, start + length)
        else:
            target = aten.select.int(aten.slice.Tensor(out, 0, start, start + length), 1, i)
        aten.copy_.default(target, seq)
    return out


@kernel("_pack_padded_sequence")
def pack_padded_sequence(input, lengths, batch_first):
    if batch_first:
        input = aten.transpose.int(input, 0, 1)
    _check_long_cpu(lengths)
    batch_size = input._shape[1]
    values = [int(v) for v in lengths.tolist()]
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(values) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(values)} (batch_size={batch_size})")
    if values[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(values, values[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    # Scanning from the shortest sequence: each time the length grows, the block of
    # steps [previous length, new length) of the sequences still running is appended.
    step_shape = [-1] + list(input._shape[2:])
    blocks, batch_sizes, previous = [], [], 0
    for running in range(batch_size, 0, -1):
        length = values[running - 1]
        if length > previous:
            block = aten.slice.Tensor(aten.slice.Tensor(input, 0, previous, length), 1, 0,
                                      running)
            blocks.append(aten.view.default(aten.contiguous.default(block), step_shape))
            batch_sizes.extend([running] * (length - previous))
            previous = length
    return aten.cat.default(blocks, 0), _int64_tensor(batch_sizes)


def _int64_tensor(values):
    """A CPU int64 tensor holding ``values`` (the batch sizes or lengths)."""
    out = empty_tensor((len(values),), dt.int64)
    out._np()[:] = values
    return out


@kernel("_pack_padded_sequence_backward")
def pack_padded_sequence_backward(grad, input_size, batch_sizes, batch_first):
    size = list(input_size)
    if batch_first:
        size[0], size[1] = size[1], size[0]
    grad_input = aten.zeros.default(size, dtype=grad.dtype, device=grad.device)
    _check_long_cpu(batch_sizes)
    offset = 0
    for step, batch in enumerate(int(b) for b in batch_sizes.tolist()):
        target = aten.slice.Tensor(aten.select.int(grad_input, 0, step), 0, 0, batch)
        aten.copy_.default(target, aten.slice.Tensor(grad, 0, offset, offset + batch))
        offset += batch
    return aten.transpose.int(grad_input, 0, 1) if batch_first else grad_input


@kernel("_pad_packed_sequence")
def pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length):
    _check_long_cpu(batch_sizes)
    sizes = [int(b) for b in batch_sizes.tolist()]
    max_batch, steps = sizes[0], len(sizes)
    if total_length > 0:
        if total_length < steps:
            raise RuntimeError(f"Expected total_length to be at least the length of the "
                               f"longest sequence in input, but got total_length={total_length}"
                               f" and max sequence length being {steps}")
        steps = total_length
    trailing = list(data._shape[1:])
    output = aten.full.default([steps, max_batch] + trailing, padding_value, dtype=data.dtype,
                               device=data.device)
    # Runs of equal batch size are one rectangular block of ``data``: copy each at once.
    lengths = [0] * max_batch
    offset, run_start = 0, 0
    for i in range(len(sizes) + 1):
        batch = sizes[i] if i < len(sizes) else 0
        previous = sizes[run_start]
        if batch != previous:
            count = previous * (i - run_start)
            block = aten.view.default(aten.slice.Tensor(data, 0, offset, offset + count),
                                      [i - run_start, previous] + trailing)
            target = aten.slice.Tensor(aten.slice.Tensor(output, 0, run_start, i), 1, 0,
                                       previous)
            aten.copy_.default(target, block)
            offset += count
            for j in range(batch, previous):
                lengths[j] = i
            run_start = i
    if batch_first:
        output = aten.transpose.int(output, 0, 1)
    return output, _int64_tensor(lengths)
