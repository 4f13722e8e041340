"""Custom autograd Functions against real PyTorch: the ctx/node, both forward
styles, saved tensors, mark_dirty / mark_non_differentiable /
set_materialize_grads, inputs returned as-is, once_differentiable, double
backward, and PyTorch's errors and warnings word for word.

Each scenario is a function of an ``Api`` (the library plus its
``autograd.function`` module); ``differential`` runs it with torch and with
glasstorch and compares what it returned or raised and the warnings it emitted.
"""
from __future__ import annotations

import importlib

import numpy as np
from hypothesis import given, strategies as st

from .differential import differential as _differential, raised, returned  # noqa: F401


class Api:
    """One library as a scenario sees it."""

    def __init__(self, lib):
        self.lib = lib
        self.name = lib.__name__
        self.function = importlib.import_module(lib.__name__ + ".autograd.function")
        self.Function = self.function.Function

    def tensor(self, values, requires_grad=False, dtype=None):
        return self.lib.tensor(values, dtype=dtype or self.lib.float32,
                               requires_grad=requires_grad)


APIS = {}


def api(lib) -> Api:
    if lib.__name__ not in APIS:
        APIS[lib.__name__] = Api(lib)
    return APIS[lib.__name__]


def differential(scenario, *, may_raise=False):
    """Run ``scenario(Api)`` with torch and with glasstorch; they must behave the same."""
    return _differential(lambda lib: scenario(api(lib)), may_raise=may_raise,
                         warning_types=(UserWarning, DeprecationWarning), named=True)


# -- the seed example ------------------------------------------------------------------

def fused_scale_clamp(a):
    """The issue's example, verbatim apart from ``torch`` coming from ``a``."""
    torch = a.lib

    class FusedScaleClamp(a.Function):
        @staticmethod
        def forward(ctx, x, scale, lo, hi):
            ctx.save_for_backward(x); ctx.scale = scale; ctx.lo, ctx.hi = lo, hi  # noqa: E702
            return torch.clamp(x * scale, min=lo, max=hi)

        @staticmethod
        def backward(ctx, grad_y):
            (x,) = ctx.saved_tensors
            s, lo, hi = ctx.scale, ctx.lo, ctx.hi
            scaled = x * s
            mask = (scaled > lo) & (scaled < hi)
            return grad_y * s * mask.to(grad_y.dtype), None, None, None
    return FusedScaleClamp


SEED_DATA = np.random.RandomState(0).randn(8).astype(np.float32).tolist()


def test_seed_example():
    def scenario(a):
        torch = a.lib
        FusedScaleClamp = fused_scale_clamp(a)
        x = torch.tensor(SEED_DATA, requires_grad=True); y = FusedScaleClamp.apply(x, 2.0, -1.0, 1.0); y.sum().backward(); print(x.grad)  # noqa: E501,E702
        return y, x.grad, y.grad_fn.name(), y.grad_fn.next_functions[0][0], y.grad_fn.scale
    y, grad, name, edge, scale = returned(differential(scenario))
    assert name == "FusedScaleClampBackward" and edge == ("node", "AccumulateGrad")
    assert grad[0] == "tensor" and scale == 2.0


@given(st.lists(st.floats(-3, 3, width=32), min_size=1, max_size=12),
       st.floats(0.25, 4), st.floats(-2, -0.1), st.floats(0.1, 2))
def test_seed_example_random_data(data, scale, lo, hi):
    def scenario(a):
        x = a.tensor(data, requires_grad=True)
        y = fused_scale_clamp(a).apply(x, scale, lo, hi)
        y.backward(a.lib.ones_like(y))
        return y, x.grad
    differential(scenario)


# -- the ctx is the node ---------------------------------------------------------------------

class Affine:
    """``y = x * w + b`` with a non-tensor scale in between."""

    @staticmethod
    def make(a):
        class Affine(a.Function):
            @staticmethod
            def forward(ctx, x, k, w, b):
                ctx.grad_mode_in_forward = a.lib.is_grad_enabled()
                ctx.save_for_backward(x, w)
                ctx.k = k
                return x * w * k + b

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                ctx.grad_mode_in_backward = a.lib.is_grad_enabled()
                gx = g * w * ctx.k if ctx.needs_input_grad[0] else None
                gw = g * x * ctx.k if ctx.needs_input_grad[2] else None
                return gx, None, gw, g
        return Affine


def test_ctx_is_grad_fn_and_backward_values():
    def scenario(a):
        x = a.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = a.tensor([0.5, -1.0, 2.0], requires_grad=True)
        b = a.tensor([1.0, 1.0, 1.0])
        y = Affine.make(a).apply(x, 3.0, w, b)
        node = y.grad_fn
        before = (node.needs_input_grad, node.k, node.grad_mode_in_forward,
                  [e[0] for e in node.next_functions], node.saved_tensors[0] is x,
                  type(node).__name__, node.name())
        y.backward(a.tensor([1.0, 10.0, 100.0]))
        return before, y, x.grad, w.grad, node.grad_mode_in_backward
    differential(scenario)


def test_grad_mode_in_backward_follows_create_graph():
    def scenario(a):
        x = a.tensor([1.0, 2.0], requires_grad=True)
        w = a.tensor([3.0, 4.0], requires_grad=True)
        y = Affine.make(a).apply(x, 2.0, w, a.tensor([0.0, 0.0]))
        gx, gw = a.lib.autograd.grad(y, (x, w), a.tensor([1.0, 1.0]), create_graph=True)
        return y.grad_fn.grad_mode_in_backward, gx, gw
    differential(scenario)


def test_not_executable_without_grad():
    """No graph under no_grad or when no tensor input requires grad; outputs
    created requiring grad in forward are detached."""
    def scenario(a):
        class MakeLeaf(a.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.seen = ctx.needs_input_grad
                return a.lib.ones(2, requires_grad=True), x * 2

            @staticmethod
            def backward(ctx, g1, g2):
                return g2 * 2
        x = a.tensor([1.0, 2.0], requires_grad=True)
        with a.lib.no_grad():
            no_grad_out = MakeLeaf.apply(x)
        plain = MakeLeaf.apply(x.detach())
        recorded = MakeLeaf.apply(x)
        return no_grad_out, plain, recorded
    differential(scenario)


def test_setup_context_form():
    def scenario(a):
        class Scale(a.Function):
            @staticmethod
            def forward(x, scale=3.0):
                return x * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, scale = inputs
                ctx.record = (len(inputs), scale, a.lib.is_grad_enabled(), output.requires_grad)
                ctx.save_for_backward(x)
                ctx.scale = scale

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.scale, None
        x = a.tensor([1.0, -2.0], requires_grad=True)
        y1 = Scale.apply(x)
        y2 = Scale.apply(x, scale=5.0)
        (y1 + y2).backward(a.tensor([1.0, 1.0]))
        return y1.grad_fn.record, y2.grad_fn.record, y1, y2, x.grad
    differential(scenario)


def test_keyword_arguments_become_positional():
    """Keywords naming forward's parameters are tracked as inputs; defaults are
    not filled in; gaps, unknown names and duplicates raise."""
    def scenario(a):
        class F(a.Function):
            @staticmethod
            def forward(ctx, x, y=None, z=2, *, w=3):
                ctx.n = len(ctx.needs_input_grad)
                return x * 1 if y is None else x * y

            @staticmethod
            def backward(ctx, g):
                return (g,) + (None,) * (ctx.n - 1)
        x = a.tensor([1.0, 2.0], requires_grad=True)
        out = [F.apply(x).grad_fn.needs_input_grad,
               F.apply(x, y=x).grad_fn.needs_input_grad]
        for kwargs in ({"z": 1}, {"w": 1}, {"q": 1}):
            try:
                F.apply(x, **kwargs)
            except TypeError as e:
                out.append(str(e))
        try:
            F.apply(x, x, y=x)
        except TypeError as e:
            out.append(str(e))
        return out
    differential(scenario)


def test_setup_context_with_ctx_forward_is_a_type_error():
    def scenario(a):
        class F(a.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass
        return F.apply(a.tensor([1.0], requires_grad=True))
    differential(scenario, may_raise=True)


# -- what backward returns --------------------------------------------------------------------

def backward_returning(a, result_fn, n_inputs=1):
    """A Function of ``n_inputs`` arguments (the first a tensor) whose backward
    returns ``result_fn(a, g)``."""
    class Ret(a.Function):
        @staticmethod
        def forward(ctx, x, *rest):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return result_fn(a, g)
    return Ret


BACKWARD_RESULTS = {
    "too_many": (lambda a, g: (g, g), 1),
    "too_few": (lambda a, g: g, 2),
    "extra_nones": (lambda a, g: (g, None, None), 1),
    "grad_for_non_tensor": (lambda a, g: (g, g), "int"),
    "list_instead_of_tuple": (lambda a, g: [g, None], "int"),
    "not_a_tensor": (lambda a, g: 3, 1),
    "wrong_shape": (lambda a, g: a.lib.ones(5), 1),
    "broadcast_shape": (lambda a, g: a.lib.ones(2, 3), 1),
    "other_dtype": (lambda a, g: g.double() * 3, 1),
    "none": (lambda a, g: None, 1),
    "wrong_shape_for_input_not_requiring_grad": (lambda a, g: (g, a.lib.ones(7)), "tensor"),
}


def test_backward_result_checks():
    for label, (result_fn, extra) in BACKWARD_RESULTS.items():
        def scenario(a):
            x = a.tensor([1.0, 2.0, 3.0], requires_grad=True)
            args = {1: (), 2: (x,), "int": (3,), "tensor": (a.tensor([1.0, 1.0, 1.0]),)}[extra]
            y = backward_returning(a, result_fn).apply(x, *args)
            y.backward(a.tensor([1.0, 1.0, 1.0]))
            return x.grad
        outcome = differential(scenario, may_raise=True)
        assert label not in ("too_many", "too_few") or outcome[0] == "raised", label


def test_backward_error_messages():
    def scenario(a):
        x = a.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = backward_returning(a, BACKWARD_RESULTS["too_many"][0]).apply(x)
        y.backward(a.tensor([1.0, 1.0, 1.0]))
    raised(differential(scenario, may_raise=True), "RuntimeError",
           "function RetBackward returned an incorrect number of gradients (expected 1, got 2)")


def test_vjp_alias_and_missing_methods():
    def scenario(a):
        class OnlyVjp(a.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 5

        class Both(OnlyVjp):
            @staticmethod
            def backward(ctx, g):
                return g

        class NoBackward(a.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        class NoForward(a.Function):
            pass
        x = a.tensor([1.0, 2.0], requires_grad=True)
        OnlyVjp.apply(x).backward(a.tensor([1.0, 1.0]))
        out = [x.grad]
        for attempt in (lambda: Both.apply(x).backward(a.tensor([1.0, 1.0])),
                        lambda: NoBackward.apply(x).backward(a.tensor([1.0, 1.0])),
                        lambda: NoForward.apply(x),
                        lambda: a.Function.jvp(None),
                        lambda: a.Function.setup_context(None, (), None),
                        lambda: NoForward()(x)):
            try:
                attempt()
            except (RuntimeError, NotImplementedError) as e:
                out.append((type(e).__name__, str(e)))
        return out
    differential(scenario)


# -- saved tensors ----------------------------------------------------------------------------

def square(a):
    class Square(a.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x, y, None)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y, nothing = ctx.saved_tensors
            return 2 * x * g
    return Square


def test_saved_tensors_inputs_outputs_and_release():
    def scenario(a):
        x = a.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = square(a).apply(x)
        x_saved, y_saved, nothing = y.grad_fn.saved_tensors
        facts = (x_saved is x, y_saved is y, y_saved.grad_fn is y.grad_fn, nothing)
        y.backward(a.tensor([1.0, 1.0, 1.0]), retain_graph=True)
        still = len(y.grad_fn.saved_tensors)
        y.backward(a.tensor([1.0, 1.0, 1.0]))
        out = [facts, still, x.grad]
        for attempt in (lambda: y.grad_fn.saved_tensors,
                        lambda: y.backward(a.tensor([1.0, 1.0, 1.0]))):
            try:
                attempt()
            except RuntimeError as e:
                out.append(str(e))
        return out
    differential(scenario)


def test_saved_tensor_modified_in_place():
    def scenario(a):
        out = []
        for modify in ("input", "output"):
            x = a.tensor([1.0, 2.0], requires_grad=True)
            h = x * 1
            y = square(a).apply(h)
            with a.lib.no_grad():
                (h if modify == "input" else y).add_(1)
            try:
                y.backward(a.tensor([1.0, 1.0]))
            except RuntimeError as e:
                out.append(str(e))
        return out
    differential(scenario)


def test_save_for_backward_rejects_non_tensors():
    def scenario(a):
        class SaveInt(a.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        quiet = SaveInt.apply(a.tensor([1.0]))        # not recorded: nothing is saved
        return quiet, SaveInt.apply(a.tensor([1.0], requires_grad=True))
    differential(scenario, may_raise=True)


def test_saved_tensors_in_forward_and_saved_tensor_hooks():
    def scenario(a):
        log = []

        class Peek(a.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                log.append(len(ctx.saved_tensors))
                return x * 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3

        def pack(t):
            log.append(("pack", tuple(t.shape)))
            return t

        def unpack(t):
            log.append("unpack")
            return t
        x = a.tensor([1.0, 2.0], requires_grad=True)
        with a.lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = Peek.apply(x)
        y.backward(a.tensor([1.0, 1.0]))
        return log, x.grad
    differential(scenario)


def test_saved_tensor_hooks_keep_the_graph_for_double_backward():
    """What an unpack hook returns takes the saved tensor's place in the graph:
    an input keeps its grad_fn (or its leaf's accumulator), an output gets the
    node back, so create_graph through it still differentiates."""
    def scenario(a):
        class Cube(a.Function):
            @staticmethod
            def forward(ctx, x, h):
                y = x * x * h
                ctx.save_for_backward(x, h, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, h, y = ctx.saved_tensors
                ctx.unpacked = [t.requires_grad for t in (x, h, y)]
                return 2 * y / x * g, x * x * g
        x = a.tensor([1.0, 2.0, -3.0], requires_grad=True)
        h = x * 1
        with a.lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            y = Cube.apply(x, h)
        (g,) = a.lib.autograd.grad(y, x, a.tensor([1.0, 1.0, 1.0]), create_graph=True)
        (gg,) = a.lib.autograd.grad(g, x, a.tensor([1.0, 1.0, 1.0]))
        return y.grad_fn.unpacked, g, gg
    differential(scenario)


def test_clear_saved_tensors_on_access_and_boxed_grads():
    def scenario(a):
        class Clear(a.Function):
            clear_saved_tensors_on_access = True

            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                try:
                    ctx.saved_tensors
                except RuntimeError as e:
                    ctx.error = str(e)
                return 2 * x * g

        class Boxed(a.Function):
            boxed_grads_call = True

            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, grads):
                ctx.kind = type(grads).__name__
                g1, g2 = grads
                grads.clear()
                return g1 * 2 + g2 * 3
        x = a.tensor([1.0, 2.0], requires_grad=True)
        y = Clear.apply(x)
        y.backward(a.tensor([1.0, 1.0]))
        p, q = Boxed.apply(x)
        p.backward(a.tensor([1.0, 1.0]))
        return y.grad_fn.error, p.grad_fn.kind, x.grad
    differential(scenario)


# -- outputs: dirty, non-differentiable, materialized, returned inputs -----------------------

def dirty_mul(a):
    class DirtyMul(a.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return DirtyMul


def test_mark_dirty_rebases_history():
    def scenario(a):
        leaf = a.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = leaf * 1
        before = h._version
        out = dirty_mul(a).apply(h)
        facts = (out is h, h._version - before, h.grad_fn.next_functions[0][0])
        (h * h).backward(a.tensor([1.0, 1.0, 1.0]))
        return facts, h, leaf.grad
    differential(scenario)


def test_mark_dirty_on_a_view_gives_the_base_copyslices():
    def scenario(a):
        leaf = a.tensor([1.0, 2.0, 3.0], requires_grad=True)
        base = leaf * 1
        view = base[1:]
        out = dirty_mul(a).apply(view)
        facts = (out is view, base.grad_fn, view.grad_fn, view.grad_fn.next_functions[0][0])
        base.backward(a.tensor([1.0, 10.0, 100.0]))
        return facts, base, leaf.grad
    differential(scenario)


def test_mark_dirty_errors():
    def scenario(a):
        torch = a.lib

        class NotReturned(a.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        class TwoOutputs(a.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x, x * 2

            @staticmethod
            def backward(ctx, g1, g2):
                return g1

        class NotATensor(a.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        leaf = a.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = []
        for attempt in (lambda: dirty_mul(a).apply(leaf),
                        lambda: dirty_mul(a).apply(leaf[1:]),
                        lambda: NotReturned.apply(leaf * 1),
                        lambda: TwoOutputs.apply((leaf * 1)[1:]),
                        lambda: NotATensor.apply(leaf)):
            try:
                attempt()
            except RuntimeError as e:
                out.append(str(e))
        with torch.no_grad():
            out.append(dirty_mul(a).apply(leaf.detach()))
        return out
    differential(scenario)


def test_mark_dirty_of_a_non_input_warns():
    def scenario(a):
        class DirtyOutput(a.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.mark_dirty(y)
                return y

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return DirtyOutput.apply(a.tensor([1.0, 2.0], requires_grad=True))
    assert differential(scenario)[-1]


def test_non_differentiable_outputs_and_materialized_grads():
    def scenario(a):
        seen = []

        class Outputs(a.Function):
            @staticmethod
            def forward(ctx, x):
                marked = x * 10
                ctx.mark_non_differentiable(marked)
                return x * 2, marked, a.lib.tensor([1, 2, 3]), 7

            @staticmethod
            def backward(ctx, g, g_marked, g_int, g_none):
                seen.extend([g, g_marked, g_int, g_none])
                return g * 2

        class Lazy(a.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.extend([g1, g2])
                return g1 * 2 if g2 is None else g1 * 2 + g2 * 3
        x = a.tensor([1.0, 2.0, 3.0], requires_grad=True)
        outs = Outputs.apply(x)
        outs[0].backward(a.tensor([1.0, 1.0, 1.0]))
        first, _ = Lazy.apply(x)
        first.backward(a.tensor([1.0, 1.0, 1.0]))
        return outs, seen, x.grad
    differential(scenario)


def test_mark_non_differentiable_rejects_non_tensors():
    def scenario(a):
        class F(a.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_non_differentiable(3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        return F.apply(a.tensor([1.0], requires_grad=True))
    differential(scenario, may_raise=True)


def identity(a, n_outputs=1):
    class Identity(a.Function):
        @staticmethod
        def forward(ctx, x):
            return x if n_outputs == 1 else (x, x)

        @staticmethod
        def backward(ctx, *grads):
            return sum(grads[1:], grads[0] * 3)
    return Identity


def test_input_returned_as_is():
    """It comes back as a view of itself with the custom node as history;
    modifying it in place is forbidden (message names the Function)."""
    def scenario(a):
        x = a.tensor([1.0, 2.0], requires_grad=True)
        y = identity(a).apply(x)
        facts = [y is x, y._base is x, y.grad_fn, y.is_leaf]
        with a.lib.no_grad():
            z = identity(a).apply(x)
        facts += [z._base is x, z.requires_grad]
        w = identity(a).apply(x.detach())
        facts += [w._base is not None, w.requires_grad]
        y.backward(a.tensor([1.0, 1.0]))
        facts.append(x.grad)
        for out in (identity(a).apply(x), identity(a, 2).apply(x)[0]):
            try:
                out.mul_(2)
            except RuntimeError as e:
                facts.append(str(e))
        return facts
    differential(scenario)


def test_view_outputs_made_in_forward():
    def scenario(a):
        class Halves(a.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:2], x[2:]

            @staticmethod
            def backward(ctx, g1, g2):
                return a.lib.cat([g1, g2])

        class Tail(a.Function):
            @staticmethod
            def forward(ctx, x):
                return x[1:]

            @staticmethod
            def backward(ctx, g):
                return a.lib.cat([g.new_zeros(1), g])
        x = a.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        out = [Tail.apply(x)._base is x]
        for view in (Tail.apply(x), Halves.apply(x)[1]):
            try:
                view.add_(1)
            except RuntimeError as e:
                out.append(str(e))
        return out
    differential(scenario)


def test_setup_context_cannot_save_an_input_returned_as_is():
    def scenario(a):
        class F(a.Function):
            @staticmethod
            def forward(x):
                return x

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                return g
        return F.apply(a.tensor([1.0], requires_grad=True))
    differential(scenario, may_raise=True)


# -- double backward, once_differentiable, hooks, odds and ends ----------------------------

def test_double_backward_through_a_custom_function():
    def scenario(a):
        x = a.tensor([1.0, 2.0, -3.0], requires_grad=True)
        y = square(a).apply(x)
        (g,) = a.lib.autograd.grad(y, x, a.tensor([1.0, 1.0, 1.0]), create_graph=True)
        (gg,) = a.lib.autograd.grad(g, x, a.tensor([1.0, 1.0, 1.0]))
        return g, gg
    differential(scenario)


def test_once_differentiable():
    def scenario(a):
        class Once(a.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @a.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                ctx.grad_mode = a.lib.is_grad_enabled()
                return 2 * x * g
        x = a.tensor([1.0, 2.0], requires_grad=True)
        y = Once.apply(x)
        seed = a.tensor([1.0, 1.0], requires_grad=True)
        (g,) = a.lib.autograd.grad(y, x, seed, create_graph=True)
        facts = [g, y.grad_fn.grad_mode, g.grad_fn.name(), g.grad_fn.next_functions]
        (plain,) = a.lib.autograd.grad(Once.apply(x), x, a.tensor([1.0, 1.0]), create_graph=True)
        facts.append(plain)
        try:
            g.backward(a.tensor([1.0, 1.0]))
        except RuntimeError as e:
            facts.append(str(e))
        return facts
    differential(scenario)


def test_node_hooks_run_around_the_custom_backward():
    def scenario(a):
        log = []
        x = a.tensor([1.0, 2.0], requires_grad=True)
        y = square(a).apply(x)
        y.grad_fn.register_prehook(lambda grads: log.append(("pre", grads)))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi, go)))
        y.register_hook(lambda g: log.append(("tensor", g)))
        y.backward(a.tensor([1.0, 1.0]))
        return log, x.grad
    differential(scenario)


def test_classes_and_deprecations():
    def scenario(a):
        class Plain(a.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        node = Plain.apply(a.tensor([1.0], requires_grad=True)).grad_fn
        return (type(Plain).__name__, Plain._backward_cls.__name__, node._forward_cls is Plain,
                isinstance(node, a.function.FunctionCtx),
                isinstance(node, a.function.BackwardCFunction),
                issubclass(a.function.InplaceFunction, a.Function),
                type(Plain()).__name__)
    assert differential(scenario)[-1][0][0] == "DeprecationWarning"
