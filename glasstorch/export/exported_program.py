"""``torch.export.ExportedProgram``: an exported graph with its signature, its
state and its symbols' ranges.

``module()`` turns it back into a callable Module ("unlifting"): the lifted
state becomes attributes again (``fc_weight = self.fc.weight``), a
``_guards_fn`` checks the inputs against what export assumed (static sizes,
shared Dims), and the inputs and outputs take the user's structure.
``run_decompositions()`` retraces the graph below autograd: composite ops
split into core ATen, in-place ops made functional, and the buffers they
wrote returned first as BUFFER_MUTATION outputs.
"""
from __future__ import annotations

import copy
import inspect

from .._tensor import Tensor
from ..fx.graph import Graph, _PyTreeCodeGen
from ..fx.graph_module import GraphModule
from ..fx.interpreter import Interpreter
from ..fx.traceback import preserve_node_meta
from ..nn.modules.module import Module
from ..utils import _pytree as pytree
from .graph_signature import (ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
                              TensorArgument)

__all__ = ["ExportedProgram"]


class ExportedProgram:
    """What ``torch.export.export`` returns."""

    def __init__(self, graph_module: GraphModule, graph_signature: ExportGraphSignature,
                 state_dict: dict, range_constraints: dict, *, constants: dict,
                 example_inputs, in_spec, out_spec, root: Module):
        self._graph_module = graph_module
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._range_constraints = range_constraints
        self._constants = constants
        self._example_inputs = example_inputs
        self._in_spec, self._out_spec = in_spec, out_spec
        self._root = root

    graph_module = property(lambda self: self._graph_module)
    graph = property(lambda self: self._graph_module.graph)
    graph_signature = property(lambda self: self._graph_signature)
    state_dict = property(lambda self: self._state_dict)
    range_constraints = property(lambda self: self._range_constraints)
    constants = property(lambda self: self._constants)
    example_inputs = property(lambda self: self._example_inputs)

    @property
    def call_spec(self):
        from types import SimpleNamespace
        return SimpleNamespace(in_spec=self._in_spec, out_spec=self._out_spec)

    def parameters(self):
        for _, param in self.named_parameters():
            yield param

    def named_parameters(self):
        for target in self._graph_signature.parameters:
            yield target, self._state_dict[target]

    def buffers(self):
        for _, buffer in self.named_buffers():
            yield buffer

    def named_buffers(self):
        for spec in self._graph_signature.input_specs:
            if spec.kind is InputKind.BUFFER:
                yield spec.target, (self._state_dict if spec.persistent else
                                    self._constants)[spec.target]

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def __str__(self):
        code = self._graph_module.print_readable(print_output=False).replace("\n", "\n    ")
        signature = str(self._graph_signature).replace("\n", "\n    ")
        return (f"ExportedProgram:\n    {code}\nGraph signature: {signature}\n"
                f"Range constraints: {self._range_constraints}\n")

    # -- back to a Module -------------------------------------------------------------

    def module(self) -> GraphModule:
        """A GraphModule taking the user's inputs, its state as attributes."""
        signature, old = self._graph_signature, self._graph_module.graph
        graph, env = Graph(), {}
        placeholders = [n for n in old.nodes if n.op == "placeholder"]
        user = [node for node, spec in zip(placeholders, signature.input_specs)
                if spec.kind is InputKind.USER_INPUT]
        for node in user:
            env[node] = graph.node_copy(node)
        for node, spec in zip(placeholders, signature.input_specs):
            if spec.kind is not InputKind.USER_INPUT:
                env[node] = graph.get_attr(spec.target)
                env[node].meta = dict(node.meta)
        graph.call_module("_guards_fn", tuple(env[node] for node in user))
        outputs = graph.graph_copy(old, env)
        graph.output(tuple(value for value, spec in zip(outputs, signature.output_specs)
                           if spec.kind is OutputKind.USER_OUTPUT))
        args, kwargs = self._example_inputs
        names = list(inspect.signature(self._root.forward).parameters)[:len(args)]
        graph._codegen = _PyTreeCodeGen(names + list(kwargs), self._in_spec, self._out_spec,
                                        kwarg_names=tuple(kwargs))
        own = {n.target: getattr(self._graph_module, n.target) for n in old.nodes
               if n.op == "get_attr"}           # the program's own subgraphs (a cond's)
        unlifted = GraphModule(_WithGuards(self._root, _InputGuards(
            [node.name for node in user], self._guards(user)), own), graph)
        unlifted._in_spec, unlifted._out_spec = self._in_spec, self._out_spec
        return unlifted

    def _guards(self, user_nodes) -> list:
        """(placeholder name, dim, expected) per guarded size: an int for a static
        size, another input's (name, dim) for a Dim it shares."""
        checks, first_source = [], {}
        for node in user_nodes:
            value = node.meta.get("val")
            if not isinstance(value, Tensor):
                continue
            for i, size in enumerate(value.shape):
                if type(size) is int:
                    checks.append((node.name, i, size))
                    continue
                symbol = size.node.expr
                if symbol in first_source:
                    checks.append((node.name, i, first_source[symbol]))
                else:
                    first_source[symbol] = (node.name, i)
        return checks

    # -- lowering -----------------------------------------------------------------------

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops: bool = False):
        """This program in core ATen, functional: CompositeImplicitAutograd ops
        split, ``decomp_table`` (default: ``core_aten_decompositions()``) applied,
        in-place writes to buffers returned as BUFFER_MUTATION outputs."""
        from .._decomp import core_aten_decompositions
        from .._functorch.aot_autograd import _Metadata, _trace
        table = core_aten_decompositions() if decomp_table is None else decomp_table
        signature, gm = self._graph_signature, self._graph_module
        flat = [self._value_of(spec) for spec in signature.input_specs]
        user_outputs = [i for i, s in enumerate(signature.output_specs)
                        if s.kind is OutputKind.USER_OUTPUT]

        def program(*inputs):
            outs = Interpreter(gm).run(*inputs)
            return [outs[i] for i in user_outputs]
        meta = _Metadata(program, flat)

        def functional(*inputs):
            outs = program(*inputs)
            return tuple([inputs[i] for i in meta.mutated] + list(outs))
        with preserve_node_meta():
            traced = _trace(functional, flat, table)
        names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        for node, name in zip([n for n in traced.graph.nodes if n.op == "placeholder"], names):
            node.target = name
            node._rename(name)
        traced.graph.eliminate_dead_code()
        traced = GraphModule(traced, traced.graph)
        results = next(n for n in traced.graph.nodes if n.op == "output").args[0]
        output_specs = [OutputSpec(_mutation_kind(signature.input_specs[i]),
                                   TensorArgument(node.name), signature.input_specs[i].target)
                        for i, node in zip(meta.mutated, results)]
        user_specs = [signature.output_specs[i] for i in user_outputs]
        for spec, node in zip(user_specs, results[len(meta.mutated):]):
            spec = copy.copy(spec)
            if isinstance(spec.arg, TensorArgument):
                spec.arg = TensorArgument(node.name)
            output_specs.append(spec)
        input_specs = [InputSpec(s.kind, copy.copy(s.arg), s.target, s.persistent)
                       for s in signature.input_specs]
        for spec, name in zip(input_specs, names):
            spec.arg.name = name
        return ExportedProgram(traced, ExportGraphSignature(input_specs, output_specs),
                               self._state_dict, self._range_constraints,
                               constants=self._constants, example_inputs=self._example_inputs,
                               in_spec=self._in_spec, out_spec=self._out_spec, root=self._root)

    def _value_of(self, spec: InputSpec):
        """The example value of one input: its state tensor, or the user's."""
        if spec.kind is InputKind.USER_INPUT:
            args, kwargs = self._example_inputs
            leaves = pytree.tree_leaves((args, kwargs))
            users = [s for s in self._graph_signature.input_specs
                     if s.kind is InputKind.USER_INPUT]
            return leaves[users.index(spec)]
        return self._state_dict.get(spec.target, self._constants.get(spec.target))


def _mutation_kind(spec: InputSpec) -> OutputKind:
    return {InputKind.BUFFER: OutputKind.BUFFER_MUTATION,
            InputKind.PARAMETER: OutputKind.PARAMETER_MUTATION}.get(
                spec.kind, OutputKind.USER_INPUT_MUTATION)


class _WithGuards(Module):
    """The exported module's attributes plus ``_guards_fn``: the root an
    unlifted module copies its ``get_attr`` and ``call_module`` targets from."""

    def __init__(self, root: Module, guards: Module, own: dict):
        super().__init__()
        for name, value in own.items():
            setattr(self, name, value)
        self._modules.update(root._modules)
        self._parameters.update(root._parameters)
        self._buffers.update(root._buffers)
        for name, value in vars(root).items():
            if isinstance(value, Tensor):
                self.__dict__[name] = value
        self._guards_fn = guards


class _InputGuards(Module):
    """``self._guards_fn(x, y)``: the sizes export assumed, checked on each call
    (PyTorch raises ``AssertionError: Guard failed: x.size()[1] == 4``)."""

    def __init__(self, names: list, checks: list):
        super().__init__()
        self.names, self.checks = names, checks

    def forward(self, *inputs):
        values = dict(zip(self.names, inputs))
        for name, i, expected in self.checks:
            if isinstance(expected, tuple):
                other, j = expected
                if values[name].shape[i] != values[other].shape[j]:
                    raise AssertionError(f"Guard failed: {name}.size()[{i}] == "
                                         f"{other}.size()[{j}]")
            elif values[name].shape[i] != expected:
                raise AssertionError(f"Guard failed: {name}.size()[{i}] == {expected}")
