"""Sparse COO and compressed (CSR, CSC) tensors (ATen's native/sparse/:
SparseTensor.cpp, SparseTensorMath.cpp, SparseCsrTensor.cpp, SoftMax.cpp,
SparseBlas).

A sparse tensor is a ``Tensor`` whose key set has the Sparse (COO) or
SparseCsr functionality where a strided one has Dense, and whose storage slot
holds its component tensors (``_core/sparse_impl.py``).  The kernels here are
registered at SparseCPU / SparseCsrCPU (and SparseMeta where they only read
metadata), so an op with none of them raises the dispatcher's "Could not run
... from the 'SparseCPU' backend", as in PyTorch.

A compressed tensor is 2-d: CSR compresses its rows, CSC its columns, and
transposing one is the other over the same parts.  Kernels that compute take
a compressed operand through its COO tensor (``_compressed_to_coo``).

The component tensors are ordinary strided tensors, so most of the work is
ops on them (``aten.index_put_`` with accumulate sums duplicates as ATen's
sparse_to_dense does, values' dtypes promote as ATen's); numpy only keeps the
index bookkeeping (sorting, lines of a softmax, nonzero rows).  The parts of
a sparse tensor are never changed in place: an in-place op gives the tensor
new parts, so ``detach()`` (which shares them) is unaffected, as PyTorch's
shallow copies are.
"""
from __future__ import annotations

import numpy as np

from ..._core import dispatch_key as dk
from ..._core import dtype as dt
from ..._core.layout import sparse_coo, sparse_csc, sparse_csr, strided
from ..._core.sparse_impl import NoStrides, SparseCooParts, SparseCsrParts
from ..._core.tls import state as _tls
from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor, keys_for_device
from ..structured import result_type, wrap_dim
from ..._core.device import device as _device
from . import kernel
from ._common import _from_array
from .view import _detached, permutation

aten = ops.aten

_LONG = dt.int64
_CPU = _device("cpu")


# -- making sparse tensors ---------------------------------------------------------------

def sparse_keys(device, functionality: int) -> int:
    """The key set PyTorch gives a sparse tensor on ``device``: the dense one
    with Sparse (or SparseCsr) in place of Dense (SparseCPU, ADInplaceOrView,
    AutogradCPU, AutocastCPU)."""
    return (keys_for_device(device.type, _tls.inference_mode) & ~dk.DENSE) | functionality


def make_coo(indices, values, size, coalesced) -> Tensor:
    """A COO tensor over ``indices`` (sparse_dim x nnz, int64) and ``values``
    (nnz x dense sizes); SparseTensorImpl's constructor."""
    size = tuple(size)
    parts = SparseCooParts(indices, values, indices._shape[0], values.dim() - 1, bool(coalesced))
    out = Tensor._make(parts, size, (0,) * len(size), 0, values.dtype, values.device,
                       sparse_keys(values.device, dk.SPARSE))
    out._contiguous = False
    return out


def make_compressed(compressed_indices, plain_indices, values, size, layout=sparse_csr) -> Tensor:
    """A compressed tensor (SparseCsrTensorImpl) of ``layout``: offsets along the
    compressed dim (rows for CSR, columns for CSC), the other dim's index of
    each element, and the values; it has no strides."""
    size = tuple(size)
    parts = SparseCsrParts(compressed_indices, plain_indices, values, values.dim() - 1, layout)
    out = Tensor._make(parts, size, NoStrides(_SHORT[layout].upper()), 0, values.dtype,
                       values.device, sparse_keys(values.device, dk.SPARSE_CSR))
    out._contiguous = False
    return out


def _is_compressed(t) -> bool:
    return bool(t._keys & dk.SPARSE_CSR)


def _set_parts(self, other) -> Tensor:
    """An in-place op's result: ``self`` takes ``other``'s parts and sizes."""
    self._storage = other._storage
    self._shape = other._shape
    self._stride = other._stride
    self.dtype = other.dtype
    return self


def _shares(a, b) -> bool:
    return a is b or (a._storage is b._storage and a._shape == b._shape)


_SHORT = {sparse_csr: "Csr", sparse_csc: "Csc"}


def _layout_name(t) -> str:
    return t.layout.aten_name


# -- the constructor ------------------------------------------------------------------------

@kernel("sparse_coo_tensor_with_dims_and_tensors")
def sparse_coo_tensor_with_dims_and_tensors(sparse_dim, dense_dim, size, indices, values, *,
                                            dtype=None, layout=None, device=None,
                                            pin_memory=False, is_coalesced=None):
    """new_with_dims_and_tensor_sparse: the sparse tensor aliasing ``indices`` and
    ``values`` (no copy); without ``is_coalesced`` it is coalesced when nnz < 2."""
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({dense_dim}), but got {len(size)}")
    nnz = values._shape[0] if values.dim() else 0
    if indices.dim() != 2 or indices._shape[0] != sparse_dim:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices._shape)}")
    if indices._shape[1] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices._shape[1]}, nnz from values: {nnz}")
    coalesced = nnz < 2 if is_coalesced is None else is_coalesced
    return make_coo(_detached(indices), _detached(values), size, coalesced)


@kernel("validate_sparse_coo_tensor_args")
def validate_sparse_coo_tensor_args(indices, values, size, is_coalesced=None, check_pinning=None):
    """_validate_sparse_coo_tensor_args: the invariants check_invariants=True
    enforces (shapes, then every index within its size and non-negative)."""
    sparse_dim = indices._shape[0] if indices.dim() == 2 else None
    if sparse_dim is None:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices._shape)}")
    dense_dim = values.dim() - 1
    if sparse_dim + dense_dim != len(size):
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({dense_dim}), but got {len(size)}")
    if indices._shape[1] != values._shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices._shape[1]}, nnz from values: {values._shape[0]}")
    if tuple(values._shape[1:]) != tuple(size[sparse_dim:]):
        raise RuntimeError(f"values has incorrect size, expected {list(values._shape[:1]) + list(size[sparse_dim:])}, "
                           f"got {list(values._shape)}")
    if indices._storage._data is None or not indices._shape[1]:
        return None         # (meta and fake indices: no values to check)
    idx = indices._np()
    lows, highs = idx.min(axis=1), idx.max(axis=1)
    for d in range(sparse_dim):
        if lows[d] < 0:
            raise RuntimeError(f"found negative index {lows[d]} for dim {d}")
        if highs[d] >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {highs[d]}")
    if is_coalesced:
        flat = _linear(idx, size[:sparse_dim])
        if np.any(np.diff(flat) <= 0):
            raise RuntimeError("cannot set is_coalesced to true if indices correspond to "
                               "uncoalesced COO tensor")
    return None


@kernel("sparse_coo_tensor_unsafe")
def sparse_coo_tensor_unsafe(indices, values, size, *, dtype=None, layout=None, device=None,
                             pin_memory=None, is_coalesced=None):
    """_sparse_coo_tensor_unsafe: no checks; sparse_dim from indices, dense_dim from values."""
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    return aten._sparse_coo_tensor_with_dims_and_tensors.default(
        indices._shape[0], values.dim() - 1, list(size), indices, values, dtype=values.dtype,
        layout=sparse_coo, device=values.device, pin_memory=pin_memory, is_coalesced=is_coalesced)


@kernel("sparse_coo_tensor_indices")
def sparse_coo_tensor_indices(indices, values, *, dtype=None, layout=None, device=None,
                              pin_memory=None, is_coalesced=None):
    """sparse_coo_tensor(indices, values): the size is the smallest that holds
    every index (max + 1 per sparse dim), then the values' dense sizes."""
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices._shape)}")
    sparse_dim = indices._shape[0]
    if indices._shape[1]:
        highs = aten.amax.default(indices, [1]).tolist()
        sizes = [h + 1 for h in highs]
    else:
        sizes = [0] * sparse_dim
    return sparse_coo_tensor_indices_size(indices, values, sizes + list(values._shape[1:]),
                                          dtype=dtype, is_coalesced=is_coalesced)


@kernel("sparse_coo_tensor_indices_size")
def sparse_coo_tensor_indices_size(indices, values, size, *, dtype=None, layout=None,
                                   device=None, pin_memory=None, is_coalesced=None):
    """sparse_coo_tensor(indices, values, size): validated when invariant checks are on."""
    if _CHECK_INVARIANTS[0]:
        aten._validate_sparse_coo_tensor_args.default(indices, values, list(size), is_coalesced)
    return aten._sparse_coo_tensor_unsafe.default(indices, values, list(size), dtype=dtype,
                                                  is_coalesced=is_coalesced)


# torch.sparse.check_sparse_tensor_invariants' global switch (at::globalContext's flag)
_CHECK_INVARIANTS = [False]


@kernel("sparse_coo_tensor_size")
def sparse_coo_tensor_size(size, *, dtype=None, layout=None, device=None, pin_memory=False):
    """An empty COO tensor of ``size``: every dim sparse, nnz 0."""
    dtype = dtype or dt.get_default_dtype()
    indices = aten.empty.memory_format([len(size), 0], dtype=_LONG, device=device)
    values = aten.empty.memory_format([0], dtype=dtype, device=device)
    return make_coo(indices, values, size, True)


# -- metadata ------------------------------------------------------------------------------

@kernel("sparse_dim_sparse")
def sparse_dim_sparse(self):
    return self._storage.sparse_dim if self.is_sparse else 2


@kernel("dense_dim_sparse")
def dense_dim_sparse(self):
    return self._storage.dense_dim


@kernel("sparse_dim_default")
def sparse_dim_default(self):
    return 0


@kernel("dense_dim_default")
def dense_dim_default(self):
    return self.dim()


@kernel("nnz_sparse")
def nnz_sparse(self):
    return self._storage.values._shape[0]


@kernel("is_coalesced_sparse")
def is_coalesced_sparse(self):
    return self._storage.coalesced


@kernel("is_coalesced_default")
def is_coalesced_default(self):
    raise RuntimeError(f"is_coalesced expected sparse coordinate tensor layout but got "
                       f"{_layout_name(self)}")


@kernel("coalesced_sparse_")
def coalesced_sparse_(self, coalesced):
    """_coalesced_: set the flag (new parts: a shallow copy keeps its own)."""
    p = self._storage
    self._storage = SparseCooParts(p.indices, p.values, p.sparse_dim, p.dense_dim,
                                   bool(coalesced))
    return self


@kernel("indices_sparse_private")
def indices_sparse_private(self):
    """_indices: the indices as stored (an alias)."""
    return _detached(self._storage.indices)


@kernel("values_sparse_private")
def values_sparse_private(self):
    return _detached(self._storage.values)


@kernel("indices_sparse")
def indices_sparse(self):
    if _is_compressed(self):
        raise RuntimeError(f"indices expected sparse coordinate tensor layout but got "
                           f"{_layout_name(self)}")
    if not self._storage.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return _detached(self._storage.indices)


@kernel("values_sparse")
def values_sparse(self):
    parts = self._storage
    if isinstance(parts, SparseCooParts) and not parts.coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return _detached(parts.values)


def _compressed_part(self, name, layout, part):
    """crow_indices / col_indices (CSR), ccol_indices / row_indices (CSC)."""
    if self.layout is not layout:
        kind = "row" if layout is sparse_csr else "column"
        raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got "
                           f"{_layout_name(self)}")
    return _detached(getattr(self._storage, part))


@kernel("crow_indices_sparse_csr")
def crow_indices_sparse_csr(self):
    return _compressed_part(self, "crow_indices", sparse_csr, "compressed_indices")


@kernel("col_indices_sparse_csr")
def col_indices_sparse_csr(self):
    return _compressed_part(self, "col_indices", sparse_csr, "plain_indices")


@kernel("ccol_indices_sparse_csr")
def ccol_indices_sparse_csr(self):
    return _compressed_part(self, "ccol_indices", sparse_csc, "compressed_indices")


@kernel("row_indices_sparse_csr")
def row_indices_sparse_csr(self):
    return _compressed_part(self, "row_indices", sparse_csc, "plain_indices")


def _part_copy(part):
    """The kernel of ``<part>_copy``: a copy of what ``part()`` returns."""
    def copy(self):
        return aten.clone.default(getattr(aten, part).default(self))
    copy.__name__ = copy.__qualname__ = f"{part}_copy"
    copy.__doc__ = f"{part}_copy: a copy of ``{part}()`` (its view_copy form)."
    return kernel(copy.__name__)(copy)


for _part in ("indices", "values", "crow_indices", "col_indices", "ccol_indices", "row_indices"):
    _part_copy(_part)


# -- coalescing --------------------------------------------------------------------------

def _linear(idx: np.ndarray, sizes) -> np.ndarray:
    """Row-major linear positions of the sparse indices (columns of ``idx``)."""
    flat = np.zeros(idx.shape[1], dtype=np.int64)
    for d, n in enumerate(sizes):
        flat = flat * n + idx[d]
    return flat


@kernel("coalesce")
def coalesce(self):
    """coalesce: ``self`` if already coalesced, else _coalesce (CoalesceBackward0)."""
    if self.layout is not sparse_coo:
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got "
                           f"{_layout_name(self)}")
    if self._storage.coalesced:
        return self
    return aten._coalesce.default(self)


@kernel("coalesce_sparse_cpu")
def coalesce_sparse_cpu(self):
    """_coalesce: indices sorted and unique, duplicates' values summed in index order."""
    p = self._storage
    if p.values._shape[0] < 2:
        return make_coo(p.indices.clone(), p.values.clone(), self._shape, True)
    idx = p.indices._np()
    flat = _linear(idx, self._shape[:p.sparse_dim])
    order = np.argsort(flat, kind="stable")
    uniq, first = np.unique(flat[order], return_index=True)
    positions = np.empty(len(flat), dtype=np.int64)
    positions[order] = np.searchsorted(uniq, flat)[order]
    new_indices = _long(idx[:, order[first]])
    values = aten.new_zeros.default(p.values, [len(uniq), *p.values._shape[1:]])
    values.index_add_(0, _long(positions), p.values)
    return make_coo(new_indices, values, self._shape, True)


def _long(array) -> Tensor:
    """An int64 CPU tensor of index bookkeeping done in numpy."""
    array = np.asarray(array, dtype=np.int64)
    return _from_array(array, _LONG, _CPU)


# -- conversions -------------------------------------------------------------------------

@kernel("sparse_to_dense")
def sparse_to_dense(self, dtype=None, masked_grad=None):
    """_to_dense of a COO tensor: zeros, then each value added at its index
    (duplicates summed, in the stored order)."""
    if dtype is not None and dtype is not self.dtype:
        raise RuntimeError("dtype argument is not supported by sparse_to_dense")
    p = self._storage
    out = aten.zeros.default(list(self._shape), dtype=self.dtype, device=self.device)
    if p.values._shape[0]:
        out.index_put_(tuple(p.indices.unbind(0)), p.values, accumulate=True)
    return out


@kernel("sparse_compressed_to_dense")
def sparse_compressed_to_dense(self, dtype=None, masked_grad=None):
    return sparse_to_dense(_compressed_to_coo(self), dtype)


@kernel("to_dense")
def to_dense(self, dtype=None, *, masked_grad=None):
    """to_dense: a strided tensor is returned as it is; sparse ones go through _to_dense."""
    if self.layout is strided:
        return self if dtype is None or dtype is self.dtype else self.to(dtype)
    return aten._to_dense.default(self, dtype, masked_grad)


@kernel("to_dense_backward")
def to_dense_backward(grad, input, masked_grad=None):
    """The gradient of _to_dense: the dense gradient at the input's stored
    elements (masked, the default) or all of it in the input's layout."""
    if input.layout is strided:
        return grad
    masked = masked_grad is None or masked_grad
    if input.layout is sparse_csc:  # ATen's backward asks the CSC input for its contiguity
        input.is_contiguous()
    if input.layout is sparse_coo:
        return grad.sparse_mask(input.coalesce()) if masked else grad.to_sparse(input.sparse_dim())
    return grad.sparse_mask(input) if masked else grad.to_sparse(layout=input.layout)


_LAYOUTS = (sparse_coo, sparse_csr, sparse_csc)


@kernel("to_sparse_layout")
def to_sparse_layout(self, *, layout=None, blocksize=None, dense_dim=None):
    """to_sparse: the same tensor in a sparse layout (COO by default)."""
    if layout is not None and layout not in _LAYOUTS:
        raise RuntimeError(f"to_sparse: conversion to {layout} is not supported by glasstorch")
    if self.layout is (layout or sparse_coo) and dense_dim is None:
        return self
    return aten._to_sparse.default(self, layout=layout, blocksize=blocksize, dense_dim=dense_dim)


@kernel("to_sparse_dim")
def to_sparse_dim(self, sparse_dim):
    if self.is_sparse and self.sparse_dim() == sparse_dim:
        return self
    return aten._to_sparse.sparse_dim(self, sparse_dim)


@kernel("to_sparse_csr")
def to_sparse_csr(self, dense_dim=None):
    if self.layout is sparse_csr:
        return self
    return aten._to_sparse_csr.default(self, dense_dim)


@kernel("to_sparse_csc")
def to_sparse_csc(self, dense_dim=None):
    if self.layout is sparse_csc:
        return self
    return aten._to_sparse_csc.default(self, dense_dim)


_TO_COMPRESSED = {sparse_csr: "_to_sparse_csr", sparse_csc: "_to_sparse_csc"}


@kernel("dense_to_sparse")
def dense_to_sparse(self, *, layout=None, blocksize=None, dense_dim=None):
    """_to_sparse of a strided (or sparse) tensor, by layout."""
    if layout in _TO_COMPRESSED:
        return getattr(aten, _TO_COMPRESSED[layout]).default(self, dense_dim)
    return dense_to_sparse_dim(self, self.dim() - (dense_dim or 0))


@kernel("dense_to_sparse_dim")
def dense_to_sparse_dim(self, sparse_dim):
    """_to_sparse.sparse_dim: the COO tensor of a strided (or sparse) one, with
    the first ``sparse_dim`` dims sparse; coalesced."""
    if self.is_sparse:
        return sparse_coo_to_sparse(self, sparse_dim)
    if _is_compressed(self):
        return sparse_coo_to_sparse(_compressed_to_coo(self), sparse_dim)
    if sparse_dim > self.dim():
        raise RuntimeError(f"sparse_dim must be less than or equal to self.dim(), but got "
                           f"sparse_dim={sparse_dim} and self.dim()={self.dim()}")
    if self.device.type == "meta":
        raise NotImplementedError("Could not run 'aten::_to_sparse.sparse_dim' with arguments "
                                  "from the 'Meta' backend.")
    dense = self._np()
    rest = int(np.prod(dense.shape[sparse_dim:]))
    lead = dense.reshape(dense.shape[:sparse_dim] + (rest,))
    mask = np.any(lead != 0, axis=-1)
    positions = np.nonzero(mask)
    indices = _long(np.stack(positions) if positions else np.zeros((0, 1 if mask.size else 0)))
    values = aten.index.Tensor(self, [_long(p) for p in positions]) if sparse_dim else \
        aten.unsqueeze.default(self, 0) if mask.any() else \
        aten.new_empty.default(self, [0, *self._shape])
    return make_coo(indices, aten.clone.default(values), self._shape, True)


@kernel("sparse_coo_to_sparse")
def sparse_coo_to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """A COO tensor to another sparse_dim (through dense) or layout."""
    if layout in _TO_COMPRESSED:
        return coo_to_compressed(self, layout, dense_dim)
    if sparse_dim is None or sparse_dim == self._storage.sparse_dim:
        return self
    return dense_to_sparse_dim(aten._to_dense.default(self), sparse_dim)


@kernel("sparse_compressed_to_sparse")
def sparse_compressed_to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None,
                                dense_dim=None):
    """A compressed tensor in its own layout (itself), the other compressed one, or COO."""
    if layout is self.layout:
        return self
    coo = _compressed_to_coo(self)
    if layout in _TO_COMPRESSED:
        return coo_to_compressed(coo, layout, dense_dim)
    return coo if sparse_dim in (None, 2) else sparse_coo_to_sparse(coo, sparse_dim)


def _compressed_to_coo(self) -> Tensor:
    """The COO tensor of a compressed one, elements in its storage order: the
    compressed dim's index of each element from the offsets.  From CSR that
    order is coalesced; from CSC (column-major) ATen marks it coalesced only
    with one element or none in an empty matrix."""
    p = self._storage
    counts = np.diff(p.compressed_indices._np())
    outer = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    inner = p.plain_indices._np().astype(np.int64)
    csr = self.layout is sparse_csr
    indices = _long(np.stack([outer, inner] if csr else [inner, outer]))
    return make_coo(indices, p.values, self._shape,
                    csr or len(inner) == 1 or self.numel() == 0)


def _compressed_sizes_check(self, layout, dense_dim):
    if dense_dim:
        raise RuntimeError(f"dense_to_sparse_{_SHORT[layout].lower()}: dense_dim argument must "
                           f"be in [0,0] range, but {dense_dim} is given")
    if self.dim() != 2:
        raise RuntimeError(f"to_sparse_{_SHORT[layout].lower()}: expected 2-d input, got "
                           f"{self.dim()}-d (glasstorch has no batched compressed tensors)")


def dense_to_compressed(self, layout, dense_dim=None):
    """_to_sparse_csr / _to_sparse_csc: a 2-d strided, COO or compressed tensor
    in ``layout``."""
    if self.layout is layout:
        return self
    if self.is_sparse:
        return coo_to_compressed(self, layout, dense_dim)
    if _is_compressed(self):
        return coo_to_compressed(_compressed_to_coo(self), layout, dense_dim)
    _compressed_sizes_check(self, layout, dense_dim)
    return coo_to_compressed(dense_to_sparse_dim(self, 2), layout, dense_dim)


def coo_to_compressed(self, layout, dense_dim=None):
    """A 2-d COO tensor in ``layout``: coalesced (for CSC, its transpose); the
    offsets count the elements of each compressed row or column."""
    if self.dim() != 2 or self._storage.sparse_dim != 2:
        raise RuntimeError(f"Only tensors with two sparse dimensions can be converted to the "
                           f"Sparse{_SHORT[layout]} layout, got self with "
                           f"{self._storage.sparse_dim} sparse dimensions.")
    _compressed_sizes_check(self, layout, dense_dim)
    # CSC's parts are CSR's of the transpose; the plain indices view the
    # coalesced indices' second row, as ATen's do
    source = self if layout is sparse_csr else transpose_sparse(self, 0, 1)
    c = coalesce(source)._storage
    n = source._shape[0]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(c.indices._np()[0], minlength=n), out=offsets[1:])
    return make_compressed(_long(offsets), aten.select.int(c.indices, 0, 1), c.values,
                           self._shape, layout)


@kernel("dense_to_sparse_csr")
def dense_to_sparse_csr(self, dense_dim=None):
    return dense_to_compressed(self, sparse_csr, dense_dim)


@kernel("dense_to_sparse_csc")
def dense_to_sparse_csc(self, dense_dim=None):
    return dense_to_compressed(self, sparse_csc, dense_dim)


# -- construction of compressed tensors -------------------------------------------------

@kernel("sparse_compressed_tensor")
def sparse_compressed_tensor(compressed_indices, plain_indices, values, size, *, dtype=None,
                             layout=None, device=None, pin_memory=False):
    """sparse_compressed_tensor.comp_plain_value_size: the compressed tensor
    aliasing its parts."""
    if layout is None:
        raise RuntimeError("sparse_compressed_tensor expected sparse compressed tensor layout "
                           "but got none")
    if layout not in _TO_COMPRESSED:
        raise RuntimeError(f"sparse_compressed_tensor: layout {layout} is not supported by "
                           "glasstorch")
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    return make_compressed(_detached(compressed_indices), _detached(plain_indices),
                           _detached(values), size, layout)


def _validate_compressed(compressed, plain, size, layout):
    """The compressed-index invariants ATen checks (_validate_sparse_compressed_tensor_args)."""
    c_name, p_name = ("crow_indices", "col_indices") if layout is sparse_csr else \
        ("ccol_indices", "row_indices")
    c_dim, p_dim = (0, 1) if layout is sparse_csr else (1, 0)
    p_size = "ncols" if layout is sparse_csr else "nrows"
    if compressed.dim() != 1 or plain.dim() != 1 or len(size) != 2:
        raise RuntimeError(f"{c_name} and {p_name} must be 1-d and size 2-d (glasstorch has no "
                           "batched compressed tensors)")
    offsets = compressed._np()
    if offsets.shape[0] != size[c_dim] + 1:
        raise RuntimeError(f"{c_name}.shape[-1] must be equal to the number of "
                           f"{'rows' if layout is sparse_csr else 'columns'} + 1 "
                           f"(={size[c_dim] + 1}), but got {offsets.shape[0]}")
    if offsets[0] != 0:
        raise RuntimeError(f"`{c_name}[..., 0] == 0` is not satisfied.")
    if offsets[-1] != plain._shape[0]:
        raise RuntimeError(f"`{c_name}[..., -1] == nnz` is not satisfied.")
    if np.any(np.diff(offsets) < 0):
        raise RuntimeError(f"`0 <= {c_name}[..., 1:] - {c_name}[..., :-1] <= {p_size}` "
                           "is not satisfied.")
    index = plain._np()
    if index.size and (index.min() < 0 or index.max() >= size[p_dim]):
        raise RuntimeError(f"`0 <= {p_name} < {p_size}` is not satisfied.")


@kernel("validate_sparse_csr_tensor_args")
def validate_sparse_csr_tensor_args(crow_indices, col_indices, values, size, check_pinning=None):
    """_validate_sparse_csr_tensor_args."""
    _validate_compressed(crow_indices, col_indices, size, sparse_csr)


@kernel("validate_sparse_csc_tensor_args")
def validate_sparse_csc_tensor_args(ccol_indices, row_indices, values, size, check_pinning=None):
    """_validate_sparse_csc_tensor_args."""
    _validate_compressed(ccol_indices, row_indices, size, sparse_csc)


# -- products -------------------------------------------------------------------------

@kernel("sparse_mm")
def sparse_mm(sparse, dense):
    """_sparse_mm: _sparse_addmm into zeros (two sparse operands: their sparse product)."""
    if sparse.layout is not strided and dense.layout is not strided:
        _check_mm(sparse, dense)
        return _sparse_sparse_mm(sparse, dense)
    zeros = aten.zeros.default([sparse._shape[0], dense._shape[1]], dtype=result_type(
        sparse, dense), device=dense.device)
    return aten._sparse_addmm.default(zeros, sparse, dense, beta=0, alpha=1)


def _check_mm(mat1, mat2, name="mm"):
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"{name}: matrices expected, got {mat1.dim()}D, {mat2.dim()}D tensors")
    if mat1._shape[1] != mat2._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1._shape[0]}x"
                           f"{mat1._shape[1]} and {mat2._shape[0]}x{mat2._shape[1]})")


def _rows_cols_values(sparse):
    """(row, col, values) of a 2-d COO or compressed tensor (a COO one coalesced)."""
    coo = _compressed_to_coo(sparse) if _is_compressed(sparse) else coalesce(sparse)
    p = coo._storage
    return p.indices[0], p.indices[1], p.values


@kernel("sparse_addmm")
def sparse_addmm(self, mat1, mat2, *, beta=1, alpha=1):
    """beta * self + alpha * (mat1 @ mat2) with a sparse ``mat1`` (or ``mat2``):
    each stored element adds its scaled row of the dense operand to its row
    of the result, in index order (s_addmm_out_sparse_dense_worker)."""
    if not (mat1.layout is not strided or mat2.layout is not strided):
        return aten.addmm.default(self, mat1, mat2, beta=beta, alpha=alpha)
    _check_mm(mat1, mat2, "addmm")
    if mat1.layout is strided:            # dense @ sparse = (sparse^T @ dense^T)^T
        return aten.t.default(sparse_addmm(aten.t.default(self.expand(
            mat1._shape[0], mat2._shape[1])), aten.t.default(mat2), aten.t.default(mat1),
            beta=beta, alpha=alpha))
    rows, cols, values = _rows_cols_values(mat1)
    dtype = result_type(mat1, mat2)
    out = aten.mul.Tensor(self.expand(mat1._shape[0], mat2._shape[1]).to(dtype), beta) \
        if beta != 0 else aten.zeros.default([mat1._shape[0], mat2._shape[1]], dtype=dtype)
    if values._shape[0]:
        scaled = aten.mul.Tensor(values.to(dtype), alpha) if alpha != 1 else values.to(dtype)
        rows_of = aten.mul.Tensor(aten.unsqueeze.default(scaled, 1),
                                  aten.index_select.default(mat2.to(dtype), 0, cols))
        out = out.clone() if out._storage is self._storage else out
        out.index_add_(0, rows, rows_of)
    return out


@kernel("mm_sparse")
def mm_sparse(self, mat2):
    """mm with a sparse operand (SparseCPU / SparseCsrCPU): _sparse_mm's product."""
    _check_mm(self, mat2)
    return sparse_mm(self, mat2)


def _sparse_sparse_mm(a, b):
    """The product of two sparse matrices: each pair a[i, k] * b[k, j] adds
    into (i, j), coalesced (a computed zero stays an element).  COO times COO
    is COO; compressed times compressed is CSR; ATen multiplies no mix."""
    if a.is_sparse != b.is_sparse:
        name = a.layout.aten_name
        raise RuntimeError(f"addmm: computation on CPU is not implemented for {name} + {name} @ "
                           f"{b.layout.aten_name}")
    rows, inner_a, values_a = _rows_cols_values(a)
    inner_b, cols, values_b = _rows_cols_values(b)
    order = np.argsort(inner_b._np(), kind="stable")
    sorted_b = inner_b._np()[order]
    start = np.searchsorted(sorted_b, inner_a._np(), "left")
    counts = np.searchsorted(sorted_b, inner_a._np(), "right") - start
    pick_a = np.repeat(np.arange(len(counts)), counts)
    first = np.repeat(start - (np.cumsum(counts) - counts), counts)
    pick_b = _long(order[first + np.arange(int(counts.sum()))])
    pick_a = _long(pick_a)
    dtype = result_type(a, b)
    values = aten.mul.Tensor(aten.index_select.default(values_a, 0, pick_a).to(dtype),
                             aten.index_select.default(values_b, 0, pick_b).to(dtype))
    indices = aten.stack.default([aten.index_select.default(rows, 0, pick_a),
                                  aten.index_select.default(cols, 0, pick_b)])
    product = coalesce(make_coo(indices, values, (a._shape[0], b._shape[1]), False))
    return product if a.is_sparse else coo_to_compressed(product, sparse_csr)


@kernel("mv_sparse")
def mv_sparse(self, vec):
    """mv with a sparse matrix: its product with the vector as a column."""
    if self.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.dim()}, {vec.dim()}")
    if self._shape[1] != vec._shape[0]:
        raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
    return aten.squeeze.dim(sparse_mm(self, aten.unsqueeze.default(vec, 1)), 1)


@kernel("addmm_sparse")
def addmm_sparse(self, mat1, mat2, *, beta=1, alpha=1):
    """addmm with a sparse operand; a sparse ``self`` gives a sparse result."""
    if self.layout is not strided:
        raise RuntimeError("addmm: a sparse self is not supported by glasstorch")
    return sparse_addmm(self, mat1, mat2, beta=beta, alpha=alpha)


@kernel("sparse_mask")
def sparse_mask(self, mask):
    """sparse_mask: ``self``'s values at ``mask``'s stored indices (mask's
    indices and coalesced state; duplicates each get the value)."""
    if tuple(self._shape) != tuple(mask._shape):
        raise RuntimeError("sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self._shape)} but mask has size {list(mask._shape)}")
    if _is_compressed(mask):    # the values in the mask's storage order, its parts kept
        values = sparse_mask(self, _compressed_to_coo(mask))._storage.values
        return _with_values(mask, values)
    dense = self if self.layout is strided else aten._to_dense.default(self)
    p = mask._storage
    values = aten.index.Tensor(dense, list(p.indices.unbind(0))) if p.values._shape[0] else \
        aten.new_empty.default(dense, list(p.values._shape))
    return make_coo(p.indices, values, self._shape, p.coalesced)


@kernel("smm")
def smm(self, mat2):
    """smm: sparse @ dense as a sparse tensor: sspaddmm into an empty one."""
    empty = zeros_like_sparse(make_coo(aten.empty.memory_format([2, 0], dtype=_LONG),
                                       aten.empty.memory_format([0], dtype=self.dtype),
                                       (self._shape[0], mat2._shape[1]), True))
    return aten.sspaddmm.default(empty, self, mat2, beta=0, alpha=1)


@kernel("hspmm")
def hspmm(mat1, mat2):
    """hspmm: sparse @ dense as a hybrid COO tensor: one sparse dim (the rows
    that have elements), a dense row each."""
    _check_mm(mat1, mat2, "hspmm")
    product = sparse_mm(mat1, mat2)
    rows = np.unique(coalesce(mat1)._storage.indices._np()[0])
    index = _long(rows)
    return make_coo(aten.unsqueeze.default(index, 0),
                    aten.index_select.default(product, 0, index), product._shape, False)


@kernel("sspaddmm")
def sspaddmm(self, mat1, mat2, *, beta=1, alpha=1):
    """sspaddmm: beta * self + alpha * (mat1 @ mat2) with sparse self and mat1:
    a sparse result, self's elements then every element of the product's
    rows that mat1 has elements in (uncoalesced)."""
    rows = hspmm(mat1, mat2)._storage
    row_of = rows.indices[0]
    cols = mat2._shape[1]
    indices = aten.stack.default([aten.repeat_interleave.self_int(row_of, cols),
                                  aten.arange.default(cols).repeat(row_of._shape[0])])
    product = make_coo(indices, rows.values.reshape(-1), (mat1._shape[0], cols), False)
    return _concat(mul_sparse(self, beta), product, alpha)


# -- arithmetic -----------------------------------------------------------------------

def _concat(a, b, alpha=1, size=None):
    """Two COO tensors' elements side by side (uncoalesced)."""
    pa, pb = a._storage, b._storage
    vb = pb.values if alpha == 1 else aten.mul.Tensor(pb.values, alpha)
    dtype = result_type(pa.values, vb)
    return make_coo(aten.cat.default([pa.indices, pb.indices], 1),
                    aten.cat.default([pa.values.to(dtype), vb.to(dtype)]), size or a._shape,
                    False)


@kernel("add_sparse")
def add_sparse(self, other, *, alpha=1):
    """add with a sparse operand: dense + sparse is dense; sparse + sparse is
    sparse, merged when both are coalesced, else the elements side by side."""
    if not isinstance(other, Tensor):       # a number: a 0-dim (dense) tensor
        other = aten.scalar_tensor.default(other)
    if self.layout is strided:
        if other.layout is strided:
            return aten.add.Tensor(self, other, alpha=alpha)
        return add_dense_sparse_(self.clone().to(result_type(self, other)), other, alpha)
    if _is_compressed(self) or _is_compressed(other):
        return _add_compressed(self, other, alpha)
    if other.layout is strided:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    _check_same_size(self, other, "add")
    if _shares(self, other):
        return mul_sparse(self, 1 + alpha)
    p, q = self._storage, other._storage
    if not q.values._shape[0]:
        return make_coo(p.indices.clone(), p.values.clone().to(result_type(self, other)),
                        self._shape, p.coalesced)
    both = _concat(self, other, alpha)
    if p.coalesced and q.coalesced:
        return aten._coalesce.default(both)
    return both


def _add_compressed(self, other, alpha):
    """add with a compressed ``self`` or ``other``: a CSR tensor and a dense one
    give a dense sum; two CSR tensors a CSR one (their COO sum, coalesced).
    ATen adds compressed tensors as CSR only (a CSC one fails reading its rows)."""
    if other.layout is strided:     # (ATen scales the CSR operand by alpha, not other)
        _check_same_size(self, other, "add")
        return add_dense_sparse_(other.clone().to(result_type(self, other)), self, alpha)
    for t in (self, other):
        if t.layout is not sparse_csr:
            raise RuntimeError("crow_indices expected sparse row compressed tensor layout but "
                               f"got {_layout_name(t)}")
    _check_same_size(self, other, "add")
    total = add_sparse(_compressed_to_coo(self), _compressed_to_coo(other), alpha=alpha)
    return coo_to_compressed(coalesce(total), sparse_csr)


def _check_same_size(a, b, name):
    if tuple(a._shape) != tuple(b._shape):
        raise RuntimeError(f"{name}: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(a._shape)} while other has size {list(b._shape)} "
                           "(FYI: dense-sparse addition does not currently support broadcasting)")


def add_dense_sparse_(dense, sparse, alpha=1):
    """dense += alpha * sparse (add_out_dense_sparse_cpu): values added at their indices."""
    if tuple(dense._shape) != tuple(sparse._shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(dense._shape)} while other has size "
                           f"{list(sparse._shape)} (FYI: dense-sparse addition does not "
                           "currently support broadcasting)")
    if _is_compressed(sparse):
        sparse = _compressed_to_coo(sparse)
    p = sparse._storage
    if p.values._shape[0]:
        values = p.values if alpha == 1 else aten.mul.Tensor(p.values, alpha)
        dense.index_put_(tuple(p.indices.unbind(0)), values.to(dense.dtype), accumulate=True)
    return dense


@kernel("add_sparse_")
def add_sparse_(self, other, *, alpha=1):
    """add_ with a sparse operand: into a dense self in place, or a sparse self
    takes the sum's parts."""
    if self.layout is strided:
        if other.layout is strided:
            return aten.add_.Tensor(self, other, alpha=alpha)
        return add_dense_sparse_(self, other, alpha)
    return _set_parts(self, add_sparse(self, other, alpha=alpha))


@kernel("sub_sparse")
def sub_sparse(self, other, *, alpha=1):
    return add_sparse(self, other, alpha=-alpha)


@kernel("sub_sparse_")
def sub_sparse_(self, other, *, alpha=1):
    return add_sparse_(self, other, alpha=-alpha)


def _with_values(t, values, coalesced=None):
    """``t``'s sparsity pattern (its index parts, shared) with other values."""
    p = t._storage
    if _is_compressed(t):
        return make_compressed(p.compressed_indices, p.plain_indices, values, t._shape, p.layout)
    return make_coo(p.indices, values, t._shape, p.coalesced if coalesced is None else coalesced)


@kernel("neg_sparse")
def neg_sparse(self):
    return _with_values(self, aten.neg.default(self._storage.values).clone())


@kernel("neg_sparse_")
def neg_sparse_(self):
    return _set_parts(self, neg_sparse(self))


@kernel("mul_sparse")
def mul_sparse(self, other):
    """mul with a sparse operand: by a 0-d tensor or number, the values scale;
    sparse * dense keeps the sparse operand's elements; sparse * sparse keeps
    the common elements."""
    if isinstance(other, Tensor) and other.layout is not strided and \
            (not isinstance(self, Tensor) or self.layout is strided):
        return mul_sparse(other, self)
    if not isinstance(other, Tensor) or (other.layout is strided and other.dim() == 0):
        values = aten.mul.Tensor(self._storage.values, other)
        return _with_values(self, values)
    if _is_compressed(self) or _is_compressed(other):
        return _mul_compressed(self, other)
    if other.layout is strided:
        _check_same_size(self, other, "mul")
        return _with_values(self, aten.mul.Tensor(self._storage.values,
                                                  _rows_cols_picked(self, other)))
    _check_same_size(self, other, "mul")
    p, q = self._storage, other._storage
    if p.coalesced and q.coalesced:
        return _mul_coalesced(self, other)
    # keep the smaller operand's elements; look them up in the other, coalesced
    kept, looked = (other, self) if q.values._shape[0] <= p.values._shape[0] else (self, other)
    dense = aten._to_dense.default(coalesce(looked))
    k = kept._storage
    picked = aten.index.Tensor(dense, list(k.indices.unbind(0)))
    return make_coo(k.indices, aten.mul.Tensor(k.values, picked), self._shape, False)


def _mul_compressed(self, other):
    """CSR * dense keeps self's elements; CSR * sparse is their COO product as
    CSR.  ATen writes these products in CSR only."""
    if self.layout is not sparse_csr:
        raise RuntimeError("Expected result Tensor to be of format CSR")
    if other.layout is strided:
        _check_same_size(self, other, "mul")
        return _with_values(self, aten.mul.Tensor(self._storage.values,
                                                  _rows_cols_picked(self, other)))
    other = _compressed_to_coo(other) if _is_compressed(other) else other
    return coo_to_compressed(coalesce(mul_sparse(_compressed_to_coo(self), other)), sparse_csr)


def _rows_cols_picked(sparse, dense):
    """The dense tensor's elements at the stored elements of ``sparse``, in its order."""
    coo = sparse if sparse.is_sparse else _compressed_to_coo(sparse)
    return aten.index.Tensor(dense, list(coo._storage.indices.unbind(0)))


def _mul_coalesced(a, b):
    """The product of two coalesced COO tensors: their common indices, coalesced."""
    p, q = a._storage, b._storage
    sizes = a._shape[:p.sparse_dim]
    fa, fb = _linear(p.indices._np(), sizes), _linear(q.indices._np(), sizes)
    common, ia, ib = np.intersect1d(fa, fb, assume_unique=True, return_indices=True)
    values = aten.mul.Tensor(aten.index_select.default(p.values, 0, _long(ia)),
                             aten.index_select.default(q.values, 0, _long(ib)))
    return make_coo(_long(p.indices._np()[:, ia]), values, a._shape, True)


@kernel("mul_sparse_")
def mul_sparse_(self, other):
    if self.layout is strided:
        return aten.mul_.Tensor(self, aten._to_dense.default(other))
    return _set_parts(self, mul_sparse(self, other))


@kernel("div_sparse")
def div_sparse(self, other):
    """div of a sparse tensor by a 0-d tensor or number: the values divide."""
    if _is_compressed(self):
        raise RuntimeError(f"unsupported tensor layout: {_layout_name(self)}")
    if isinstance(other, Tensor) and (other.layout is not strided or other.dim() != 0):
        raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor divisor "
                           f"(got shape {list(other._shape)} for divisor)")
    return _with_values(self, aten.div.Tensor(self._storage.values, other))


@kernel("sum_sparse")
def sum_sparse(self, *, dtype=None):
    """sum of every element: the values' sum (duplicates and all)."""
    return aten.sum.default(self._storage.values, dtype=dtype)


# -- shape and copies -----------------------------------------------------------------

@kernel("clone_sparse")
def clone_sparse(self, *, memory_format=None):
    p = self._storage
    if _is_compressed(self):
        return make_compressed(p.compressed_indices.clone(), p.plain_indices.clone(),
                               p.values.clone(), self._shape, p.layout)
    return make_coo(p.indices.clone(), p.values.clone(), self._shape, p.coalesced)


@kernel("to_copy_sparse")
def to_copy_sparse(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                   non_blocking=False, memory_format=None):
    """_to_copy of a sparse tensor: its parts copied to the dtype / device."""
    if layout is not None and layout is not self.layout:
        raise RuntimeError(f"to(options) doesn't support converting to a different layout, but "
                           f"got self.layout being {self.layout} and options.layout set as "
                           f"{layout}")
    p = self._storage
    if device is not None and str(device) == "meta" and self.is_sparse:
        # (as ATen's copy to SparseMeta: the sizes, no elements)
        return zeros_like_sparse(self, dtype=dtype, device=device)
    values = p.values.to(dtype=dtype, device=device, copy=True)
    if _is_compressed(self):
        return make_compressed(p.compressed_indices.to(device=device, copy=True),
                               p.plain_indices.to(device=device, copy=True), values,
                               self._shape, p.layout)
    return make_coo(p.indices.to(device=device, copy=True), values, self._shape, p.coalesced)


@kernel("transpose_sparse")
def transpose_sparse(self, dim0, dim1):
    """transpose of a COO tensor: two sparse dims swap their index rows; of a
    compressed one, the other compressed layout over the same parts (CSR's
    row offsets are the transpose's column offsets)."""
    n = self.dim()
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    p = self._storage
    if d0 == d1:
        return self
    if _is_compressed(self):
        other = sparse_csc if p.layout is sparse_csr else sparse_csr
        return make_compressed(p.compressed_indices, p.plain_indices, p.values,
                               self._shape[::-1], other)
    if d0 >= p.sparse_dim or d1 >= p.sparse_dim:
        raise RuntimeError("transpose(): dense dimensions of a sparse tensor are not supported "
                           "by glasstorch")
    order = list(range(p.sparse_dim))
    order[d0], order[d1] = order[d1], order[d0]
    size = list(self._shape)
    size[d0], size[d1] = size[d1], size[d0]
    indices = aten.index_select.default(p.indices, 0, _long(order))
    return make_coo(indices, p.values, size, p.coalesced and p.sparse_dim < 2)


@kernel("t_sparse")
def t_sparse(self):
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but "
                           f"got {self._storage.sparse_dim} sparse and {self._storage.dense_dim}"
                           " dense dimensions")
    return self if self.dim() < 2 else transpose_sparse(self, 0, 1)


@kernel("permute_sparse_coo")
def permute_sparse_coo(self, dims):
    """permute of a COO tensor: the sparse dims' index rows and the values'
    dense dims reorder among themselves (never across), and the result is
    marked uncoalesced, as ATen's permute_sparse_coo."""
    p = self._storage
    order = permutation(dims, self.dim())
    if sorted(order[:p.sparse_dim]) != list(range(p.sparse_dim)):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense "
                           "dimensions are not allowed.Only transpositions within sparse and "
                           "dense dimensions are supported.")
    indices = aten.index_select.default(p.indices, 0, _long(order[:p.sparse_dim]))
    values = aten.permute.default(p.values, [0] + [d - p.sparse_dim + 1
                                                   for d in order[p.sparse_dim:]])
    return make_coo(indices, values, [self._shape[d] for d in order], False)


@kernel("unsqueeze_sparse")
def unsqueeze_sparse(self, dim):
    """unsqueeze of a COO tensor: a sparse dim of zeros in the indices at or
    before the last sparse dim, else a dense dim of the values; coalesced
    only with fewer than two entries, as ATen's constructor marks it."""
    ndim, p = self.dim(), self._storage
    d = wrap_dim(dim, ndim + 1)
    size = list(self._shape[:d]) + [1] + list(self._shape[d:])
    if d <= p.sparse_dim:
        zeros = aten.zeros.default([1, p.indices._shape[1]], dtype=dt.int64,
                                   device=p.indices.device)
        indices = aten.cat.default([p.indices[:d], zeros, p.indices[d:]], 0)
        return make_coo(indices, p.values, size, indices._shape[1] < 2)
    return make_coo(p.indices, aten.unsqueeze.default(p.values, d - p.sparse_dim + 1), size,
                    p.indices._shape[1] < 2)


@kernel("select_sparse_csr")
def select_sparse_csr(self, dim, index):
    """select of a compressed tensor: a COO tensor of the row or column's
    elements, which come sorted (coalesced).  ATen's result views the values,
    so along the plain dim (CSR's columns, CSC's rows) the elements must sit
    at evenly spaced places in them."""
    out = select_sparse(_compressed_to_coo(self), dim, index)
    plain_dim = 1 if self.layout is sparse_csr else 0
    if wrap_dim(dim, self.dim()) == plain_dim and out._storage.values._shape[0] > 2:
        places = np.flatnonzero(self._storage.plain_indices._np() == index % self._shape[dim])
        if len(set(np.diff(places).tolist())) > 1:
            raise RuntimeError("select(): no view exists for the given input, consider using "
                               "torch.select_copy.")
    return _set_parts(out, make_coo(out._storage.indices, out._storage.values, out._shape, True))


@kernel("select_sparse")
def select_sparse(self, dim, index):
    """select of a COO tensor (ATen's select_sparse): along a sparse dim, the
    entries whose index there is ``index`` without that index row (or, for
    the only sparse dim, the dense sum of their values); along a dense dim,
    the values' select.  Coalesced only with fewer than two entries, as
    ATen's constructor marks it."""
    ndim, p = self.dim(), self._storage
    d = wrap_dim(dim, ndim)
    size = self._shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self._shape)} at dimension {d}")
    index = index + size if index < 0 else index
    rest = list(self._shape[:d]) + list(self._shape[d + 1:])
    if d >= p.sparse_dim:
        return make_coo(p.indices, aten.select.int(p.values, d - p.sparse_dim + 1, index), rest,
                        p.indices._shape[1] < 2)
    hits = _long(np.flatnonzero(p.indices._np()[d] == index))
    values = aten.index_select.default(p.values, 0, hits)
    if p.sparse_dim == 1:
        return aten.sum.dim_IntList(values, [0])
    kept = [r for r in range(p.sparse_dim) if r != d]
    indices = aten.index_select.default(aten.index_select.default(p.indices, 0, _long(kept)),
                                        1, hits)
    return make_coo(indices, values, rest, indices._shape[1] < 2)


@kernel("zeros_like_sparse")
def zeros_like_sparse(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                      memory_format=None):
    """zeros_like of a sparse tensor: no elements, same layout, sparse and dense dims."""
    p = self._storage
    dtype = dtype or self.dtype
    if _is_compressed(self):
        return zeros_like_compressed(self, dtype, device or self.device)
    indices = aten.empty.memory_format([p.sparse_dim, 0], dtype=_LONG, device=device or
                                       self.device)
    values = aten.empty.memory_format([0, *self._shape[p.sparse_dim:]], dtype=dtype,
                                      device=device or self.device)
    return make_coo(indices, values, self._shape, True)


@kernel("empty_like_sparse")
def empty_like_sparse(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                      memory_format=None):
    """empty_like of a sparse tensor: COO with no elements (or a strided
    tensor, when asked for); a compressed one with the same pattern and
    uninitialized values."""
    if layout is strided and self.is_sparse:
        return aten.empty.memory_format(list(self._shape), dtype=dtype or self.dtype,
                                        device=device or self.device)
    if layout is not None and layout is not self.layout:
        raise RuntimeError(f"empty_like with different sparse layout is not supported (self is "
                           f"{self.layout.aten_name} but you requested {layout.aten_name})")
    if not _is_compressed(self):
        return zeros_like_sparse(self, dtype=dtype, device=device)
    p = self._storage
    device = device or self.device
    values = aten.empty.memory_format(list(p.values._shape), dtype=dtype or self.dtype,
                                      device=device)
    return make_compressed(p.compressed_indices.to(device=device, copy=True),
                           p.plain_indices.to(device=device, copy=True), values, self._shape,
                           p.layout)


@kernel("fill_sparse_csr_")
def fill_sparse_csr_(self, value):
    """fill_ of a compressed tensor: its stored values (the pattern stays)."""
    return _set_parts(self, _with_values(self, aten.fill_.Scalar(self._storage.values.clone(),
                                                                   value)))


@kernel("zero_sparse_")
def zero_sparse_(self):
    """zero_ of a sparse tensor: no elements left."""
    return _set_parts(self, zeros_like_sparse(self, dtype=self.dtype, device=self.device))


@kernel("copy_sparse_")
def copy_sparse_(self, src, non_blocking=False):
    """copy_ between sparse tensors: ``self`` takes copies of src's parts
    (values in self's dtype); compressed tensors must share layout and nnz."""
    if _is_compressed(self) or _is_compressed(src):
        if not _is_compressed(self):
            raise RuntimeError("copy_sparse_compressed_ expected sparse compressed tensor layout "
                               f"but got {self.layout.aten_name}")
        if self.layout is not src.layout:
            raise RuntimeError("torch.copy_: copy of sparse compressed tensors having different "
                               f"layouts is not supported. self layout is "
                               f"{self.layout.aten_name} and src layout is {src.layout.aten_name}")
        if self._storage.values._shape[0] != src._storage.values._shape[0]:
            raise RuntimeError("torch.copy_: only sparse compressed tensors with the same number "
                               "of specified elements are supported.")
    elif self.layout is strided or src.layout is strided:
        raise RuntimeError("copy_() between dense and sparse Tensors is not implemented! Found "
                           f"self type = {self.type()} and src type = {src.type()}")
    copied = clone_sparse(src)
    return _set_parts(self, _with_values(copied, copied._storage.values.to(self.dtype)))


def zeros_like_compressed(self, dtype, device):
    n = self._shape[0 if self.layout is sparse_csr else 1]
    p = self._storage
    return make_compressed(aten.zeros.default([n + 1], dtype=p.compressed_indices.dtype,
                                              device=device),
                           aten.empty.memory_format([0], dtype=p.plain_indices.dtype,
                                                    device=device),
                           aten.empty.memory_format([0], dtype=dtype, device=device),
                           self._shape, self.layout)


@kernel("sparse_resize_")
def sparse_resize_(self, size, sparse_dim, dense_dim):
    """sparse_resize_: new sizes; the elements stay (sizes may only grow where
    there are elements, as ATen checks)."""
    p = self._storage
    nnz = p.values._shape[0]
    if nnz and (sparse_dim != p.sparse_dim or dense_dim != p.dense_dim):
        raise RuntimeError(f"changing the number of sparse dimensions (from {p.sparse_dim} to "
                           f"{sparse_dim}) on a non-empty sparse tensor is not supported.\n"
                           "If you want to achieve this, please call clear() on the sparse "
                           "tensor first.")
    if nnz and any(n < o for n, o in zip(size, self._shape)):
        raise RuntimeError("shrinking the size of dimensions (from "
                           f"{list(self._shape)} to {list(size)}) on a non-empty sparse tensor "
                           "is not supported.\nIf you want to achieve this, please call clear() "
                           "on the sparse tensor first.")
    if nnz:
        new = make_coo(p.indices, p.values, size, p.coalesced)
    else:
        new = sparse_resize_and_clear_(make_coo(p.indices, p.values, self._shape, True), size,
                                       sparse_dim, dense_dim)
    return _set_parts(self, new)


@kernel("sparse_resize_and_clear_")
def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
    """sparse_resize_and_clear_: new sizes and dims, no elements."""
    if sparse_dim + dense_dim != len(size):
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({dense_dim}), but got {len(size)}")
    indices = aten.empty.memory_format([sparse_dim, 0], dtype=_LONG, device=self.device)
    values = aten.empty.memory_format([0, *size[sparse_dim:]], dtype=self.dtype,
                                      device=self.device)
    return _set_parts(self, make_coo(indices, values, size, True))


# -- reductions and softmax -------------------------------------------------------------

@kernel("sparse_sum")
def sparse_sum(self, *, dtype=None):
    """_sparse_sum: every element's sum, through the coalesced values."""
    values = self.coalesce().values()
    return values.sum(dtype=dtype) if dtype is not None else values.sum()


@kernel("sparse_sum_dim_dtype")
def sparse_sum_dim_dtype(self, dim, *, dtype):
    return aten._sparse_sum.dim(self.to(dtype), dim)


@kernel("sparse_sum_dim")
def sparse_sum_dim(self, dim):
    """_sparse_sum.dim: sparse dims summed by dropping their index rows and
    coalescing, dense dims by summing the values; a dense result when every
    sparse dim is summed."""
    n = self.dim()
    dims = sorted({wrap_dim(d, n) for d in dim})
    p = self._storage
    sparse_kept = [d for d in range(p.sparse_dim) if d not in dims]
    dense_summed = [d - p.sparse_dim + 1 for d in dims if d >= p.sparse_dim]
    values = aten.sum.dim_IntList(p.values, dense_summed) if dense_summed else p.values
    if not sparse_kept:
        return aten.sum.dim_IntList(values, [0])
    size = [s for d, s in enumerate(self._shape) if d not in dims]
    indices = aten.index_select.default(p.indices, 0, _long(sparse_kept))
    return coalesce_sparse_cpu(make_coo(indices, values, size, False))


@kernel("sum_dim_sparse")
def sum_dim_sparse(self, dim, keepdim=False, *, dtype=None):
    """sum over ``dim`` of a COO tensor (_sparse_sum.dim; no dims: itself) or,
    with keepdim only, of a CSR one (a CSR result over the kept dim's indices
    that have elements)."""
    if _is_compressed(self):
        if self.layout is not sparse_csr:
            raise RuntimeError("Currently the only compressed sparse format supported for "
                               f"sum.dim_IntList is CSR, but got layout {self.layout.aten_name}")
        if not keepdim:
            raise RuntimeError("reduction operations on CSR tensors with keepdim=False is "
                               "unsupported")
    source = self if dtype is None else aten._to_copy.default(self, dtype=dtype)
    dims = sorted({wrap_dim(d, self.dim()) for d in dim}) if dim else []
    if not dims and not _is_compressed(self):
        return source
    coo = _compressed_to_coo(source) if _is_compressed(source) else source
    out = aten._sparse_sum.dim(coo, dims or list(range(self.dim())))
    if keepdim:
        for d in dims or range(self.dim()):
            out = aten.unsqueeze.default(out, d)
    if _is_compressed(self):
        if out.layout is strided:       # every dim summed: one element, if any were stored
            nnz = int(self._storage.values._shape[0] > 0)
            out = make_coo(_long(np.zeros((2, nnz), np.int64)), out.reshape(1)[:nnz],
                           out._shape, True)
        return coo_to_compressed(out, sparse_csr)
    return out


@kernel("sparse_sum_backward")
def sparse_sum_backward(grad, self, dim):
    """_sparse_sum_backward: the (dense) gradient broadcast back over the summed
    dims and read at ``self``'s elements."""
    n = self.dim()
    dims = sorted({wrap_dim(d, n) for d in dim})
    dense = grad.to_dense() if grad.layout is not strided else grad
    for d in dims:
        dense = aten.unsqueeze.default(dense, d)
    dense = dense.expand(*self._shape)
    return aten._coalesced_.default(aten.sparse_mask.default(dense, self.coalesce()), False)


def _lines(self, dim):
    """For softmax along ``dim`` of a coalesced COO tensor: the line each
    element belongs to (equal indices in the other sparse dims)."""
    p = self._storage
    idx = p.indices._np()
    others = [d for d in range(p.sparse_dim) if d != dim]
    sizes = [self._shape[d] for d in others]
    flat = _linear(idx[others], sizes) if others else np.zeros(idx.shape[1], np.int64)
    _, line = np.unique(flat, return_inverse=True)
    return line.reshape(-1)


def _softmax_values(self, dim, log):
    """Softmax of a coalesced COO tensor's values along sparse or dense ``dim``."""
    p = self._storage
    values = p.values
    if dim >= p.sparse_dim:
        fn = aten._log_softmax.default if log else aten._softmax.default
        return fn(values, dim - p.sparse_dim + 1, False)
    line = _long(_lines(self, dim))
    count = int(line._np().max()) + 1 if line._shape[0] else 0
    shape = [count, *values._shape[1:]]
    spread = line.reshape(-1, *([1] * (values.dim() - 1))).expand(*values._shape)
    maxima = aten.scatter_reduce.two(aten.new_full.default(values, shape, float("-inf")), 0,
                                     spread, values, "amax")
    shifted = values - aten.index_select.default(maxima, 0, line)
    exps = shifted.exp()
    sums = aten.new_zeros.default(values, shape).index_add_(0, line, exps)
    denom = aten.index_select.default(sums, 0, line)
    return shifted - denom.log() if log else exps / denom


@kernel("softmax_sparse")
def softmax_sparse(self, dim, half_to_float):
    """_sparse_softmax: softmax over the stored elements of each line along
    ``dim`` (missing elements count as -inf); coalesced input order."""
    return _softmax_sparse(self, dim, half_to_float, log=False)


@kernel("log_softmax_sparse")
def log_softmax_sparse(self, dim, half_to_float):
    return _softmax_sparse(self, dim, half_to_float, log=True)


def _softmax_sparse(self, dim, half_to_float, log):
    if half_to_float:
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    c = coalesce(self)
    return _with_values(c, _softmax_values(c, wrap_dim(dim, self.dim()), log), True)


def _softmax_backward(grad_output, output, dim, self, log):
    """Per line: out * (g - sum(g * out)), or g - exp(out) * sum(g) for log."""
    dim = wrap_dim(dim, self.dim())
    out = output._storage.values
    g = grad_output.coalesce()._storage.values if grad_output.layout is not strided else \
        aten.index.Tensor(grad_output, list(output._storage.indices.unbind(0)))
    p = output._storage
    if dim >= p.sparse_dim:
        fn = aten._log_softmax_backward_data.default if log else \
            aten._softmax_backward_data.default
        return _with_values(output, fn(g, out, dim - p.sparse_dim + 1, out.dtype), False)
    line = _long(_lines(output, dim))
    count = int(line._np().max()) + 1 if line._shape[0] else 0
    shape = [count, *out._shape[1:]]
    if log:
        sums = aten.new_zeros.default(g, shape).index_add_(0, line, g)
        values = g - out.exp() * aten.index_select.default(sums, 0, line)
    else:
        sums = aten.new_zeros.default(g, shape).index_add_(0, line, g * out)
        values = out * (g - aten.index_select.default(sums, 0, line))
    return _with_values(output, values, False)


@kernel("softmax_backward_sparse")
def softmax_backward_sparse(grad_output, output, dim, self):
    return _softmax_backward(grad_output, output, dim, self, log=False)


@kernel("log_softmax_backward_sparse")
def log_softmax_backward_sparse(grad_output, output, dim, self):
    return _softmax_backward(grad_output, output, dim, self, log=True)


@kernel("sparse_softmax_int")
def sparse_softmax_int(self, dim, dtype=None):
    """torch.sparse.softmax(input, dim, dtype): _sparse_softmax after the cast."""
    return aten._sparse_softmax.default(self if dtype is None else self.to(dtype), dim, False)


@kernel("sparse_log_softmax_int")
def sparse_log_softmax_int(self, dim, dtype=None):
    return aten._sparse_log_softmax.default(self if dtype is None else self.to(dtype), dim, False)


# -- embedding(sparse=True) --------------------------------------------------------------

@kernel("embedding_sparse_backward")
def embedding_sparse_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """embedding's weight gradient as a COO tensor: one element per looked-up
    index (padding_idx's left out), its row of ``grad`` as the value; uncoalesced."""
    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    features = grad._shape[-1]
    indices = indices.reshape(-1)
    grad = grad.reshape(-1, features)
    if padding_idx != -1:
        keep = indices != padding_idx
        indices = indices[keep]
        grad = grad[keep]
    size = [num_weights, features]
    if indices.numel() == 0:
        return aten._sparse_coo_tensor_unsafe.default(
            aten.empty.memory_format([1, 0], dtype=_LONG, device=grad.device),
            aten.empty.memory_format([0, features], dtype=grad.dtype, device=grad.device), size)
    return aten._sparse_coo_tensor_unsafe.default(indices.unsqueeze(0), grad, size)
