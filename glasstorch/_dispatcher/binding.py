"""Python argument parsing against schemas (torch/csrc/utils/python_arg_parser.cpp).

For each Python-visible overload we generate, once, a small parser function
whose Python signature is the overload's (``input`` for ``self`` in the
function variant, an ``out=`` keyword when an out overload exists).  Python
itself binds positional and keyword arguments; the generated body checks
types, normalizes values (``x.sum(1)`` -> ``[1]``, ``dtype=float`` ->
``torch.float64``) and returns what to call:

    parse(*args, **kwargs) -> (op, args, kwargs)          or raises _NoMatch

A public function tries its overloads' parsers in torchgen's order
(``sort_overloads``, see Note [Overload order]), as PyTorch's parser tries
signatures, and calls the first that accepts.  Read a parser's source with
``glasstorch._dispatcher.binding.parser_source(op)``.
"""
from __future__ import annotations

import functools
import keyword
from typing import NamedTuple

import numpy as np

from .._core import dtype as dt
from .._core import startup_cache
from .._core.device import device as Device
from .._core.storage import TypedStorage, UntypedStorage
from .._core.tls import default_device as _tls_default_device
from .._tensor import Tensor
from .schema import SchemaType

__all__ = ["make_parser", "resolve_overload", "PythonSignature", "parser_source",
           "sort_overloads"]

NUMBER = (bool, int, float, complex, np.bool_, np.integer, np.floating, np.complexfloating)
INT = (int, np.integer)

# Functions whose Tensor parameters also take Python numbers (wrapped numbers).
NUMBERS_AS_TENSORS = {
    # Checked against PyTorch 2.13 under a TorchDispatchMode: for these names a
    # Python number given for a Tensor parameter becomes a wrapped number
    # (``x + 2`` -> add.Tensor).  Every other function routes numbers to its
    # Scalar overloads (``x ** 2`` -> pow.Tensor_Scalar, ``x == 2`` -> eq.Scalar).
    "add", "add_", "__radd__", "sub", "sub_", "mul", "mul_", "__rmul__", "div", "div_",
    "true_divide", "true_divide_", "floor_divide", "floor_divide_", "copy_",
    "multiply", "multiply_", "subtract", "subtract_", "divide", "divide_",   # the aliases
}

# ... and of those, the ones whose first argument (``input``) may be a number too:
# ``torch.add(2, x)``, ``torch.floor_divide(7, x)`` (python_arg_parser.cpp's list).
NUMBERS_AS_INPUT = {"add", "sub", "mul", "div", "true_divide", "floor_divide", "multiply",
                    "subtract", "divide"}


class _NoMatch(Exception):
    """This overload does not accept these arguments (position, name, value)."""


# -- type names and checks ---------------------------------------------------------

_TYPE_NAMES = {"Tensor": "Tensor", "int": "int", "SymInt": "int", "float": "float",
               "bool": "bool", "str": "str", "Scalar": "Number", "ScalarType": "torch.dtype",
               "Device": "torch.device", "Layout": "torch.layout", "MemoryFormat":
               "torch.memory_format", "Generator": "torch.Generator", "Storage": "torch.Storage"}


def python_type_name(t) -> str:
    if t.is_list:
        base = t.base
        if base in ("int", "SymInt"):
            name = "tuple of ints"
        elif base == "Tensor":
            name = "tuple of Tensors"
        elif base == "bool":
            name = "tuple of bools"
        elif base == "float":
            name = "tuple of floats"
        elif base == "Scalar":
            name = "tuple of Scalars"
        else:
            name = f"tuple of {_TYPE_NAMES.get(base, base)}s"
    else:
        name = _TYPE_NAMES.get(t.base, t.base)
    return name


class UnpackError(TypeError):
    """An int[] element outside int64, or a Tensor[] element that is no tensor:
    PyTorch's parser fails the call at once (a TypeError naming the argument)
    instead of trying the next signature."""


def _to_int(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, INT):
        v = int(v)
        if not -2 ** 63 <= v < 2 ** 63:     # unpacked as a C long long
            raise ValueError("Overflow when unpacking long long")
        return v
    if isinstance(v, Tensor) and not v._shape and v.dtype.category <= dt.INTEGRAL:
        return int(v.item())
    if _is_symint(v):
        return v
    if hasattr(v, "__index__"):
        return v.__index__()
    raise _NoMatch


def _is_symint(v) -> bool:
    """A symbolic size (SymInt) stays symbolic: the op's meta rule computes with it."""
    from ..fx.experimental.sym_node import SymInt     # (late: fx imports this module)
    return isinstance(v, SymInt)


def is_sym_number(v) -> bool:
    """A symbolic number (SymInt, SymFloat) passes as a Scalar, or as a number for a
    Tensor parameter, unevaluated: make_fx records ``mul.Tensor(x, sym_size_int)``."""
    from ..fx.experimental.sym_node import SymFloat, SymInt
    return isinstance(v, (SymInt, SymFloat))


def _conv_int_list(v, fixed_size, where=("", "")):
    """int[] / SymInt[]: a list of ints; int[N] also takes one int, repeated N times.  ``where``: the
    function and argument names an overflowing element's error names."""
    if isinstance(v, (list, tuple)):
        try:
            return [_to_int(x) for x in v]
        except ValueError as e:
            pos = next(i for i, x in enumerate(v, 1) if isinstance(x, INT) and
                       not -2 ** 63 <= int(x) < 2 ** 63)
            raise UnpackError(f"{where[0]}(): argument '{where[1]}' failed to unpack the object "
                              f"at pos {pos} with error \"{e}\"") from None
    if fixed_size is not None and (isinstance(v, INT) and not isinstance(v, bool)):
        return [_to_int(v)] * fixed_size       # int[2] from 3: [3, 3], as torch's parser
    if fixed_size is not None and isinstance(v, Tensor) and not v._shape:
        return [_to_int(v)] * fixed_size
    raise _NoMatch


def _conv_dtype(v):
    if isinstance(v, dt.dtype):
        return v
    mapped = {float: dt.float64, int: dt.int64, bool: dt.bool_, complex: dt.complex128}.get(v)
    if mapped is not None:
        return mapped
    if isinstance(v, str):             # "float32" is no dtype to PyTorch's parser
        raise _NoMatch
    try:
        return dt.FROM_NUMPY[np.dtype(v)]
    except Exception:
        raise _NoMatch from None


def _python_number(v):
    """A Python number as a Scalar: ints must fit int64 or uint64, as PyTorch unpacks them."""
    if type(v) is int and not -2 ** 63 <= v < 2 ** 64:
        raise OverflowError("int too big to convert" if v > 0 else
                            "can't convert negative int to unsigned")
    return v


def _conv_scalar(v):
    if isinstance(v, (bool, int, float, complex)):
        return _python_number(v)
    if is_sym_number(v):
        return v
    if isinstance(v, np.generic) and isinstance(v, NUMBER):
        return v.item()
    if isinstance(v, Tensor) and not v._shape:     # (0-dim only, as PyTorch's parser)
        return v.item()
    raise _NoMatch


def _conv_float(v):
    if isinstance(v, (float, int)) and not isinstance(v, bool):
        return v
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, Tensor) and not v._shape:
        return v.item()
    raise _NoMatch


def _conv_bool(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise _NoMatch


def _conv_str(v):
    if isinstance(v, str):
        return v
    raise _NoMatch


def _conv_device(v):
    if isinstance(v, (Device, str)) or isinstance(v, int):
        return Device(v)
    raise _NoMatch


def _conv_tensor_list(v, optional_elems, argnum=0):
    """Tensor[]: a list or tuple of tensors.  An element that is no tensor fails the
    call at once, as PyTorch's parser checks a tensor list (the argument counted
    from 0), before it would try the next signature or look at unknown keywords."""
    if isinstance(v, Tensor) or not isinstance(v, (list, tuple)):
        raise _NoMatch
    for i, x in enumerate(v):
        if not (isinstance(x, Tensor) or (optional_elems and x is None)):
            if hasattr(type(x), "__torch_function__"):
                raise _NoMatch      # (an FX Proxy ...: the override gets the call)
            raise UnpackError(f"expected Tensor as element {i} in argument {argnum}, "
                              f"but got {type(x).__name__}")
    return list(v)


def _check_tensor(v, numbers_ok):
    if isinstance(v, Tensor):
        return v
    if numbers_ok and isinstance(v, NUMBER):
        return v.item() if isinstance(v, np.generic) else _python_number(v)
    if numbers_ok and is_sym_number(v):
        return v
    raise _NoMatch


def _any(v):
    return v


def _conv_storage(v):
    """A storage (typed or untyped): never a tensor, so ``x.set_(t)`` finds the
    Tensor overload."""
    if isinstance(v, (UntypedStorage, TypedStorage)):
        return v
    raise _NoMatch


_CONVERTERS = {"ScalarType": _conv_dtype, "Scalar": _conv_scalar, "float": _conv_float,
               "bool": _conv_bool, "str": _conv_str, "Device": _conv_device,
               "Layout": _any, "MemoryFormat": _any, "Generator": _any, "Any": _any,
               "Storage": _conv_storage, "Stream": _any}


def _converter_for(t, numbers_ok, argnum=0):
    """(expression template, needs helper) for one argument type (``argnum``: its
    position from 0, which a tensor list's error names)."""
    if t.is_list:
        if t.base in ("int", "SymInt"):
            return lambda v: _conv_int_list(v, t.size)
        if t.base == "Tensor":
            opt_elems = getattr(t, "elem", None) is not None and t.elem.optional
            return lambda v: _conv_tensor_list(v, opt_elems, argnum)
        if t.base == "bool":
            return lambda v: [_conv_bool(x) for x in v]
        if t.base == "float":
            return lambda v: [_conv_float(x) for x in v]
        return lambda v: list(v)
    if t.base == "Tensor":
        return lambda v: _check_tensor(v, numbers_ok)
    if t.base in ("int", "SymInt"):
        return _to_int
    return _CONVERTERS.get(t.base, _any)


# -- generated parsers -----------------------------------------------------------

class PythonSignature:
    """How one overload appears in Python: parameter names, defaults, out=."""

    def __init__(self, op, out_op=None, method=False, name=None):
        self.op = op
        self.out_op = out_op
        self.method = method
        self.name = name or op.overloadpacket.__name__
        self.schema = op._schema

    def params(self):
        """(python name, schema arg, kwarg_only) for each visible parameter."""
        result = []
        for arg in self.schema.arguments:
            name = arg.name
            if name == "self" and not self.method and str(arg.type) == "Tensor":
                name = "input"          # a Scalar self keeps its name: pow(Number self, ...)
            result.append((name, arg, arg.kwarg_only))
        return result

    def formals(self) -> list:
        """The Python parameters as torchgen's PythonSignature lists them: the
        inputs (a method's self left out), ``out`` after the keyword-only inputs,
        then a factory's tensor options as Python sees them (every default None
        but ``pin_memory = False``, and ``requires_grad = False`` added)."""
        names = {arg.name for arg in self.schema.arguments}
        options = _FACTORY_OPTIONS if _FACTORY_OPTIONS <= names else ()
        result = [_Formal(pyname, arg.type, _default_text(arg) if arg.has_default_value() else None,
                          kwonly)
                  for pyname, arg, kwonly in self.params()
                  if not (self.method and arg.name == "self") and arg.name not in options]
        if self.out_op is not None:
            outs = [a for a in self.out_op._schema.arguments if a.is_out]
            out_type = _TENSOR if len(outs) == 1 else SchemaType.list_of(_TENSOR, len(outs))
            result.append(_Formal(outs[0].name if len(outs) == 1 else "out", out_type, "None",
                                  True, is_out=True))
        if options:
            result += _OPTION_FORMALS
        return result

    def describe(self) -> str:
        """The signature as PyTorch's messages list it (torchgen's signature_str
        in the parser's type names)."""
        return _join_formals(self.formals(), lambda f: f"{python_type_name(f.type)} {f.name}" +
                             ("" if f.default is None else f" = {f.default}"))


class _Formal(NamedTuple):
    """One Python parameter: its name, schema type, default as torchgen prints
    it (None: required), and whether it is keyword-only (or the ``out``)."""
    name: str
    type: SchemaType
    default: "str | None"
    kwonly: bool
    is_out: bool = False


def _join_formals(formals, text) -> str:
    """``(a, b, *, c)``: each formal as ``text`` makes it, a ``*`` before the keyword-only ones."""
    parts = [text(f) for f in formals]
    first_kwonly = next((i for i, f in enumerate(formals) if f.kwonly), len(parts))
    if first_kwonly < len(parts):
        parts.insert(first_kwonly, "*")
    return "(" + ", ".join(parts) + ")"


def _default_text(arg) -> str:
    """A default as torchgen writes it into the parser's signature (and PyTorch's
    messages print it): ``None`` for an empty list, a string in double quotes,
    a reduction's ``Mean`` as its C++ name,
    an ``int[N]`` of equal entries as one entry, other lists as ``{-2,-1}``."""
    value = arg.default_value
    if isinstance(value, str) and arg.type.base == "str":
        return f'"{value}"'
    if isinstance(value, list):
        if not value:
            return "None"
        if arg.N is not None and all(v == value[0] for v in value):
            return str(value[0])
        return "{" + ",".join(map(str, value)) + "}"
    if arg.name == "reduction" and value == 1:
        return "at::Reduction::Mean"   # the yaml's ``Mean``, as torchgen spells it
    return str(value)


_TENSOR = SchemaType("Tensor")

# A factory's TensorOptions arguments, and the Python parameters that stand for
# them (torchgen's PythonSignature.tensor_options_args).
_FACTORY_OPTIONS = frozenset(("dtype", "layout", "device", "pin_memory"))
_OPTION_FORMALS = [_Formal(name, SchemaType(base, optional=True), default, True)
                   for name, base, default in (("dtype", "ScalarType", "None"),
                                               ("layout", "Layout", "None"),
                                               ("device", "Device", "None"),
                                               ("pin_memory", "bool", "False"),
                                               ("requires_grad", "bool", "False"))]


# Note [Overload order]
# ~~~~~~~~~~~~~~~~~~~~~
# PyTorch's parser tries a function's signatures in the order torchgen's
# sort_overloads (gen_python_functions.py) gives them, and lists them in that
# order when none fits.  Two steps:
#
# 1. sort by the signature text torchgen writes into the parser, C++ type
#    names and all: ``std(Tensor input, IntArrayRef[1]? dim, bool unbiased=True,
#    ...)`` sorts before ``std(Tensor input, bool unbiased=True)``;
# 2. within that, move an overload after every overload it is "weaker" than:
#    same number of parameters (out= aside), the same types except where its
#    type loses to the other's (_LOSES_TO: Scalar to Tensor, int[] to int, ...).
#    The first sweep takes every overload that loses to none, in sorted order;
#    then, walking the result, each overload joins it (in sorted order) as soon
#    as everything it loses to is in.
#
# So ``x.std()`` binds std.correction (its dim is optional: it sorts first) and
# ``torch.where(c, x, 0.)`` tries (Tensor, Tensor) before (Tensor, Scalar).

def sort_overloads(signatures) -> list:
    """The overloads of one Python function in PyTorch's order (Note [Overload order])."""
    ordered = sorted(signatures, key=_signature_key)
    types = [_param_types(sig) for sig in ordered]
    stronger = {i: {j for j, theirs in enumerate(types) if _is_weaker(mine, theirs)}
                for i, mine in enumerate(types)}
    result = [i for i in stronger if not stronger[i]]
    waiting = {i: above for i, above in stronger.items() if above}
    for placed in result:               # grows as overloads are released
        for i in sorted(waiting):
            waiting[i].discard(placed)
            if not waiting[i]:
                del waiting[i]
                result.append(i)
    return [ordered[i] for i in result]


def _signature_key(sig) -> str:
    """torchgen's signature_str (without the function name, the same for all)."""
    return _join_formals(sig.formals(), lambda f: f"{_cpp_type_name(f.type)} {f.name}" +
                         ("" if f.default is None else f"={f.default}"))


def _cpp_type_name(t) -> str:
    """A parameter type as torchgen spells it in a parser signature."""
    if t.optional:
        inner = t.without_optional()
        return "Tensor?" if str(inner) == "Tensor" else _cpp_type_name(inner) + "?"
    if t.is_list:
        elem, size = str(t.elem), "" if t.size is None else f"[{t.size}]"
        if elem == "bool":
            return f"::std::array<bool,{t.size}>"
        if elem == "Tensor?":
            return "c10::List<::std::optional<Tensor>>"
        if elem in _CPP_LIST_NAMES:
            return _CPP_LIST_NAMES[elem] + size
        return f"ArrayRef<{_cpp_type_name(t.elem)}>"
    return _CPP_NAMES.get(t.base, t.base)


_CPP_NAMES = {"int": "int64_t", "float": "double", "str": "c10::string_view"}
_CPP_LIST_NAMES = {"int": "IntArrayRef", "SymInt": "SymIntArrayRef", "Tensor": "TensorList",
                   "Scalar": "ScalarList", "Dimname": "DimnameList"}


def _param_types(sig) -> list:
    """The types of a signature's parameters, out= aside, as schema strings."""
    return [str(f.type) for f in sig.formals() if not f.is_out]


def _is_weaker(mine, theirs) -> bool:
    """Does a signature with parameter types ``mine`` come after one with
    ``theirs`` whatever their text: the same types but for some where
    ``mine`` loses to ``theirs``?"""
    return len(mine) == len(theirs) and mine != theirs and \
        all(a == b or _loses_to(a, b) for a, b in zip(mine, theirs))


def _loses_to(a: str, b: str) -> bool:
    """torchgen's is_arg_smaller, on schema type strings: the parser must try a
    ``b`` parameter before an ``a`` one (a number also converts to a Tensor, a
    0-dim Tensor to a Scalar or an int; an int to a one-element int[]; a
    Tensor[] fails loudly rather than not matching)."""
    return ((a, b) in _LOSES_TO or ("Dimname" in a and "Dimname" not in b)
            or (a == "Tensor[]" and "[]" in b))


_LOSES_TO = {("Scalar", "Tensor"), ("Scalar?", "Tensor?"), ("int[]", "int"), ("int[]", "int?"),
             ("SymInt[]", "int[]"), ("int", "Tensor"), ("SymInt", "Tensor")}


def _tensor_options_lines(sig: PythonSignature, env: dict) -> list:
    """A factory's TensorOptions as torch's binding fills them: ``pin_memory``
    False when not given, and for a factory with no tensor input (``ones``, not
    ``ones_like`` / ``new_ones``) the default device, so ops below the binding
    (dispatch modes, make_fx graphs) see ``device=cpu, pin_memory=False``."""
    names = {arg.name for arg in sig.schema.arguments}
    if not _FACTORY_OPTIONS <= names:
        return []
    unless_out = "out is None and " if sig.out_op is not None else ""
    lines = [f"    if {unless_out}pin_memory is None: pin_memory = False"]
    if not any(arg.type.base == "Tensor" for arg in sig.schema.arguments):
        env["_default_device"] = _default_device
        lines.append(f"    if {unless_out}device is None: device = _default_device()")
    return lines


def _default_device():
    return _tls_default_device() or _CPU


_CPU = Device("cpu")


def make_parser(sig: PythonSignature):
    """Generate the parser function for one Python signature."""
    params = sig.params()
    numbers_ok = sig.name in NUMBERS_AS_TENSORS
    env = {"_NoMatch": _NoMatch, "op": sig.op, "out_op": sig.out_op}
    header, body = [], []
    star = False
    positional, kwonly = [], []
    for index, (pyname, arg, is_kwonly) in enumerate(params):
        if keyword.iskeyword(pyname):  # random_(from, to): ``from`` can't be a Python name
            pyname += "_"
        default = ""
        # only a declared default makes an argument optional: a ``T?`` without one
        # must be given (None allowed), so torch.rand(2) skips rand.generator(...,
        # *, Generator? generator) and torch.sum(x, keepdim=True) matches nothing
        if arg.has_default_value():
            env[f"_d_{pyname}"] = arg.default_value
            default = f"=_d_{pyname}"
        if is_kwonly and not star:
            header.append("*")
            star = True
        header.append(f"{pyname}{default}")
        t = arg.type
        conv = _converter_for(t, numbers_ok and (index != 0 or (
            not sig.method and sig.name in NUMBERS_AS_INPUT)),
            argnum=index - (sig.method and any(a.name == "self" for _, a, _ in params[:index])))
        if t.is_list and t.base in ("int", "SymInt"):
            conv = functools.partial(_conv_int_list, fixed_size=t.size, where=(sig.name, pyname))
        env[f"_c_{pyname}"] = conv
        check = f"{pyname} = _c_{pyname}({pyname})"
        if arg.has_default_value() and arg.default_value == [] and not t.optional:
            # an empty-list default reads "None" in PyTorch's signature, and None means it
            body.append(f"    if {pyname} is None: {pyname} = _d_{pyname}")
            body.append(f"    else: {check}")
        elif t.optional or (arg.has_default_value() and arg.default_value is None):
            # an optional argument left at its schema default (``dtype=long`` is stored
            # as 4) is not converted: the kernel's own default applies
            skip = f" and {pyname} is not _d_{pyname}" if arg.has_default_value() and \
                arg.default_value is not None else ""
            body.append(f"    if {pyname} is not None{skip}: {check}")
        else:
            body.append(f"    {check}")
        (kwonly if is_kwonly else positional).append((pyname, arg))
    if sig.out_op is not None:
        if not star:
            header.append("*")
        header.append("out=None")
    # unknown keywords fail the signature after its parameters are checked, as in
    # PyTorch's FunctionSignature::parse (a bad tensor list is reported first)
    header.append("**_unexpected_kwargs")
    if sig.method and "self" in header and header[0] != "self":
        # x.where(cond, y) binds where.self(Tensor condition, Tensor self, ...): the
        # method's tensor comes first in Python, arguments keep the schema order
        header.remove("self")
        header.insert(0, "self")
    lines = [f"def parse({', '.join(header)}):"]
    lines += body
    lines.append("    if _unexpected_kwargs: raise _NoMatch")
    # positional args, dropping trailing ones still at their default object
    pos_names = [p for p, _ in positional]
    lines.append(f"    args = [{', '.join(pos_names)}]")
    for i in range(len(positional) - 1, -1, -1):  # trailing defaults are left out
        pyname, arg = positional[i]
        if f"_d_{pyname}" not in env:
            break
        lines.append(f"    if len(args) == {i + 1} and args[-1] is _d_{pyname}: args.pop()")
    lines += _tensor_options_lines(sig, env)
    lines.append("    kwargs = {}")
    for pyname, arg in kwonly:
        if arg.has_default_value():
            lines.append(f"    if {pyname} is not _d_{pyname}: kwargs[{arg.name!r}] = {pyname}")
        else:
            lines.append(f"    kwargs[{arg.name!r}] = {pyname}")
    if sig.out_op is not None:
        out_names = [a.name for a in sig.out_op._schema.arguments if a.is_out]
        lines.append("    if out is not None:")
        kept = {a.name for a in sig.out_op._schema.arguments}
        options = [a.name for _, a in kwonly if a.name not in kept]
        if options:     # a factory's dtype=/device=/layout= must agree with out's
            env["_check_out_options"] = _check_out_options
            lines.append(f"        _check_out_options(out, *(kwargs.pop(k, None) for k in {options!r}), "
                         f"names={options!r})")
        if len(out_names) == 1:
            lines.append(f"        kwargs[{out_names[0]!r}] = out")
        else:
            lines.append(f"        kwargs.update(zip({out_names!r}, out))")
        lines.append("        return out_op, args, kwargs")
    lines.append("    return op, args, kwargs")
    source = "\n".join(lines)
    exec(startup_cache.compile_cached(source, f"<parser {sig.op.__name__}>"), env)
    parser = env["parse"]
    parser.source = source
    visible = [arg for _, arg in positional if not (sig.method and arg.name == "self")]
    if len(visible) == 1 and visible[0].type.is_list and visible[0].type.base in ("int", "SymInt"):
        # the list is the last of ``positional``, which counts a method's self
        parser = _with_varargs_list(parser, len(positional) - 1, source)
    return parser


def _check_out_options(out, *values, names):
    """PyTorch's check_out_type_matches: TensorOptions given with out= must be out's."""
    given = dict(zip(names, values))
    dtype, device, layout = given.get("dtype"), given.get("device"), given.get("layout")
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {dtype._short} does not match dtype of out parameter "
                           f"({out.dtype._short})")
    if layout is not None and layout != out.layout:
        raise RuntimeError(f"layout {layout} does not match layout of out parameter "
                           f"({out.layout})")
    if device is not None and Device(device).type != out.device.type:
        raise RuntimeError(f"device type {Device(device).type} does not match device type of "
                           f"out parameter ({out.device.type})")


def _with_varargs_list(parser, position, source):
    """``x.view(2, 3)`` / ``torch.zeros(2, 3)``: PyTorch's parser takes an int list
    that is a signature's only positional parameter as separate ints (only then:
    ``x.any(1)`` binds any.dim, not ``any.dims(int[]? dim)``)."""
    def parse(*args, **kwargs):
        if len(args) > position + 1 or (len(args) == position + 1 and
                                         (isinstance(args[position], INT) or
                                          _is_symint(args[position])) and
                                         not isinstance(args[position], bool)):
            if all(isinstance(a, INT) or (isinstance(a, Tensor) and not a._shape) or
                   _is_symint(a) for a in args[position:]):
                args = args[:position] + (tuple(args[position:]),)
        return parser(*args, **kwargs)
    parse.source = source
    return parse


def parser_source(sig_or_op) -> str:
    return getattr(sig_or_op, "source", "")


def invalid_arguments_message(name, signatures, args, kwargs) -> str:
    """PyTorch's message when no signature fits: the arguments' type names (a
    method's self left out, a sequence by its type alone) and the signatures."""
    if signatures and signatures[0].method:
        args = args[1:]
    got = ", ".join([_type_name(a) for a in args] +
                    [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    expected = "\n".join(f" * {sig.describe()}" for sig in signatures)
    return (f"{name}() received an invalid combination of arguments - got ({got}), "
            f"but expected one of:\n{expected}\n")


def plausible(sig, args, kwargs) -> bool:
    """Could the call have meant this signature?  PyTorch's test: the number of
    arguments given lies between the signature's required and total counts; an
    error for the one plausible signature names the wrong argument.  PyTorch folds
    out= overloads into the functional signature, so one that needs ``out`` is
    plausible only when out= is given."""
    params = _visible_params(sig)
    if "out" not in kwargs and any(a.is_out for _, a in params):
        return False
    given = len(args) - sig.method + len(kwargs)
    required = sum(not (a.has_default_value() or a.type.optional) for _, a in params)
    return required <= given <= len(params) + (sig.out_op is not None)


def _visible_params(sig):
    return [(p, a) for p, a, _ in sig.params() if not (sig.method and a.name == "self")]


def single_signature_message(name, sig, args, kwargs, signatures=None) -> str:
    """PyTorch's wording when one signature is meant and one argument is wrong (the
    position is named for positional arguments only); else the list of ``signatures``."""
    params = _visible_params(sig)
    given = args[1:] if sig.method else args
    first = params[0][1].type if params else None
    if first is not None and first.is_list and first.base in ("int", "SymInt") and given and \
            all(isinstance(a, INT) and not isinstance(a, bool) for a in given):
        given = (tuple(given),)                   # torch.zeros(2, 3): the sizes as varargs
    bound = dict(zip([p for p, _ in params], given))
    bound.update(kwargs)
    for position, (pyname, arg) in enumerate(params, start=1):
        if pyname not in bound:
            continue
        value = bound[pyname]
        try:
            if value is not None or not arg.type.optional:
                _converter_for(arg.type, name in NUMBERS_AS_TENSORS and position > 1,
                               position - 1)(value)
        except _NoMatch:
            where = f" (position {position})" if position <= len(given) else ""
            return (f"{name}(): argument '{pyname}'{where} must be "
                    f"{python_type_name(arg.type)}, not {type(value).__name__}")
        except UnpackError as e:        # (a list's bad element, named as the parser does)
            return str(e)
    return invalid_arguments_message(name, signatures or [sig], args, kwargs)


def _type_name(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _describe_value(v) -> str:
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, (list, tuple)):
        return f"{type(v).__name__} of [{', '.join(_describe_value(x) for x in v)}]"
    return type(v).__name__


def resolve_overload(overloads, args, kwargs, qualified_name):
    """``torch.ops.aten.add(x, y)``: the first overload whose schema accepts the call."""
    for op in overloads:
        parser = getattr(op, "_packet_parser", None)
        if parser is None:
            parser = op._packet_parser = make_parser(PythonSignature(op, method=True))
        try:
            parser(*args, **kwargs)
        except (_NoMatch, TypeError):
            continue
        return op
    got = ", ".join([_describe_value(a) for a in args] +
                    [f"{k}={_describe_value(v)}" for k, v in kwargs.items()])
    schemas = "\n".join(f"  {op._schema}" for op in overloads)
    raise RuntimeError("Overloaded torch operator invoked from Python failed to match any "
                       f"schema:\n{qualified_name.replace('.', '::', 1)}() got ({got}); "
                       f"the schemas are:\n{schemas}")
