"""The dispatcher (c10/core/dispatch: Dispatcher, OperatorEntry, KernelFunction).

Every operator has an ``OperatorEntry``: its schema, the kernels registered per
dispatch key (runtime or alias key), and a computed *table* with one slot per
runtime key.  A call goes:

    OpOverload.__call__(*args, **kwargs)
        ks     = (union of tensor-argument key sets | tls.included) - tls.excluded
        ks    &= entry.fallthrough_mask[highest backend of ks]   # skip fallthrough keys
        key    = highest_priority_key(ks)                       # two bit_length()s
        kernel = entry.table[key]                               # a list index
        kernel(*args, **kwargs)          (or kernel(ks, *args, ...) if it redispatches)

A kernel that handles a cross-cutting key (autograd, autocast, Python) takes
the key set it was called with and continues below its own key with
``op.redispatch(ks & full_after(its_key), ...)``; redispatch does not look at
thread-local state again, exactly as in PyTorch.

How a registration on an alias key fills the table is ``_compute_slot`` below,
which follows OperatorEntry::computeDispatchTableEntry step by step.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import warnings

from .._core import dispatch_key as dk
from .._core import startup_cache
from .._core.dispatch_key import DispatchKey
from .._core.tls import state as _tls
from .._tensor import Tensor
from .schema import parse_schema

__all__ = ["KernelFunction", "OperatorEntry", "OpOverload", "OpOverloadPacket", "dispatcher",
           "dispatch_trace", "fallthrough_kernel"]

# Calling conventions of a kernel.
UNBOXED = 0   # kernel(*args, **kwargs): backend kernels, composites
KEYSET = 1    # kernel(keyset, *args, **kwargs): kernels that redispatch
BOXED = 2     # kernel(op, keyset, args, kwargs): fallbacks that serve every operator


class KernelFunction:
    """A registered kernel: the function, how to call it, and where it came from."""

    __slots__ = ("fn", "convention", "debug")

    def __init__(self, fn, convention=UNBOXED, debug=""):
        self.fn = fn
        self.convention = convention
        self.debug = debug

    @property
    def is_fallthrough(self) -> bool:
        return self.fn is fallthrough_kernel


def fallthrough_kernel(*args, **kwargs):
    """``torch.library.fallthrough_kernel``: registered on a key, it makes
    dispatch skip that key (the key's bit is masked out; nothing is called)."""
    raise AssertionError("fallthrough_kernel is never called")


def _caller_site(depth=3) -> str:
    frame = sys._getframe(depth)
    return f"registered at {frame.f_code.co_filename}:{frame.f_lineno}"


class OperatorEntry:
    """One operator overload's registrations and its computed dispatch table."""

    def __init__(self, schema):
        self.schema = schema
        self.name = schema.name if not schema.overload_name else f"{schema.name}.{schema.overload_name}"
        self.kernels: dict[DispatchKey, list[KernelFunction]] = {}
        self.table: list = [None] * dk.NUM_RUNTIME_KEYS
        self.fallthrough_mask = [-1] * (dk.NUM_BACKENDS + 1)  # last: no backend bit
        self.unboxed_below: dict = {}     # key set -> kernel fn (see unboxed_kernel_for)
        self.debug = ""

    # -- registration ------------------------------------------------------------

    def register(self, key: DispatchKey, kernel: KernelFunction, update=True) -> None:
        stack = self.kernels.setdefault(key, [])
        if stack and not kernel.is_fallthrough:
            warnings.warn(
                "Warning only once for all operators,  other operators may also be overridden.\n"
                f"  Overriding a previously registered kernel for the same operator and the same "
                f"dispatch key\n  operator: {self.schema}\n  dispatch key: {key.name}\n"
                f"  previous kernel: {stack[0].debug}\n       new kernel: {kernel.debug}",
                UserWarning, stacklevel=4)
        stack.insert(0, kernel)
        if update:
            self._changed()

    def _changed(self) -> None:
        """Recompute the table now, or once at the end of a bulk registration."""
        if _deferred is not None:
            _deferred.add(self)
        else:
            self.update_table()

    def deregister(self, key: DispatchKey, kernel: KernelFunction) -> None:
        stack = self.kernels.get(key, [])
        if kernel in stack:
            stack.remove(kernel)
            if not stack:
                del self.kernels[key]
            self._changed()

    def has_kernel(self, key: DispatchKey) -> bool:
        return key in self.kernels

    # -- the table ------------------------------------------------------------

    def update_table(self) -> None:
        """Recompute the slots and the per-backend fallthrough masks.  Which
        registered key fills which slot depends only on the set of keys with
        kernels (``_slot_plan``, computed once per such set); the kernels are
        then read off this operator's stacks."""
        table, sources = dispatcher.fallback_slots()
        kernels = self.kernels
        plan, claimed = _slot_plan(frozenset(kernels))
        fallthrough = {k for k in dispatcher.fallthrough_fallback_keys if k not in claimed}
        for slot, source, label in plan:
            kernel = kernels[source][0]
            table[slot], sources[slot] = kernel, label
            if kernel.is_fallthrough:
                fallthrough.add(slot)
        self.table, self.sources = table, sources
        self.fallthrough_mask = list(_fallthrough_masks(frozenset(fallthrough)))
        self.unboxed_below.clear()

    def unboxed_kernel_for(self, ks: int):
        """The plain (UNBOXED) kernel ``redispatch(ks)`` would call, or None; memoized
        per key set in ``unboxed_below`` until the table changes.  Lets a kernel
        that redispatches on every call (autograd's) skip the key computation."""
        ks &= self.fallthrough_mask[(ks & 0xFFFF).bit_length() - 1]
        kernel = self.table[dk.highest_priority_key(ks)]
        return kernel.fn if kernel is not None and kernel.convention == UNBOXED else None

    def _compute_slot(self, key: DispatchKey):
        """OperatorEntry::computeDispatchTableEntry: (kernel, label) for one runtime key."""
        rule = _slot_rule(frozenset(self.kernels), key)
        if rule is None:
            fallback = dispatcher.fallbacks.get(key)                     # 3.
            return (fallback, "backend fallback") if fallback is not None else None
        source, label = rule
        return self.kernels[source][0], label

    def available_keys(self):
        return [k for k in _TABLE_ORDER if self.table[k] and not self.table[k].is_fallthrough
                and k != DispatchKey.Undefined]

    def missing_kernel_error(self, key: DispatchKey) -> NotImplementedError:
        backend = key.name
        avail = ", ".join(k.name for k in self.available_keys())
        return NotImplementedError(
            f"Could not run '{self.name}' with arguments from the '{backend}' backend. This could "
            "be because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build). If you are a Facebook "
            "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
            f"possible resolutions. '{self.name}' is only available for these backends: [{avail}].")


_deferred = None      # the operators a bulk registration changed (see deferred_updates)


@contextlib.contextmanager
def deferred_updates():
    """Registrations inside the block recompute each changed operator's table
    once, at its end, instead of at every registration: what importing
    glasstorch does for its ~2000 overloads (nothing may be dispatched inside)."""
    global _deferred
    if _deferred is not None:
        yield
        return
    _deferred = set()
    try:
        yield
    finally:
        changed, _deferred = _deferred, None
        for entry in changed:
            entry.update_table()


_RUNTIME_KEYS = [k for k in dk.DispatchKey if not dk.is_alias(k)]
_RUNTIME_BY_FUNC, _FUNC_KEYS = dk._RUNTIME_BY_FUNC, dk._FUNC_KEYS
# The order PyTorch lists runtime keys in (its table layout): functionalities in
# priority order, a per-backend one expanded in place (CPU ... Meta for Dense).
_TABLE_ORDER = [k for f in range(dk.END_OF_FUNCTIONALITY)
                for k in (_RUNTIME_BY_FUNC[f] or [_FUNC_KEYS[f]])]
_ALIAS_COVERAGE = {alias: set(dk.runtime_keys_of_alias(alias))
                   for alias in dk.DispatchKey if dk.is_alias(alias)}


def _covers(alias: DispatchKey, key: DispatchKey) -> bool:
    return key in _ALIAS_COVERAGE[alias]


def _slot_rule(keys: frozenset, key: DispatchKey):
    """(the registered key whose kernel fills runtime ``key``, its label), or
    None when only a backend fallback can: the first of computeDispatchTableEntry's
    rules that matches, given the keys that have kernels."""
    if key in keys:                                                      # 1. direct
        return key, "kernel"
    for alias in (DispatchKey.CompositeExplicitAutogradNonFunctional,   # 2.1, 2.2
                  DispatchKey.CompositeExplicitAutograd):
        if alias in keys and _covers(alias, key):
            return alias, "default backend kernel"
    cia = DispatchKey.CompositeImplicitAutograd                          # 2.3
    if cia in keys and _covers(cia, key):
        backend = dk.backend_key_for_autograd_key(key)
        if not ((backend is not None and backend in keys) or
                DispatchKey.CompositeExplicitAutograd in keys):
            return cia, "math kernel"
    if DispatchKey.Autograd in keys and _covers(DispatchKey.Autograd, key):   # 2.4
        return DispatchKey.Autograd, "autograd kernel"
    return None


@functools.lru_cache(maxsize=None)
def _slot_plan(keys: frozenset) -> tuple:
    """Every (runtime key, registered key, label) that a kernel fills, for an
    operator whose kernels are registered at ``keys``; the other slots are
    backend fallbacks.  Few operators differ in ``keys``, so this is computed
    a few dozen times for ~2000 operators."""
    claimed = set()
    for key in keys:
        claimed.update(_ALIAS_COVERAGE.get(key, (key,)))
    plan = []
    for key in claimed:
        rule = _slot_rule(keys, key)
        if rule is not None:
            plan.append((key, *rule))
    return tuple(plan), frozenset(k for k, _, _ in plan)


@functools.lru_cache(maxsize=None)
def _fallthrough_masks(keys: frozenset) -> tuple:
    """Per backend, the key-set bits to keep when ``keys`` hold fallthrough
    kernels (a fallthrough's functionality bit is masked out)."""
    masks = [-1] * (dk.NUM_BACKENDS + 1)
    for key in keys:
        func, key_backend = dk._PARTS_OF[key]
        bit = ~dk.functionality_bit(func)
        if key_backend is None:
            masks = [m & bit for m in masks]
        else:
            masks[key_backend] &= bit
    return tuple(masks)


class Dispatcher:
    """The singleton: every operator by name, and the per-key boxed fallbacks."""

    def __init__(self):
        self.operators: dict[str, OperatorEntry] = {}
        self.fallbacks: dict[DispatchKey, KernelFunction] = {}
        self.libraries: dict[str, str] = {}  # namespace -> where it was defined
        self._fallback_slots = None            # see fallback_slots
        self.fallthrough_fallback_keys: frozenset = frozenset()

    def define(self, schema_text: str, debug: str = "") -> OperatorEntry:
        schema = parse_schema(schema_text) if isinstance(schema_text, str) else schema_text
        entry = OperatorEntry(schema)
        if entry.name in self.operators:
            raise RuntimeError(f"Tried to register an operator ({schema}) with the same name and "
                               f"overload name multiple times. Each overload's schema should only "
                               f"be registered with a single call to def(). Duplicate "
                               f"registration: {debug}. Original registration: "
                               f"{self.operators[entry.name].debug}")
        entry.debug = debug
        entry._changed()
        self.operators[entry.name] = entry
        namespace, _, base = schema.name.partition("::")
        _namespace(namespace)._add(base, schema.overload_name, entry)
        return entry

    def undefine(self, entry: OperatorEntry) -> None:
        del self.operators[entry.name]
        namespace, _, base = entry.schema.name.partition("::")
        _namespace(namespace)._remove(base, entry.schema.overload_name)

    def find(self, name: str) -> OperatorEntry | None:
        """``aten::add.Tensor`` or ``aten::mm`` (the default overload)."""
        return self.operators.get(name)

    def register_fallback(self, key: DispatchKey, kernel: KernelFunction) -> None:
        keys = dk.runtime_keys_of_alias(key) if dk.is_alias(key) else [key]
        for k in keys:
            self.fallbacks[k] = kernel
        self._fallbacks_changed()

    def deregister_fallback(self, key: DispatchKey) -> None:
        keys = dk.runtime_keys_of_alias(key) if dk.is_alias(key) else [key]
        for k in keys:
            self.fallbacks.pop(k, None)
        self._fallbacks_changed()

    def _fallbacks_changed(self) -> None:
        self._fallback_slots = None
        for entry in self.operators.values():
            entry._changed()

    def fallback_slots(self) -> tuple:
        """(table, sources) with only the backend fallbacks filled in: the
        start of every operator's table (fresh lists, for the caller to fill)."""
        if self._fallback_slots is None:
            table = [None] * dk.NUM_RUNTIME_KEYS
            sources = [None] * dk.NUM_RUNTIME_KEYS
            for key, kernel in self.fallbacks.items():
                table[key], sources[key] = kernel, "backend fallback"
            self._fallback_slots = (table, sources)
            self.fallthrough_fallback_keys = frozenset(
                k for k, kernel in self.fallbacks.items() if kernel.is_fallthrough)
        table, sources = self._fallback_slots
        return list(table), list(sources)


dispatcher = Dispatcher()


# -- the dispatch trace ----------------------------------------------------------

class DispatchTrace:
    """Records each op's path through the keys; ``print(trace)`` shows it.

    The lines read like PyTorch's ``TORCH_SHOW_DISPATCH_TRACE=1`` output::

        [call] op=[aten::add.Tensor], key=[AutogradCPU]
         [redispatch] op=[aten::add.Tensor], key=[CPU]
    """

    def __init__(self, echo=False):
        self.lines: list[str] = []
        self.echo = echo
        self.depth = 0

    def record(self, kind: str, op_name: str, key: DispatchKey) -> None:
        line = f"{' ' * self.depth}[{kind}] op=[{op_name}], key=[{key.name}]"
        self.lines.append(line)
        if self.echo:
            print(line, file=sys.stderr)

    def __str__(self):
        return "\n".join(self.lines)

    def __enter__(self):
        _traces.append(self)
        return self

    def __exit__(self, *exc):
        _traces.remove(self)


_traces: list[DispatchTrace] = []
if os.environ.get("TORCH_SHOW_DISPATCH_TRACE") or os.environ.get("GLASSTORCH_SHOW_DISPATCH_TRACE"):
    _traces.append(DispatchTrace(echo=True))


def dispatch_trace(echo=False) -> DispatchTrace:
    """``with dispatch_trace() as t: ...`` then ``print(t)``: every call and
    redispatch with the key that handled it."""
    return DispatchTrace(echo=echo)


# Observers see every dispatched call (the profiler's RecordFunction hook):
# ``observer.enter(op, kind, key, args, kwargs)`` before the kernel runs and
# ``observer.exit(op, kind, key)`` after it, where ``kind`` is "call" (an op
# entered the dispatcher; what PyTorch's RecordFunction sees) or "redispatch"
# (a layer handed the same op to the key below).
_observers: list = []


class function_range:
    """``RECORD_FUNCTION(name, inputs)`` inside a C++ kernel (VariableTypeManual's
    "detach"): a range that is not an op call, for the observers that keep
    ranges (the profiler: ``function_enter(name, inputs)``, ``function_exit(name)``)."""

    __slots__ = ("name", "inputs", "observers")

    def __init__(self, name, inputs=()):
        self.name = name
        self.inputs = inputs
        self.observers = [o for o in _observers if hasattr(o, "function_enter")]

    def __enter__(self):
        for observer in self.observers:
            observer.function_enter(self.name, self.inputs)

    def __exit__(self, *exc):
        for observer in reversed(self.observers):
            observer.function_exit(self.name)


def _traced_call(op, kind, ks, key, kernel, args, kwargs):
    for trace in _traces:
        trace.record(kind, op._name, key)
        trace.depth += 1
    try:
        for observer in _observers:
            observer.enter(op, kind, key, args, kwargs)
        return _invoke(op, ks, kernel, args, kwargs)
    finally:
        for observer in _observers:
            observer.exit(op, kind, key)
        for trace in _traces:
            trace.depth -= 1


def _invoke(op, ks, kernel, args, kwargs):
    convention = kernel.convention
    if convention == UNBOXED:
        return kernel.fn(*args, **kwargs)
    if convention == KEYSET:
        return kernel.fn(ks, *args, **kwargs)
    return kernel.fn(op, ks, args, kwargs)


# -- ops.aten.add.Tensor ------------------------------------------------------------

def _keyset_function(schema):
    """Generate ``keyset(args, kwargs) -> int``: the union of the key sets of the
    dispatch-relevant arguments (Tensor, Tensor?, Tensor[], Tensor?[])."""
    lines = ["def keyset(args, kwargs):", "    ks = 0", "    n = len(args)"]
    for i, arg in enumerate(schema.arguments):
        t = arg.type
        if not t.is_tensor_like:
            continue
        get = f"args[{i}] if n > {i} else kwargs.get({arg.name!r})" if not arg.kwarg_only \
            else f"kwargs.get({arg.name!r})"
        lines.append(f"    a = {get}")
        if t.is_list:
            lines.append("    if a is not None:")
            lines.append("        for x in a:")
            lines.append("            if isinstance(x, Tensor): ks |= x._keys")
        else:
            lines.append("    if isinstance(a, Tensor): ks |= a._keys")
    lines.append("    return ks")
    return _compiled_keyset("\n".join(lines))


@functools.cache
def _compiled_keyset(source: str):
    """One function per distinct source: most overloads share their tensor
    arguments' names and places (``self, other``), and so their function."""
    namespace = {"Tensor": Tensor}
    exec(startup_cache.compile_cached(source, "<string>"), namespace)
    return namespace["keyset"]


class OpOverload:
    """``torch.ops.aten.add.Tensor``: one overload, callable, and the unit the
    dispatcher, ``__torch_dispatch__`` and the profiler talk about."""

    def __init__(self, packet, overload_name, entry):
        self._entry = entry
        self._schema = entry.schema
        self.overloadpacket = packet
        self._overloadname = overload_name or "default"
        self._name = entry.name
        self._opname = packet.__name__
        self.__name__ = f"{packet.__name__}.{self._overloadname}"
        self.__qualname__ = self.__name__
        self.__module__ = packet.__module__
        self._keyset = _keyset_function(entry.schema)
        self.tags = []
        self.py_kernels = {}
        self._calls_no_ops = False   # set by the autograd layer for structured ops

    def _no_kernel(self, key, args, kwargs):
        """No kernel for ``key``: an argument that is no tensor but defines
        ``__torch_function__`` (an fx Proxy) gets the call, as PyTorch's op
        wrapper hands it over; otherwise the dispatcher's error."""
        from .torch_function import foreign_override, handle_torch_function
        if foreign_override(args, kwargs):
            return handle_torch_function(self, args + tuple((kwargs or {}).values()), *args,
                                         **kwargs)
        raise self._entry.missing_kernel_error(key)

    def __call__(self, /, *args, **kwargs):
        entry = self._entry
        tls = _tls
        ks = (self._keyset(args, kwargs) | tls.included) & ~tls.excluded
        ks &= entry.fallthrough_mask[(ks & 0xFFFF).bit_length() - 1]
        # highest_priority_key(ks), inlined: functionality bit, then backend bit
        func = (ks >> 16).bit_length()
        per_backend = _RUNTIME_BY_FUNC[func]
        key = _FUNC_KEYS[func] if per_backend is None else \
            per_backend[(ks & 0xFFFF).bit_length() - 1]
        kernel = entry.table[key]
        if kernel is None:
            return self._no_kernel(key, args, kwargs)
        if _traces or _observers:
            return _traced_call(self, "call", ks, key, kernel, args, kwargs)
        convention = kernel.convention
        if convention == UNBOXED:
            return kernel.fn(*args, **kwargs)
        if convention == KEYSET:
            return kernel.fn(ks, *args, **kwargs)
        return kernel.fn(self, ks, args, kwargs)

    def redispatch(self, keyset, /, *args, **kwargs):
        """Call the kernel for the highest key of ``keyset`` (no TLS, no argument
        union: the caller already decided which keys remain)."""
        ks = keyset if keyset.__class__ is int else keyset.repr
        entry = self._entry
        ks &= entry.fallthrough_mask[(ks & 0xFFFF).bit_length() - 1]
        func = (ks >> 16).bit_length()     # highest_priority_key, inlined as in __call__
        per_backend = _RUNTIME_BY_FUNC[func]
        key = _FUNC_KEYS[func] if per_backend is None else \
            per_backend[(ks & 0xFFFF).bit_length() - 1]
        kernel = entry.table[key]
        if kernel is None:
            raise entry.missing_kernel_error(key)
        if _traces or _observers:
            return _traced_call(self, "redispatch", ks, key, kernel, args, kwargs)
        return _invoke(self, ks, kernel, args, kwargs)

    def name(self) -> str:
        return self._name

    def decompose(self, *args, **kwargs):
        """Run the op's CompositeImplicitAutograd kernel (its decomposition into
        other ops), or return NotImplemented if it has none."""
        kernels = self._entry.kernels.get(DispatchKey.CompositeImplicitAutograd)
        if not kernels:
            return NotImplemented
        return _invoke(self, 0, kernels[0], args, kwargs)

    @property
    def namespace(self) -> str:
        return self._schema.name.partition("::")[0]

    def has_kernel_for_dispatch_key(self, key) -> bool:
        """A kernel registered at exactly this key (an alias key's kernels that
        fill its slot don't count), or a Python kernel for it."""
        key = DispatchKey[key] if isinstance(key, str) else key
        return key in self._entry.kernels or key in self.py_kernels

    def __repr__(self):
        return f"<OpOverload(op='{self.overloadpacket._qualified_name}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self.overloadpacket._qualified_name}.{self._overloadname}"

    def __hash__(self):
        return id(self)

    def __reduce__(self):
        return (_lookup_overload, (self._name,))


def _lookup_overload(name):
    ns, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    return getattr(getattr(_namespace(ns), base), overload or "default")


class OpOverloadPacket:
    """``torch.ops.aten.add``: all overloads of one name; calling it picks the
    overload whose schema accepts the arguments."""

    def __init__(self, namespace, name):
        self._namespace = namespace
        self.__name__ = name
        self._qualified_name = f"{namespace}.{name}"
        self.__module__ = f"torch._ops.{namespace}"
        self._overloads: dict[str, OpOverload] = {}

    def _add(self, overload_name, entry):
        op = OpOverload(self, overload_name, entry)
        self._overloads[overload_name or "default"] = op
        setattr(self, overload_name or "default", op)   # a plain attribute: fast lookup
        return op

    def __getattr__(self, name):
        try:
            return self.__dict__["_overloads"][name]
        except KeyError:
            raise AttributeError(f"The underlying op of '{self._qualified_name}' has no overload "
                                 f"name '{name}'") from None

    def overloads(self):
        return list(self._overloads)

    @property
    def _schemas(self):
        return {k: v._schema for k, v in self._overloads.items()}

    def __call__(self, /, *args, **kwargs):
        from .binding import resolve_overload
        op = resolve_overload(list(self._overloads.values()), args, kwargs, self._qualified_name)
        return op(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._qualified_name}')>"

    def __str__(self):
        return self._qualified_name


class _OpNamespace:
    """``torch.ops.aten``: packets by name, created as operators are defined."""

    def __init__(self, name):
        self._ns_name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def _add(self, base, overload, entry):
        packet = self._packets.get(base)
        if packet is None:
            packet = self._packets[base] = OpOverloadPacket(self._ns_name, base)
            setattr(self, base, packet)   # a plain attribute: fast lookup
        return packet._add(overload, entry)

    def _remove(self, base, overload):
        packet = self._packets.get(base)
        if packet is not None:
            name = overload or "default"
            packet._overloads.pop(name, None)
            packet.__dict__.pop(name, None)
            if not packet._overloads:
                del self._packets[base]
                self.__dict__.pop(base, None)

    def __getattr__(self, name):
        packets = self.__dict__["_packets"]
        if name in packets:
            return packets[name]
        raise AttributeError(f"'_OpNamespace' '{self._ns_name}' object has no attribute '{name}'")

    def __dir__(self):
        return list(self._packets)

    def __iter__(self):
        return iter(self._packets)


_namespaces: dict[str, _OpNamespace] = {}


def _namespace(name) -> _OpNamespace:
    ns = _namespaces.get(name)
    if ns is None:
        ns = _namespaces[name] = _OpNamespace(name)
    return ns


class _Ops:
    """``torch.ops``: ``ops.aten.add.Tensor``, ``ops.mylib.foo.default``."""

    def __init__(self):
        self.loaded_libraries: set = set()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _namespace(name)

    def load_library(self, path) -> None:
        """Load a shared library built by ``utils.cpp_extension`` whose
        TORCH_LIBRARY blocks register operators (they appear under ``ops``)."""
        from ..utils._cpp_abi import load_library
        path = os.path.realpath(os.fspath(path))
        load_library(path, os.path.basename(path).split(".")[0], is_python_module=False)
        self.loaded_libraries.add(path)


ops = _Ops()


def dump(name: str) -> str:
    """``torch._C._dispatch_dump``: the registrations of one operator."""
    entry = dispatcher.find(name) or dispatcher.find(name.split(".")[0])
    if entry is None:
        raise RuntimeError(f"Could not find schema for {name}")
    lines = [f"name: {entry.name}", f"schema: {entry.schema}", f"debug: {entry.debug}",
             "alias analysis kind: FROM_SCHEMA"]
    for key in sorted(entry.kernels, key=lambda k: k.value):
        for i, kernel in enumerate(entry.kernels[key]):
            label = key.name + ("[alias]" if dk.is_alias(key) else "") + (" (inactive)" if i else "")
            kind = "fallthrough boxed" if kernel.is_fallthrough else \
                ("boxed" if kernel.convention == BOXED else "boxed unboxed")
            sites = _code_sites(kernel.fn)
            lines.append(f"{label}: {kernel.debug} :: {_kernel_signature(kernel)} [ {kind} ]"
                         + (f" ({sites})" if sites else ""))
    return "\n".join(lines) + "\n"


_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _code_sites(fn) -> str:
    """Where a kernel's code is: the file and line of a kernel function, or of a
    structured op's meta rule and impl (glasstorch's addition to the dump, so a
    reader goes from an op's name to its code in one step)."""
    parts = getattr(fn, "defined_by", None) or (("kernel", fn),)
    sites = []
    for role, f in parts:
        code = getattr(inspect.unwrap(f), "__code__", None) if f is not None else None
        if code is None or "<" in code.co_filename:
            continue
        path = os.path.relpath(code.co_filename, _PACKAGE_PARENT)
        sites.append(f"{role} {path}:{code.co_firstlineno}")
    return ", ".join(sites)


def dump_table(name: str) -> str:
    """``torch._C._dispatch_dump_table``: the computed runtime table."""
    entry = dispatcher.find(name) or dispatcher.find(name.split(".")[0])
    if entry is None:
        raise RuntimeError(f"Could not find schema for {name}")
    lines = []
    for key in _TABLE_ORDER:
        kernel = entry.table[key]
        if kernel is None:
            continue
        prefix = "fallthrough " if kernel.is_fallthrough else ""
        lines.append(f"{key.name}: {prefix}{kernel.debug} [{entry.sources[key]}]")
    return "\n".join(lines) + "\n"


def _kernel_signature(kernel) -> str:
    fn = kernel.fn
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
