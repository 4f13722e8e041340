"""``torch._inductor.graph.GraphLowering``: an FX graph walked node by node
into loop IR and buffers.

Each placeholder becomes an ``InputBuffer``, each call the IR its lowering
returns (``lowering.lowerings``, or the op's ATen kernel as an extern call).
A Pointwise stays unrealized, to be inlined into whatever reads it, unless
it is read by many nodes and costly to recompute, read by an extern call, or
is a graph output; then it becomes a ``ComputedBuffer``.  The buffers, in
order, are what the scheduler fuses into kernels.
"""
from __future__ import annotations

import operator

from .._core import dtype as dt
from ..fx.experimental.sym_node import Poly, SymInt, Symbol
from . import config, ir
from .ir import V, ComputedBuffer, InputBuffer, Layout, Pointwise, Reduction


class _Counter:
    """An ops handler that only counts the calls an inner function makes."""

    def __init__(self):
        self.ops, self.reads = 0, 0

    def __getattr__(self, name):
        def op(*args, **kwargs):
            self.ops += 1
            if name == "load":
                self.reads += 1
            return _Value(args[1] if name == "to_dtype" else dt.float32)
        return op


class _Value:
    """What the counting handler's calls return."""

    def __init__(self, dtype):
        self.dtype = dtype


class GraphLowering:
    def __init__(self, gm, example_inputs=None, name: str = "graph"):
        self.gm, self.name = gm, name
        self.buffers = []            # ComputedBuffer / ExternKernel / MultiOutput, in order
        self.inputs = {}             # placeholder name -> InputBuffer
        self.gm_placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        self.constants = {}          # get_attr name -> tensor
        self.name_to_buffer = {}
        self.outputs = []            # the graph's outputs as IR (or Python values)
        self.pending_mutations = []  # (input, buffer of its new value)
        self.current_node = None
        self.current_args = ((), {})
        self.lowered = []            # (fx node, what it lowered to) for the glass box
        self._realized = {}          # id(value) -> (value, its buffer): realized once
        self._count = 0
        # symbol -> where the wrapper reads it: an int input, or an input's size or
        # stride (Note [Symbolic sizes])
        self.size_sources = {}
        self._solved = set()         # the symbols read as (size - b) // a so far

    # -- buffers ----------------------------------------------------------------------

    def new_name(self) -> str:
        name = f"buf{self._count}"
        self._count += 1
        return name

    def register(self, buffer):
        self.buffers.append(buffer)
        self.name_to_buffer[buffer.name] = buffer
        buffer.origin_node = self.current_node
        return buffer

    def buffer_dtype(self, name: str):
        return self.name_to_buffer[name].dtype

    def realize(self, value, layout=None):
        """``value`` stored into a new buffer (a buffer stays as it is)."""
        if isinstance(value, (ir.Buffer, ir.ReinterpretView)):
            return value
        if id(value) in self._realized:
            return self._realized[id(value)][1]
        data = value
        if isinstance(value, ir.View):
            data = Pointwise(value.dtype, value.size, value.make_loader())
        if layout is None:
            layout = Layout(value.dtype, value.size)
        buffer = self.register(ComputedBuffer(self.new_name(), layout, data))
        self._realized[id(value)] = (value, buffer)
        return buffer

    def store_into(self, target, value):
        """A mutation of an input (functionalize's ``copy_`` at the end of a
        graph): ``value`` is computed into a buffer now; the write into the
        input's memory is placed once the graph is lowered (``_place_mutations``)."""
        self.pending_mutations.append((target, self.realize(value)))

    def _place_mutations(self):
        """Each input's write goes right after the buffer holding its new value,
        where the scheduler fuses it into that buffer's kernel (the value then
        never reaches memory but in place), unless a later buffer still reads
        the input's old value: then at the end."""
        from .scheduler import reads_of
        for target, source in self.pending_mutations:
            name = target.storage().name
            node = ComputedBuffer(self.new_name(), target.layout, Pointwise(
                source.dtype, source.size, source.make_loader()))
            node.target = name
            node.origin_node = getattr(source, "origin_node", None)
            self.name_to_buffer[node.name] = node
            at = self.buffers.index(source) + 1 if source in self.buffers else len(self.buffers)
            for later in self.buffers[at:]:
                reads = [n for n, _ in reads_of(later)] if isinstance(later, ComputedBuffer) \
                    else [b.name for b in getattr(later, "inputs", list)()]
                if name in reads:
                    at = len(self.buffers)
                    break
            self.buffers.insert(at, node)

    # -- the walk ---------------------------------------------------------------------------

    def run(self):
        from . import lowering
        previous, V.graph = V.graph, self
        try:
            env = {}
            for node in self.gm.graph.nodes:
                self.current_node = node
                if node.op == "placeholder":
                    env[node] = self._placeholder(node)
                elif node.op == "get_attr":
                    env[node] = self._constant(node)
                elif node.op == "call_function":
                    env[node] = self._call(node, env, lowering)
                elif node.op == "output":
                    self.outputs = [self._output(v) for v in _map(node.args[0], env)]
            self._place_mutations()
        finally:
            V.graph = previous
        return self

    def _placeholder(self, node):
        val = node.meta.get("val")
        if not hasattr(val, "stride"):
            self._bind_size(val, node.name)
            return val
        for kind, values in (("size", val.shape), ("stride", val.stride())):
            for d, n in enumerate(values):
                self._bind_size(n, f"{node.name}.{kind}({d})")
        layout = Layout(val.dtype, tuple(val.shape), tuple(val.stride()), 0)
        buf = InputBuffer(node.name, layout)
        self.inputs[node.name] = buf
        self.name_to_buffer[node.name] = buf
        return buf

    def _bind_size(self, value, source: str) -> None:
        """A size symbol is read from the first input that holds it alone, or
        else solved from one holding ``a*s + b`` (a backward graph may see
        ``s0 + 3`` only: a padded input's gradient)."""
        if not ir.is_symbolic(value):
            return
        expr = value.node.expr
        if type(expr) is Symbol:
            if expr.name not in self.size_sources or expr.name in self._solved:
                self.size_sources[expr.name] = source      # (a plain read beats a solved one)
                self._solved.discard(expr.name)
            return
        linear = _linear_in_one_symbol(expr)
        if linear is not None and linear[0].name not in self.size_sources:
            symbol, a, b = linear
            solved = f"{source} - {b}" if b > 0 else f"{source} + {-b}" if b else source
            self.size_sources[symbol.name] = solved if a == 1 else f"({solved}) // {a}"
            self._solved.add(symbol.name)

    def _constant(self, node):
        value = getattr(self.gm, node.target)
        if not hasattr(value, "stride"):
            return value
        name = node.target.replace(".", "_")
        self.constants[name] = value
        buf = InputBuffer(name, Layout(value.dtype, tuple(value.shape), tuple(value.stride())))
        self.name_to_buffer[name] = buf
        return buf

    def _call(self, node, env, lowering):
        if node.target is operator.getitem:
            container, i = _map(node.args, env)
            return self._maybe_realize(node, container[i])
        val = node.meta.get("val")
        if isinstance(val, (int, SymInt)):     # size arithmetic (sym_size, s0 * 2): its
            return val                         # value, an int or a symbolic size
        args, kwargs = _map(node.args, env), _map(node.kwargs, env)
        self.current_args = (args, kwargs)
        fn = lowering.lowerings.get(node.target)
        if fn is None:
            result = lowering.fallback(node.target, args, kwargs, node.meta.get("val"))
        else:
            result = fn(*args, **kwargs)
        result = self._maybe_realize(node, result)
        self.lowered.append((node, result))
        return result

    def _maybe_realize(self, node, result):
        """Realize a Pointwise that many readers would recompute (Inductor's
        ``realize_reads_threshold`` / ``realize_opcount_threshold``)."""
        users = _readers(node)
        if not isinstance(result, (Pointwise, ir.View)) or len(users) <= 1:
            return result
        if any(_feeds_extern(user) for user in users):   # stored for that call anyway:
            if isinstance(result, ir.View):              # the others read it too
                from .lowering import realize_input
                return realize_input(result)
            return self.realize(result, _meta_layout(node, result))
        if isinstance(result, ir.View):
            return result
        counter = _Counter()
        previous, V.ops = V.ops, counter
        try:
            result.inner_fn([ir.Index()] * len(result.size))
        finally:
            V.ops = previous
        if counter.reads > config.realize_reads_threshold or \
                counter.ops > config.realize_opcount_threshold:
            return self.realize(result, _meta_layout(node, result))
        return result

    def _output(self, value):
        if isinstance(value, (Pointwise, Reduction, ir.View)):
            node = self._output_node(value)
            self.current_node = node or self.current_node    # the buffer's origin
            return self.realize(value, _meta_layout(node, value))
        return value

    def _output_node(self, value):
        for node, result in reversed(self.lowered):
            if result is value:
                return node
        return None


_VIEWS = {"view", "_unsafe_view", "reshape", "permute", "t", "transpose", "expand",
          "unsqueeze", "squeeze", "alias", "detach"}


_SAME_VALUE = {"to", "_to_copy", "clone", "alias", "detach"}


def _name(node) -> str:
    return getattr(node.target, "__name__", "").split(".")[0] \
        if node.op == "call_function" else ""


def graph_symbols(gm) -> set:
    """The names of the size symbols in an FX graph's values."""
    found = set()
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        for v in val if isinstance(val, (list, tuple)) else [val]:
            if hasattr(v, "stride"):
                found |= ir.size_symbols(list(v.shape) + list(v.stride()))
            elif ir.is_symbolic(v):
                found |= ir.size_symbols(v)
    return found


def _linear_in_one_symbol(expr):
    """``(s, a, b)`` when ``expr`` is ``a*s + b``, integers ``a > 0`` and ``b``."""
    if type(expr) is not Poly:
        return None
    symbol, a, b = None, 0, 0
    for monomial, coeff in expr.terms.items():
        if not monomial:
            b = coeff
        elif len(monomial) == 1 and type(monomial[0][0]) is Symbol and monomial[0][1] == 1 \
                and symbol is None:
            symbol, a = monomial[0][0], coeff
        else:
            return None
    return (symbol, a, b) if symbol is not None and a > 0 else None


def _readers(node) -> list:
    """The nodes that read ``node``'s value, looking through the ops whose
    lowering passes the value on unchanged (``to`` the same dtype, clone)."""
    readers = []
    for user in node.users:
        same = _name(user) in _SAME_VALUE and \
            getattr(user.meta.get("val"), "dtype", None) is getattr(node.meta.get("val"),
                                                                    "dtype", False)
        readers += _readers(user) if same else [user]
    return readers


def _feeds_extern(user) -> bool:
    """Whether ``user`` is an extern call (an op without a lowering) or a view
    on the way to one."""
    from .lowering import lowerings
    if user.op != "call_function":
        return False
    if user.target not in lowerings:
        return True
    return _name(user) in _VIEWS and any(_feeds_extern(u) for u in user.users)


def _meta_layout(node, value):
    """The layout eager gives ``node``'s result, when its size is the value's."""
    val = node.meta.get("val") if node is not None else None
    if hasattr(val, "stride") and ir.same_size(tuple(val.shape), tuple(value.size)):
        stride = tuple(val.stride())
        if _dense(value.size, stride):
            return Layout(value.dtype, value.size, stride)
    return None


def _dense(size, stride) -> bool:
    """A permutation of a contiguous layout (what a fresh buffer can have)."""
    dims = sorted(((ir.size_hint(s), s, n) for s, n in zip(stride, size) if not ir.is_one(n)),
                  key=lambda d: d[0])
    step = 1
    for _, s, n in dims:
        if not ir.same_size(s, step):
            return False
        step *= n
    return True


def _map(obj, env):
    from ..fx.node import Node
    if isinstance(obj, Node):
        return env[obj]
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(o, env) for o in obj)
    if isinstance(obj, dict):
        return {k: _map(v, env) for k, v in obj.items()}
    return obj
