"""Loading a compiled extension: pybind11's and ``torch.ops.load_library``'s part.

In PyTorch an extension is a Python module made by pybind11: its type casters
turn Python arguments into ``at::Tensor``/``double``/... and back, and
``TORCH_LIBRARY`` blocks register kernels with the dispatcher when the library
is loaded.  glasstorch has no C++ runtime, so the compiled library speaks the
small C ABI of ``glasstorch/include/glasstorch/extension_abi.h`` instead, and
this module is its other half:

* ``load_library`` opens the library with ctypes, installs the host callback,
  runs its ``PYBIND11_MODULE``/``TORCH_LIBRARY`` bodies and turns what they
  declared into Python functions on a module, and into ``Library`` definitions
  and kernels (so ``torch.ops.<ns>.<op>`` reaches the C++ code).
* A bound function checks and converts its arguments as pybind11 would (same
  rules, same "incompatible function arguments" TypeError), describes tensors
  as ``gt_tensor`` structs (data pointer with the storage offset applied,
  dtype, sizes, strides in elements), calls, and maps the returned value back:
  a returned tensor is the very Python object it was given or made.
* The host callback is how C++ code gets tensors: ``torch::empty_like(x)``
  calls back into glasstorch, which allocates through its own ops (so the
  allocator, the dispatcher and any mode see the work) and keeps the result
  alive until the extension call returns.

Signature codes (written by the C++ templates from each function's type):
``T`` Tensor, ``d`` float, ``l`` int64, ``i`` int32, ``b`` bool, ``s`` str,
``v`` void, ``[X]`` list of X, ``?X`` optional X, ``(X,Y)`` tuple; parameters
are separated by commas and followed by ``->`` and the return code.
"""
from __future__ import annotations

import ctypes
import operator
import sys
import threading
import types
import warnings

import numpy as np

from .. import _creation
from .. import library as _library
from .._core import dtype as dt
from .._tensor import Tensor

ABI_VERSION = 1

# gt_value tags, statuses and binding kinds (extension_abi.h)
MISSING, NONE, TENSOR, INT, DOUBLE, BOOL, STRING, LIST = -1, 0, 1, 2, 3, 4, 5, 6
OK, ERROR_HOST = 0, 6
BIND_MODULE, BIND_PYTHON, BIND_LIBRARY, BIND_DEF, BIND_IMPL = 0, 1, 2, 3, 4
_ERRORS = {1: RuntimeError, 2: ValueError, 3: TypeError, 4: IndexError, 5: NotImplementedError}
_DEVICE_CODES = {"cpu": 0, "cuda": 1, "meta": 14}
_DEVICE_NAMES = {code: name for name, code in _DEVICE_CODES.items()}


class GtTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("handle", ctypes.c_int64), ("dtype", ctypes.c_int32),
                ("device", ctypes.c_int32), ("ndim", ctypes.c_int64),
                ("sizes", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


class GtValue(ctypes.Structure):
    pass


class GtList(ctypes.Structure):
    _fields_ = [("items", ctypes.POINTER(GtValue)), ("size", ctypes.c_int64)]


class _Payload(ctypes.Union):
    _fields_ = [("tensor", GtTensor), ("i", ctypes.c_int64), ("d", ctypes.c_double),
                ("b", ctypes.c_int32), ("s", ctypes.c_char_p), ("list", GtList)]


GtValue._fields_ = [("tag", ctypes.c_int32), ("u", _Payload)]


class GtBinding(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("function", ctypes.c_int32), ("ns", ctypes.c_char_p),
                ("dispatch_key", ctypes.c_char_p), ("name", ctypes.c_char_p),
                ("doc", ctypes.c_char_p), ("signature", ctypes.c_char_p),
                ("nargs_named", ctypes.c_int32), ("arg_names", ctypes.POINTER(ctypes.c_char_p)),
                ("defaults", ctypes.POINTER(GtValue))]


HOST_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_char_p, ctypes.POINTER(GtValue),
                           ctypes.c_int32, ctypes.POINTER(GtValue))


# -- one extension call --------------------------------------------------------------

class _Call:
    """The tensors one extension call can see, by handle (its arguments, then
    what it made), and the ctypes buffers their descriptions point into."""

    __slots__ = ("tensors", "keep", "error")

    def __init__(self):
        self.tensors: list = []
        self.keep: list = []
        self.error: BaseException | None = None

    def describe(self, t: Tensor, slot: GtValue) -> None:
        """Fill ``slot`` with ``t`` as a gt_tensor and give it a handle."""
        slot.tag = TENSOR
        desc = slot.u.tensor
        desc.handle = len(self.tensors)
        self.tensors.append(t)
        ndim = len(t._shape)
        sizes = (ctypes.c_int64 * ndim)(*t._shape)
        strides = (ctypes.c_int64 * ndim)(*t._stride)
        self.keep += (sizes, strides)
        desc.sizes, desc.strides, desc.ndim = sizes, strides, ndim
        desc.dtype = t.dtype.scalar_type
        device = t.device.type
        desc.device = _DEVICE_CODES.get(device, -1)
        desc.data = t.data_ptr() if device == "cpu" else None

    def tensor(self, handle: int):
        return None if handle < 0 else self.tensors[handle]

    def read(self, v: GtValue):
        """A gt_value as a Python value, by its tag (host-call arguments)."""
        tag = v.tag
        if tag == TENSOR:
            return self.tensor(v.u.tensor.handle)
        if tag == INT:
            return v.u.i
        if tag == DOUBLE:
            return v.u.d
        if tag == BOOL:
            return bool(v.u.b)
        if tag == STRING:
            return v.u.s.decode()
        if tag == LIST:
            return [self.read(v.u.list.items[i]) for i in range(v.u.list.size)]
        return None


_calls = threading.local()


def _call_stack() -> list:
    stack = getattr(_calls, "stack", None)
    if stack is None:
        stack = _calls.stack = []
    return stack


# -- the host callback: glasstorch ops for C++ code -------------------------------------

def _dtype(code):
    return None if code is None else dt.BY_SCALAR_TYPE[code]


def _device(code):
    return None if code is None else _DEVICE_NAMES[code]


def _factory(name):
    """``torch.empty(sizes, [value,] dtype=, device=)`` and friends."""
    def make(sizes, *rest):
        *value, dtype, device = rest
        return getattr(_creation, name)(tuple(sizes), *value, dtype=_dtype(dtype),
                                        device=_device(device))
    return make


def _like(name):
    """``torch.empty_like(t, dtype=)`` and friends."""
    def make(t, dtype):
        return getattr(_creation, name)(t, dtype=_dtype(dtype))
    return make


def _warn(message):
    warnings.warn(message, UserWarning, stacklevel=_user_stacklevel())


def _user_stacklevel() -> int:
    """The stack level of the first frame outside glasstorch (the caller of the extension)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("glasstorch."):
        frame, level = frame.f_back, level + 1
    return level


# Tensor methods C++ may call by name (at::Tensor's methods in torch/extension.h).
_METHODS = {"contiguous", "clone", "copy_", "fill_", "zero_", "add_", "mul_", "add", "sub",
            "mul", "div", "matmul", "sum", "reshape", "view", "transpose", "t", "neg", "sin",
            "cos", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs"}
_HOST_OPS = {
    "empty": _factory("empty"), "zeros": _factory("zeros"), "ones": _factory("ones"),
    "full": _factory("full"), "empty_like": _like("empty_like"),
    "zeros_like": _like("zeros_like"), "ones_like": _like("ones_like"),
    "to": lambda t, dtype: t.to(_dtype(dtype)), "warn": _warn,
    **{name: (lambda name: lambda t, *args: getattr(t, name)(*args))(name) for name in _METHODS},
}


def _host(op, args, nargs, result):
    stack = _call_stack()
    if not stack:   # a thread glasstorch did not call the extension from: nothing to report to
        return ERROR_HOST
    call = stack[-1]
    try:
        out = _HOST_OPS[op.decode()](*[call.read(args[i]) for i in range(nargs)])
        if isinstance(out, Tensor):
            call.describe(out, result[0])
        return OK
    except BaseException as e:   # noqa: BLE001  (re-raised when the extension returns)
        call.error = e
        return ERROR_HOST


_HOST = HOST_FN(_host)


# -- parameter and return types (pybind11's casters) ------------------------------------

_NO = object()        # "does not convert"
_MISSING = object()   # an argument not given


class _Type:
    """One C++ parameter/return type: its pybind11 name, how a Python value is
    accepted (``convert=False`` is pybind11's first, exact pass), written to a
    gt_value and read back."""

    param_name = return_name = ""

    def accept(self, value, convert):
        raise NotImplementedError

    def write(self, value, slot, call):
        raise NotImplementedError

    def read(self, slot, call):
        return call.read(slot)


class _TensorType(_Type):
    param_name = return_name = "torch.Tensor"
    schema = "Tensor"

    def accept(self, value, convert):
        return value if isinstance(value, Tensor) else _NO

    def write(self, value, slot, call):
        call.describe(value, slot)


class _FloatType(_Type):
    param_name = "typing.SupportsFloat | typing.SupportsIndex"
    return_name = schema = "float"

    def accept(self, value, convert):
        if isinstance(value, float):
            return value
        if not convert:
            return _NO
        try:
            if hasattr(type(value), "__float__"):
                return float(value)
            if hasattr(type(value), "__index__"):
                return float(operator.index(value))
        except Exception:   # noqa: BLE001  (pybind11: a failed conversion is a mismatch)
            pass
        return _NO

    def write(self, value, slot, call):
        slot.tag, slot.u.d = DOUBLE, value


class _IntType(_Type):
    param_name = "typing.SupportsInt | typing.SupportsIndex"
    return_name = schema = "int"

    def __init__(self, bits):
        self.low, self.high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def accept(self, value, convert):
        if isinstance(value, float):
            return _NO
        try:
            if isinstance(value, int) or hasattr(type(value), "__index__"):
                value = operator.index(value)
            elif convert and hasattr(type(value), "__int__"):
                value = int(value)
            else:
                return _NO
        except Exception:   # noqa: BLE001
            return _NO
        return value if self.low <= value <= self.high else _NO

    def write(self, value, slot, call):
        slot.tag, slot.u.i = INT, value


class _BoolType(_Type):
    param_name = return_name = schema = "bool"

    def accept(self, value, convert):
        if value is True or value is False:
            return value
        if isinstance(value, np.bool_):
            return bool(value)
        if not convert:
            return _NO
        if value is None:
            return False
        if hasattr(type(value), "__bool__"):
            try:
                return bool(value)
            except Exception:   # noqa: BLE001
                return _NO
        return _NO

    def write(self, value, slot, call):
        slot.tag, slot.u.b = BOOL, int(value)


class _StrType(_Type):
    param_name = return_name = "str"
    schema = "str"

    def accept(self, value, convert):
        if isinstance(value, str):
            return value
        return value.decode() if isinstance(value, bytes) else _NO

    def write(self, value, slot, call):
        data = value.encode()
        call.keep.append(data)
        slot.tag, slot.u.s = STRING, data


class _VoidType(_Type):
    return_name = "None"
    schema = "()"


class _ListType(_Type):
    def __init__(self, item):
        self.item = item
        self.param_name = f"collections.abc.Sequence[{item.param_name}]"
        self.return_name = f"list[{item.return_name}]"
        self.schema = f"{item.schema}[]"

    def accept(self, value, convert):
        if not isinstance(value, (list, tuple)):
            return _NO
        items = [self.item.accept(v, convert) for v in value]
        return _NO if any(v is _NO for v in items) else items

    def write(self, value, slot, call):
        items = (GtValue * len(value))()
        for v, item_slot in zip(value, items):
            self.item.write(v, item_slot, call)
        call.keep.append(items)
        slot.tag = LIST
        slot.u.list.items = items
        slot.u.list.size = len(value)

    def read(self, slot, call):
        items = slot.u.list.items
        return [self.item.read(items[i], call) for i in range(slot.u.list.size)]


class _TupleType(_Type):
    def __init__(self, items):
        self.items = items
        self.return_name = f"tuple[{', '.join(t.return_name for t in items)}]"
        self.schema = f"({', '.join(t.schema for t in items)})"

    def read(self, slot, call):
        items = slot.u.list.items
        return tuple(t.read(items[i], call) for i, t in enumerate(self.items))


class _OptionalType(_Type):
    def __init__(self, item):
        self.item = item
        self.param_name = f"{item.param_name} | None"
        self.return_name = f"{item.return_name} | None"
        self.schema = f"{item.schema}?"

    def accept(self, value, convert):
        return None if value is None else self.item.accept(value, convert)

    def write(self, value, slot, call):
        if value is None:
            slot.tag = NONE
        else:
            self.item.write(value, slot, call)

    def read(self, slot, call):
        return None if slot.tag == NONE else self.item.read(slot, call)


_SIMPLE = {"T": _TensorType(), "d": _FloatType(), "l": _IntType(64), "i": _IntType(32),
           "b": _BoolType(), "s": _StrType(), "v": _VoidType()}


def parse_signature(code: str):
    """``"T,d->T"`` -> ([Tensor, float] types, Tensor type)."""
    params_text, ret_text = code.split("->")
    params = []
    pos = 0
    while pos < len(params_text):
        t, pos = _parse_type(params_text, pos)
        params.append(t)
        pos += 1   # the comma
    ret, _ = _parse_type(ret_text, 0)
    return params, ret


def _parse_type(text, pos):
    c = text[pos]
    if c == "[":
        item, pos = _parse_type(text, pos + 1)
        return _ListType(item), pos + 1
    if c == "?":
        item, pos = _parse_type(text, pos + 1)
        return _OptionalType(item), pos
    if c == "(":
        items, pos = [], pos + 1
        while text[pos] != ")":
            item, pos = _parse_type(text, pos)
            items.append(item)
            pos += text[pos] == ","
        return _TupleType(items), pos + 1
    return _SIMPLE[c], pos + 1


# -- bound functions -------------------------------------------------------------------

class _Overload:
    """One ``m.def``: the C++ function number in its library and its Python signature."""

    def __init__(self, lib, binding: GtBinding, name: str):
        self.lib = lib
        self.index = binding.function
        self.params, self.ret = parse_signature(binding.signature.decode())
        self.names = [binding.arg_names[i].decode() for i in range(binding.nargs_named)]
        self.defaults = [_default(binding.defaults[i]) for i in range(binding.nargs_named)]
        if self.names and len(self.names) != len(self.params):
            raise ImportError(f"{name}(): the function has {len(self.params)} parameters but "
                              f"{len(self.names)} py::arg names")
        self.doc = (binding.doc or b"").decode()

    def signature(self) -> str:
        parts = []
        for i, t in enumerate(self.params):
            text = f"{self.names[i] if self.names else f'arg{i}'}: {t.param_name}"
            if self.names and self.defaults[i] is not _MISSING:
                text += f" = {self.defaults[i]!r}"
            parts.append(text)
        return f"({', '.join(parts)}) -> {self.ret.return_name}"

    def bind(self, args, kwargs, convert):
        """The converted arguments, or _NO when this overload does not take them."""
        n = len(self.params)
        if len(args) > n or (kwargs and not self.names):
            return _NO
        values = list(args) + [_MISSING] * (n - len(args))
        for key, value in kwargs.items():
            if key not in self.names or values[self.names.index(key)] is not _MISSING:
                return _NO
            values[self.names.index(key)] = value
        for i, (t, value) in enumerate(zip(self.params, values)):
            if value is _MISSING:
                value = self.defaults[i] if self.names else _MISSING
                if value is _MISSING:
                    return _NO
            values[i] = t.accept(value, convert)
            if values[i] is _NO:
                return _NO
        return values

    def invoke(self, values):
        call = _Call()
        stack = _call_stack()
        stack.append(call)
        try:
            argv = (GtValue * max(len(values), 1))()
            for t, value, slot in zip(self.params, values, argv):
                t.write(value, slot, call)
            result = GtValue()
            status = self.lib.gt_ext_call(self.index, argv, len(values), ctypes.byref(result))
            if status != OK:
                raise _failure(self.lib, status, call)
            return self.ret.read(result, call)
        finally:
            stack.pop()


def _default(v: GtValue):
    if v.tag == MISSING:
        return _MISSING
    return _Call().read(v)


def _failure(lib, status, call=None) -> BaseException:
    if status == ERROR_HOST:
        if call is not None and call.error is not None:
            return call.error
        return RuntimeError("glasstorch C++ extensions can create tensors only on the thread "
                            "that called the extension")
    return _ERRORS.get(status, RuntimeError)(lib.gt_ext_error_message().decode())


def _make_function(name: str, module_name: str, overloads: list):
    """A Python callable trying each overload as pybind11 does: every overload
    without implicit conversions first, then with them."""

    def function(*args, **kwargs):
        for convert in ((False, True) if len(overloads) > 1 else (True,)):
            for overload in overloads:
                values = overload.bind(args, kwargs, convert)
                if values is not _NO:
                    return overload.invoke(values)
        supported = "\n".join(f"    {i}. {o.signature()}" for i, o in enumerate(overloads, 1))
        invoked = ", ".join(map(repr, args))
        if kwargs:
            given = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
            invoked = f"{invoked}; kwargs: {given}" if invoked else f"kwargs: {given}"
        raise TypeError(f"{name}(): incompatible function arguments. The following argument "
                        f"types are supported:\n{supported}\n\nInvoked with: {invoked}")

    function.__name__ = function.__qualname__ = name
    function.__module__ = module_name
    if len(overloads) == 1:
        o = overloads[0]
        function.__doc__ = f"{name}{o.signature()}\n" + (f"\n{o.doc}\n" if o.doc else "")
    else:
        parts = [f"{name}(*args, **kwargs)\nOverloaded function.\n"]
        parts += [f"{i}. {name}{o.signature()}\n" + (f"\n{o.doc}\n" if o.doc else "")
                  for i, o in enumerate(overloads, 1)]
        function.__doc__ = "\n".join(parts)
    return function


# -- loading ---------------------------------------------------------------------------

_loaded: dict = {}        # library path -> what load_library returned (a module or the path)
_libraries: list = []     # Library objects of TORCH_LIBRARY blocks: they live with the process
_load_lock = threading.Lock()


def load_library(path: str, module_name: str, is_python_module: bool):
    """Open a built extension: run its binding bodies once, register its
    TORCH_LIBRARY operators, and return its module (or, when
    ``is_python_module`` is False, the path, as ``torch.ops.load_library``)."""
    with _load_lock:
        if path not in _loaded:
            _loaded[path] = _open(path, module_name)
        module = _loaded[path]
    if not is_python_module:
        return path
    if module is None:
        raise ImportError(f"dynamic module does not define module export function "
                          f"(PyInit_{module_name})")
    return module


def _open(path, module_name):
    lib = ctypes.PyDLL(path)
    if lib.gt_ext_abi_version() != ABI_VERSION:
        raise ImportError(f"{path} was built for another glasstorch extension ABI")
    lib.gt_ext_set_host(_HOST)
    lib.gt_ext_call.argtypes = [ctypes.c_int32, ctypes.POINTER(GtValue), ctypes.c_int32,
                                ctypes.POINTER(GtValue)]
    lib.gt_ext_error_message.restype = ctypes.c_char_p
    lib.gt_ext_binding.restype = ctypes.POINTER(GtBinding)
    status = lib.gt_ext_init()
    if status != OK:
        error = _failure(lib, status)
        raise ImportError(str(error)) from error
    bindings = [lib.gt_ext_binding(i).contents for i in range(lib.gt_ext_binding_count())]
    return _declare(lib, bindings, module_name)


def _declare(lib, bindings, module_name):
    """Turn the binding records into a module's functions and registered operators."""
    module = None
    functions: dict = {}
    in_module = False      # inside this module's PYBIND11_MODULE block
    library = None         # the Library of the current TORCH_LIBRARY block
    for b in bindings:
        ns, name = b.ns.decode(), b.name.decode()
        if b.kind == BIND_MODULE:
            in_module = ns == module_name
            if in_module:
                module = module or types.ModuleType(module_name, b.doc.decode() or None)
        elif b.kind == BIND_PYTHON and in_module:
            functions.setdefault(name, []).append(_Overload(lib, b, name))
        elif b.kind == BIND_LIBRARY:
            library = _library.Library(ns, name, b.dispatch_key.decode())
            _libraries.append(library)
        elif b.kind == BIND_DEF:
            schema = name if "(" in name else _infer_schema(name, b)
            op = library.define(schema)
            if b.function >= 0:
                library.impl(op, _kernel(lib, b, op, module_name), "CompositeImplicitAutograd")
        elif b.kind == BIND_IMPL:
            library.impl(name, _kernel(lib, b, name, module_name),
                         b.dispatch_key.decode() or "CompositeImplicitAutograd")
    if module is not None:
        module.__file__ = lib._name
        for name, overloads in functions.items():
            setattr(module, name, _make_function(name, module_name, overloads))
    return module


def _kernel(lib, binding, op_name, module_name):
    name = op_name.split("::")[-1].split(".")[0]
    return _make_function(name, module_name, [_Overload(lib, binding, name)])


def _infer_schema(name, binding) -> str:
    """``m.def("name", fn)``: the schema from fn's C++ types (arguments ``_0``, ``_1`` ...)."""
    params, ret = parse_signature(binding.signature.decode())
    args = ", ".join(f"{t.schema} _{i}" for i, t in enumerate(params))
    return f"{name}({args}) -> {ret.schema}"
