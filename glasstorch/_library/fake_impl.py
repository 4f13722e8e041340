"""Fake implementations of operators (torch/_library/fake_impl.py).

A fake impl ("meta kernel", "abstract impl") says what an operator's outputs
look like -- shape, dtype, strides, device -- without computing them.  It is
kept in the operator's ``FakeImplHolder`` (simple_registry.py) and installed
as the operator's Meta kernel, so meta tensors run it and so does FakeTensor,
which computes on meta tensors.

``torch.library.get_ctx()`` inside a fake impl returns what the fake-tensor
machinery running it installed with ``set_ctx_getter`` (PyTorch's
FakeImplCtx, for data-dependent output sizes); the Meta kernel installs a
getter that refuses, because a meta tensor cannot carry such a size.
"""
from __future__ import annotations

import contextlib
import functools

from .utils import RegistrationHandle

__all__ = ["FakeImplHolder", "Kernel", "get_ctx", "set_ctx_getter"]


class Kernel:
    """A registered fake impl and where it was registered (``file:line``)."""

    def __init__(self, func, source: str):
        self.func = func
        self.source = source

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)


class FakeImplHolder:
    """The fake impls registered for one operator; the newest one is in effect."""

    def __init__(self, qualname: str):
        self.qualname = qualname
        self.kernels: list[Kernel] = []

    @property
    def kernel(self):
        return self.kernels[-1] if self.kernels else None

    def register(self, func, source: str, lib, *, allow_override: bool = True):
        """Keep ``func`` and install it as the operator's Meta kernel through ``lib``."""
        from .. import _C
        if not allow_override:
            if self.kernel is not None:
                raise RuntimeError(f"register_fake(...): the operator {self.qualname} already "
                                   f"has a fake impl registered at {self.kernel.source}.")
            if _C._dispatch_has_kernel_for_dispatch_key(self.qualname, "Meta"):
                raise RuntimeError(f"register_fake(...): the operator {self.qualname} already "
                                   f"has a DispatchKey::Meta implementation via a pre-existing "
                                   f"torch.library or TORCH_LIBRARY registration. Please either "
                                   f"remove that registration or don't call register_fake.")
            if _C._dispatch_has_kernel_for_dispatch_key(self.qualname,
                                                        "CompositeImplicitAutograd"):
                raise RuntimeError(f"register_fake(...): the operator {self.qualname} already "
                                   f"has an implementation for this device type via a "
                                   f"pre-existing registration to "
                                   f"DispatchKey::CompositeImplicitAutograd."
                                   f"CompositeImplicitAutograd operators do not need a fake "
                                   f"impl; instead, the operator will decompose into its "
                                   f"constituents and those can have fake impls defined on them.")
        kernel = Kernel(func, source)
        self.kernels.append(kernel)
        try:
            lib.impl(self.qualname, _meta_kernel(self.qualname, self), "Meta",
                     allow_override=allow_override)
        except Exception:
            self.kernels.remove(kernel)
            raise
        return RegistrationHandle(lambda: self.kernels.remove(kernel))


def _meta_kernel(qualname: str, holder: FakeImplHolder):
    """The Meta kernel: run the holder's current fake impl, refusing ``get_ctx()``."""

    @functools.wraps(holder.kernel.func)
    def meta_kernel(*args, **kwargs):
        source = holder.kernel.source

        def error_on_ctx():
            raise RuntimeError(
                f"{qualname} ({source}): You're trying to run this operator with meta Tensors "
                f"(as opposed to FakeTensors), but this operator may return an output Tensor "
                f"with data-dependent shape. Meta Tensors don't support operators with outputs "
                f"that have data-dependent shapes but FakeTensors do. If your operator does not "
                f"return an output with data-dependent shape, make sure the FakeTensor and/or "
                f"meta kernel does not call torch.library.get_ctx(). Otherwise, please use "
                f"FakeTensors.")

        with set_ctx_getter(error_on_ctx):
            return holder.kernel(*args, **kwargs)

    return meta_kernel


def _no_ctx():
    return None


_ctx_getter = _no_ctx


@contextlib.contextmanager
def set_ctx_getter(ctx_getter):
    """Within the block, ``get_ctx()`` returns ``ctx_getter()``."""
    global _ctx_getter
    previous, _ctx_getter = _ctx_getter, ctx_getter
    try:
        yield
    finally:
        _ctx_getter = previous


def get_ctx():
    """``torch.library.get_ctx()``: the FakeImplCtx of the fake impl being run
    (None outside of one)."""
    return _ctx_getter()

