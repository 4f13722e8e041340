"""Schema and argument helpers for the torch.library layer (torch/_library/utils.py,
plus the argument boxing PyTorch's C++ does before a Python kernel runs).

PyTorch's dispatcher hands a Python kernel its arguments *normalized*: every
positional parameter positional (even if the caller named it), keyword-only
ones as keywords, and trailing arguments equal to their defaults dropped
(``f(x, 2)`` with ``a: int = 2`` reaches the kernel as ``f(x)``).
``normalize_arguments`` does the same, so custom-op kernels see what they
would see in PyTorch, and bad calls get PyTorch's messages.
"""
from __future__ import annotations

import numbers
import sys

from .._core.device import device as Device
from .._core.dtype import dtype as DType
from .._tensor import Tensor

__all__ = ["RegistrationHandle", "get_source", "parse_namespace", "lookup_op", "is_builtin",
           "dispatch_key_for_device", "normalize_arguments", "fill_defaults", "is_view_schema",
           "is_functional_schema", "has_kwarg_only_args", "has_kwarg_only_tensors",
           "has_tensor_arg", "has_tensorlist_arg", "get_device_arg_index", "mutated_args_kwargs",
           "iter_tensors", "any_requires_grad", "check_aliasing_constraint",
           "can_generate_trivial_fake_impl"]


class RegistrationHandle:
    """Undoes one registration made outside the dispatch table (a fake impl, a rule)."""

    def __init__(self, on_destroy):
        self._on_destroy = on_destroy

    def destroy(self) -> None:
        self._on_destroy()


def get_source(stacklevel: int) -> str:
    """``file:line`` of the caller ``stacklevel`` frames up (for error messages)."""
    frame = sys._getframe(stacklevel)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def parse_namespace(qualname: str) -> tuple[str, str]:
    splits = qualname.split("::")
    if len(splits) != 2:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got '
                         f"{qualname}. The qualname passed to the torch.library APIs must consist "
                         f"of a namespace and a name, e.g. aten::sin")
    return splits[0], splits[1]


def lookup_op(qualname: str):
    """``"ns::name"`` or ``"ns::name.overload"`` -> ``torch.ops.ns.name.overload``."""
    from .._dispatcher.dispatcher import ops
    namespace, name = parse_namespace(qualname)
    base, _, overload = name.partition(".")
    return getattr(getattr(getattr(ops, namespace), base), overload or "default")


def is_builtin(op) -> bool:
    return op.namespace in ("aten", "prim", "prims")


_KEY_FOR_DEVICE = {"cpu": "CPU", "cuda": "CUDA", "hip": "HIP", "xla": "XLA", "mps": "MPS",
                   "ipu": "IPU", "xpu": "XPU", "hpu": "HPU", "ve": "VE", "lazy": "Lazy",
                   "mtia": "MTIA", "maia": "MAIA", "privateuseone": "PrivateUse1",
                   "meta": "Meta"}


def dispatch_key_for_device(device_type: str) -> str:
    """``torch._C._dispatch_key_for_device``: "cpu" -> "CPU"."""
    return _KEY_FOR_DEVICE[Device(device_type).type]


# -- argument boxing ------------------------------------------------------------------

def _cast_error(op_name, schema, arg, position, value) -> RuntimeError:
    if arg.type.base == "Tensor" and not arg.type.is_list:
        details = f"Unable to cast {value} to Tensor"
    else:
        details = (f"Unable to cast Python instance of type {type(value)} to C++ type '?' "
                   "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for "
                   "details)")
    return RuntimeError(f"{op_name}() Expected a value of type '{arg.type.python_str()}' for "
                        f"argument '{arg.name}' but instead found type '{type(value).__name__}'."
                        f"\nPosition: {position}\nValue: {value!r}\nDeclaration: {schema}\n"
                        f"Cast error details: {details}")


def _convert_scalar(base, value):
    """One non-list value converted as an IValue of type ``base``, or raise TypeError."""
    if base == "Tensor":
        if value is None or isinstance(value, Tensor):
            return value
    elif base in ("int", "SymInt"):
        if isinstance(value, numbers.Integral):
            return int(value)
    elif base == "float":
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
    elif base == "bool":
        if isinstance(value, bool):
            return value
    elif base == "str":
        if isinstance(value, str):
            return value
    elif base == "ScalarType":
        if isinstance(value, DType):
            return value
    elif base == "Device":
        if isinstance(value, (Device, str)):
            return Device(value)
    else:
        return value    # Scalar and the rest: passed on as given
    raise TypeError


def _convert(t, value):
    if value is None and t.optional:
        return None
    if t.is_list:
        if not isinstance(value, (list, tuple)):
            raise TypeError
        return [_convert(t.elem, v) for v in value]
    return _convert_scalar(t.base, value)


def normalize_arguments(op, args, kwargs) -> tuple[tuple, dict]:
    """(args, kwargs) as PyTorch's dispatcher passes them to a Python kernel:
    bound to the schema, converted, and with trailing defaults dropped."""
    schema, name = op._schema, op._name
    params = schema.arguments
    positional = [a for a in params if not a.kwarg_only]
    if len(args) + len(kwargs) > len(params):
        raise RuntimeError(f"{name}() expected at most {len(params)} argument(s) but received "
                           f"{len(args) + len(kwargs)} argument(s). Declaration: {schema}")
    if len(args) > len(positional):
        raise RuntimeError(f"{name}() takes {len(positional)} positional argument(s) but "
                           f"{len(args)} was/were given.  Declaration: {schema}")
    kwargs = dict(kwargs)
    values = []
    for position, arg in enumerate(params):
        if position < len(args) and not arg.kwarg_only:
            value = args[position]
        elif arg.name in kwargs:
            value = kwargs.pop(arg.name)
        elif arg.has_default_value():
            value = arg.default_value
        else:
            raise RuntimeError(f"{name}() is missing value for argument '{arg.name}'. "
                               f"Declaration: {schema}")
        try:
            values.append(_convert(arg.type, value))
        except TypeError:
            raise _cast_error(name, schema, arg, position, value) from None
    if kwargs:
        raise RuntimeError(f"Unknown keyword argument '{next(iter(kwargs))}' for operator "
                           f"'{name}'. Schema: {schema}")
    out_args = values[:len(positional)]
    while out_args and _is_default(positional[len(out_args) - 1], out_args[-1]):
        out_args.pop()
    out_kwargs = {a.name: v for a, v in zip(params[len(positional):], values[len(positional):])
                  if not _is_default(a, v)}
    return tuple(out_args), out_kwargs


def _is_default(arg, value) -> bool:
    if not arg.has_default_value():
        return False
    default = arg.default_value
    if default is None or isinstance(value, Tensor):
        return value is default
    if isinstance(value, DType):
        return value.scalar_type == default
    return type(value) is not bool and value == default or value is default


def fill_defaults(schema, args, kwargs) -> tuple[tuple, dict]:
    """Put back the arguments the dispatcher dropped for being at their defaults."""
    new_args, new_kwargs = [], {}
    for i, arg in enumerate(schema.arguments):
        if arg.kwarg_only:
            new_kwargs[arg.name] = kwargs[arg.name] if arg.name in kwargs else \
                _python_default(arg)
        else:
            new_args.append(args[i] if i < len(args) else _python_default(arg))
    return tuple(new_args), new_kwargs


def _python_default(arg):
    """The default as PyTorch's ``Argument.default_value`` hands it to Python (a
    ScalarType stays its number; a Device becomes a device)."""
    value = arg.default_value
    if arg.type.base == "Device" and isinstance(value, str):
        return Device(value)
    return value


# -- schema questions -------------------------------------------------------------------

def is_view_schema(schema) -> bool:
    """Some return aliases an input without writing it (``Tensor(a)``)."""
    return any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def is_functional_schema(schema, *, allow_valid_view: bool = False) -> bool:
    """Writes no input, returns something, and (unless a one-tensor-in,
    one-tensor-out view is allowed) returns no view."""
    if schema.is_mutable:
        return False
    if is_view_schema(schema):
        tensor_inputs = sum(a.type.is_tensor for a in schema.arguments)
        tensor_outputs = sum(r.type.is_tensor for r in schema.returns)
        return allow_valid_view and tensor_inputs == 1 and tensor_outputs == 1
    return bool(schema.returns)


def has_kwarg_only_args(schema) -> bool:
    return any(a.kwarg_only for a in schema.arguments)


def has_kwarg_only_tensors(schema) -> bool:
    return any(a.kwarg_only and a.type.is_tensor_like for a in schema.arguments)


def has_tensor_arg(schema) -> bool:
    return any(a.type.is_tensor_like for a in schema.arguments)


def has_tensorlist_arg(schema) -> bool:
    """Does an argument or a return hold a list of tensors?"""
    return any(t.is_list and t.is_tensor_like
               for t in [a.type for a in schema.arguments] + [r.type for r in schema.returns])


def get_device_arg_index(schema):
    """Position of a ``Device device`` parameter, or None."""
    for index, arg in enumerate(schema.arguments):
        if arg.type.base == "Device" and not arg.type.optional and not arg.type.is_list \
                and arg.name == "device":
            return index
    return None


def mutated_args_kwargs(schema) -> tuple[list[int], list[str]]:
    """Positions of mutated positional arguments, names of mutated keyword-only ones."""
    idxs, keys = [], []
    for i, arg in enumerate(schema.arguments):
        if arg.is_write:
            (keys.append(arg.name) if arg.kwarg_only else idxs.append(i))
    return idxs, keys


def iter_tensors(args, kwargs, allowed_nesting: int = 1):
    """Tensors among the arguments, looking one level into lists and tuples."""
    for arg in list(args) + list(kwargs.values()):
        if isinstance(arg, Tensor):
            yield arg
        elif allowed_nesting > 0 and isinstance(arg, (tuple, list)):
            yield from iter_tensors(tuple(arg), {}, allowed_nesting - 1)


def any_requires_grad(args) -> bool:
    return any(t.requires_grad for t in iter_tensors(args, {}))


def check_aliasing_constraint(name, args, kwargs, result, get_module=lambda: "???") -> None:
    """A custom op's outputs may neither be, nor share memory with, an input or
    another output."""
    storages = {id(t.untyped_storage()) for t in iter_tensors(args, kwargs)}
    for tensor in iter_tensors(result if isinstance(result, tuple) else (result,), {}):
        key = id(tensor.untyped_storage())
        if key in storages:
            raise RuntimeError(
                f"{name} (with implementation in {get_module()}): The output of this custom "
                f"operator (1) must not also be an input to this custom operator and (2) may not "
                f"alias any inputs to this custom operator or other returns. The most common way "
                f"to trigger this error is if we have y = custom_op(x) and y and x are the same "
                f"Tensor. Please instead return a clone of the offending output tensor(s) (e.g. "
                f"return x.clone()) or refactor the custom operator to not return y.")
        storages.add(key)


def can_generate_trivial_fake_impl(op) -> bool:
    """A mutating op that returns nothing needs no fake impl: its fake result is None."""
    return not is_builtin(op) and op._schema.is_mutable and not op._schema.returns
