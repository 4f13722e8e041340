"""``torch._dynamo.variables``: what a value is while Dynamo runs bytecode.

The symbolic interpreter (``symbolic_convert.py``) keeps a VariableTracker
where CPython keeps an object.  Each kind knows how Dynamo may use it:

    TensorVariable      a tensor: an FX node plus a FakeTensor example value
    ConstantVariable    a Python constant (int, float, bool, str, None, dtype...)
    ListVariable, TupleVariable, SizeVariable, ConstDictVariable, RangeVariable
    ListIteratorVariable  an iterator over known items (``for`` unrolls)
    UserFunctionVariable  a Python function: inlined (its bytecode runs too)
    NNModuleVariable    an nn.Module: its forward is inlined, its parameters
                        and buffers become graph inputs
    TorchVariable       a function that goes into the graph (torch.*, F.*)
    TensorMethodVariable  ``x.sum`` before it is called
    BuiltinVariable     len, isinstance, range, min, max, ...
    PythonModuleVariable  ``torch``, ``math``, ``torch.nn.functional``
    ObjectVariable      any other object, used as it is (guarded by identity)
    NullVariable        the NULL CPython pushes before a call

``as_python`` gives the object a tracker stands for when the graph's outputs
are known: what a graph break hands back to CPython.
"""
from __future__ import annotations

import operator
import types

from .exc import Unsupported


class VariableTracker:
    source = None

    def python_type(self):
        raise Unsupported(f"python_type of {type(self).__name__}")

    def is_python_constant(self) -> bool:
        return False

    def as_python_constant(self):
        raise Unsupported(f"{type(self).__name__} is not a constant")

    def as_python(self, outputs: dict):
        """The object this tracker stands for, ``outputs`` mapping graph nodes
        to the values the compiled graph returned."""
        raise Unsupported(f"cannot hand a {type(self).__name__} back to Python")

    def var_getattr(self, tx, name: str) -> VariableTracker:
        raise Unsupported(f"attribute {name!r} of {type(self).__name__}")

    def call_function(self, tx, args: list, kwargs: dict) -> VariableTracker:
        raise Unsupported(f"call of {type(self).__name__}")

    def unpack(self) -> list:
        raise Unsupported(f"cannot iterate a {type(self).__name__}")

    def next_item(self):
        raise Unsupported(f"iteration over a {type(self).__name__}")

    def set_name_hint(self, name: str) -> None:
        pass


class NullVariable(VariableTracker):
    def as_python(self, outputs):
        return _NULL


_NULL = object()   # a NULL stack entry, rebuilt as PUSH_NULL by a resume function


class ConstantVariable(VariableTracker):
    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def python_type(self):
        return type(self.value)

    def is_python_constant(self):
        return True

    def as_python_constant(self):
        return self.value

    def as_python(self, outputs):
        return self.value

    def var_getattr(self, tx, name):
        return wrap_constant(getattr(self.value, name))

    def unpack(self):
        return [ConstantVariable(v) for v in self.value]

    def __repr__(self):
        return f"ConstantVariable({self.value!r})"


class TensorVariable(VariableTracker):
    """A tensor in the graph: ``node`` makes it, ``example`` is its FakeTensor."""

    def __init__(self, node, example, source=None):
        self.node, self.example, self.source = node, example, source
        self._named = source is not None

    def python_type(self):
        return type(self.example)

    def as_python(self, outputs):
        if self.node is None:        # an input no operation used: read it again
            return self.source.get(outputs["L"], outputs["G"])
        return outputs[self.node]

    def set_name_hint(self, name):
        """``y = x + 1``: the node takes the local's name, as Dynamo names it."""
        if not self._named:
            self.node._rename(name)
            self._named = True

    def var_getattr(self, tx, name):
        tx.output.realize(self)      # any use of an input makes its placeholder
        example = self.example
        if name in ("shape",):
            return SizeVariable([tx.output.size_var(self, d, s)
                                 for d, s in enumerate(example.shape)])
        if name in ("dtype", "device", "layout", "ndim", "requires_grad", "is_cuda",
                    "is_leaf", "is_sparse", "is_quantized", "is_meta"):
            return wrap_constant(getattr(example, name))
        if name in ("T", "mT", "H", "mH", "real", "imag", "data"):
            return tx.output.call("call_function", getattr, (self, ConstantVariable(name)), {})
        if name == "grad":
            raise Unsupported("Tensor.grad access")
        return TensorMethodVariable(self, name)

    def unpack(self):
        if not self.example.shape:
            raise Unsupported("iteration over a 0-d tensor")
        return [tx_getitem(self, i) for i in range(self.example.shape[0])]


def tx_getitem(tensor: TensorVariable, index):
    from .symbolic_convert import current_tx
    return current_tx().output.call("call_function", operator.getitem,
                                    (tensor, ConstantVariable(index)), {})


class TensorMethodVariable(VariableTracker):
    """``x.view`` waiting for its call: a ``call_method`` node, or a size read."""

    STATIC = {"size", "dim", "ndimension", "numel", "nelement", "stride", "is_contiguous",
              "is_floating_point", "is_complex", "element_size", "get_device"}
    DATA = {"item", "tolist", "numpy", "__bool__", "__int__", "__float__", "data_ptr"}

    def __init__(self, tensor: TensorVariable, name: str):
        self.tensor, self.name = tensor, name

    def call_function(self, tx, args, kwargs):
        name, example = self.name, self.tensor.example
        if name == "backward":   # it runs at the break (a node would be dropped, unused)
            raise Unsupported("Unsupported Tensor.backward() call",
                              "Dynamo currently does not support tracing `Tensor.backward()` "
                              "when trace_autograd_ops is off.",
                              hints=("Set torch._dynamo.trace_autograd_ops=True",),
                              context="call_method TensorVariable() backward None None None "
                                      "None", gb_id="gb0123")
        if name in self.DATA:
            raise item_unsupported(name) if name != "tolist" else Unsupported(
                "Unsupported Tensor.tolist() call",
                "Dynamo does not support tracing `Tensor.tolist()`.")
        if name in self.STATIC and all(a.is_python_constant() for a in args + list(kwargs.values())):
            value = getattr(example, name)(*[a.as_python_constant() for a in args],
                                           **{k: v.as_python_constant() for k, v in kwargs.items()})
            if name == "size" and not args and not kwargs:
                return SizeVariable([tx.output.size_var(self.tensor, d, s)
                                     for d, s in enumerate(value)])
            if name == "size":
                dim = (args[0] if args else kwargs["dim"]).as_python_constant()
                return tx.output.size_var(self.tensor, dim % example.dim(), value)
            if _is_symbolic(value):       # numel(), stride() of a dynamic tensor
                return tx.output.call("call_method", name, (self.tensor, *args), kwargs)
            return wrap_constant(value)
        if not hasattr(example, name):
            raise Unsupported(f"Tensor has no attribute {name!r}")
        return tx.output.call("call_method", name, (self.tensor, *args), kwargs)

    def as_python(self, outputs):
        return getattr(self.tensor.as_python(outputs), self.name)


class SymNodeVariable(VariableTracker):
    """A symbolic size (SymInt, or a SymBool from comparing one) in the graph:
    arithmetic on it makes nodes (``mul = s77 * 2``); using it as a Python value
    specializes it, with a guard, as PyTorch does."""

    def __init__(self, node, example):
        self.node, self.example = node, example

    def python_type(self):
        return {"SymBool": bool, "SymFloat": float}.get(type(self.example).__name__, int)

    def set_name_hint(self, name):
        pass

    def as_python_constant(self):
        return self.python_type()(self.example)

    def as_python(self, outputs):
        if self.node is None and self.source is not None:      # an int input
            return self.source.get(outputs["L"], outputs["G"])
        if self.node in outputs and outputs[self.node] is not None:
            return outputs[self.node]
        raise Unsupported("a symbolic size computed in the graph, live across a break")


class SliceVariable(VariableTracker):
    """A slice with a symbolic bound (``x[:, :T]``, T a size): in the graph its
    bounds stay the size nodes, where a constant slice would specialize them."""

    def __init__(self, parts: list):
        self.parts = parts          # start, stop, step: trackers

    def python_type(self):
        return slice

    def as_python_constant(self):
        return slice(*(p.as_python_constant() for p in self.parts))


def _is_symbolic(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_is_symbolic(v) for v in value)
    return type(value).__name__ in ("SymInt", "SymFloat", "SymBool")


class BaseListVariable(VariableTracker):
    kind = list

    def __init__(self, items: list, source=None):
        self.items, self.source = list(items), source

    def python_type(self):
        return self.kind

    def is_python_constant(self):
        return all(i.is_python_constant() for i in self.items)

    def as_python_constant(self):
        return self.kind(i.as_python_constant() for i in self.items)

    def as_python(self, outputs):
        return self.kind(i.as_python(outputs) for i in self.items)

    def unpack(self):
        return list(self.items)

    def getitem(self, index):
        if isinstance(index, slice):
            return type(self)(self.items[index])
        return self.items[index]

    def var_getattr(self, tx, name):
        return BoundMethodVariable(self, name)


class ListVariable(BaseListVariable):
    kind = list


class TupleVariable(BaseListVariable):
    kind = tuple


class NamedTupleVariable(TupleVariable):
    """A named tuple of tensors (``x.sort()``'s ``torch.return_types.sort``):
    its fields read by name (``.values``, ``.indices``)."""

    def __init__(self, items: list, kind, source=None):
        super().__init__(items, source)
        self.kind = kind

    def as_python_constant(self):
        return self._make([i.as_python_constant() for i in self.items])

    def as_python(self, outputs):
        return self._make([i.as_python(outputs) for i in self.items])

    def _make(self, values):
        """A namedtuple takes its fields as arguments, a structseq as one sequence."""
        from ..return_types import _StructSeq
        return self.kind(values) if issubclass(self.kind, _StructSeq) else self.kind(*values)

    def var_getattr(self, tx, name):
        if name in self.kind._fields:
            return self.items[self.kind._fields.index(name)]
        return super().var_getattr(tx, name)


class SizeVariable(TupleVariable):
    """``x.shape`` with static sizes: a tuple of ints that prints as torch.Size."""

    def python_type(self):
        import glasstorch
        return glasstorch.Size

    def as_python_constant(self):
        import glasstorch
        return glasstorch.Size(i.as_python_constant() for i in self.items)

    def as_python(self, outputs):
        import glasstorch
        return glasstorch.Size(i.as_python(outputs) for i in self.items)

    def var_getattr(self, tx, name):
        if name == "numel":
            total = 1
            for i in self.items:
                total *= i.as_python_constant()
            return ObjectVariable(lambda: total)
        return super().var_getattr(tx, name)


class ConstDictVariable(VariableTracker):
    def __init__(self, items: dict, source=None):
        self.items, self.source = dict(items), source

    def python_type(self):
        return dict

    def is_python_constant(self):
        return all(v.is_python_constant() for v in self.items.values())

    def as_python_constant(self):
        return {k: v.as_python_constant() for k, v in self.items.items()}

    def as_python(self, outputs):
        return {k: v.as_python(outputs) for k, v in self.items.items()}

    def unpack(self):
        return [wrap_constant(k) for k in self.items]

    def var_getattr(self, tx, name):
        return BoundMethodVariable(self, name)


class BoundMethodVariable(VariableTracker):
    """A method of a list/tuple/dict tracker: only the ones that read."""

    def __init__(self, obj: VariableTracker, name: str):
        self.obj, self.name = obj, name

    def call_function(self, tx, args, kwargs):
        obj, name = self.obj, self.name
        if isinstance(obj, ConstDictVariable):
            if name == "items":
                return ListIteratorVariable([TupleVariable([wrap_constant(k), v])
                                             for k, v in obj.items.items()])
            if name == "keys":
                return ListIteratorVariable([wrap_constant(k) for k in obj.items])
            if name == "values":
                return ListIteratorVariable(list(obj.items.values()))
            if name in ("get", "__getitem__"):
                key = args[0].as_python_constant()
                if key in obj.items:
                    return obj.items[key]
                return args[1] if len(args) > 1 else ConstantVariable(None)
        if name in _MUTATIONS.get(obj.python_type(), ()):
            if obj.source is not None:          # an argument's container: rewritten later
                tx.output.side_effects.changed(obj)
            return _mutate(obj, name, args, kwargs)
        if isinstance(obj, BaseListVariable):
            if name in ("index", "count"):
                values = obj.as_python_constant()
                return wrap_constant(getattr(values, name)(*[a.as_python_constant() for a in args]))
            if name == "__getitem__":
                return obj.getitem(args[0].as_python_constant())
        raise Unsupported(f"{obj.python_type().__name__}.{name} (mutation or not supported)")


_MUTATIONS = {list: ("append", "extend", "insert", "pop", "clear", "reverse"),
              dict: ("update", "pop", "setdefault", "clear")}


def _mutate(obj, name, args, kwargs):
    """A mutation of a list or dict the traced frame made itself: the tracker is
    the container, so it changes in place (nothing outside needs replaying)."""
    items = obj.items
    if name == "append":
        items.append(args[0])
    elif name == "extend":
        items.extend(args[0].unpack())
    elif name == "insert":
        items.insert(args[0].as_python_constant(), args[1])
    elif name == "pop" and isinstance(items, list):
        return items.pop(*(a.as_python_constant() for a in args))
    elif name == "pop":
        key = args[0].as_python_constant()
        return items.pop(key) if len(args) == 1 else items.pop(key, args[1])
    elif name == "clear":
        items.clear()
    elif name == "reverse":
        items.reverse()
    elif name == "update":
        items.update(args[0].items if args else {})
        items.update(kwargs)
    elif name == "setdefault":
        return items.setdefault(args[0].as_python_constant(),
                                args[1] if len(args) > 1 else ConstantVariable(None))
    return ConstantVariable(None)


class RangeVariable(BaseListVariable):
    kind = list

    def python_type(self):
        return range


class ListIteratorVariable(VariableTracker):
    def __init__(self, items: list):
        self.items, self.index = list(items), 0

    def next_item(self):
        if self.index >= len(self.items):
            return None
        self.index += 1
        return self.items[self.index - 1]

    def unpack(self):
        return self.items[self.index:]

    def as_python(self, outputs):
        return iter([i.as_python(outputs) for i in self.items[self.index:]])


class GeneratorVariable(VariableTracker):
    """A generator the traced code made: its body (an inlining translator)
    runs up to the next ``yield`` each time an item is read."""

    def __init__(self, tx):
        self.tx, self.done = tx, False

    def next_item(self):
        if self.done:
            return None
        value = self.tx.resume_generator()
        self.done = value is None
        return value

    def unpack(self):
        items = []
        while (item := self.next_item()) is not None:
            items.append(item)
        return items

    def as_python(self, outputs):
        raise Unsupported("a generator handed back to Python")


class UserFunctionVariable(VariableTracker):
    """A Python function: calling it inlines its bytecode into the same graph."""

    def __init__(self, fn, source=None, self_var=None):
        self.fn, self.source, self.self_var = fn, source, self_var

    def python_type(self):
        return types.FunctionType

    def as_python(self, outputs):
        if self.self_var is not None:
            return types.MethodType(self.fn, self.self_var.as_python(outputs))
        return self.fn

    def call_function(self, tx, args, kwargs):
        if self.self_var is not None:
            args = [self.self_var, *args]
        return tx.inline_call(self.fn, args, kwargs)


class NestedFunctionVariable(UserFunctionVariable):
    """A function made while tracing (``MAKE_FUNCTION``: a lambda, a comprehension)."""

    def __init__(self, code, fn_globals, name, defaults, closure):
        # empty cells stand in for its free variables: the trackers in ``closure``
        # are what the inlined body reads
        cells = tuple(types.CellType() for _ in code.co_freevars) or None
        super().__init__(types.FunctionType(code, fn_globals, name, None, cells))
        self.defaults, self.closure = defaults, closure

    def call_function(self, tx, args, kwargs):
        return tx.inline_call(self.fn, args, kwargs, defaults=self.defaults,
                              closure=self.closure)

    def as_python(self, outputs):
        raise Unsupported("a function made inside the compiled region")


class NNModuleVariable(VariableTracker):
    """An nn.Module: attributes resolve to graph inputs (parameters, buffers),
    submodules or constants; calling it inlines ``forward``."""

    def __init__(self, module, source):
        self.module, self.source = module, source

    def python_type(self):
        return type(self.module)

    def as_python(self, outputs):
        return self.module

    def var_getattr(self, tx, name):
        from .source import AttrSource, GetItemSource
        module = self.module
        written = tx.output.side_effects.read(module, name)
        if written is not None:
            return written
        state = module.__dict__
        # a module the frame writes to is read through its __dict__, as PyTorch does
        tables = (lambda table: GetItemSource(AttrSource(self.source, "__dict__"), table)) \
            if tx.output.side_effects.mutated(module) else \
            (lambda table: AttrSource(self.source, table))
        for table in ("_parameters", "_buffers"):
            if name in state.get(table, {}):
                value = state[table][name]
                if value is None:
                    return ConstantVariable(None)
                src = GetItemSource(tables(table), name)
                from . import config
                var = tx.output.graph_input(value, src,
                                            static=config.force_nn_module_property_static_shapes)
                tx.output.realize(var)      # a module's tensors are inputs when read
                return var
        if name in state.get("_modules", {}):
            sub = state["_modules"][name]
            return tx.wrap(sub, GetItemSource(tables("_modules"), name))
        return tx.wrap(getattr(module, name), AttrSource(self.source, name))

    def unpack(self):
        """``for block in self.h``: a ModuleList's (or Sequential's) modules; a
        ModuleDict's keys."""
        from .source import AttrSource, GetItemSource
        module = self.module
        modules = module.__dict__.get("_modules", {})
        if type(module).__name__ == "ModuleDict":
            return [ConstantVariable(k) for k in modules]
        return [NNModuleVariable(m, GetItemSource(AttrSource(self.source, "_modules"), k))
                for k, m in modules.items() if m is not None]

    def call_function(self, tx, args, kwargs):
        import glasstorch
        from . import config
        module = self.module
        if isinstance(module, glasstorch.nn.RNNBase) and not config.allow_rnn:
            raise Unsupported("Attempted to wrap RNN, GRU, or LSTM",
                              "Dynamo does not support RNN, GRU, or LSTM.", breakable=False)
        if module._forward_hooks or module._forward_pre_hooks:
            raise Unsupported("a module with forward hooks")
        forward = type(module).forward
        return tx.inline_call(forward, [self, *args], kwargs)


class TorchVariable(VariableTracker):
    """A function recorded into the graph as a ``call_function`` node."""

    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source

    def python_type(self):
        return type(self.fn)

    def as_python(self, outputs):
        return self.fn

    def call_function(self, tx, args, kwargs):
        return tx.output.call("call_function", self.fn, args, kwargs)

    def var_getattr(self, tx, name):
        return tx.wrap(getattr(self.fn, name), None)


class PythonModuleVariable(VariableTracker):
    def __init__(self, module, source=None):
        self.module, self.source = module, source

    def python_type(self):
        return types.ModuleType

    def as_python(self, outputs):
        return self.module

    def var_getattr(self, tx, name):
        from .source import AttrSource
        return tx.wrap(getattr(self.module, name),
                       AttrSource(self.source, name) if self.source else None)


class ObjectVariable(VariableTracker):
    """Any other object: used as it is; calling it runs it in Python only
    when every argument is a constant (a pure helper), else it is a break."""

    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def python_type(self):
        return type(self.value)

    def as_python(self, outputs):
        return self.value

    def is_python_constant(self):
        return isinstance(self.value, type)

    def as_python_constant(self):
        return self.value

    def var_getattr(self, tx, name):
        from .source import AttrSource
        written = tx.output.side_effects.read(self.value, name)
        if written is not None:
            return written
        try:
            value = getattr(self.value, name)
        except AttributeError:
            raise Unsupported(f"{type(self.value).__name__} has no attribute {name!r}") from None
        return tx.wrap(value, AttrSource(self.source, name) if self.source else None)

    def call_function(self, tx, args, kwargs):
        value = self.value
        constant_args = all(a.is_python_constant() for a in [*args, *kwargs.values()])
        if constant_args and isinstance(value, types.BuiltinFunctionType) and \
                getattr(value, "__module__", None) in PURE_MODULES:
            return wrap_constant(value(*[a.as_python_constant() for a in args],
                                       **{k: v.as_python_constant() for k, v in kwargs.items()}))
        if isinstance(value, type) and all(a.is_python_constant() for a in args):
            from ..autograd.grad_mode import set_grad_enabled
            if value is set_grad_enabled:          # its constructor flips the mode: undo it
                import glasstorch
                previous = glasstorch.is_grad_enabled()
                manager = value(*[a.as_python_constant() for a in args])
                glasstorch._C._set_grad_enabled(previous)
                return ConstantVariable(manager)
            try:
                return wrap_constant(value(*[a.as_python_constant() for a in args],
                                           **{k: v.as_python_constant()
                                              for k, v in kwargs.items()}))
            except Exception as e:
                raise Unsupported(f"constructing {value.__name__}: {e}") from None
        module = getattr(value, "__module__", None) or ""
        name = f"{module}.{getattr(value, '__qualname__', type(value).__name__)}."
        raise Unsupported(
            "Attempted to call function marked as skipped",
            f"Dynamo does not know how to trace the builtin `{name}` This function is either a "
            "Python builtin (e.g. _warnings.warn) or a third-party C/C++ Python extension "
            "(perhaps created with pybind).", culprit=value)


# C functions computed at trace time when every argument is a constant
PURE_MODULES = ("math", "cmath", "_operator", "operator", "itertools", "functools")


def item_unsupported(method: str = "item") -> Unsupported:
    """``.item()`` (and ``bool(t)``, ``int(t)``...): the value is data."""
    return Unsupported("Unsupported Tensor.item() call with capture_scalar_outputs=False",
                       "Dynamo does not support tracing `Tensor.item()` with "
                       "config.capture_scalar_outputs=False.",
                       hints=("Set `torch._dynamo.config.capture_scalar_outputs = True` or "
                              "`export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these "
                              "operations in the captured graph.",),
                       context=f"call_method TensorVariable() {method} () {{}}", gb_id="gb0124")


def wrap_constant(value) -> VariableTracker:
    """A tracker for a value known while tracing (no source: nothing to guard)."""
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        import glasstorch
        items = [wrap_constant(v) for v in value]
        return SizeVariable(items) if isinstance(value, glasstorch.Size) else TupleVariable(items)
    if isinstance(value, list):
        return ListVariable([wrap_constant(v) for v in value])
    return ConstantVariable(value)


CONSTANT_TYPES = (int, float, bool, str, type(None), complex, bytes, slice, type(Ellipsis))


def is_constant_value(value) -> bool:
    import glasstorch
    if isinstance(value, CONSTANT_TYPES):
        return True
    return isinstance(value, (glasstorch.dtype, glasstorch.device, glasstorch.layout,
                              glasstorch.memory_format))
