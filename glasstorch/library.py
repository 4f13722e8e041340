"""``torch.library``: define operators and register kernels from Python.

This is the same seam the built-in op library uses (the registry calls
``dispatcher.define`` and ``OperatorEntry.register`` just as ``Library`` does),
so a user op is a first-class citizen: it appears under ``torch.ops.<ns>``,
dispatches by key, and shows in ``_dispatch_dump``.

The low level, one registration per call (TORCH_LIBRARY in C++)::

    lib = Library("myops", "DEF")                 # TORCH_LIBRARY(myops, m)
    lib.define("triple(Tensor x) -> Tensor")      #   m.def(...)
    lib.impl("triple", triple_cpu, "CPU")         # TORCH_LIBRARY_IMPL(myops, CPU, m) {m.impl(...)}
    torch.ops.myops.triple(x)

The high level (``glasstorch/_library``): one decorated function becomes an
operator with its kernels, and behaviour is added per concern::

    @custom_op("mylib::myadd", mutates_args=())   # schema from the type hints
    def myadd(x: Tensor, y: Tensor) -> Tensor: ...
    myadd.register_fake(...)                      # Meta / FakeTensor
    myadd.register_autograd(backward, setup_context=...)
    opcheck(myadd, (x, y))                        # were the registrations truthful?

``define``, ``impl``, ``register_kernel``, ``register_fake`` and
``register_autograd`` do the same for an operator named by string.
Registrations live as long as their ``Library`` (``_destroy()`` undoes them),
which is how tests keep namespaces clean; a custom op's library is ``op._lib``.
"""
from __future__ import annotations

import contextlib
import functools
import re
import sys

from ._core.dispatch_key import DispatchKey, DispatchKeySet
from ._dispatcher.dispatcher import (BOXED, KEYSET, UNBOXED, KernelFunction, OpOverload,
                                     dispatcher, fallthrough_kernel, ops)
from ._dispatcher.schema import parse_schema
from ._ops.tags import Tag
from ._library import simple_registry as _simple_registry
from ._library import utils as _utils
from ._library.autograd import Info as _Info, make_autograd_impl as _make_autograd_impl
from ._library.custom_ops import CustomOpDef, custom_op, _maybe_get_opdef
from ._library.fake_impl import get_ctx
from ._library.infer_schema import infer_schema

__all__ = ["Library", "impl", "define", "fallthrough_kernel", "register_fake",
           "register_torch_dispatch", "get_ctx", "custom_op", "infer_schema"]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_ALIAS_ANALYSIS = ("", "FROM_SCHEMA", "CONSERVATIVE")
_DEF_NAMESPACES: set = set()
# "ns/op/key" for every kernel registered from Python (allow_override=False checks it)
_impls: set = set()


def _key(name: str) -> DispatchKey:
    try:
        return DispatchKey[name]
    except KeyError:
        raise ValueError(f"Unknown dispatch key: {name}") from None


def _receiving_keyset_objects(fn):
    """Wrap a ``with_keyset`` kernel: the dispatcher passes key sets as ints."""
    @functools.wraps(fn)
    def kernel(keyset, *args, **kwargs):
        return fn(DispatchKeySet(keyset), *args, **kwargs)
    return kernel


class Library:
    """A handle on one namespace's registrations (``TORCH_LIBRARY`` and friends)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if ns == "prim" and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with "
                             "another name.")
        frame = sys._getframe(1)
        self._where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If you "
                    "were trying to specify implementations, consider using TORCH_LIBRARY_IMPL "
                    "(which can be duplicated).  If you really intended to define operators for "
                    "a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT "
                    "to explicitly indicate this.")
            _DEF_NAMESPACES.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defs: list = []
        self._impls: list = []
        self._fallbacks: list = []
        self._op_impls: set = set()             # this library's share of ``_impls``
        self._registration_handles: list = []   # fake impls, torch_dispatch rules

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Declare an operator; returns its name as written (``foo``, ``ns::foo``)."""
        if self.kind == "IMPL":
            raise RuntimeError(f'def("{schema.split("(")[0]}"): Cannot define an operator inside '
                               "of a TORCH_LIBRARY_IMPL block.  All def()s should be placed in "
                               f"the (unique) TORCH_LIBRARY block for their namespace.")
        if alias_analysis not in _ALIAS_ANALYSIS:
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        if isinstance(tags, Tag):
            tags = (tags,)
        if not all(isinstance(tag, Tag) for tag in tags):
            raise TypeError(f"define(): incompatible function arguments: tags must be a "
                            f"sequence of torch.Tag, got {tuple(tags)!r}")
        name = schema.split("(")[0]
        text = schema if "::" in name else f"{self.ns}::{schema}"
        entry = dispatcher.define(parse_schema(text), f"registered at {self._where}")
        base = entry.schema.name.split("::")[1]
        getattr(getattr(ops, self.ns), base)._overloads[entry.schema.overload_name or "default"] \
            .tags = list(tags)
        self._defs.append(entry)
        return name.split(".")[0]

    def _resolve_op_name(self, op_name, api_name) -> str:
        if isinstance(op_name, str):
            return op_name
        if isinstance(op_name, OpOverload):
            return op_name._name
        raise RuntimeError(f"{api_name} should be passed either a name or an OpOverload object as "
                           f"the first argument, got {type(op_name)}")

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = True) -> None:
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key``
        (a runtime key such as "CPU" or an alias such as "CompositeImplicitAutograd")."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        dispatch_key = dispatch_key or self.dispatch_key
        name = self._resolve_op_name(op_name, "impl")
        impl_key = f"{self.ns}/{name.split('::')[-1]}/{dispatch_key}"
        if not allow_override and impl_key in _impls:
            raise RuntimeError(
                f"This is not allowed since there's already a kernel registered from python "
                f"overriding {name.split('::')[-1]}'s behavior for {dispatch_key} dispatch key "
                f"and {self.ns} namespace.")
        if "::" not in name:
            name = f"{self.ns}::{name}"
        entry = dispatcher.find(name) or dispatcher.find(name + ".default")
        if entry is None:
            raise RuntimeError(f"Could not find schema for {name}")
        key = _key(dispatch_key or "CompositeImplicitAutograd")
        if key == DispatchKey.Meta and DispatchKey.CompositeImplicitAutograd in entry.kernels:
            raise RuntimeError(
                f"We should not register a meta kernel directly to the operator "
                f"'{entry.name.split('::')[1]}', because it has a CompositeImplicitAutograd kernel "
                "in core. Instead we should let the operator decompose, and ensure that we have "
                "meta kernels for the base ops that it decomposes into.")
        if with_keyset:     # Python kernels see a DispatchKeySet, as PyTorch's do
            fn = _receiving_keyset_objects(fn)
        kernel = KernelFunction(fn, KEYSET if with_keyset else UNBOXED,
                                f"registered at {self._where}")
        entry.register(key, kernel)
        self._impls.append((entry, key, kernel))
        _impls.add(impl_key)
        self._op_impls.add(impl_key)

    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=True) -> None:
        """Keep ``fn`` as the operator's fake impl and install it at Meta."""
        source = _utils.get_source(_stacklevel + 1)
        entry = _simple_registry.singleton.find(f"{self.ns}::{op_name}")
        self._registration_handles.append(
            entry.fake_impl.register(fn, source, self, allow_override=allow_override))

    def _register_torch_dispatch_rule(self, op_name, torch_dispatch_class, fn) -> None:
        """How ``torch_dispatch_class`` handles the operator (see register_torch_dispatch)."""
        entry = _simple_registry.singleton.find(f"{self.ns}::{op_name}")
        self._registration_handles.append(
            entry.torch_dispatch_rules.register(torch_dispatch_class, fn))

    def fallback(self, fn, dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """A boxed kernel for every operator at ``dispatch_key``:
        ``fn(op, keyset, args, kwargs)`` (``with_keyset`` is implied: boxed
        fallbacks always receive the key set, as in PyTorch's C++)."""
        if self.ns != "_":
            raise RuntimeError(f"fallback can only be registered using library fragment on the "
                               f"global namespace \"_\" but it is {self.ns}")
        key = _key(dispatch_key or self.dispatch_key)
        kernel = KernelFunction(fn, UNBOXED if fn is fallthrough_kernel else BOXED,
                                f"registered at {self._where}")
        previous = dispatcher.fallbacks.get(key)
        dispatcher.register_fallback(key, kernel)
        self._fallbacks.append((key, previous))

    def _destroy(self) -> None:
        """Undo every registration this library made."""
        for handle in self._registration_handles:
            handle.destroy()
        for entry, key, kernel in reversed(self._impls):
            entry.deregister(key, kernel)
        for key, previous in reversed(self._fallbacks):
            if previous is None:
                dispatcher.deregister_fallback(key)
            else:
                dispatcher.register_fallback(key, previous)
        for entry in reversed(self._defs):
            dispatcher.undefine(entry)
        if self.kind == "DEF":
            _DEF_NAMESPACES.discard(self.ns)
        _impls.difference_update(self._op_impls)
        self._impls, self._fallbacks, self._defs = [], [], []
        self._op_impls, self._registration_handles = set(), []


@contextlib.contextmanager
def _scoped_library(*args, **kwargs):
    """A Library destroyed when the block ends."""
    lib = Library(*args, **kwargs)
    try:
        yield lib
    finally:
        lib._destroy()


# Libraries the functions below create when not given one; they live forever.
_keep_alive: list = []

_NAMELESS_SCHEMA = re.compile(r"\(.*\) -> .*")


def _library_for_registration(namespace: str, lib):
    if lib is not None:
        return lib
    lib = Library(namespace, "FRAGMENT")
    _keep_alive.append(lib)
    return lib


def define(qualname, schema, *, lib=None, tags=()):
    """Define the operator ``qualname`` ("ns::name") with ``schema`` ("(Tensor x) ->
    Tensor"); kernels come from ``impl``/``register_kernel``/``register_fake``.
    The old form ``define(lib, schema)`` returns a decorator that also
    registers the decorated function as the CompositeImplicitAutograd kernel."""
    if isinstance(qualname, Library):
        return _define_and_impl(qualname, schema)
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, "
                         f"got {type(qualname)}")
    namespace, name = _utils.parse_namespace(qualname)
    lib = _library_for_registration(namespace, lib)
    if not _NAMELESS_SCHEMA.fullmatch(schema):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. '
                         f'"(Tensor x) -> Tensor" but got "{schema}"')
    lib.define(name + schema, alias_analysis="", tags=tags)


def _define_and_impl(lib, schema, alias_analysis=""):
    def wrap(f):
        lib.impl(lib.define(schema, alias_analysis), f)
        return f
    return wrap


def _device_type_to_key(device_type: str) -> str:
    if device_type == "default":
        return "CompositeExplicitAutograd"
    return _utils.dispatch_key_for_device(device_type)


def impl(qualname, types, func=None, *, lib=None):
    """Register ``func`` for the device ``types`` ("cpu", "cuda", "default" for all,
    or dispatch key names) of operator ``qualname``; usable as a decorator.  The
    old form ``impl(lib, name, dispatch_key)`` returns a decorator."""
    if isinstance(qualname, Library):
        return _impl_legacy(qualname, types, func or "")
    if isinstance(types, str):
        types = (types,)
    keys = {typ if typ in DispatchKey.__members__ else _device_type_to_key(typ) for typ in types}

    def register(func):
        namespace, _ = _utils.parse_namespace(qualname)
        use_lib = _library_for_registration(namespace, lib)
        for key in keys:
            use_lib.impl(qualname, func, key)

    if func is None:
        return register
    register(func)
    return None


def _impl_legacy(lib, name, dispatch_key):
    def wrap(f):
        lib.impl(name, f, dispatch_key)
        return f
    return wrap


def _resolve_op_for_registration(op, registration_name):
    """A CustomOpDef for ops made by custom_op, else the operator's name."""
    if not isinstance(op, (str, OpOverload, CustomOpDef)):
        raise ValueError(f"{registration_name}({op}): got unexpected type for op: {type(op)}")
    if isinstance(op, OpOverload):
        op = op._name
    opdef = _maybe_get_opdef(op)
    return op if opdef is None else opdef


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register ``func`` as ``op``'s implementation for ``device_types``
    ("cpu", "cuda"...; None: every device).  Usable as a decorator."""
    op = _resolve_op_for_registration(op, "register_kernel")
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    return impl(op, "CompositeExplicitAutograd" if device_types is None else device_types,
                func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Register ``op``'s FakeTensor/meta implementation (usable as a decorator)."""
    op = _resolve_op_for_registration(op, "register_fake")
    if isinstance(op, CustomOpDef):
        return op.register_fake if func is None else op.register_fake(func)

    stacklevel = _stacklevel    # frames from ``register`` up to the caller's code

    def register(func):
        namespace, op_name = _utils.parse_namespace(op)
        use_lib = _library_for_registration(namespace, lib)
        use_lib._register_fake(op_name, func, _stacklevel=stacklevel + 1,
                               allow_override=allow_override)
        return func

    if func is None:
        return register
    stacklevel += 1
    return register(func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None) -> None:
    """Register ``op``'s backward formula: ``backward(ctx, *grads)`` returns one
    gradient per input; ``setup_context(ctx, inputs, output)`` saves what it needs."""
    op = _resolve_op_for_registration(op, "register_autograd")
    if isinstance(op, CustomOpDef):
        op.register_autograd(backward, setup_context=setup_context)
        return
    qualname = op
    op = _utils.lookup_op(qualname)
    schema = op._schema
    if not _utils.is_functional_schema(schema):
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator {op} "
                           f"with schema {schema}. Please create a functional operator and "
                           f"register an autograd formula for that.")
    if _utils.has_kwarg_only_tensors(schema):
        raise NotImplementedError(f"register_autograd with kwarg-only Tensor args. In the "
                                  f"original definition of the op, please make your tensors not "
                                  f"kwarg-only. Got: {schema}")
    kernel = _make_autograd_impl(op, _Info(backward, setup_context))
    namespace, opname = _utils.parse_namespace(qualname)
    _library_for_registration(namespace, lib).impl(opname, kernel, "Autograd", with_keyset=True)


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    """Register how ``torch_dispatch_class`` (a tensor subclass or TorchDispatchMode)
    handles ``op``: ``func(mode_or_cls, func, types, args, kwargs)``."""
    op = _resolve_op_for_registration(op, "register_torch_dispatch")
    if isinstance(op, CustomOpDef):
        return op.register_torch_dispatch(torch_dispatch_class, func)

    def register(func):
        namespace, op_name = _utils.parse_namespace(op)
        _library_for_registration(namespace, lib)._register_torch_dispatch_rule(
            op_name, torch_dispatch_class, func)
        return func

    return register if func is None else register(func)


_OPCHECK_DEFAULT_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
                          "test_aot_dispatch_dynamic")


def opcheck(op, args, kwargs=None, *, test_utils=_OPCHECK_DEFAULT_UTILS, raise_exception=True,
            atol=None, rtol=None) -> dict:
    """Check that ``op``'s registrations tell the truth about ``op(*args, **kwargs)``:
    its schema (mutation, aliasing), its autograd registration, its fake impl, and
    its forward/backward under fake tensors (see ``glasstorch/_library/opcheck.py``).
    Returns ``{check: "SUCCESS" or the exception}``."""
    from ._library.opcheck import opcheck as run_checks    # imported on first use, as in torch
    return run_checks(op, args, kwargs, test_utils=test_utils, raise_exception=raise_exception,
                      atol=atol, rtol=rtol)
