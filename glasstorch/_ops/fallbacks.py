"""Backend fallbacks registered at startup (PyTorch registers these in C++
static initializers; pytorch-facts §1.5).

Fallthrough fallbacks make dispatch skip a key for every operator that has no
kernel of its own there, at no cost: the key's bit is masked out of the set.

    BackendSelect      only factories (no tensor arguments) need it
    ADInplaceOrView    only in-place and view ops have kernels there
    Autocast*          only ops with an autocast policy have kernels there
    Autograd<B>        ops without an autograd kernel run as if it weren't there
                       (PyTorch's VariableFallbackKernel with autograd fallback
                       mode "nothing"; the autograd layer registers real kernels)
    PythonTLSSnapshot  fallthrough (the Python fallback sets the state it needs)
    FuncTorchVmapMode  only random ops have kernels there (vmap's randomness)

and these real boxed fallbacks:

    PreDispatch        hands the call to export's pre-dispatch tracer
                       (``_dispatcher/pre_dispatch.py``)
    Python             hands the call to TorchDispatchModes and ``__torch_dispatch__``
                       (``_dispatcher/python_key.py``)
    FuncTorchDynamicLayerFrontMode / BackMode
                       the function transforms' stack (``_functorch/pyfunctorch.py``)
    FuncTorchGradWrapper  a grad level's tensor that outlived its level
    FuncTorchBatched   batching rules (``_functorch/batch_rules``)
    Meta               an op with no Meta kernel (only user ops can lack one: the
                       registry refuses aten ops Meta cannot run) raises PyTorch's
                       "no fake impl" error
"""
from __future__ import annotations

import importlib

from .._core.dispatch_key import DispatchKey, FUNCTIONALITIES
from .._dispatcher.dispatcher import BOXED, KernelFunction, dispatcher, fallthrough_kernel
from .._dispatcher.pre_dispatch import pre_dispatch_fallback
from .._dispatcher.python_key import python_fallback

_FALLTHROUGH_KEYS = ["BackendSelect", "ADInplaceOrView", "Autograd", "PythonTLSSnapshot",
                     "FuncTorchVmapMode"] + \
    [name for name in FUNCTIONALITIES if name.startswith("Autocast")]


def register_builtin_fallbacks() -> None:
    kernel = KernelFunction(fallthrough_kernel, debug="registered at glasstorch/_ops/fallbacks.py")
    for name in _FALLTHROUGH_KEYS:
        dispatcher.register_fallback(DispatchKey[name], kernel)
    dispatcher.register_fallback(DispatchKey.Python, KernelFunction(
        python_fallback, BOXED, "registered at glasstorch/_dispatcher/python_key.py"))
    dispatcher.register_fallback(DispatchKey.PreDispatch, KernelFunction(
        pre_dispatch_fallback, BOXED, "registered at glasstorch/_dispatcher/pre_dispatch.py"))
    for key, fn, where in (
            (DispatchKey.FuncTorchDynamicLayerFrontMode, _front_fallback,
             "_functorch/pyfunctorch.py"),
            (DispatchKey.FuncTorchDynamicLayerBackMode, _back_fallback,
             "_functorch/pyfunctorch.py"),
            (DispatchKey.FuncTorchGradWrapper, _grad_wrapper_fallback, "_functorch/pyfunctorch.py"),
            (DispatchKey.FuncTorchBatched, _batched_fallback, "_functorch/batch_rules")):
        dispatcher.register_fallback(key, KernelFunction(fn, BOXED, f"registered at glasstorch/{where}"))
    dispatcher.register_fallback(DispatchKey.Meta, KernelFunction(
        _meta_fallback, BOXED, "registered at glasstorch/_ops/fallbacks.py"))


def _meta_fallback(op, keyset, args, kwargs):
    raise NotImplementedError(
        f"{op._name}: attempted to run this operator with Meta tensors, but there was no fake "
        "impl or Meta kernel registered. You may have run into this message while using an "
        "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this "
        "operator with those APIs you'll need to add a fake impl. Please see the following for "
        "next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


# The function transforms' fallbacks live in glasstorch._functorch, which is
# imported after the op library (it needs it): these reach them at call time.

def _later(module: str, name: str):
    """A boxed kernel calling ``glasstorch.<module>.<name>``, imported on first use."""
    def kernel(op, keyset, args, kwargs):
        return getattr(importlib.import_module(f"glasstorch.{module}"), name)(op, keyset, args,
                                                                               kwargs)
    kernel.__name__ = kernel.__qualname__ = name
    return kernel


_front_fallback = _later("_functorch.pyfunctorch", "dynamic_layer_front_fallback")
_back_fallback = _later("_functorch.pyfunctorch", "dynamic_layer_back_fallback")
_grad_wrapper_fallback = _later("_functorch.pyfunctorch", "grad_wrapper_fallback")
_batched_fallback = _later("_functorch.batch_rules", "batched_fallback")   # rules load on first use
vmap_mode_random_kernel = _later("_functorch.batch_rules.random", "vmap_mode_random_kernel")
