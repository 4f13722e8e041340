"""Sample inputs for every op, run against glasstorch (CPU and Meta) and real
PyTorch (the oracle) by ``tests/test_op_registry.py``.

A sample is a function ``(make, lib) -> (args, kwargs)`` registered for one
overload name::

    @sample("aten::add.Tensor")
    def _(make, lib):
        return (make(3, 4), make(4)), {"alpha": 2}

``make(*shape, dtype="float32", low=-3, high=3, noncontiguous=False)`` builds a
tensor of ``lib`` (glasstorch or torch) from the *same* numpy values for both
libraries, so results can be compared exactly.  ``lib`` gives access to dtypes
(``lib.int64``) and functions when a sample needs them.

Options on ``@sample``: ``random=True`` (compare shape/dtype/strides only),
``atol``/``rtol``, ``inplace=True`` (compare the first argument after the call).
"""
from __future__ import annotations

import os
import random

import numpy as np

SAMPLES: dict[str, list] = {}
# Ops that legitimately have no sample, with the reason.
EXEMPT: dict[str, str] = {}


class Sample:
    def __init__(self, fn, random=False, atol=1e-5, rtol=1.3e-6, inplace=False, name="",
                 gradcheck_inputs=None):
        self.fn, self.random, self.atol, self.rtol, self.inplace = fn, random, atol, rtol, inplace
        self.name = name
        self.gradcheck_inputs = gradcheck_inputs


def sample(op_name, *, random=False, atol=1e-5, rtol=1.3e-6, inplace=False,
           gradcheck_inputs=None):
    """``gradcheck_inputs(xs)``: what gradcheck's perturbed inputs become before the op
    sees them, for ops that read part of an input (a triangle, a Hermitian matrix's
    half), as PyTorch's OpInfos' gradcheck wrappers do."""
    def register(fn):
        SAMPLES.setdefault(op_name, []).append(
            Sample(fn, random, atol, rtol, inplace, f"{op_name}:{fn.__name__}", gradcheck_inputs))
        return fn
    return register


def data_seeds(fixed: int, ci: int) -> tuple:
    """Data seeds for the registry-wide tests: ``fixed``, plus one drawn per local
    run (``ci`` under CI, so a green CI is reproducible).  A failure names its
    seed; ``GLASSTORCH_DATA_SEED=<seed>`` replays it."""
    drawn = os.environ.get("GLASSTORCH_DATA_SEED") or (
        ci if os.environ.get("CI") else random.randrange(2**31))
    return fixed, int(drawn)


class Maker:
    """Builds tensors of one library from a deterministic numpy stream."""

    def __init__(self, lib, seed=0, device="cpu"):
        self.lib = lib
        self.rng = np.random.default_rng(seed)
        self.device = device

    def __call__(self, *shape, dtype="float32", low=-3, high=3, noncontiguous=False):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        np_dtype = {"bool": np.bool_, "bfloat16": np.float32}.get(dtype, dtype)
        full_shape = tuple(shape[:-1]) + (shape[-1] * 2,) if (noncontiguous and shape) else shape
        if dtype == "bool":
            values = self.rng.integers(0, 2, size=full_shape).astype(np.bool_)
        elif np.dtype(np_dtype).kind in "iu":
            values = self.rng.integers(low, high, size=full_shape, endpoint=False).astype(np_dtype)
        elif np.dtype(np_dtype).kind == "c":
            values = (self.rng.uniform(low, high, size=full_shape)
                      + 1j * self.rng.uniform(low, high, size=full_shape)).astype(np_dtype)
        else:
            values = self.rng.uniform(low, high, size=full_shape).astype(np_dtype)
        t = self.lib.tensor(values.tolist() if values.ndim == 0 else values,
                            dtype=getattr(self.lib, dtype))
        if self.device != "cpu":
            t = t.to(self.device)
        if noncontiguous and shape:  # after .to(): a device copy would be dense again
            t = t[..., ::2]
        return t


def derive_out_samples():
    """Samples for out= overloads that have none, made from their functional
    overload's samples: the same arguments plus out= tensors of the result's
    shapes and dtypes (resizing zero-size outs is tests/test_out_variants.py's)."""
    from glasstorch._dispatcher.schema import parse_schema
    from glasstorch._ops.registry import DECLARATIONS, _autogen_list, _derive
    for qualified, entry in DECLARATIONS.items():
        schema = parse_schema("aten::" + entry["func"])
        for spec in _autogen_list(entry):
            kind, text = _derive(schema, spec)
            out_schema = parse_schema("aten::" + text)
            name = out_schema.name + (f".{out_schema.overload_name}" if out_schema.overload_name else "")
            if kind != "out" or name in SAMPLES:
                continue
            if qualified in EXEMPT:     # an out= overload of an exempt op, for its reason
                EXEMPT.setdefault(name, EXEMPT[qualified])
            if qualified not in SAMPLES:
                continue
            out_names = [a.name for a in out_schema.arguments if a.is_out]
            accepted = {a.name for a in out_schema.arguments}
            for functional in SAMPLES[qualified]:
                if not functional.inplace and _defines_every_output(qualified, functional):
                    SAMPLES.setdefault(name, []).append(Sample(
                        _with_out(qualified, functional.fn, out_names, accepted), functional.random,
                        functional.atol, functional.rtol, False, f"{name}:{functional.name}"))


def _defines_every_output(functional_name, smp):
    """Whether the sample's call returns every output (an output mask can leave
    some undefined, and PyTorch refuses out= tensors for those)."""
    import glasstorch
    args, kwargs = smp.fn(Maker(glasstorch), glasstorch)
    base, _, overload = functional_name.split("::")[1].partition(".")
    result = getattr(getattr(glasstorch.ops.aten, base), overload or "default")(*args, **kwargs)
    return all(r is not None for r in (result if isinstance(result, (tuple, list)) else (result,)))


def _with_out(functional_name, sample_fn, out_names, accepted):
    def out_sample(make, lib):
        args, kwargs = sample_fn(make, lib)
        base, _, overload = functional_name.split("::")[1].partition(".")
        result = getattr(getattr(lib.ops.aten, base), overload or "default")(*args, **kwargs)
        results = result if isinstance(result, (tuple, list)) else (result,)
        outs = {n: lib.empty(r.shape, dtype=r.dtype, device=r.device) if r is not None else
                lib.empty(0, device=args[0].device) for n, r in zip(out_names, results)}
        # a factory's dtype=/device= are out's own (the out= overload has none)
        return args, {**{k: v for k, v in kwargs.items() if k in accepted}, **outs}
    return out_sample
