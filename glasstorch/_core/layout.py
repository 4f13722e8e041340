"""Layouts and memory formats (c10::Layout, c10::MemoryFormat): named singletons
that print as PyTorch prints them."""


class layout:
    """``torch.layout``: strided, or a sparse layout (COO, CSR and its kin)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name

    @property
    def aten_name(self) -> str:
        """The name c10's messages print (Strided, Sparse, SparseCsr, SparseCsc ...)."""
        kind, _, sub = self.name.partition("_")
        return "Strided" if kind == "strided" else "Sparse" + \
            ("" if sub == "coo" else sub.capitalize())


class memory_format:
    """``torch.memory_format``: how a tensor's strides are ordered."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


_BY_INDEX = (contiguous_format, preserve_format, channels_last, channels_last_3d)


def as_memory_format(value):
    """Schemas carry memory formats as c10's enum numbers (contiguous=0, preserve=1,
    channels_last=2, channels_last_3d=3); kernels get the objects."""
    if value is None or isinstance(value, memory_format):
        return value
    return _BY_INDEX[value]
