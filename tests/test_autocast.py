"""Autocast (glasstorch/amp) against real PyTorch's CPU autocast.

* every op of PyTorch's AutocastCPU lists that glasstorch has, on its registry
  samples: same output dtypes and close values under bfloat16 and float16
  autocast, with float32, float64, bfloat16, float16, mixed and integer inputs;
* the region semantics: nesting, ``enabled=False`` inner regions, state restored
  on exit, the dtype checks and their warnings, decorators, deprecated spellings,
  per-thread state;
* the weight-cast cache, counted as ``_to_copy`` calls (OpCounter here, a
  TorchDispatchMode in torch);
* gradients through the casts of a small model;
* the dispatch path of the seed exercise (AutocastCPU above AutogradCPU above CPU).
"""
from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import glasstorch as gt
from glasstorch._C import _dispatch_get_registrations_for_dispatch_key as our_registrations
from glasstorch._core.dispatch_key import DispatchKey, key_bits
from glasstorch._dispatcher.dispatcher import dispatch_trace, dispatcher
from glasstorch._dispatcher.op_counter import OpCounter
from glasstorch.amp import policies
from glasstorch.amp.autocast_kernels import make_autocast_kernel
from glasstorch.library import Library

from . import samples  # noqa: F401  (loads every sample)
from .differential import differential, returned
from .helpers import assert_same
from .opinfo import EXEMPT, SAMPLES, Maker


LOW_PRECISION = {"atol": 5e-2, "rtol": 2e-2}


def _op(lib, name):
    base, _, overload = name.partition(".")
    return getattr(getattr(lib.ops.aten, base), overload or "default")


def _listed_with_samples():
    """(op name, sample) for every CPU-listed op glasstorch has samples for."""
    return [(name, smp) for names in policies.CPU_POLICIES.values() for name in names
            for smp in SAMPLES.get("aten::" + name, [])]


LISTED = _listed_with_samples()


@pytest.fixture(autouse=True)
def _autocast_left_off():
    """Each test must leave this thread's autocast state as it found it."""
    yield
    assert not gt.is_autocast_enabled("cpu") and gt.get_autocast_dtype("cpu") is gt.bfloat16
    assert gt.autocast_increment_nesting() == 1 and gt.autocast_decrement_nesting() == 0


# -- the op lists --------------------------------------------------------------------

@pytest.mark.parametrize("key", ["AutocastCPU", "AutocastCUDA"])
def test_registrations_are_pytorchs_for_the_ops_we_have(key):
    theirs = set(torch._C._dispatch_get_registrations_for_dispatch_key(key))
    ours = set(our_registrations(key))
    have = {name for name in theirs if dispatcher.find(name) is not None}
    assert ours == have
    assert len(have) >= {"AutocastCPU": 40, "AutocastCUDA": 80}[key]


def test_policy_lists_name_pytorchs_registrations_exactly():
    for device, key in (("cpu", "AutocastCPU"), ("cuda", "AutocastCUDA")):
        listed = ["aten::" + n for names in policies.POLICIES[device].values() for n in names]
        assert sorted(listed) == sorted(torch._C._dispatch_get_registrations_for_dispatch_key(key))


def test_every_listed_op_we_have_is_sampled():
    for names in policies.CPU_POLICIES.values():
        for name in names:
            if dispatcher.find("aten::" + name) is not None and "aten::" + name not in EXEMPT:
                assert "aten::" + name in SAMPLES, name


def _run_under_autocast(lib, name, smp, fast_dtype, convert=None, seed=3):
    args, kwargs = smp.fn(Maker(lib, seed), lib)
    if convert is not None:
        args = convert(lib, args)
    try:
        with lib.autocast("cpu", dtype=getattr(lib, fast_dtype)):
            return _op(lib, name)(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - compared with torch's
        return exc


def _compare(ours, theirs, smp):
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert type(ours) is type(theirs) and str(ours) == str(theirs), (ours, theirs)
        return
    assert_same(ours, theirs, values=not smp.random, **LOW_PRECISION)


@pytest.mark.parametrize("name,smp", LISTED, ids=[s.name for _, s in LISTED])
def test_listed_op_matches_pytorch(name, smp):
    """Every sample, float32 inputs, bfloat16 autocast: output dtypes (lower
    precision, float32 or promoted) and values."""
    _compare(_run_under_autocast(gt, name, smp, "bfloat16"),
             _run_under_autocast(torch, name, smp, "bfloat16"), smp)


def _all_floating_to(dtype_name):
    def convert(lib, args):
        def cast(value):
            if isinstance(value, lib.Tensor) and value.is_floating_point():
                return value.to(getattr(lib, dtype_name))
            if isinstance(value, (list, tuple)):
                return type(value)(cast(v) for v in value)
            return value
        return cast(args)
    convert.__name__ = dtype_name
    return convert


FIRST_SAMPLES = {name: smp for name, smp in reversed(LISTED)}


@pytest.mark.parametrize("inputs", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(FIRST_SAMPLES))
def test_listed_op_with_other_input_dtypes(name, inputs):
    """One sample per op under bfloat16 and float16 autocast.
    float64 inputs are never cast; half inputs are cast to the autocast dtype
    (or to float32); bfloat16 inputs under float16 autocast (or the reverse)
    meet the promote policy's "Unexpected floating ScalarType" check."""
    smp = FIRST_SAMPLES[name]
    convert = _all_floating_to(inputs)
    for fast_dtype in ("bfloat16", "float16"):
        _compare(_run_under_autocast(gt, name, smp, fast_dtype, convert),
                 _run_under_autocast(torch, name, smp, fast_dtype, convert), smp)


MIXED = [
    ("mm", lambda lib: (lib.ones(2, 3, dtype=lib.float64), lib.ones(3, 2))),
    ("mm", lambda lib: (lib.ones(2, 3, dtype=lib.float16), lib.ones(3, 2))),
    ("matmul", lambda lib: (lib.arange(6.).reshape(2, 3), lib.ones(3, dtype=lib.float64))),
    ("linear", lambda lib: (lib.ones(2, 3), lib.ones(4, 3, dtype=lib.bfloat16), lib.ones(4))),
    ("addmm", lambda lib: (lib.ones(2, 2, dtype=lib.float64), lib.ones(2, 3), lib.ones(3, 2))),
    ("cat", lambda lib: ([lib.ones(2), lib.ones(2, dtype=lib.bfloat16),
                          lib.ones(2, dtype=lib.float64)],)),
    ("cat", lambda lib: ([lib.ones(2, dtype=lib.bfloat16), lib.ones(2, dtype=lib.float16)],)),
    ("cat", lambda lib: ([lib.ones(2, dtype=lib.bfloat16), lib.ones(2, dtype=lib.float64)],)),
    ("stack", lambda lib: ([lib.ones(2, dtype=lib.bfloat16), lib.arange(2)],)),
    ("index_copy", lambda lib: (lib.zeros(3, 2, dtype=lib.bfloat16), 0, lib.tensor([0, 2]),
                                lib.ones(2, 2))),
    ("mse_loss", lambda lib: (lib.ones(3, dtype=lib.bfloat16), lib.zeros(3, dtype=lib.float16))),
    ("prod", lambda lib: (lib.arange(1., 5., dtype=lib.bfloat16),)),
    # integer inputs are never eligible
    ("mm", lambda lib: (lib.arange(6).reshape(2, 3), lib.arange(6).reshape(3, 2))),
    ("cat", lambda lib: ([lib.arange(3), lib.arange(2, dtype=lib.int32)],)),
    ("stack", lambda lib: ([lib.arange(3), lib.arange(3)],)),
    ("prod", lambda lib: (lib.arange(1, 5),)),
    ("trace", lambda lib: (lib.arange(9).reshape(3, 3),)),
    ("bmm", lambda lib: (lib.ones(2, 2, 2, dtype=lib.int32), lib.ones(2, 2, 2, dtype=lib.int32))),
]


@pytest.mark.parametrize("fast_dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,make_args", MIXED,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(MIXED)])
def test_mixed_and_integer_inputs(name, make_args, fast_dtype):
    def scenario(lib):
        with lib.autocast("cpu", dtype=getattr(lib, fast_dtype)):
            return _op(lib, name)(*make_args(lib))
    differential(scenario, may_raise=True)


def test_unlisted_ops_run_in_the_dtypes_they_get():
    def scenario(lib):
        x = lib.arange(4.).reshape(2, 2)
        with lib.autocast("cpu"):
            low = x @ x
            return [low.exp(), low.softmax(0), low + x, lib.nn.functional.layer_norm(low, (2,)),
                    low.sum(), lib.relu(x)]
    differential(scenario)


# -- region semantics ------------------------------------------------------------------

def _matmul_dtype(lib):
    x = lib.ones(2, 2)
    return str((x @ x).dtype)


def test_nested_regions_and_restored_state():
    def scenario(lib):
        seen = [lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu"))]
        with lib.autocast("cpu", dtype=lib.float16):
            seen += [lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu")),
                     _matmul_dtype(lib)]
            with lib.autocast("cpu", enabled=False):
                seen += [lib.is_autocast_enabled("cpu"), _matmul_dtype(lib),
                         str(lib.get_autocast_dtype("cpu"))]
                with lib.autocast("cpu"):
                    seen += [_matmul_dtype(lib), str(lib.get_autocast_dtype("cpu"))]
                seen.append(_matmul_dtype(lib))
            seen += [_matmul_dtype(lib), lib.is_autocast_cache_enabled()]
            with lib.autocast("cpu", cache_enabled=False):
                seen.append(lib.is_autocast_cache_enabled())
            seen.append(lib.is_autocast_cache_enabled())
        seen += [lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu")),
                 _matmul_dtype(lib), lib.is_autocast_cache_enabled()]
        return seen
    differential(scenario)


def test_exception_inside_region_restores_state():
    def scenario(lib):
        try:
            with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
                raise KeyError("inside")
        except KeyError:
            pass
        return [lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu")),
                lib.is_autocast_cache_enabled(), _matmul_dtype(lib)]
    differential(scenario)


def test_decorator_and_reuse_of_one_instance():
    def scenario(lib):
        region = lib.autocast("cpu")

        @region
        def f(x):
            return x @ x, lib.is_autocast_enabled("cpu")
        out = [f(lib.ones(2, 2)), lib.is_autocast_enabled("cpu")]
        with region:
            out.append(_matmul_dtype(lib))
        out += [f(lib.ones(2, 2)), _matmul_dtype(lib)]
        return out
    differential(scenario)


def test_decorating_a_non_callable_raises():
    differential(lambda lib: lib.autocast("cpu")(3), may_raise=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64"])
def test_unsupported_cpu_dtype_warns_and_disables(dtype):
    def scenario(lib):
        region = lib.autocast("cpu", dtype=getattr(lib, dtype))
        with region:
            return region._enabled, lib.is_autocast_enabled("cpu"), _matmul_dtype(lib)
    differential(scenario)


@pytest.mark.parametrize("args", [("hip",), ("meta",), ("lazy",), ("nope",), ("cuda:0x",)])
def test_unsupported_devices_raise(args):
    differential(lambda lib: lib.autocast(*args), may_raise=True)


@pytest.mark.parametrize("device_type", [5, None])
def test_device_type_must_be_a_string(device_type):
    differential(lambda lib: lib.autocast(device_type), may_raise=True)


def test_cuda_autocast_without_cuda_warns_and_disables():
    def scenario(lib):
        region = lib.autocast("cuda")
        with region:
            return (region._enabled, str(region.fast_dtype), lib.is_autocast_enabled("cuda"),
                    lib.is_autocast_enabled())
    differential(scenario)


def test_amp_namespace_is_the_same_class():
    assert gt.autocast is gt.amp.autocast is gt.amp.autocast_mode.autocast
    assert gt.amp.is_autocast_available("cpu") and not gt.amp.is_autocast_available("meta")


@pytest.mark.parametrize("path", ["cpu", "cuda"])
def test_deprecated_amp_autocast_spellings(path):
    def scenario(lib):
        region = getattr(lib, path).amp.autocast()
        with region:
            return (isinstance(region, lib.autocast), region.device, str(region.fast_dtype),
                    region._enabled, lib.is_autocast_enabled(path))
    differential(scenario)


def test_deprecated_submodules_import():
    import glasstorch.cpu.amp
    import glasstorch.cuda.amp
    from glasstorch.cuda.amp import GradScaler, autocast  # noqa: F401
    assert glasstorch.cuda.amp.autocast is autocast and gt.cpu.amp is glasstorch.cpu.amp


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_and_custom_bwd(cast_inputs):
    """custom_fwd casts the inputs and runs forward with autocast off (or records
    the state); custom_bwd reruns backward under forward's autocast state."""
    def scenario(lib):
        seen = []

        class MatMul(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu",
                                cast_inputs=cast_inputs and getattr(lib, cast_inputs))
            def forward(ctx, x, w):
                seen.append(("forward", str(x.dtype), str(w.dtype), lib.is_autocast_enabled("cpu")))
                ctx.save_for_backward(x, w)
                return x @ w

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                x, w = ctx.saved_tensors
                seen.append(("backward", lib.is_autocast_enabled("cpu"),
                             str(lib.get_autocast_dtype("cpu"))))
                return grad.to(x.dtype) @ w.t().to(x.dtype), x.t().to(w.dtype) @ grad.to(w.dtype)
        x = lib.ones(2, 3, dtype=lib.bfloat16, requires_grad=True)
        w = lib.ones(3, 2, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.float16):
            y = MatMul.apply(x, w)
        y.float().sum().backward()
        return y, x.grad, w.grad, seen
    differential(scenario)


def test_custom_fwd_needs_a_string_device_type():
    differential(lambda lib: lib.amp.custom_fwd(device_type=0), may_raise=True)


# -- the state functions -----------------------------------------------------------------

DEVICE_TYPES = ["cpu", "cuda", "ipu", "xpu", "hip", "maia", "xla", "mps", "hpu", "mtia",
                "privateuseone", "meta", "lazy", "cuda:0", "nope"]


@pytest.mark.parametrize("device", DEVICE_TYPES)
def test_state_functions_per_device(device):
    """Default dtypes, the errors of devices without autocast, and setting both
    (a device with no default keeps the dtype set here, in both libraries)."""
    def scenario(lib):
        out = []
        for call in (lambda: lib.get_autocast_dtype(device),
                     lambda: lib.is_autocast_enabled(device),
                     lambda: lib.set_autocast_dtype(device, lib.float16),
                     lambda: lib.get_autocast_dtype(device),
                     lambda: lib.set_autocast_enabled(device, True),
                     lambda: lib.is_autocast_enabled(device),
                     lambda: lib.set_autocast_enabled(device, False)):
            try:
                out.append(call())
            except Exception as exc:  # noqa: BLE001
                out.append((type(exc).__name__, str(exc)))
        if isinstance(out[0], lib.dtype):
            lib.set_autocast_dtype(device, out[0])
        return [str(v) if isinstance(v, lib.dtype) else v for v in out]
    differential(scenario)


@pytest.mark.parametrize("call", [
    lambda lib: lib.set_autocast_enabled("cpu", 1),
    lambda lib: lib.set_autocast_enabled("cpu"),
    lambda lib: lib.is_autocast_enabled(5),
    lambda lib: lib.set_autocast_dtype("cpu", None),
    lambda lib: lib.set_autocast_dtype("cpu", "float16"),
    lambda lib: lib.set_autocast_cache_enabled(1),
    lambda lib: lib.is_autocast_enabled(),
    lambda lib: (lib.set_autocast_enabled(True), lib.is_autocast_enabled("cuda"),
                 lib.set_autocast_enabled(False), lib.is_autocast_enabled()),
    lambda lib: (lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
                 lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()),
    lambda lib: (lib.set_autocast_cache_enabled(False), lib.is_autocast_cache_enabled(),
                 lib.set_autocast_cache_enabled(True), lib.is_autocast_cache_enabled()),
    lambda lib: (lib.set_autocast_enabled(device_type="cpu", enabled=True),
                 lib.is_autocast_enabled(device_type="cpu"),
                 lib.set_autocast_enabled("cpu", enabled=False),
                 lib.set_autocast_dtype(device_type="cpu", dtype=lib.float16),
                 str(lib.get_autocast_dtype(device_type="cpu")),
                 lib.set_autocast_dtype("cpu", lib.bfloat16)),
], ids=["enabled-int", "enabled-str-only", "device-int", "dtype-none", "dtype-str", "cache-int",
        "cuda-default", "old-cuda-setter", "nesting", "cache-flag", "keywords"])
def test_state_function_calls(call):
    differential(call, may_raise=True)


DEPRECATED = ["is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
              "is_autocast_ipu_enabled", "get_autocast_ipu_dtype", "is_autocast_xla_enabled",
              "get_autocast_xla_dtype"]


@pytest.mark.parametrize("name", DEPRECATED)
def test_deprecated_getters_warn(name):
    def scenario(lib):
        return str(getattr(lib, name)())
    theirs, ours = (returned_with_warnings(lib, scenario) for lib in (torch, gt))
    assert ours == theirs


@pytest.mark.parametrize("name,value", [
    ("set_autocast_cpu_enabled", False), ("set_autocast_cpu_dtype", "bfloat16"),
    ("set_autocast_gpu_dtype", "float16"), ("set_autocast_ipu_enabled", False),
    ("set_autocast_ipu_dtype", "float16"), ("set_autocast_xla_enabled", False),
    ("set_autocast_xla_dtype", "bfloat16")])
def test_deprecated_setters_warn(name, value):
    def scenario(lib):
        return getattr(lib, name)(getattr(lib, value) if isinstance(value, str) else value)
    theirs, ours = (returned_with_warnings(lib, scenario) for lib in (torch, gt))
    assert ours == theirs


def returned_with_warnings(lib, fn):
    """What ``fn(lib)`` returned and its DeprecationWarnings, minus the
    "(Triggered internally at <C++ file>)" suffix torch's C++ adds."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(lib)
    return value, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
                   for w in caught if issubclass(w.category, DeprecationWarning)]


# -- the weight-cast cache ------------------------------------------------------------------

class _TorchCastCounter(TorchDispatchMode):
    """Counts the ``_to_copy`` calls that reach the Python key (the casts autocast
    makes; not the ones backend kernels make internally)."""

    def __init__(self):
        super().__init__()
        self.casts = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.casts += func is torch.ops.aten._to_copy.default
        return func(*args, **(kwargs or {}))


def count_casts(lib, fn):
    """How many ``_to_copy`` kernels ``fn()`` ran."""
    if lib is torch:
        with _TorchCastCounter() as counter:
            fn()
        return counter.casts
    with OpCounter() as counter:
        fn()
    # the _to_copy calls made above the backend kernels (the ones in a kernel,
    # e.g. TensorIterator's promotion of ``w * 1``'s 1, run under the CPU key)
    return counter.by_op_key["aten::_to_copy", "AutogradCPU"]


def _weights(lib):
    w = lib.arange(9.).reshape(3, 3).requires_grad_()
    return lib.ones(2, 3), w


CACHE_SCENARIOS = {
    "two-mm-one-weight-cast": lambda lib, x, w: [x @ w, lib.mm(x, w)],
    "fp32-policy-never-cached": lambda lib, x, w: [
        lib.nn.functional.mse_loss(w.to(lib.bfloat16), w.to(lib.bfloat16)) for _ in range(2)],
    "non-leaf-recast": lambda lib, x, w: [x @ (w * 1), x @ (w * 1)],
    "no-grad-weight-recast": lambda lib, x, w: [x @ w.detach(), x @ w.detach()],
    "view-recast": lambda lib, x, w: [x @ w[:, :2], x @ w[:, :2]],
    "inside-no-grad": lambda lib, x, w: _in_no_grad(lib, lambda: [x @ w, x @ w]),
    "cat-promote-not-cached": lambda lib, x, w: [lib.cat([w, w.to(lib.bfloat16)])] * 2,
}


def _in_no_grad(lib, fn):
    with lib.no_grad():
        return fn()


@pytest.mark.parametrize("cache_enabled", [None, False])
@pytest.mark.parametrize("name", sorted(CACHE_SCENARIOS))
def test_cast_cache_counts_match_pytorch(name, cache_enabled):
    def counts(lib):
        x, w = _weights(lib)
        region = lib.autocast("cpu", cache_enabled=cache_enabled)
        with region:
            first = count_casts(lib, lambda: CACHE_SCENARIOS[name](lib, x, w))
            again = count_casts(lib, lambda: CACHE_SCENARIOS[name](lib, x, w))
        with region:   # a new outermost region: the cache was cleared on exit
            fresh = count_casts(lib, lambda: CACHE_SCENARIOS[name](lib, x, w))
        return first, again, fresh
    assert counts(gt) == counts(torch)


def test_cache_lives_until_the_outermost_region_exits():
    def counts(lib):
        x, w = _weights(lib)
        out = []
        with lib.autocast("cpu"):
            with lib.autocast("cpu"):
                out.append(count_casts(lib, lambda: x @ w))
            out.append(count_casts(lib, lambda: x @ w))          # inner exit kept the cache
            with lib.autocast("cpu", enabled=False):
                out.append(count_casts(lib, lambda: x @ w))      # autocast off: no casts
            with lib.autocast("cpu", dtype=lib.float16):
                out.append(count_casts(lib, lambda: x @ w))      # another dtype: a new cast
            out.append(count_casts(lib, lambda: x @ w))
            lib.clear_autocast_cache()
            out.append(count_casts(lib, lambda: x @ w))
        return out
    assert counts(gt) == counts(torch)


def test_cache_is_process_wide_as_in_pytorch():
    """A weight cast in one thread's region serves another thread's region
    (2.13 keeps one cache behind a mutex; only the nesting depth is per thread)."""
    def counts(lib):
        x, w = _weights(lib)
        cast_done, finished = threading.Event(), threading.Event()
        result = {}

        def first():
            with lib.autocast("cpu"):
                x @ w
                cast_done.set()
                finished.wait(5)

        def second():
            cast_done.wait(5)
            with lib.autocast("cpu"):
                result["casts"] = count_casts(lib, lambda: x @ w)
            finished.set()
        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return result["casts"]
    assert counts(gt) == counts(torch)


# -- threads ---------------------------------------------------------------------------------

def test_autocast_region_does_not_leak_to_another_thread():
    def scenario(lib):
        inside, checked = threading.Event(), threading.Event()
        seen = {}

        def other():
            inside.wait(5)
            seen["other"] = (lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu")),
                             _matmul_dtype(lib), lib.autocast_increment_nesting(),
                             lib.autocast_decrement_nesting())
            checked.set()
        thread = threading.Thread(target=other)
        thread.start()
        with lib.autocast("cpu", dtype=lib.float16):
            inside.set()
            checked.wait(5)
            seen["main"] = (lib.is_autocast_enabled("cpu"), _matmul_dtype(lib))
        thread.join()
        return seen
    differential(scenario)


# -- gradients through the casts ---------------------------------------------------------------

def test_gradients_through_autocast_match_pytorch():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((16, 8), (16,), (4, 16), (4,))]
    inputs, target = rng.standard_normal((5, 8)).astype(np.float32), np.array([0, 1, 2, 3, 1])

    def train_step(lib):
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        F = lib.nn.functional
        with lib.autocast("cpu", dtype=lib.bfloat16):
            hidden = F.linear(lib.tensor(inputs), params[0], params[1]).relu()
            out = F.linear(hidden, params[2], params[3])
            loss = F.cross_entropy(out, lib.tensor(target)) + F.mse_loss(out, lib.zeros(5, 4))
        loss.backward()
        return out, loss, [p.grad for p in params], _graph_node_names(loss)

    ours, theirs = train_step(gt), train_step(torch)
    assert ours[3] == theirs[3]                   # the same nodes, casts included
    for o, t in zip([ours[0], ours[1], *ours[2]], [theirs[0], theirs[1], *theirs[2]]):
        assert_same(o, t, **LOW_PRECISION)


def _graph_node_names(tensor):
    names, seen, stack = [], set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        stack.extend(fn for fn, _ in node.next_functions)
    return sorted(names)


# -- the seed exercise: the dispatch path ---------------------------------------------------------

def test_seed_exercise_dispatch_trace():
    """``with autocast(bf16), no_grad(): y = a @ b``: AutocastCPU casts and calls
    matmul again; AutogradCPU (grad mode off) records nothing; CPU computes."""
    def scenario(lib):
        a = lib.ones(3, 4, requires_grad=True)
        b = lib.ones(4, 2, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16), lib.no_grad():
            y = a @ b
        return y
    assert returned(differential(scenario))[1] == "torch.bfloat16"

    a, b = gt.ones(3, 4, requires_grad=True), gt.ones(4, 2, requires_grad=True)
    with gt.autocast("cpu", dtype=gt.bfloat16), gt.no_grad():
        with dispatch_trace() as trace:
            a @ b
    lines = [line.strip() for line in str(trace).splitlines()]
    assert lines[0] == "[call] op=[aten::matmul], key=[AutocastCPU]"
    casts = [i for i, line in enumerate(lines)
             if line == "[call] op=[aten::_to_copy], key=[AutogradCPU]"]
    again = lines.index("[call] op=[aten::matmul], key=[AutogradCPU]")
    assert len(casts) == 2 and casts[-1] < again
    assert lines[again + 1:] == ["[call] op=[aten::mm], key=[AutogradCPU]",
                                 "[redispatch] op=[aten::mm], key=[CPU]"] + \
        ["[call] op=[aten::resolve_conj], key=[CPU]"] * 3     # inside ATen's mm kernel


def test_tls_exclude_set_matches_pytorch_inside_a_region():
    def sets(lib):
        with lib.autocast("cpu"):
            inside = str(lib._C._dispatch_tls_local_exclude_set())
        return inside, str(lib._C._dispatch_tls_local_exclude_set())
    assert sets(gt) == sets(torch)


# -- the CUDA-only policies, exercised on CPU tensors ---------------------------------------------

SET_OPT_DTYPE_CALLS = [   # (op, args, kwargs, dtype given); on CUDA's fp32_set_opt_dtype list
    ("sum", (), {}, False), ("sum.dim_IntList", ([1],), {}, False),
    ("sum", (), {"dtype": "float64"}, True), ("cumsum", (0,), {}, False),
    ("softmax.int", (1,), {}, False), ("softmax.int", (1, "bfloat16"), {}, True)]
APPEND_DTYPE_CALLS = [   # (op, args, the dtype-taking op it redirects to); fp32_append_dtype
    ("norm.Scalar", (), "norm.ScalarOpt_dtype"), ("norm.Scalar", (3.0,), "norm.ScalarOpt_dtype"),
    ("norm.ScalarOpt_dim", (1.0, [1], True), "norm.ScalarOpt_dim_dtype")]


@pytest.fixture
def cpu_kernels_with_cuda_policies():
    """Register the CUDA lists' fp32_set_opt_dtype / fp32_append_dtype kernels for
    the ops above at AutocastCPU (those ops are on no CPU list), for one test."""
    lib = Library("aten", "IMPL")
    for name, policy in [(n, policies.FP32_SET_OPT_DTYPE) for n, _, _, _ in SET_OPT_DTYPE_CALLS] + \
            [(n, policies.FP32_APPEND_DTYPE) for n, _, _ in APPEND_DTYPE_CALLS]:
        if not _op(gt, name)._entry.has_kernel(DispatchKey.AutocastCPU):
            lib.impl(_op(gt, name), make_autocast_kernel(_op(gt, name), policy, "cpu"),
                     "AutocastCPU")
    yield
    lib._destroy()


def _dtype_args(lib, values):
    return tuple(getattr(lib, v) if v in ("float64", "bfloat16") else v for v in values)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64"])
def test_set_opt_dtype_and_append_dtype_policies(cpu_kernels_with_cuda_policies, dtype):
    """Eligible first argument: an unset dtype becomes float32 (a given one is kept),
    norm calls its dtype overload with float32; ineligible (float64): nothing changes
    but norm's dtype is the input's.  Compared with torch calling the ops with the
    dtype the policy chooses."""
    eligible = dtype != "float64"

    def data(lib):
        return lib.arange(1, 7).reshape(2, 3).to(getattr(lib, dtype))
    with gt.autocast("cpu"):
        ours = [_op(gt, name)(data(gt), *_dtype_args(gt, args),
                              **{k: getattr(gt, v) for k, v in kwargs.items()})
                for name, args, kwargs, _ in SET_OPT_DTYPE_CALLS]
        ours += [_op(gt, name)(data(gt), *args) for name, args, _ in APPEND_DTYPE_CALLS]
    theirs = []
    for name, args, kwargs, dtype_given in SET_OPT_DTYPE_CALLS:
        args, kwargs = _dtype_args(torch, args), {k: getattr(torch, v) for k, v in kwargs.items()}
        if eligible and not dtype_given:
            kwargs = {"dtype": torch.float32}
        theirs.append(_op(torch, name)(data(torch), *args, **kwargs))
    for name, args, target in APPEND_DTYPE_CALLS:
        args = args or (2,)
        theirs.append(_op(torch, target)(data(torch), *args,
                                         dtype=torch.float32 if eligible else data(torch).dtype))
    for o, t in zip(ours, theirs):
        assert_same(o, t, **LOW_PRECISION)


def test_banned_op_raises_at_autocast_cuda():
    x = gt.full((3,), 0.5)
    with pytest.raises(RuntimeError, match=r"^torch.nn.functional.binary_cross_entropy and "
                                           r"torch.nn.BCELoss are unsafe to autocast.\n"):
        gt.ops.aten.binary_cross_entropy.default.redispatch(
            key_bits(DispatchKey.AutocastCUDA) | key_bits(DispatchKey.CPU), x, x)
