"""``torch._subclasses.fake_tensor``: FakeTensor and FakeTensorMode.

A FakeTensor is a tensor without bytes: sizes, strides, dtype, a storage (a
meta storage: views of one fake share it), autograd state, and the device it
*pretends* to be on (``fake.device`` says ``cpu``; ``fake.untyped_storage()`` is
meta).  Running a program on FakeTensors finds every shape, dtype, stride and
device it would produce without computing one value: shape propagation, as
torch.compile does when it traces.

FakeTensorMode is the TorchDispatchMode that does the work.  Inside ``with
mode:`` factories make FakeTensors, and every operator that reaches the Python
key -- below autograd, so a backward pass over fakes makes fake gradients -- is
answered like this (``FakeTensorMode.dispatch``):

    lift_fresh of a torch.tensor(...)     the real tensor becomes a fake; with one element
                                          it stays known as the fake's ``constant``
    real tensors among the inputs         an error (or converted: allow_non_fake_inputs)
    every input fake has a constant       compute for real on the constants
    a CompositeImplicitAutograd operator  decomposed with the mode active: its pieces come back
    output size/value depends on the data DynamicOutputShapeException / DataDependentOutputException
    a builtin (aten) operator             its Meta kernel runs on meta tensors aliasing the
                                          fakes' storages; meta outputs become fakes on the
                                          inputs' common device (or the ``device=`` asked for);
                                          an input the kernel reshaped (resize_, out=, set_)
                                          takes its new geometry; views keep ``_base``
    a custom operator                     its Meta kernel (the ``register_fake`` impl) runs on
                                          the FakeTensors themselves, with the mode active

``mode.from_tensor(real)`` makes the fake of a real tensor (memoized per tensor;
views of one storage stay views of one fake storage; requires_grad, grads and
parameters carry over).
"""
from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass

from .._core import dispatch_key as dk
from .._core import dtype as dt
from .._core.device import device as Device
from .._core.storage import UntypedStorage
from .._core.tls import default_device, exclude_keys
from .._dispatcher.dispatcher import ops
from .._ops.tags import Tag
from .._tensor import (Tensor, _disabled_torch_function_impl, keys_for_device, version_counter,
                       wrapped_numbers)
from ..autograd.grad_mode import enable_grad
from ..utils._python_dispatch import (TorchDispatchMode, _get_current_dispatch_mode,
                                      _get_current_dispatch_mode_stack, _pop_mode, _push_mode)

__all__ = ["FakeTensor", "FakeTensorMode", "FakeTensorConverter", "UnsupportedFakeTensorException",
           "FakeTensorDeviceMismatchError", "DynamicOutputShapeException",
           "DataDependentOutputException", "UnsupportedOperatorException",
           "MetadataMismatchError", "is_fake", "maybe_get_fake_mode", "unset_fake_temporarily"]

aten = ops.aten
_META = Device("meta")
_CPU = Device("cpu")
_META_KEY = dk.key_bits(dk.DispatchKey.Meta)
_COMPOSITE_IMPLICIT = dk.DispatchKey.CompositeImplicitAutograd
_PYTHON_KEYS = dk.PYTHON | dk.PYTHON_TLS_SNAPSHOT


# -- errors (each names the operator that could not be faked) -------------------------

@dataclass
class UnsupportedFakeTensorException(RuntimeError):
    reason: str


class FakeTensorDeviceMismatchError(RuntimeError):
    def __init__(self, func, common_device, device):
        self.func = func
        self.common_device = common_device
        self.device = device
        super().__init__("Expected all tensors to be on the same device, but found at least two "
                         f"devices, {common_device} and {device}!")


@dataclass
class DynamicOutputShapeException(RuntimeError):
    """The operator's output size depends on the input's values (nonzero, unique ...)."""
    func: object


@dataclass
class DataDependentOutputException(RuntimeError):
    """The operator returns a value read from the data (item, equal ...)."""
    func: object


@dataclass
class UnsupportedOperatorException(RuntimeError):
    """The operator has no Meta kernel (no fake impl) to run."""
    func: object


@dataclass
class MetadataMismatchError(RuntimeError):
    reason: str


# -- what PyTorch knows about particular operators ------------------------------------

# Tagged ``data_dependent_output`` in native_functions.yaml: the result is a value
# read from the data.
# Ops tagged ``data_dependent_output`` or ``dynamic_output_shape`` are refused
# (see _check_data_dependence); PyTorch's fake impls also refuse these (their output size is the data's sum).
_DYNAMIC_OUTPUT_SHAPE_UNTAGGED = frozenset({"aten::_pack_padded_sequence"})
# Operators whose inputs may sit on several devices; the result is on ``self``'s.
_MULTI_DEVICE = frozenset({"aten::copy_", "aten::copy", "aten::index_put", "aten::index_put_",
                           "aten::index.Tensor"})
_BUILTIN_NAMESPACES = frozenset({"aten", "prims", "prim"})
# A tensor with at most this many elements keeps its value as the fake's constant.
CONSTANT_NUMEL_LIMIT = 1


def _normalize_fake_device(device) -> Device:
    """``cuda`` means ``cuda:0`` for a fake (there is no current device to ask)."""
    device = Device(device)
    if device.type == "cuda" and device.index is None:
        return Device("cuda", 0)
    return device


def _is_inference(t) -> bool:
    """Made in inference mode: no autograd keys."""
    return not t._keys & dk.ADINPLACEORVIEW


# -- FakeTensor -------------------------------------------------------------------------

class FakeTensor(Tensor):
    """A tensor whose storage is meta and whose ``device`` is the one it fakes.
    Any operator on it runs under its ``fake_mode``."""

    # ops on a FakeTensor go straight to the dispatcher (the Python key)
    __torch_function__ = _disabled_torch_function_impl
    # set per instance only when not None
    constant = None        # the real value, for a fake of a tensor with <= 1 element
    real_tensor = None

    def __new__(cls, fake_mode, elem, device, constant=None, real_tensor=None):
        """``FakeTensor(fake_mode, elem, device)``: the fake over meta tensor ``elem``."""
        if elem.device.type != "meta":
            raise AssertionError(f"elem.device.type must be 'meta', got {elem.device.type}")
        device = _normalize_fake_device(device)
        if device.type == "meta" and not fake_mode.allow_meta:
            raise AssertionError("device.type must not be 'meta' when allow_meta is False")
        if isinstance(real_tensor, FakeTensor):
            raise AssertionError("real_tensor must not be a FakeTensor")
        out = cls._from_meta(fake_mode, elem, device)
        if elem.requires_grad:
            out.requires_grad = True
        if constant is not None:
            out.constant = constant
        if real_tensor is not None:
            out.real_tensor = real_tensor
        return out

    @classmethod
    def _from_meta(cls, fake_mode, meta, device):
        """The fake sharing ``meta``'s storage and geometry, on ``device``."""
        keys = keys_for_device(device.type, _is_inference(meta)) | cls._python_keys
        out = cls._make(meta._storage, meta._shape, meta._stride, meta._offset, meta.dtype,
                        device, keys)
        out.fake_mode = fake_mode
        return out

    @property
    def fake_device(self):
        return self.device

    @fake_device.setter
    def fake_device(self, device) -> None:
        self.device = _normalize_fake_device(device)
        self._keys = keys_for_device(self.device.type, _is_inference(self)) | self._python_keys

    @staticmethod
    def from_tensor(t, fake_mode):
        return fake_mode.from_tensor(t)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        """An operator on fakes with no fake mode active: run it under their mode
        (NotImplemented while one is active: it already had its say)."""
        if any(not issubclass(t, FakeTensor) for t in types):
            return NotImplemented
        if any(isinstance(m, FakeTensorMode) for m in _get_current_dispatch_mode_stack()):
            return NotImplemented
        fake_mode = next(t.fake_mode for t in _tensors(args, kwargs or {})
                         if isinstance(t, FakeTensor))
        with fake_mode:
            return func(*args, **(kwargs or {}))


    def numel(self):
        """Symbolic sizes: one SymInt per shape, as PyTorch keeps ``sym_numel`` on
        the TensorImpl, so make_fx knows it as this tensor's ``sym_numel``."""
        cached = self.__dict__.get("_numel")
        if cached is not None and cached[0] is self._shape:
            return cached[1]
        numel = super().numel()
        if type(numel) is not int:
            self._numel = (self._shape, numel)
        return numel

    def tolist(self):
        """Element by element through ``item()``: data-dependent unless constant."""
        if self.dim() == 0:
            return self.item()
        if self.dim() == 1:
            return [element.item() for element in self]
        return [element.tolist() for element in self]



def is_fake(x) -> bool:
    return isinstance(x, FakeTensor)


def maybe_get_fake_mode(t):
    return t.fake_mode if isinstance(t, FakeTensor) else None


@contextlib.contextmanager
def unset_fake_temporarily():
    """Run a block with the innermost mode popped if it is a FakeTensorMode
    (yields it, or None)."""
    mode = _get_current_dispatch_mode()
    if not isinstance(mode, FakeTensorMode):
        yield None
        return
    _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


# -- real tensors -> fakes ---------------------------------------------------------------

class FakeTensorConverter:
    """Makes the fake of a real tensor, once per tensor (torch's
    FakeTensorConverter + MetaConverter): the memos hold each real tensor's fake
    and each real storage's meta storage for as long as the real one lives."""

    def __init__(self):
        self.tensor_memo: dict = {}     # id(real tensor) -> (weakref to it, its fake)
        self.storage_memo: dict = {}    # id(real storage) -> (weakref to it, meta storage)

    @staticmethod
    def _remember(memo, key_obj, value) -> None:
        key = id(key_obj)
        memo[key] = (weakref.ref(key_obj, lambda _, key=key: memo.pop(key, None)), value)

    def _get_memo(self, t):
        hit = self.tensor_memo.get(id(t))
        return hit[1] if hit is not None and hit[0]() is t else None

    def _meta_storage(self, storage) -> UntypedStorage:
        hit = self.storage_memo.get(id(storage))
        if hit is not None and hit[0]() is storage:
            return hit[1]
        meta = UntypedStorage._meta(storage.nbytes())
        self._remember(self.storage_memo, storage, meta)
        return meta

    def from_real_tensor(self, fake_mode, t, make_constant=False, shape_env=None, *,
                         source=None, symbolic_context=None, trace=True):
        """The fake of ``t`` (the memoized one if ``t`` was converted before)."""
        hit = self._get_memo(t)
        if hit is not None:
            return hit
        device = _normalize_fake_device(t.device)
        keys = keys_for_device(device.type, _is_inference(t)) | FakeTensor._python_keys
        base = t._base
        if shape_env is not None:   # symbolic: a fresh tensor of its own (no view tracking)
            fake_base = None
            shape, stride, offset = shape_env.create_symbolic_sizes_strides_storage_offset(
                t._shape, t._stride, t._offset, source, dynamic_dims=symbolic_context)
            out = FakeTensor._make(self._meta_storage(t._storage), shape, stride, offset,
                                   t.dtype, device, keys)
        elif base is not None:      # a view: a view of the base's fake
            fake_base = self.from_real_tensor(fake_mode, base)
            out = FakeTensor._make(fake_base._storage, t._shape, t._stride, t._offset, t.dtype,
                                   device, keys)
            out._base = fake_base
            out._version_counter = version_counter(fake_base)
        else:
            fake_base = None
            out = FakeTensor._make(self._meta_storage(t._storage), t._shape, t._stride,
                                   t._offset, t.dtype, device, keys)
        out.fake_mode = fake_mode
        if t.requires_grad:
            out = self._with_autograd_state(fake_mode, t, out, fake_base)
        if make_constant:
            out.constant = t
        if _is_parameter(t):
            out._is_param = True
        grad = t._autograd_meta.grad if t._autograd_meta is not None else None
        if grad is not None:         # (read without the non-leaf .grad warning)
            out.grad = self.from_real_tensor(fake_mode, grad)
        self._remember(self.tensor_memo, t, out)
        return out

    @staticmethod
    def _with_autograd_state(fake_mode, t, out, fake_base):
        """A leaf requires grad; a view of a base that requires grad is the
        as_strided view of the base's fake, with its history; any other non-leaf
        gets a history that refuses backward (the real one is not there)."""
        if t.is_leaf:
            out.requires_grad = True
            return out
        if fake_base is not None and fake_base.requires_grad:
            with enable_grad():
                return aten.as_strided.default(fake_base, t._shape, t._stride, t._offset)
        from ..autograd.function import _delayed_error
        return _delayed_error("Internal error: Tried to backward() through example input", [out])

    def from_meta_and_device(self, fake_mode, t, device):
        return FakeTensor._from_meta(fake_mode, t, _normalize_fake_device(device))

    def invalidate_constant_aliases(self, tensor) -> None:
        """``tensor`` (a real value) is being written: fakes whose constant shares
        its storage no longer know their value."""
        storage = tensor._storage
        for _, fake in self.tensor_memo.values():
            if fake.constant is not None and fake.constant._storage is storage:
                fake.constant = None


def _is_parameter(t) -> bool:
    from ..nn.parameter import Parameter
    return isinstance(t, Parameter)


# -- FakeTensorMode -------------------------------------------------------------------------

class FakeTensorMode(TorchDispatchMode):
    """Within ``with FakeTensorMode():`` tensors are FakeTensors and operators
    only propagate metadata."""

    def __init__(self, *, allow_fallback_kernels=True, allow_non_fake_inputs=False,
                 shape_env=None, static_shapes=None, export=False):
        super().__init__()
        # Accepted for compatibility: every builtin operator here has a Meta kernel,
        # so there is no real-kernel fallback to allow.
        self.allow_fallback_kernels = allow_fallback_kernels
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.fake_tensor_converter = FakeTensorConverter()
        self.shape_env = shape_env
        self.static_shapes = shape_env is None if static_shapes is None else static_shapes
        self.export = export
        self.allow_meta = True

    @classmethod
    def is_infra_mode(cls) -> bool:
        """PyTorch runs infra modes (this one, proxy tracing) after every user mode."""
        return True

    def is_our_fake(self, t) -> bool:
        return isinstance(t, FakeTensor) and t.fake_mode is self

    def from_tensor(self, tensor, *, static_shapes=None, source=None, symbolic_context=None,
                    trace=True):
        """The fake of ``tensor`` (memoized: the same real tensor gives the same fake).
        Under a ShapeEnv, a tensor given a ``source`` (its name, or an object with
        a ``name``) gets symbolic sizes named after it, unless shapes are static;
        ``symbolic_context``, a set of dims, makes only those symbolic (Dynamo's
        dynamic dims)."""
        static = self.static_shapes if static_shapes is None else static_shapes
        shape_env = None if static or source is None else self.shape_env
        return self.fake_tensor_converter.from_real_tensor(
            self, tensor, shape_env=shape_env, source=getattr(source, "name", source),
            symbolic_context=symbolic_context)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if any(not issubclass(t, FakeTensor) for t in types):
            return NotImplemented          # another subclass: let it answer
        return self.dispatch(func, types, args, kwargs or {})

    def dispatch(self, func, types, args, kwargs):
        name = func.name()
        if name == "aten::lift_fresh" and type(args[0]) is Tensor:
            return self._lift(args[0])
        args, kwargs, fakes = self._validate_and_convert(func, args, kwargs)
        if fakes and all(f.constant is not None for f in fakes) and \
                Tag.nondeterministic_seeded not in func.tags and \
                (Tag.inplace_view not in func.tags or name == "aten::detach_"):
            out = self._propagate_constants(func, args, kwargs)
            if out is not _NOT_CONSTANT:
                return out
        if any(f.constant is not None for f in fakes):
            self._invalidate_written_constants(func, args, kwargs)
        if func._entry.has_kernel(_COMPOSITE_IMPLICIT):
            with self:          # its pieces come back here one by one
                return func.decompose(*args, **kwargs)
        _check_data_dependence(func, name, args, kwargs)
        if func.namespace not in _BUILTIN_NAMESPACES:
            return self._run_fake_impl(func, args, kwargs)
        return self._run_meta(func, name, args, kwargs, fakes)

    # -- the steps -------------------------------------------------------------------

    def _lift(self, real):
        """``torch.tensor(...)``'s fresh real tensor becomes a fake (a constant
        when small enough)."""
        converter = self.fake_tensor_converter
        if _may_turn_const(real):
            with _no_python_dispatch():
                copy = real.clone()
            return converter.from_real_tensor(self, copy, make_constant=True)
        return converter.from_real_tensor(self, real)

    def _validate_and_convert(self, func, args, kwargs):
        """(args, kwargs, fake inputs) with real tensors converted, or PyTorch's
        error when they are not allowed."""
        fakes = []

        def validate(t):
            if not self.is_our_fake(t):
                if _is_wrapped_number(t):
                    with _no_python_dispatch():
                        return t.item()
                if Tag.inplace_view in func.tags:
                    raise AssertionError("Can't call metadata mutating ops on non-Fake Tensor "
                                         f"inputs. Found in {_render_call(func, args, kwargs)}")
                if not self.allow_non_fake_inputs:
                    if isinstance(t, FakeTensor):
                        raise AssertionError(f"Mixing fake modes NYI x.fake_mode={t.fake_mode} "
                                             f"vs self={self}")
                    raise AssertionError(
                        "Please convert all Tensors to FakeTensors first or instantiate "
                        "FakeTensorMode with 'allow_non_fake_inputs'. Found in "
                        f"{_render_call(func, args, kwargs)}")
                t = self.fake_tensor_converter.from_real_tensor(self, t)
            fakes.append(t)
            return t

        new_args, new_kwargs = _map_tensors(validate, args, kwargs)
        return new_args, new_kwargs, fakes

    def _propagate_constants(self, func, args, kwargs):
        """Every input's value is known: compute for real.  Small results stay
        known (constant fakes); otherwise the caller fakes the op as usual."""
        real_args, real_kwargs = _map_tensors(lambda f: f.constant, args, kwargs)
        with _no_python_dispatch():
            out = func(*real_args, **real_kwargs)
        outputs = [t for t in _outputs(out) if isinstance(t, Tensor)]
        converter = self.fake_tensor_converter
        if all(_may_turn_const(t) for t in outputs):
            return _map_outputs(
                lambda t: converter.from_real_tensor(self, t, make_constant=True), out)
        for t in outputs:
            converter.invalidate_constant_aliases(t)
        return _NOT_CONSTANT

    def _invalidate_written_constants(self, func, args, kwargs) -> None:
        for i, arg in enumerate(func._schema.arguments):
            if arg.is_write:
                value = args[i] if i < len(args) else kwargs.get(arg.name)
                if self.is_our_fake(value) and value.constant is not None:
                    self.fake_tensor_converter.invalidate_constant_aliases(value.constant)

    def _run_meta(self, func, name, args, kwargs, fakes):
        """A builtin operator: its Meta kernel on meta aliases of the fakes."""
        out_device, args, kwargs = _output_device(func, name, args, kwargs, fakes)
        aliases = {}             # id(meta alias) -> (alias, the fake it stands for)

        def meta_alias(f):
            alias = Tensor._make(f._storage, f._shape, f._stride, f._offset, f.dtype, _META,
                                 keys_for_device("meta", _is_inference(f)))
            alias._version_counter = version_counter(f)
            aliases[id(alias)] = (alias, f)
            return alias

        meta_args, meta_kwargs = _map_tensors(meta_alias, args, kwargs)
        try:
            with _no_python_dispatch():
                result = func(*meta_args, **meta_kwargs)
        except NotImplementedError as e:
            raise UnsupportedOperatorException(func) from e
        for alias, fake in aliases.values():      # resize_, out= ... changed its geometry
            if alias._storage is not fake._storage:
                fake._storage = alias._storage
            if (alias._shape, alias._stride, alias._offset) != \
                    (fake._shape, fake._stride, fake._offset):
                fake._set_sizes_strides(alias._shape, alias._stride, alias._offset)
        made = {}

        def wrap(t):
            hit = aliases.get(id(t))
            if hit is not None:
                return hit[1]
            fake = made.get(id(t))
            if fake is None:
                fake = made[id(t)] = FakeTensor._from_meta(self, t, out_device)
                if t._base is not None:          # a view: its base is the root fake
                    base = wrap(t._base)
                    fake._base = base._base if base._base is not None else base
                fake._version_counter = t._version_counter
            return fake

        return _map_outputs(wrap, result)

    def _run_fake_impl(self, func, args, kwargs):
        """A custom operator: its Meta kernel (the fake impl) is written for
        FakeTensors, so it gets them, with this mode active for what it calls."""
        try:
            with self:
                return func.redispatch(_META_KEY, *args, **kwargs)
        except NotImplementedError as e:
            raise UnsupportedOperatorException(func) from e


_NOT_CONSTANT = object()


def _is_wrapped_number(t) -> bool:
    """Autograd saves a Python number given for a Tensor argument as a 0-dim CPU
    tensor (``variable_type._wrapped_number``) and formulas pass it on; PyTorch's
    handlers see a wrapped number as the number itself."""
    return not t._shape and id(t) in wrapped_numbers


def _may_turn_const(t) -> bool:
    return type(t) is Tensor and t.numel() <= CONSTANT_NUMEL_LIMIT and t.device.type != "meta"


@contextlib.contextmanager
def _no_python_dispatch():
    """Compute below every dispatch mode and subclass (PyTorch's no_dispatch)."""
    with exclude_keys(_PYTHON_KEYS):
        yield


def _check_data_dependence(func, name, args, kwargs) -> None:
    """PyTorch's refusal of operators whose output depends on the values."""
    if Tag.data_dependent_output in func.tags:
        raise DataDependentOutputException(func)
    if name in _DYNAMIC_OUTPUT_SHAPE_UNTAGGED:
        raise DynamicOutputShapeException(func)
    if Tag.dynamic_output_shape not in func.tags:
        return
    # repeat_interleave only without ``output_size``, index only with boolean
    # masks (PyTorch turns them into ``nonzero``)
    if name == "aten::repeat_interleave.Tensor":
        if _argument(func, args, kwargs, "output_size") is not None:
            return
    elif name == "aten::index.Tensor":
        indices = _argument(func, args, kwargs, "indices")
        if any(i is not None and i.dtype in (dt.bool_, dt.uint8) for i in indices):
            raise DynamicOutputShapeException(aten.nonzero.default)
        return
    raise DynamicOutputShapeException(func)


def _argument(func, args, kwargs, name):
    for i, arg in enumerate(func._schema.arguments):
        if arg.name == name:
            return args[i] if i < len(args) else kwargs.get(name)
    return None


def _output_device(func, name, args, kwargs, fakes):
    """The device of the outputs, and the arguments with any ``device`` made meta:
    the ``device=`` asked for; for a factory, the default device; for the
    multi-device ops, ``self``'s; else the inputs' common device."""
    arguments = func._schema.arguments
    index = next((i for i, a in enumerate(arguments) if a.name == "device"), None)
    if index is not None:
        given = args[index] if index < len(args) else kwargs.get("device")
        factory = not any(a.type.is_tensor_like for a in arguments)
        if given is not None or factory:
            device = _normalize_fake_device(given if given is not None
                                            else default_device() or _CPU)
            if index < len(args):
                args = args[:index] + (_META,) + args[index + 1:]
            else:
                kwargs = {**kwargs, "device": _META}
            return device, args, kwargs
    if not fakes:
        return default_device() or _CPU, args, kwargs
    if name in _MULTI_DEVICE:
        return fakes[0].device, args, kwargs
    return _common_device(func, name, fakes), args, kwargs


def _common_device(func, name, fakes):
    """The device all tensor inputs agree on; a 0-dim CPU tensor may join any device."""
    common, common_is_cpu_scalar = None, False
    for t in fakes:
        device = t.device
        is_cpu_scalar = device.type == "cpu" and not t._shape
        if common is None:
            common, common_is_cpu_scalar = device, is_cpu_scalar
        elif device == common:
            common_is_cpu_scalar = common_is_cpu_scalar and is_cpu_scalar
        elif is_cpu_scalar:
            continue
        elif common_is_cpu_scalar:
            common, common_is_cpu_scalar = device, is_cpu_scalar
        elif name == "aten::add_.Tensor" and "meta" in (common.type, device.type):
            continue
        else:
            raise FakeTensorDeviceMismatchError(func, common, device)
    return common


# -- walking an operator's arguments and results (one level of lists) -----------------------

def _map_tensors(fn, args, kwargs):
    def one(value):
        if isinstance(value, Tensor):
            return fn(value)
        if type(value) in (list, tuple) and any(isinstance(v, Tensor) for v in value):
            return type(value)(fn(v) if isinstance(v, Tensor) else v for v in value)
        return value
    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _tensors(args, kwargs):
    for value in (*args, *kwargs.values()):
        if type(value) in (list, tuple):
            yield from (v for v in value if isinstance(v, Tensor))
        elif isinstance(value, Tensor):
            yield value


def _outputs(result):
    return result if type(result) in (list, tuple) else (result,)


def _map_outputs(fn, result):
    if isinstance(result, Tensor):
        return fn(result)
    if type(result) in (list, tuple):
        return type(result)(fn(r) if isinstance(r, Tensor) else r for r in result)
    return result


def _render_call(func, args, kwargs) -> str:
    """``aten.add.Tensor(tensor([...], size=(2, 3)), FakeTensor(..., size=(2, 3)))``."""
    from .._tensor_str import printoptions
    with printoptions(threshold=0, edgeitems=0):
        parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{func}({', '.join(parts)})"
