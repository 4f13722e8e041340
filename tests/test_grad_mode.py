"""Grad modes against real PyTorch: no_grad / enable_grad / set_grad_enabled /
inference_mode as context managers, decorators (also of generators) and
plain calls, per thread; inference tensors and their errors; the dispatch
keys each mode leaves; requires_grad rules, detach, .numpy() and printing."""
from __future__ import annotations

import threading

import pytest

import glasstorch as gt
from glasstorch._dispatcher import dispatch_trace

from .test_autograd_engine import differential, leaf, raised, returned


def _state(T):
    return T.is_grad_enabled(), T.is_inference_mode_enabled()


def _made(T):
    """What an op records right now."""
    x = leaf(T, [1., 2.])
    y = x * 2
    return y.requires_grad, y.grad_fn, y.is_leaf


# -- context managers -----------------------------------------------------------------

def test_no_grad_and_enable_grad():
    def scenario(T):
        seen = [_state(T)]
        with T.no_grad():
            seen += [_state(T), _made(T), T.ones(2, requires_grad=True).requires_grad]
            with T.enable_grad():
                seen += [_state(T), _made(T)]
            seen.append(_state(T))
        seen.append(_state(T))
        return seen
    differential(scenario)


def test_set_grad_enabled_forms():
    def scenario(T):
        seen = []
        T.set_grad_enabled(False)
        seen += [_state(T), _made(T)]
        T.set_grad_enabled(True)
        seen.append(_state(T))
        with T.set_grad_enabled(False):
            seen.append(_state(T))
            with T.set_grad_enabled(True):
                seen.append(_state(T))
            seen.append(_state(T))
        seen.append(_state(T))
        with T.no_grad():
            with T.set_grad_enabled(True):
                seen.append(_made(T))
            seen.append(_state(T))
        return seen
    differential(scenario)


def test_modes_restore_after_exceptions():
    def scenario(T):
        for manager in (T.no_grad(), T.enable_grad(), T.set_grad_enabled(False),
                        T.inference_mode()):
            try:
                with manager:
                    raise KeyError("inside")
            except KeyError:
                pass
        return _state(T)
    differential(scenario)


def test_inference_mode_nesting():
    def scenario(T):
        seen = []
        with T.no_grad():
            with T.inference_mode():
                seen.append(_state(T))
                with T.inference_mode(False):
                    seen.append(_state(T))
                    with T.no_grad():
                        seen.append(_state(T))
                    seen.append(_state(T))
                with T.inference_mode(True):
                    seen.append(_state(T))
                seen.append(_state(T))
            seen.append(_state(T))
        with T.inference_mode(False):
            seen.append(_state(T))
        with T.enable_grad():
            with T.inference_mode():
                with T.enable_grad():
                    seen.append(_state(T))
                    x = leaf(T, [1., 2.])
                    seen.append(((x * 2).requires_grad, (x * 2).grad_fn))
        return seen
    differential(scenario)


# -- decorators ------------------------------------------------------------------------

DECORATORS = [
    ("no_grad", lambda T: T.no_grad), ("no_grad()", lambda T: T.no_grad()),
    ("enable_grad", lambda T: T.enable_grad), ("enable_grad()", lambda T: T.enable_grad()),
    ("set_grad_enabled(False)", lambda T: T.set_grad_enabled(False)),
    ("set_grad_enabled(True)", lambda T: T.set_grad_enabled(True)),
    ("inference_mode", lambda T: T.inference_mode),
    ("inference_mode()", lambda T: T.inference_mode()),
    ("inference_mode(False)", lambda T: T.inference_mode(False)),
]


@pytest.mark.parametrize("name, decorator", DECORATORS, ids=[d[0] for d in DECORATORS])
def test_decorators(name, decorator):
    def scenario(T):
        def inner(a, b=2):
            """Docstring."""
            return _state(T), a + b

        wrapped = decorator(T)(inner)
        outside = []
        with T.no_grad() if name.startswith("enable") else T.enable_grad():
            result = wrapped(1, b=3)
            outside.append(_state(T))
        return result, outside, wrapped.__name__, wrapped.__doc__
    differential(scenario)


@pytest.mark.parametrize("name, decorator", DECORATORS, ids=[d[0] for d in DECORATORS])
def test_decorated_generators(name, decorator):
    """The mode is on while the generator runs and off between its steps,
    also when values are sent or thrown in."""
    def scenario(T):
        def gen():
            received = yield _state(T)
            try:
                yield (_state(T), received)
            except ValueError as exc:
                yield (_state(T), str(exc))
            yield _state(T)

        wrapped = decorator(T)(gen)
        with T.no_grad() if name.startswith("enable") else T.enable_grad():
            g = wrapped()
            seen = [next(g), _state(T), g.send("hello"), _state(T), g.throw(ValueError("oops")),
                    _state(T), next(g)]
            g.close()
            seen.append(_state(T))
        return seen
    differential(scenario)


@pytest.mark.parametrize("name, decorator", DECORATORS, ids=[d[0] for d in DECORATORS])
def test_decorated_generator_runs_to_completion(name, decorator):
    def scenario(T):
        def gen(n):
            for i in range(n):
                yield i, _state(T)
            return "done"

        def outer():
            result = yield from decorator(T)(gen)(2)
            yield result, _state(T)
        return list(outer())
    differential(scenario)


def test_decorating_a_class_is_deprecated():
    def scenario(T):
        @T.no_grad()
        class Model:
            def __init__(self, value):
                self.state = _state(T), value

        @T.enable_grad
        class Other:
            pass
        return Model(3).state, isinstance(Model, type), type(Other()).__name__
    assert differential(scenario)[2][0].startswith("Decorating classes is deprecated")


def test_detect_anomaly_is_not_a_decorator():
    def scenario(T):
        @T.autograd.detect_anomaly()
        def f():
            pass
    differential(scenario, may_raise=True)


# -- threads ---------------------------------------------------------------------------

def test_grad_modes_are_per_thread():
    def scenario(T):
        seen = {}

        def worker(name):
            seen[name] = [_state(T)]
            with T.no_grad():
                seen[name].append(_state(T))

        with T.no_grad():
            t = threading.Thread(target=worker, args=("under no_grad",))
            t.start()
            t.join()
        with T.inference_mode():
            t = threading.Thread(target=worker, args=("under inference_mode",))
            t.start()
            t.join()
            seen["main"] = _state(T)
        return seen
    differential(scenario)


# -- inference tensors -------------------------------------------------------------------

def test_inference_tensors():
    def scenario(T):
        normal = T.tensor([1., 2., 3.])
        with T.inference_mode():
            made = T.ones(3)
            made_rg = T.ones(2, requires_grad=True)
            computed = normal * 2
            view = normal[1:]
            view_of_inference = made[1:]
            inside = (made.is_inference(), made_rg.is_inference(), made_rg.requires_grad,
                      computed.is_inference(), view.is_inference(),
                      view_of_inference.is_inference(), normal.is_inference())
            made.add_(1)            # allowed inside
            normal.add_(1)          # allowed inside; still bumps the normal tensor
        return (inside, normal._version, view._version, (made * 2).is_inference(),
                (made * normal).is_inference(), made, str(T._C._dispatch_key_set(made)),
                str(T._C._dispatch_key_set(view)), str(T._C._dispatch_key_set(computed)))
    differential(scenario)


def _inference_tensor(T):
    with T.inference_mode():
        return T.ones(3)


@pytest.mark.parametrize("use", [
    lambda T, t: t.add_(1),
    lambda T, t: t.zero_(),
    lambda T, t: t._version,
    lambda T, t: t.requires_grad_(),
    lambda T, t: T.add(T.ones(3), T.ones(3), out=t),
    lambda T, t: leaf(T, [1., 2., 3.]) * t,
    lambda T, t: t * leaf(T, [1., 2., 3.]),
    lambda T, t: (leaf(T, [1., 2., 3.]) + t).grad_fn,     # add saves nothing: allowed
    lambda T, t: t[1:].mul_(2),
    lambda T, t: (t * 2, (t * 2).is_inference(), t.clone().is_inference()),
])
def test_inference_tensor_outside_inference_mode(use):
    differential(lambda T: use(T, _inference_tensor(T)), may_raise=True)


def test_inference_tensor_under_no_grad():
    def scenario(T):
        t = _inference_tensor(T)
        with T.no_grad():
            return leaf(T, [1., 2., 3.]) * t, t.is_inference()
    differential(scenario)


def test_inference_mode_view_modified_outside():
    def scenario(T):
        x = leaf(T, [1., 2., 3.])
        base = x * 1
        with T.inference_mode():
            view = base[1:]
        view.mul_(2)
    raised(differential(scenario, may_raise=True))


def test_inference_tensor_messages():
    assert raised(differential(lambda T: _inference_tensor(T).add_(1), may_raise=True)) == (
        "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
        "clone to get a normal tensor before doing inplace update.See "
        "https://github.com/pytorch/rfcs/pull/17 for more details.")
    assert raised(differential(lambda T: _inference_tensor(T)._version, may_raise=True)) == \
        "Inference tensors do not track version counter."


# -- dispatch keys under each mode ----------------------------------------------------------

def _tls_keys(T):
    return (str(T._C._dispatch_tls_local_include_set()),
            str(T._C._dispatch_tls_local_exclude_set()))


def test_thread_local_key_sets():
    def scenario(T):
        seen = [_tls_keys(T)]
        with T.no_grad():
            seen.append(_tls_keys(T))
        with T.inference_mode():
            seen.append(_tls_keys(T))
            with T.inference_mode(False):
                seen.append(_tls_keys(T))
            t = T.ones(2)
        seen.append(_tls_keys(T))
        seen.append(str(T._C._dispatch_key_set(t)))
        seen.append(str(T._C._dispatch_key_set(T.ones(2))))
        return seen
    differential(scenario)


def test_no_grad_still_dispatches_to_autograd():
    """Under no_grad the Autograd kernel runs and records nothing; under
    inference_mode it is never entered."""
    x = gt.ones(3, requires_grad=True)
    y = gt.ones(3)
    with gt.no_grad():
        with dispatch_trace() as no_grad_trace:
            x * y
    with gt.inference_mode():
        with dispatch_trace() as inference_trace:
            x * y
    assert no_grad_trace.lines == ["[call] op=[aten::mul.Tensor], key=[AutogradCPU]",
                                   " [redispatch] op=[aten::mul.Tensor], key=[CPU]"]
    assert inference_trace.lines == ["[call] op=[aten::mul.Tensor], key=[CPU]"]


def test_inplace_dispatch_under_modes():
    """An in-place op goes through ADInplaceOrView (the version bump) unless in
    inference mode on an inference tensor."""
    x = gt.tensor([1., 2., 3.])
    with gt.no_grad():
        with dispatch_trace() as no_grad_trace:
            x.add_(1)
    with gt.inference_mode():
        t = gt.tensor([1., 2., 3.])
        with dispatch_trace() as inference_trace:
            t.add_(1)
    # (the kernel's own inner calls follow: the scalar's ``to``, as in PyTorch)
    assert [line.split("key=")[1] for line in no_grad_trace.lines if "aten::add_" in line] == \
        ["[AutogradCPU]", "[ADInplaceOrView]", "[CPU]"]
    assert [line for line in inference_trace.lines if "aten::add_" in line] == \
        ["[call] op=[aten::add_.Tensor], key=[CPU]"]


# -- requires_grad rules ---------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda T: T.ones(2, dtype=T.int64).requires_grad_(),
    lambda T: T.ones(2, dtype=T.int64, requires_grad=True),
    lambda T: T.tensor([1, 2], requires_grad=True),
    lambda T: T.zeros(2, dtype=T.bool, requires_grad=True),
    lambda T: setattr(T.ones(2, dtype=T.int32), "requires_grad", True),
    lambda T: setattr(leaf(T, [1., 2.]) * 2, "requires_grad", False),
    lambda T: (leaf(T, [1., 2.]) * 2).requires_grad_(False),
    lambda T: (leaf(T, [1., 2.]) * 2).requires_grad_(True).grad_fn,
    lambda T: leaf(T, [1., 2.]).add_(1),
    lambda T: leaf(T, [1., 2.])[1:].add_(1),
    lambda T: leaf(T, [1., 2.]).numpy(),
    lambda T: (leaf(T, [1., 2.]) * 2).numpy(),
    lambda T: leaf(T, [1., 2.]).detach().numpy().tolist(),
    lambda T: T.ones(2, dtype=T.complex64, requires_grad=True).requires_grad,
    lambda T: T.ones(2, dtype=T.float16).requires_grad_().requires_grad,
])
def test_requires_grad_rules(call):
    differential(call, may_raise=True)


def test_requires_grad_rule_messages():
    assert raised(differential(lambda T: T.ones(2, dtype=T.int64).requires_grad_(),
                               may_raise=True)) == \
        "only Tensors of floating point dtype can require gradients"
    assert raised(differential(lambda T: T.ones(2, dtype=T.int64, requires_grad=True),
                               may_raise=True)) == \
        "Only Tensors of floating point and complex dtype can require gradients"
    assert raised(differential(lambda T: leaf(T, [1., 2.]).add_(1), may_raise=True)) == \
        "a leaf Variable that requires grad is being used in an in-place operation."


def test_leaf_inplace_allowed_under_no_grad():
    def scenario(T):
        x = leaf(T, [1., 2.])
        with T.no_grad():
            x.mul_(2)
            x[0] = 7.
        return x, x._version, x.is_leaf, x.grad_fn
    differential(scenario)


def test_no_grad_view_modified_with_grad():
    def scenario(T):
        x = leaf(T, [1., 2., 3.])
        base = x * 1
        with T.no_grad():
            view = base[1:]
        view.mul_(2)
    assert raised(differential(scenario, may_raise=True)).startswith(
        "A view was created in no_grad mode and is being modified inplace with grad mode "
        "enabled.")


# -- detach -------------------------------------------------------------------------------

def test_detach():
    def scenario(T):
        x = leaf(T, [1., 2., 3.])
        y = x * 2
        d = y.detach()
        shares = (d.data_ptr() == y.data_ptr(), d._version == y._version, d.requires_grad,
                  d.is_leaf, d.grad_fn)
        d.add_(1)
        return shares, y._version, y, x.detach().requires_grad
    differential(scenario)


def test_detach_inplace():
    def scenario(T):
        x = leaf(T, [1., 2., 3.])
        y = x * 2
        same = y.detach_() is y
        return same, y.requires_grad, y.is_leaf, y.grad_fn, x.detach_() is x, x.requires_grad
    differential(scenario)


@pytest.mark.parametrize("make_view", [
    lambda T, y: y[1:], lambda T, y: y.view(3), lambda T, y: y.unbind(0)[0],
])
def test_detach_inplace_of_views(make_view):
    def scenario(T):
        x = leaf(T, [1., 2., 3.])
        make_view(T, x * 2).detach_()
    raised(differential(scenario, may_raise=True))


def test_detach_inplace_of_view_of_plain_tensor():
    differential(lambda T: T.tensor([1., 2., 3.])[1:].detach_(), may_raise=True)


def test_detach_under_no_grad_and_data():
    def scenario(T):
        x = leaf(T, [1., 2., 3.])
        with T.no_grad():
            d = x.detach()
        data = x.data
        data.mul_(2)
        return d.requires_grad, data.requires_grad, data.is_leaf, x, x._version, data._version
    differential(scenario)


# -- printing --------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda T: leaf(T, [1., 2.]),
    lambda T: leaf(T, [1., 2.]) * 2,
    lambda T: leaf(T, 3.) + 1,
    lambda T: (leaf(T, [1., 2.]) * 2).detach(),
    lambda T: leaf(T, [1., 2.], dtype=T.float64) * 2,
    lambda T: leaf(T, [[1., 2.], [3., 4.]])[0],
    lambda T: leaf(T, [1., 2.]).sum(),
    lambda T: _inference_tensor(T),
])
def test_printing(make):
    differential(lambda T: (repr(make(T)), str(make(T))))


def test_printing_after_inplace():
    def scenario(T):
        y = leaf(T, [1., 2.]) * 1
        y.mul_(2)
        base = leaf(T, [1., 2., 3.]) * 1
        base[1:].add_(1)
        return repr(y), repr(base)
    returned(differential(scenario))


def test_top_level_is_inference_matches_torch():
    def scenario(T):
        with T.inference_mode():
            inside = T.ones(2)
        return T.is_inference(inside), T.is_inference(T.ones(2))
    assert returned(differential(scenario)) == (True, False)


def test_set_anomaly_enabled_matches_torch():
    def scenario(T):
        T.set_anomaly_enabled(True)
        on = (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled())
        T.set_anomaly_enabled(False, check_nan=False)
        off = (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled())
        T.set_anomaly_enabled(False)
        return on, off
    assert returned(differential(scenario)) == ((True, True), (False, False))
