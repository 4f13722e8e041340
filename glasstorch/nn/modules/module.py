"""``torch.nn.modules.module``: the Module base class.

A Module owns three ordered dicts, ``_parameters``, ``_buffers`` and
``_modules``; ``__setattr__`` files Parameters, Buffers and Modules into them
and ``__getattr__`` finds them there.  Everything else (iteration, state_dict,
dtype/device conversion, hooks, repr) walks those dicts.

Calling a module runs ``forward`` directly when no hook is registered anywhere
(the common case, kept to a handful of dict truth tests); otherwise
``_call_impl`` runs the forward pre-hooks, sets up backward hooks, calls
``forward`` and runs the forward hooks, in PyTorch's order.
"""
from __future__ import annotations

import functools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._core import dtype as _dtypes
from ..._core.device import device as _Device
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..._creation import typename
from ...utils.hooks import BackwardHook, RemovableHandle, _add_hook
from ..parameter import Buffer, Parameter, _buffer_persistent, is_lazy

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook",
           "register_module_buffer_registration_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first by ``spaces`` (blank lines stay empty)."""
    first, *rest = text.split("\n")
    if not rest:
        return text
    pad = " " * spaces
    return "\n".join([first] + [pad + line if line.strip() else "" for line in rest])


class _WrappedHook:
    """A hook called with its module (held weakly) prepended to the arguments."""

    def __init__(self, hook, module=None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self) -> dict:
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# -- global hooks (every module) -----------------------------------------------------------

_global_buffer_registration_hooks: dict = OrderedDict()
_global_module_registration_hooks: dict = OrderedDict()
_global_parameter_registration_hooks: dict = OrderedDict()
_global_backward_pre_hooks: dict = OrderedDict()
_global_backward_hooks: dict = OrderedDict()
_global_is_full_backward_hook = None
_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()
_global_forward_hooks_always_called: dict = OrderedDict()
_global_forward_hooks_with_kwargs: dict = OrderedDict()


def _run_registration_hooks(hooks: dict, module, name: str, value):
    """``value`` passed through registration hooks (a non-None result replaces it)."""
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, buffer) -> None or new buffer`` on every register_buffer."""
    return _add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, submodule) -> None or new submodule`` on every add_module."""
    return _add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, param) -> None or new param`` on every register_parameter."""
    return _add_hook(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """A forward pre-hook run before every module's own ones."""
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False) -> RemovableHandle:
    """A forward hook run before every module's own ones."""
    handle = _add_hook(_global_forward_hooks, hook,
                       extra_dict=_global_forward_hooks_always_called)
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """A backward pre-hook run before every module's own ones."""
    return _add_hook(_global_backward_pre_hooks, hook)


def register_module_backward_hook(hook) -> RemovableHandle:
    """Deprecated: a legacy (grad_fn) backward hook on every module."""
    return _register_global_backward_hook(hook, full=False)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """A full backward hook run before every module's own ones."""
    return _register_global_backward_hook(hook, full=True)


def _register_global_backward_hook(hook, full: bool) -> RemovableHandle:
    """Legacy and full global backward hooks share one dict: only one kind may be used."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook not in (None, full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full
    return _add_hook(_global_backward_hooks, hook)


def _forward_unimplemented(self, *input):
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module:
    """Base class for all neural network modules."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        state = self.__dict__
        state["training"] = True
        state["_parameters"] = {}
        state["_buffers"] = {}
        state["_non_persistent_buffers_set"] = set()
        state["_backward_pre_hooks"] = OrderedDict()
        state["_backward_hooks"] = OrderedDict()
        state["_is_full_backward_hook"] = None
        state["_forward_hooks"] = OrderedDict()
        state["_forward_hooks_with_kwargs"] = OrderedDict()
        state["_forward_hooks_always_called"] = OrderedDict()
        state["_forward_pre_hooks"] = OrderedDict()
        state["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        state["_state_dict_hooks"] = OrderedDict()
        state["_state_dict_pre_hooks"] = OrderedDict()
        state["_load_state_dict_pre_hooks"] = OrderedDict()
        state["_load_state_dict_post_hooks"] = OrderedDict()
        state["_modules"] = {}
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # -- registration ---------------------------------------------------------------------

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a buffer: module state that is not a parameter (e.g. running_mean)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = _run_registration_hooks(_global_buffer_registration_hooks, self,
                                                      name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Add a parameter (a Parameter or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        self._parameters[name] = _run_registration_hooks(_global_parameter_registration_hooks,
                                                         self, name, param)

    def add_module(self, name: str, module) -> None:
        """Add a child module under ``name`` (None is allowed)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._store_module(name, module)

    def _store_module(self, name: str, module) -> None:
        """File ``module`` (or None) under ``name``, after the global registration hooks."""
        self._modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                      name, module)

    def register_module(self, name: str, module) -> None:
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path ``target`` ("" is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Replace (or, unless ``strict``, add) the submodule at dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        *path, name = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        parent = self.get_submodule(".".join(path))
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def _owner_and_name(self, target: str):
        """(submodule, attribute name) of dotted path ``target``; the attribute must exist."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        mod, name = self._owner_and_name(target)
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        mod, name = self._owner_and_name(target)
        buffer = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buffer

    def get_extra_state(self):
        """Override (with set_extra_state) to put extra picklable state in the state_dict."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state) -> None:
        """Counterpart of get_extra_state, called by load_state_dict."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    # -- attribute access -----------------------------------------------------------------

    def __getattr__(self, name: str):
        # only reached when ordinary lookup failed: look in the three registries
        state = self.__dict__
        if "_parameters" in state:
            params = state["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in state:
            buffers = state["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in state:
            modules = state["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        state = self.__dict__
        params = state.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _discard(name, state, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = state.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _discard(name, state, self._parameters, self._buffers,
                     self._non_persistent_buffers_set)
            self._store_module(name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self._store_module(name, value)
            return
        buffers = state.get("_buffers")
        if buffers is not None and name in buffers or \
                type(value) is Tensor and isinstance(value, Buffer):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = _buffer_persistent(value)
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(key for key in keys if not key[0].isdigit())

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        # modules pickled by older versions lack the newer registries
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_backward_pre_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # -- calling --------------------------------------------------------------------------

    def _call_impl(self, *args, **kwargs):
        state = self.__dict__
        if not (state["_forward_pre_hooks"] or state["_forward_hooks"]
                or state["_backward_pre_hooks"] or state["_backward_hooks"]
                or _global_forward_pre_hooks or _global_forward_hooks
                or _global_backward_pre_hooks or _global_backward_hooks):
            return state.get("_compiled_call_impl", self.forward)(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    __call__ = _call_impl

    def _call_with_hooks(self, args, kwargs):
        """The forward pass with every kind of hook, in PyTorch's order: pre-hooks
        (global first), backward-hook setup on the inputs, forward, forward hooks,
        backward-hook setup on the outputs; ``always_call`` hooks also run when
        forward raises."""
        result = None
        called_always = set()
        try:
            backward_pre_hooks = self._get_backward_pre_hooks()
            full_backward_hooks, legacy_backward_hooks = self._get_backward_hooks()
            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    hook_result = hook(self, args, kwargs)
                    if hook_result is not None:
                        if not (isinstance(hook_result, tuple) and len(hook_result) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {hook_result}.")
                        args, kwargs = hook_result
                else:
                    hook_result = hook(self, args)
                    if hook_result is not None:
                        args = hook_result if isinstance(hook_result, tuple) else (hook_result,)

            backward_hook = None
            if full_backward_hooks or backward_pre_hooks:
                backward_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
                args = backward_hook.setup_input_hook(args)

            result = self.__dict__.get("_compiled_call_impl", self.forward)(*args, **kwargs)

            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or \
                        hook_id in _global_forward_hooks_always_called:
                    called_always.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs or \
                        hook_id in _global_forward_hooks_with_kwargs:
                    hook_result = hook(self, args, kwargs, result)
                else:
                    hook_result = hook(self, args, result)
                if hook_result is not None:
                    result = hook_result

            if backward_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  f"Tensor or a tuple of Tensors but received {type(result)}",
                                  stacklevel=2)
                result = backward_hook.setup_output_hook(result)

            if legacy_backward_hooks:
                self._attach_legacy_backward_hooks(args, result, legacy_backward_hooks)
            return result
        except Exception:
            self._run_always_called_hooks(args, kwargs, result, called_always)
            raise

    def _run_always_called_hooks(self, args, kwargs, result, already_called) -> None:
        """After forward raised: the ``always_call`` forward hooks not yet run
        (their own errors become warnings, the original error propagates)."""
        for scope, hooks, always, with_kwargs in (
                ("global module forward hook", _global_forward_hooks,
                 _global_forward_hooks_always_called, {}),
                ("module forward hook", self._forward_hooks, self._forward_hooks_always_called,
                 self._forward_hooks_with_kwargs)):
            for hook_id, hook in hooks.items():
                if hook_id not in always or hook_id in already_called:
                    continue
                try:
                    if hook_id in with_kwargs:
                        hook_result = hook(self, args, kwargs, result)
                    else:
                        hook_result = hook(self, args, result)
                    if hook_result is not None:
                        result = hook_result
                except Exception as e:
                    warnings.warn(f"{scope} with ``always_call=True`` raised an exception that "
                                  f"was silenced as another error was raised in forward: {e}",
                                  stacklevel=2)

    def _get_backward_hooks(self):
        """(full backward hooks, legacy ``register_backward_hook`` hooks)."""
        full, legacy = [], []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        elif _global_is_full_backward_hook is False:
            legacy += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        elif self._is_full_backward_hook is False:
            legacy += self._backward_hooks.values()
        return full, legacy

    def _get_backward_pre_hooks(self):
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _attach_legacy_backward_hooks(self, args, result, hooks) -> None:
        """``register_backward_hook`` (deprecated): hooks on the grad_fn of the
        first output tensor, with PyTorch's warnings where that node does not
        see the module's whole input and output."""
        var = result
        while not isinstance(var, Tensor):
            if isinstance(var, dict):
                var = next(v for v in var.values() if isinstance(v, Tensor))
            else:
                var = var[0]
        grad_fn = var.grad_fn
        if grad_fn is not None:
            for hook in hooks:
                grad_fn.register_hook(_WrappedHook(hook, self))
            self._maybe_warn_non_full_backward_hook(args, result, grad_fn)

    def _maybe_warn_non_full_backward_hook(self, inputs, result, grad_fn) -> None:
        def deprecated(message):
            warnings.warn(message, FutureWarning, stacklevel=2)

        advice = "Please use register_full_backward_hook to get the documented behavior."
        if isinstance(result, Tensor):
            result = (result,)
        elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            return deprecated(
                "Using non-full backward hooks on a Module that does not return a single Tensor "
                "or a tuple of Tensors is deprecated and will be removed in future versions. "
                f"This hook will be missing some of the grad_output. {advice}")
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            return deprecated(
                "Using non-full backward hooks on a Module that does not take as input a single "
                "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                f"versions. This hook will be missing some of the grad_input. {advice}")
        out_grad_fns = {r.grad_fn for r in result if r.grad_fn is not None}
        if not out_grad_fns or (len(out_grad_fns) == 1 and grad_fn not in out_grad_fns):
            deprecated("Using a non-full backward hook when outputs are nested in python data "
                       "structure is deprecated and will be removed in future versions. This hook "
                       "will be missing some grad_output.")
        elif len(out_grad_fns) > 1:
            deprecated("Using a non-full backward hook when outputs are generated by different "
                       "autograd Nodes is deprecated and will be removed in future versions. This "
                       f"hook will be missing some grad_output. {advice}")
        elif {i.grad_fn for i in inputs if i.grad_fn is not None} != \
                {n[0] for n in grad_fn.next_functions}:
            deprecated("Using a non-full backward hook when the forward contains multiple "
                       "autograd Nodes is deprecated and will be removed in future versions. This "
                       f"hook will be missing some grad_input. {advice}")

    # -- hook registration ----------------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args) -> None or new args`` (``with_kwargs``:
        ``hook(module, args, kwargs) -> None or (args, kwargs)``) before forward."""
        handle = _add_hook(self._forward_pre_hooks, hook, prepend,
                           extra_dict=self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output) -> None or new output`` (``with_kwargs``:
        ``hook(module, args, kwargs, output)``) after forward."""
        handle = _add_hook(self._forward_hooks, hook, prepend,
                           extra_dict=[self._forward_hooks_with_kwargs,
                                       self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output) -> None or new grad_output``, before the
        module's input gradients are computed."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook) -> RemovableHandle:
        """Deprecated: a hook on the grad_fn of the module's first output."""
        return self._add_backward_hook(hook, full=False)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> None or new grad_input``,
        once the gradients with respect to the module's inputs are computed."""
        return self._add_backward_hook(hook, full=True, prepend=prepend)

    def _add_backward_hook(self, hook, full: bool, prepend: bool = False) -> RemovableHandle:
        """Legacy and full backward hooks share ``_backward_hooks``: a module takes one kind."""
        if self._is_full_backward_hook not in (None, full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = full
        return _add_hook(self._backward_hooks, hook, prepend)

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """Post-hook ``hook(module, state_dict, prefix, local_metadata)`` whose
        non-None result replaces the state_dict (private API)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via register_state_dict_post_hook")
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata) -> None``, after state_dict."""
        hook._from_public_api = True
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, prefix, keep_vars) -> None``, before state_dict."""
        return _add_hook(self._state_dict_pre_hooks, hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False) -> RemovableHandle:
        return _add_hook(self._load_state_dict_pre_hooks,
                         _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None``, before each module loads."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, incompatible_keys) -> None`` after each module loaded
        (it may edit the key lists in place)."""
        return _add_hook(self._load_state_dict_post_hooks, hook)

    # -- iteration ------------------------------------------------------------------------

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, member) over this module (and, with ``recurse``, its
        submodules), each member once unless ``remove_duplicate`` is False."""
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for key, value in get_members_fn(module):
                if value is None or value in memo:
                    continue
                if remove_duplicate:
                    memo.add(value)
                yield (module_prefix + "." + key if module_prefix else key), value

    def parameters(self, recurse: bool = True):
        """Iterator over the parameters (each once)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        """Iterator over (dotted name, parameter)."""
        return self._named_members(lambda module: module._parameters.items(), prefix=prefix,
                                   recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True):
        """Iterator over the buffers (each once)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        """Iterator over (dotted name, buffer)."""
        return self._named_members(lambda module: module._buffers.items(), prefix=prefix,
                                   recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        """Iterator over the immediate child modules (each once)."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """Iterator over (name, immediate child module)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        """Iterator over all modules of the tree, self first (each once)."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """Iterator over (dotted name, module), depth first, self first with ``prefix``."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + "." + name if prefix else name,
                                            remove_duplicate)

    # -- modes and gradients --------------------------------------------------------------

    def train(self, mode: bool = True):
        """Set training mode on this module and all submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        """Set ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: to None, or zeroed in place."""
        _reset_grads(self.parameters(), set_to_none)

    def share_memory(self):
        """Move parameters and buffers to shared memory (a no-op here: one process)."""
        return self

    def apply(self, fn):
        """Call ``fn`` on every submodule (children first) and then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- conversion -----------------------------------------------------------------------

    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's values by ``fn(tensor)``.
        By default a parameter keeps its identity (its ``.data`` is set), so
        optimizers built before ``.to()`` still see it; ``torch.__future__``'s
        switches make it swap contents in place (``swap_tensors``) or be
        replaced by a new Parameter instead."""
        from ... import __future__ as future
        from ...utils import swap_tensors
        from ...utils._python_dispatch import is_traceable_wrapper_subclass
        if recurse:
            for module in self.children():
                module._apply(fn)
        use_set_data = not future.get_overwrite_module_params_on_conversion()
        swap_all = future.get_swap_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            use_swap = swap_all or is_traceable_wrapper_subclass(param_applied)
            param_grad = param.grad
            if use_swap:
                try:
                    if param_grad is not None:
                        param.grad = None     # the grad is swapped on its own below
                    param_applied = Parameter(param_applied, requires_grad=param.requires_grad)
                    swap_tensors(param, param_applied)
                except Exception as e:
                    if param_grad is not None:
                        param.grad = param_grad
                    raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") \
                        from e
                out_param = param
            elif use_set_data:
                param.data = param_applied
                out_param = param
            else:
                out_param = Parameter(param_applied, param.requires_grad)
                self._parameters[key] = out_param
            if param_grad is None:
                continue
            with no_grad():
                grad_applied = fn(param_grad)
            if use_swap:
                grad_applied.requires_grad_(param_grad.requires_grad)
                try:
                    swap_tensors(param_grad, grad_applied)
                except Exception as e:
                    raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}.grad") \
                        from e
                out_param.grad = param_grad
            elif use_set_data:
                out_param.grad.data = grad_applied
            else:
                out_param.grad = grad_applied.requires_grad_(param_grad.requires_grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast parameters and buffers: ``to(device=None, dtype=None,
        non_blocking=False)``, ``to(dtype, non_blocking=False)``,
        ``to(tensor, non_blocking=False)``, ``to(memory_format=...)``.  Only floating
        and complex tensors change dtype."""
        device, dtype, non_blocking, memory_format = _parse_to(*args, **kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                                f"got desired dtype={dtype}")
            if dtype.is_complex:
                warnings.warn(
                    "Complex modules are a new feature under active development whose design may "
                    "change, and some modules might not work as expected when using complex "
                    "tensors as parameters or buffers. Please file an issue at "
                    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a "
                    "complex module does not work as expected.", stacklevel=2)

        def convert(t):
            target_dtype = dtype if t.is_floating_point() or t.is_complex() else None
            try:
                if memory_format is not None and t.dim() in (4, 5):
                    return t.to(device, target_dtype, non_blocking, memory_format=memory_format)
                return t.to(device, target_dtype, non_blocking)
            except NotImplementedError as e:
                if str(e) == "Cannot copy out of meta tensor; no data!":
                    raise NotImplementedError(
                        f"{e} Please use torch.nn.Module.to_empty() instead of "
                        "torch.nn.Module.to() when moving module from meta to a different "
                        "device.") from None
                raise

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True):
        """Move to ``device`` without copying values (uninitialized storage)."""
        from ... import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cuda(self, device=None):
        """Move everything to the GPU (raises: no CUDA here)."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        """Move everything to the CPU."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        """Cast every parameter and buffer to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Cast floating parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Cast floating parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Cast floating parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Cast floating parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # -- state_dict -----------------------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        """Put this module's own parameters and persistent buffers (not its
        children's) into ``destination``; layers override this to add state."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted name
        (detached unless ``keep_vars``), with ``_metadata`` holding each module's
        version."""
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
                "state_dict for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif hook_result is not None:
                destination = hook_result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        """Copy this module's own entries of ``state_dict`` into its parameters and
        persistent buffers, recording missing/unexpected keys and errors; layers
        override this to convert old formats (``local_metadata["version"]``)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update((k, v) for k, v in self._buffers.items()
                           if v is not None and k not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        from ... import __future__ as future
        use_swap_tensors = future.get_swap_module_params_on_conversion()
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(input_param)}")
                continue
            lazy = is_lazy(param)
            if not lazy and param.dim() == 0 and input_param.shape == (1,):
                input_param = input_param[0]   # checkpoints from before 0-d tensors
            if not lazy and input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current "
                                  f"model is {param.shape}.")
                continue
            if param.is_meta and not input_param.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint "
                              "to a meta parameter in the current model, which is a no-op. (Did "
                              "you mean to pass `assign=True` to assign items in the state "
                              "dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", stacklevel=2)
            try:
                with no_grad():
                    if use_swap_tensors:
                        self._swap_in_loaded(param, input_param, assign)
                    elif assign:
                        if isinstance(param, Parameter):
                            if isinstance(input_param, Parameter):
                                input_param.requires_grad_(param.requires_grad)
                            else:
                                input_param = Parameter(input_param, param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                action = "swapping" if use_swap_tensors else "copying"
                error_msgs.append(f'While {action} the parameter named "{key}", whose dimensions '
                                  f"in the model are {param.size()} and whose dimensions in the "
                                  f"checkpoint are {input_param.size()}, an exception occurred : "
                                  f"{ex.args}.")
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    head, dot, _ = key[len(prefix):].partition(".")
                    if head not in (self._modules if dot else local_state):
                        unexpected_keys.append(key)

    @staticmethod
    def _swap_in_loaded(param, input_param, assign) -> None:
        """load_state_dict under ``set_swap_module_params_on_conversion(True)``:
        ``param`` takes the content of ``param.module_load(input_param)``
        (``Tensor.module_load``; a subclass may override it)."""
        from ...utils import swap_tensors
        loaded = param.module_load(input_param, assign=assign)
        if loaded is input_param or loaded is param:
            raise RuntimeError("module_load returned one of self or other, please .detach() the "
                               "result if returning one of the inputs in module_load")
        if isinstance(param, Parameter):
            if isinstance(loaded, Parameter):
                loaded.requires_grad_(param.requires_grad)
            else:
                loaded = Parameter(loaded, requires_grad=param.requires_grad)
        swap_tensors(param, loaded)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy ``state_dict`` into this module's parameters and buffers (or, with
        ``assign``, make its tensors the module's).  With ``strict`` the keys must
        match exactly; returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # -- printing -------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The layer's own settings for its repr (``in_features=2, ...``)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's calls in place: ``torch.compile`` of its forward,
        with these arguments; hooks, if any, run eagerly around it.  A forward of
        glasstorch's own (``nn.Sequential``, ``nn.Linear``) stays eager, as PyTorch
        compiles ``_call_impl`` and its frame rules skip torch's own files."""
        from ... import compile as compile_
        from ..._dynamo.eval_frame import _is_library_code
        forward = getattr(type(self).forward, "__code__", None)
        if forward is not None and _is_library_code(forward):
            return
        self._compiled_call_impl = compile_(self.forward, *args, **kwargs)


def _reset_grads(params, set_to_none: bool) -> None:
    """``zero_grad`` of Module and Optimizer: drop each gradient, or detach it from
    any graph and zero it in place."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if p.grad.grad_fn is not None:
            p.grad.detach_()
        else:
            p.grad.requires_grad_(False)
        p.grad.zero_()


def _discard(name, *registries) -> None:
    """Remove ``name`` from each dict or set it is in (an attribute changing kind)."""
    for registry in registries:
        if name in registry:
            if isinstance(registry, dict):
                del registry[name]
            else:
                registry.discard(name)


def _parse_to(*args, **kwargs):
    """``torch._C._nn._parse_to``: (device, dtype, non_blocking, memory_format) from
    ``to``'s overloads (device/dtype/tensor positional or by keyword)."""
    device = dtype = None
    non_blocking = kwargs.pop("non_blocking", False)
    memory_format = kwargs.pop("memory_format", None)
    kwargs.pop("copy", None)
    if "device" in kwargs:
        device = kwargs.pop("device")
    if "dtype" in kwargs:
        dtype = kwargs.pop("dtype")
    if "tensor" in kwargs:
        args = (kwargs.pop("tensor"),) + args
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected "
                        f"keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        device, dtype = other.device, other.dtype
    elif rest and isinstance(rest[0], _dtypes.dtype):
        dtype = rest.pop(0)
    elif rest and (isinstance(rest[0], (str, int, _Device)) and not isinstance(rest[0], bool)):
        device = rest.pop(0)
        if rest and isinstance(rest[0], _dtypes.dtype):
            dtype = rest.pop(0)
    elif rest and rest[0] is None:
        rest.pop(0)
        if rest and isinstance(rest[0], _dtypes.dtype):
            dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError("to() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)})")
    if device is not None:
        device = _Device(device)
    return device, dtype, non_blocking, memory_format

