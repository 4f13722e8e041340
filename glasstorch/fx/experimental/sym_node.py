"""``torch.fx.experimental.sym_node``: SymNode, SymInt, SymBool.

A SymInt is an int whose value is an expression over size symbols (``s75``,
``2*s75``, ``s7*s96 + 1``) that also knows the value it has in the traced run
(its *hint*).  Meta rules compute with SymInts as with ints; where one needs a
Python bool or int (``if size == 1``, ``range(n)``), the ShapeEnv answers from
the symbols' value ranges or, failing that, from the hint, and records the
answer as a guard (see ``ShapeEnv.evaluate_expr``).

PyTorch keeps these expressions in sympy.  Here they are a small algebra of
our own (Note [Expressions]), normalized just enough to print what PyTorch's
sympy prints for the shapes of common programs.

Note [Expressions]
    An expression is a Python int, a ``Symbol``, a ``Function`` (FloorDiv,
    Mod, Max, Min, IntTrueDiv) or a ``Poly``: a sum of terms ``coeff * base**exp * ...``.
    A base is a Symbol, a Function or a Poly of several terms (sympy keeps
    ``(s0 + 1)*(s1 + 2)`` unexpanded; only a number times a sum distributes).
    ``normalize`` makes every value canonical (a one-term Poly ``1*s0`` is the
    Symbol ``s0``; a constant is an int), so equal expressions compare equal.
"""
from __future__ import annotations

import math
import operator

from ..._core.tls import state as _tls

__all__ = ["SymNode", "SymInt", "SymFloat", "SymBool", "sym_max", "sym_min", "Symbol", "Function", "Poly",
           "Rel"]


# -- expressions (Note [Expressions]) ------------------------------------------------------

class Symbol:
    """A size symbol (sympy's Symbol): ``s75``."""

    __slots__ = ("name",)
    precedence = 1000

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        return type(other) is Symbol and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    __repr__ = __str__

    def sort_key(self):
        return (2, self.name)


class Function:
    """``FloorDiv(a, b)``, ``Mod(a, b)``, ``Max(a, b)``, ``Min(a, b)`` that did not
    simplify, or ``IntTrueDiv(a, b)`` (the float ``a / b``)."""

    __slots__ = ("func", "args")

    def __init__(self, func: str, args: tuple):
        self.func, self.args = func, args

    @property
    def precedence(self):
        # torch's FloorDiv and PythonMod bind looser than + (35); Max/Min are calls (70)
        return 35 if self.func in ("FloorDiv", "Mod") else 70

    def __eq__(self, other):
        return type(other) is Function and (other.func, other.args) == (self.func, self.args)

    def __hash__(self):
        return hash((self.func, self.args))

    def __str__(self):
        if self.func == "FloorDiv":
            base, divisor = (_paren_unless_atom(a) for a in self.args)
            return f"({base}//{divisor})"
        return f"{self.func}({', '.join(map(expr_str, self.args))})"

    def sort_key(self):
        return (4, self.func, tuple(map(sort_key, self.args)))


class Poly:
    """A sum of terms: ``terms`` maps a monomial (a tuple of ``(base, exp)`` sorted
    by the bases' sort keys; ``()`` for the constant) to its integer coefficient."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: dict):
        self.terms = terms
        self._hash = hash(frozenset(terms.items()))

    @property
    def precedence(self):
        return 40 if len(self.terms) > 1 else 50       # Add, else Mul

    def __eq__(self, other):
        return type(other) is Poly and other.terms == self.terms

    def __hash__(self):
        return self._hash

    def __str__(self):
        if len(self.terms) == 1:
            return _term_str(*next(iter(self.terms.items())))
        return _add_str(self)

    def sort_key(self):
        return (3, str(self))


def sort_key(e):
    """sympy's default_sort_key, as far as these expressions need it: numbers,
    then symbols by name, then sums and products, then functions."""
    return (1, e) if type(e) is int else e.sort_key()


def expr_str(e) -> str:
    return str(e)


def _precedence(e) -> int:
    if type(e) is int:
        return 1000 if e >= 0 else 40
    return e.precedence


def _paren(e, level: int) -> str:
    """``e`` printed, in parentheses when it binds no tighter than ``level``."""
    return f"({e})" if _precedence(e) <= level else str(e)


def _paren_unless_atom(e) -> str:
    return str(e) if type(e) is Symbol or (type(e) is int and e >= 0) else f"({e})"


def _term_str(monomial: tuple, coeff: int) -> str:
    if not monomial:
        return str(coeff)
    factors = []
    for base, exp in monomial:
        text = _paren(base, 50) if exp == 1 else f"{_paren(base, 60)}**{exp}"
        factors.append(text)
    body = "*".join(factors)
    if coeff == 1:
        return body
    return f"-{body}" if coeff == -1 else f"{coeff}*{body}"


def _ordered_terms(p: Poly) -> list:
    """The terms in sympy's print order: by monomial, lexicographic over the
    bases sorted by sort key, highest first, the constant last -- except that
    ``c - x`` (a positive constant and one negated factor) prints the constant first."""
    items = list(p.terms.items())
    if len(items) == 2:
        const = [t for t in items if not t[0]]
        other = [t for t in items if t[0]]
        if const and const[0][1] > 0 and other[0][1] < 0 and len(other[0][0]) == 1 \
                and other[0][0][0][1] == 1:
            return const + other
    gens = sorted({base for monomial, _ in items for base, _ in monomial}, key=sort_key)
    index = {g: i for i, g in enumerate(gens)}

    def key(item):
        vector = [0] * len(gens)
        for base, exp in item[0]:
            vector[index[base]] = exp
        return tuple(-v for v in vector), item[1]
    return sorted(items, key=key)


def _add_str(p: Poly) -> str:
    parts = []
    for monomial, coeff in _ordered_terms(p):
        text = _term_str(monomial, coeff)
        sign, text = ("-", text[1:]) if text.startswith("-") else ("+", text)
        parts.append((sign, text))
    first_sign, first = parts[0]
    out = ("-" if first_sign == "-" else "") + first
    for sign, text in parts[1:]:
        out += f" {sign} {text}"
    return out


def _terms(e) -> dict:
    if type(e) is int:
        return {(): e} if e else {}
    if type(e) is Poly:
        return e.terms
    return {((e, 1),): 1}


def normalize(terms: dict):
    """The canonical expression for ``terms`` (zero coefficients dropped)."""
    terms = {m: c for m, c in terms.items() if c}
    if not terms:
        return 0
    if len(terms) == 1:
        (monomial, coeff), = terms.items()
        if not monomial:
            return coeff
        if coeff == 1 and len(monomial) == 1 and monomial[0][1] == 1:
            return monomial[0][0]
    return Poly(terms)


def add(a, b):
    if type(a) is int and type(b) is int:
        return a + b
    terms = dict(_terms(a))
    for monomial, coeff in _terms(b).items():
        terms[monomial] = terms.get(monomial, 0) + coeff
    return normalize(terms)


def _as_monomial(e) -> tuple:
    """(monomial, coeff) of a one-term expression; a sum is one base of its own."""
    terms = _terms(e)
    if len(terms) == 1:
        return next(iter(terms.items()))
    return ((e, 1),), 1


def mul(a, b):
    if type(a) is int and type(b) is int:
        return a * b
    if type(a) is int or type(b) is int:        # a number distributes over a sum
        c, e = (a, b) if type(a) is int else (b, a)
        return normalize({m: c * k for m, k in _terms(e).items()})
    (ma, ca), (mb, cb) = _as_monomial(a), _as_monomial(b)
    powers = dict(ma)
    for base, exp in mb:
        powers[base] = powers.get(base, 0) + exp
    monomial = tuple(sorted(powers.items(), key=lambda be: sort_key(be[0])))
    return normalize({monomial: ca * cb})


def neg(a):
    return mul(-1, a)


def sub(a, b):
    return add(a, neg(b))


def _divide_term(monomial, coeff, d_monomial, d_coeff):
    """``monomial*coeff / d_monomial*d_coeff`` when it divides exactly, else None."""
    if coeff % d_coeff:
        return None
    powers = dict(monomial)
    for base, exp in d_monomial:
        if powers.get(base, 0) < exp:
            return None
        powers[base] -= exp
    return tuple((b, powers[b]) for b, _ in monomial if powers[b]), coeff // d_coeff


def exact_quotient(a, b):
    """``a / b`` when ``b`` is one term dividing every term of ``a``, else None."""
    b_terms = _terms(b)
    if len(b_terms) != 1:
        return None
    (d_monomial, d_coeff), = b_terms.items()
    out = {}
    for monomial, coeff in _terms(a).items():
        q = _divide_term(monomial, coeff, d_monomial, d_coeff)
        if q is None:
            return None
        out[q[0]] = q[1]
    return normalize(out)


def floordiv(a, b):
    """``a // b`` (torch's FloorDiv): terms a positive constant divides leave the
    division, common factors cancel; what is left stays ``FloorDiv``."""
    if type(a) is int and type(b) is int:
        return a // b
    if a == b:
        return 1
    if type(b) is int and b > 0:
        exact = {m: c // b for m, c in _terms(a).items() if c % b == 0}
        rest = {m: c for m, c in _terms(a).items() if c % b}
        if rest:
            g = math.gcd(b, *rest.values())
            rest_expr, b = normalize({m: c // g for m, c in rest.items()}), b // g
            rest_div = rest_expr // b if type(rest_expr) is int else \
                (rest_expr if b == 1 else Function("FloorDiv", (rest_expr, b)))
        else:
            rest_div = 0
        return add(normalize(exact), rest_div)
    quotient = exact_quotient(a, b)
    return quotient if quotient is not None else Function("FloorDiv", (a, b))


def mod(a, b):
    """``a % b`` (Python's sign rule, torch's PythonMod)."""
    if type(a) is int and type(b) is int:
        return a % b
    if a == b or exact_quotient(a, b) is not None:
        return 0
    if type(b) is int and b > 0:
        rest = {m: (c % b if not m else c) for m, c in _terms(a).items() if c % b}
        a = normalize(rest)
        if type(a) is int:
            return a % b
    return Function("Mod", (a, b))


def _minmax(name, a, b):
    if type(a) is int and type(b) is int:
        return (max if name == "Max" else min)(a, b)
    if a == b:
        return a
    return Function(name, tuple(sorted((a, b), key=sort_key)))


class Rel:
    """A comparison of two expressions: ``s75 > 3``, ``Eq(s0, s1)``."""

    __slots__ = ("op", "lhs", "rhs")
    _SYMBOLS = {"Gt": ">", "Ge": ">=", "Lt": "<", "Le": "<="}
    NEGATION = {"Gt": "Le", "Le": "Gt", "Lt": "Ge", "Ge": "Lt", "Eq": "Ne", "Ne": "Eq"}
    FLIPPED = {"Gt": "Lt", "Lt": "Gt", "Ge": "Le", "Le": "Ge", "Eq": "Eq", "Ne": "Ne"}   # a op b = b op' a

    def __init__(self, op, lhs, rhs):
        self.op, self.lhs, self.rhs = op, lhs, rhs

    def negated(self) -> "Rel":
        return Rel(self.NEGATION[self.op], self.lhs, self.rhs)

    def __eq__(self, other):
        return type(other) is Rel and (other.op, other.lhs, other.rhs) == \
            (self.op, self.lhs, self.rhs)

    def __hash__(self):
        return hash((self.op, self.lhs, self.rhs))

    def __str__(self):
        if self.op in ("Eq", "Ne"):
            return f"{self.op}({self.lhs}, {self.rhs})"
        return f"{_paren(self.lhs, 35)} {self._SYMBOLS[self.op]} {_paren(self.rhs, 35)}"

    def holds(self, difference_bounds) -> bool | None:
        """Decided from the bounds of ``lhs - rhs``, or None."""
        lo, hi = difference_bounds
        if self.op == "Eq":
            return True if lo == hi == 0 else (False if lo > 0 or hi < 0 else None)
        if self.op == "Ne":
            return None if (r := Rel("Eq", self.lhs, self.rhs).holds(difference_bounds)) is None \
                else not r
        if self.op in ("Gt", "Ge"):
            strict = self.op == "Gt"
            if lo > 0 or (not strict and lo >= 0):
                return True
            return False if hi < 0 or (strict and hi <= 0) else None
        flipped = Rel("Gt" if self.op == "Lt" else "Ge", 0, 0)
        return flipped.holds((-hi, -lo))


_COMPARE = {"Eq": operator.eq, "Ne": operator.ne, "Lt": operator.lt, "Le": operator.le,
            "Gt": operator.gt, "Ge": operator.ge}


# -- SymNode --------------------------------------------------------------------------

class SymNode:
    """One symbolic value (PyTorch's SymNode): its expression, its hint (the
    value in the traced run) and the ShapeEnv that made its symbols.  Its
    methods compute new nodes; ``guard_bool`` / ``guard_int`` turn it into a
    Python value, recording a guard when the ranges cannot decide."""

    __slots__ = ("expr", "shape_env", "pytype", "hint", "__weakref__")

    def __init__(self, expr, shape_env, pytype, hint):
        self.expr, self.shape_env, self.pytype, self.hint = expr, shape_env, pytype, hint

    def is_int(self) -> bool:
        return self.pytype is int

    def is_bool(self) -> bool:
        return self.pytype is bool

    def is_symbolic(self) -> bool:
        return True

    def str(self) -> str:
        return str(self.expr)

    def _binary(self, fn, other, py_op):
        other_expr, other_hint = (other.expr, other.hint) if isinstance(other, SymNode) \
            else (other, other)
        return SymNode(fn(self.expr, other_expr), self.shape_env, int,
                       py_op(self.hint, other_hint))

    def add(self, other):
        return self._binary(add, other, operator.add)

    def sub(self, other):
        return self._binary(sub, other, operator.sub)

    def mul(self, other):
        return self._binary(mul, other, operator.mul)

    def floordiv(self, other):
        return self._binary(floordiv, other, operator.floordiv)

    def mod(self, other):
        return self._binary(mod, other, operator.mod)

    def truediv(self, other):
        """``a / b`` of two ints: a float, ``IntTrueDiv(a, b)`` (a constant when both are)."""
        other_expr, other_hint = (other.expr, other.hint) if isinstance(other, SymNode) \
            else (other, other)
        expr = self.expr / other_expr if type(self.expr) is int and type(other_expr) is int \
            else Function("IntTrueDiv", (self.expr, other_expr))
        return SymNode(expr, self.shape_env, float, self.hint / other_hint)

    def sym_max(self, other):
        return self._binary(lambda a, b: _minmax("Max", a, b), other, max)

    def sym_min(self, other):
        return self._binary(lambda a, b: _minmax("Min", a, b), other, min)

    def neg(self):
        return SymNode(neg(self.expr), self.shape_env, int, -self.hint)

    def compare(self, op: str, other):
        other_expr, other_hint = (other.expr, other.hint) if isinstance(other, SymNode) \
            else (other, other)
        difference = sub(self.expr, other_expr)
        hint = _COMPARE[op](self.hint, other_hint)
        if type(difference) is int:
            return SymNode(hint, self.shape_env, bool, hint)
        return SymNode(Rel(op, self.expr, other_expr), self.shape_env, bool, hint)

    def guard_bool(self) -> bool:
        if type(self.expr) is bool:
            return self.expr
        return self.shape_env.evaluate_expr(self.expr, self.hint)

    def guard_int(self) -> int:
        if type(self.expr) is int:
            return self.expr
        self.shape_env.evaluate_expr(Rel("Eq", self.expr, self.hint), True)
        return self.hint


def wrap_node(node: SymNode):
    """The user value of ``node``: a plain int/bool when its expression is a constant."""
    if type(node.expr) in (int, bool, float):
        return node.expr
    return {bool: SymBool, float: SymFloat}.get(node.pytype, SymInt)(node)


# -- tracing hook ---------------------------------------------------------------------

def _sym_dispatch(op, args, compute):
    """Compute a SymInt operation; under make_fx's proxy mode, record it too
    (PyTorch's handle_sym_dispatch).  ``args`` are the user-level operands in
    the order the recorded call takes them."""
    out = compute()
    for mode in reversed(_tls.dispatch_modes + _tls.pre_dispatch_modes):
        sym_dispatch = getattr(mode, "__sym_dispatch__", None)
        if sym_dispatch is not None:
            return sym_dispatch(op, args, out)
    return out


def _operand(value):
    if isinstance(value, (SymInt, SymBool)):
        return value.node
    if type(value) is bool or not isinstance(value, int):
        return None
    return value


def _binary_magic(py_op, method, reflected=False):
    def impl(self, other):
        other_node = _operand(other)
        if other_node is None:
            return NotImplemented
        args = (other, self) if reflected else (self, other)
        if reflected:
            if not isinstance(other_node, SymNode):
                other_node = SymNode(other_node, self.node.shape_env, int, other_node)
            return _sym_dispatch(py_op, args,
                                 lambda: wrap_node(getattr(other_node, method)(self.node)))
        return _sym_dispatch(py_op, args, lambda: wrap_node(getattr(self.node, method)(other_node)))
    return impl


def _compare_magic(py_op, op):
    def impl(self, other):
        other_node = _operand(other)
        if other_node is None:
            return NotImplemented
        return _sym_dispatch(py_op, (self, other),
                             lambda: wrap_node(self.node.compare(op, other_node)))
    return impl


class SymInt:
    """An int with a symbolic value (``torch.SymInt``).  Arithmetic gives
    SymInts (a plain int when the result is a constant), comparisons SymBools;
    ``int()`` / ``operator.index`` specialize it to its hint, with a guard.
    Hashed by identity (PyTorch refuses to hash one): equal SymInts are
    different dict keys."""

    __slots__ = ("node",)

    def __init__(self, node: SymNode):
        self.node = node

    __add__ = _binary_magic(operator.add, "add")
    __radd__ = _binary_magic(operator.add, "add", reflected=True)
    __sub__ = _binary_magic(operator.sub, "sub")
    __rsub__ = _binary_magic(operator.sub, "sub", reflected=True)
    __mul__ = _binary_magic(operator.mul, "mul")
    __rmul__ = _binary_magic(operator.mul, "mul", reflected=True)
    __floordiv__ = _binary_magic(operator.floordiv, "floordiv")
    __rfloordiv__ = _binary_magic(operator.floordiv, "floordiv", reflected=True)
    __mod__ = _binary_magic(operator.mod, "mod")
    __rmod__ = _binary_magic(operator.mod, "mod", reflected=True)
    __truediv__ = _binary_magic(operator.truediv, "truediv")
    __rtruediv__ = _binary_magic(operator.truediv, "truediv", reflected=True)
    __eq__ = _compare_magic(operator.eq, "Eq")
    __ne__ = _compare_magic(operator.ne, "Ne")
    __lt__ = _compare_magic(operator.lt, "Lt")
    __le__ = _compare_magic(operator.le, "Le")
    __gt__ = _compare_magic(operator.gt, "Gt")
    __ge__ = _compare_magic(operator.ge, "Ge")

    def __neg__(self):
        return _sym_dispatch(operator.neg, (self,), lambda: wrap_node(self.node.neg()))

    def __pos__(self):
        return self

    def __hash__(self):
        return id(self)

    def __bool__(self):
        return bool(self != 0)

    def __int__(self):
        return self.node.guard_int()

    __index__ = __int__

    def __float__(self):
        return float(int(self))

    def __repr__(self):
        return self.node.str()

    __str__ = __repr__


class SymFloat:
    """A float with a symbolic value (``torch.SymFloat``): what ``/`` of SymInts
    gives, ``IntTrueDiv(s75, 2)``.  It passes as a Scalar (``x * (n / 2)``);
    there is no arithmetic on it here."""

    __slots__ = ("node",)

    def __init__(self, node: SymNode):
        self.node = node

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return self.node.str()

    __str__ = __repr__


class SymBool:
    """A bool with a symbolic value (``torch.SymBool``): ``bool()`` answers it,
    recording a guard."""

    __slots__ = ("node",)

    def __init__(self, node: SymNode):
        self.node = node

    def __bool__(self):
        return self.node.guard_bool()

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return self.node.str()

    __str__ = __repr__


def _sym_minmax(name, method, a, b):
    if not isinstance(a, SymInt) and not isinstance(b, SymInt):
        return (max if name == "max" else min)(a, b)
    first, second = (a, b) if isinstance(a, SymInt) else (b, a)
    return _sym_dispatch(sym_max if name == "max" else sym_min, (a, b),
                         lambda: wrap_node(getattr(first.node, method)(_operand(second))))


def sym_max(a, b):
    """``torch.sym_max``: the larger of two ints without a guard (``Max(s0, s1)``)."""
    return _sym_minmax("max", "sym_max", a, b)


def sym_min(a, b):
    """``torch.sym_min``: the smaller of two ints without a guard (``Min(s0, s1)``)."""
    return _sym_minmax("min", "sym_min", a, b)
