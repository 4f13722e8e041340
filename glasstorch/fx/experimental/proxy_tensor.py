"""``torch.fx.experimental.proxy_tensor``: ``make_fx``, a program traced
through the dispatcher into a graph of ATen ops.

Symbolic tracing (``fx.symbolic_trace``) records the Python calls a program
makes; make_fx records what reaches the kernels.  It runs the program for real
(or on FakeTensors) with ``ProxyTorchDispatchMode`` on the Python dispatch
stack.  That mode sees each op below autograd, after composite ops have
decomposed and with autograd's own ops (``detach``, the backward's ``mm``\\ s)
included, and writes one ``call_function`` node per op, targeting its
OpOverload (``torch.ops.aten.addmm.default``).  It tracks which node made each
tensor, so later ops name their inputs; a tensor it never saw made becomes a
constant attribute (``_param_constant0`` for a Parameter, ``_tensor_constant0``
otherwise).  An in-place op re-points its tensor at the new node, so reads after
a mutation name the mutating node, as PyTorch's graphs do.  Every node carries
``meta["val"]`` (a FakeTensor with the result's metadata) and
``meta["tensor_meta"]``.

``tracing_mode="symbolic"`` traces on FakeTensors whose sizes are SymInts from
one ShapeEnv (Note [Symbolic tracing]).

Note [Symbolic tracing]
    Every tracked tensor's symbolic sizes, strides, numel and storage offset get
    a *lazy* proxy: ``sym_size.int(x_1, 0)`` is only written when something uses
    that SymInt.  SymInt arithmetic in the traced program (``x.shape[0] * 2``)
    reaches ``ProxyTorchDispatchMode.__sym_dispatch__``, which gives the result
    a lazy operator node too (``mul = sym_size_int * 2``, written where it is
    first used); arithmetic inside a meta rule runs while the mode is popped,
    so it leaves no trace.  A SymInt is
    found by its SymNode (the first proxy set for it wins), else by its symbol.
    At the end, unused size reads and unused SymInt arithmetic are dropped and
    SymInts computed twice from int inputs are shared (torch's dedupe_symints).
"""
from __future__ import annotations

import contextlib
import inspect
import operator
import os
import sys
import weakref

from ..._dispatcher.dispatcher import ops
from ..._dispatcher.pre_dispatch import pre_dispatch_mode
from ..._ops.tags import Tag
from ..._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from ..._tensor import Tensor
from ...nn.modules.module import Module
from ...nn.parameter import Parameter
from ...utils import _pytree as pytree
from ...utils._python_dispatch import TorchDispatchMode
from ..graph import Graph, _PyTreeCodeGen, format_stack_line
from ..graph_module import GraphModule
from ..passes.shape_prop import _extract_tensor_metadata
from ..traceback import get_current_meta
from .sym_node import SymBool, SymFloat, SymInt, Symbol
from .symbolic_shapes import ShapeEnv, is_accessor_node

__all__ = ["make_fx", "ProxyTorchDispatchMode", "PythonKeyTracer", "get_isolated_graphmodule"]


_LIFT_FRESH, _LIFT_FRESH_COPY = ops.aten.lift_fresh.default, ops.aten.lift_fresh_copy.default
_DATA_DEPENDENT = Tag.data_dependent_output
_SYM_TYPES = (SymInt, SymFloat, SymBool)

class _Thunk:
    """A node made on first use, then remembered (PyTorch's Thunk)."""

    __slots__ = ("_make", "_node")

    def __init__(self, make):
        self._make, self._node = make, None

    def force(self):
        if self._node is None:
            self._node, self._make = self._make(), None
        return self._node


class PythonKeyTracer:
    """The graph being written and what it knows (PyTorch's PythonKeyTracer):
    which node made each live tensor, and the constants stowed on ``root``."""

    def __init__(self):
        self.graph = Graph()
        self.root = Module()
        self.tensor_tracker: dict = {}       # id(tensor) -> (weakref to it, node)
        self._constant_names: dict = {}      # id(constant) -> (constant, attribute name)
        self.fake_mode: FakeTensorMode | None = None
        self.symnode_tracker: dict = {}      # id(SymNode) -> (the SymNode, _Thunk of its node)
        self.symbol_tracker: dict = {}       # Symbol -> _Thunk (the latest set for it)
        # SymInt arithmetic is written when computed (unused nodes are dropped at the
        # end), or, with this set (AOTAutograd's traces), only when used
        self.enable_thunkify = False
        self.record_stack_traces = False     # each node's user frame (export's graphs)
        self.pinned_symbols: set = set()      # symbols whose node no later tensor replaces

    def track(self, t: Tensor, node) -> None:
        self.tensor_tracker[id(t)] = (weakref.ref(t), node)
        node.meta["val"] = self._fake_of(t)
        node.meta["tensor_meta"] = _extract_tensor_metadata(t)
        if self.fake_mode.shape_env is not None:
            self._track_sizes(t, node)

    def _track_sizes(self, t: Tensor, node) -> None:
        """Lazy ``sym_size``/``sym_stride``/``sym_numel``/``sym_storage_offset``
        proxies for ``t``'s symbolic metadata (Note [Symbolic tracing])."""
        accessors = [(s, ops.aten.sym_size.int, (node, i)) for i, s in enumerate(t._shape)]
        accessors += [(s, ops.aten.sym_stride.int, (node, i)) for i, s in enumerate(t._stride)]
        accessors += [(t.numel(), ops.aten.sym_numel.default, (node,)),
                      (t._offset, ops.aten.sym_storage_offset.default, (node,))]
        for value, op, args in accessors:
            if isinstance(value, SymInt):
                self.set_sym_proxy(value, _Thunk(
                    lambda value=value, op=op, args=args: self._sym_node(op, args, value)))

    def _sym_node(self, target, args, value):
        name = f"{target._opname}_{target._overloadname}" if hasattr(target, "_opname") else None
        node = self.graph.create_node("call_function", target, self.to_arg(args), name=name)
        node.meta["val"] = value
        if self.record_stack_traces and name is None:     # arithmetic, not a size read
            node.meta["stack_trace"] = _user_frame()
        return node

    def set_sym_proxy(self, value, thunk: _Thunk) -> None:
        """Remember how to get ``value``'s node, unless it is known already."""
        sym_node = value.node
        if id(sym_node) in self.symnode_tracker:
            return
        self.symnode_tracker[id(sym_node)] = (sym_node, thunk)
        if type(sym_node.expr) is Symbol and sym_node.expr not in self.pinned_symbols:
            self.symbol_tracker[sym_node.expr] = thunk

    def sym_proxy(self, value):
        """The node a SymInt/SymBool comes from."""
        entry = self.symnode_tracker.get(id(value.node))
        thunk = entry[1] if entry is not None and entry[0] is value.node else \
            self.symbol_tracker.get(value.node.expr)
        if thunk is None:
            raise RuntimeError(f"{value} ({type(value).__name__}, {id(value)}) is not tracked "
                               f"with proxy for {self}")
        return thunk.force()

    def _fake_of(self, t: Tensor) -> FakeTensor:
        """A FakeTensor with ``t``'s metadata, a snapshot that later in-place
        changes of ``t`` do not reach (PyTorch's extract_val)."""
        with self.fake_mode:
            return t.new_empty_strided(t.shape, t.stride()) if isinstance(t, FakeTensor) \
                else self.fake_mode.from_tensor(t).new_empty_strided(t.shape, t.stride())

    def node_of(self, t: Tensor):
        """The node ``t`` came from, or a get_attr node for it as a constant."""
        entry = self.tensor_tracker.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        known = self._constant_names.get(id(t))
        if known is None or known[0] is not t:
            prefix = "_param_constant" if isinstance(t, Parameter) else "_tensor_constant"
            i = 0
            while hasattr(self.root, f"{prefix}{i}"):
                i += 1
            known = (t, f"{prefix}{i}")
            self._constant_names[id(t)] = known
            setattr(self.root, known[1], t)
        node = self.graph.get_attr(known[1])
        node.meta["val"] = self._fake_of(t)        # no tensor_meta on constants, as in torch
        return node

    def to_arg(self, value):
        """``value`` with every tensor replaced by its node (lists, tuples, dicts kept)."""
        if isinstance(value, Tensor):
            return self.node_of(value)
        if isinstance(value, _SYM_TYPES):
            return self.sym_proxy(value)
        if isinstance(value, list):
            return [self.to_arg(v) for v in value]
        if isinstance(value, tuple):    # a namedtuple keeps its type; torch.return_types don't
            items = [self.to_arg(v) for v in value]
            return type(value)(*items) if pytree.is_namedtuple_instance(value) else tuple(items)
        if isinstance(value, dict):
            return {k: self.to_arg(v) for k, v in value.items()}
        return value


class ProxyTorchDispatchMode(TorchDispatchMode):
    """Records each op that reaches it into ``tracer``'s graph, then runs it."""

    def __init__(self, tracer: PythonKeyTracer, tracing_mode: str = "real",
                 decomposition_table: dict | None = None):
        super().__init__()
        self.tracer, self.tracing_mode = tracer, tracing_mode
        self.decomposition_table = decomposition_table or {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        decomposition = self.decomposition_table.get(func)
        if decomposition is not None:
            with self:               # the decomposition's own ops are recorded
                result = decomposition(*args, **kwargs)
            if result is not NotImplemented:
                return result
        tracer = self.tracer
        if _DATA_DEPENDENT in func.tags and self.tracing_mode == "real":
            raise RuntimeError(
                f"It appears that you're trying to get value out of a tracing tensor with "
                f"{func} - erroring out! It's likely that this is caused by data-dependent "
                f"control flow or similar.  It may be possible to trace this with dynamic "
                f"shapes; try setting tracing_mode='symbolic' in your make_fx call.")
        target = _LIFT_FRESH_COPY if func is _LIFT_FRESH else func
        node = tracer.graph.create_node("call_function", target, tracer.to_arg(args),
                                        tracer.to_arg(kwargs), name=target._opname)
        if tracer.record_stack_traces:
            node.meta["stack_trace"] = _user_frame()
        elif "stack_trace" in get_current_meta():     # a retraced graph's node
            node.meta["stack_trace"] = get_current_meta()["stack_trace"]
        out = func(*args, **kwargs)
        _track_outputs(tracer, out, node)
        return out

    def __sym_dispatch__(self, op, args, out):
        """SymInt arithmetic in the traced program (``x * 1`` is ``x``): a node now,
        so the size reads it uses are written here too, or on first use when the
        tracer thunkifies, as PyTorch's does."""
        if op is operator.mul:
            for one, other in (args, args[::-1]):
                if type(one) is int and one == 1:
                    return other
        if isinstance(out, _SYM_TYPES):
            tracer = self.tracer
            thunk = _Thunk(lambda: tracer._sym_node(op, args, out))
            if not tracer.enable_thunkify:
                thunk.force()
            tracer.set_sym_proxy(out, thunk)
        return out


_LIBRARY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_MODULES = os.path.join(_LIBRARY, "nn", "modules")


def _user_frame() -> str | None:
    """The innermost frame of the traced program: user code, or an nn module's
    ``forward`` (as PyTorch's export graphs name ``nn/modules/linear.py``)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_LIBRARY) or (filename.startswith(_MODULES) and
                                                 not filename.endswith("module.py")):
            return format_stack_line(filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


def _track_outputs(tracer: PythonKeyTracer, out, node) -> None:
    """Point each output tensor at ``node`` (``node[i]`` getitem nodes for the
    elements of a tuple or list result, made in order for every element, an
    absent gradient's None included, as PyTorch does)."""
    if isinstance(out, Tensor):
        tracer.track(out, node)
    elif isinstance(out, (tuple, list)):
        node.meta["val"] = type(out)(tracer._fake_of(o) if isinstance(o, Tensor) else o
                                     for o in out)
        for i, element in enumerate(out):    # every element gets its getitem, even a None
            item = tracer.graph.call_function(operator.getitem, (node, i))
            if isinstance(element, Tensor):
                tracer.track(element, item)
    else:
        node.meta["val"] = out
        if isinstance(out, _SYM_TYPES):
            tracer.set_sym_proxy(out, _Thunk(lambda: node))


def _names_of(f, args: tuple) -> tuple[list, str]:
    """The parameter names and class name a traced ``f`` gets: its own, or
    ``arg0, arg1, ...`` and ``<lambda>`` where ``f`` has no fixed signature
    (a Module, ``*args``), as PyTorch's fake_signature gives."""
    code = getattr(inspect.unwrap(f), "__code__", None)
    if code is None or code.co_flags & inspect.CO_VARARGS:
        return [f"arg{i}" for i in range(len(args))], "<lambda>"
    names = list(code.co_varnames[:code.co_argcount])
    if inspect.ismethod(f):
        names = names[1:]
    if len(names) != len(args):
        raise RuntimeError(f"Tracing expected {len(names)} arguments but got {len(args)} "
                           f"concrete arguments")
    return names, getattr(f, "__name__", "<lambda>")


class _MakeFxTracer:
    """One make_fx trace: placeholders, the traced run, the output, the module."""

    def __init__(self, tracing_mode: str, decomposition_table, allow_non_fake_inputs: bool,
                 record_stack_traces: bool = False, pre_dispatch: bool = False):
        if tracing_mode not in ("real", "fake", "symbolic"):
            raise AssertionError(f"Unexpected tracing type: {tracing_mode}")
        self.tracing_mode = tracing_mode
        self.decomposition_table = dict(decomposition_table or {})
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.record_stack_traces = record_stack_traces
        self.pre_dispatch = pre_dispatch

    def trace(self, f, *args) -> GraphModule:
        tracer = PythonKeyTracer()
        tracer.record_stack_traces = self.record_stack_traces
        fake_mode = _fake_mode_for(self.tracing_mode, args, self.allow_non_fake_inputs)
        symbolic = fake_mode is not None and fake_mode.shape_env is not None
        tracer.fake_mode = fake_mode or FakeTensorMode(allow_non_fake_inputs=True)
        names, class_name = _names_of(f, args)
        if fake_mode is not None:
            args = _to_fake(fake_mode, args, self.tracing_mode == "symbolic")
        flat_args, in_spec = pytree.tree_flatten(tuple(args))
        nested = not all(child.is_leaf() for child in in_spec.children())
        graph = tracer.graph
        for name, arg in zip(names, args):
            for i, leaf in enumerate(pytree.tree_leaves(arg), 1):
                node = graph.placeholder(f"{name}_{i}")
                if isinstance(leaf, Tensor):
                    tracer.track(leaf, node)
                else:
                    node.meta["val"] = leaf
                    if isinstance(leaf, SymInt):
                        tracer.set_sym_proxy(leaf, _Thunk(lambda node=node: node))
        mode = ProxyTorchDispatchMode(tracer, self.tracing_mode, self.decomposition_table)
        # pre_dispatch: the mode sits at the PreDispatch key, above autograd, so
        # composite ops stay whole (export's graphs); else at the Python key
        recording = pre_dispatch_mode(mode) if self.pre_dispatch else mode
        with fake_mode or contextlib.nullcontext(), recording:
            out = f(*args)
        if nested:
            flat_out, out_spec = pytree.tree_flatten(out)
            graph._codegen = _PyTreeCodeGen(names, in_spec, out_spec)
            graph.output(tracer.to_arg(flat_out))
        else:
            graph.output(tracer.to_arg(out))
        if symbolic:
            _drop_unused_sym_nodes(graph)
            _dedupe_symints(graph)
        return GraphModule(tracer.root, graph, class_name)


def _fake_mode_for(tracing_mode: str, args, allow_non_fake_inputs: bool):
    """The FakeTensorMode a trace runs under: ``fake`` reuses that of inputs
    already fake (Dynamo's, whose sizes may be symbolic: AOTAutograd's graphs
    then keep them so), else a new one; ``symbolic`` a new one with a ShapeEnv."""
    if tracing_mode == "real":
        return None
    if tracing_mode == "fake":
        for leaf in pytree.tree_leaves(args):
            if isinstance(leaf, FakeTensor):
                return leaf.fake_mode
    return FakeTensorMode(allow_non_fake_inputs=allow_non_fake_inputs,
                          shape_env=ShapeEnv() if tracing_mode == "symbolic" else None)


def _to_fake(fake_mode: FakeTensorMode, args, symbolic: bool):
    """make_fx's inputs as fakes.  Symbolic: each tensor's sizes come from the
    source ``input<n>`` (n counts tensors), and an int becomes a SymInt from the
    same source name as the next tensor, as PyTorch names them.  Otherwise a
    real tensor (a parameter beside Dynamo's fakes) keeps its sizes."""
    count = 0
    shape_env = fake_mode.shape_env if symbolic else None

    def convert(a):
        nonlocal count
        source = f"input{count}" if shape_env is not None else None
        if isinstance(a, Tensor) and not isinstance(a, FakeTensor):
            count += 1
            return fake_mode.from_tensor(a, source=source, static_shapes=not symbolic)
        if type(a) is int and shape_env is not None:
            return shape_env.create_symintnode(
                shape_env.create_symbol(a, source, positive=None), hint=a)
        return a
    return pytree.tree_map(convert, args)


def _drop_unused_sym_nodes(graph) -> None:
    """Erase unused size reads and unused SymInt arithmetic (PyTorch's
    dispatch_trace DCE); every other node stays, used or not."""
    def removable(node):
        if is_accessor_node(node):
            return True
        return node.op == "call_function" and isinstance(node.meta.get("val"), _SYM_TYPES) \
            and all(isinstance(a.meta.get("val"), _SYM_TYPES) for a in node.all_input_nodes)
    for node in reversed(list(graph.nodes)):
        if not node.users and removable(node):
            graph.erase_node(node)


def _dedupe_symints(graph) -> None:
    """A SymInt computed twice from SymInt inputs alone uses the first node
    (PyTorch's dedupe_symints, keyed on the expression)."""
    first, from_inputs = {}, set()
    for node in list(graph.nodes):
        val = node.meta.get("val")
        if not isinstance(val, _SYM_TYPES):
            continue
        key = (type(val), val.node.expr)
        if node.op == "placeholder":
            from_inputs.add(node)
            first[key] = node
        elif key in first:
            node.replace_all_uses_with(first[key])
            graph.erase_node(node)
        elif all(n in from_inputs for n in node.all_input_nodes):
            first[key] = node
            from_inputs.add(node)


def make_fx(f, decomposition_table=None, tracing_mode: str = "real",
            _allow_non_fake_inputs: bool = False, *, pre_dispatch: bool = False,
            record_module_stack: bool = False, _allow_fake_constant: bool = False,
            _error_on_data_dependent_ops: bool = True, record_stack_traces: bool = False):
    """``make_fx(f)(*args)``: a GraphModule of the ATen ops ``f`` runs on ``args``
    (``tracing_mode="fake"``: on FakeTensors, allocating nothing).  Ops in
    ``decomposition_table`` are replaced by their decompositions' ops."""
    tracer = _MakeFxTracer(tracing_mode, decomposition_table, _allow_non_fake_inputs,
                           record_stack_traces, pre_dispatch)

    def wrapped(*args):
        return tracer.trace(f, *args)
    return wrapped


def get_isolated_graphmodule(func, args, kwargs, tracing_mode: str = "real",
                             decomposition_table=None) -> GraphModule:
    """A graph of ``func(*args, **kwargs)`` traced on its own, outside any trace
    in progress (PyTorch's helper for nested tracing)."""
    from ...utils._python_dispatch import _disable_current_modes
    with _disable_current_modes():
        return make_fx(lambda a, k: func(*a, **k), decomposition_table, tracing_mode)(args,
                                                                                      kwargs)

