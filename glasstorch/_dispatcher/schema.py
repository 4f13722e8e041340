"""Operator schemas: ``FunctionSchema`` objects and the schema-string parser.

This mirrors three pieces of PyTorch:

* c10's ``FunctionSchema`` / ``Argument`` / ``AliasInfo``
  (aten/src/ATen/core/function_schema.h, alias_info.h), as seen from Python
  through ``torch._C.FunctionSchema``;
* the schema-string parser in torch/csrc/jit/frontend/function_schema_parser.cpp
  and schema_type_parser.cpp (``torch._C.parse_schema``);
* the ``SchemaKind`` classification of torchgen/model.py.

A schema string looks like::

    aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    ^ns   ^name ^overload      ^arguments         ^kwarg-only      ^returns

The parser is a small hand-written recursive-descent parser over a regex
tokenizer.  It accepts the whole grammar that ``torch._C.parse_schema``
accepts for real operators, including the TorchScript-only types used by the
``prim::``/``aten::`` list and dict builtins (``t``, ``Dict(str, t)``,
``(int, str)``, ``Future(t)``, ``__torch__.torch.classes.ns.Class``).

Printing (``str(schema)``) reproduces PyTorch's re-serialisation exactly:
defaults are printed from their parsed value, so ``eps=1e-05`` prints as
``eps=1.0000000000000001e-05``, ``memory_format=contiguous_format`` as
``memory_format=0`` and ``int[2] x=[1,1]`` as ``x=1``.

This module is stdlib-only and never imports torch.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

__all__ = [
    "NO_DEFAULT",
    "SchemaType",
    "AliasInfo",
    "Argument",
    "Return",
    "FunctionSchema",
    "SchemaParseError",
    "parse_schema",
    "parse_type",
]


# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------

class _NoDefault:
    """Sentinel type for "this argument has no default value"."""

    _instance: Optional["_NoDefault"] = None

    def __new__(cls) -> "_NoDefault":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefault()

# Built-in type names the parser accepts, mapped to the name the schema
# prints.  PyTorch folds a few aliases into ``int`` at parse time, so they
# print as ``int`` afterwards (``DeviceIndex idx`` prints ``int idx``).
_BUILTIN_TYPES = {
    name: name
    for name in (
        "Tensor", "int", "SymInt", "float", "complex", "bool", "SymBool",
        "str", "Scalar", "ScalarType", "Layout", "MemoryFormat", "Device",
        "Generator", "Storage", "Stream", "QScheme", "Quantizer", "Any",
        "AnyClassType", "AnyEnumType", "Capsule", "NoneType",
    )
}
_BUILTIN_TYPES.update({"DeviceIndex": "int", "ConstQuantizerPtr": "int", "None": "NoneType"})

# How ``str(arg.type)`` spells a base type in Python.  torch exposes the
# "real" type there: SymInt and the enum-like types are plain ``int``,
# ``Scalar`` is ``number``.
_PYTHON_TYPE_NAMES = {
    "SymInt": "int", "ScalarType": "int", "Layout": "int", "MemoryFormat": "int",
    "SymBool": "bool", "Scalar": "number",
}

# Inside tuples, dicts, futures... torch stores the "real" type, so these
# print as ``int`` there: ``Dict(SymInt, t)`` prints ``Dict(int, t)``.
_INT_LIKE_BASES = frozenset({"SymInt", "ScalarType", "Layout", "MemoryFormat"})

# Allowed ``Dict`` key types.
_DICT_KEY_BASES = frozenset({"int", "float", "complex", "Tensor", "Device", "str", "bool"})

# Parametrised types: name -> number of type parameters (None: 2 or more).
_GENERIC_TYPES = {"Dict": 2, "Future": 1, "RRef": 1, "Await": 1, "Union": None}

# Identifiers accepted as a default value for *any* argument type.
_ENUM_DEFAULTS = {
    "float": 6,               # ScalarType::Float
    "long": 4,                # ScalarType::Long
    "strided": 0,             # Layout::Strided
    "contiguous_format": 0,   # MemoryFormat::Contiguous
    "Mean": 1,                # at::Reduction::Mean
}

# dtype names accepted as the default of a ``ScalarType`` argument, mapped to
# c10::ScalarType's integer value (what torch stores and prints).
_SCALAR_TYPE_DEFAULTS = {
    "uint8": 0, "int8": 1, "int16": 2, "short": 2, "int32": 3, "int": 3,
    "int64": 4, "long": 4, "float16": 5, "half": 5, "float32": 6, "float": 6,
    "float64": 7, "double": 7, "complex32": 8, "chalf": 8, "complex64": 9,
    "cfloat": 9, "complex128": 10, "cdouble": 10, "bool": 11, "qint8": 12,
    "quint8": 13, "qint32": 14, "bfloat16": 15, "quint4x2": 16, "quint2x4": 17,
    "bits1x8": 18, "bits2x4": 19, "bits4x2": 20, "bits8": 21, "bits16": 22,
    "float8_e5m2": 23, "float8_e4m3fn": 24, "float8_e5m2fnuz": 25,
    "float8_e4m3fnuz": 26, "uint16": 27, "uint32": 28, "uint64": 29,
    "uint1": 30, "bit": 30, "uint2": 31, "uint3": 32, "uint4": 33, "uint5": 34,
    "uint6": 35, "uint7": 36, "int1": 37, "int2": 38, "int3": 39, "int4": 40,
    "int5": 41, "int6": 42, "int7": 43, "float8_e8m0fnu": 44,
    "float4_e2m1fn_x2": 45,
}

# Base types whose arguments may take a list default such as ``[0, 0]``
# (torch: "lists are only supported for float, int and complex types";
# bool lists are accepted too).
_LIST_DEFAULT_BASES = frozenset(
    {"int", "SymInt", "ScalarType", "Layout", "MemoryFormat", "float", "complex", "bool"}
)
# The Python type each entry of such a list default must have.
_LIST_ITEM_KINDS = {"float": float, "complex": complex, "bool": bool}
# Base types that take a single literal (number, string, bool, None, enum).
_SCALAR_DEFAULT_BASES = _LIST_DEFAULT_BASES | {"str", "Scalar"}

# A Device default such as "cpu" or "cuda:1" (c10::Device's string form).
_DEVICE_RE = re.compile(
    r"(?:cpu|cuda|ipu|xpu|mkldnn|opengl|opencl|ideep|hip|ve|fpga|maia|xla|lazy|vulkan|mps|"
    r"meta|hpu|mtia|privateuseone)(?::(?:0|[1-9][0-9]*))?\Z"
)

# Words the TorchScript lexer reserves; they can't be used as names.
_KEYWORDS = frozenset(
    "False None True and as assert break class continue def del elif else "
    "for global if import in is not or pass raise return while with".split()
)

# torchgen: ``__iadd__`` and friends are in-place dunders.
_AUGMENTED_ASSIGNMENT_NAMES = frozenset(
    "add sub mul div mod pow lshift rshift and xor or".split()
)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------

class SchemaType:
    """The declared type of an argument or return, e.g. ``Tensor?[]``.

    One node per type constructor:

    * ``is_list``: a list; ``elem`` is the element type and ``size`` the
      fixed length of ``int[2]`` (None for ``int[]``).
    * ``optional``: the whole type is wrapped in ``?`` (``int[1]?`` is an
      optional, size-1 list of int).
    * ``contained``: the parameters of ``Dict``/``Future``/``RRef``/``Await``/
      ``Union`` and the members of a tuple type ``(int, str)`` (base ``Tuple``).

    ``base`` is the innermost type name: ``'Tensor'`` for ``Tensor?[]``, the
    constructor name (``'Dict'``, ``'Tuple'``) for parametrised types, the
    variable name for type variables (``t``), and the qualified name for
    custom classes.

    ``str(t)`` is the spelling used inside a schema string (``SymInt[]``,
    ``Scalar``, ``int[1]?``, ``Tensor?[]``), so ``parse_type(str(t)) == t``.
    ``t.python_str()`` is what torch's ``str(arg.type)`` prints: the
    "real" type in annotation syntax (``List[int]``, ``number``,
    ``Optional[Tensor]``).
    """

    __slots__ = ("base", "optional", "is_list", "size", "elem", "contained")

    def __init__(
        self,
        base: str,
        *,
        optional: bool = False,
        is_list: bool = False,
        size: Optional[int] = None,
        elem: Optional["SchemaType"] = None,
        contained: tuple = (),
    ) -> None:
        self.base = base
        self.optional = optional
        self.is_list = is_list
        self.size = size
        self.elem = elem
        self.contained = tuple(contained)

    # -- constructors -------------------------------------------------------
    @classmethod
    def list_of(cls, elem: "SchemaType", size: Optional[int] = None) -> "SchemaType":
        """``elem[]`` (or ``elem[size]``)."""
        return cls(elem.base, is_list=True, size=size, elem=elem)

    def as_optional(self) -> "SchemaType":
        """This type wrapped in ``?`` (``T??`` collapses to ``T?``, as in torch)."""
        return self._replace(optional=True)

    def without_optional(self) -> "SchemaType":
        """This type with the outer ``?`` removed."""
        return self._replace(optional=False) if self.optional else self

    def _replace(self, **changes: Any) -> "SchemaType":
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        base = fields.pop("base")
        return SchemaType(base, **fields)

    # -- classification -----------------------------------------------------
    @property
    def is_tuple(self) -> bool:
        return self.base == "Tuple" and not self.is_list

    @property
    def is_type_var(self) -> bool:
        """``t``, ``tVal``: a TorchScript type variable (lower-case, unknown name)."""
        return (
            not self.is_list
            and self.base not in _BUILTIN_TYPES
            and self.base[:1].islower()
            and not self.contained
        )

    @property
    def is_class(self) -> bool:
        """A custom class such as ``__torch__.torch.classes.quantized.Conv2dPackedParamsBase``."""
        return not self.is_list and self.base.startswith("__torch__.")

    @property
    def is_tensor(self) -> bool:
        """Exactly ``Tensor`` (not optional, not a list)."""
        return self.base == "Tensor" and not self.is_list and not self.optional

    @property
    def is_optional_tensor(self) -> bool:
        """``Tensor?``."""
        return self.base == "Tensor" and not self.is_list and self.optional

    @property
    def is_tensor_list(self) -> bool:
        """``Tensor[]`` / ``Tensor[N]`` (possibly itself optional)."""
        return self.is_list and self.elem.base == "Tensor" and not self.elem.is_list and not self.elem.optional

    @property
    def is_optional_tensor_list(self) -> bool:
        """``Tensor?[]``: a list of optional tensors (``index.Tensor``)."""
        return self.is_list and self.elem.is_optional_tensor

    @property
    def is_tensor_like(self) -> bool:
        """Can this argument carry tensors whose dispatch keys matter?

        True for ``Tensor``, ``Tensor?``, ``Tensor[]``, ``Tensor?[]`` (and the
        optional forms of the lists), which are the argument kinds c10's
        DispatchKeyExtractor inspects.
        """
        if not self.is_list:
            return self.base == "Tensor"
        elem = self.elem
        return elem.base == "Tensor" and not elem.is_list

    # -- printing -----------------------------------------------------------
    def schema_str(self) -> str:
        """The type as spelled in a schema string, without alias annotations."""
        if self.is_list:
            text = f"{self.elem.schema_str()}[{'' if self.size is None else self.size}]"
        elif self.base == "Tuple":
            text = "(" + ", ".join(t.schema_str() for t in self.contained) + ")"
        elif self.contained:
            text = f"{self.base}(" + ", ".join(t.schema_str() for t in self.contained) + ")"
        else:
            text = self.base
        return text + "?" if self.optional else text

    def python_str(self) -> str:
        """The type as torch's ``str(arg.type)`` prints it (its annotation_str)."""
        if self.is_list:
            text = f"List[{self.elem.python_str()}]"
        elif self.base == "Tuple":
            inner = ", ".join(t.python_str() for t in self.contained)
            text = f"Tuple[{inner or '()'}]"
        elif self.contained:
            text = f"{self.base}[" + ", ".join(t.python_str() for t in self.contained) + "]"
        else:
            text = _PYTHON_TYPE_NAMES.get(self.base, self.base)
        return f"Optional[{text}]" if self.optional else text

    __str__ = schema_str

    def __repr__(self) -> str:
        return f"SchemaType({self.schema_str()!r})"

    def _key(self) -> tuple:
        return (self.base, self.optional, self.is_list, self.size, self.elem, self.contained)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SchemaType) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class AliasInfo:
    """An alias annotation such as ``(a)``, ``(a!)``, ``(a -> *)``, ``(a|b)``.

    ``before_set``/``after_set`` are the alias sets the value belongs to
    before/after the call (``*`` is the wildcard set); ``is_write`` marks a
    mutated value.  For a list such as ``Tensor(a!)[]`` the annotation is on
    the elements: the list's own AliasInfo has empty sets, copies the
    element's ``is_write``, and keeps the element annotation in
    ``contained``.

    Set order is kept (as tuples in ``before``/``after``) only so printing
    can match torch, which prints a multi-name set in reverse order:
    ``Tensor(a|b)`` prints as ``Tensor(b|a)``.
    """

    __slots__ = ("before", "after", "is_write", "contained")

    def __init__(
        self,
        before: Iterable[str] = (),
        after: Optional[Iterable[str]] = None,
        is_write: bool = False,
        contained: tuple = (),
    ) -> None:
        self.before = tuple(before)
        self.after = self.before if after is None else tuple(after)
        self.is_write = is_write
        self.contained = tuple(contained)

    @property
    def before_set(self) -> set:
        return set(self.before)

    @property
    def after_set(self) -> set:
        return set(self.after)

    def __str__(self) -> str:
        text = "(" + "|".join(reversed(self.before))
        if self.is_write:
            text += "!"
        if set(self.after) != set(self.before):
            text += " -> " + "|".join(reversed(self.after))
        return text + ")"

    def __repr__(self) -> str:
        return f"AliasInfo({self})"

    def _key(self) -> tuple:
        return (frozenset(self.before), frozenset(self.after), self.is_write, self.contained)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AliasInfo) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


# --------------------------------------------------------------------------
# Arguments, returns, schemas
# --------------------------------------------------------------------------

def _format_type(t: SchemaType, alias: Optional[AliasInfo]) -> str:
    """Print a declared type with its alias annotation, as torch does.

    The list-element annotation goes before the brackets (``Tensor(a!)[]``),
    the value's own annotation after the type (``Tensor(a)``,
    ``Tensor[](b)``), and an outer ``?`` last (``Tensor(a)?``).
    """
    inner = t.without_optional()
    if inner.is_list:
        text = inner.elem.schema_str()
        if alias is not None and alias.contained:
            text += str(alias.contained[0])
        text += f"[{'' if inner.size is None else inner.size}]"
    else:
        text = inner.schema_str()
    if alias is not None and alias.before:
        text += str(alias)
    return text + "?" if t.optional else text


def _format_float(value: float) -> str:
    """torch's double printing: integral values as ``1.``, others with 17 digits."""
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if value == int(value) and _INT64_MIN <= value < 2**63:
        return f"{int(value)}."
    return "%.17g" % value


def _format_complex(value: complex) -> str:
    sign = "+" if value.imag >= 0 else "-"
    return f"{_format_float(value.real)}{sign}{_format_float(abs(value.imag))}j"


_STRING_ESCAPES = {
    "\\": "\\\\", '"': '\\"', "'": "\\'", "\a": "\\a", "\b": "\\b",
    "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
}


def _quote_string(value: str) -> str:
    """Double-quoted string with C-style escapes (octal for other control chars)."""
    out = []
    for ch in value:
        escaped = _STRING_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\%03o" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _format_value(value: Any, t: SchemaType) -> str:
    """Print a default value the way torch re-serialises it."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        # Only ``str`` arguments get quotes; torch prints other strings raw
        # (``Device x="cpu"`` prints ``x=cpu``).
        inner = t.without_optional()
        return _quote_string(value) if inner.base == "str" and not inner.is_list else value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_float(value)
    if isinstance(value, complex):
        return _format_complex(value)
    if isinstance(value, list):
        elem = t.elem if t.is_list else t
        # torch abbreviates an ``int[]`` default whose entries are all equal.
        if (
            t.is_list and not t.optional and elem.base == "int" and not elem.is_list
            and not elem.optional and len(value) > 1 and all(v == value[0] for v in value)
        ):
            return _format_value(value[0], elem)
        return "[" + ", ".join(_format_value(v, elem) for v in value) + "]"
    return str(value)


class Argument:
    """One formal argument: ``Tensor(a!) out``, ``int dim=0``, ``*, Scalar alpha=1``.

    ``default_value`` is the parsed Python value (``NO_DEFAULT`` when absent):
    ``contiguous_format`` -> 0, ``float32`` -> 6, ``int[2] x=1`` -> ``[1, 1]``.
    """

    __slots__ = ("name", "type", "default_value", "kwarg_only", "alias_info")

    def __init__(
        self,
        name: str,
        type: SchemaType,
        default_value: Any = NO_DEFAULT,
        kwarg_only: bool = False,
        alias_info: Optional[AliasInfo] = None,
    ) -> None:
        self.name = name
        self.type = type
        self.default_value = default_value
        self.kwarg_only = kwarg_only
        self.alias_info = alias_info

    def has_default_value(self) -> bool:
        return self.default_value is not NO_DEFAULT

    @property
    def is_write(self) -> bool:
        """Does the op mutate this argument (``Tensor(a!)``)?"""
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def is_out(self) -> bool:
        """An out argument: keyword-only and written to."""
        return self.kwarg_only and self.is_write

    @property
    def N(self) -> Optional[int]:
        """The fixed size of ``int[N]`` (torch's ``Argument.N``)."""
        inner = self.type.without_optional()
        return inner.size if inner.is_list else None

    def __str__(self) -> str:
        text = f"{_format_type(self.type, self.alias_info)} {self.name}"
        if self.has_default_value():
            text += "=" + _format_value(self.default_value, self.type)
        return text

    def __repr__(self) -> str:
        return f"Argument({str(self)!r}{', kwarg_only' if self.kwarg_only else ''})"

    def _key(self) -> tuple:
        default = self.default_value
        return (self.name, self.type, repr(default), self.kwarg_only, self.alias_info)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Argument) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class Return:
    """One return value: ``Tensor``, ``Tensor(a!)``, ``Tensor values``.

    ``name`` is None for an unnamed return (torch uses ``''``).
    """

    __slots__ = ("name", "type", "alias_info")

    def __init__(self, type: SchemaType, name: Optional[str] = None,
                 alias_info: Optional[AliasInfo] = None) -> None:
        self.name = name
        self.type = type
        self.alias_info = alias_info

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.is_write

    def __str__(self) -> str:
        text = _format_type(self.type, self.alias_info)
        return f"{text} {self.name}" if self.name else text

    def __repr__(self) -> str:
        return f"Return({str(self)!r})"

    def _key(self) -> tuple:
        return (self.name, self.type, self.alias_info)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Return) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class FunctionSchema:
    """A parsed operator schema (c10::FunctionSchema).

    ``name`` is qualified when the text had a namespace (``'aten::add'``);
    ``overload_name`` is ``''`` for the default overload.  ``str(schema)`` is
    torch's printed form; equality and hashing go through it.
    """

    __slots__ = ("name", "overload_name", "arguments", "returns", "is_vararg", "is_varret")

    def __init__(
        self,
        name: str,
        overload_name: str,
        arguments: list,
        returns: list,
        is_vararg: bool = False,
        is_varret: bool = False,
    ) -> None:
        self.name = name
        self.overload_name = overload_name
        self.arguments = list(arguments)
        self.returns = list(returns)
        self.is_vararg = is_vararg
        self.is_varret = is_varret

    # -- names --------------------------------------------------------------
    @property
    def namespace(self) -> str:
        """``'aten'`` for ``aten::add``; ``''`` when the name is unqualified."""
        ns, sep, _ = self.name.rpartition("::")
        return ns if sep else ""

    @property
    def unqualified_name(self) -> str:
        """``'add_'`` for ``aten::add_.Tensor``."""
        return self.name.rpartition("::")[2]

    # -- mutation -----------------------------------------------------------
    @property
    def is_mutable(self) -> bool:
        """True if any argument is written to (has a ``!`` annotation)."""
        return any(a.is_write for a in self.arguments)

    @property
    def out_arguments(self) -> list:
        """The out arguments: keyword-only arguments that are written to."""
        return [a for a in self.arguments if a.is_out]

    def _is_inplace_name(self) -> bool:
        base = self.unqualified_name
        if len(base) > 4 and base.startswith("__") and base.endswith("__"):
            inner = base[2:-2]
            return inner[:1] == "i" and inner[1:] in _AUGMENTED_ASSIGNMENT_NAMES
        return base.endswith("_")

    def kind(self) -> str:
        """torchgen's SchemaKind: 'functional', 'inplace', 'out', 'mutable' or 'scratch'.

        * inplace: the base name ends in ``_`` (or is ``__iadd__``-like);
        * scratch: an out argument is named ``_scratch_*``;
        * out: some keyword-only argument is written to;
        * mutable: a positional argument after ``self`` (all positionals when
          there is no ``self``) is written to;
        * functional: none of the above.

        torchgen rejects a schema that is both in-place and out=; here
        in-place wins, matching torchgen's precedence.
        """
        outs = self.out_arguments
        if self._is_inplace_name():
            return "inplace"
        if any(a.name.startswith("_scratch_") for a in outs):
            return "scratch"
        if outs:
            return "out"
        positional = [a for a in self.arguments if not a.kwarg_only]
        names = [a.name for a in positional]
        post_self = positional[names.index("self") + 1:] if "self" in names else positional
        if any(a.is_write for a in post_self):
            return "mutable"
        return "functional"

    # -- printing -----------------------------------------------------------
    def __str__(self) -> str:
        parts = []
        seen_kwarg_only = False
        for arg in self.arguments:
            if arg.kwarg_only and not seen_kwarg_only:
                parts.append("*")
                seen_kwarg_only = True
            parts.append(str(arg))
        if self.is_vararg:
            parts.append("...")
        name = f"{self.name}.{self.overload_name}" if self.overload_name else self.name
        return f"{name}({', '.join(parts)}) -> {self._returns_str()}"

    def _returns_str(self) -> str:
        returns = [str(r) for r in self.returns]
        if self.is_varret and not returns:
            return "..."
        if self.is_varret:
            returns.append("...")
        elif len(returns) == 1 and not returns[0].startswith("("):
            # A lone return needs parentheses only when it starts with a
            # tuple type, e.g. ``-> ((str, t)[])``.
            return returns[0]
        return "(" + ", ".join(returns) + ")"

    def __repr__(self) -> str:
        return f"FunctionSchema({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FunctionSchema) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


# --------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------

class SchemaParseError(RuntimeError):
    """A malformed schema string.  ``offset``/``line``/``column`` locate it (0-based)."""

    def __init__(self, message: str, text: str, start: int, end: int) -> None:
        self.message = message
        self.text = text
        self.offset = start
        self.line = text.count("\n", 0, start)
        self.column = start - (text.rfind("\n", 0, start) + 1)
        super().__init__(_highlight(message, text, start, end))


def _highlight(message: str, text: str, start: int, end: int) -> str:
    """``message here:`` + the source line + a ``~~~ <--- HERE`` marker, like torch."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    if line_end < 0:
        line_end = len(text)
    column = start - line_start
    width = max(1, min(end, line_end) - start)
    marker = " " * column + "~" * width + " <--- HERE"
    before = text[:line_end]
    after = text[line_end:]
    return f"{message} here:\n{before}\n{marker}{after}\n"


# Token kinds: 'ident', 'number', 'string', 'eof', a keyword ('True', 'None',
# 'def', ...) or the punctuation itself ('(', '->', '...', ...).  Each match
# swallows the whitespace in front of its token; ``bad`` catches any other
# character so that it can be reported.
_TOKEN_RE = re.compile(
    r"""
    \s*
    (?:
        (?P<comment>\#[^\n]*)
      | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?j?)
      | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
      | (?P<op>->|\.\.\.|[()\[\],=?!|*.:\-])
      | (?P<bad>\S)
    )
    """,
    re.VERBOSE | re.DOTALL,
)

# How an error message names a token kind (torch's wording).
_KIND_NAMES = {"->": "arrow", "string": "string_literal", "...": "ellipsis"}


def _tokenize(text: str) -> list:
    """Split ``text`` into ``(kind, text, start, end)`` tuples, ending with eof."""
    tokens = []
    append = tokens.append
    for m in _TOKEN_RE.finditer(text):
        group = m.lastgroup
        value = m.group(group)
        kind = group
        if group == "ident":
            if value in _KEYWORDS:
                kind = value
        elif group == "op":
            kind = value
        elif group == "comment":
            continue
        elif group == "bad":
            start = m.start(group)
            raise SchemaParseError(
                f"expected a valid token but found '{value}'", text, start, start + 1)
        append((kind, value, m.start(group), m.end()))
    append(("eof", "", len(text), len(text)))
    if "\n" in text:
        _check_line_breaks(tokens, text)
    return tokens


def _check_line_breaks(tokens: list, text: str) -> None:
    """Like the TorchScript lexer, allow line breaks only inside ``()`` / ``[]``
    (and before the first or after the last token)."""
    depth = 0
    for prev, tok in zip(tokens, tokens[1:-1]):
        if prev[0] in ("(", "["):
            depth += 1
        elif prev[0] in (")", "]"):
            depth -= 1
        if depth <= 0 and "\n" in text[prev[3]:tok[2]]:
            raise SchemaParseError(
                "unexpected line break (a schema may only span lines inside parentheses)",
                text, tok[2], tok[3])


_SIMPLE_ESCAPES = {
    "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
    "n": "\n", "r": "\r", "t": "\t", "v": "\v",
}
_OCTAL_DIGITS = frozenset("01234567")


def _unquote(token_text: str, text: str, start: int) -> str:
    """Decode a quoted string literal (C escapes and three-digit octal)."""
    body = token_text[1:-1]
    if "\\" not in body:
        return body
    out = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
        elif len(body) >= i + 4 and set(body[i + 1:i + 4]) <= _OCTAL_DIGITS:
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
        else:
            raise SchemaParseError(
                f"unsupported escape sequence '\\{nxt}' in string literal "
                "(use \\\\ \\' \\\" \\a \\b \\f \\n \\r \\t \\v or a three-digit octal \\ooo)",
                text, start, start + len(token_text),
            )
    return "".join(out)


# --------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------

class _Parser:
    """Recursive-descent parser over the token list.

    Grammar (informally)::

        schema    := name ['.' ident] '(' [arg {',' arg}] ')' '->' returns
        name      := ident ['::' ident]
        arg       := '*' | '...' | type ident ['=' default]
        returns   := '(' [ret {',' ret}] ')' | ret | '...'
        ret       := type [ident] | '...'
        type      := base [alias] { '[' [number] ']' [alias] | '?' }
        base      := builtin | typevar {'.' ident} | '(' [type {',' type}] ')'
                   | ('Dict'|'Future'|'RRef'|'Await'|'Union') '(' type {',' type} ')'
                   | '__torch__' '.' 'torch' '.' 'classes' '.' ident '.' ident
        alias     := '(' set ['!'] ['->' set] ')' | '!'
        set       := ident {'|' ident} ['|' '*'] | '*'

    Keywords (``def``, ``in``, ``True``...) are not identifiers, as in the
    TorchScript lexer torch uses, and a line break is only allowed inside
    brackets.
    """

    __slots__ = ("text", "tokens", "pos", "fresh_alias_sets")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0
        self.fresh_alias_sets = 0  # numbering for the ``Tensor!`` shorthand

    # -- token helpers ------------------------------------------------------
    def peek(self) -> str:
        return self.tokens[self.pos][0]

    def advance(self) -> tuple:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def accept(self, kind: str) -> Optional[tuple]:
        tok = self.tokens[self.pos]
        if tok[0] == kind:
            self.pos += 1
            return tok
        return None

    def expect(self, kind: str) -> tuple:
        tok = self.tokens[self.pos]
        if tok[0] != kind:
            self.fail_expected(kind, tok)
        self.pos += 1
        return tok

    def fail_expected(self, kind: str, tok: tuple) -> None:
        self.fail(f"expected {_KIND_NAMES.get(kind, kind)} but found "
                  f"'{_KIND_NAMES.get(tok[0], tok[0])}'", tok)

    def fail(self, message: str, tok: tuple) -> None:
        raise SchemaParseError(message, self.text, tok[2], tok[3])

    # -- schema ----------------------------------------------------------------
    def parse_schema(self, default_namespace: Optional[str]) -> FunctionSchema:
        name, overload = self.parse_name()
        if default_namespace and "::" not in name:
            name = f"{default_namespace}::{name}"
        arguments, is_vararg = self.parse_arguments()
        self.expect("->")
        returns, is_varret = self.parse_returns()
        self.expect("eof")
        schema = FunctionSchema(name, overload, arguments, returns, is_vararg, is_varret)
        _check_defaults(schema)
        return schema

    def parse_name(self) -> tuple:
        name = self.expect("ident")[1]
        if self.accept(":"):
            self.expect(":")
            name = f"{name}::{self.expect('ident')[1]}"
        overload = self.expect("ident")[1] if self.accept(".") else ""
        return name, overload

    def parse_arguments(self) -> tuple:
        self.expect("(")
        arguments = []
        kwarg_only = False
        is_vararg = False
        if self.accept(")"):
            return arguments, is_vararg
        while True:
            if self.accept("*"):
                kwarg_only = True
            elif self.accept("..."):
                is_vararg = True
                if self.accept(","):
                    self.fail("... must be the last element of the argument list",
                              self.tokens[self.pos])
            else:
                arguments.append(self.parse_argument(kwarg_only))
            if not self.accept(","):
                break
        self.expect(")")
        if is_vararg and any(a.has_default_value() for a in arguments):
            self.fail("schemas with vararg (...) can't have default value args",
                      self.tokens[self.pos])
        return arguments, is_vararg

    def parse_argument(self, kwarg_only: bool) -> Argument:
        type_, alias = self.parse_type()
        name = self.expect("ident")[1]
        default = NO_DEFAULT
        if self.accept("="):
            default = self.parse_default(type_)
        return Argument(name, type_, default, kwarg_only, alias)

    def parse_returns(self) -> tuple:
        if self.accept("..."):
            return [], True
        if self.peek() != "(":
            return [self.parse_return()], False
        self.advance()
        returns = []
        if self.accept(")"):
            return returns, False
        while True:
            if self.accept("..."):
                self.expect(")")
                return returns, True
            returns.append(self.parse_return())
            if not self.accept(","):
                break
        self.expect(")")
        return returns, False

    def parse_return(self) -> Return:
        type_, alias = self.parse_type()
        name_tok = self.accept("ident")
        return Return(type_, name_tok[1] if name_tok else None, alias)

    # -- types ----------------------------------------------------------------
    def parse_type(self) -> tuple:
        """Parse a type and its alias annotation; returns ``(SchemaType, AliasInfo|None)``."""
        type_ = self.parse_base_type()
        # torch takes an annotation straight after a plain type, a type
        # variable or a Dict, but not after a tuple, Future(...) or a class.
        plain = type_.base == "Dict" or not (type_.contained or type_.base == "Tuple" or type_.is_class)
        alias = self.parse_alias_opt() if plain else None
        while True:
            kind = self.peek()
            if kind == "[":
                self.advance()
                size = None
                size_tok = self.accept("number")
                if size_tok is not None:
                    # Like torch (std::stoll), read the leading digits: int[2.5] is int[2].
                    digits = re.match(r"\d*", size_tok[1]).group()
                    if not digits:
                        self.fail("expected an integer list size", size_tok)
                    size = int(digits)
                self.expect("]")
                type_ = SchemaType.list_of(type_, size)
                if alias is not None:
                    # The annotation so far describes the elements.
                    alias = AliasInfo((), (), alias.is_write, (alias,))
                own = self.parse_alias_opt()
                if own is not None:
                    contained = alias.contained if alias is not None else ()
                    alias = AliasInfo(own.before, own.after, own.is_write, contained)
                if size is not None:
                    # Nothing but '?' may follow a fixed-size list.
                    if self.accept("?"):
                        type_ = type_.as_optional()
                    break
            elif kind == "?":
                self.advance()
                type_ = type_.as_optional()
            else:
                break
        return type_, alias

    def parse_base_type(self) -> SchemaType:
        tok = self.advance()
        kind, word = tok[0], tok[1]
        if kind == "(":
            members = []
            if not self.accept(")"):
                members.append(_real_type(self.parse_type()[0]))
                while self.accept(","):
                    members.append(_real_type(self.parse_type()[0]))
                self.expect(")")
            return SchemaType("Tuple", contained=tuple(members))
        if kind == "None":
            return SchemaType("NoneType")
        if kind != "ident":
            self.fail_expected("ident", tok)
        if word in _GENERIC_TYPES:
            return self.parse_generic(word)
        if word == "__torch__":
            return self.parse_class_type(tok)
        builtin = _BUILTIN_TYPES.get(word)
        if builtin is not None:
            return SchemaType(builtin)
        if word[0].islower():
            # A type variable such as ``t`` or ``tVal`` (torch also takes dots).
            while self.accept("."):
                word += "." + self.expect("ident")[1]
            return SchemaType(word)
        self.fail(
            f"unknown type specifier '{word}'. Common valid schema types include "
            "Tensor, SymInt, int, float, bool, Scalar", tok)

    def parse_generic(self, word: str) -> SchemaType:
        open_tok = self.expect("(")
        key_tok = self.tokens[self.pos]
        params = [_real_type(self.parse_type()[0])]
        while self.accept(","):
            params.append(_real_type(self.parse_type()[0]))
        close_tok = self.expect(")")
        arity = _GENERIC_TYPES[word]
        if (arity is None and len(params) < 2) or (arity is not None and len(params) != arity):
            wanted = "at least 2" if arity is None else str(arity)
            raise SchemaParseError(
                f"{word} takes {wanted} type parameter(s), got {len(params)}",
                self.text, open_tok[2], close_tok[3])
        if word == "Dict":
            key = params[0]
            if key.optional or key.is_list or key.contained or key.base not in _DICT_KEY_BASES:
                raise SchemaParseError(
                    f"Cannot create dict for key type '{key}', only int, float, complex, "
                    "Tensor, device and string keys are supported",
                    self.text, key_tok[2], key_tok[3])
        return SchemaType(word, contained=tuple(params))

    def parse_class_type(self, first: tuple) -> SchemaType:
        parts = ["__torch__"]
        last = first
        while self.accept("."):
            last = self.expect("ident")
            parts.append(last[1])
        if len(parts) < 5 or parts[1:3] != ["torch", "classes"]:
            raise SchemaParseError(
                "custom class types must be spelled __torch__.torch.classes.<namespace>.<Name>",
                self.text, first[2], last[3])
        return SchemaType(".".join(parts))

    def parse_alias_opt(self) -> Optional[AliasInfo]:
        """An optional annotation: ``(a!)``-style, or the legacy bare ``!``.

        ``Tensor!`` means "written, in a fresh alias set": torch names the set
        ``$0``, ``$1``, ... in order of appearance and leaves the after-set
        empty, so it prints as ``Tensor($0! -> )``.
        """
        kind = self.peek()
        if kind == "(":
            return self.parse_alias()
        if kind == "!":
            self.advance()
            name = f"${self.fresh_alias_sets}"
            self.fresh_alias_sets += 1
            return AliasInfo((name,), (), True)
        return None

    def parse_alias(self) -> AliasInfo:
        self.expect("(")
        before = self.parse_alias_set()
        is_write = self.accept("!") is not None
        after = self.parse_alias_set() if self.accept("->") else before
        self.expect(")")
        return AliasInfo(before, after, is_write)

    def parse_alias_set(self) -> tuple:
        """``a``, ``a|b``, ``*``; the wildcard ends a set (torch swallows a trailing ``|`` or ``|*``)."""
        names = []
        while True:
            if self.accept("*"):
                names.append("*")
                if self.accept("|"):
                    self.accept("*")
                return tuple(names)
            names.append(self.expect("ident")[1])
            if not self.accept("|"):
                return tuple(names)

    # -- default values -------------------------------------------------------
    def parse_default(self, type_: SchemaType) -> Any:
        """Parse ``=value`` for an argument of declared type ``type_``.

        Optional arguments take any single literal, unconverted
        (``float? x=1`` keeps the int 1).  Lists take ``[a, b]`` or, when
        fixed-size, one scalar that is repeated.  ``Tensor``/``Generator``
        only take ``None``; ``Device`` takes a string.
        """
        if type_.optional:
            # ``ScalarType? dtype=float32`` takes dtype names; ``ScalarType[1]?`` doesn't.
            return self.parse_constant(None if type_.is_list else type_.base, convert=False)
        if type_.is_list:
            elem = type_.elem
            if elem.optional or elem.is_list or elem.base not in _LIST_DEFAULT_BASES:
                self.fail("lists are only supported for float, int and complex types",
                          self.tokens[self.pos])
            if type_.size is not None and self.peek() != "[":
                # ``int[2] stride=1``: one literal, repeated (enum names aren't taken here).
                if self.peek() == "ident":
                    self.fail("expected a number but found 'ident'", self.tokens[self.pos])
                return [self.parse_list_item(elem.base)] * type_.size
            open_tok = self.expect("[")
            values = []
            if not self.accept("]"):
                values.append(self.parse_list_item(elem.base))
                while self.accept(","):
                    values.append(self.parse_list_item(elem.base))
                self.expect("]")
            if len({type(v) for v in values}) > 1:
                self.fail("list default values must all have the same type", open_tok)
            return values
        base = type_.base
        if base in ("Tensor", "Generator"):
            self.expect("None")
            return None
        if base == "Device":
            tok = self.expect("string")
            device = _unquote(tok[1], self.text, tok[2])
            if not _DEVICE_RE.match(device):
                self.fail(f"invalid device string {device!r}", tok)
            return device
        if base in _SCALAR_DEFAULT_BASES:
            return self.parse_constant(base, convert=True)
        self.fail(f"unexpected type for a default value: {type_.schema_str()}",
                  self.tokens[self.pos])

    def parse_list_item(self, base: str) -> Any:
        """One entry of a list default; it must have the element's own kind."""
        tok = self.tokens[self.pos]
        value = self.parse_constant(base, convert=True)
        wanted = _LIST_ITEM_KINDS.get(base, int)
        if type(value) is not wanted:
            self.fail(f"expected {wanted.__name__} in a {base}[] default", tok)
        return value

    def parse_constant(self, base: Optional[str], convert: bool) -> Any:
        """One literal: number, string, True/False/None or an enum identifier."""
        tok = self.advance()
        kind = tok[0]
        if kind == "number":
            return self.parse_number(tok, base if convert else None, negate=False)
        if kind == "-":
            return self.parse_number(self.expect("number"), base if convert else None, negate=True)
        if kind == "True":
            return True
        if kind == "False":
            return False
        if kind == "None":
            return None
        if kind == "string":
            return _unquote(tok[1], self.text, tok[2])
        if kind == "ident":
            word = tok[1]
            if word in _ENUM_DEFAULTS:
                return _ENUM_DEFAULTS[word]
            if base == "ScalarType" and word in _SCALAR_TYPE_DEFAULTS:
                return _SCALAR_TYPE_DEFAULTS[word]
            self.fail("invalid numeric default value", tok)
        self.fail(f"expected a default value but found '{_KIND_NAMES.get(kind, kind)}'", tok)

    def parse_number(self, tok: tuple, base: Optional[str], negate: bool) -> Any:
        """Convert a number token: ``float`` args get floats, ``complex`` complex,
        everything else keeps the literal's own kind (``int x=1.5`` stays 1.5)."""
        text = tok[1]
        if text.endswith("j"):
            # A pure imaginary literal; ``-2j`` keeps a +0.0 real part.
            imag = float(text[:-1])
            return complex(0.0, -imag if negate else imag)
        if base == "float":
            value: Any = float(text)
        elif base == "complex":
            value = complex(float(text))
        elif "." in text or "e" in text or "E" in text:
            value = float(text)
        else:
            value = int(text)
        if negate:
            value = -value
        if isinstance(value, float) and value in (float("inf"), float("-inf")):
            self.fail("invalid numeric default value (out of range for a double)", tok)
        if isinstance(value, int) and not _INT64_MIN <= value <= _INT64_MAX:
            self.fail("invalid numeric default value (out of range for int64)", tok)
        return value


def _real_type(t: SchemaType) -> SchemaType:
    """``t`` with the int-like fake types (SymInt, ScalarType, ...) replaced by int."""
    if t.is_list:
        elem = _real_type(t.elem)
        return t if elem is t.elem else t._replace(base=elem.base, elem=elem)
    if t.contained:
        return t._replace(contained=tuple(_real_type(c) for c in t.contained))
    return t._replace(base="int") if t.base in _INT_LIKE_BASES else t


def _check_defaults(schema: FunctionSchema) -> None:
    """c10's rule: a positional argument without default can't follow one with a default.

    (c10 exempts list-typed arguments, e.g. ``int[2] padding`` after ``stride=1``.)
    """
    seen_default = False
    for arg in schema.arguments:
        if arg.has_default_value():
            seen_default = True
        elif seen_default and not arg.kwarg_only and not (arg.type.is_list and not arg.type.optional):
            raise RuntimeError(
                "Non-default positional argument follows default argument. "
                f"Parameter {arg.name} in {schema}"
            )


# --------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------

def parse_schema(text: str, default_namespace: Optional[str] = None) -> FunctionSchema:
    """Parse a schema string such as ``'aten::mm(Tensor self, Tensor mat2) -> Tensor'``.

    Like ``torch._C.parse_schema``, a name without ``ns::`` stays
    unqualified; pass ``default_namespace='aten'`` to qualify it instead.
    Raises ``SchemaParseError`` (a ``RuntimeError``) pointing at the
    offending token.
    """
    return _Parser(text).parse_schema(default_namespace)


def parse_type(text: str) -> SchemaType:
    """Parse a lone type such as ``'Tensor?[]'`` or ``'int[2]'`` (alias annotations are dropped)."""
    parser = _Parser(text)
    type_, _ = parser.parse_type()
    parser.expect("eof")
    return type_
