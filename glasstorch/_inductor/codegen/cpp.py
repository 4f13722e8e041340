"""Inductor's C++ backend (``torch/_inductor/codegen/cpp.py``), writing C.

One fused kernel becomes one C function, ``cpp_fused_<ops>_<n>``:

* the kernel's outer loops (the shared index of its nodes) run under
  ``#pragma omp parallel for`` when the work is large enough;
* inside, each node is a *section* in order: a pointwise body stored at the
  outer index, an inner loop (``#pragma omp simd``) for a pointwise node with
  more dimensions, or a reduction loop with its accumulator;
* values flow between sections without memory where they can: a reduction's
  result read at the same outer index is its accumulator, a stored value read
  again in the same loop is the stored variable; a buffer nobody outside the
  kernel reads is never written (Inductor's removed buffers).

The inner functions of the IR call this module's ``CppOps`` handler, each
call one C statement (``float tmp3 = tmp1 + tmp2;``), common subexpressions
shared.  Half types are loaded as float and rounded once when stored.
libm's functions are declared ``#pragma omp declare simd`` so the compiler
calls glibc's vector versions (libmvec) without ``-ffast-math``.
"""
from __future__ import annotations

import collections
import contextlib
import math
import re

from ..._core import dtype as dt
from .. import config
from ..ir import V, Index, c_expr, compute_dtype, is_symbolic, same_size

C_TYPES = {dt.float32: "float", dt.float64: "double", dt.float16: "_Float16",
           dt.bfloat16: "uint16_t", dt.int64: "int64_t", dt.int32: "int32_t",
           dt.int16: "int16_t", dt.int8: "int8_t", dt.uint8: "uint8_t", dt.bool_: "bool"}

def _vecmath() -> str:
    from ..._ops.kernels.native import VECMATH_HEADER
    with open(VECMATH_HEADER) as f:
        return f.read()


PRELUDE = _vecmath() + r"""
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline float gt_bf16_to_float(uint16_t v) {
    uint32_t bits = (uint32_t)v << 16; float f; memcpy(&f, &bits, 4); return f;
}
static inline uint16_t gt_float_to_bf16(float f) {   /* round to nearest even */
    uint32_t bits; memcpy(&bits, &f, 4);
    if (f != f) return 0x7fc0;
    return (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}
static inline int64_t gt_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t gt_remainder(int64_t a, int64_t b) {
    int64_t r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
/* ATen's floating div_floor and remainder, from fmod (exact): T is the type,
   S the suffix of these functions, L that of libm's */
#define GT_FLOAT_DIVISION(T, S, L)                                                \
static inline T gt_div_floor_##S(T a, T b) {                                      \
    if (b == 0) return a / b;                                                     \
    T mod = fmod##L(a, b), div = (a - mod) / b;                                   \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                             \
    if (div == 0) return copysign##L(0, a / b);                                   \
    T floordiv = floor##L(div);                                                   \
    return div - floordiv > (T)0.5 ? floordiv + 1 : floordiv;                     \
}                                                                                 \
static inline T gt_remainder_##S(T a, T b) {                                      \
    T mod = fmod##L(a, b);                                                        \
    return (mod != 0 && ((b < 0) != (mod < 0))) ? mod + b : mod;                  \
}
GT_FLOAT_DIVISION(float, f32, f)
GT_FLOAT_DIVISION(double, f64, )

/* Welford: lane j of the GT_WELFORD_LANES (64) kept the running mean and M2 of
   elements j, j + 64, j + 128, ... of a row of n; the lanes are combined
   pairwise (Chan, Golub and LeVeque's formula), half of them into the other
   half at each of six levels, written out so that each level is straight
   vector code.  Equal lanes (n a multiple of 64) need no division, and a
   constant row keeps its value as mean and 0 as M2 exactly.  An empty row's
   are NaN. */
#define GT_WELFORD_LANES 64      /* WELFORD_LANES */
#define GT_WELFORD_COMBINE(T, S)                                                  \
static inline void gt_welford_level_##S(T *mean, T *m2, T *count, int half) {     \
    _Pragma("omp simd")                                                           \
    for (int j = 0; j < half; j++) {                                              \
        T na = count[j], nb = count[j + half], total = na + nb;                   \
        T share = total > 0 ? nb / total : (T)0;                                  \
        T delta = mean[j + half] - mean[j];                                       \
        mean[j] += delta * share;                                                 \
        m2[j] += m2[j + half] + delta * delta * na * share;                       \
        count[j] = total;                                                         \
    }                                                                             \
}                                                                                 \
static inline void gt_welford_equal_level_##S(T *mean, T *m2, T *count, int half) { \
    T weight = count[0] * (T)0.5;                  /* na * nb / (na + nb) */      \
    _Pragma("omp simd")                                                           \
    for (int j = 0; j < half; j++) {                                              \
        T delta = mean[j + half] - mean[j];                                       \
        mean[j] += delta * (T)0.5;                                                \
        m2[j] += m2[j + half] + delta * delta * weight;                           \
    }                                                                             \
    count[0] *= 2;                                                                \
}                                                                                 \
static inline void gt_welford_combine_##S(T *mean, T *m2, int64_t n,             \
                                          T *row_mean, T *row_m2) {               \
    T count[GT_WELFORD_LANES];                                                    \
    for (int j = 0; j < GT_WELFORD_LANES; j++)                                    \
        count[j] = (T)(n / GT_WELFORD_LANES + (j < n % GT_WELFORD_LANES));        \
    if (n % GT_WELFORD_LANES == 0) {                                              \
        GT_WELFORD_LEVELS(gt_welford_equal_level_##S)                             \
    } else {                                                                      \
        GT_WELFORD_LEVELS(gt_welford_level_##S)                                   \
    }                                                                             \
    *row_mean = n > 0 ? mean[0] : (T)NAN;                                         \
    *row_m2 = n > 0 ? m2[0] : (T)NAN;                                             \
}
#define GT_WELFORD_LEVELS(level)                                                  \
    level(mean, m2, count, 32); level(mean, m2, count, 16); level(mean, m2, count, 8); \
    level(mean, m2, count, 4); level(mean, m2, count, 2); level(mean, m2, count, 1);
GT_WELFORD_COMBINE(float, f32)
GT_WELFORD_COMBINE(double, f64)
"""

WELFORD_LANES = 64   # GT_WELFORD_LANES of the prelude

# libm functions with vector versions in glibc's libmvec (float and double)
VECTOR_LIBM = ("exp", "log", "sin", "cos", "tan", "tanh", "erf", "log1p", "expm1", "pow",
               "atan", "asin", "acos", "sinh", "cosh", "exp2", "log2", "log10", "atan2",
               "asinh", "acosh", "atanh", "cbrt", "erfc", "hypot")


def libm_declarations(names) -> str:
    lines = []
    for name in sorted(names):
        args = 2 if name in ("pow", "atan2", "hypot") else 1
        for ctype, suffix in (("float", "f"), ("double", "")):
            params = ", ".join([ctype] * args)
            lines.append(f"#pragma omp declare simd notinbranch\n"
                         f"extern {ctype} {name}{suffix}({params}) __attribute__((const));")
    return "\n".join(lines)


_VARIABLE = re.compile(r"\btmp\d+\b")


class CValue:
    """A C variable holding one element, in its compute dtype; ``exact``: a
    narrower dtype the value is already rounded to (a half loaded as float)."""

    __slots__ = ("name", "dtype", "exact")

    def __init__(self, name: str, dtype, exact=None):
        self.name, self.dtype, self.exact = name, dtype, exact

    def __str__(self):
        return self.name


def c_literal(value, dtype) -> str:
    if dtype is dt.bool_:
        return "true" if value else "false"
    if dtype.is_floating_point:
        value = float(value)
        if math.isnan(value):
            return "NAN"
        if math.isinf(value):
            return "INFINITY" if value > 0 else "-INFINITY"
        text = repr(value)
        return text + "f" if dtype is dt.float32 else text
    value = int(value)
    return f"INT64_C({value})" if dtype is dt.int64 else str(value)


class _Block:
    """A loop body being written: its lines, the loop variables its header
    introduces, and the values it can reuse.  ``row_writer`` / ``row_reader``:
    the index of a reduction loop whose costly values are kept in per-row
    arrays, and of a later loop over the same row that reads them back
    instead of computing them again."""

    def __init__(self, parent=None, loop_vars=frozenset()):
        self.parent, self.loop_vars = parent, frozenset(loop_vars)
        self.lines = []
        self.cse = dict(parent.cse) if parent else {}
        self.row_writer = self.row_reader = None


_LOOP_VAR = re.compile(r"for \(int64_t (\w+) =")
_ROW_INDEX = re.compile(r"[\sxr0-9L+*()]*\]")   # an index of loop variables and numbers
_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(\s*\()?")
_C_WORDS = frozenset(("float", "double", "bool", "_Float16", "int64_t", "int32_t", "int16_t",
                      "int8_t", "uint8_t", "uint16_t", "INFINITY", "NAN", "true", "false"))


# float32 functions computed inline (vecmath.h): SLEEF's exp (ATen's Vectorized exp);
# the erf of ATen's Vectorized<float>::erf (Abramowitz-Stegun 7.1.26, 1.5e-7 absolute)
_INLINE_F32 = {"exp": "sleef_expf", "erf": "erf_f32"}

# calls worth keeping in a row array rather than computing twice (softmax's exp)
_COSTLY = re.compile(r"\b(sleef_expf|erf_f32|" + "|".join(VECTOR_LIBM) + r")f?\(")


class CppKernel:
    """The C text of one kernel being written, and the ``ops`` handler its
    nodes' inner functions call."""

    def __init__(self, name: str, graph):
        self.name, self.graph = name, graph
        self.args = {}        # buffer name -> (C parameter, is output)
        self.block = _Block()
        self.counter = 0
        self.libm_used = set()
        self.loaded = set()   # buffers read from memory (not from a variable)
        self.numbers = {}     # variable -> the number of the value it holds
        self.homes = {}       # variable -> the block it is computed in
        self.written = set()  # buffers this kernel stores to (their loads stay put)
        self.value_numbers = {}   # value key -> its number
        self.rows = {}        # value key -> the row array a reduction loop keeps it in
        self.rows_used = set()
        self.row_decls = []   # declarations of the row arrays (before the loops)
        self.row_dtypes = {}  # row array -> its dtype
        self.row_sizes = {}   # row array -> its length
        self.row_reads = {}   # row array -> [(block, line number)] of the lines reading it
        self.store_counts = collections.Counter()   # buffer -> stores to it written
        self.row_stores = []  # (block, line number, buffer, C lvalue) of stores in row readers
        self.trig_flag = None     # in a loop that may run twice: its largest |sin/cos argument|
        self.trig_checked = set()   # the sin/cos arguments that flag already checks
        self.welford = {}     # (inner function, block) -> the C names of its mean and M2

    # -- bookkeeping ----------------------------------------------------------------

    def param(self, buffer: str, output: bool) -> str:
        if buffer not in self.args:
            kind = "out_ptr" if output else "in_ptr"
            count = sum(1 for _, o in self.args.values() if o == output)
            self.args[buffer] = (f"{kind}{count}", output)
        elif output and not self.args[buffer][1]:
            self.args[buffer] = (self.args[buffer][0], True)
        return self.args[buffer][0]

    def emit(self, line):
        self.block.lines.append(line)

    def value(self, expr: str, dtype, hoistable: bool = True) -> CValue:
        """``expr`` as a new variable (or the one already holding it).  Values
        are numbered by what they compute, not by their variables' names, so a
        later loop recognises a value an earlier loop computed: read back from
        the row array the reduction loop kept it in."""
        key = (_VARIABLE.sub(lambda m: self.numbers.get(m.group(0), m.group(0)), expr), dtype)
        if key in self.block.cse:
            return self.block.cse[key]
        var = CValue(f"tmp{self.counter}", dtype)
        self.counter += 1
        home = self._home(expr, hoistable)
        row = self.rows.get(key)
        at = self._row_index(row) if home is self.block and row is not None else None
        if at is not None:
            self.rows_used.add(row)
            self.emit(("row", row, f"{C_TYPES[dtype]} {var} = {row}[{at}];"))
            self.row_reads.setdefault(row, []).append((self.block, len(self.block.lines) - 1))
        else:
            home.lines.append(f"{C_TYPES[dtype]} {var} = {expr};")
            if home is self.block and self.block.row_writer is not None and \
                    _COSTLY.search(expr):
                row = f"row{len(self.row_decls)}"
                self.rows[key] = row
                self.row_dtypes[row] = dtype
                size, index = self.block.row_writer
                self.row_sizes[row] = size
                # a symbolic length is guarded to fit the largest array (_reduction)
                length = config.cpp.row_cache_size if is_symbolic(size) else size
                self.row_decls.append(("row_decl", row, f"{C_TYPES[dtype]} {row}[{length}];"))
                self.emit(("row", row, f"{row}[{index}] = {var};"))
        self.numbers[var.name] = self.value_numbers.setdefault(key, f"v{len(self.value_numbers)}")
        self.homes[var.name] = home
        block = self.block
        while True:                      # visible from here out to where it is computed
            block.cse[key] = var
            if block is home:
                break
            block = block.parent
        return var

    def _home(self, expr: str, hoistable: bool):
        """The outermost enclosing block ``expr`` can be computed in: inside every
        loop whose variable it uses, and after every value it reads (loop
        invariant code motion; an accumulator or a buffer this kernel writes
        pins it where it is)."""
        homes, loop_vars = set(), set()
        for name, call in _NAME.findall(expr):
            if call or name in _C_WORDS:
                continue
            if name in self.homes:
                homes.add(self.homes[name])
            elif re.fullmatch(r"[xr]\d+", name):
                loop_vars.add(name)
            elif not (hoistable and name.startswith("in_ptr")):
                return self.block
        block = self.block
        while block.parent is not None and block not in homes and \
                not block.loop_vars & loop_vars:
            block = block.parent
        return block

    def _row_index(self, row: str):
        """Where this loop reads ``row`` back, or None: a loop over the row after
        its reduction (``row_reader``), or a later reduction over a row of the
        same length (the value, keyed by its expression in the loop variables,
        is the one the first reduction kept)."""
        if self.block.row_reader is not None:
            return self.block.row_reader
        writer = self.block.row_writer
        return writer[1] if writer is not None and same_size(writer[0], self.row_sizes[row]) \
            else None

    def relocated_rows(self, kept_buffers) -> dict:
        """Row arrays that can live in an output instead: row -> the output
        element that holds it (softmax keeps exp(x - max) in its output and
        scales it there, as ATen's kernel does, rather than in a stack array
        copied out at the end).  The row is read once, by a loop that later
        stores, in the same iteration, an output of the row's dtype that this
        kernel neither reads nor stores anywhere else; the store's index uses
        only loop variables, so it means the same element in the loop that
        writes the row.  ``kept_buffers``: outputs whose stores stay."""
        relocated = {}
        for row, reads in self.row_reads.items():
            if len(reads) != 1:       # read twice (a loop run again): the output changed
                continue
            block, read_at = reads[0]
            for where, at, name, lvalue, dtype in self.row_stores:
                if where is block and at > read_at and dtype is self.row_dtypes[row] and \
                        name in kept_buffers and name not in self.loaded and \
                        self.store_counts[name] == 1 and \
                        lvalue not in relocated.values() and \
                        _ROW_INDEX.fullmatch(lvalue.split("[", 1)[1]):
                    relocated[row] = lvalue
                    break
        return relocated

    @contextlib.contextmanager
    def loop(self, header_lines):
        """A nested block; its lines are emitted under ``header_lines``."""
        outer = self.block
        loop_vars = {m for h in header_lines if h for m in _LOOP_VAR.findall(h)}
        self.block = _Block(outer, loop_vars)
        try:
            yield
        finally:
            inner, self.block = self.block, outer
            for h in header_lines:
                self.emit(h)
            self.emit(("{", inner.lines, "}"))

    # -- the ops handler --------------------------------------------------------------

    def load(self, name: str, index: Index) -> CValue:
        key = ("load", name, str(index))
        if key in self.block.cse:
            return self.block.cse[key]
        dtype = self.graph.buffer_dtype(name)
        ptr = self.param(name, output=False)
        self.loaded.add(name)
        raw = f"{ptr}[{index}]"
        if dtype is dt.bfloat16:
            raw = f"gt_bf16_to_float({raw})"
        elif dtype is dt.float16:
            raw = f"(float){raw}"
        var = self.value(raw, compute_dtype(dtype), hoistable=name not in self.written)
        if dtype in (dt.float16, dt.bfloat16):
            var = CValue(var.name, var.dtype, dtype)
        self.block.cse[key] = var
        return var

    def store(self, name: str, index: Index, value: CValue) -> None:
        dtype = self.graph.buffer_dtype(name)
        ptr = self.param(name, output=True)
        if dtype is dt.bfloat16:
            text = f"gt_float_to_bf16({self._cast(value, dt.float32)})"
        else:
            text = self._cast(value, dtype)
        self.emit(("store", name, f"{ptr}[{index}] = {text};"))
        self.store_counts[name] += 1
        if self.block.row_reader is not None:
            self.row_stores.append((self.block, len(self.block.lines) - 1, name, f"{ptr}[{index}]",
                                    dtype))
        self.block.cse[("load", name, str(index))] = value if value.dtype is compute_dtype(dtype) \
            else self.value(self._cast(value, compute_dtype(dtype)), compute_dtype(dtype))

    def _cast(self, value: CValue, dtype) -> str:
        if value.dtype is dtype:
            return str(value)
        if dtype is dt.bool_:
            return f"({value} != 0)"
        return f"({C_TYPES[dtype]}){value}"

    def constant(self, value, dtype) -> CValue:
        dtype = compute_dtype(dtype)
        if is_symbolic(value):         # a size (a mean's count): its C expression
            return self.value(f"({C_TYPES[dtype]})({c_expr(value)})", dtype)
        return self.value(c_literal(value, dtype), dtype)

    def index_expr(self, index: Index, dtype) -> CValue:
        return self.value(f"({C_TYPES[compute_dtype(dtype)]})({index})", compute_dtype(dtype))

    def to_dtype(self, x: CValue, dtype) -> CValue:
        """A cast; to a half type it rounds (computing goes on in float), unless
        the value is already that half type's."""
        if dtype in (dt.float16, dt.bfloat16) and x.exact is not dtype:
            x = self.to_dtype(x, dt.float32)
            rounded = f"(float)(_Float16){x}" if dtype is dt.float16 else \
                f"gt_bf16_to_float(gt_float_to_bf16({x}))"
            value = self.value(rounded, dt.float32)
            return CValue(value.name, value.dtype, dtype)
        target = compute_dtype(dtype)
        return x if x.dtype is target else self.value(self._cast(x, target), target)

    def _binary(self, fmt, a, b, dtype=None):
        return self.value(fmt.format(a=a, b=b), dtype or a.dtype)

    def mul(self, a, b):
        if a.dtype is dt.bool_:
            return self._binary("{a} && {b}", a, b)
        return self._binary("{a} * {b}", a, b)

    def floordiv(self, a, b):
        if a.dtype.is_floating_point:
            return self._binary(f"gt_div_floor_{self._suffix(a)}({{a}}, {{b}})", a, b)
        return self._binary("gt_floordiv({a}, {b})", a, b)

    @staticmethod
    def _suffix(a) -> str:
        return "f32" if a.dtype is dt.float32 else "f64"

    def truncdiv(self, a, b):
        if a.dtype.is_floating_point:
            return self._binary(f"{self._libm('trunc', a)}({{a}} / {{b}})", a, b)
        return self._binary("{a} / {b}", a, b)

    def remainder(self, a, b):
        if a.dtype.is_floating_point:
            return self._binary(f"gt_remainder_{self._suffix(a)}({{a}}, {{b}})", a, b)
        return self._binary("gt_remainder({a}, {b})", a, b)

    def fmod(self, a, b):
        if a.dtype.is_floating_point:
            return self._binary(f"{self._libm('fmod', a)}({{a}}, {{b}})", a, b)
        return self._binary("{a} % {b}", a, b)

    def neg(self, a):
        return self.value(f"-{a}", a.dtype)

    def abs(self, a):
        if a.dtype.is_floating_point:
            return self.value(f"{self._libm('fabs', a)}({a})", a.dtype)
        if a.dtype is dt.bool_:
            return a
        return self.value(f"({a} < 0 ? -{a} : {a})", a.dtype)

    def maximum(self, a, b):
        if a.dtype.is_floating_point:
            return self._binary("({a} != {a} || {a} > {b}) ? {a} : {b}", a, b)
        return self._binary("{a} > {b} ? {a} : {b}", a, b)

    def minimum(self, a, b):
        if a.dtype.is_floating_point:
            return self._binary("({a} != {a} || {a} < {b}) ? {a} : {b}", a, b)
        return self._binary("{a} < {b} ? {a} : {b}", a, b)

    def relu(self, a):
        zero = c_literal(0, a.dtype)
        return self.value(f"{a} < {zero} ? {zero} : {a}", a.dtype)

    def where(self, cond, a, b):
        return self.value(f"{cond} ? {a} : {b}", a.dtype)

    def _libm(self, name: str, like: CValue) -> str:
        if name in VECTOR_LIBM:
            self.libm_used.add(name)
        return name + ("f" if like.dtype is dt.float32 else "")

    def libm(self, name: str, a, *rest):
        args = ", ".join(str(v) for v in (a, *rest))
        if a.dtype is dt.float32 and name in _INLINE_F32:   # vecmath.h: inline, vectorizable
            return self.value(f"{_INLINE_F32[name]}({args})", a.dtype)
        if a.dtype is dt.float32 and name in ("sin", "cos") and self.trig_flag and \
                self._home(str(a), True) is self.block:
            if str(a) not in self.trig_checked:   # (KernelWriter._vector_loop)
                self.trig_checked.add(str(a))
                big, size = self.trig_flag, self.abs(a)
                self.emit(f"{big} = {big} > {size} ? {big} : {size};")
            return self.value(f"gt_{name}f({a})", a.dtype)
        return self.value(f"{self._libm(name, a)}({args})", a.dtype)

    def fma(self, a, b, c):
        """``a * b + c`` rounded once: one vector instruction, as ATen's
        vectorized kernels multiply-add."""
        return self.value(f"{self._libm('fma', a)}({a}, {b}, {c})", a.dtype)

    def rsqrt(self, a):
        one = c_literal(1, a.dtype)
        return self.value(f"{one} / {self._libm('sqrt', a)}({a})", a.dtype)

    def reciprocal(self, a):
        return self.value(f"{c_literal(1, a.dtype)} / {a}", a.dtype)

    def sigmoid(self, a):
        one = c_literal(1, a.dtype)
        return self.value(f"{one} / ({one} + {self.libm('exp', self.neg(a))})", a.dtype)

    def pow(self, a, b):
        return self.libm("pow", a, b)

    def sign(self, a):
        """ATen's ``(0 < x) - (x < 0)``: sign(nan) and sign(-0.0) are 0."""
        zero = c_literal(0, a.dtype)
        return self.value(f"({C_TYPES[a.dtype]})(({zero} < {a}) - ({a} < {zero}))", a.dtype)

    def bitwise_not(self, a):
        return self.value(f"!{a}" if a.dtype is dt.bool_ else f"~{a}", a.dtype)

    def isnan(self, a):
        return self.value(f"{a} != {a}", dt.bool_)

    def isinf(self, a):
        return self.value(f"{self._libm('fabs', a)}({a}) == INFINITY", dt.bool_)


# The ops that are one C operator: (C expression, the result's dtype when it is
# not the operands' compute dtype).
_OPERATORS = {
    "add": ("{a} + {b}", None), "sub": ("{a} - {b}", None), "truediv": ("{a} / {b}", None),
    "bitwise_and": ("{a} & {b}", None), "bitwise_or": ("{a} | {b}", None),
    "bitwise_xor": ("{a} ^ {b}", None),
    "eq": ("{a} == {b}", dt.bool_), "ne": ("{a} != {b}", dt.bool_), "lt": ("{a} < {b}", dt.bool_),
    "le": ("{a} <= {b}", dt.bool_), "gt": ("{a} > {b}", dt.bool_), "ge": ("{a} >= {b}", dt.bool_),
    "logical_and": ("{a} && {b}", dt.bool_), "logical_or": ("{a} || {b}", dt.bool_),
    "logical_xor": ("(!{a}) != (!{b})", dt.bool_), "logical_not": ("!{a}", dt.bool_),
}


def _operator(fmt: str, dtype):
    def op(self, a, b=None):
        return self.value(fmt.format(a=a, b=b), dtype or a.dtype)
    return op


for _name, (_fmt, _dtype) in _OPERATORS.items():
    setattr(CppKernel, _name, _operator(_fmt, _dtype))


# -- reductions ----------------------------------------------------------------------


def reduction_init(rtype: str, dtype) -> str:
    if rtype in ("sum", "any"):
        return c_literal(0, dtype)
    if rtype == "prod":
        return c_literal(1, dtype)
    if rtype in ("max", "argmax"):
        return "-INFINITY" if dtype.is_floating_point else c_literal(_int_bounds(dtype)[0], dtype)
    if rtype in ("min", "argmin"):
        return "INFINITY" if dtype.is_floating_point else c_literal(_int_bounds(dtype)[1], dtype)
    raise NotImplementedError(rtype)


def _int_bounds(dtype):
    if dtype is dt.bool_:
        return 0, 1
    bits = dtype.itemsize * 8
    if dtype is dt.uint8:
        return 0, 255
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def loop_header(var: str, size: int, pragma: str | None = None) -> list:
    lines = [pragma] if pragma else []
    lines.append(f"for (int64_t {var} = 0; {var} < {c_expr(size)}; {var}++)")
    return lines


def parallel_clause(work) -> str | None:
    """What a loop nest of ``work`` elements adds to ``#pragma omp parallel for``:
    "" when it is large enough to share among the threads, None (no pragma)
    when it is not, and with symbolic sizes an ``if`` deciding at run time."""
    if is_symbolic(work):
        return f" if({c_expr(work)} >= {config.cpp.min_parallel_work})"
    return "" if work >= config.cpp.min_parallel_work else None


def render(lines, removed=frozenset(), relocated=None, indent="    ") -> list:
    """Flatten emitted lines into text, dropping stores to removed buffers and
    rows nobody reads (``removed`` holds both kinds of name), and putting the
    ``relocated`` rows (row -> output element) in their outputs."""
    relocated = relocated or {}
    out = []
    for line in lines:
        if isinstance(line, str):
            out.append(indent + line)
        elif line[0] in ("store", "row", "row_decl"):
            name = line[1]
            if name in removed or line[0] == "row_decl" and name in relocated:
                continue
            text = line[2]
            if name in relocated:
                text = text.replace(f"{name}[r0]", relocated[name])
            out.append(indent + text)
        elif line[0] == "decls":
            out.extend(render(line[1], removed, relocated, indent))
        else:
            out.append(indent + "{")
            out.extend(render(line[1], removed, relocated, indent + "    "))
            out.append(indent + "}")
    return out


_VALUE_LINE = re.compile(r"\s*[\w ]+ (tmp\d+) = [^;]*;")   # a value: a pure expression
_TMP = re.compile(r"\btmp\d+\b")


def _without_unused_values(lines: list) -> list:
    """``lines`` less the values nothing reads (a load a row array replaced, a
    difference only the recomputed exp needed), until none is left: the
    compiler drops them anyway, the printed C should not show them."""
    while True:
        uses = collections.Counter(name for line in lines for name in _TMP.findall(line))
        kept = [line for line in lines
                if not ((m := _VALUE_LINE.fullmatch(line)) and uses[m.group(1)] == 1)]
        if len(kept) == len(lines):
            return lines
        lines = kept


class KernelWriter:
    """Writes the C function of one fused kernel (``scheduler.FusedKernel``)."""

    def __init__(self, kernel, graph, removable):
        self.kernel = kernel
        self.graph = graph
        self.removable = removable
        self.rows_walked = set()     # reduction ranges already looped over

    def write(self) -> tuple:
        """(C source of the function, its [(buffer name, is_output)] parameters,
        the libm functions it calls, the buffers it never writes): a buffer in
        ``removable`` that the kernel never reads back from memory is removed."""
        fused = self.kernel
        ck = CppKernel(fused.name, self.graph)
        ck.written = {node.target_name() for node in fused.nodes}
        outer = fused.outer
        outer_vars = [Index.var(f"x{i}", n) for i, n in enumerate(outer)]
        previous_ops = V.ops
        V.ops = ck
        try:
            headers = self._outer_headers(fused, outer)
            with ck.loop(headers) if outer or fused.chunked else contextlib.nullcontext():
                if fused.chunked:
                    self._chunked_pointwise(ck, fused)
                elif self._is_column_reduction():
                    self._column_reduction(ck, fused.nodes, outer_vars)
                else:
                    ck.emit(("decls", ck.row_decls))
                    for section in fused.sections:
                        self._section(ck, section, outer, outer_vars)
        finally:
            V.ops = previous_ops
        removed = {name for name in self.removable if name not in ck.loaded}
        unused_rows = {row for row in ck.rows.values() if row not in ck.rows_used}
        params = [(name, out) for name, (_, out) in ck.args.items() if name not in removed]
        relocated = ck.relocated_rows({name for name, out in params if out})
        body = _without_unused_values(render(ck.block.lines, removed | unused_rows, relocated))
        signature = [f"{'' if out else 'const '}{C_TYPES[self.graph.buffer_dtype(name)]}* "
                     f"__restrict__ {ck.args[name][0]}" for name, out in params]
        sizes = sizes_used(body, self.graph.size_sources)
        params += [(name, None) for name in sizes]       # (Note [Symbolic sizes])
        signature += [f"const int64_t {name}" for name in sizes]
        source = f"void {fused.name}({', '.join(signature)})\n{{\n" + "\n".join(body) + \
            "\n}\n"
        return source, params, ck.libm_used, removed

    def _is_column_reduction(self) -> bool:
        """Independent reductions (one or more, over the same loops) whose input
        is contiguous along the kept dims, not the reduced ones (bias and
        layer_norm weight gradients: sums over rows).  The rows are then
        accumulated into a block of outputs at a time, not one output at a
        time down strided columns."""
        fused = self.kernel
        if not fused.outer or any(not n.is_reduction() or n.data.reduction_type not in (
                "sum", "prod", "max", "min") or n.loop_ranges() != fused.nodes[0].loop_ranges()
                for n in fused.nodes):
            return False
        produced = {n.target_name() for n in fused.nodes}
        if any(name in produced for n in fused.nodes for name, _ in fused.reads[n.name]):
            return False        # one reads another's result: that needs the rows in turn
        _, rranges = fused.nodes[0].loop_ranges()
        last_x, last_r = f"x{len(fused.outer) - 1}", f"r{len(rranges) - 1}"
        coeffs = [{s.name: c for s, c in index.terms.items()}
                  for node in fused.nodes for _, index in fused.reads[node.name]]
        # a read that does not move with the columns (a row's mean) is one value per row
        return any(c.get(last_x) == 1 for c in coeffs) and \
            all(c.get(last_r) != 1 for c in coeffs if c.get(last_x))

    def _outer_headers(self, fused, outer) -> list:
        if self._is_column_reduction():
            return self._column_headers(fused, outer)
        clause = parallel_clause(fused.work())
        if fused.chunked:
            chunk = config.cpp.chunk_size
            n = c_expr(fused.sections[0].inner[0])
            pragma = [f"#pragma omp parallel for{clause}"] if clause is not None else []
            return pragma + [f"for (int64_t c0 = 0; c0 < {n}; c0 += {chunk})"]
        if not outer:
            return []
        headers = []
        if clause is not None:
            collapse = f" collapse({len(outer)})" if len(outer) > 1 else ""
            headers.append(f"#pragma omp parallel for{collapse}{clause}")
        for i, n in enumerate(outer):
            headers += loop_header(f"x{i}", n)
        return headers

    def _column_headers(self, fused, outer) -> list:
        block = config.cpp.column_block
        clause = parallel_clause(fused.work())
        headers = [f"#pragma omp parallel for collapse({len(outer)}){clause}"] \
            if clause is not None else []
        for i, n in enumerate(outer[:-1]):
            headers += loop_header(f"x{i}", n)
        headers.append(f"for (int64_t xb = 0; xb < {c_expr(outer[-1])}; xb += {block})")
        return headers

    def _column_reduction(self, ck, nodes, outer_vars):
        """Each node's block of accumulators, filled row by row."""
        k = len(outer_vars) - 1
        n = c_expr(self.kernel.outer[-1])
        block = config.cpp.column_block
        end = f"(xb + {block} < {n} ? xb + {block} : {n})"
        lane = f"for (int64_t x{k} = xb; x{k} < {end}; x{k}++)"
        slots = []
        for j, node in enumerate(nodes):
            rtype = node.data.reduction_type
            acc_dtype = compute_dtype(node.data.dtype)
            nan = rtype in ("max", "min") and acc_dtype.is_floating_point
            ck.emit(f"{C_TYPES[acc_dtype]} acc{j}[{block}];")
            if nan:
                ck.emit(f"int nan{j}[{block}];")
            ck.emit(f"for (int64_t i = 0; i < {block}; i++) {{ acc{j}[i] = "
                    f"{reduction_init(rtype, acc_dtype)};{f' nan{j}[i] = 0;' if nan else ''} }}")
            slots.append((node, rtype, acc_dtype, nan, f"acc{j}[x{k} - xb]", f"nan{j}[x{k} - xb]"))
        _, rranges = nodes[0].loop_ranges()
        rvars = [Index.var(f"r{i}", m) for i, m in enumerate(rranges)]
        headers = []
        for i, m in enumerate(rranges):
            headers += loop_header(f"r{i}", m)
        with ck.loop(headers):
            with ck.loop(["#pragma omp simd", lane]):
                for node, rtype, acc_dtype, nan, slot, flag in slots:
                    v = ck.to_dtype(node.compute(outer_vars, rvars), acc_dtype)
                    if rtype == "sum":
                        ck.emit(f"{slot} += {v};")
                    elif rtype == "prod":
                        ck.emit(f"{slot} *= {v};")
                    else:
                        op = ">" if rtype == "max" else "<"
                        ck.emit(f"{slot} = {v} {op} {slot} ? {v} : {slot};")
                        if nan:
                            ck.emit(f"{flag} |= {v} != {v};")
        with ck.loop([lane]):
            for node, rtype, acc_dtype, nan, slot, flag in slots:
                result = f"({flag} ? NAN : {slot})" if nan else slot
                ck.store(node.target_name(), node.store_index(outer_vars),
                         ck.value(result, acc_dtype))

    def _chunked_pointwise(self, ck, fused):
        """One long pointwise loop cut into chunks the threads share."""
        n = fused.sections[0].inner[0]
        chunk = config.cpp.chunk_size
        index = [Index.var("x0", n)]
        n = c_expr(n)
        header = ["#pragma omp simd",
                  f"for (int64_t x0 = c0; x0 < (c0 + {chunk} < {n} ? c0 + {chunk} : {n}); x0++)"]

        def body():
            for node in fused.sections[0].nodes:
                ck.store(node.target_name(), node.store_index(index), node.compute(index))
        self._vector_loop(ck, header, body, fused.sections[0].nodes)

    def _vector_loop(self, ck, headers, body, nodes):
        """``body()`` under ``headers`` (one of them the ``omp simd`` pragma).

        float32 sin and cos in the loop are vecmath.h's inline gt_sinf and
        gt_cosf, which vectorize without a call and share their argument
        reduction, but are exact only for |x| <= GT_TRIG_FAST_LIMIT: the loop
        keeps the largest |argument| (a max reduction: a flag set by a
        comparison would cost 4% more) and, when it is over the limit, runs
        again with libm's functions.  A loop that reads a buffer it writes cannot run
        twice; it keeps libm's."""
        written = {node.target_name() for node in nodes}
        reads = {name for node in nodes for name, _ in self.kernel.reads[node.name]}
        if written & reads:
            with ck.loop(headers):
                body()
            return
        flag = f"big{ck.counter}"
        ck.counter += 1
        plain, declare_at = list(headers), len(ck.block.lines)
        ck.trig_flag, ck.trig_checked = flag, set()
        try:
            with ck.loop(headers):
                body()
                checked = bool(ck.trig_checked)
                if checked:           # ck.loop writes the headers once the body is done
                    pragma = next(i for i, h in enumerate(headers) if h and "omp simd" in h)
                    headers[pragma] += f" reduction(max:{flag})"
        finally:
            ck.trig_flag = None
        if checked:
            ck.block.lines.insert(declare_at, f"float {flag} = 0.0f;")
            with ck.loop([f"if ({flag} > GT_TRIG_FAST_LIMIT)"]), ck.loop(plain):
                body()

    def _section(self, ck, section, outer, outer_vars):
        if section.kind == "reduction":
            self._reduction(ck, section.nodes[0], outer, outer_vars)
            return
        if section.kind == "scatter":
            self._scatter(ck, section.nodes[0])
            return
        inner = section.inner
        k = len(outer)
        # a loop over a row a reduction already walked uses the reduction's names,
        # so that the values it computed again are recognised (and read back)
        over_row = inner in self.rows_walked
        names = [f"r{i}" if over_row else f"x{k + i}" for i in range(len(inner))]
        inner_vars = [Index.var(name, n) for name, n in zip(names, inner)]
        headers = []
        for i, n in enumerate(inner):
            pragma = "#pragma omp simd" if i == len(inner) - 1 else None
            headers += loop_header(names[i], n, pragma)
        index = outer_vars + inner_vars

        def body():
            if over_row and len(inner) == 1:
                ck.block.row_reader = "r0"
            for node in section.nodes:
                ck.store(node.target_name(), node.store_index(index), node.compute(index))
        if inner:
            self._vector_loop(ck, headers, body, section.nodes)
        else:
            body()

    def _scatter(self, ck, node):
        """Zero the output, then add each source value into the row it names:
        the source rows in order (two may name one row), each row's columns
        vectorized (they are distinct)."""
        ptr = ck.param(node.target_name(), output=True)
        ctype = C_TYPES[node.dtype]
        ck.emit(f"memset({ptr}, 0, ({c_expr(node.numel())}) * sizeof({ctype}));")
        ranges, _ = node.loop_ranges()
        index = [Index.var(f"x{i}", n) for i, n in enumerate(ranges)]
        headers = []
        for i, n in enumerate(ranges):
            headers += loop_header(f"x{i}", n, "#pragma omp simd" if i == len(ranges) - 1
                                   else None)
        with ck.loop(headers):
            where, value = node.compute(index)
            ck.emit(f"{ptr}[{where}] += {ck._cast(value, node.dtype)};")

    def _reduction(self, ck, node, outer, outer_vars):
        data = node.data
        rtype = data.reduction_type
        if rtype in ("welford_mean", "welford_m2"):
            self._welford(ck, node, outer_vars)
            return
        acc_dtype = compute_dtype(data.dtype) if rtype not in ("argmax", "argmin") \
            else compute_dtype(data.src_dtype)
        if rtype in ("sum", "prod") and data.dtype.is_floating_point:
            acc_dtype = compute_dtype(data.dtype)
        acc = f"acc{ck.counter}"
        ck.counter += 1
        ctype = "int" if rtype == "any" else C_TYPES[acc_dtype]
        ck.emit(f"{ctype} {acc} = {reduction_init(rtype, acc_dtype)};")
        _, rranges = node.loop_ranges()
        rvars = [Index.var(f"r{i}", n) for i, n in enumerate(rranges)]
        clause = {"sum": f" reduction(+:{acc})", "prod": f" reduction(*:{acc})",
                  "any": f" reduction(|:{acc})", "max": f" reduction(max:{acc})",
                  "min": f" reduction(min:{acc})"}.get(rtype)
        nan_flag = None
        if rtype in ("max", "min") and acc_dtype.is_floating_point:
            nan_flag = f"nan{acc[3:]}"
            ck.emit(f"int {nan_flag} = 0;")   # an int, not a bool: bools do not vectorize
            clause += f" reduction(|:{nan_flag})"
        if rtype in ("argmax", "argmin"):
            index_var = f"idx{acc[3:]}"
            ck.emit(f"int64_t {index_var} = 0;")
        headers = []
        flat_r = None
        for i, n in enumerate(rranges):
            last = i == len(rranges) - 1
            pragma = f"#pragma omp simd{clause}" if last and clause else None
            threads = parallel_clause(n)
            if last and not outer and clause and len(rranges) == 1 and threads is not None:
                pragma = f"#pragma omp parallel for simd{clause}{threads}"
            headers += loop_header(f"r{i}", n, pragma)
        if rtype in ("argmax", "argmin"):
            flat_r = " + ".join(f"({c_expr(s)})*r{i}" if is_symbolic(s) else f"{s}L*r{i}"
                                for i, s in enumerate(_strides(rranges))) or "0"
        self.rows_walked.add(tuple(rranges))
        with ck.loop(headers):
            # (a symbolic row length is guarded to fit the array: longer rows recompile)
            if len(rranges) == 1 and rranges[0] <= config.cpp.row_cache_size:
                ck.block.row_writer = (rranges[0], "r0")
            v = node.compute(outer_vars, rvars)
            v = ck.to_dtype(v, acc_dtype)
            if rtype == "sum":
                ck.emit(f"{acc} += {v};")
            elif rtype == "prod":
                ck.emit(f"{acc} *= {v};")
            elif rtype == "any":
                ck.emit(f"{acc} |= ({v} != 0);")
            elif rtype in ("max", "min"):
                op = ">" if rtype == "max" else "<"
                ck.emit(f"{acc} = {v} {op} {acc} ? {v} : {acc};")
                if nan_flag:
                    ck.emit(f"{nan_flag} |= {v} != {v};")
            else:
                op = ">" if rtype == "argmax" else "<"
                cond = f"{v} {op} {acc}"
                if acc_dtype.is_floating_point:
                    cond = f"({acc} == {acc}) && ({cond} || {v} != {v})"
                ck.emit(f"if ({cond}) {{ {acc} = {v}; {index_var} = {flat_r}; }}")
        result = acc
        if nan_flag:
            result = f"({nan_flag} ? NAN : {acc})"
        if rtype in ("argmax", "argmin"):
            result = index_var
        value = ck.value(result, compute_dtype(data.dtype) if rtype not in ("argmax", "argmin")
                         else dt.int64)
        ck.store(node.target_name(), node.store_index(outer_vars), value)

    def _welford(self, ck, node, outer_vars):
        """The mean and M2 of a row in one pass, as ATen's Welford reductions
        (RowwiseMoments) take them: a running mean and M2 per lane of a block
        of GT_WELFORD_LANES elements, each lane updated once per block (so
        1 / count is one reciprocal per block), then the lanes combined.  The
        reduction dims are walked as one flat index.  The two nodes of a pair
        (one inner function: lowering's ``_variance``) share the loop."""
        data = node.data
        acc_dtype = compute_dtype(data.dtype)
        key = (id(data.inner_fn), id(ck.block))
        if key not in ck.welford:
            ctype, suffix, lanes = C_TYPES[acc_dtype], "f32" if acc_dtype is dt.float32 \
                else "f64", "GT_WELFORD_LANES"
            _, rranges = node.loop_ranges()
            n = math.prod(rranges)
            i = ck.counter
            ck.counter += 1
            mean, m2, inv = f"wmean{i}", f"wm2{i}", f"winv{i}"
            ck.emit(f"{ctype} {mean}[{lanes}] = {{0}}, {m2}[{lanes}] = {{0}};")
            flat = Index.var("r0", n)
            rvars, step = [], 1
            for m in reversed(rranges):
                rvars.insert(0, flat.floordiv(step).mod(m) if len(rranges) > 1 else flat)
                step *= m
            whole_blocks = n % WELFORD_LANES == 0    # (symbolic: guarded, as the row length)
            n = c_expr(n)
            with ck.loop([f"for (int64_t rb = 0; rb < {n}; rb += {lanes})"]):
                ck.emit(f"{ctype} {inv} = 1 / ({ctype})(rb / {lanes} + 1);")
                end = f"rb + {lanes}" if whole_blocks else \
                    f"(rb + {lanes} < {n} ? rb + {lanes} : {n})"   # whole blocks: a fixed count
                with ck.loop(["#pragma omp simd", f"for (int64_t r0 = rb; r0 < {end}; r0++)"]):
                    v = ck.to_dtype(node.compute(outer_vars, rvars), acc_dtype)
                    delta = ck.value(f"{v} - {mean}[r0 - rb]", acc_dtype, hoistable=False)
                    # the updates as multiply-adds, as ATen's vectorized Welford compiles
                    fma, mean_j, m2_j = ck._libm("fma", delta), f"{mean}[r0 - rb]", f"{m2}[r0 - rb]"
                    ck.emit(f"{mean_j} = {fma}({delta}, {inv}, {mean_j});")
                    ck.emit(f"{m2_j} = {fma}({delta}, {v} - {mean_j}, {m2_j});")
            ck.emit(f"{ctype} {mean}_row, {m2}_row;")
            ck.emit(f"gt_welford_combine_{suffix}({mean}, {m2}, {n}, &{mean}_row, &{m2}_row);")
            ck.welford[key] = (f"{mean}_row", f"{m2}_row")
        result = ck.welford[key][data.reduction_type == "welford_m2"]
        ck.store(node.target_name(), node.store_index(outer_vars),
                 ck.value(result, acc_dtype, hoistable=False))


def sizes_used(body: list, symbols) -> list:
    """The size symbols a kernel's C mentions, in order: its int64_t parameters."""
    used = {name for line in body for name in _SIZE_NAME.findall(line) if name in symbols}
    return sorted(used, key=lambda name: (len(name), name))


_SIZE_NAME = re.compile(r"\b([a-z]\d+)\b")


def _strides(size):
    from ..ir import contiguous_strides
    return contiguous_strides(size)
