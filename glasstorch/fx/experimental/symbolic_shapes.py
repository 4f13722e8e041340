"""``torch.fx.experimental.symbolic_shapes``: ShapeEnv, the owner of size symbols.

A ShapeEnv makes a symbol for each size it is asked to make dynamic, named as
PyTorch names them: ``s`` and a number from the SHA-256 of the source's name
modulo 100 (``input0.size()[0]`` gives ``s75``), the next free number on a
collision.  It duck-sizes -- one symbol per distinct value, so equal sizes
share a symbol -- and specializes the sizes 0 and 1 to constants (every size
symbol then ranges over [2, 2**63 - 2]).

When a meta rule or a program turns a symbolic comparison into a Python bool,
``evaluate_expr`` decides it from the symbols' value ranges and the guards so
far when it can; otherwise it takes the answer the hints give and records the
comparison (negated if false) as a guard: the condition under which the
traced graph is valid.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from .sym_node import (Function, Poly, Rel, SymBool, SymInt, SymNode, Symbol, exact_quotient, mul,
                       sub, wrap_node)

__all__ = ["GuardOnDataDependentSymNode", "ShapeEnv", "ShapeGuard", "guard_int", "guard_bool",
           "hint_int", "is_concrete_int", "is_concrete_bool", "has_free_symbols", "free_symbols", "statically_known_true",
           "statically_known_equals", "guard_size_oblivious", "is_accessor_node"]

_INF = math.inf
# A size symbol: 0 and 1 are specialized away, and a size fits int64 (so the
# INT64_MAX a slice's end defaults to is never below it).
_SIZE_RANGE = (2, 2 ** 63 - 2)


class GuardOnDataDependentSymNode(RuntimeError):
    """A trace needed a value that only the data decides (``if x.sum() > 0``
    while exporting): PyTorch's error for a guard on an unbacked symbol."""


@dataclass(frozen=True)
class ShapeGuard:
    """One recorded guard: a comparison that held in the traced run."""
    expr: Rel

    def __str__(self):
        return str(self.expr)


class ShapeEnv:
    """Size symbols, their hints and ranges, and the guards recorded so far
    (PyTorch's ShapeEnv)."""

    def __init__(self, *, duck_shape: bool = True, specialize_zero_one: bool = True):
        self.duck_shape = duck_shape
        self.specialize_zero_one = specialize_zero_one
        self.guards: list[ShapeGuard] = []
        self.var_to_val: dict[Symbol, int] = {}
        self.var_to_range: dict[Symbol, tuple] = {}
        self.val_to_var: dict[int, Symbol] = {}
        self.source_to_var: dict[str, Symbol] = {}
        self.bound_sources: dict[str, Symbol] = {}     # create_shared_symbol's sources
        self.unique_ids: set[int] = set()
        self._known: dict[Rel, bool] = {}

    # -- symbols ---------------------------------------------------------------------

    def _generate_unique_id(self, source_name: str) -> int:
        attempt = int(hashlib.sha256(source_name.encode()).hexdigest(), 16) % 100
        while attempt in self.unique_ids:
            attempt += 1
        self.unique_ids.add(attempt)
        return attempt

    def create_symbol(self, val: int, source_name: str, *, positive: bool | None = True):
        """The expression for a value ``val`` read from ``source_name``: 0 or 1
        as themselves, a duck-sized value's existing symbol, else a new symbol
        (ranging over [2, oo] when ``positive``, unbounded for an int input)."""
        bound = self.bound_sources.get(source_name)
        if bound is not None:
            return bound
        if val in (0, 1) and self.specialize_zero_one:
            return val
        duck = self.duck_shape and positive      # an int input never shares a size's symbol
        if duck and val in self.val_to_var:
            symbol = self.val_to_var[val]
        else:
            symbol = Symbol(f"s{self._generate_unique_id(source_name)}")
            self.var_to_val[symbol] = val
            self.var_to_range[symbol] = _SIZE_RANGE if positive else (-_INF, _INF)
            if duck:
                self.val_to_var[val] = symbol
        self.source_to_var.setdefault(source_name, symbol)
        return symbol

    def create_shared_symbol(self, val: int, source_names: list, low, high) -> Symbol:
        """One symbol that every source in ``source_names`` reads (export's Dim
        shared by several tensors), ranging over [low, high]: each source
        draws its id, and the name that sorts first stands for all of them,
        as PyTorch's ShapeEnv replaces equal symbols by the smallest."""
        symbol = min((Symbol(f"s{self._generate_unique_id(name)}") for name in source_names),
                     key=lambda sym: sym.name)
        self.var_to_val[symbol] = val
        self.var_to_range[symbol] = (low, high)
        for name in source_names:
            self.bound_sources[name] = symbol
            self.source_to_var.setdefault(name, symbol)
        return symbol

    def create_symintnode(self, expr, *, hint: int):
        """A SymInt for ``expr`` (a plain int when ``expr`` is a constant)."""
        return wrap_node(SymNode(expr, self, int, hint))

    def create_symbolic_sizes_strides_storage_offset(self, size, stride, storage_offset: int,
                                                    source_name: str, dynamic_dims=None):
        """Symbolic sizes, strides and offset for a tensor read from ``source_name``.
        Sizes are symbols; a stride that is the product of the sizes and
        strides inside it (a contiguous layout) is that product, as PyTorch infers
        it, and any other stride gets a symbol of its own."""
        sizes = [self.create_symbol(v, f"{source_name}.size()[{i}]")
                 if dynamic_dims is None or i in dynamic_dims else v
                 for i, v in enumerate(size)]
        strides: list = [None] * len(size)
        candidates: dict[int, object] = {}
        for i in sorted(range(len(stride)), key=lambda i: (stride[i], -i)):
            val = stride[i]
            contiguous = i != len(stride) - 1 and stride[i] == size[i + 1] * stride[i + 1]
            if val in (0, 1) and not contiguous:
                expr = val
            elif val in candidates:
                expr = candidates[val]
            else:
                expr = self.create_symbol(val, f"{source_name}.stride()[{i}]")
            strides[i] = expr
            candidates[size[i] * val] = mul(sizes[i], expr)
        offset = storage_offset if dynamic_dims is not None else \
            self.create_symbol(storage_offset, f"{source_name}.storage_offset()")
        make = self.create_symintnode
        return (tuple(make(e, hint=v) for e, v in zip(sizes, size)),
                tuple(make(e, hint=v) for e, v in zip(strides, stride)),
                make(offset, hint=storage_offset))

    # -- guards ---------------------------------------------------------------------

    def bounds(self, expr) -> tuple:
        """An interval holding every value ``expr`` can take (interval arithmetic
        over the symbols' ranges)."""
        if type(expr) is int:
            return expr, expr
        if type(expr) is Symbol:
            return self.var_to_range.get(expr, (-_INF, _INF))
        if type(expr) is Poly:
            lo = hi = 0
            for monomial, coeff in expr.terms.items():
                term = (coeff, coeff)
                for base, exp in monomial:
                    for _ in range(exp):
                        term = _interval_mul(term, self.bounds(base))
                lo, hi = lo + term[0], hi + term[1]
            return lo, hi
        a, b = (self.bounds(arg) for arg in expr.args)
        if expr.func == "Max":
            return max(a[0], b[0]), max(a[1], b[1])
        if expr.func == "Min":
            return min(a[0], b[0]), min(a[1], b[1])
        if b[0] <= 0:
            return -_INF, _INF
        if expr.func == "Mod":
            return 0, b[1] - 1
        if a[0] >= 0:                                   # FloorDiv of a non-negative value
            return (a[0] // b[1] if b[1] != _INF else 0), (a[1] // b[0] if a[1] != _INF else _INF)
        return -_INF, _INF

    def _maybe_evaluate_static(self, rel: Rel) -> bool | None:
        known = self._known.get(rel)
        if known is not None:
            return known
        decided = rel.holds(self.bounds(sub(rel.lhs, rel.rhs)))
        return decided if decided is not None else self._compare_ratio(rel)

    def _compare_ratio(self, rel: Rel) -> bool | None:
        """``rel`` between ``a`` and ``a*q`` (``a`` positive) decided as between 1
        and ``q``: ``s7 < s7*s75*s96`` holds as ``1 < s75*s96`` does, which the
        bounds of the difference alone do not show."""
        for base, multiple, op in ((rel.lhs, rel.rhs, rel.op),
                                   (rel.rhs, rel.lhs, Rel.FLIPPED[rel.op])):
            q = exact_quotient(multiple, base)
            if q is not None and self.bounds(base)[0] > 0:
                return Rel(op, 1, q).holds(self.bounds(sub(1, q)))
        return None

    def evaluate_expr(self, rel: Rel, hint: bool) -> bool:
        """``rel`` as a bool: decided statically, or by ``hint`` with a guard."""
        static = self._maybe_evaluate_static(rel)
        if static is not None:
            return static
        guard = rel if hint else rel.negated()
        self.guards.append(ShapeGuard(guard))
        self._known[rel], self._known[rel.negated()] = hint, not hint
        self._refine_range(guard)
        return hint

    def _refine_range(self, guard: Rel) -> None:
        """A guard ``symbol op constant`` narrows the symbol's range."""
        symbol, value = guard.lhs, guard.rhs
        if type(symbol) is not Symbol or type(value) is not int:
            return
        lo, hi = self.var_to_range[symbol]
        if guard.op == "Eq":
            lo, hi = value, value
        elif guard.op in ("Gt", "Ge"):
            lo = max(lo, value + (guard.op == "Gt"))
        elif guard.op in ("Lt", "Le"):
            hi = min(hi, value - (guard.op == "Lt"))
        self.var_to_range[symbol] = (lo, hi)

    def format_guards(self, verbose: bool = False) -> str:
        """The guards, one `` - guard`` line each."""
        return "\n".join(f" - {guard}" for guard in self.guards)


def _interval_mul(a: tuple, b: tuple) -> tuple:
    products = [0 if 0 in (x, y) else x * y for x in a for y in b]
    return min(products), max(products)


# -- helpers PyTorch's meta code and passes call ------------------------------------------

def is_concrete_int(a) -> bool:
    return isinstance(a, int) and not isinstance(a, bool)


def is_concrete_bool(a) -> bool:
    return isinstance(a, bool)


def has_free_symbols(val) -> bool:
    return bool(free_symbols(val))


def free_symbols(val) -> set:
    """The symbols ``val`` (a SymInt/SymBool, or a list of them) depends on."""
    if isinstance(val, (list, tuple)):
        return set().union(*(free_symbols(v) for v in val)) if val else set()
    if not isinstance(val, (SymInt, SymBool)):
        return set()
    return _symbols_of(val.node.expr)


def _symbols_of(expr) -> set:
    if type(expr) is Symbol:
        return {expr}
    if type(expr) is Poly:
        return set().union(*(_symbols_of(b) for m in expr.terms for b, _ in m))
    if type(expr) is Function:
        return set().union(*(_symbols_of(a) for a in expr.args))
    if type(expr) is Rel:
        return _symbols_of(expr.lhs) | _symbols_of(expr.rhs)
    return set()


def guard_int(a) -> int:
    return int(a)


def guard_bool(a) -> bool:
    return bool(a)


def hint_int(a) -> int:
    """The value ``a`` has in the traced run, without a guard."""
    return a.node.hint if isinstance(a, SymInt) else a


def statically_known_true(a) -> bool:
    """True only when ``a`` holds for every value of its symbols (no guard)."""
    if not isinstance(a, SymBool):
        return bool(a)
    return a.node.shape_env._maybe_evaluate_static(a.node.expr) is True


def statically_known_equals(a, b) -> bool:
    """``a == b`` for every value of their symbols (no guard); ints compare."""
    if type(a) is int and type(b) is int:
        return a == b
    return statically_known_true(a == b)


def guard_size_oblivious(a) -> bool:
    return bool(a)


def is_accessor_node(node) -> bool:
    """A ``sym_size``/``sym_stride``/``sym_numel``/``sym_storage_offset`` call:
    free to drop when unused."""
    target = node.target
    return node.op == "call_function" and getattr(target, "_opname", None) in \
        ("sym_size", "sym_stride", "sym_numel", "sym_storage_offset")
