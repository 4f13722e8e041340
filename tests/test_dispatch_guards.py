"""torch._C's dispatch-key guards: which kernels a call enters under each.

A custom op gets a logging kernel at each key that matters (Autograd,
ADInplaceOrView, AutocastCPU, CPU); each kernel records its key and
redispatches to the keys below it.  The log is the dispatch trace, and it is
compared with PyTorch's for the same call under each guard.
"""
import itertools

import pytest
import torch

import glasstorch as gt

KEYS = ("AutocastCPU", "Autograd", "ADInplaceOrView", "CPU")
# Keys whose exclusion is compared.  (PyTorch also keeps the backend bit of an
# excluded per-backend key, so it prints AutogradCPU where glasstorch prints the
# functionality alone; dispatch ignores that bit in both.)
WATCHED = ("AutogradOther", "ADInplaceOrView", "AutocastCPU", "Python",
           "BackendSelect", "Functionalize")
_counter = itertools.count()


def logging_op(lib):
    """A fresh op ``f(Tensor x) -> Tensor`` whose kernels log the key they run at."""
    ns = f"guardtrace{next(_counter)}"
    library = lib.library.Library(ns, "DEF")
    library.define("f(Tensor x) -> Tensor")
    op = getattr(lib.ops, ns).f.default
    log = []

    def kernel(keyset, x):
        key = keyset.highestPriorityTypeId()
        log.append(key.name)
        if key.name == "CPU":
            return x.clone()
        return op.redispatch(keyset & lib._C._dispatch_keyset_full_after(key), x)

    for key in KEYS:
        library.impl("f", kernel, key, with_keyset=True)
    return library, op, log


def guards(lib):
    C, K = lib._C, lib._C.DispatchKey
    return {
        "none": lambda: C._PreserveDispatchKeyGuard(),
        "AutoDispatchBelowAutograd": C._AutoDispatchBelowAutograd,
        "AutoDispatchBelowADInplaceOrView": C._AutoDispatchBelowADInplaceOrView,
        "Exclude(ADInplaceOrView)": lambda: C._ExcludeDispatchKeyGuard(C.DispatchKeySet(K.ADInplaceOrView)),
        "Exclude(AutogradCPU)": lambda: C._ExcludeDispatchKeyGuard(C.DispatchKeySet(K.AutogradCPU)),
        "Include(AutocastCPU)": lambda: C._IncludeDispatchKeyGuard(K.AutocastCPU),
        "DisableAutocast": C._DisableAutocast,
        "Force(include=BackendSelect+AutocastCPU, exclude=ADInplaceOrView)":
            lambda: C._ForceDispatchKeyGuard(C.DispatchKeySet(K.BackendSelect) | C.DispatchKeySet(K.AutocastCPU),
                                             C.DispatchKeySet(K.ADInplaceOrView)),
        # (not a per-backend key: PyTorch leaves its backend bit behind in the
        # thread's excluded set when the guard restores it)
        "SetExclude(ADInplaceOrView)": lambda: C._SetExcludeDispatchKeyGuard(K.ADInplaceOrView, True),
        "SetExclude(AutocastCPU, False)": lambda: C._SetExcludeDispatchKeyGuard(K.AutocastCPU, False),
    }


def trace(lib, guard, *, requires_grad, autocast, inference):
    library, op, log = logging_op(lib)
    x = lib.ones(3, requires_grad=requires_grad)
    outer = lib.autocast("cpu") if autocast else lib.inference_mode() if inference else lib.no_grad()
    if not inference and not autocast:
        outer = lib.enable_grad()
    with outer, guards(lib)[guard]():
        out = op(x)
        sets = (str(lib._C._dispatch_tls_local_include_set()),
                [k for k in WATCHED if lib._C._dispatch_tls_is_dispatch_key_excluded(
                    getattr(lib._C.DispatchKey, k))])
    restored = (str(lib._C._dispatch_tls_local_include_set()), str(lib._C._dispatch_tls_local_exclude_set()))
    del library
    return log, sets, restored, out.requires_grad


@pytest.mark.parametrize("guard", list(guards(torch)))
@pytest.mark.parametrize("requires_grad,autocast,inference", [
    (True, False, False), (False, False, False), (True, True, False), (False, False, True)])
def test_guard_enters_the_keys_pytorch_enters(guard, requires_grad, autocast, inference):
    kw = dict(requires_grad=requires_grad, autocast=autocast, inference=inference)
    assert trace(gt, guard, **kw) == trace(torch, guard, **kw)


def test_autograd_kernel_written_the_pytorch_way():
    """A Python autograd kernel that runs the forward under
    _AutoDispatchBelowADInplaceOrView and wires its own Function."""
    def run(lib):
        library = lib.library.Library(f"guardfn{next(_counter)}", "DEF")
        library.define("double(Tensor x) -> Tensor")
        ns = library.ns
        library.impl("double", lambda x: x * 2, "CPU")

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with lib._C._AutoDispatchBelowADInplaceOrView():
                    return getattr(lib.ops, ns).double(x)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        library.impl("double", Double.apply, "Autograd")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = getattr(lib.ops, ns).double(x)
        y.sum().backward()
        return y.tolist(), type(y.grad_fn).__name__, x.grad.tolist()

    assert run(gt) == run(torch)
