"""``torch._dynamo.symbolic_convert``: running a frame's bytecode on trackers.

``InstructionTranslator`` executes a function's bytecode one instruction at a
time, as CPython would, but its stack and locals hold VariableTrackers
(``variables.py``): tensor operations become graph nodes (``output_graph.py``),
Python values known at trace time are computed (and guarded), calls to Python
functions are inlined (``InliningInstructionTranslator`` runs the callee's
bytecode into the same graph), and loops unroll.

Where an instruction cannot be traced, the frame ends in a *graph break*: at a
call (``print(x)``, an unsupported function) or a jump on a tensor's value
(``if x.sum() > 0``).  The graph so far is compiled; at run time the call (or
``bool(cond)``) runs in Python and the rest of the function continues in a
resume function (``resume.py``), which is compiled the same way.  Anything
else a frame cannot trace makes the whole frame run eagerly.

One opcode table serves Python 3.11 and 3.12 (``dis`` resolves the arguments:
jump targets, names, constants).
"""
from __future__ import annotations

import collections
import dis
import functools
import itertools
import operator
import re
import sys
import types
from dataclasses import dataclass, field

import glasstorch

from ..fx import GraphModule
from ..fx.node import Node
from .exc import Unsupported
from .output_graph import OutputGraph, _stack_trace
from .source import AttrSource, GetItemSource, GlobalSource, LocalSource, ModuleGlobalSource
from .variables import (BaseListVariable, ConstantVariable, ConstDictVariable, GeneratorVariable,
                        ListIteratorVariable, ListVariable, NestedFunctionVariable,
                        NNModuleVariable, NullVariable, ObjectVariable, PythonModuleVariable,
                        RangeVariable, SizeVariable, SliceVariable, SymNodeVariable,
                        TensorVariable,
                        TorchVariable, TupleVariable, UserFunctionVariable, VariableTracker,
                        is_constant_value, item_unsupported, wrap_constant)

PY312 = sys.version_info >= (3, 12)

_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
           "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
           ">>": operator.rshift,
           "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul,
           "/=": operator.itruediv, "//=": operator.ifloordiv, "%=": operator.imod,
           "**=": operator.ipow, "@=": operator.imatmul, "&=": operator.iand,
           "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift,
           ">>=": operator.irshift}
_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
            ">": operator.gt, ">=": operator.ge}

_TX_STACK: list = []


def current_tx():
    return _TX_STACK[-1]


@dataclass
class Break:
    """Where and why a frame's graph ends before its return."""
    inst: object                 # the instruction that could not be traced
    reason: Unsupported
    stack: list                  # trackers on the stack before it
    locals: dict                 # live locals before it
    kw_names: tuple = ()


@dataclass
class FrameResult:
    output: OutputGraph
    returned: VariableTracker | None = None
    graph_break: Break | None = None
    break_reasons: list = field(default_factory=list)


class InstructionTranslatorBase:
    def __init__(self, fn, code, f_locals: dict, f_globals: dict, output: OutputGraph,
                 closure_cells: dict, parent=None):
        self.fn, self.code, self.f_globals, self.output = fn, code, f_globals, output
        self.symbolic_locals: dict = f_locals
        self.closure_cells = closure_cells       # name -> tracker (free variables)
        self.parent = parent
        self.stack: list = []
        self.instructions = [i for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]
        self.index_of = {inst.offset: i for i, inst in enumerate(self.instructions)}
        self.ip = 0
        self.kw_names: tuple = ()
        self.lineno = code.co_firstlineno
        self.returned = None

    # -- values -------------------------------------------------------------------------

    def wrap(self, value, source) -> VariableTracker:
        """A tracker for a Python value read from ``source`` (guarded)."""
        guards = self.output.guards
        if isinstance(value, glasstorch.Tensor):
            if source is None:
                raise Unsupported("a tensor created outside the compiled region with no "
                                  "source to read it from")
            return self.output.graph_input(value, source)
        if type(value) is int and isinstance(source, LocalSource) and self.parent is None:
            symbolic = self.output.int_input(value, source)
            if symbolic is not None:
                return symbolic
        if is_constant_value(value):
            if source is not None:
                guards.constant(source, value)
            return ConstantVariable(value, source)
        if isinstance(value, glasstorch.nn.Module):
            if source is not None:
                guards.identity(source, value)
            return NNModuleVariable(value, source)
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            if source is not None:
                guards.length(source, value)
            items = [self.wrap(v, GetItemSource(source, i) if source else None)
                     for i, v in enumerate(value)]
            if isinstance(value, glasstorch.Size):
                return SizeVariable(items)
            return (ListVariable if isinstance(value, list) else TupleVariable)(items, source)
        if type(value) in (dict, collections.OrderedDict) and \
                all(is_constant_value(k) for k in value):
            if source is not None:
                guards.length(source, value)
            return ConstDictVariable({k: self.wrap(v, GetItemSource(source, k) if source
                                                   else None) for k, v in value.items()}, source)
        if source is not None:
            if isinstance(value, types.MethodType):   # a bound method is a new object at
                guards.identity(AttrSource(source, "__func__"), value.__func__)   # every read
                guards.identity(AttrSource(source, "__self__"), value.__self__)
            else:
                guards.identity(source, value)
        if isinstance(value, types.ModuleType):
            return PythonModuleVariable(value, source)
        if value is glasstorch.cond:
            return CondVariable()
        folded = _folded_while_tracing().get(value, _NOT_FOLDED) if _hashable(value) \
            else _NOT_FOLDED
        if folded is not _NOT_FOLDED:
            return FoldedCallVariable(folded)
        if type(value).__name__ == "CustomOpDef":          # torch.library.custom_op
            return TorchVariable(value._opoverload, source)
        if is_traceable_function(value) or _is_autograd_function_apply(value):
            return TorchVariable(value, source)
        if isinstance(value, types.FunctionType):
            return UserFunctionVariable(value, source)
        if isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType):
            owner = self.wrap(value.__self__, AttrSource(source, "__self__") if source else None)
            return UserFunctionVariable(value.__func__, source, self_var=owner)
        builtin = BUILTINS.get(value) if _hashable(value) else None
        if builtin is not None:
            return BuiltinVariable(value)
        return ObjectVariable(value, source)

    def load_global(self, name: str) -> VariableTracker:
        written = self.output.side_effects.read(self.f_globals, name)
        if written is not None:
            return written
        if name in self.f_globals:
            root = self
            while root.parent is not None:
                root = root.parent
            source = GlobalSource(name) if self.f_globals is root.f_globals else \
                ModuleGlobalSource(self.f_globals["__name__"], name)
            return self.wrap(self.f_globals[name], source)
        builtins_ = self.f_globals.get("__builtins__", __builtins__)
        builtins_ = builtins_ if isinstance(builtins_, dict) else builtins_.__dict__
        if name in builtins_:
            return self.wrap(builtins_[name], None)
        raise Unsupported(f"name {name!r} is not defined")

    # -- the loop ------------------------------------------------------------------------

    def push(self, v):
        self.stack.append(v)

    def pop(self):
        return self.stack.pop()

    def popn(self, n):
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def jump(self, inst):
        self.ip = self.index_of[inst.argval]

    yielded = None       # a generator's value at its latest ``yield`` (it pauses there)

    def run(self):
        _TX_STACK.append(self)
        try:
            while self.returned is None and self.yielded is None:
                inst = self.instructions[self.ip]
                if inst.starts_line:
                    self.lineno = inst.starts_line
                self.ip += 1
                self.step(inst)
        finally:
            _TX_STACK.pop()
        return self.returned

    def step(self, inst):
        handler = getattr(self, inst.opname, None)
        if handler is None:
            raise Unsupported(f"missing: {inst.opname}", f"Dynamo has no handler for the "
                              f"opcode {inst.opname}.")
        handler(inst)

    # -- opcodes: no-ops and the stack --------------------------------------------------------

    def RETURN_GENERATOR(self, inst):
        self.push(ConstantVariable(None))

    def YIELD_VALUE(self, inst):
        """A generator's value, handed to its consumer (None is sent back)."""
        self.yields += 1
        if self.yields > _MAX_YIELDS:
            raise Unsupported("a generator yielding without end",
                              f"Dynamo stops tracing a generator after {_MAX_YIELDS} values.")
        self.yielded = self.pop()
        self.push(ConstantVariable(None))

    def NOP(self, inst):
        pass

    RESUME = PRECALL = COPY_FREE_VARS = MAKE_CELL = NOP

    def POP_TOP(self, inst):
        self.pop()

    def PUSH_NULL(self, inst):
        self.push(NullVariable())

    def COPY(self, inst):
        self.push(self.stack[-inst.arg])

    def SWAP(self, inst):
        self.stack[-1], self.stack[-inst.arg] = self.stack[-inst.arg], self.stack[-1]

    def KW_NAMES(self, inst):
        self.kw_names = self.code.co_consts[inst.arg]

    # -- loads and stores -------------------------------------------------------------------

    def LOAD_CONST(self, inst):
        value = inst.argval
        if isinstance(value, types.CodeType):
            self.push(ConstantVariable(value))
        else:
            self.push(wrap_constant(value))

    def LOAD_FAST(self, inst):
        if inst.argval not in self.symbolic_locals:
            raise Unsupported("UnboundLocalError", f"local {inst.argval!r} used before "
                              f"assignment")
        self.push(self.symbolic_locals[inst.argval])

    LOAD_FAST_CHECK = LOAD_FAST

    def LOAD_FAST_AND_CLEAR(self, inst):
        self.push(self.symbolic_locals.pop(inst.argval, NullVariable()))

    def STORE_FAST(self, inst):
        value = self.pop()
        value.set_name_hint(inst.argval)
        self.symbolic_locals[inst.argval] = value

    def DELETE_FAST(self, inst):
        self.symbolic_locals.pop(inst.argval, None)

    def LOAD_DEREF(self, inst):
        name = inst.argval
        if name in self.closure_cells:
            self.push(self.closure_cells[name])
        elif name in self.symbolic_locals:
            self.push(self.symbolic_locals[name])
        else:
            raise Unsupported(f"free variable {name!r} has no value")

    LOAD_CLOSURE = LOAD_DEREF

    def STORE_DEREF(self, inst):
        if inst.argval in self.closure_cells:
            raise Unsupported("writing a closure variable of an enclosing function")
        self.symbolic_locals[inst.argval] = self.pop()

    def LOAD_GLOBAL(self, inst):
        if inst.arg & 1:
            self.push(NullVariable())
        self.push(self.load_global(inst.argval))

    def STORE_GLOBAL(self, inst):
        """``global n; n += 1``: written after the graph runs (a side effect)."""
        value = self.pop()
        if isinstance(value, (NestedFunctionVariable, NullVariable)):
            raise Unsupported("STORE_GLOBAL", "Dynamo does not trace this global write.")
        self.output.side_effects.store(self.f_globals, inst.argval, value)

    def IMPORT_NAME(self, inst):
        """``import a.b`` / ``from .m import x`` inside the traced code: the import
        runs now, while tracing (importing is idempotent), and the module is a
        constant of the graph."""
        fromlist, level = self.pop().as_python_constant(), self.pop().as_python_constant()
        module = __import__(inst.argval, self.f_globals, None, fromlist, level)
        self.push(PythonModuleVariable(module))

    def IMPORT_FROM(self, inst):
        self.push(self.getattr(self.stack[-1], inst.argval))

    def LOAD_ATTR(self, inst):
        obj = self.pop()
        value = self.getattr(obj, inst.argval)
        if PY312 and inst.arg & 1:       # a method load: NULL, then the bound attribute
            self.push(NullVariable())
        self.push(value)

    def LOAD_METHOD(self, inst):
        obj = self.pop()
        self.push(NullVariable())
        self.push(self.getattr(obj, inst.argval))

    def getattr(self, obj, name):
        if isinstance(obj, (ConstantVariable,)) and not obj.source:
            return wrap_constant(getattr(obj.value, name))
        return obj.var_getattr(self, name)

    def STORE_ATTR(self, inst):
        obj, value = self.pop(), self.pop()
        target = obj.module if isinstance(obj, NNModuleVariable) else \
            obj.value if isinstance(obj, ObjectVariable) and not isinstance(obj.value, type) \
            else None
        if target is None or isinstance(value, (NestedFunctionVariable, NullVariable)):
            raise Unsupported("STORE_ATTR", "Dynamo does not trace this attribute write.")
        if isinstance(obj, NNModuleVariable) and (any(
                inst.argval in target.__dict__.get(table, {})
                for table in ("_parameters", "_modules")) or (
                inst.argval in target.__dict__.get("_buffers", {}) and
                not isinstance(value, TensorVariable))):
            raise Unsupported("STORE_ATTR", "Dynamo does not trace replacing a module's "
                              "parameter or submodule.")
        # a buffer given a new tensor (self.avg = 0.9 * self.avg + ...) stays a buffer:
        # Module.__setattr__ writes it into _buffers, and so does the replay
        buffer = isinstance(obj, NNModuleVariable) and \
            inst.argval in target.__dict__.get("_buffers", {})
        self.output.side_effects.store(target, inst.argval, value,
                                       "buffer" if buffer else "attr")

    # -- building containers ----------------------------------------------------------------

    def BUILD_TUPLE(self, inst):
        self.push(TupleVariable(self.popn(inst.arg)))

    def BUILD_LIST(self, inst):
        self.push(ListVariable(self.popn(inst.arg)))

    def BUILD_MAP(self, inst):
        items = self.popn(2 * inst.arg)
        self.push(ConstDictVariable({items[i].as_python_constant(): items[i + 1]
                                     for i in range(0, len(items), 2)}))

    def BUILD_CONST_KEY_MAP(self, inst):
        keys = self.pop().as_python_constant()
        values = self.popn(inst.arg)
        self.push(ConstDictVariable(dict(zip(keys, values))))

    def BUILD_SLICE(self, inst):
        self.push(_slice(self.popn(inst.arg)))

    def LIST_APPEND(self, inst):
        value = self.pop()
        self.stack[-inst.arg].items.append(value)

    def LIST_EXTEND(self, inst):
        value = self.pop()
        self.stack[-inst.arg].items.extend(value.unpack())

    def LIST_TO_TUPLE(self, inst):
        self.push(TupleVariable(self.pop().items))

    def DICT_MERGE(self, inst):
        value = self.pop()
        target = self.stack[-inst.arg]
        target.items.update(value.items)

    DICT_UPDATE = DICT_MERGE

    def CALL_INTRINSIC_1(self, inst):
        if inst.argrepr == "INTRINSIC_LIST_TO_TUPLE":
            self.LIST_TO_TUPLE(inst)
        elif inst.argrepr == "INTRINSIC_UNARY_POSITIVE":
            self.push(self.apply(operator.pos, [self.pop()]))
        else:
            raise Unsupported(f"missing: CALL_INTRINSIC_1 {inst.argrepr}")

    def UNPACK_SEQUENCE(self, inst):
        items = self.pop().unpack()
        if len(items) != inst.arg:
            raise Unsupported("UNPACK_SEQUENCE length mismatch")
        for item in reversed(items):
            self.push(item)

    def FORMAT_VALUE(self, inst):
        spec = self.pop().as_python_constant() if inst.arg & 0x04 else ""
        value = self.pop().as_python_constant()
        conversion = {1: str, 2: repr, 3: ascii}.get(inst.arg & 0x03)
        self.push(ConstantVariable(format(conversion(value) if conversion else value, spec)))

    def BUILD_STRING(self, inst):
        self.push(ConstantVariable("".join(p.as_python_constant() for p in self.popn(inst.arg))))

    # -- operators ----------------------------------------------------------------------

    def apply(self, fn, args):
        """``fn(*args)`` for an operator: a node when a tensor is involved, else
        computed now on the constants."""
        if any(isinstance(a, (TensorVariable, SymNodeVariable)) for a in args):
            return self.output.call("call_function", fn, args, {})
        if isinstance(args[0], BaseListVariable) and fn in (operator.add, operator.iadd) and \
                isinstance(args[1], BaseListVariable):
            return type(args[0])(args[0].items + args[1].items)
        if isinstance(args[0], BaseListVariable) and fn is operator.mul and \
                args[1].is_python_constant():
            return type(args[0])(args[0].items * args[1].as_python_constant())
        values = [a.as_python_constant() for a in args]
        try:
            return wrap_constant(fn(*values))
        except Exception as e:
            raise Unsupported(f"{fn.__name__} on constants raised {type(e).__name__}") from None

    def BINARY_OP(self, inst):
        b, a = self.pop(), self.pop()
        self.push(self.apply(_BINARY[inst.argrepr], [a, b]))

    def COMPARE_OP(self, inst):
        b, a = self.pop(), self.pop()
        op = inst.argval if inst.argval in _COMPARE else inst.argrepr.split("(")[-1].rstrip(")")
        self.push(self.apply(_COMPARE[op], [a, b]))

    def IS_OP(self, inst):
        b, a = self.pop(), self.pop()
        if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
            same = a is b
        elif isinstance(a, NullVariable) or isinstance(b, NullVariable):
            same = type(a) is type(b)
        else:
            same = self._identity(a) is self._identity(b)
        self.push(ConstantVariable(same != bool(inst.arg)))

    @staticmethod
    def _identity(v):
        if v.is_python_constant():
            return v.as_python_constant()
        return getattr(v, "value", getattr(v, "module", getattr(v, "fn", v)))

    def CONTAINS_OP(self, inst):
        container, item = self.pop(), self.pop()
        if isinstance(container, ConstDictVariable):
            found = item.as_python_constant() in container.items
        else:
            found = item.as_python_constant() in [i.as_python_constant()
                                                  for i in container.unpack()]
        self.push(ConstantVariable(found != bool(inst.arg)))

    def UNARY_NEGATIVE(self, inst):
        self.push(self.apply(operator.neg, [self.pop()]))

    def UNARY_POSITIVE(self, inst):
        self.push(self.apply(operator.pos, [self.pop()]))

    def UNARY_INVERT(self, inst):
        self.push(self.apply(operator.invert, [self.pop()]))

    def UNARY_NOT(self, inst):
        value = self.pop()
        if isinstance(value, TensorVariable):
            raise item_unsupported()
        self.push(ConstantVariable(not self.truth(value)))

    def BINARY_SUBSCR(self, inst):
        index, obj = self.pop(), self.pop()
        self.push(self.subscript(obj, index))

    def BINARY_SLICE(self, inst):
        stop, start, obj = self.pop(), self.pop(), self.pop()
        self.push(self.subscript(obj, _slice([start, stop])))

    def subscript(self, obj, index):
        if isinstance(obj, TensorVariable):
            return self.output.call("call_function", operator.getitem, (obj, index), {})
        if isinstance(obj, BaseListVariable):
            return obj.getitem(index.as_python_constant())
        if isinstance(obj, ConstDictVariable):
            return obj.items[index.as_python_constant()]
        if isinstance(obj, NNModuleVariable):
            module = obj.module[index.as_python_constant()]
            return self.wrap(module, None) if not isinstance(module, glasstorch.nn.Module) \
                else NNModuleVariable(module, GetItemSource(obj.source, index.as_python_constant()))
        return self.apply(operator.getitem, [obj, index])

    def STORE_SUBSCR(self, inst):
        index, obj, value = self.pop(), self.pop(), self.pop()
        if isinstance(obj, TensorVariable):
            self.output.call("call_function", operator.setitem, (obj, index, value), {})
            return
        if isinstance(obj, (ListVariable, ConstDictVariable)):
            key = index.as_python_constant()
            if obj.source is not None:          # an argument's container: rewritten later
                self.output.side_effects.changed(obj)
            obj.items[key] = value
            return
        raise Unsupported("STORE_SUBSCR", "Dynamo does not trace item writes into a Python "
                          "container (a side effect).")

    # -- jumps and loops --------------------------------------------------------------------

    def truth(self, value) -> bool:
        if isinstance(value, SymNodeVariable):
            return bool(value.example)        # a guard on the sizes
        if isinstance(value, TensorVariable):
            branch = dict(_DATA_DEPENDENT_BRANCH)
            branch["explanation"] += _condition_trace(value.node)
            raise Unsupported(f"generic_jump {type(value).__name__}()", reason="jump",
                              fullgraph_error=dict(**branch, context=(
                                  f"attempted to jump with {type(value).__name__}()")))
        if isinstance(value, BaseListVariable):
            return bool(value.items)
        if isinstance(value, ConstDictVariable):
            return bool(value.items)
        if value.is_python_constant():
            return bool(value.as_python_constant())
        if isinstance(value, (NNModuleVariable, UserFunctionVariable, TorchVariable,
                              PythonModuleVariable)):
            return True
        raise Unsupported(f"truth value of {type(value).__name__}")

    def _pop_jump(self, inst, jump_if: bool):
        value = self.stack[-1]
        taken = self.truth(value) == jump_if
        self.pop()
        if taken:
            self.jump(inst)

    def POP_JUMP_IF_FALSE(self, inst):
        self._pop_jump(inst, False)

    def POP_JUMP_IF_TRUE(self, inst):
        self._pop_jump(inst, True)

    POP_JUMP_FORWARD_IF_FALSE = POP_JUMP_BACKWARD_IF_FALSE = POP_JUMP_IF_FALSE
    POP_JUMP_FORWARD_IF_TRUE = POP_JUMP_BACKWARD_IF_TRUE = POP_JUMP_IF_TRUE

    def POP_JUMP_IF_NONE(self, inst):
        value = self.pop()
        if value.is_python_constant() and value.as_python_constant() is None:
            self.jump(inst)

    def POP_JUMP_IF_NOT_NONE(self, inst):
        value = self.pop()
        if not (value.is_python_constant() and value.as_python_constant() is None):
            self.jump(inst)

    POP_JUMP_FORWARD_IF_NONE = POP_JUMP_BACKWARD_IF_NONE = POP_JUMP_IF_NONE
    POP_JUMP_FORWARD_IF_NOT_NONE = POP_JUMP_BACKWARD_IF_NOT_NONE = POP_JUMP_IF_NOT_NONE

    def JUMP_IF_FALSE_OR_POP(self, inst):
        if not self.truth(self.stack[-1]):
            self.jump(inst)
        else:
            self.pop()

    def JUMP_IF_TRUE_OR_POP(self, inst):
        if self.truth(self.stack[-1]):
            self.jump(inst)
        else:
            self.pop()

    def JUMP_FORWARD(self, inst):
        self.jump(inst)

    JUMP_BACKWARD = JUMP_BACKWARD_NO_INTERRUPT = JUMP_ABSOLUTE = JUMP_FORWARD

    def GET_ITER(self, inst):
        value = self.pop()
        if isinstance(value, ListIteratorVariable):
            self.push(value)
        else:
            self.push(ListIteratorVariable(value.unpack()))

    def FOR_ITER(self, inst):
        item = self.stack[-1].next_item()
        if item is not None:
            self.push(item)
            return
        self.pop()
        self.jump(inst)
        if PY312 and self.instructions[self.ip].opname == "END_FOR":
            self.ip += 1

    def END_FOR(self, inst):
        self.popn(2)

    # -- calls --------------------------------------------------------------------------

    def CALL(self, inst):
        args = self.popn(inst.arg)
        first, second = self.pop(), self.pop()      # (callable, NULL) or (self, method)
        if isinstance(second, NullVariable):
            fn = first
        else:
            fn, args = second, [first, *args]
        kw_names, self.kw_names = self.kw_names, ()
        kwargs = {}
        if kw_names:
            kwargs = dict(zip(kw_names, args[-len(kw_names):]))
            args = args[:-len(kw_names)]
        self.push(self.call_function(fn, args, kwargs))

    def CALL_FUNCTION_EX(self, inst):
        kwargs = self.pop().items if inst.arg & 1 else {}
        args = self.pop().unpack()
        fn = self.pop()
        if isinstance(self.stack[-1], NullVariable):
            self.pop()
        self.push(self.call_function(fn, list(args), dict(kwargs)))

    def call_function(self, fn, args, kwargs):
        return fn.call_function(self, list(args), dict(kwargs))

    def MAKE_FUNCTION(self, inst):
        code = self.pop()
        flags = inst.arg
        closure = self.pop() if flags & 0x08 else None
        if flags & 0x04:
            self.pop()          # annotations
        kwdefaults = self.pop() if flags & 0x02 else None
        defaults = self.pop() if flags & 0x01 else None
        if kwdefaults is not None:
            raise Unsupported("a nested function with keyword-only defaults")
        code = code.as_python_constant()
        cells = {name: var for name, var in zip(code.co_freevars, closure.items)} if closure \
            else {}
        self.push(NestedFunctionVariable(code, self.f_globals, code.co_name,
                                         defaults.unpack() if defaults else [], cells))

    def inline_call(self, fn, args, kwargs, defaults=None, closure=None):
        """Run ``fn``'s bytecode on these trackers, into the same graph."""
        code = fn.__code__
        if code.co_flags & (0x80 | 0x100 | 0x200):     # coroutines, async generators
            raise Unsupported("inlining a coroutine")
        if getattr(fn, "_dynamo_disable", False):
            raise Unsupported("Skip calling `torch.compiler.disable()`d function",
                              f"Skip calling function `{fn!r}` since it was wrapped with "
                              "`torch.compiler.disable` (reason: None)", culprit=fn,
                              hints=("Remove the `torch.compiler.disable` call",),
                              context=repr(fn), gb_id="gb0098")
        if fn is graph_break:
            raise Unsupported("Call to `torch._dynamo.graph_break()`",
                              "User-inserted graph break. Message: None",
                              hints=("Remove the `torch._dynamo.graph_break()` call.",),
                              context=f"Called `torch._dynamo.graph_break()` with args "
                                      f"`{[_type_name(a) for a in args]}`, kwargs `{{}}`",
                              gb_id="gb0025")
        f_locals = bind_args(fn, code, args, kwargs, defaults)
        cells = dict(closure or {})
        if fn.__closure__ is not None and closure is None:
            for name, cell in zip(code.co_freevars, fn.__closure__):
                cells[name] = self.wrap(cell.cell_contents, None)
        tx = InliningInstructionTranslator(fn, code, f_locals, fn.__globals__, self.output,
                                           cells, parent=self)
        grad_mode = glasstorch.is_grad_enabled()
        try:
            if code.co_flags & 0x20:        # a generator: its body runs as it is read
                return GeneratorVariable(tx)
            return tx.run()
        except Unsupported as e:
            e.user_stack.insert(0, (code.co_name, tx.lineno, code.co_filename))
            e.user_positions.insert(0, tx.instructions[tx.ip - 1].positions)
            if glasstorch.is_grad_enabled() != grad_mode:    # broke inside a `with no_grad()`
                glasstorch._C._set_grad_enabled(grad_mode)
                e.breakable = False
            raise

    # -- with blocks: grad modes --------------------------------------------------------

    def BEFORE_WITH(self, inst):
        manager = self.pop()
        value = manager.as_python_constant() if manager.is_python_constant() else None
        if isinstance(value, glasstorch.amp.autocast):
            return self._enter_autocast(value)
        from ..autograd.profiler import record_function
        if isinstance(value, record_function):     # a profiler range: nothing in the graph
            self.push(NoOpExitVariable())
            self.push(ConstantVariable(None))
            return
        enabled = _grad_mode_of(value)
        if enabled is None:
            raise Unsupported("Unsupported context manager",
                              f"Dynamo does not trace `with {type(value).__name__}`.")
        previous = glasstorch.is_grad_enabled()
        self.set_grad_enabled(enabled)
        self.push(GradModeExitVariable(previous))
        self.push(ConstantVariable(None))

    def _enter_autocast(self, mode) -> None:
        """``with torch.autocast(...)``: the region opens and closes in the graph
        (``_enter_autocast`` / ``_exit_autocast`` nodes) and while tracing, so the
        ops inside are traced in its dtypes."""
        from ..amp import autocast_mode
        args = (mode.device, mode.fast_dtype, mode._enabled, None)
        node = self.output.graph.call_function(autocast_mode._enter_autocast, args)
        node.meta["stack_trace"] = _stack_trace()
        traced = autocast_mode._enter_autocast(*args)
        self.push(AutocastExitVariable(node, traced))
        self.push(ConstantVariable(None))

    def set_grad_enabled(self, enabled: bool) -> None:
        """Grad mode changes inside the graph (a node) and while tracing."""
        if enabled != glasstorch.is_grad_enabled():
            self.output.graph.call_function(glasstorch._C._set_grad_enabled, (enabled,))
            glasstorch._C._set_grad_enabled(enabled)

    # -- return -------------------------------------------------------------------------

    def RETURN_VALUE(self, inst):
        self.returned = self.pop()

    def RETURN_CONST(self, inst):
        self.returned = wrap_constant(inst.argval)


def _grad_mode_of(manager):
    """The grad mode a ``with`` manager sets (None: not a grad-mode manager)."""
    from ..autograd.grad_mode import enable_grad, no_grad, set_grad_enabled
    if isinstance(manager, no_grad):
        return False
    if isinstance(manager, enable_grad):
        return True
    if isinstance(manager, set_grad_enabled):
        return manager.mode
    return None


class AutocastExitVariable(VariableTracker):
    """The ``__exit__`` an autocast ``with`` leaves on the stack."""

    def __init__(self, node, traced):
        self.node, self.traced = node, traced

    def call_function(self, tx, args, kwargs):
        from ..amp import autocast_mode
        exit_node = tx.output.graph.call_function(autocast_mode._exit_autocast, (self.node,))
        exit_node.meta["stack_trace"] = _stack_trace()
        autocast_mode._exit_autocast(self.traced)
        return ConstantVariable(None)


class NoOpExitVariable(VariableTracker):
    """The ``__exit__`` of a ``with`` that leaves no trace in the graph (a
    profiler range, as PyTorch's Dynamo treats ``record_function``)."""

    def call_function(self, tx, args, kwargs):
        return ConstantVariable(None)


class GradModeExitVariable(VariableTracker):
    """The ``__exit__`` a grad-mode ``with`` leaves on the stack."""

    def __init__(self, previous: bool):
        self.previous = previous

    def call_function(self, tx, args, kwargs):
        tx.set_grad_enabled(self.previous)
        return ConstantVariable(None)


_NOT_FOLDED = object()


@functools.cache
def _folded_while_tracing() -> dict:
    """Functions whose answer Dynamo knows while it traces: ``is_compiling()``
    is True in traced code (it runs eagerly everywhere else)."""
    from .. import compiler
    from . import is_compiling
    return {compiler.is_compiling: True, compiler.is_dynamo_compiling: True,
            is_compiling: True, compiler.is_exporting: False}


class FoldedCallVariable(VariableTracker):
    """A call answered while tracing (``torch.compiler.is_compiling()``)."""

    def __init__(self, answer):
        self.answer = answer

    def call_function(self, tx, args, kwargs):
        return ConstantVariable(self.answer)


class CondVariable(VariableTracker):
    """``torch.cond(pred, true_fn, false_fn, operands)``: each branch traced into a
    subgraph (``cond_true_0``, ``cond_false_0``), the choice left to the graph."""

    def call_function(self, tx, args, kwargs):
        from .output_graph import SubgraphOutput
        names = ("pred", "true_fn", "false_fn", "operands")
        bound = dict(zip(names, args)) | kwargs
        pred, operands = bound["pred"], bound.get("operands", TupleVariable([]))
        items = operands.unpack()
        if not all(isinstance(v, TensorVariable) for v in items):
            raise Unsupported("torch.cond with operands that are not tensors")
        if pred.is_python_constant():          # a Python bool: the branch is known now
            branch = bound["true_fn"] if pred.as_python_constant() else bound["false_fn"]
            return branch.call_function(tx, items, {})
        output = tx.output
        pred_arg = output._to_arg(pred)        # the predicate is the first input read
        index = sum(name.startswith("cond_true_") for name in output.submodules)
        branches, results = [], []
        for kind in ("true", "false"):
            sub = SubgraphOutput(output, items)
            fn = bound[f"{kind}_fn"]
            inner = InliningInstructionTranslator(fn.fn, fn.fn.__code__, bind_args(
                fn.fn, fn.fn.__code__, sub.operands, {}), fn.fn.__globals__, sub, {}, parent=tx)
            returned = inner.run()
            outs = returned.unpack() if isinstance(returned, BaseListVariable) else [returned]
            if not all(isinstance(o, TensorVariable) for o in outs):
                raise Unsupported("torch.cond branch returns something that is not a tensor")
            if isinstance(returned, BaseListVariable):   # PyTorch flattens a tuple of
                for o in outs:                            # outputs through a local `child`
                    if o.node.op != "placeholder":
                        o.node._rename("child")
            sub.graph.output(tuple(o.node for o in outs))
            name = f"cond_{kind}_{index}"
            output.submodules[name] = GraphModule(glasstorch.nn.Module(), sub.graph)
            branches.append(output.graph.get_attr(name))
            results.append([o.example for o in outs])
        true_out, false_out = results
        if [(o.shape, o.dtype) for o in true_out] != [(o.shape, o.dtype) for o in false_out]:
            raise Unsupported("torch.cond branches return different metadata")
        node = output.graph.call_function(glasstorch.ops.higher_order.cond, (
            pred_arg, branches[0], branches[1], tuple(sub.order)))
        node.meta["example_value"] = tuple(true_out)
        gets = []
        for i, example in enumerate(true_out):
            item = output.graph.call_function(operator.getitem, (node, i))
            item.meta["example_value"] = example
            gets.append(TensorVariable(item, example))
        for made in (*branches, node, *(g.node for g in gets)):
            made.meta["stack_trace"] = _stack_trace()
        return gets[0] if not isinstance(returned, BaseListVariable) else TupleVariable(gets)


def graph_break():
    """``torch._dynamo.graph_break()``: a break here (nothing at run time)."""


class InliningInstructionTranslator(InstructionTranslatorBase):
    """A callee's bytecode, run inside its caller's graph."""

    yields = 0

    def resume_generator(self):
        """A generator's body run on to its next ``yield``: the value, or None
        once it returns.  Its consumer (``sum``, a ``for`` loop) asks for each
        item in turn, so the two interleave in the graph as they run in Python."""
        self.yielded = None
        self.run()
        return self.yielded


# the most values Dynamo lets one generator yield before leaving the frame eager
_MAX_YIELDS = 1000


class InstructionTranslator(InstructionTranslatorBase):
    """The frame being compiled: its graph ends at the return or at a break."""

    def __init__(self, fn, code, f_locals, f_globals, closure_cells, breakable: bool,
                 dynamic_dims=None):
        super().__init__(fn, code, {}, f_globals, OutputGraph(dynamic_dims, code), {})
        self.breakable = breakable
        self.symbolic_locals = {name: self.wrap(value, LocalSource(name))
                                for name, value in f_locals.items()}
        self.closure_cells = {name: self.wrap(value, LocalSource(name))
                              for name, value in closure_cells.items()}
        self.graph_break: Break | None = None
        self.try_ranges = [(e.start, e.end) for e in dis.Bytecode(code).exception_entries]

    def run_frame(self) -> FrameResult:
        _TX_STACK.append(self)
        grad_mode = glasstorch.is_grad_enabled()
        try:
            while self.returned is None and self.graph_break is None:
                inst = self.instructions[self.ip]
                if inst.starts_line:
                    self.lineno = inst.starts_line
                stack, locals_, kw_names = list(self.stack), dict(self.symbolic_locals), \
                    self.kw_names
                self.ip += 1
                try:
                    self.step(inst)
                except Unsupported as e:
                    e.user_stack.insert(0, (self.code.co_name, self.lineno, self.code.co_filename))
                    e.user_positions.insert(0, inst.positions)
                    if not self._can_break_at(inst) or not getattr(e, "breakable", True):
                        raise
                    self.graph_break = Break(inst, e, stack, locals_, kw_names)
        finally:
            _TX_STACK.pop()
            glasstorch._C._set_grad_enabled(grad_mode)
        return FrameResult(self.output, self.returned, self.graph_break)

    def _can_break_at(self, inst) -> bool:
        if not self.breakable or self.code.co_cellvars:
            return False
        if any(start <= inst.offset < end for start, end in self.try_ranges):
            return False
        return inst.opname in ("CALL", "CALL_FUNCTION_EX") or \
            inst.opname.startswith("POP_JUMP") and "NONE" not in inst.opname


# -- builtins ---------------------------------------------------------------------------

_DATA_DEPENDENT_BRANCH = dict(
    gb_type="Data-dependent branching",
    explanation="Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). Dynamo "
                "does not support tracing dynamic control flow.",
    hints=("For the common pattern `if tensor_cond: x = transform(x)` (e.g. clamping inf/nan "
           "values), consider making the code branchless by always applying the transform. "
           "Operations like torch.clamp, torch.nan_to_num, and torch.where are typically no-ops "
           "on well-behaved inputs and compile without graph breaks.",
           "This graph break is fundamental - it is unlikely that Dynamo will ever be able to "
           "trace through your code. Consider finding a workaround.",
           "Use `torch.cond` to express dynamic control flow."),
    gb_id="gb0170")


def _condition_trace(node) -> str:
    """How a branch's tensor was computed, for the data-dependent-branch error:
    the graph inputs it comes from, then the function calls leading to it, each
    under its source line (PyTorch's format_tensor_computation_trace)."""
    inputs, calls, seen = [], [], set()

    def where(n):
        match = re.search(r'(File "[^"]+", line \d+, in \S+)\n\s*(.*)',
                          n.meta.get("stack_trace") or "")
        return [f"# {match.group(1)}, code: {match.group(2).strip()}"] if match else []

    def walk(n):
        if n is None or n.name in seen:
            return
        seen.add(n.name)
        if n.op == "placeholder":
            inputs.append(where(n) + [f"{n.name}: graph input ({n.target})"])
        elif n.op == "call_function" and len(calls) < 20:
            shown = ", ".join(a.name if isinstance(a, Node) else repr(a) for a in n.args)
            calls.append(where(n) + [f"{n.name} = "
                                     f"{getattr(n.target, '__name__', n.target)}({shown})"])
            for a in n.args:
                if isinstance(a, Node):
                    walk(a)
    walk(node)
    if not inputs and not calls:
        return ""
    lines = [line for block in inputs + calls[::-1] for line in block + [""]]
    return "\n\n  The branch condition involves a tensor computed as follows:\n" + \
        "\n".join(f"    {line}" for line in lines)


class BuiltinVariable(VariableTracker):
    """A Python builtin: computed now on constants and on what tracing knows
    (lengths, types, shapes); ``print`` and the like are graph breaks."""

    def __init__(self, fn):
        self.fn = fn

    def python_type(self):
        return types.BuiltinFunctionType

    def as_python(self, outputs):
        return self.fn

    def call_function(self, tx, args, kwargs):
        fn = self.fn
        handler = BUILTINS.get(fn)
        if handler is not None and handler is not _break:
            result = handler(tx, args, kwargs)
            if result is not None:
                return result
        if handler is not _break and not any(isinstance(a, TensorVariable) for a in args) \
                and all(a.is_python_constant() for a in [*args, *kwargs.values()]):
            try:
                return wrap_constant(fn(*[a.as_python_constant() for a in args],
                                        **{k: v.as_python_constant() for k, v in kwargs.items()}))
            except Exception as e:
                raise Unsupported(f"{fn.__name__} raised {type(e).__name__}") from None
        types_, name = [_type_name(a) for a in args], fn.__name__
        raise Unsupported("Failed to trace builtin operator",
                          f"Dynamo does not know how to trace builtin operator `{name}` "
                          f"with argument types {types_} (has_kwargs {bool(kwargs)})",
                          culprit=fn, hints=(
                              f"Avoid calling builtin `{name}` with argument types {types_}. "
                              f"Consider using an equivalent alternative function/method to "
                              f"`{name}`.",
                              "If you are attempting to call a logging function (e.g. `print`), "
                              "you can try adding it to "
                              "`torch._dynamo.config.reorderable_logging_functions`.",
                              "Please report an issue to PyTorch."),
                          context=f"builtin {name} {[type(a) for a in args]} {bool(kwargs)}",
                          gb_id="gb0059")


def _type_name(var) -> str:
    if isinstance(var, TensorVariable):
        return "Tensor"
    try:
        return var.python_type().__name__
    except Unsupported:
        return "object"


def _break(tx, args, kwargs):
    return None


def _fold(tx, args, kwargs):
    """No rule of its own: computed on constant arguments (BuiltinVariable)."""
    return None


def _len(tx, args, kwargs):
    (obj,) = args
    if isinstance(obj, TensorVariable):
        if not obj.example.shape:
            raise Unsupported("len() of a 0-d tensor")
        return tx.output.size_var(obj, 0, obj.example.shape[0])
    if isinstance(obj, (BaseListVariable, ConstDictVariable)):
        return ConstantVariable(len(obj.items))
    if isinstance(obj, NNModuleVariable):
        return ConstantVariable(len(obj.module))
    return None


def _isinstance(tx, args, kwargs):
    obj, cls = args
    classes = cls.as_python_constant() if cls.is_python_constant() else None
    if classes is None:
        return None
    if isinstance(obj, TensorVariable):
        return ConstantVariable(isinstance(obj.example, classes) or
                                _tensor_isinstance(obj, classes))
    return ConstantVariable(issubclass(obj.python_type(), classes))


def _tensor_isinstance(obj, classes):
    classes = classes if isinstance(classes, tuple) else (classes,)
    real = getattr(obj, "real_type", glasstorch.Tensor)
    return any(c is glasstorch.Tensor or (c is glasstorch.nn.Parameter and
                                          issubclass(real, glasstorch.nn.Parameter))
               for c in classes)


def _range(tx, args, kwargs):
    values = [a.as_python_constant() for a in args]
    return RangeVariable([ConstantVariable(v) for v in range(*values)])


def _iterate(kind):
    def handler(tx, args, kwargs):
        if not args:
            return kind([])
        return kind(list(args[0].unpack()))
    return handler


def _enumerate(tx, args, kwargs):
    start = args[1].as_python_constant() if len(args) > 1 else 0
    return ListIteratorVariable([TupleVariable([ConstantVariable(i), v])
                                 for i, v in enumerate(args[0].unpack(), start)])


def _zip(tx, args, kwargs):
    return ListIteratorVariable([TupleVariable(list(items))
                                 for items in zip(*[a.unpack() for a in args])])


def _reversed(tx, args, kwargs):
    return ListIteratorVariable(list(reversed(args[0].unpack())))


def _getattr(tx, args, kwargs):
    obj, name = args[0], args[1].as_python_constant()
    try:
        return tx.getattr(obj, name)
    except Unsupported:
        if len(args) == 3:
            return args[2]
        raise


def _hasattr(tx, args, kwargs):
    try:
        tx.getattr(args[0], args[1].as_python_constant())
        return ConstantVariable(True)
    except Unsupported:
        return ConstantVariable(False)


def _data_dependent(tx, args, kwargs):
    if args and isinstance(args[0], TensorVariable):
        raise item_unsupported()
    return None


def _min_max(fn):
    def handler(tx, args, kwargs):
        if len(args) == 1 and not isinstance(args[0], TensorVariable):
            args = args[0].unpack()
        if all(a.is_python_constant() for a in args) and not kwargs:
            return ConstantVariable(fn(a.as_python_constant() for a in args))
        return None
    return handler


def _abs(tx, args, kwargs):
    if isinstance(args[0], TensorVariable):
        return tx.output.call("call_function", abs, args, {})
    return None


def _type(tx, args, kwargs):
    if len(args) == 1:
        if isinstance(args[0], TensorVariable):
            return ObjectVariable(type(args[0].example) if not isinstance(
                args[0].example, glasstorch._subclasses.fake_tensor.FakeTensor)
                else glasstorch.Tensor)
        return ObjectVariable(args[0].python_type())
    return None


def _super(tx, args, kwargs):
    """``super()`` in a method, as Python resolves it: the class from the
    method's ``__class__`` cell, the instance from its first argument."""
    cell = tx.closure_cells.get("__class__")
    first = tx.code.co_varnames[0] if tx.code.co_argcount and not (args or kwargs) else None
    if cell is None or first not in tx.symbolic_locals:
        return None
    return SuperVariable(cell.as_python(None), tx.symbolic_locals[first])


class SuperVariable(VariableTracker):
    """``super()``: attributes found after ``cls`` in the instance's MRO; a
    method is inlined with the same ``self``."""

    def __init__(self, cls, obj):
        self.cls, self.obj = cls, obj

    def var_getattr(self, tx, name):
        instance = self.obj.as_python(None)
        mro = type(instance).__mro__
        for klass in mro[mro.index(self.cls) + 1:]:
            if name in vars(klass):
                value = vars(klass)[name]
                if isinstance(value, types.FunctionType):
                    return UserFunctionVariable(value, None, self_var=self.obj)
                break
        raise Unsupported(f"super().{name}", "Dynamo traces methods found through super().")


def _sum(tx, args, kwargs):
    """``sum(items, start=0)``: one addition per item read, from the start value
    on, named as PyTorch's traced ``sum`` names them (each item ``element``,
    each partial sum ``value``); on constants alone, computed now."""
    if not args or len(args) > 2 or set(kwargs) - {"start"}:
        return None
    if isinstance(args[0], BaseListVariable) and all(i.is_python_constant()
                                                      for i in args[0].items):
        return None
    iterator = args[0] if isinstance(args[0], (GeneratorVariable, ListIteratorVariable)) \
        else ListIteratorVariable(args[0].unpack())
    total = args[1] if len(args) == 2 else kwargs.get("start", ConstantVariable(0))
    while (item := iterator.next_item()) is not None:
        if isinstance(item, TensorVariable) and item.node.op != "placeholder":
            item.set_name_hint("element")
        total = tx.apply(operator.add, [total, item])
        if isinstance(total, TensorVariable):
            total.set_name_hint("value")
    return total


BUILTINS = {
    super: _super, print: _break, sum: _sum, input: _break, open: _break, id: _break,
    len: _len, isinstance: _isinstance, range: _range, tuple: _iterate(TupleVariable),
    list: _iterate(ListVariable), enumerate: _enumerate, zip: _zip, reversed: _reversed,
    getattr: _getattr, hasattr: _hasattr, bool: _data_dependent, int: _data_dependent,
    float: _data_dependent, min: _min_max(min), max: _min_max(max), abs: _abs, type: _type,
    iter: lambda tx, args, kwargs: ListIteratorVariable(args[0].unpack()),
    itertools.chain: lambda tx, args, kwargs: ListIteratorVariable(
        [item for arg in args for item in arg.unpack()]),
    **dict.fromkeys((str, repr, round, divmod, pow, any, all, sorted, callable,
                     issubclass, dict, set, frozenset, ord, chr, hash), _fold),
}


def _hashable(value) -> bool:
    try:
        hash(value)
        return True
    except TypeError:
        return False


def is_traceable_function(value) -> bool:
    """A function whose call goes into the graph: glasstorch's own functions,
    ``torch.nn.functional``, Tensor methods taken from the class, and custom ops."""
    module = getattr(value, "__module__", None) or ""
    if type(value).__name__ in ("OpOverload", "OpOverloadPacket", "CustomOpDef"):
        return True
    if not callable(value) or isinstance(value, type):
        return False
    if getattr(value, "_dynamo_allow_in_graph", False):
        return True
    if module == "glasstorch" or module.startswith(("glasstorch.", "torch")):
        if module.startswith(("glasstorch._dynamo", "glasstorch.compiler",
                              "glasstorch.autograd.grad_mode",      # inlined: no_grad().clone()
                              "glasstorch.nn.modules", "glasstorch.optim",
                              "glasstorch.utils", "glasstorch.fx", "glasstorch._functorch")):
            return False
        return True
    return False


def _is_autograd_function_apply(value) -> bool:
    """``MyFunction.apply``: one node in the graph, its forward run on the fakes
    (PyTorch traces it into a higher-order op; the node keeps the backward)."""
    owner = getattr(value, "__self__", None)
    return getattr(value, "__name__", None) == "apply" and isinstance(owner, type) and \
        issubclass(owner, glasstorch.autograd.Function)


def bind_args(fn, code, args, kwargs, defaults=None) -> dict:
    """The callee's locals at entry: positional and keyword arguments, defaults,
    ``*args`` as a tuple and ``**kwargs`` as a dict."""
    names = code.co_varnames
    argcount, kwonly = code.co_argcount, code.co_kwonlyargcount
    f_locals: dict = {}
    positional = list(args[:argcount])
    for name, value in zip(names, positional):
        f_locals[name] = value
    extra = list(args[argcount:])
    pos = argcount + kwonly
    if code.co_flags & 0x04:
        f_locals[names[pos]] = TupleVariable(extra)
        pos += 1
    elif extra:
        raise Unsupported(f"{code.co_name}() takes {argcount} positional arguments")
    if defaults is None:
        defaults = [wrap_constant(d) if is_constant_value(d) or isinstance(d, (tuple, list))
                    else ObjectVariable(d) for d in (fn.__defaults__ or ())]
    for i, name in enumerate(names[:argcount]):
        if name in f_locals:
            continue
        if name in kwargs:
            f_locals[name] = kwargs.pop(name)
        elif i >= argcount - len(defaults):
            f_locals[name] = defaults[i - (argcount - len(defaults))]
        else:
            raise Unsupported(f"{code.co_name}() missing argument {name!r}")
    kwdefaults = getattr(fn, "__kwdefaults__", None) or {}
    for name in names[argcount:argcount + kwonly]:
        if name in kwargs:
            f_locals[name] = kwargs.pop(name)
        elif name in kwdefaults:
            f_locals[name] = wrap_constant(kwdefaults[name]) \
                if is_constant_value(kwdefaults[name]) else ObjectVariable(kwdefaults[name])
        else:
            raise Unsupported(f"{code.co_name}() missing keyword argument {name!r}")
    if code.co_flags & 0x08:
        f_locals[names[pos]] = ConstDictVariable(kwargs)
    elif kwargs:
        raise Unsupported(f"{code.co_name}() got unexpected keyword arguments {list(kwargs)}")
    return f_locals


def _slice(parts: list) -> VariableTracker:
    """A slice of trackers: a constant, unless a bound is a symbolic size."""
    if any(isinstance(p, SymNodeVariable) for p in parts):
        return SliceVariable(parts)
    return ConstantVariable(slice(*(p.as_python_constant() for p in parts)))
