"""``torch._inductor.ir``: the loop-level IR a graph is lowered to.

A lowered value describes *how to compute each element*, not an array:

* ``Pointwise(dtype, ranges, inner_fn)``: element ``index`` is ``inner_fn(index)``;
* ``Reduction(..., reduction_ranges, reduction_type, inner_fn)``: element
  ``index`` combines ``inner_fn(index, rindex)`` over every ``rindex``;
* ``View(base, size, reindex)``: element ``index`` is ``base[reindex(index)]``.

``inner_fn`` calls the ``ops`` handler of whoever evaluates it (``V.ops``): the C
code generator turns each call into a C statement, the printer into text.  An
unrealized Pointwise is inlined into each consumer, which is how chains of
pointwise ops fuse.  ``realize()`` turns a value into a **buffer**: a
``ComputedBuffer`` (a Pointwise or Reduction stored into memory, later
scheduled into a kernel), an ``ExternKernel`` (an ATen op the wrapper calls as
it is: matmul, convolution, anything without a lowering), or an
``InputBuffer``.  A ``ReinterpretView`` is a strided window on a buffer, which
is what an extern call is given.

Indices are ``Index`` objects: integer affine sums ``c0 + c1*x0 + c2*x1 ...``
over loop variables that know their range, with floor division and modulo
kept as opaque terms; that is enough for strides, broadcasting, permutes,
slices and reshapes, and it prints as C.

Note [Symbolic sizes]
    A graph traced with dynamic shapes has SymInts for sizes (``s0``,
    ``8*s0``).  They flow through the IR as they are: ranges, strides, index
    coefficients and bounds may be SymInts, and they print as C expressions
    over ``int64_t`` parameters named after the symbols (``c_expr``), which
    the wrapper reads from its inputs' sizes, so one compiled graph serves
    every size.  A decision that needs a Python value (``if n > 64``) asks
    the ShapeEnv, which answers from the symbols' ranges or else from the
    traced sizes with a guard, so the graph is reused only where the answer
    holds.  Structural questions (do two loops match?) use ``same_size``,
    which never guards: a no where sizes are not equal for every size.
"""
from __future__ import annotations

import threading

from .._core import dtype as dt
from ..fx.experimental.sym_node import Poly, SymInt, Symbol
from ..fx.experimental.symbolic_shapes import (free_symbols, hint_int, statically_known_equals,
                                               statically_known_true)

# -- symbolic sizes (Note [Symbolic sizes]) ---------------------------------------------


def is_symbolic(n) -> bool:
    return isinstance(n, SymInt)


def same_size(a, b) -> bool:
    """Whether sizes (or tuples or dicts of them) are equal for every value of
    their symbols, decided without a guard."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_size(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return a.keys() == b.keys() and all(same_size(a[k], b[k]) for k in a)
    return statically_known_equals(a, b)


def is_one(n) -> bool:
    """``n == 1`` without a guard (a size symbol is never 1: 0 and 1 specialize)."""
    return not is_symbolic(n) and n == 1


def c_expr(n) -> str:
    """A size as C text: a number, or a SymInt's expression over its symbols."""
    return _c(n.node.expr) if is_symbolic(n) else _c(int(n))


def _c(e) -> str:
    if type(e) is int:
        return f"{e}L" if abs(e) > 2**31 - 1 else str(e)
    if type(e) is Symbol:
        return e.name
    if type(e) is Poly:
        terms = []
        for monomial, coeff in e.terms.items():
            factors = [_c_factor(base) for base, exp in monomial for _ in range(exp)]
            terms.append("*".join(([] if coeff == 1 and factors else [_c(coeff)]) + factors))
        return " + ".join(terms).replace("+ -", "- ")
    a, b = (_c_factor(arg) for arg in e.args)
    if e.func == "FloorDiv":          # of sizes: non-negative, so C's division floors
        return f"{a} / {b}"
    if e.func == "Mod":
        return f"{a} % {b}"
    if e.func in ("Max", "Min"):
        return f"({a} {'>' if e.func == 'Max' else '<'} {b} ? {a} : {b})"
    raise NotImplementedError(f"no C for the size {e}")


def _c_factor(e) -> str:
    text = _c(e)
    return text if type(e) in (int, Symbol) and not text.startswith("-") else f"({text})"


def size_symbols(n) -> set:
    """The names of the symbols a size depends on."""
    return {s.name for s in free_symbols(n)}


def size_hint(n) -> int:
    """A size's value in the traced run (a heuristic's input; no guard)."""
    return hint_int(n)


# -- index expressions -------------------------------------------------------------


class Sym:
    """A loop variable (``x0``, ``r1``) or an opaque term (``(x1 / 64)``): its C
    text, an exclusive upper bound, and the loop variables it mentions.  An
    opaque floor division or modulo keeps its parts (``op``, ``arg``, ``n``) so
    that sums of them can be folded back (``Index.simplify``)."""

    __slots__ = ("name", "bound", "free", "op", "arg", "n")

    def __init__(self, name: str, bound: int, free=None, op=None, arg=None, n=None):
        self.name, self.bound = name, bound
        self.free = frozenset(free) if free is not None else frozenset((name,))
        self.op, self.arg, self.n = op, arg, n

    def __eq__(self, other):
        return isinstance(other, Sym) and self.name == other.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return self.name


class Index:
    """An integer affine expression ``const + sum(coeff * sym)``."""

    __slots__ = ("terms", "const")

    def __init__(self, terms=None, const: int = 0):
        self.terms = {s: c for s, c in (terms or {}).items() if is_symbolic(c) or c}
        self.const = const
        if any(s.op for s in self.terms):
            self._fold_divmod()

    def _fold_divmod(self):
        """Fold what reshapes leave behind, until nothing changes:
        ``c*(e % a) + c*a*((e / a) % b) -> c*(e % (a*b))`` and
        ``c*(e % a) + c*a*(e / a) -> c*e``."""
        changed = True
        while changed:
            changed = False
            for low, c in list(self.terms.items()):
                if low.op != "mod":
                    continue
                e, a = low.arg, low.n
                for high, k in list(self.terms.items()):
                    if k != c * a:
                        continue
                    if high.op == "div" and high.n == a and str(high.arg) == str(e):
                        folded = e * c
                    elif high.op == "mod" and high.arg.terms and len(high.arg.terms) == 1 \
                            and not high.arg.const:
                        (inner, one), = high.arg.terms.items()
                        if one != 1 or inner.op != "div" or inner.n != a or \
                                str(inner.arg) != str(e):
                            continue
                        folded = e.mod(a * high.n) * c
                    else:
                        continue
                    del self.terms[low], self.terms[high]
                    for s_, c_ in folded.terms.items():
                        self.terms[s_] = self.terms.get(s_, 0) + c_
                    self.terms = {s_: c_ for s_, c_ in self.terms.items() if c_}
                    self.const += folded.const
                    changed = True
                    break
                if changed:
                    break

    @staticmethod
    def of(value) -> "Index":
        if isinstance(value, Index):
            return value
        return Index(const=value if is_symbolic(value) else int(value))

    @staticmethod
    def var(name: str, bound: int) -> "Index":
        return Index({Sym(name, bound): 1}) if not is_one(bound) else Index()

    def __add__(self, other):
        other = Index.of(other)
        terms = dict(self.terms)
        for s, c in other.terms.items():
            terms[s] = terms.get(s, 0) + c
        return Index(terms, self.const + other.const)

    __radd__ = __add__

    def __sub__(self, other):
        return self + Index.of(other) * -1

    def __mul__(self, k: int):
        k = k if is_symbolic(k) else int(k)
        return Index({s: c * k for s, c in self.terms.items()}, self.const * k)

    __rmul__ = __mul__

    def free(self) -> set:
        return set().union(*(s.free for s in self.terms)) if self.terms else set()

    def max(self) -> int:
        """The largest value over the variables' ranges (negative coefficients at 0)."""
        return self.const + sum(c * s.bound - c for s, c in self.terms.items() if c > 0)

    def min(self) -> int:      # (c * bound - c: symbolic sizes stay a sum of products)
        return self.const + sum(c * s.bound - c for s, c in self.terms.items() if c < 0)

    def floordiv(self, d: int) -> "Index":
        """``self // d`` for a non-negative expression, exact where the terms that
        are not multiples of ``d`` always stay below it."""
        if is_one(d):
            return self
        whole = Index({s: _div(c, d) for s, c in self.terms.items() if _is_zero(_mod(c, d))})
        rest = Index({s: c for s, c in self.terms.items() if not _is_zero(_mod(c, d))},
                     self.const)
        if rest.min() >= 0 and rest.max() < d:
            return whole
        if not whole.terms and rest.min() >= 0:
            return _opaque("div", rest, d, rest.max() // d + 1)
        return _opaque("div", self, d, self.max() // d + 1)

    def mod(self, n: int) -> "Index":
        """``self % n`` for a non-negative expression."""
        if is_one(n):
            return Index()
        rest = Index({s: _mod(c, n) for s, c in self.terms.items() if not _is_zero(_mod(c, n))},
                     _mod(self.const, n))
        if rest.min() >= 0 and rest.max() < n:
            return rest
        if len(rest.terms) == 1 and not rest.const:
            (sym, c), = rest.terms.items()
            if c == 1 and sym.op == "div" and sym.arg.min() >= 0:   # (e / a) % n
                if sym.arg.max() // sym.n < n:
                    return rest
        return _opaque("mod", rest, n, n)

    def __str__(self):
        parts = []
        for s, c in sorted(self.terms.items(), key=lambda sc: sc[0].name):
            parts.append(s.name if is_one(c) else f"({c_expr(c)})*{s.name}"
                         if is_symbolic(c) else f"{c}L*{s.name}")
        if is_symbolic(self.const) or self.const or not parts:
            parts.append(c_expr(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    __repr__ = __str__


def _is_zero(n) -> bool:
    return not is_symbolic(n) and n == 0


def _below(c, n) -> bool:
    """``0 <= c < n`` for every value of the sizes' symbols (decided without a
    guard: ``1 < s0`` holds, a size symbol is at least 2)."""
    return (is_symbolic(c) or is_symbolic(n)) and statically_known_true(c >= 0) and \
        statically_known_true(c < n)


def _mod(c, n):
    """``c % n`` of a coefficient: ``c`` itself when it is known to be below ``n``."""
    return c if _below(c, n) else c % n


def _div(c, n):
    """``c // n`` of a coefficient: 0 when it is known to be below ``n``."""
    return 0 if _below(c, n) else c // n


def _opaque(op: str, arg: Index, n: int, bound: int) -> Index:
    operand = f"({arg})" if len(arg.terms) + (is_symbolic(arg.const) or bool(arg.const)) > 1 \
        else str(arg)
    divisor = _c_factor(n.node.expr if is_symbolic(n) else n)
    text = f"({operand} {'/' if op == 'div' else '%'} {divisor})"
    return Index({Sym(text, bound, arg.free(), op, arg, n): 1})


def contiguous_strides(size) -> tuple:
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def flat_index(index, size) -> Index:
    """The row-major position of ``index`` in a tensor of ``size``."""
    return sum((i * s for i, s in zip(index, contiguous_strides(size))), Index())


def unflatten_index(flat: Index, size) -> list:
    """The index in ``size`` of the row-major position ``flat``."""
    out = []
    for n, s in zip(size, contiguous_strides(size)):
        out.append(flat.floordiv(s).mod(n) if n != 1 else Index())
    return out


# -- the ops handler the inner functions call ----------------------------------------


class _Virtualized(threading.local):
    """``V``: the handler (``V.ops``) inner functions compute with, and the graph
    being lowered (``V.graph``); set by whoever evaluates them."""

    ops = None
    graph = None


V = _Virtualized()


class _OpsProxy:
    """``ops.add(a, b)`` in an inner function calls the current handler."""

    def __getattr__(self, name):
        return getattr(V.ops, name)


ops = _OpsProxy()

# -- IR nodes ----------------------------------------------------------------------


def compute_dtype(dtype):
    """The type arithmetic happens in: float for half types (rounded on store)."""
    return dt.float32 if dtype in (dt.float16, dt.bfloat16) else dtype


class IRNode:
    """A lowered value: ``dtype``, ``size`` and a loader from index to value."""

    dtype = None
    size: tuple = ()

    def make_loader(self):
        raise NotImplementedError

    def numel(self) -> int:
        n = 1
        for s in self.size:
            n *= s
        return n


class Loops(IRNode):
    def __init__(self, dtype, ranges, inner_fn, origin=None):
        self.dtype, self.size, self.inner_fn = dtype, tuple(ranges), inner_fn
        self.origin = origin   # the aten op name this came from (kernel names)

    @property
    def ranges(self):
        return self.size


class Pointwise(Loops):
    def make_loader(self):
        return self.inner_fn


class Reduction(Loops):
    """``reduction_type``: sum, prod, max, min, argmax, argmin, any; or
    welford_mean and welford_m2, a pair over one inner function (a row's mean
    and sum of squared deviations, computed together)."""

    def __init__(self, dtype, ranges, reduction_ranges, reduction_type, inner_fn,
                 src_dtype, origin=None):
        super().__init__(dtype, ranges, inner_fn, origin)
        self.reduction_ranges = tuple(reduction_ranges)
        self.reduction_type = reduction_type
        self.src_dtype = src_dtype


class ScatterAdd(Loops):
    """``out`` of ``ranges``, zero, then ``out[where] += value`` for every index
    of ``source_ranges``, where ``inner_fn(index)`` gives ``(where, value)``
    and ``where`` may be loaded at run time: an embedding's gradient, rows
    added into the rows their indices name.  Its kernel runs alone, serially
    over the source rows (two rows may name one output row)."""

    def __init__(self, dtype, ranges, source_ranges, inner_fn, origin=None):
        super().__init__(dtype, ranges, inner_fn, origin)
        self.source_ranges = tuple(source_ranges)


class View(IRNode):
    """``base`` seen through ``reindex``: an index of this view to one of base."""

    def __init__(self, base: IRNode, size, reindex):
        self.base, self.size, self.reindex, self.dtype = base, tuple(size), reindex, base.dtype

    def make_loader(self):
        load = self.base.make_loader()
        return lambda index: load(self.reindex(index))


class Layout:
    """Where a buffer's elements live: ``offset + sum(index * stride)``."""

    __slots__ = ("dtype", "size", "stride", "offset")

    def __init__(self, dtype, size, stride=None, offset: int = 0):
        self.dtype, self.size = dtype, tuple(size)
        self.stride = tuple(stride) if stride is not None else contiguous_strides(self.size)
        self.offset = offset

    def index(self, index) -> Index:
        return sum((i * s for i, s in zip(index, self.stride) if s), Index(const=self.offset))

    def is_symbolic(self) -> bool:
        """Whether its geometry depends on symbolic sizes (then it cannot be
        allocated once, ahead of the calls)."""
        return any(map(is_symbolic, (*self.size, *self.stride, self.offset)))

    def is_contiguous(self) -> bool:
        return all(st == c for st, c, n in zip(self.stride, contiguous_strides(self.size),
                                               self.size) if n != 1)

    def __repr__(self):
        return f"{self.dtype}{list(self.size)} stride={list(self.stride)}" + \
            (f" offset={self.offset}" if self.offset else "")


class Buffer(IRNode):
    """Named memory: element ``index`` is loaded from ``name`` at its layout."""

    def __init__(self, name: str, layout: Layout):
        self.name, self.layout = name, layout
        self.dtype, self.size = layout.dtype, layout.size

    def make_loader(self):
        return lambda index: ops.load(self.name, self.layout.index(index))

    def storage(self) -> "Buffer":
        return self


class InputBuffer(Buffer):
    """A graph input (placeholder), passed to the compiled function."""


class ComputedBuffer(Buffer):
    """A Pointwise or Reduction stored into memory; the scheduler fuses these."""

    def __init__(self, name: str, layout: Layout, data: Loops):
        super().__init__(name, layout)
        self.data = data

    def target_name(self) -> str:
        """The memory this node writes: its own, or a mutated input's."""
        return getattr(self, "target", None) or self.name

    def is_reduction(self) -> bool:
        return isinstance(self.data, Reduction)

    def loop_ranges(self) -> tuple:
        """(outer ranges, reduction ranges) of this buffer's loop nest; dims of
        size 1 take no loop (a scatter loops over its source)."""
        data = self.data
        ranges = data.source_ranges if self.is_scatter() else data.ranges
        return (tuple(n for n in ranges if not is_one(n)),
                tuple(n for n in getattr(data, "reduction_ranges", ()) if not is_one(n)))

    def is_scatter(self) -> bool:
        return isinstance(self.data, ScatterAdd)

    def compute(self, index, rindex=None):
        """The value at loop index ``index`` (and ``rindex``), through ``ops``;
        for a scatter, ``(where, value)``."""
        data = self.data
        if self.is_scatter():
            return data.inner_fn(_with_unit_dims(index, data.source_ranges))
        full = _with_unit_dims(index, data.ranges)
        if rindex is None:
            return data.inner_fn(full)
        return data.inner_fn(full, _with_unit_dims(rindex, data.reduction_ranges))

    def store_index(self, index) -> Index:
        """Where the value at loop index ``index`` is stored."""
        return self.layout.index(_with_unit_dims(index, self.data.ranges))


def _with_unit_dims(index, ranges) -> list:
    """A loop index (no entries for size-1 dims) as an index over ``ranges``."""
    it = iter(index)
    return [Index() if is_one(n) else next(it) for n in ranges]


class AllocatedBuffer(Buffer):
    """Memory the wrapper allocates and ComputedBuffers fill, each storing into
    a window of it (``target``): ``cat`` (Inductor's ConcatKernel)."""


class ExternKernel(Buffer):
    """An ATen op called as it is by the wrapper; ``args`` hold buffers and
    ReinterpretViews where the op takes tensors.  ``layout`` is None when the
    op returns several tensors (``MultiOutput`` picks them)."""

    def __init__(self, name: str, layout, op, args, kwargs):
        self.name, self.layout, self.op, self.args, self.kwargs = name, layout, op, args, kwargs
        if layout is not None:
            self.dtype, self.size = layout.dtype, layout.size

    def inputs(self) -> list:
        found = []

        def walk(a):
            if isinstance(a, (Buffer, ReinterpretView)):
                found.append(a.storage())
            elif isinstance(a, (list, tuple)):
                for b in a:
                    walk(b)
        walk(self.args)
        walk(list(self.kwargs.values()))
        return found


class MultiOutput(Buffer):
    """Output ``index`` of a multi-output extern kernel."""

    def __init__(self, name: str, layout: Layout, parent: ExternKernel, index: int):
        super().__init__(name, layout)
        self.parent, self.index = parent, index


class ReinterpretView(IRNode):
    """A strided window on a buffer: another layout over the same memory."""

    def __init__(self, data: Buffer, layout: Layout):
        self.data, self.layout = data, layout
        self.dtype, self.size = layout.dtype, layout.size

    def storage(self) -> Buffer:
        return self.data

    def make_loader(self):
        return lambda index: ops.load(self.data.name, self.layout.index(index))
