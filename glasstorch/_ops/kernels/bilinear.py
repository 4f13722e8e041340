"""Bilinear maps (ATen's Linear.cpp: bilinear, _trilinear).

    _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim)
        out = sum over ``sumdim`` of  i1' * i2' * i3'
        where each i_k' is i_k with size-1 dims inserted at ``expand_k``, all
        three then spanning len(i1.shape) + len(expand1) dims; the summed dims
        are dropped from the result.
    bilinear(x1, x2, W, b)   out[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]
        (CompositeImplicitAutograd: inputs flattened to 2-d, then
        _trilinear(x1, W, x2, [1, 3], [0], [1, 2], [2, 3]), as PyTorch does)

_trilinear's gradient is _trilinear again, with the roles of an input's
expand list and ``sumdim`` swapped (autograd/formulas/nn.py).
"""
from __future__ import annotations

import string

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..structured import TensorMeta, wrap_dim
from . import impl, kernel, meta
from ._common import _rounded

aten = ops.aten


def _trilinear_layout(i1, i2, i3, expand1, expand2, expand3, sumdim):
    """Per input, the dims of the full space its own dims occupy; and the full
    space's sizes."""
    total = len(i1._shape) + len(expand1)
    expands = [{wrap_dim(d, total) for d in e} for e in (expand1, expand2, expand3)]
    summed = {wrap_dim(d, total) for d in sumdim}
    placed, sizes = [], [None] * total
    for t, expand in zip((i1, i2, i3), expands):
        own = [d for d in range(total) if d not in expand]
        if len(own) != len(t._shape):
            raise RuntimeError(f"number of dimensions of the inputs of _trilinear must match: "
                               f"expected {len(own)}, got {len(t._shape)}")
        for d, n in zip(own, t._shape):
            if sizes[d] is not None and sizes[d] != n:
                raise RuntimeError("non-broadcast dimensions must match")
            sizes[d] = n
        placed.append(own)
    return placed, [1 if n is None else n for n in sizes], summed


@meta("_trilinear")
def trilinear_meta(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    for t in (i2, i3):
        if t.dtype is not i1.dtype:
            raise RuntimeError(f"expected scalar type {i1.dtype._short} but found "
                               f"{t.dtype._short}")
    _, sizes, summed = _trilinear_layout(i1, i2, i3, expand1, expand2, expand3, sumdim)
    return TensorMeta(tuple(n for d, n in enumerate(sizes) if d not in summed), i1.dtype)


@impl("_trilinear")
def trilinear_impl(out, i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    placed, sizes, summed = _trilinear_layout(i1, i2, i3, expand1, expand2, expand3, sumdim)
    letters = string.ascii_letters
    subscripts = ",".join("".join(letters[d] for d in own) for own in placed)
    result = "".join(letters[d] for d in range(len(sizes)) if d not in summed)
    compute = out.dtype.opmath
    arrays = [t._np().astype(compute, copy=False) for t in (i1, i2, i3)]
    if out.dtype in (dt.float16, dt.bfloat16):
        total = len(sizes)
        full = [a.reshape([a.shape[own.index(d)] if d in own else 1 for d in range(total)])
                for a, own in zip(arrays, placed)]
        _trilinear_reduced(out, full, placed[2], summed, wrap_dim(unroll_dim, total))
        return
    np.copyto(out._np(), np.einsum(f"{subscripts}->{result}", *arrays, optimize=True),
              casting="unsafe")


def _trilinear_reduced(out, full, own3, summed, unroll):
    """float16/bfloat16 _trilinear in ATen's steps, each a tensor of the dtype:
    per index of ``unroll_dim``, ``sumproduct_pair(i1, i2)`` over the summed dims
    i3 lacks, then with i3 over the summed dims it has (products summed in
    float32, each result rounded), added into the zeroed output (one rounding
    per addition where the unrolled dim is itself summed)."""
    i1, i2, i3 = full
    dims12 = tuple(d for d in sorted(summed) if d != unroll and d not in own3)
    dims23 = tuple(d for d in sorted(summed) if d != unroll and d in own3)
    step = _rounded(np.sum(i1 * i2, axis=dims12, keepdims=True), out.dtype)
    step = _rounded(np.sum(step * i3, axis=dims23, keepdims=True), out.dtype)
    if unroll in summed:
        parts = np.moveaxis(step, unroll, 0).astype(out.dtype.numpy)
        acc = np.zeros_like(parts[0])
        for part in parts:
            acc = acc + part
        step = np.expand_dims(acc, unroll)
    np.copyto(out._np(), step.reshape(out._shape), casting="unsafe")


@kernel("bilinear")
def bilinear(input1, input2, weight, bias=None):
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)]
    if bias is not None:
        tensors.append(("bias", bias))
    if any(t.dtype is not input1.dtype for _, t in tensors):
        raise RuntimeError("All tensors must have the same dtype, got "
                           + ", ".join(f"{n}: {dt.type_meta_name(t.dtype)}" for n, t in tensors))
    s1, s2, sw = tuple(input1._shape), tuple(input2._shape), tuple(weight._shape)
    if len(s1) != len(s2):
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {len(s1)} and "
                           f"{len(s2)}")
    for i in range(len(s1) - 1):
        if s1[i] != s2[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {s1[i]} and {s2[i]}")
    if s1[-1] != sw[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {s1[-1]} "
                           f"but expected {sw[1]}")
    if s2[-1] != sw[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {s2[-1]} "
                           f"but expected {sw[2]}")
    if bias is not None and bias._shape[0] != sw[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias._shape[0]} but expected {sw[0]}")
    flat1 = aten.reshape.default(input1, [-1, s1[-1]])
    flat2 = aten.reshape.default(input2, [-1, s2[-1]])
    out = aten._trilinear.default(flat1, weight, flat2, [1, 3], [0], [1, 2], [2, 3])
    out = aten.reshape.default(out, list(s1[:-1]) + [sw[0]])
    return aten.add.Tensor(out, bias) if bias is not None else out
