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

and one real boxed fallback:

    Python             hands the call to TorchDispatchModes and ``__torch_dispatch__``
                       (``_dispatcher/python_key.py``)
"""
from __future__ import annotations

from .._core.dispatch_key import DispatchKey, FUNCTIONALITIES
from .._dispatcher.dispatcher import BOXED, KernelFunction, dispatcher, fallthrough_kernel
from .._dispatcher.python_key import python_fallback

_FALLTHROUGH_KEYS = ["BackendSelect", "ADInplaceOrView", "Autograd", "PythonTLSSnapshot"] + \
    [name for name in FUNCTIONALITIES if name.startswith("Autocast")]


def register_builtin_fallbacks() -> None:
    kernel = KernelFunction(fallthrough_kernel, debug="registered at glasstorch/_ops/fallbacks.py")
    for name in _FALLTHROUGH_KEYS:
        dispatcher.register_fallback(DispatchKey[name], kernel)
    dispatcher.register_fallback(DispatchKey.Python, KernelFunction(
        python_fallback, BOXED, "registered at glasstorch/_dispatcher/python_key.py"))
