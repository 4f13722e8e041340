"""Comparisons between a glasstorch result and real PyTorch's."""
from __future__ import annotations

import numpy as np


def to_numpy(t):
    """Values of a glasstorch or torch tensor as a float64/complex/bool numpy array."""
    if hasattr(t, "_cpu_array"):                    # glasstorch
        a = t._cpu_array()
        return a.astype(np.float32) if t.dtype.name in ("bfloat16", "float16") else np.asarray(a)
    import torch
    t = t.detach()
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.float()
    return t.numpy(force=True)   # (force: a gradient may be a ZeroTensor)


def assert_same(ours, theirs, *, atol=1e-5, rtol=1.3e-6, values=True, strides=True, equal_nan=True):
    """Same structure, dtype, shape, strides and (optionally) values."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"expected a sequence, got {type(ours)}"
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same(o, t, atol=atol, rtol=rtol, values=values, strides=strides)
        return
    if not hasattr(theirs, "dtype"):
        assert ours == theirs or (isinstance(theirs, float) and np.isclose(ours, theirs, atol=atol,
                                                                            rtol=rtol, equal_nan=True))
        return
    assert str(ours.dtype) == str(theirs.dtype), f"dtype {ours.dtype} != {theirs.dtype}"
    assert tuple(ours.shape) == tuple(theirs.shape), f"shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
    if strides and theirs.numel() > 1:
        assert tuple(ours.stride()) == tuple(theirs.stride()), \
            f"strides {ours.stride()} != {theirs.stride()} (shape {tuple(theirs.shape)})"
    if values and ours.device.type != "meta":
        a, b = to_numpy(ours), to_numpy(theirs)
        if a.dtype == np.bool_ or b.dtype == np.bool_ or a.dtype.kind in "iu":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=equal_nan)


def same_storage(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def op_logger(lib):
    """A TorchDispatchMode class of ``lib`` that records the name of every op that
    reaches it (``with op_logger(lib)() as log: ...; log.ops``)."""
    class OpLogger(lib.utils._python_dispatch.TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))
    return OpLogger
