"""``torch._dynamo.output_graph``: the FX graph one traced frame builds.

Tensors reach it as graph inputs (``graph_input``: a placeholder named after
the value's source, a FakeTensor as its example, a TENSOR_MATCH guard), and
every tensor operation the bytecode performs becomes one node (``call``): the
operation runs on the FakeTensors to learn its result's metadata, so nothing
is computed.  ``compile`` hands the finished GraphModule to the backend.
"""
from __future__ import annotations

import dis
import functools
import operator
import re

import glasstorch

from ..fx import Graph, GraphModule
from ..fx.graph import format_stack_line
from ..nn import Module
from .._subclasses.fake_tensor import FakeTensorMode
from ..fx.experimental.sym_node import SymBool, SymFloat, SymInt, Symbol
from ..fx.experimental.symbolic_shapes import ShapeEnv
from .exc import BackendCompilerFailed, Unsupported
from .guards import GuardSet
from .source import TensorPropertySource
from .variables import (BaseListVariable, NamedTupleVariable, SliceVariable, SymNodeVariable,
                        TensorVariable, TupleVariable, VariableTracker, wrap_constant)


class OutputGraph:
    def __init__(self, dynamic_dims=None, code=None):
        self.graph = Graph()
        self.shape_env = ShapeEnv()
        self.fake_mode = FakeTensorMode(allow_non_fake_inputs=False, shape_env=self.shape_env,
                                        static_shapes=False)
        self.inputs: dict = {}          # source name -> (TensorVariable, source)
        self.placeholder_source: dict = {}     # placeholder node -> its source
        self.symbol_nodes: dict = {}    # a dynamic size's Symbol -> its placeholder
        # (source, tensor) -> the dims to make symbolic (None: all static); (source, int)
        # -> whether that int input is symbolic
        self.dynamic_dims = dynamic_dims or (lambda source, value: None)
        self.guards = GuardSet(where=functools.partial(_traced_frame, code))
        self.guards.global_state()
        self.submodules: dict = {}      # name -> GraphModule (a cond's branches)
        self.side_effects = SideEffects()

    def graph_input(self, value, source, static: bool = False) -> TensorVariable:
        """A tensor read from ``source`` (once per source).  Its placeholder is made
        when an operation first uses it (``realize``), so the graph's inputs come in
        the order the program uses them, as Dynamo's lazy trackers order them.
        ``static``: a module's parameter or buffer, whose sizes stay fixed
        (``config.force_nn_module_property_static_shapes``)."""
        key = source.name()
        if key in self.inputs:
            return self.inputs[key][0]
        for var, _ in self.inputs.values():      # one tensor read two ways (tied weights)
            if var.real_id == id(value):
                self.guards.duplicate(key, var.source.name())
                return var
        dims = self.dynamic_dims(source, value) if not static else set()
        fake = self.fake_mode.from_tensor(value, source=key, symbolic_context=frozenset(dims)) \
            if dims else self.fake_mode.from_tensor(value, static_shapes=True)
        var = TensorVariable(None, fake, source)
        var.real_id = id(value)
        var.real_type = type(value)
        self.inputs[key] = (var, source)
        self.guards.tensor(source, value, fake)
        return var

    def int_input(self, value: int, source):
        """A Python int argument traced as a symbol (``dynamic=True``, or after it
        changed under automatic dynamic), or None: it is a guarded constant."""
        if not self.dynamic_dims(source, value):
            return None
        symint = self.shape_env.create_symintnode(
            self.shape_env.create_symbol(value, source.name(), positive=None), hint=value)
        if not isinstance(symint, SymInt):
            return None                          # 0 and 1 are specialized
        self.guards.add(source.name(), "TYPE_MATCH",
                        [f"___check_type_id({source.name()}, {id(int)})"])
        var = SymNodeVariable(None, symint)
        var.source = source
        return var

    def realize_sym(self, var: SymNodeVariable):
        if var.node is None:
            var.node = self._placeholder(var.source.placeholder_name(), SymInt, var.example,
                                         var.source)
        return var.node

    def realize(self, var: TensorVariable):
        """The placeholder of a graph input, made on first use; a dynamic size's
        symbol gets its own placeholder first (``s77 : torch.SymInt``)."""
        if var.node is None:
            for dim, size in enumerate(var.example.shape):
                if isinstance(size, SymInt) and isinstance(size.node.expr, Symbol) and \
                        size.node.expr not in self.symbol_nodes:
                    node = self._placeholder(str(size.node.expr), SymInt, size,
                                             TensorPropertySource(var.source, dim))
                    self.symbol_nodes[size.node.expr] = node
            annotation = glasstorch.nn.Parameter if issubclass(var.real_type,
                                                               glasstorch.nn.Parameter) \
                else glasstorch.Tensor
            var.node = self._placeholder(var.source.placeholder_name(), annotation, var.example,
                                         var.source)
        return var.node

    def _placeholder(self, name, annotation, example, source):
        last = None
        for node in self.graph.nodes:
            if node.op != "placeholder":
                break
            last = node
        with self.graph.inserting_after(last) if last is not None else \
                self.graph.inserting_before(next(iter(self.graph.nodes), None)):
            node = self.graph.placeholder(name, type_expr=annotation)
        node.meta["example_value"] = example
        self.placeholder_source[node] = source
        return node

    def tensor_input_sources(self) -> list:
        """The graph's tensor inputs a caller passes (not a module's parameters or
        buffers), by source name, in placeholder order."""
        return [source.name() for node, source in self.placeholder_source.items()
                if isinstance(node.meta.get("example_value"), glasstorch.Tensor)
                and not re.search(r"\._(parameters|buffers)\[", source.name())]

    def size_var(self, tensor: TensorVariable, dim: int, value) -> VariableTracker:
        """A size read off a tensor: a constant, a dynamic input size's symbol, or
        ``sym_size.int`` of an intermediate's symbolic size."""
        if not isinstance(value, SymInt):
            return wrap_constant(value)
        if tensor.node is None:
            self.realize(tensor)
        node = self.symbol_nodes.get(value.node.expr)
        if node is None:
            node = self.graph.call_function(glasstorch.ops.aten.sym_size.int,
                                            (tensor.node, dim))
            node.meta["example_value"] = value
        return SymNodeVariable(node, value)

    def call(self, kind: str, target, args, kwargs: dict) -> VariableTracker:
        """Record ``target(*args, **kwargs)`` (a method name for call_method) and
        run it on the example FakeTensors."""
        node_args = tuple(self._to_arg(a) for a in args)
        node_kwargs = {k: self._to_arg(v) for k, v in kwargs.items()}
        fake_args = tuple(_to_example(a) for a in args)
        fake_kwargs = {k: _to_example(v) for k, v in kwargs.items()}
        try:
            with self.fake_mode:
                if kind == "call_method":
                    example = getattr(fake_args[0], target)(*fake_args[1:], **fake_kwargs)
                else:
                    example = target(*fake_args, **fake_kwargs)
        except Unsupported:
            raise
        except Exception as e:
            raise TracedOpError(e) from e
        node = self.graph.create_node(kind, target, node_args, node_kwargs)
        node.meta["stack_trace"] = _stack_trace()
        return self._wrap_result(node, example)

    def _wrap_result(self, node, example) -> VariableTracker:
        if isinstance(example, (SymInt, SymBool, SymFloat)):
            node.meta["example_value"] = example
            return SymNodeVariable(node, example)
        if isinstance(example, glasstorch.Tensor):
            node.meta["example_value"] = example
            return TensorVariable(node, example)
        if isinstance(example, (tuple, list)) and all(isinstance(e, glasstorch.Tensor)
                                                      for e in example):
            node.meta["example_value"] = example
            items = []
            for i, e in enumerate(example):
                item = self.graph.call_function(operator.getitem, (node, i))
                item.meta["example_value"] = e
                item.meta["stack_trace"] = node.meta.get("stack_trace")
                items.append(TensorVariable(item, e))
            if hasattr(type(example), "_fields"):     # torch.return_types: fields by name
                return NamedTupleVariable(items, type(example))
            return TupleVariable(items)
        if example is None and node.is_impure():     # a write (x[0] = v): the node stays
            node.meta["example_value"] = None
            return wrap_constant(None)
        self.graph.erase_node(node)
        if example is None or isinstance(example, (bool, int, float, glasstorch.Size)):
            return wrap_constant(example)
        raise Unsupported(f"an operation returning {type(example).__name__}")

    def _to_arg(self, value):
        """A tracker as a node argument: its node, or the constant it holds."""
        if isinstance(value, TensorVariable):
            return self.realize(value)
        if isinstance(value, SymNodeVariable):
            return self.realize_sym(value)
        if isinstance(value, BaseListVariable):
            return value.kind(self._to_arg(v) for v in value.items)
        if isinstance(value, SliceVariable):
            return slice(*(self._to_arg(p) for p in value.parts))
        return value.as_python_constant()

    # -- the end of a graph ---------------------------------------------------------------

    def op_count(self) -> int:
        return sum(n.op in ("call_function", "call_method") for n in self.graph.nodes)

    def compile(self, outputs: list, backend, code_name: str):
        """Finish the graph returning ``outputs`` (TensorVariables) and compile it:
        (compiled callable, the GraphModule, the graph inputs' sources)."""
        nodes = []
        for var in outputs:
            if var.node not in nodes:
                nodes.append(var.node)
        self.graph.output(tuple(nodes))
        self.graph.eliminate_dead_code()
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        sources = self.sources_of(placeholders)
        root = Module()
        for name, sub in self.submodules.items():
            root.add_module(name, sub)
        gm = GraphModule(root, self.graph)
        gm._dynamo_code_name = code_name
        examples = [n.meta["example_value"] for n in placeholders]
        try:
            compiled = backend(gm, examples)
        except Exception as e:           # the backend's failure, reported as PyTorch's
            raise BackendCompilerFailed(backend, e) from e
        return compiled, gm, sources, placeholders, nodes


    def sources_of(self, placeholders) -> list:
        return [self.placeholder_source[n] for n in placeholders]


class SideEffects:
    """Writes the traced code makes on objects that outlive the frame: attribute
    writes (``self.steps += 1``) and changes to argument lists and dicts
    (``outs.append(y)``, ``cache[k] = v``).  Reads later in the trace see them
    (the trackers change); the compiled frame makes them right after its graph
    runs: each attribute gets its last value and each changed container its final
    contents, in the order they were first written (PyTorch's SideEffects)."""

    def __init__(self):
        self.targets: list = []         # ("attr", obj, name) | ("container", tracker)
        self._latest: dict = {}         # (id(object), attribute) -> tracker

    def store(self, obj, name: str, value: VariableTracker, kind: str = "attr") -> None:
        """``obj.name = value`` (``obj`` a module's globals dict: ``global name``);
        ``kind="buffer"``: a module's buffer given a new tensor, a write into its
        ``_buffers`` dict (the module's own attributes are unchanged)."""
        if (id(obj), name) not in self._latest:
            self.targets.append((kind, obj, name))
        self._latest[(id(obj), name)] = value

    def changed(self, container: VariableTracker) -> None:
        """An argument's list or dict (a tracker with a source) was changed."""
        if not any(t[0] == "container" and t[1] is container for t in self.targets):
            self.targets.append(("container", container))

    def read(self, obj, name: str):
        return self._latest.get((id(obj), name))

    def mutated(self, obj) -> bool:
        return any(t[0] == "attr" and t[1] is obj for t in self.targets)

    def values(self) -> list:
        """Every tracker the writes need, in order (their tensors are graph outputs)."""
        out = []
        for target in self.targets:
            if target[0] != "container":
                out.append(self._latest[(id(target[1]), target[2])])
            else:
                items = target[1].items
                out += list(items.values()) if isinstance(items, dict) else list(items)
        return out

    def apply(self, values: dict) -> None:
        for target in self.targets:
            if target[0] != "container":
                kind, obj, name = target
                value = self._latest[(id(obj), name)].as_python(values)
                if kind == "buffer":
                    obj._buffers[name] = value
                elif type(obj) is dict:        # a global
                    obj[name] = value
                else:
                    setattr(obj, name, value)
                continue
            tracker = target[1]
            container = tracker.source.get(values["L"], values["G"])
            if isinstance(container, dict):
                container.clear()
                container.update({k: v.as_python(values) for k, v in tracker.items.items()})
            else:
                container[:] = [v.as_python(values) for v in tracker.items]


class SubgraphOutput(OutputGraph):
    """The graph of one branch of a ``cond``: its operands are its placeholders;
    it shares the frame's fake mode, shape env and guards."""

    def __init__(self, parent: OutputGraph, operands: list):
        self.graph = Graph()
        self.shape_env, self.fake_mode, self.guards = parent.shape_env, parent.fake_mode, \
            parent.guards
        self.inputs, self.placeholder_source, self.symbol_nodes = {}, {}, {}
        self.dynamic_dims, self.submodules = parent.dynamic_dims, {}
        self.side_effects = parent.side_effects
        # the branch's inputs in the order of their outer names, as PyTorch lifts
        # them (``(l_w_, l_x_)``); ``operands`` stay in the branch's argument order
        outer = [parent.realize(var) for var in operands]
        self.order = sorted(set(outer), key=lambda node: node.name)
        inner = {}
        for node in self.order:
            self.graph._namespace.create_name(node.name)    # the input is ``l_x__1``
            inner[node] = self.graph.placeholder(node.name)
            inner[node].meta["example_value"] = node.meta.get("example_value")
        self.operands = [TensorVariable(inner[node], var.example)
                         for node, var in zip(outer, operands)]

    def graph_input(self, value, source, static: bool = False):
        raise Unsupported("torch.cond branch reads a tensor from outside its operands")

    def realize(self, var):
        if var.node is None or var.node.graph is not self.graph:
            raise Unsupported("torch.cond branch closes over a tensor; pass it in operands")
        return var.node


class TracedOpError(Unsupported):
    """A tensor operation failed on its example values (the eager run raises it)."""

    def __init__(self, error: Exception):
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error




def _traced_frame(code, source_name: str) -> tuple | None:
    """(file, line, function) where the traced program reads ``source_name``:
    the line being traced, or, for an argument guarded as the frame starts,
    the line of its first read (where PyTorch's lazy trackers guard it)."""
    from .symbolic_convert import _TX_STACK
    if _TX_STACK:
        tx = _TX_STACK[-1]
        return tx.code.co_filename, tx.lineno, tx.code.co_name
    local = re.match(r"L\['(\w+)'\]", source_name)
    if code is None or local is None:
        return None
    line = next((i.positions.lineno for i in dis.get_instructions(code)
                 if i.opname.startswith("LOAD_FAST") and i.argval == local.group(1)), None)
    if line is None or line < code.co_firstlineno:   # a resume function's own prologue
        return None
    return code.co_filename, line, code.co_name


def _stack_trace() -> str | None:
    """Where the traced program is: the innermost frame's file, line, function and
    source line, as a node's ``stack_trace`` (print_readable shows it)."""
    from .symbolic_convert import _TX_STACK
    if not _TX_STACK:
        return None
    tx = _TX_STACK[-1]
    return format_stack_line(tx.code.co_filename, tx.lineno, tx.code.co_name)


def _to_example(value):
    """A tracker as an argument of the example run: its FakeTensor, or its constant."""
    if isinstance(value, (TensorVariable, SymNodeVariable)):
        return value.example
    if isinstance(value, BaseListVariable):
        return value.kind(_to_example(v) for v in value.items)
    if isinstance(value, SliceVariable):
        return slice(*(_to_example(p) for p in value.parts))
    return value.as_python_constant()
