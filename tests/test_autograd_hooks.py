"""Autograd hooks against real PyTorch: the order tensor hooks, retain_grad,
node pre-/post-hooks, leaf hooks, AccumulateGrad and post-accumulate hooks
fire in; what their return values do (and the errors for bad ones);
RemovableHandle; hooks under autograd.grad and across in-place ops; the
errors and warnings of register_hook, retain_grad and ``.grad``."""
from __future__ import annotations

import pytest

from .test_autograd_engine import Close, differential, leaf, raised, returned


def _order_scenario(retain_first):
    """y = x * 2 with every kind of hook, logging what each sees."""
    def scenario(T):
        log = []
        x = leaf(T, [1., 2.])
        y = x * 2
        if retain_first:
            y.retain_grad()
        y.register_hook(lambda g: log.append(("y h1", g)))
        if not retain_first:
            y.retain_grad()
        y.register_hook(lambda g: log.append(("y h2", g)) or g * 10)
        y.grad_fn.register_prehook(lambda grads: log.append(("y prehook", y.grad, grads)))
        y.grad_fn.register_hook(lambda gin, gout: log.append(("y posthook", gin, gout)))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda grads: log.append(("acc prehook", grads, x.grad)))
        acc.register_hook(lambda gin, gout: log.append(("acc posthook", gin, gout, x.grad)))
        x.register_hook(lambda g: log.append(("x hook", g)))
        x.register_post_accumulate_grad_hook(lambda p: log.append(("x post-acc", p.grad)))
        y.backward(T.tensor([1., 3.]))
        return log, y.grad, x.grad
    return scenario


@pytest.mark.parametrize("retain_first", [False, True])
def test_hook_order(retain_first):
    log = returned(differential(_order_scenario(retain_first)))[0]
    assert [entry[0] for entry in log] == ["y h1", "y h2", "y prehook", "y posthook", "x hook",
                                           "acc prehook", "x post-acc", "acc posthook"]
    assert log[2][1][3] == Close([10., 30.])        # retain_grad saw h2's result


def test_tensor_hook_fires_once_for_summed_gradient():
    def scenario(T):
        seen = []
        x = leaf(T, [1., 2.])
        x.register_hook(lambda g: seen.append(g))
        y = x * 2
        y.register_hook(lambda g: seen.append(g))
        z = y * y + y + x
        z.backward(T.ones(2))
        return seen, x.grad
    differential(scenario)


def test_hook_return_values_replace_gradients():
    def scenario(T):
        x = leaf(T, [1., 2.])
        w = leaf(T, [3., 4.])
        y = x * w
        y.register_hook(lambda g: g + 1)
        y.grad_fn.register_prehook(lambda grads: (grads[0] * 2,))
        y.grad_fn.register_hook(lambda gin, gout: (gin[0] * 3, None))
        x.register_hook(lambda g: g - 100)
        y.backward(T.ones(2))
        return x.grad, w.grad
    differential(scenario)


def test_node_hooks_see_none_for_unneeded_inputs():
    def scenario(T):
        seen = []
        x = leaf(T, [1., 2.])
        y = x * T.tensor([3., 4.])
        y.grad_fn.register_hook(lambda gin, gout: seen.append((gin, gout)))
        y.backward(T.ones(2))
        return seen
    differential(scenario)


def test_removable_handles():
    def scenario(T):
        log = []
        x = leaf(T, [1., 2.])
        y = x * 2
        handles = [
            y.register_hook(lambda g: log.append("y")),
            x.register_hook(lambda g: log.append("x")),
            y.grad_fn.register_prehook(lambda g: log.append("pre")),
            y.grad_fn.register_hook(lambda gi, go: log.append("post")),
            x.register_post_accumulate_grad_hook(lambda p: log.append("acc")),
        ]
        y.backward(T.ones(2), retain_graph=True)
        for handle in handles:
            handle.remove()
        handles[0].remove()     # removing twice is fine
        y.backward(T.ones(2), retain_graph=True)
        with y.register_hook(lambda g: log.append("scoped")):
            y.backward(T.ones(2), retain_graph=True)
        y.backward(T.ones(2))
        return log, x.grad
    differential(scenario)


def test_leaf_hook_changes_what_is_accumulated():
    def scenario(T):
        x = leaf(T, [1., 2.])
        x.register_hook(lambda g: g * 0.5)
        (x * 4).backward(T.ones(2))
        (x * 4).backward(T.ones(2))
        return x.grad
    differential(scenario)


def test_hooks_under_autograd_grad():
    """Tensor hooks and retain_grad run for captured gradients; AccumulateGrad
    and post-accumulate hooks do not run."""
    def scenario(T):
        log = []
        x = leaf(T, [1., 2.])
        x.register_hook(lambda g: log.append(("x", g)) or g * 2)
        x.register_post_accumulate_grad_hook(lambda p: log.append("post-acc"))
        y = x * 3
        y.retain_grad()
        y.register_hook(lambda g: log.append(("y", g)))
        z = y * y
        z.grad_fn.register_prehook(lambda g: log.append("z prehook"))
        (gx,) = T.autograd.grad(z, x, T.ones(2))
        return log, gx, x.grad, y.grad
    differential(scenario)


def test_hook_on_captured_intermediate():
    """autograd.grad w.r.t. an intermediate that is also on the path to a
    leaf: its hook's result flows on."""
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 3
        y.register_hook(lambda g: g * 10)
        z = y * x
        gy, gx = T.autograd.grad(z, [y, x], T.ones(2))
        return gy, gx
    differential(scenario)


def test_hooks_after_inplace():
    """A hook registered before an in-place op stays on the old node; one
    registered after goes to the new node; retain_grad follows the tensor."""
    def scenario(T):
        log = []
        x = leaf(T, [1., 2.])
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: log.append(("before", g)))
        y.mul_(3)
        y.register_hook(lambda g: log.append(("after", g)))
        (y * y).backward(T.ones(2))
        return log, y.grad, y.grad_fn, x.grad
    differential(scenario)


def test_retain_grad_on_view_after_inplace_on_base():
    """The view's regenerated grad_fn takes over its retain_grad hook.  (Real
    PyTorch 2.13 crashes on ``view.register_hook`` in this situation, so
    tensor hooks are not exercised here.)"""
    def scenario(T):
        x = leaf(T, [1., 2., 3.])
        base = x * 1
        view = base[1:]
        view.retain_grad()
        base.mul_(2)
        (view * view).backward(T.ones(2))
        return view.grad, view.grad_fn, x.grad
    differential(scenario)


def test_hooks_with_create_graph():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * x
        y.register_hook(lambda g: g * x)
        (g,) = T.autograd.grad(y, x, T.ones(2), create_graph=True)
        (gg,) = T.autograd.grad(g, x, T.ones(2))
        return g, gg
    differential(scenario)


def _hook_returning(value):
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 2
        y.register_hook(lambda g: value(T, g))
        y.backward(T.ones(2))
        return x.grad
    return scenario


class _Callable:
    def __call__(self, grad):
        return grad.unsqueeze(0)


@pytest.mark.parametrize("value", [
    lambda T, g: T.ones(3), lambda T, g: 3, lambda T, g: [g], lambda T, g: g.double(),
    lambda T, g: g.unsqueeze(0), lambda T, g: g.view(2, 1).view(2),
    lambda T, g: _Callable()(g),
])
def test_tensor_hook_results(value):
    differential(_hook_returning(value), may_raise=True)


def test_unnamed_hook_in_messages():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 2
        y.register_hook(_Callable())
        y.backward(T.ones(2))
    assert raised(differential(scenario, may_raise=True)) == \
        "hook '<unknown>' has changed the size of value"


@pytest.mark.parametrize("result", [
    lambda T, g: (g[0], g[0]), lambda T, g: 5, lambda T, g: [g[0]], lambda T, g: (None,),
    lambda T, g: (T.ones(3),), lambda T, g: (g[0].double(),),
])
def test_node_prehook_results(result):
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 2
        y.grad_fn.register_prehook(lambda grads: result(T, grads))
        y.backward(T.ones(2))
        return x.grad
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("result", [
    lambda T, gin: (gin[0], gin[0]), lambda T, gin: (gin[0],), lambda T, gin: (None, None),
    lambda T, gin: (gin[0] * 2, None), lambda T, gin: gin[0],
])
def test_node_posthook_results(result):
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 2
        y.grad_fn.register_hook(lambda gin, gout: result(T, gin))
        y.backward(T.ones(2))
        return x.grad
    differential(scenario, may_raise=True)


def test_leaf_hook_result_checked():
    def scenario(T):
        x = leaf(T, [1., 2.])
        x.register_hook(lambda g: T.ones(3))
        (x * 2).backward(T.ones(2))
    differential(scenario, may_raise=True)


# -- registration errors, retain_grad, .grad of non-leaves ------------------------------

@pytest.mark.parametrize("call", [
    lambda T: T.ones(2).register_hook(lambda g: g),
    lambda T: T.ones(2).register_post_accumulate_grad_hook(lambda p: None),
    lambda T: (leaf(T, [1., 2.]) * 2).register_post_accumulate_grad_hook(lambda p: None),
    lambda T: T.ones(2).retain_grad(),
    lambda T: T.ones(2, dtype=T.int64).retain_grad(),
])
def test_registration_errors(call):
    raised(differential(call, may_raise=True))


def test_retain_grad_states():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 2
        before = (x.retains_grad, y.retains_grad)
        x.retain_grad()
        y.retain_grad()
        y.retain_grad()
        (y * 3).backward(T.ones(2), retain_graph=True)
        first = y.grad
        (y * 3).backward(T.ones(2))
        return before, x.retains_grad, y.retains_grad, first, y.grad, first is y.grad
    differential(scenario)


def test_retain_grad_makes_contiguous_copy():
    def scenario(T):
        x = leaf(T, [[1., 2.], [3., 4.]])
        y = x * 2
        y.retain_grad()
        g = T.tensor([[1., 2.], [3., 4.]]).t()
        y.backward(g)
        return y.grad.stride(), y.grad.data_ptr() == g.data_ptr(), y.grad
    differential(scenario)


def test_non_leaf_grad_warning():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 2
        return x.grad, y.grad, T.ones(2).grad
    outcome = differential(scenario)
    assert len(outcome[2]) == 1 and outcome[2][0].startswith(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed.")


def test_no_grad_warning_once_populated():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 2
        y.retain_grad()
        y.backward(T.ones(2))
        z = x * 3
        z.backward(T.ones(2), inputs=[z])
        return y.grad, z.grad
    assert differential(scenario)[2] == ()


def test_nodes_are_graph_nodes():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        return (isinstance(y.grad_fn, T.autograd.graph.Node),
                isinstance(acc, T.autograd.graph.Node), acc.next_functions, acc.metadata,
                y.grad_fn.metadata, acc.variable is x, y.grad_fn.name())
    differential(scenario)


def test_node_called_directly():
    def scenario(T):
        x = leaf(T, [1., 2.])
        w = leaf(T, [3., 4.])
        y = x * w
        return y.grad_fn(T.ones(2))
    differential(scenario)


@pytest.mark.parametrize("case", ["all_reached", "one_unreached", "any", "twice",
                                  "grad_inputs", "leaf_and_nonleaf"])
def test_register_multi_grad_hook(case):
    """``torch.autograd.graph.register_multi_grad_hook``: once per backward pass,
    after every reached tensor's gradient ("all", unreached ones None) or on the
    first ("any")."""
    def scenario(lib):
        graph = __import__(f"{lib.__name__}.autograd.graph", fromlist=["graph"])
        calls = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        x, y = a * 2, b * 3

        def record(grads):
            calls.append([None if g is None else g.tolist() for g in grads]
                         if isinstance(grads, (list, tuple)) else grads.tolist())
        tensors = [a, x] if case == "leaf_and_nonleaf" else [x, y]
        handle = graph.register_multi_grad_hook(tensors, record,
                                                mode="any" if case == "any" else "all")
        if case == "one_unreached":
            x.sum().backward(retain_graph=True)
        elif case == "grad_inputs":
            lib.autograd.grad((x * y).sum(), [a], retain_graph=True)
        elif case == "twice":
            (x + y).sum().backward(retain_graph=True)
            (x * y).sum().backward(retain_graph=True)
        elif case == "leaf_and_nonleaf":
            (x * 5).sum().backward(retain_graph=True)
        else:
            (x * y).sum().backward(retain_graph=True)
        handle.remove()
        (x * y).sum().backward()       # removed: no more calls
        return calls, a.grad, b.grad
    differential(scenario)


def test_register_multi_grad_hook_bad_mode():
    def scenario(lib):
        graph = __import__(f"{lib.__name__}.autograd.graph", fromlist=["graph"])
        return graph.register_multi_grad_hook([lib.ones(1, requires_grad=True)], print,
                                              mode="some")
    raised(differential(scenario, may_raise=True), "ValueError")
