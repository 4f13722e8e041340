"""``torch.library.custom_op`` and ``CustomOpDef`` (torch/_library/custom_ops.py).

    @custom_op("mylib::myadd", mutates_args=())
    def myadd(x: Tensor, y: Tensor) -> Tensor:
        return x + y

turns the function into the operator ``torch.ops.mylib.myadd.default``, with
the schema inferred from its type hints, and registers (all through one
``Library("mylib", "FRAGMENT")`` kept in ``op._lib``):

    CompositeExplicitAutograd   the function (or CPU, CUDA... with device_types),
                                checking that no output aliases an input
    Autograd                    GeneratedBackwardFor_mylib_myadd_default (autograd.py);
                                without register_autograd, backward raises
    Meta                        the fake impl (register_fake); without one, an error
    ADInplaceOrView             for ops that mutate: bump the mutated inputs' versions
    BackendSelect               for factories (no tensor argument, a ``device`` one)

The kernels call back into the CustomOpDef at call time, so ``register_fake``,
``register_autograd`` and ``register_kernel`` can come after the definition.
"""
from __future__ import annotations

import inspect
import logging
import weakref
from contextlib import contextmanager

from .._core import dispatch_key as dk
from .._core.dispatch_key import DispatchKey
from .._core.device import device as Device
from .._dispatcher.schema import parse_schema
from .._ops.tags import Tag
from ..autograd.graph import increment_version
from . import utils
from .autograd import make_autograd_impl
from .infer_schema import infer_schema

__all__ = ["custom_op", "CustomOpDef"]

log = logging.getLogger(__name__)

# torch._C._after_ADInplaceOrView_keyset
AFTER_ADINPLACEORVIEW = dk.full_after(DispatchKey.ADInplaceOrView)
PT2_COMPLIANT_TAG = Tag.pt2_compliant_tag


def _normalize_tags(tags) -> tuple:
    if tags is None:
        return ()
    if isinstance(tags, Tag):
        tags = (tags,)
    return tuple(dict.fromkeys(tags))


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap ``fn`` into the custom operator ``name`` ("namespace::opname"); usable
    as a decorator.  ``mutates_args`` names the arguments ``fn`` mutates ("unknown":
    any); ``device_types`` restricts the implementation to those devices;
    ``schema`` overrides the one inferred from the type hints."""

    def inner(fn):
        normalized_tags = _normalize_tags(tags)
        schema_str = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn, normalized_tags)
        if schema is not None:
            expected = {arg.name for arg in result._opoverload._schema.arguments if arg.is_write}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                    f"`schema={schema}. The schema suggests that the op mutates {expected}which "
                    f"is different from what was provided to us in `mutates_args`. Please make "
                    f"these consistent.")
        result.register_kernel(device_types)(fn)
        return result

    return inner if fn is None else inner(fn)


class CustomOpDef:
    """A custom operator made by ``custom_op``: calling it calls
    ``torch.ops.<ns>.<name>.default``; its methods register more behaviour."""

    def __init__(self, namespace: str, name: str, schema: str, fn, tags=None):
        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._tags = _normalize_tags(tags)
        self._init_fn = fn
        self._backend_fns: dict = {}          # device type (None: all) -> implementation
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._torch_dispatch_fns: dict = {}
        self._disabled_kernel: set = set()
        self._lib = get_library_allowing_overwrite(namespace, name)
        self._register_to_dispatcher(self._tags)
        OPDEFS[self._qualname] = self

    @property
    def _qualname(self) -> str:
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    # -- what users register ------------------------------------------------------------

    def register_kernel(self, device_types, fn=None, /):
        """Register the implementation for ``device_types`` ("cpu", "cuda" ...; None:
        every device).  Usable as a decorator."""

        def inner(fn):
            if device_types is None or isinstance(device_types, str):
                types = [device_types]
            else:
                types = list(device_types)
            for device_type in types:
                if device_type not in self._backend_fns:
                    self._register_backend_kernel(device_type)
                self._backend_fns[device_type] = self._unless_disabled(device_type, fn)
            return fn

        if device_types is not None and not utils.has_tensor_arg(self._opoverload._schema):
            device_arg_index = utils.get_device_arg_index(self._opoverload._schema)
            if device_arg_index is None:
                raise ValueError("Functions without tensor inputs are required to have a "
                                 "`device: torch.device` argument")
            self._register_backend_select_dispatcher(device_arg_index)
        return inner if fn is None else inner(fn)

    def _unless_disabled(self, device_type, fn):
        """``fn``, or the original implementation while ``set_kernel_enabled``
        disables ``device_type``."""

        def wrapped_fn(*args, **kwargs):
            if device_type in self._disabled_kernel:
                return self._init_fn(*args, **kwargs)
            return fn(*args, **kwargs)

        return wrapped_fn

    def register_fake(self, fn, /):
        """Register the FakeTensor/meta implementation: same signature as the
        op, returns outputs of the right shape, dtype and device, computes nothing."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None) -> None:
        """``backward(ctx, *grads)`` returns one gradient per input (None for
        non-tensors); ``setup_context(ctx, inputs, output)`` saves what it needs
        (``ctx.save_for_backward`` or attributes) during the forward."""
        schema = self._opoverload._schema
        if not utils.is_functional_schema(schema, allow_valid_view=True):
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator "
                               f"{self} with schema {schema}. Please create a functional "
                               f"operator and register an autograd formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        """Register how ``torch_dispatch_class`` (a tensor subclass or a
        TorchDispatchMode) handles this op: ``fn(mode_or_cls, func, types, args, kwargs)``."""

        def register(fn):
            if torch_dispatch_class not in self._torch_dispatch_fns:
                def inner(*args, **kwargs):
                    return self._torch_dispatch_fns[torch_dispatch_class](*args, **kwargs)
                self._lib._register_torch_dispatch_rule(self._name, torch_dispatch_class, inner)
            self._torch_dispatch_fns[torch_dispatch_class] = fn
            return fn

        return register if fn is None else register(fn)

    @contextmanager
    def set_kernel_enabled(self, device_type: str, enabled: bool = True):
        """Within the block, the kernel registered for ``device_type`` is (not) used;
        a disabled one falls back to the function given to ``custom_op``."""
        action = "enable" if enabled else "disable"
        originally_disabled = device_type in self._disabled_kernel
        if device_type not in self._backend_fns:
            log.warning("Attempted to %s kernel for %s but no kernel was registered for this "
                        "device type.", action, device_type)
        if not enabled:
            if originally_disabled:
                log.warning("Attempted to disable kernel for %s but it was already disabled.",
                            device_type)
            else:
                self._disabled_kernel.add(device_type)
        elif not originally_disabled:
            log.warning("Attempted to enable kernel for  %s but it was already enabled.",
                        device_type)
        else:
            self._disabled_kernel.remove(device_type)
        try:
            yield
        finally:
            if originally_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)

    # -- the dispatcher registrations ---------------------------------------------------

    def _register_to_dispatcher(self, tags) -> None:
        schema_str = self._name + self._schema
        if utils.has_kwarg_only_tensors(parse_schema(schema_str)):
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your "
                                      f"tensors not kwarg-only. Got: {schema_str}")
        self._lib.define(schema_str, tags=[PT2_COMPLIANT_TAG,
                                           *(t for t in tags if t != PT2_COMPLIANT_TAG)])
        self._opoverload = utils.lookup_op(self._qualname)
        self._lib._register_fake(self._name, self._fake_impl, _stacklevel=4)
        self._lib.impl(self._name, make_autograd_impl(self._opoverload, self), "Autograd",
                       with_keyset=True)
        if self._opoverload._schema.is_mutable:
            self._register_mutation_version_bump()

    def _register_backend_kernel(self, device_type) -> None:
        """The kernel at CompositeExplicitAutograd (device_type None) or at the
        device's key: the current implementation, then the aliasing check."""
        op = self._opoverload
        check_aliasing = not utils.is_view_schema(op._schema)

        def get_module():
            return inspect.getmodule(self._backend_fns[device_type])

        def backend_impl(*args, **kwargs):
            args, kwargs = utils.normalize_arguments(op, args, kwargs)
            result = self._backend_fns[device_type](*args, **kwargs)
            if check_aliasing:
                utils.check_aliasing_constraint(self._name, args, kwargs, result, get_module)
            return result

        key = "CompositeExplicitAutograd" if device_type is None else \
            utils.dispatch_key_for_device(device_type)
        self._lib.impl(self._name, backend_impl, key)

    def _fake_impl(self, *args, **kwargs):
        args, kwargs = utils.normalize_arguments(self._opoverload, args, kwargs)
        if self._abstract_fn is None:
            if utils.can_generate_trivial_fake_impl(self._opoverload):
                return None
            raise RuntimeError(f"There was no fake impl registered for {self}. This is necessary "
                               f"for torch.compile/export/fx tracing to work. Please use "
                               f"`{self._init_fn.__name__}.register_fake` to add an fake impl.")
        return self._abstract_fn(*args, **kwargs)

    def _register_mutation_version_bump(self) -> None:
        """ADInplaceOrView: every mutated input's version goes up, as for x.add_(y)."""
        op = self._opoverload
        mutated_idxs, mutated_keys = utils.mutated_args_kwargs(op._schema)

        def adinplaceorview_impl(keyset, *args, **kwargs):
            all_args, all_kwargs = utils.fill_defaults(op._schema, args, kwargs)
            mutated = [all_args[i] for i in mutated_idxs] + [all_kwargs[k] for k in mutated_keys]
            for tensor in utils.iter_tensors(mutated, {}):
                increment_version(tensor)
            return op.redispatch(keyset & AFTER_ADINPLACEORVIEW, *args, **kwargs)

        self._lib.impl(self._name, adinplaceorview_impl, "ADInplaceOrView", with_keyset=True)

    def _register_backend_select_dispatcher(self, device_arg_index: int) -> None:
        """A factory (no tensor argument) picks its backend from its ``device``."""
        op = self._opoverload

        def backend_select(keyset, *args, **kwargs):
            args, kwargs = utils.normalize_arguments(op, args, kwargs)
            device_type = Device(args[device_arg_index]).type
            if device_type not in self._backend_fns:
                raise RuntimeError(f"{self._name} does not have a kernel registered for "
                                   f"{device_type}. Please use register_kernel to do so.")
            key = DispatchKey[utils.dispatch_key_for_device(device_type)]
            return op.redispatch(dk.key_bits(key), *args, **kwargs)

        self._lib.impl(self._name, backend_select, "BackendSelect", with_keyset=True)


# A re-definition of the same name replaces the old operator: its library is destroyed.
OPDEF_TO_LIB: dict = {}
OPDEFS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def get_library_allowing_overwrite(namespace: str, name: str):
    from ..library import Library
    qualname = f"{namespace}::{name}"
    if qualname in OPDEF_TO_LIB:
        OPDEF_TO_LIB.pop(qualname)._destroy()
    lib = Library(namespace, "FRAGMENT")
    OPDEF_TO_LIB[qualname] = lib
    return lib


def _maybe_get_opdef(op):
    """The CustomOpDef behind ``op`` (a CustomOpDef, an OpOverload or a name), or None."""
    if isinstance(op, CustomOpDef):
        return op
    name = op if isinstance(op, str) else op._name
    return OPDEFS.get(name)
