"""What a sparse tensor holds instead of storage (c10's SparseTensorImpl and
SparseCsrTensorImpl).

A sparse tensor is a ``Tensor`` whose key set carries the Sparse (COO) or
SparseCsr functionality instead of Dense, so the dispatcher sends it to
SparseCPU / SparseCsrCPU kernels, and an op with no such kernel raises
PyTorch's "Could not run ... from the 'SparseCPU' backend".  It has sizes,
dtype and device like any tensor; where a strided tensor has its storage, it
holds one of the objects below: the component tensors (dense, strided) and
the layout's flags.  They answer storage questions as PyTorch's sparse
tensors do: there are no bytes and no data pointer.
"""
from __future__ import annotations

__all__ = ["NoStrides", "SparseCooParts", "SparseCsrParts"]


class _NoStorage:
    """The storage slot of a tensor that has none: no bytes (``_data`` is None,
    so reading values as a strided array fails) and no data pointer."""

    __slots__ = ()
    _data = None
    _nbytes = 0

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


class SparseCooParts(_NoStorage):
    """A COO tensor's parts (SparseTensorImpl): ``indices`` (int64, sparse_dim x nnz),
    ``values`` (nnz x dense sizes), and whether the indices are known to be
    sorted and unique (``coalesced``)."""

    __slots__ = ("indices", "values", "sparse_dim", "dense_dim", "coalesced")

    def __init__(self, indices, values, sparse_dim, dense_dim, coalesced):
        self.indices = indices
        self.values = values
        self.sparse_dim = sparse_dim
        self.dense_dim = dense_dim
        self.coalesced = coalesced


class SparseCsrParts(_NoStorage):
    """A compressed tensor's parts (SparseCsrTensorImpl, which holds every
    compressed layout): ``compressed_indices`` (offsets, one more than the
    compressed dim: rows for CSR, columns for CSC), ``plain_indices`` (the
    other dim's index of each stored element), ``values`` (one per stored
    element) and the ``layout`` (sparse_csr or sparse_csc)."""

    __slots__ = ("compressed_indices", "plain_indices", "values", "dense_dim", "layout")

    def __init__(self, compressed_indices, plain_indices, values, dense_dim, layout):
        self.compressed_indices = compressed_indices
        self.plain_indices = plain_indices
        self.values = values
        self.dense_dim = dense_dim
        self.layout = layout


class NoStrides(tuple):
    """The strides of a compressed tensor: it has none, and reading them raises
    what PyTorch's SparseCsrTensorImpl::strides raises (a view that needs
    strides fails with it, as in PyTorch)."""

    def __new__(cls, layout_name):
        self = super().__new__(cls)
        self.message = f"Sparse {layout_name} tensors do not have strides"
        return self

    def _refuse(self, *args):
        raise RuntimeError(self.message)

    __getitem__ = __iter__ = __len__ = __eq__ = _refuse
    __hash__ = tuple.__hash__
