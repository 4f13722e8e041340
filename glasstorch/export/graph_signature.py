"""``torch.export.graph_signature``: what each placeholder and output of an
exported graph stands for.

An exported graph is a pure function: parameters, buffers and tensor constants
come in as placeholders next to the user's inputs, and buffer updates (after
``run_decompositions``) go out next to the user's outputs.  The signature
says which is which::

    # inputs
    p_fc_weight: PARAMETER target='fc.weight'
    b_running_mean: BUFFER target='running_mean' persistent=True
    x: USER_INPUT

    # outputs
    add_1: BUFFER_MUTATION target='running_mean'
    relu: USER_OUTPUT
"""
from __future__ import annotations

import dataclasses
from enum import Enum, auto

__all__ = ["ConstantArgument", "CustomObjArgument", "ExportGraphSignature", "InputKind",
           "InputSpec", "OutputKind", "OutputSpec", "SymIntArgument", "TensorArgument"]


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class SymIntArgument:
    name: str


@dataclasses.dataclass
class CustomObjArgument:
    name: str
    class_fqn: str


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: object


class InputKind(Enum):
    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()
    CUSTOM_OBJ = auto()
    TOKEN = auto()


class OutputKind(Enum):
    USER_OUTPUT = auto()
    LOSS_OUTPUT = auto()
    BUFFER_MUTATION = auto()
    PARAMETER_MUTATION = auto()
    GRADIENT_TO_PARAMETER = auto()
    GRADIENT_TO_USER_INPUT = auto()
    USER_INPUT_MUTATION = auto()
    TOKEN = auto()


def _name_or_value(arg):
    return arg.value if isinstance(arg, ConstantArgument) else arg.name


def _describe(kind, arg, target, persistent=None) -> str:
    text = f"{arg.name}: {kind.name}"
    if target is not None:
        text += f" target={target!r}"
    if persistent is not None:
        text += f" persistent={persistent}"
    return text


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: object
    target: str | None
    persistent: bool | None = None

    def __str__(self):
        return _describe(self.kind, self.arg, self.target, self.persistent)


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: object
    target: str | None

    def __str__(self):
        return _describe(self.kind, self.arg, self.target)


@dataclasses.dataclass
class ExportGraphSignature:
    """The input and output specs, in placeholder and output order."""

    input_specs: list
    output_specs: list

    def _inputs(self, kind):
        return tuple(s for s in self.input_specs if s.kind == kind)

    @property
    def parameters(self):
        return tuple(s.target for s in self._inputs(InputKind.PARAMETER))

    @property
    def buffers(self):
        return tuple(s.target for s in self._inputs(InputKind.BUFFER))

    @property
    def non_persistent_buffers(self):
        return tuple(s.target for s in self._inputs(InputKind.BUFFER) if not s.persistent)

    @property
    def lifted_tensor_constants(self):
        return tuple(s.target for s in self._inputs(InputKind.CONSTANT_TENSOR))

    @property
    def user_inputs(self):
        """Names of the user's inputs (a constant one as its value)."""
        return tuple(_name_or_value(s.arg) for s in self._inputs(InputKind.USER_INPUT))

    @property
    def user_outputs(self):
        return tuple(_name_or_value(s.arg) for s in self.output_specs
                     if s.kind in (OutputKind.USER_OUTPUT, OutputKind.LOSS_OUTPUT))

    @property
    def inputs_to_parameters(self):
        return {s.arg.name: s.target for s in self._inputs(InputKind.PARAMETER)}

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self._inputs(InputKind.BUFFER)}

    @property
    def inputs_to_lifted_tensor_constants(self):
        return {s.arg.name: s.target for s in self._inputs(InputKind.CONSTANT_TENSOR)}

    @property
    def buffers_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind == OutputKind.BUFFER_MUTATION}

    @property
    def user_inputs_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind == OutputKind.USER_INPUT_MUTATION}

    def __str__(self):
        inputs = "\n".join(str(s) for s in self.input_specs)
        outputs = "\n".join(str(s) for s in self.output_specs)
        return f"\n# inputs\n{inputs}\n\n# outputs\n{outputs}\n"
