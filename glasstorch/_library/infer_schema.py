"""Schema inference from type hints (torch/_library/infer_schema.py).

    def f(x: Tensor, ys: list[Tensor], n: int, eps: float = 1e-5) -> tuple[Tensor, Tensor]
    -> "(Tensor x, Tensor[] ys, SymInt n, float eps=1e-05) -> (Tensor, Tensor)"

Each annotation maps to a schema type through a table (``int`` is ``SymInt``,
``Optional[T]`` is ``T?``, ``list[T]``/``Sequence[T]`` is ``T[]``); arguments
named in ``mutates_args`` become ``Tensor(a<i>!)``, ``i`` being the parameter's
position.  Defaults are written with ``str()`` (the schema parser normalizes
them: ``1.0`` prints back as ``1.``).
"""
from __future__ import annotations

import collections.abc
import inspect
import typing
from types import GenericAlias

from .._core.device import device
from .._core.dtype import dtype
from .._tensor import Tensor

__all__ = ["infer_schema"]

# torch.types.Number
Number = int | float | bool

UNKNOWN_MUTATES = "unknown"


def infer_schema(prototype_function, /, *, mutates_args, op_name: str | None = None) -> str:
    """The schema string of ``prototype_function``, from its type hints:
    ``"(Tensor x) -> Tensor"``, or ``"foo(Tensor x) -> Tensor"`` with ``op_name``.
    ``mutates_args`` names the mutated Tensor arguments, or is ``"unknown"``
    (every Tensor argument is then assumed mutated)."""
    sig = inspect.signature(prototype_function)
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(annotation):
        """Annotations written as strings are evaluated in the function's globals."""
        if isinstance(annotation, str):
            try:
                return eval(annotation, prototype_function.__globals__)
            except NameError as e:
                error_fn(f"Unsupported type annotation {annotation}. It is not a type. ({e}). "
                         f"If you are using 'from __future__ import annotations', note that "
                         f"annotations are evaluated lazily as strings; make sure all types "
                         f"referenced in annotations are importable at module scope, not only "
                         f"inside a local function.")
            except Exception as e:  # noqa: BLE001 - any failure means "not a type"
                error_fn(f"Unsupported type annotation {annotation}. It is not a type. "
                         f"({type(e).__name__}: {e})")
        origin = typing.get_origin(annotation)
        if origin is not None and any(isinstance(a, str) for a in typing.get_args(annotation)):
            return GenericAlias(origin, tuple(resolve(a) for a in typing.get_args(annotation)))
        return annotation

    params = []
    seen_args = set()
    saw_kwarg_only = False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not saw_kwarg_only:
            params.append("*")
            saw_kwarg_only = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        annotation = resolve(param.annotation)
        schema_type = SUPPORTED_PARAM_TYPES.get(annotation)
        if schema_type is None:
            _unsupported_param(name, param.annotation, annotation, error_fn)

        if type(mutates_args) is str:
            if mutates_args != UNKNOWN_MUTATES:
                raise ValueError("mutates_args must either be a sequence of the names of the "
                                 "arguments that are mutated or the string 'unknown'. ")
            if schema_type.startswith("Tensor"):
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        elif name in mutates_args:
            if not schema_type.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections "
                         f"of Tensors can be mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        seen_args.add(name)

        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
        else:
            params.append(f"{schema_type} {name}={_default_repr(name, param.default, error_fn)}")

    if mutates_args != UNKNOWN_MUTATES:
        not_seen = set(mutates_args) - seen_args
        if not_seen:
            error_fn(f"{not_seen} in mutates_args were not found in the custom op's signature. "
                     f"mutates_args should contain the names of all args that the custom op "
                     f"mutates, or just the string 'unknown' if you don't know.")
    ret = _parse_return(resolve(sig.return_annotation), error_fn)
    if op_name is not None:
        return f"{op_name}({', '.join(params)}) -> {ret}"
    return f"({', '.join(params)}) -> {ret}"


def _unsupported_param(name, written, annotation, error_fn):
    valid = f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}."
    if typing.get_origin(annotation) is tuple:
        as_list = _tuple_to_list(annotation)
        example = f"For example, {as_list}.\n\n" if as_list in SUPPORTED_PARAM_TYPES else "\n\n"
        error_fn(f"Parameter {name} has unsupported type {written}. We do not support Tuple "
                 f"inputs in schema. As a workaround, please try to use List instead. "
                 f"{example}{valid}")
    error_fn(f"Parameter {name} has unsupported type {written}. {valid}")


def _tuple_to_list(tuple_type):
    """``tuple[int, int]`` -> ``list[int]`` (the suggestion in the error message)."""
    args = typing.get_args(tuple_type)
    if not args:
        return list
    if len(args) == 1 or (len(args) == 2 and args[1] is Ellipsis):
        return list[args[0]]
    return list[typing.Union[args]]


def _default_repr(name, default, error_fn) -> str:
    if default is None or isinstance(default, (int, float, bool)):
        return str(default)
    if isinstance(default, (str, device)):
        return f'"{default}"'
    if isinstance(default, dtype):
        return str(default)[len("torch."):]
    error_fn(f"Parameter {name} has an unsupported default value type {type(default)}. "
             f"Please file an issue on GitHub so we can prioritize this.")


def _derived_types(base_type, schema_type, list_base, optional_base_list, optional_list_base):
    """``T``, ``Optional[T]`` and, where the schema type allows, the sequence forms."""
    def sequences(t):
        return (typing.Sequence[t], typing.List[t],  # noqa: UP006
                GenericAlias(collections.abc.Sequence, (t,)), GenericAlias(list, (t,)))

    result = [(base_type, schema_type), (typing.Optional[base_type], f"{schema_type}?")]
    if list_base:
        result += [(seq, f"{schema_type}[]") for seq in sequences(base_type)]
    if optional_base_list:
        result += [(seq, f"{schema_type}?[]") for seq in sequences(typing.Optional[base_type])]
    if optional_list_base:
        result += [(typing.Optional[seq], f"{schema_type}[]?") for seq in sequences(base_type)]
    return result


def _supported_param_types() -> dict:
    table = [
        # python type, schema type, T[], T?[], T[]?
        (Tensor, "Tensor", True, True, False),
        (int, "SymInt", True, False, True),
        (float, "float", True, False, True),
        (bool, "bool", True, False, True),
        (str, "str", False, False, False),
        (Number, "Scalar", True, False, False),
        (dtype, "ScalarType", False, False, False),
        (device, "Device", False, False, False),
    ]
    result = {}
    for row in table:
        result.update(_derived_types(*row))
    return result


SUPPORTED_PARAM_TYPES = _supported_param_types()

SUPPORTED_RETURN_TYPES = {
    Tensor: "Tensor",
    typing.List[Tensor]: "Tensor[]",  # noqa: UP006
    list[Tensor]: "Tensor[]",
    int: "SymInt",
    float: "float",
    bool: "bool",
    Number: "Scalar",
}


def _parse_return(annotation, error_fn) -> str:
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    unsupported = (f"Return has unsupported type {annotation}. The valid types are: "
                   f"{SUPPORTED_RETURN_TYPES}.")
    if typing.get_origin(annotation) is not tuple:
        if annotation not in SUPPORTED_RETURN_TYPES:
            error_fn(unsupported)
        return SUPPORTED_RETURN_TYPES[annotation]
    args = typing.get_args(annotation)
    if any(arg not in SUPPORTED_RETURN_TYPES for arg in args):
        error_fn(unsupported)
    output = ", ".join(SUPPORTED_RETURN_TYPES[arg] for arg in args)
    if len(args) == 1:      # a one-element tuple prints as ((T))
        output = f"({output})"
    return f"({output})"
