"""torch.utils.checkpoint against real PyTorch: values, gradients and how often
the function runs, for both variants; RNG replay; the determinism checks and
their CheckpointError messages; nesting, double backward, partial backward;
the use_reentrant warning and argument errors; checkpoint_sequential."""
from __future__ import annotations

import importlib

import pytest

from hypothesis import given, strategies as st

from .test_autograd_function import differential, raised, returned


def ckpt(a):
    return importlib.import_module(a.name + ".utils.checkpoint")


def inputs(a):
    x = a.lib.tensor([0.5, 1.0, -2.0], requires_grad=True)
    y = a.lib.tensor([1.5, -1.0, 0.25], requires_grad=True)
    return x, y


def counted(calls):
    """A function of two tensors that counts its runs (saves several tensors)."""
    def fn(x, y):
        calls.append(1)
        return (x * y).sin() * x + y.exp()
    return fn


def test_values_gradients_and_recomputation():
    def scenario(a):
        out = []
        for use_reentrant in (False, True):
            calls = []
            x, y = inputs(a)
            z = ckpt(a).checkpoint(counted(calls), x, y, use_reentrant=use_reentrant)
            forward_runs = len(calls)
            z.backward(a.lib.ones(3))
            out.append((z, forward_runs, len(calls), x.grad, y.grad))
        return out
    (plain, plain_fwd, plain_total, *_), (reent, reent_fwd, reent_total, *_) = \
        returned(differential(scenario))
    assert (plain_fwd, plain_total, reent_fwd, reent_total) == (1, 2, 1, 2)
    assert plain[5] == "AddBackward0" and reent[5] == "CheckpointFunctionBackward"


@given(st.lists(st.floats(-2, 2, width=32), min_size=1, max_size=6), st.booleans())
def test_random_values(data, use_reentrant):
    def scenario(a):
        x = a.lib.tensor(data, requires_grad=True)
        z = ckpt(a).checkpoint(lambda t: (t * t).exp() * t, x, use_reentrant=use_reentrant)
        z.backward(a.lib.ones_like(z))
        return z, x.grad
    differential(scenario)


def test_use_reentrant_must_be_passed_explicitly():
    def scenario(a):
        x, y = inputs(a)
        return ckpt(a).checkpoint(counted([]), x, y)
    outcome = differential(scenario)
    assert outcome[1][5] == "CheckpointFunctionBackward"     # still the reentrant default
    assert outcome[-1][0][1].startswith("torch.utils.checkpoint: the use_reentrant parameter "
                                        "should be passed explicitly.")


def test_argument_errors():
    def scenario(a):
        x, y = inputs(a)
        c = ckpt(a)
        out = [c.checkpoint(counted([]), x, y=y, use_reentrant=False)]
        for attempt in (lambda: c.checkpoint(counted([]), x, y=y, use_reentrant=True),
                        lambda: c.checkpoint(counted([]), x, y, use_reentrant=True, debug=True),
                        lambda: c.checkpoint(counted([]), x, y, use_reentrant=False,
                                             determinism_check="shapes")):
            try:
                attempt()
            except ValueError as e:
                out.append(str(e))
        return out
    assert len(returned(differential(scenario))) == 4


def test_reentrant_refuses_grad_and_inputs():
    def scenario(a):
        x, y = inputs(a)
        c = ckpt(a)
        out = [a.lib.autograd.grad(c.checkpoint(counted([]), x, y, use_reentrant=False),
                                   x, a.lib.ones(3))]
        for attempt in (lambda: a.lib.autograd.grad(
                            c.checkpoint(counted([]), x, y, use_reentrant=True), x, a.lib.ones(3)),
                        lambda: c.checkpoint(counted([]), x, y, use_reentrant=True).backward(
                            a.lib.ones(3), inputs=[x])):
            try:
                attempt()
            except RuntimeError as e:
                out.append(str(e))
        return out
    outcome = returned(differential(scenario))
    assert outcome[1] == outcome[2] and outcome[1].startswith("When use_reentrant=True")


def test_rng_state_is_replayed():
    def scenario(a):
        def dropout(t):
            return t * (a.lib.rand(3) > 0.5).float() * 2
        out = []
        for use_reentrant in (False, True):
            for preserve in (True, False):
                a.lib.manual_seed(0)
                x, _ = inputs(a)
                z = ckpt(a).checkpoint(dropout, x, use_reentrant=use_reentrant,
                                       preserve_rng_state=preserve)
                z.backward(a.lib.ones(3))
                out.append((z, x.grad))
        return out
    differential(scenario)


def test_determinism_checks():
    def scenario(a):
        c = ckpt(a)
        x, _ = inputs(a)
        runs = []

        def changes_shape(t):
            runs.append(1)
            return (t[:3 - len(runs) % 2] * 2).sin()

        def changes_count(t):
            runs.append(1)
            s = t.sin()
            return s.sin() if len(runs) == 1 else s
        out = []
        for fn, check in ((changes_shape, "default"), (changes_shape, "none"),
                          (changes_count, "default"), (changes_count, "none")):
            runs.clear()
            z = c.checkpoint(fn, x, use_reentrant=False, determinism_check=check)
            try:
                z.backward(a.lib.ones_like(z))
                out.append(("ok", x.grad))
            except RuntimeError as e:
                out.append((type(e).__name__, str(e)))
            x.grad = None
        return out
    # without the check, the shape change surfaces later, in sin's backward
    outcome = returned(differential(scenario))
    assert [o[0] for o in outcome] == ["CheckpointError", "RuntimeError", "CheckpointError",
                                       "CheckpointError"]


def test_saved_tensors_unpacked_twice():
    def scenario(a):
        class Twice(a.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return t * 2

            @staticmethod
            def backward(ctx, g):
                ctx.saved_tensors
                ctx.saved_tensors
                return g * 2
        x, _ = inputs(a)
        z = ckpt(a).checkpoint(lambda t: Twice.apply(t * 1), x, use_reentrant=False)
        z.backward(a.lib.ones(3))
    raised(differential(scenario, may_raise=True), "CheckpointError",
           "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
           "unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do so "
           "only once. Otherwise please open an issue with details on your use case.")


def test_each_backward_recomputes_and_early_stop():
    def scenario(a):
        c = ckpt(a)
        x, y = inputs(a)
        calls = []
        z = c.checkpoint(counted(calls), x, y, use_reentrant=False)
        z.backward(a.lib.ones(3), retain_graph=True)
        z.backward(a.lib.ones(3))
        out = [len(calls), x.grad]
        tail = []

        def fn(t):
            s = t.sin()
            tail.append(1)          # after the last saved tensor: skipped with early stop
            return s
        for early in (True, False):
            tail.clear()
            with c.set_checkpoint_early_stop(early):
                z = c.checkpoint(fn, x, use_reentrant=False)
            z.backward(a.lib.ones(3))
            out.append(len(tail))
        return out
    outcome = returned(differential(scenario))
    assert outcome[0] == 3 and outcome[2:] == (1, 2)


def test_no_grad_and_inputs_not_requiring_grad():
    def scenario(a):
        c = ckpt(a)
        x, y = inputs(a)
        calls = []
        out = []
        with a.lib.no_grad():
            for use_reentrant in (False, True):
                out.append(c.checkpoint(counted(calls), x, y, use_reentrant=use_reentrant))
        for use_reentrant in (False, True):
            out.append(c.checkpoint(counted(calls), x.detach(), y.detach(),
                                    use_reentrant=use_reentrant))
        out.append(len(calls))
        return out
    outcome = differential(scenario)
    assert outcome[-1] == (("UserWarning", "None of the inputs have requires_grad=True. "
                            "Gradients will be None"),)


def test_double_backward_nesting_and_partial_backward():
    def scenario(a):
        c = ckpt(a)
        x, y = inputs(a)
        z = c.checkpoint(lambda t: (t * t * t).sum(), x, use_reentrant=False)
        (g,) = a.lib.autograd.grad(z, x, create_graph=True)
        (gg,) = a.lib.autograd.grad(g, x, a.lib.ones(3))
        out = [g, gg]

        def inner(t):
            return (t * t).sin()

        def outer(t):
            return c.checkpoint(inner, t * 2, use_reentrant=False).cos() * t
        c.checkpoint(outer, x, use_reentrant=False).backward(a.lib.ones(3))
        out.append(x.grad)
        for use_reentrant in (False, True):
            x.grad = y.grad = None
            p, q = c.checkpoint(lambda s, t: (s * 2, t * 3), x, y, use_reentrant=use_reentrant)
            p.backward(a.lib.ones(3))
            out.append((x.grad, y.grad))
        return out
    differential(scenario)


def test_input_modified_after_forward():
    def scenario(a):
        x, _ = inputs(a)
        h = x * 1
        z = ckpt(a).checkpoint(lambda t: t * t, h, use_reentrant=False)
        with a.lib.no_grad():
            h.add_(1)
        z.backward(a.lib.ones(3))
    outcome = differential(scenario, may_raise=True)
    assert outcome[:2] == ("raised", "RuntimeError") and "output 0 of Mul" in outcome[2]


def test_checkpoint_sequential():
    def scenario(a):
        c = ckpt(a)
        steps = [lambda t: t * 2, lambda t: t.sin(), lambda t: t * t, lambda t: t.exp(),
                 lambda t: t + 1]
        out = []
        for use_reentrant in (False, True):
            for segments in (1, 2, 5):
                x, _ = inputs(a)
                z = c.checkpoint_sequential(steps, segments, x, use_reentrant=use_reentrant)
                z.backward(a.lib.ones(3))
                out.append((z, x.grad))
        x, _ = inputs(a)
        out.append(c.checkpoint_sequential(steps, 2, x))
        try:
            c.checkpoint_sequential(steps, 2, x, use_reentrant=False, foo=1)
        except ValueError as e:
            out.append(str(e))
        return out
    assert len(differential(scenario)[-1]) == 1


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_recompute_under_the_forwards_autocast_state(use_reentrant):
    """Backward recomputes under the forward's CPU autocast (bf16 matmuls), so the
    gradients equal torch's."""
    def scenario(api):
        lib = api.lib
        # values bf16 cannot hold exactly: a float32 recompute gives other gradients
        w = api.tensor([[0.3, -1.1], [2.7, 0.77]], requires_grad=True)
        x = api.tensor([[1.3, 2.1], [3.3, -4.1]], requires_grad=True)

        def block(a):
            return (a @ w).relu() @ w
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=use_reentrant)
        out.float().sum().backward()
        return out.dtype, x.grad, w.grad
    assert returned(differential(scenario))[0] == ("dtype", "torch.bfloat16")
