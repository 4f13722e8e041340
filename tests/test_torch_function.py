"""``__torch_function__`` and TorchFunctionMode, against real PyTorch.

Each scenario runs in both libraries (subclasses are defined per library) and
returns what the handlers saw: function names, the ``types`` they got, result
types.  ``differential`` asserts both libraries saw the same.
"""
from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch

from .differential import differential, raised, returned, run


def _name(func):
    return getattr(func, "__name__", repr(func))


def _recording_subclass(lib, log):
    class Recorder(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((_name(func), tuple(t.__name__ for t in types)))
            return super().__torch_function__(func, types, args, kwargs or {})
    return Recorder


def _recording_mode(lib, log):
    class Printer(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((_name(func), tuple(t.__name__ for t in types)))
            return func(*args, **(kwargs or {}))
    return Printer


def test_subclass_sees_public_calls_and_keeps_its_type():
    def scenario(lib):
        log = []
        T = _recording_subclass(lib, log)
        a = lib.arange(12.).reshape(3, 4).as_subclass(T)
        b = lib.ones(4, 5).as_subclass(T)
        results = [a @ b, a + 1, 2 * a, a.sum(), a.t(), a[0], a.detach(),
                   lib.nn.functional.relu(a), lib.nn.functional.linear(a, lib.ones(2, 4)),
                   lib.cat([a, lib.ones(1, 4)]), a.split(1), lib.max(a, 0), a.shape]
        log.append(tuple(type(r).__name__ for r in results))
        log.append((type(a.grad).__name__, type(a.requires_grad).__name__))
        return log
    differential(scenario)


def test_mode_sees_functions_methods_and_getters():
    def scenario(lib):
        log = []
        with _recording_mode(lib, log)():
            a = lib.tensor([1., 2.])
            lib.as_tensor([1.])
            lib.zeros(2)
            lib.numel(a)
            lib.is_floating_point(a)
            lib.is_tensor(a)
            a.shape
            a.size()
            a + 1
            lib.nn.functional.relu(a)
            lib.einsum("i,i->", a, a)
            len(a)
            repr(a)
            a.requires_grad
            a.grad
        return log
    differential(scenario)


def test_subclass_priority_and_notimplemented():
    def scenario(lib):
        log = []

        class A(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(("A", _name(func), tuple(t.__name__ for t in types)))
                return super().__torch_function__(func, types, args, kwargs or {})

        class B(A):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(("B", _name(func), tuple(t.__name__ for t in types)))
                if func is lib.mul:
                    return NotImplemented
                return super().__torch_function__(func, types, args, kwargs or {})

        a = lib.ones(2).as_subclass(A)
        b = lib.ones(2).as_subclass(B)
        log.append(type(lib.add(a, b)).__name__)   # B first (subclass), then A
        try:   # B declines; A's handler defers to Tensor's, which declines B's type
            lib.mul(a, b)
        except TypeError as e:
            log.append(str(e))
        return log
    assert "all __torch_function__ handlers returned NotImplemented" in \
        returned(differential(scenario))[-1]


def test_all_handlers_decline_raises_typeerror():
    def scenario(lib, method):
        class N(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        x = lib.ones(1).as_subclass(N)
        return x.add(1) if method else lib.add(x, 1)
    for method in (False, True):
        message = raised(differential(lambda lib: scenario(lib, method), may_raise=True),
                         "TypeError")
        assert "all __torch_function__ handlers returned NotImplemented" in message


def test_parameter_opts_out_and_disabled_impl():
    def scenario(lib):
        p = lib.nn.Parameter(lib.ones(2))

        class Quiet(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl
        q = lib.ones(2).as_subclass(Quiet)
        return [type(p * 2).__name__, type(p.detach()).__name__, type(q + 1).__name__,
                type(q).__name__]
    differential(scenario)


def test_disable_torch_function_guards():
    def scenario(lib):
        log = []
        T = _recording_subclass(lib, log)
        a = lib.ones(2).as_subclass(T)
        with _recording_mode(lib, log)():
            with lib._C.DisableTorchFunctionSubclass():
                log.append(type(a + 1).__name__)     # the mode still runs
                log.append(lib._C._is_torch_function_mode_enabled())
            with lib._C.DisableTorchFunction():
                log.append(type(a + 1).__name__)     # nothing runs
                log.append(lib._C._is_torch_function_mode_enabled())
        log.append(lib._C._len_torch_function_stack())
        return log
    differential(scenario)


def test_nested_modes_run_innermost_first_and_pop_while_running():
    def scenario(lib):
        log = []

        class Named(lib.overrides.TorchFunctionMode):
            def __init__(self, name):
                super().__init__()
                self.name = name

            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append((self.name, _name(func), lib._C._len_torch_function_stack()))
                return func(*args, **(kwargs or {}))

        with Named("outer"), Named("inner"):
            lib.ones(2).neg()
        log.append(lib._C._len_torch_function_stack())
        return log
    differential(scenario)


def test_mode_can_replace_results():
    def scenario(lib):
        class Doubling(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                return out * 2 if func is lib.add else out
        with Doubling():
            return lib.add(lib.ones(2), 1)
    differential(scenario)


def test_shape_tracker_seed_recurses_as_in_pytorch():
    """The seed's ShapeTracker reads ``t.shape`` inside its handler; in PyTorch that
    getter goes through the handler again, so the example recurses without end.
    Real PyTorch wins: glasstorch behaves the same."""
    def scenario(lib):
        class ShapeTracker(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                shapes = [tuple(t.shape) for t in args if isinstance(t, lib.Tensor)]
                return super().__torch_function__(func, types, args, kwargs or {}), shapes
        a = lib.randn(3, 4).as_subclass(ShapeTracker)
        return a @ a.t()
    import torch
    for lib in (torch, glasstorch):     # (the messages name different recursion points)
        assert run(scenario, lib)[:2] == ("raised", "RecursionError")


def test_shape_tracker_with_shapes_read_outside_the_protocol():
    """The seed's ShapeTracker, reading shapes with subclass handling off: it prints
    the same lines as in PyTorch."""
    def scenario(lib):
        lines = []

        class ShapeTracker(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                with lib._C.DisableTorchFunctionSubclass():
                    shapes = [tuple(t.shape) for t in args if isinstance(t, lib.Tensor)]
                result = super().__torch_function__(func, types, args, kwargs)
                with lib._C.DisableTorchFunctionSubclass():
                    out = tuple(result.shape) if isinstance(result, lib.Tensor) else None
                lines.append(f"{func.__name__}: {shapes} → {out}")
                return result
        a = lib.randn(3, 4).as_subclass(ShapeTracker)
        b = lib.randn(4, 5).as_subclass(ShapeTracker)
        c = a @ b
        lines.append(type(c).__name__)
        return lines
    assert returned(differential(scenario))[0] == "matmul: [(3, 4), (4, 5)] → (3, 5)"


def test_tensor_like_object_takes_part():
    def scenario(lib):
        class Like:
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return ("handled", _name(func), tuple(t.__name__ for t in types))
        return lib.add(Like(), lib.ones(1))
    ours, theirs = run(scenario, glasstorch), run(scenario, __import__("torch"))
    strip = [w.split(" (Triggered internally")[0] for w in theirs[2]]
    assert ours == theirs[:2] + (tuple(strip),)


def test_modes_are_thread_local():
    def scenario(lib):
        seen = []
        with _recording_mode(lib, seen)():
            t = threading.Thread(target=lambda: lib.ones(2).neg())
            t.start()
            t.join()
        return seen
    differential(scenario)


@given(st.lists(st.sampled_from(["neg", "abs", "exp", "relu", "t", "sum", "clone"]),
                min_size=1, max_size=6))
def test_subclass_type_survives_random_op_chains(names):
    def scenario(lib):
        log = []
        T = _recording_subclass(lib, log)
        x = lib.tensor(np.arange(6.0).reshape(2, 3)).as_subclass(T)
        for name in names:
            x = getattr(x, name)()
        return log, type(x).__name__
    differential(scenario)


def test_no_override_check_until_an_overriding_instance_exists():
    """Importing glasstorch (FakeTensor included) and defining a subclass cost
    nothing; the first instance of an overriding class turns the check on."""
    code = (
        "import glasstorch\n"
        "from glasstorch._core.tls import overrides\n"
        "class Idle(glasstorch.Tensor):\n"
        "    @classmethod\n"
        "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
        "        return super().__torch_function__(func, types, args, kwargs)\n"
        "assert not overrides.on\n"
        "glasstorch.nn.Parameter(glasstorch.ones(1))\n"
        "assert not overrides.on\n"
        "glasstorch.ones(1).as_subclass(Idle)\n"
        "assert overrides.on\n")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("getter", ["shape", "grad", "requires_grad", "is_leaf", "grad_fn",
                                    "data"])
def test_property_getters_reach_subclass_handler(getter):
    def scenario(lib):
        log = []
        T = _recording_subclass(lib, log)
        x = lib.ones(2).as_subclass(T)
        value = getattr(x, getter)
        return log, type(value).__name__
    differential(scenario)


def test_tensor_like_type_from_pytorchs_extending_guide():
    """PyTorch's "Extending torch with a Tensor-like type" example: a class that is
    not a Tensor handles torch.mean/torch.add through HANDLED_FUNCTIONS."""
    def scenario(lib):
        handled = {}

        class ScalarTensor:
            def __init__(self, n, value):
                self._n, self._value = n, value

            def tensor(self):
                return self._value * lib.eye(self._n)

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func not in handled or not all(issubclass(t, (lib.Tensor, ScalarTensor))
                                                  for t in types):
                    return NotImplemented
                return handled[func](*args, **(kwargs or {}))

        d = ScalarTensor(3, 2)
        handled[lib.mean] = lambda x: float(x._value) / x._n
        results = [lib.mean(d)]
        try:
            lib.add(d, lib.ones(3, 3))
        except TypeError as e:
            results.append(str(e).split(";")[0])
        handled[lib.add] = lambda a, b: lib.add(a, b.tensor())
        results.append(lib.add(lib.ones(3, 3), d))
        try:
            lib.ones(3, 3) + d          # Tensor.add is not handled: the operator declines
        except TypeError as e:
            results.append(str(e))
        results.append((lib.overrides.is_tensor_like(d), lib.overrides.has_torch_function((d,))))
        return results
    differential(scenario)
