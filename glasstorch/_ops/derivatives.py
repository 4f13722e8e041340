"""Loader for ``derivatives.yaml`` (PyTorch's tools/autograd/load_derivatives.py).

Each entry becomes a ``Derivative``: the forward op it belongs to, one compiled
formula per input (or group of inputs), and the backward node's name.  The
loader validates what it can without running anything: the op is declared, the
schema matches the declaration, formula keys are argument names, and every
formula is a well-formed Python expression.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .._core import startup_cache
from .._dispatcher.dispatcher import dispatcher
from .._dispatcher.schema import parse_schema

PATH = os.path.join(os.path.dirname(__file__), "derivatives.yaml")
_RESERVED = {"name", "output_differentiability", "dispatch", "node"}
# forward formulas that are not expressions: load_derivatives.py's names, and
# ``jvp_decomposition`` for the ops PyTorch differentiates forward through a
# decomposition (torch/_decomp/decompositions_for_jvp.py)
FORWARD_KEYWORDS = ("auto_element_wise", "auto_linear", "not_implemented", "jvp_decomposition")


@dataclass
class Derivative:
    """The gradient rule of one forward overload."""

    op_name: str                      # "aten::add.Tensor"
    node_name: str                    # "AddBackward0"
    formulas: dict = field(default_factory=dict)   # ("self",) -> code object
    sources: dict = field(default_factory=dict)    # ("self",) -> formula text
    output_differentiability: list | None = None
    non_differentiable: set = field(default_factory=set)   # inputs that get no gradient
    # forward-mode AD: output position -> code object, or a FORWARD_KEYWORDS name
    forward: dict = field(default_factory=dict)
    line: int = 0                     # where the entry is in derivatives.yaml


def _camel(base: str) -> str:
    """``native_layer_norm`` -> ``NativeLayerNorm``; a letter after a digit is
    capitalised too (``log1p`` -> ``Log1P``, ``avg_pool2d`` -> ``AvgPool2D``) and a
    ``_forward`` suffix is dropped (``nll_loss_forward`` -> ``NllLoss``), as
    PyTorch's codegen does."""
    name = "".join(part.title() for part in base.strip("_").split("_"))
    return name[:-len("Forward")] if name.endswith("Forward") else name  # nll_loss_forward


def _output_position(key, schema, arg_names):
    """A forward formula's key names an output: ``result`` (the only or first
    one), ``result<i>``, or a named return (``values``)."""
    if key in arg_names:
        return None
    if key == "result":
        return 0
    if key.startswith("result") and key[6:].isdigit():
        return int(key[6:])
    names = [r.name for r in schema.returns]
    return names.index(key) if key in names else None


def _forward_formula(text, op_name, info, key):
    if text in FORWARD_KEYWORDS:
        return text
    try:
        return startup_cache.compile_cached(text, f"<{info.node_name}.{key}>", "eval")
    except SyntaxError as e:
        raise RuntimeError(f"derivatives.yaml: bad forward formula for {op_name} {key}: {e}") \
            from None


def load(path: str = PATH) -> dict[str, Derivative]:
    """Read and validate every entry; returns them by qualified op name."""
    with open(path) as f:
        text = f.read()
    entries = startup_cache.cached_yaml("derivatives.yaml", text) or []
    by_op: dict[str, Derivative] = {}
    index_of_base: dict[str, int] = {}
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("- name:")]
    for entry, line in zip(entries, lines):
        schema = parse_schema("aten::" + entry["name"])
        op_name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
        declared = dispatcher.find(op_name)
        if declared is None:
            raise RuntimeError(f"derivatives.yaml: {op_name} is not declared in native_functions.yaml")
        if str(declared.schema) != str(schema):
            raise RuntimeError(f"derivatives.yaml: schema of {op_name} differs from its "
                               f"declaration:\n  {schema}\n  {declared.schema}")
        base = schema.name.split("::")[1].rstrip("_")
        index = index_of_base.get(base, 0)
        index_of_base[base] = index + 1
        # ``node:`` overrides the name where PyTorch's numbering counts overloads
        # that glasstorch does not declare
        info = Derivative(op_name, entry.get("node") or f"{_camel(base)}Backward{index}",
                          output_differentiability=entry.get("output_differentiability"),
                          line=line)
        arg_names = {a.name for a in schema.arguments}
        for key, text in entry.items():
            if key in _RESERVED:
                continue
            output = _output_position(key, schema, arg_names)
            if output is not None:
                info.forward[output] = _forward_formula(str(text).strip(), op_name, info, key)
                continue
            inputs = tuple(k.strip() for k in key.split(","))
            unknown = [k for k in inputs if k not in arg_names]
            if unknown:
                raise RuntimeError(f"derivatives.yaml: {op_name} has no argument(s) {unknown}")
            if str(text).strip() == "non_differentiable":
                info.non_differentiable.update(inputs)
                continue
            try:
                info.formulas[inputs] = startup_cache.compile_cached(
                    str(text), f"<{info.node_name}.{key}>", "eval")
            except SyntaxError as e:
                raise RuntimeError(f"derivatives.yaml: bad formula for {op_name} {key}: {e}") from None
            info.sources[inputs] = str(text)
        if op_name in by_op:
            raise RuntimeError(f"derivatives.yaml: {op_name} has two entries")
        by_op[op_name] = info
    return by_op
