"""``torch.return_types``: named tuples for ops with several named returns.

``torch.max(x, 0)`` returns ``torch.return_types.max(values=..., indices=...)``
while ``torch.ops.aten.max.dim(x, 0)`` returns a plain tuple: the Python
bindings wrap.  The types are made from the schemas, once, when the bindings
are installed (``structseq_for``): an op whose returns are all named, e.g.

    max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)

gets the type ``return_types.max`` with fields ``values`` and ``indices``;
its ``out=`` overload gets ``return_types.max_out``.  Like PyTorch's structseq
they are tuples (unpacking, indexing, ``==`` work) with attribute access.
"""
from __future__ import annotations

__all__ = ["structseq", "structseq_for", "returning_structseq"]

_TYPES: dict[str, type] = {}


class _StructSeq(tuple):
    """Base of the named result types (PyTorch's ``PyStructSequence``)."""

    __slots__ = ()
    _fields: tuple = ()
    n_fields = n_sequence_fields = 0

    def __new__(cls, sequence):
        sequence = tuple(sequence)
        if len(sequence) != len(cls._fields):
            raise TypeError(f"{cls.__module__}.{cls.__name__}() takes a {len(cls._fields)}"
                            f"-sequence ({len(sequence)}-sequence given)")
        return tuple.__new__(cls, sequence)

    def __repr__(self):
        body = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self),))


def structseq(name: str, fields) -> type:
    """The named result type ``name`` with ``fields`` (made once, then shared)."""
    cls = _TYPES.get(name)
    if cls is not None:
        return cls
    fields = tuple(fields)
    namespace = {"__slots__": (), "_fields": fields, "n_fields": len(fields),
                 "n_sequence_fields": len(fields), "__module__": __name__}
    for i, field in enumerate(fields):
        namespace[field] = property(lambda self, i=i: tuple.__getitem__(self, i),
                                    doc=f"Alias for field number {i}")
    cls = type(name, (_StructSeq,), namespace)
    _TYPES[name] = cls
    globals()[name] = cls
    __all__.append(name)
    return cls


def structseq_for(op, out=False):
    """The result type for ``op`` (an OpOverload), or None if its returns are not
    all named (one return, or unnamed ones like ``var_mean``'s)."""
    returns = op._schema.returns
    if len(returns) < 2 or not all(r.name for r in returns):
        return None
    base = op._schema.name.split("::")[1]
    return structseq(base + ("_out" if out else ""), [r.name for r in returns])


def _wrapped_call(op, cls):
    def call(*args, **kwargs):
        return cls(op(*args, **kwargs))
    call.__name__ = call.__qualname__ = op.__name__
    return call


def returning_structseq(parsers, signatures):
    """Binding parsers whose chosen op's result is wrapped in its named type.

    A parser answers ``(op, args, kwargs)``; where ``op`` has named returns it is
    replaced by a caller that wraps.  Signatures without named returns keep
    their parsers untouched (no cost on the common path).
    """
    callers = {}
    for sig in signatures:
        for op, out in ((sig.op, False), (sig.out_op, True)):
            cls = structseq_for(op, out) if op is not None else None
            if cls is not None:
                callers[op] = _wrapped_call(op, cls)
    if not callers:
        return parsers

    def wrap(parse):
        def parse_and_wrap(*args, **kwargs):
            op, a, k = parse(*args, **kwargs)
            return callers.get(op, op), a, k
        return parse_and_wrap
    return [wrap(p) for p in parsers]
