"""``torch._C``: the introspection entry points PyTorch exposes from C++.

Only what is observable from Python lives here: key sets of tensors and of the
current thread, operator tables, schema parsing, and dispatch-key guards.
"""
from __future__ import annotations

from ._core import dispatch_key as _dk
from ._core.dispatch_key import DispatchKey, DispatchKeySet
from ._core.tls import state as _tls
from ._dispatcher import dispatcher as _dispatcher_mod
from ._dispatcher.schema import parse_schema, FunctionSchema
from ._ops.tags import Tag  # noqa: F401  (torch._C.Tag)
from ._tensor import Tensor as TensorBase

_TensorBase = TensorBase


def _dispatch_keys(tensor) -> DispatchKeySet:
    """The key set a tensor carries (``torch._C._dispatch_keys``)."""
    return DispatchKeySet(tensor._keys)


_dispatch_key_set = _dispatch_keys


def _dispatch_tls_local_include_set() -> DispatchKeySet:
    return DispatchKeySet(_tls.included)


def _dispatch_tls_local_exclude_set() -> DispatchKeySet:
    return DispatchKeySet(_tls.excluded)


def _dispatch_keyset_full_after(key: DispatchKey) -> DispatchKeySet:
    return DispatchKeySet(_dk.full_after(key))


def _dispatch_dump(name: str) -> str:
    return _dispatcher_mod.dump(name)


def _dispatch_dump_table(name: str) -> str:
    return _dispatcher_mod.dump_table(name)


def _dispatch_has_kernel_for_dispatch_key(name: str, key) -> bool:
    key = DispatchKey[key] if isinstance(key, str) else key
    entry = _dispatcher_mod.dispatcher.find(name)
    return entry is not None and key in entry.kernels


def _dispatch_kernel_for_dispatch_key_is_fallthrough(name: str, key) -> bool:
    key = DispatchKey[key] if isinstance(key, str) else key
    entry = _dispatcher_mod.dispatcher.find(name)
    kernel = entry.table[key] if entry is not None else None
    return kernel is not None and kernel.is_fallthrough


def _dispatch_get_registrations_for_dispatch_key(key="") -> list:
    key = DispatchKey[key] if isinstance(key, str) and key else key
    return [name for name, entry in _dispatcher_mod.dispatcher.operators.items()
            if not key or key in entry.kernels]


def _dispatch_num_backends() -> int:
    return _dk.NUM_BACKENDS


class _PreserveDispatchKeyGuard:
    """``with _PreserveDispatchKeyGuard():`` restores this thread's included and
    excluded key sets on exit (c10's ``impl::ForceDispatchKeyGuard`` saving the
    local set).  Its subclasses change the sets on entry; all of PyTorch's
    dispatch-key guards are this save/restore plus one change."""

    def __enter__(self):
        self._saved = (_tls.included, _tls.excluded)
        self._apply()
        return self

    def __exit__(self, *exc):
        _tls.included, _tls.excluded = self._saved
        return False

    def _apply(self):
        pass


def _keyset_bits(keys) -> int:
    return DispatchKeySet(keys).repr


class _IncludeDispatchKeyGuard(_PreserveDispatchKeyGuard):
    """``with _IncludeDispatchKeyGuard(DispatchKey.X):`` adds X to this thread's included set."""

    def __init__(self, key):
        self._bits = _keyset_bits(key)

    def _apply(self):
        _tls.included |= self._bits


class _ExcludeDispatchKeyGuard(_PreserveDispatchKeyGuard):
    """``with _ExcludeDispatchKeyGuard(DispatchKeySet(...)):`` removes keys for this thread."""

    def __init__(self, keyset):
        self._bits = _keyset_bits(keyset)

    def _apply(self):
        _tls.excluded |= self._bits & ~_dk.BACKEND_MASK   # backends can't be excluded


class _AutoDispatchBelowAutograd(_ExcludeDispatchKeyGuard):
    """``at::AutoDispatchBelowAutograd``: the Autograd keys excluded, so calls
    made in a Python autograd kernel reach the kernels below without recording."""

    def __init__(self):
        self._bits = _dk.AUTOGRAD_KEYS


class _AutoDispatchBelowADInplaceOrView(_ExcludeDispatchKeyGuard):
    """``at::AutoDispatchBelowADInplaceOrView``: the Autograd keys and
    ADInplaceOrView excluded (what a custom op's autograd kernel runs under)."""

    def __init__(self):
        self._bits = _dk.AUTOGRAD_KEYS | _dk.ADINPLACEORVIEW


class _ForceDispatchKeyGuard(_PreserveDispatchKeyGuard):
    """``with _ForceDispatchKeyGuard(include, exclude):`` sets both local key sets outright."""

    def __init__(self, include, exclude):
        self._sets = (_keyset_bits(include), _keyset_bits(exclude) & ~_dk.BACKEND_MASK)

    def _apply(self):
        _tls.included, _tls.excluded = self._sets


class _SetExcludeDispatchKeyGuard(_PreserveDispatchKeyGuard):
    """``with _SetExcludeDispatchKeyGuard(key, True | False):`` one key in or out of the excluded set."""

    def __init__(self, key, value):
        self._key, self._value = key, value

    def _apply(self):
        _dispatch_tls_set_dispatch_key_excluded(self._key, self._value)


def _dispatch_tls_set_dispatch_key_excluded(key, value: bool) -> None:
    bits = _keyset_bits(key) & ~_dk.BACKEND_MASK
    _tls.excluded = (_tls.excluded | bits) if value else (_tls.excluded & ~bits)


def _dispatch_tls_set_dispatch_key_included(key, value: bool) -> None:
    bits = _keyset_bits(key)
    _tls.included = (_tls.included | bits) if value else (_tls.included & ~bits)


def _get_operation_overload(name: str, overload: str):
    from ._dispatcher.dispatcher import ops
    ns, _, base = name.partition("::")
    return getattr(getattr(getattr(ops, ns), base), overload or "default")


# -- Python extension points (torch/csrc/utils/disable_torch_function.cpp) ----------

from ._core.tls import ALL_DISABLED as _ALL_DISABLED, SUBCLASSES_DISABLED as _SUBCLASSES_DISABLED  # noqa: E402
from ._tensor import _disabled_torch_function_impl, _disabled_torch_dispatch_impl  # noqa: E402,F401


class _TorchFunctionGuard:
    """Sets this thread's ``__torch_function__`` state for a block."""

    _state = None

    def __enter__(self):
        self._previous = _tls.torch_function
        _tls.torch_function = max(self._previous, self._state)
        return self

    def __exit__(self, *exc):
        _tls.torch_function = self._previous


class DisableTorchFunctionSubclass(_TorchFunctionGuard):
    """Subclasses' ``__torch_function__`` is skipped in the block (modes still run)."""

    _state = _SUBCLASSES_DISABLED


class DisableTorchFunction(_TorchFunctionGuard):
    """No ``__torch_function__`` handling at all in the block, modes included."""

    _state = _ALL_DISABLED


def _is_torch_function_enabled() -> bool:
    return _tls.torch_function == 0


def _is_torch_function_all_disabled() -> bool:
    return _tls.torch_function == _ALL_DISABLED


def _is_torch_function_mode_enabled() -> bool:
    return bool(_tls.function_modes) and _tls.torch_function != _ALL_DISABLED


def _len_torch_function_stack() -> int:
    return len(_tls.function_modes)


def _len_torch_dispatch_stack() -> int:
    return len(_tls.dispatch_modes)


def _dispatch_tls_is_dispatch_key_included(key) -> bool:
    return bool(_tls.included & DispatchKeySet(key).repr)


def _dispatch_tls_is_dispatch_key_excluded(key) -> bool:
    return bool(_tls.excluded & DispatchKeySet(key).repr & ~_dk.BACKEND_MASK)


# -- autocast (torch/csrc/autograd/init.cpp's autocast bindings) ---------------------

def _autocast_supported_devices() -> list:
    return ["cpu", "cuda", "mtia", "maia", "xpu", "ipu", "hpu", "xla", "privateuseone", "mps"]


def _is_autocast_available(device_type: str) -> bool:
    from .amp.autocast_state import is_autocast_available
    return is_autocast_available(device_type)


def _is_any_autocast_enabled() -> bool:
    """Is some device's Autocast key out of this thread's excluded set?"""
    return (_tls.excluded & _dk.AUTOCAST_KEYS) != _dk.AUTOCAST_KEYS


class _DisableAutocast(_ExcludeDispatchKeyGuard):
    """``with _DisableAutocast():`` every Autocast key excluded for the block."""

    def __init__(self):
        self._bits = _dk.AUTOCAST_KEYS


# -- the backward pass (torch/csrc/autograd/init.cpp) ---------------------------------

def _current_graph_task_id() -> int:
    from .autograd.engine import current_graph_task_id
    return current_graph_task_id()


def _will_engine_execute_node(node) -> bool:
    from .autograd.engine import will_engine_execute_node
    return will_engine_execute_node(node)


# -- the generated bindings by their C module's name ------------------------------------

class _BindingModule:
    """``torch._C._nn`` (``_linalg``, ``_special``, ``_fft``): the bindings of one
    namespace by name (``_nn.linear``, ``_linalg.linalg_norm``), as code PyTorch
    generates (FX's ``forward``) calls them; for ``_nn``, what glasstorch writes
    in Python (``softplus``, ``one_hot``) comes from ``nn.functional``."""

    def __init__(self, namespace: str):
        self._namespace = namespace

    def __getattr__(self, name: str):
        from ._ops.registry import FUNCTIONS
        found = FUNCTIONS[self._namespace].get(name)
        if found is None and self._namespace == "nn" and not name.startswith("_"):
            from .nn import functional
            found = getattr(functional, name, None)
        if found is None:
            raise AttributeError(f"module 'torch._C._{self._namespace}' has no attribute "
                                 f"'{name}'")
        return found


_nn, _linalg, _special, _fft = (_BindingModule(ns) for ns in ("nn", "linalg", "special", "fft"))


def _set_grad_enabled(enabled: bool) -> None:
    """Turn grad mode on or off (what ``no_grad`` does; Dynamo records it in graphs)."""
    _tls.grad_enabled = bool(enabled)


_set_grad_enabled.__module__ = "torch._C"


class _functorch:
    """``torch._C._functorch``: the transform stack and its tensors, seen from
    Python (``glasstorch/_functorch``)."""

    @staticmethod
    def is_batchedtensor(tensor) -> bool:
        from ._functorch.batched_tensor import BatchedTensor
        return isinstance(tensor, BatchedTensor)

    @staticmethod
    def is_gradtrackingtensor(tensor) -> bool:
        from ._functorch.tensor_wrapper import TensorWrapper
        return isinstance(tensor, TensorWrapper)

    @staticmethod
    def maybe_get_level(tensor) -> int:
        """The level of the transform that made ``tensor``; -1 for a plain tensor."""
        return getattr(tensor, "_level", -1) if _functorch._is_wrapper(tensor) else -1

    @staticmethod
    def maybe_get_bdim(tensor) -> int:
        return tensor._bdim if _functorch.is_batchedtensor(tensor) else -1

    @staticmethod
    def get_unwrapped(tensor):
        if not _functorch._is_wrapper(tensor):
            raise RuntimeError("get_unwrapped: expected a BatchedTensor or a TensorWrapper")
        return tensor._value

    @staticmethod
    def _is_wrapper(tensor) -> bool:
        return _functorch.is_batchedtensor(tensor) or _functorch.is_gradtrackingtensor(tensor)

    @staticmethod
    def maybe_current_level():
        """The innermost active transform's level, None when none is active."""
        return _tls.functorch_layers[-1].level() if _tls.functorch_layers else None

    @staticmethod
    def _add_batch_dim(tensor, bdim: int, level: int):
        from ._functorch.batched_tensor import add_batch_dim
        return add_batch_dim(tensor, bdim, level)

    @staticmethod
    def _remove_batch_dim(tensor, level: int, batch_size: int, out_dim: int):
        from ._functorch.batched_tensor import remove_batch_dim
        return remove_batch_dim(tensor, level, batch_size, out_dim)

    @staticmethod
    def _set_vmap_fallback_warning_enabled(enabled: bool) -> None:
        from ._functorch.batch_rules import _fallback_warning
        _fallback_warning[0] = bool(enabled)

    @staticmethod
    def _is_vmap_fallback_warning_enabled() -> bool:
        from ._functorch.batch_rules import _fallback_warning
        return _fallback_warning[0]
