"""The autograd engine against real PyTorch: graphs and node names, backward and
autograd.grad (seeds, retain_graph, create_graph, inputs=, allow_unused,
several roots), .grad accumulation (identity, stealing, layout contract),
execution order, version counters and in-place errors, anomaly mode,
saved-tensor hooks and final callbacks.

Each scenario is a function of the library module (``torch`` or ``glasstorch``);
``differential`` runs it with both and compares what it returned or raised
(type and message) and the UserWarnings it emitted.
"""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, strategies as st

import glasstorch as gt

from .differential import Close, differential, raised, returned, run


def leaf(T, values, **kwargs):
    return T.tensor(values, requires_grad=True, **kwargs)


# -- the seed examples ---------------------------------------------------------------

def test_seed_scalar_graph():
    def scenario(T):
        a, b = leaf(T, 2.), leaf(T, 3.)
        c = a * b
        d = c + a
        d.backward()
        nexts = d.grad_fn.next_functions
        return (a.grad, b.grad, d.grad_fn, nexts, [n for n, _ in c.grad_fn.next_functions],
                nexts[1][0].variable is a, c.grad_fn.next_functions[1][0].variable is b,
                d.grad_fn.name(), nexts[1][0].name(), nexts[1][0]._sequence_nr())
    out = returned(differential(scenario))
    assert out[0][3] == Close(4.) and out[1][3] == Close(2.)
    assert out[2] == ("node", "AddBackward0")
    assert out[3] == ((("node", "MulBackward0"), 0), (("node", "AccumulateGrad"), 0))


def _walk_first_edges(node):
    names = []
    while node:
        names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    return names


def test_seed_addmm_walk():
    """AddmmBackward0 below SumBackward0 (the sum and addmm formulas)."""
    def scenario(T):
        x = T.tensor([[1., 2.], [3., 4.]])
        w = leaf(T, [[0.5, -1.], [2., 1.]])
        b = leaf(T, [0.25, 0.75])
        z = T.addmm(b, x, w).sum()
        z.backward()
        return _walk_first_edges(z.grad_fn), w.grad, b.grad
    assert returned(differential(scenario))[0] == ("SumBackward0", "AddmmBackward0",
                                                   "AccumulateGrad")


def test_seed_linear_walk():
    """linear decomposes into t and addmm (their formulas, and sum's)."""
    def scenario(T):
        x = T.tensor([[1., 2.], [3., 4.]])
        w = leaf(T, [[0.5, -1.], [2., 1.], [0., 3.]])
        b = leaf(T, [0.25, 0.75, 1.])
        z = T.nn.functional.linear(x, w, b).sum()
        z.backward()
        return _walk_first_edges(z.grad_fn), z.grad_fn.next_functions[0][0].next_functions, \
            w.grad, b.grad
    differential(scenario)


def test_seed_inplace_version_error():
    """sigmoid saves its result; mul_ then changes it (pytorch-facts §4.7)."""
    def scenario(T):
        x = leaf(T, [1., 2., 3.])
        y = x.sigmoid()
        y.mul_(2)
        y.sum().backward()
    message = raised(differential(scenario, may_raise=True))
    assert "which is output 0 of Sigmoid, is at version 1; expected version 0" in message


# -- in-place modification of saved tensors --------------------------------------------

def _saved_then_modified_output(T):
    x = leaf(T, [1., 2., 3.])
    w = x * 2
    y = w * w
    w.add_(1)          # w is now output 0 of AddBackward0
    y.backward(T.ones(3))


def _saved_then_modified_view(T):
    x = leaf(T, [1., 2., 3.])
    w = x * 2
    y = w * w
    w[1:].add_(1)      # w's history is now CopySlices
    y.backward(T.ones(3))


def _saved_leaf_modified_under_no_grad(T):
    x = leaf(T, [1., 2., 3.])
    y = x * x
    with T.no_grad():
        x.mul_(2)
    y.backward(T.ones(3))


def _saved_plain_tensor_modified(T):
    x = leaf(T, [1., 2., 3.])
    c = T.tensor([4., 5., 6.])
    y = x * c
    c.add_(1)
    c.add_(1)
    y.backward(T.ones(3))


@pytest.mark.parametrize("scenario", [_saved_then_modified_output, _saved_then_modified_view,
                                      _saved_leaf_modified_under_no_grad,
                                      _saved_plain_tensor_modified])
def test_modified_saved_tensor(scenario):
    message = raised(differential(scenario, may_raise=True))
    assert "modified by an inplace operation" in message


def test_modified_saved_tensor_message_parts():
    assert ", which is output 0 of Add," in raised(
        differential(_saved_then_modified_output, may_raise=True))
    assert "which is output" not in raised(
        differential(_saved_leaf_modified_under_no_grad, may_raise=True))
    assert "is at version 2; expected version 0" in raised(
        differential(_saved_plain_tensor_modified, may_raise=True))


def anomaly_differential(fn):
    """``differential`` for scenarios whose warnings carry forward stacks: the
    stacks are compared by their last frame outside the libraries (PyTorch's
    may end with its own Python frames, glasstorch's never do)."""
    def summary(message):
        head, _, trace = message.partition("\n")
        frames = [line for line in trace.split("\n") if line.startswith("  File")
                  and "/torch/" not in line and "/glasstorch/" not in line]
        return head, frames[-1].split(", in ")[-1] if frames else None, \
            message[message.rfind(" (Triggered"):]

    ours, theirs = run(fn, gt), run(fn, torch)
    assert ours[:-1] == theirs[:-1]
    assert [summary(w) for w in ours[-1]] == [summary(w) for w in theirs[-1]], \
        f"\nglasstorch: {ours[-1]}\ntorch:      {theirs[-1]}"
    return ours


def test_modified_saved_tensor_under_anomaly_mode():
    def scenario(T):
        with T.autograd.detect_anomaly():
            _saved_leaf_modified_under_no_grad(T)
    outcome = anomaly_differential(scenario)
    assert "Good luck!" in outcome[2]
    assert outcome[3][1].startswith("Error detected in MulBackward0. Traceback of forward call "
                                    "that caused the error:\n")
    assert "y = x * x" in outcome[3][1]


# -- backward / autograd.grad arguments ------------------------------------------------

def _nonscalar_without_gradient(T):
    (leaf(T, [1., 2.]) * 2).backward()


def _gradient_shape_mismatch(T):
    (leaf(T, [1., 2., 3.]) * 2).backward(T.ones(4))


def _root_without_grad(T):
    T.ones(3).backward(T.ones(3))


def _scalar_root_without_grad(T):
    T.tensor(1.).backward()


def _second_root_without_grad(T):
    x = leaf(T, 1.)
    T.autograd.backward([x * 2, T.tensor(2.)])


def _grad_of_non_tensor_gradient(T):
    (leaf(T, 1.) * 2).backward(2.0)


def _empty_inputs(T):
    x = leaf(T, 1.)
    (x * 2).backward(inputs=[])


def _grad_empty_inputs(T):
    x = leaf(T, 1.)
    T.autograd.grad(x * 2, [])


def _unused_input(T):
    x, z = leaf(T, 1.), leaf(T, 2.)
    T.autograd.grad(x * 3, [x, z])


def _input_without_grad(T):
    x = leaf(T, 1.)
    T.autograd.grad(x * 3, [x, T.tensor(2.)])


def _materialize_with_allow_unused_false(T):
    x, z = leaf(T, 1.), leaf(T, 2.)
    T.autograd.grad(x * 3, [x, z], allow_unused=False, materialize_grads=True)


@pytest.mark.parametrize("scenario", [
    _nonscalar_without_gradient, _gradient_shape_mismatch, _root_without_grad,
    _scalar_root_without_grad, _second_root_without_grad, _grad_of_non_tensor_gradient,
    _empty_inputs, _grad_empty_inputs, _unused_input,
    _input_without_grad, _materialize_with_allow_unused_false])
def test_backward_argument_errors(scenario):
    raised(differential(scenario, may_raise=True))


def test_allow_unused_and_materialize_grads():
    def scenario(T):
        x, z = leaf(T, [1., 2.]), leaf(T, [3., 4.])
        y = x * x
        unused = T.autograd.grad(y, [x, z], T.ones(2), allow_unused=True, retain_graph=True)
        zeros = T.autograd.grad(y, [x, z], T.ones(2), materialize_grads=True)
        return unused, zeros, x.grad, z.grad
    out = returned(differential(scenario))
    assert out[0][1] is None and out[1][1][3] == Close([0., 0.])


def test_grad_with_respect_to_non_leaf_inputs():
    def scenario(T):
        x = leaf(T, [1., 2.])
        w = x * 2
        y = w * w + x
        gw, gx = T.autograd.grad(y, [w, x], T.ones(2))
        return gw, gx, x.grad, w.requires_grad
    differential(scenario)


def test_grad_returns_seed_for_the_output_itself():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 2
        g = T.tensor([5., 6.])
        (gy,) = T.autograd.grad(y, y, g)
        (gx,) = T.autograd.grad(x, x, g)
        return gy, gx, gy is g, gx is g
    differential(scenario)


def test_backward_inputs_restricts_accumulation():
    def scenario(T):
        a, b = leaf(T, 2.), leaf(T, 3.)
        c = a * b
        c.backward(inputs=[a])
        return a.grad, b.grad
    out = returned(differential(scenario))
    assert out[1] is None


def test_backward_inputs_non_leaf():
    def scenario(T):
        a = leaf(T, [2., 3.])
        w = a * 3
        y = w * w
        y.backward(T.ones(2), inputs=[w], retain_graph=True)
        first = w.grad
        y.backward(T.ones(2), inputs=[w, a])
        return first, w.grad, a.grad, w.retains_grad
    differential(scenario)


def test_several_roots_graph_root():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y1, y2 = x * 3, x * x
        T.autograd.backward([y1, y2], [T.ones(2), T.tensor([10., 20.])])
        g = T.autograd.grad([x * 2, x * x], [x], [T.ones(2), T.ones(2)])
        return x.grad, g
    differential(scenario)


def test_roots_that_are_leaves():
    def scenario(T):
        x = leaf(T, [1., 2.])
        x.backward(T.tensor([3., 4.]))
        T.autograd.backward([x, x * 2], [T.ones(2), T.ones(2)])
        return x.grad
    differential(scenario)


# -- retain_graph, freeing saved tensors, create_graph ---------------------------------------

def test_backward_twice():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * x
        y.backward(T.ones(2))
        y.backward(T.ones(2))
    assert raised(differential(scenario, may_raise=True)).startswith(
        "Trying to backward through the graph a second time")


def test_backward_twice_without_saved_tensors_is_allowed():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x + x
        y.backward(T.ones(2))
        y.backward(T.ones(2))
        return x.grad
    differential(scenario)


def test_retain_graph():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * x
        y.backward(T.ones(2), retain_graph=True)
        saved = y.grad_fn._saved_self
        y.backward(T.ones(2))
        return x.grad, saved, saved is x, y.grad_fn._saved_other
    assert raised(differential(scenario, may_raise=True)).startswith("Trying to backward")


def test_saved_tensors_before_backward():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * 3.
        z = x * y
        return (z.grad_fn._saved_self is x, z.grad_fn._saved_other is y,
                z.grad_fn._saved_other, y.grad_fn._saved_self is x, y.grad_fn._saved_other)
    differential(scenario)


def test_saved_tensors_after_backward():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * x
        y.backward(T.ones(2))
        return y.grad_fn._saved_self
    assert raised(differential(scenario, may_raise=True)).startswith(
        "Trying to backward through the graph")


def test_unsaved_inputs_read_as_none():
    """An input only the gradient of a non-differentiable input needs is not
    saved (PyTorch's generated save guards): it reads None, also after backward."""
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * T.tensor([3., 4.])
        before = (y.grad_fn._saved_self, y.grad_fn._saved_other)
        y.backward(T.ones(2))
        return before, y.grad_fn._saved_self
    differential(scenario)


def test_saved_result():
    def scenario(T):
        x = leaf(T, [1., 2.])
        z = x.exp()
        saved = z.grad_fn._saved_result
        return saved, saved is z, saved.grad_fn is z.grad_fn, saved._version
    differential(scenario)


def test_raw_saved_tensor_hooks():
    def scenario(T):
        log = []
        x = leaf(T, [1., 2.])
        y = x * x
        y.grad_fn._raw_saved_self.register_hooks(lambda t: log.append("pack") or t * 1,
                                                 lambda t: log.append("unpack") or t * 2)
        y.backward(T.ones(2))
        return log, x.grad
    differential(scenario)


def _register_twice(T):
    y = leaf(T, [1., 2.]) * leaf(T, [3., 4.])     # y keeps the node (and the saved tensor) alive
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


def _register_after_backward(T):
    y = leaf(T, [1., 2.]) * leaf(T, [3., 4.])
    y.backward(T.ones(2))
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


def _register_on_unsaved(T):
    y = leaf(T, [1., 2.]) * 3
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


@pytest.mark.parametrize("scenario", [_register_twice, _register_after_backward,
                                      _register_on_unsaved])
def test_raw_saved_tensor_hook_errors(scenario):
    raised(differential(scenario, may_raise=True))


def test_create_graph_double_backward():
    def scenario(T):
        x = leaf(T, [2., -1.])
        y = x * x * x + x * 2          # y' = 3x^2 + 2, y'' = 6x
        (g,) = T.autograd.grad(y, x, T.ones(2), create_graph=True)
        (gg,) = T.autograd.grad(g, x, T.ones(2), create_graph=True)
        (ggg,) = T.autograd.grad(gg, x, T.ones(2))
        return g, gg, ggg, g.grad_fn, x.grad
    out = returned(differential(scenario))
    assert out[0][3] == Close([14., 5.]) and out[1][3] == Close([12., -6.])


def test_backward_create_graph_accumulates_with_history():
    def scenario(T):
        x = leaf(T, [2., 3.])
        y = x * x
        y.backward(T.ones(2), create_graph=True)
        first = x.grad
        (x.grad * x).backward(T.ones(2))
        return first, x.grad, first is x.grad, y.grad_fn._saved_self is x
    # the reference-cycle warning is given once per process, so whether this
    # test sees it depends on the tests before it: compare the rest only
    ours, theirs = run(scenario, gt), run(scenario, torch)
    assert ours[:2] == theirs[:2], f"\nglasstorch: {ours}\ntorch:      {theirs}"
    assert all(w.startswith("Using backward() with create_graph=True will create a reference "
                            "cycle") for w in ours[2] + theirs[2])


def test_backward_under_no_grad():
    """The pass runs with grad mode = create_graph whatever the caller's mode."""
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * x
        with T.no_grad():
            (g,) = T.autograd.grad(y, x, T.ones(2), create_graph=True)
            y.backward(T.ones(2))
            return g, x.grad, T.is_grad_enabled()
    differential(scenario)


def test_reentrant_backward_in_hook():
    """A backward pass started from a hook (reentrant) runs to completion
    inside the outer one; callbacks go to the innermost pass."""
    def scenario(T):
        log = []
        x = leaf(T, [1., 2.])
        w = leaf(T, [3., 4.])
        engine = T.autograd.Variable._execution_engine

        def hook(grad):
            engine.queue_callback(lambda: log.append("outer callback"))
            with T.enable_grad():          # the outer pass runs with grad mode off
                (inner,) = T.autograd.grad(w * w, w, T.ones(2))
                log.append(("inner", inner))
                (w * 5).backward(T.ones(2))
            log.append(("w.grad", w.grad))
            return grad * 2

        y = x * 3
        y.register_hook(hook)
        (y * w).backward(T.ones(2))
        log.append("done")
        return log, x.grad, w.grad
    differential(scenario)


# -- .grad accumulation -----------------------------------------------------------------

def test_grad_accumulates_in_place():
    def scenario(T):
        x = leaf(T, [1., 2.])
        (x * 3).backward(T.ones(2))
        first = x.grad
        (x * x).backward(T.ones(2))
        return first is x.grad, x.grad, first._version
    differential(scenario)


def test_grad_stealing_and_copying():
    def scenario(T):
        a, b = leaf(T, [1., 2.]), leaf(T, [3., 4.])
        g = T.tensor([5., 6.])
        (a + b).backward(g)
        ptrs = [a.grad.data_ptr(), b.grad.data_ptr(), g.data_ptr()]
        return (a.grad is b.grad, a.grad is g, ptrs[0] == ptrs[1], ptrs[0] == ptrs[2],
                ptrs[1] == ptrs[2], a.grad, b.grad)
    differential(scenario)


def test_grad_of_leaf_root_is_a_copy():
    def scenario(T):
        x = leaf(T, [1., 2.])
        g = T.tensor([5., 6.])
        x.backward(g)
        return (x.grad is g, x.grad.data_ptr() == g.data_ptr(), x.grad.requires_grad,
                x.grad._version)
    differential(scenario)


@pytest.mark.parametrize("make", [
    lambda T: T.ones(3, 4).t(),                         # dense, transposed
    lambda T: T.ones(2, 3, 4).permute(2, 0, 1),         # dense, permuted
    lambda T: T.ones(4, 6)[:, ::2],                     # not dense
    lambda T: T.ones(3, 1).expand(3, 4),                # overlapping
])
def test_grad_layout_contract(make):
    def scenario(T):
        p = make(T).detach().requires_grad_()
        (p * 2).backward(T.ones(p.shape))
        first = (p.grad.stride(), p.grad.is_contiguous(), p.grad._version)
        (p * 3).backward(T.ones(p.shape).t().contiguous().t() if p.dim() == 2 else T.ones(p.shape))
        return first, p.grad.stride(), p.grad
    differential(scenario)


def test_grad_setter_and_zero():
    def scenario(T):
        x = leaf(T, [1., 2.])
        (x * 2).backward(T.ones(2))
        g = x.grad
        g.zero_()
        (x * 2).backward(T.ones(2))
        same = x.grad is g
        x.grad = None
        (x * 2).backward(T.ones(2))
        x.grad = T.tensor([7., 8.])
        (x * 2).backward(T.ones(2))
        return same, x.grad
    differential(scenario)


@pytest.mark.parametrize("value", [
    lambda T: T.ones(3), lambda T: T.ones(2, dtype=T.float64), lambda T: 3.0,
    lambda T: T.ones(2, device="meta")])
def test_grad_setter_errors(value):
    def scenario(T):
        x = leaf(T, [1., 2.])
        x.grad = value(T)
        return x.grad
    differential(scenario, may_raise=True)


def test_broadcast_gradient_is_summed():
    def scenario(T):
        x = leaf(T, [[1.], [2.]])
        b = leaf(T, 3.)
        y = x * T.tensor([1., 2., 3.]) + b
        y.backward(T.ones(2, 3))
        return x.grad, b.grad
    differential(scenario)


def test_mixed_dtype_gradient_is_cast():
    def scenario(T):
        x = leaf(T, [1., 2.], dtype=T.float16)
        y = leaf(T, [3., 4.], dtype=T.float64)
        (x * y).backward(T.ones(2, dtype=T.float64))
        return x.grad, y.grad
    differential(scenario)


# -- execution order -----------------------------------------------------------------

def _record_order(named, order):
    """Register a node pre-hook on each named tensor's grad_fn."""
    for name, t in named.items():
        if t.grad_fn is not None:
            t.grad_fn.register_prehook(lambda grads, name=name: order.append(name))


def test_execution_order_multi_branch():
    def scenario(T):
        x = leaf(T, [0.5, 1.5])
        order = []
        e = x * 3
        s = x * x
        a = e + s
        d = a * a
        _record_order(dict(e=e, s=s, a=a, d=d), order)
        d.backward(T.ones(2))
        return order, x.grad
    assert returned(differential(scenario))[0] == ("d", "a", "s", "e")


def test_execution_order_transcendental():
    """d = cos(exp(x) + sin(x)) runs cos, add, sin, exp (pytorch-facts §4.2)."""
    def scenario(T):
        x = leaf(T, [0.5, 1.5])
        order = []
        e, s = x.exp(), x.sin()
        a = e + s
        d = a.cos()
        _record_order(dict(cos=d, add=a, sin=s, exp=e), order)
        d.backward(T.ones(2))
        return order, x.grad
    assert returned(differential(scenario))[0] == ("cos", "add", "sin", "exp")


def test_sequence_numbers_increase():
    def scenario(T):
        x = leaf(T, 1.)
        a = x * 2
        b = a + 1
        acc = a.grad_fn.next_functions[0][0]
        return (b.grad_fn._sequence_nr() - a.grad_fn._sequence_nr(), acc._sequence_nr())
    differential(scenario)


BINARY = ("add", "mul", "sub_alpha", "add_", "mul_", "tail_mul_")
UNARY = ("sin", "exp", "sigmoid", "full_view", "detach", "sigmoid_")


@st.composite
def programs(draw):
    """Random straight-line programs over 1-3 leaves of shape (3,): binary and
    unary ops, some in place (also on views, which rebases the base's history
    with CopySlices), reusing earlier values at random; random retain_grad and
    gradient-scaling hooks; one or several roots; then backward, backward
    with inputs=, or autograd.grad with respect to random values."""
    n_leaves = draw(st.integers(1, 3))
    leaves = [draw(st.lists(st.floats(-2, 2, width=32), min_size=3, max_size=3))
              for _ in range(n_leaves)]
    steps = []
    for k in range(draw(st.integers(1, 8))):
        n_values = n_leaves + k
        steps.append((draw(st.sampled_from(BINARY + UNARY)), draw(st.integers(0, n_values - 1)),
                      draw(st.integers(-1, n_values - 1)),   # -1: a constant operand
                      draw(st.sampled_from(("", "retain_grad", "hook")))))
    n_values = n_leaves + len(steps)
    roots = draw(st.lists(st.integers(0, n_values - 1), min_size=1, max_size=3))
    mode = draw(st.sampled_from(("backward", "inputs", "grad")))
    inputs = draw(st.lists(st.integers(0, n_values - 1), min_size=1, max_size=3))
    return leaves, steps, roots, mode, inputs


def _apply_step(T, op, x, y):
    if op == "add":
        return x + y
    if op == "mul":
        return x * y
    if op == "sub_alpha":
        return T.add(x, y, alpha=-0.5)
    if op in ("add_", "mul_", "sigmoid_"):
        return getattr(x, op)(y) if op != "sigmoid_" else x.sigmoid_()
    if op == "tail_mul_":
        x[1:].mul_(y[1:])
        return x
    if op == "full_view":
        return x[:]
    if op == "detach":
        return x.detach()
    return getattr(x, op)()


def _run_program(T, program):
    leaves, steps, roots, mode, inputs = program
    values = [leaf(T, v) for v in leaves]
    order, retained = [], []
    for i, (op, a, b, extra) in enumerate(steps):
        y = T.tensor([0.5, -1.0, 2.0]) if b < 0 else values[b]
        out = _apply_step(T, op, values[a], y)
        if out.grad_fn is not None:
            out.grad_fn.register_prehook(lambda grads, i=i: order.append(i))
        if extra == "retain_grad" and out.requires_grad:
            out.retain_grad()
            retained.append(out)
        elif extra == "hook" and out.requires_grad:
            out.register_hook(lambda grad: grad * 2)
        values.append(out)
    outputs = [values[r] for r in roots]
    grads = [T.full((3,), float(k + 1)) for k in range(len(outputs))]
    wrt = [values[i] for i in inputs]
    if mode == "grad":
        result = T.autograd.grad(outputs, wrt, grads, allow_unused=True)
    else:
        T.autograd.backward(outputs, grads, inputs=wrt if mode == "inputs" else None)
        result = [t.grad for t in wrt] if mode == "inputs" else None
    return (result, [v.grad for v in values[:len(leaves)]], [t.grad for t in retained], order)


def test_saved_values_unpack_in_pytorchs_order():
    """MulBackward0 unpacks ``other`` before ``self`` (the order PyTorch's codegen
    saves them: its first formula uses other): both modified in place, the
    error names other, a view whose grad_fn is now AsStrided."""
    program = ([[0.0, 0.0, 0.0]], [("add", 0, 0, ""), ("full_view", 1, 0, ""),
                                   ("mul", 1, 2, ""), ("add_", 1, 3, "")], [1], "backward", [0])
    differential(lambda T: _run_program(T, program), may_raise=True)


@given(programs())
def test_random_programs(program):
    """Gradients, errors and node order equal PyTorch's on random graphs."""
    differential(lambda T: _run_program(T, program), may_raise=True)


# -- version counters ----------------------------------------------------------------------

def test_version_counter_sharing():
    def scenario(T):
        x = T.tensor([1., 1., 1.])
        v = x[1:]
        d = x.detach()
        data = x.data
        seen = [(x._version, v._version, d._version, data._version)]
        x.add_(1)
        seen.append((x._version, v._version, d._version, data._version))
        data.add_(1)
        seen.append((x._version, v._version, d._version, data._version))
        v.mul_(2)
        d.zero_()
        seen.append((x._version, v._version, d._version, data._version))
        return seen
    differential(scenario)


def test_version_counter_bumps():
    def scenario(T):
        z = T.tensor([0., 0., 0.])
        seen = [z._version]
        T.add(T.ones(3), T.ones(3), out=z)
        seen.append(z._version)
        z[1:] += 2
        seen.append(z._version)
        z[0] = 5.
        seen.append(z._version)
        z.add(1)
        seen.append(z._version)
        with T.no_grad():
            z.mul_(2)
        seen.append(z._version)
        w = leaf(T, [1., 2., 3.])
        with T.no_grad():
            w.add_(1)
        seen.append(w._version)
        return seen, z
    assert returned(differential(scenario))[0] == (0, 1, 3, 4, 4, 5, 1)


def test_increment_version():
    def scenario(T):
        x = T.tensor([1., 2.])
        T.autograd.graph.increment_version(x)
        return x._version
    differential(scenario)


FACTORIES = [
    lambda T: T.zeros(3), lambda T: T.ones(2, 2), lambda T: T.full((3,), 2.),
    lambda T: T.empty(3), lambda T: T.zeros_like(T.tensor([1., 2.])),
    lambda T: T.ones_like(T.tensor([1., 2.])), lambda T: T.full_like(T.tensor([1., 2.]), 3.),
    lambda T: T.eye(2), lambda T: T.arange(3), lambda T: T.linspace(0, 1, 3),
    lambda T: T.rand(3), lambda T: T.randn(3), lambda T: T.randint(3, (3,)),
    lambda T: T.randperm(3), lambda T: T.tensor([1., 2.]).new_zeros(3),
    lambda T: T.tensor([1., 2.]).new_full((3,), 2.), lambda T: T.ones(2, requires_grad=True),
]


@pytest.mark.parametrize("make", FACTORIES)
def test_factory_results_start_at_version_zero(make):
    """The Python factories run below ADInplaceOrView (PyTorch's
    variable_factories.h), so the fill_/zero_ they use inside bumps nothing."""
    differential(lambda T: make(T)._version)


@pytest.mark.parametrize("call", [
    lambda T: T.ops.aten.zeros.default([3]), lambda T: T.ops.aten.ones.default([3]),
    lambda T: T.ops.aten.full.default([3], 2.), lambda T: T.ops.aten.eye.default(2),
])
def test_aten_factory_versions(call):
    """Called as aten ops they are not below ADInplaceOrView: each in-place
    op they run bumps once (the ops those call, being below it, don't)."""
    differential(lambda T: call(T)._version)


def test_op_outputs_start_at_version_zero():
    """Kernels below autograd run under AutoDispatchBelowADInplaceOrView: the
    in-place ops they use on their outputs bump nothing."""
    def scenario(T):
        x = T.tensor([[1., -2.], [3., 4.]], requires_grad=True)
        b = T.tensor([0.5, 0.25])
        outs = [x * 2, x + b, T.addmm(b, x, x), x @ x, x.sum(0), x.softmax(-1), x.exp(),
                T.cat([x, x]), x.clone(), x.relu(), T.where(x > 0, x, b), x.cumsum(0),
                x.mean(), x.std(), T.nn.functional.linear(x, x, b)]
        return [o._version for o in outs]
    differential(scenario)


# -- anomaly mode ------------------------------------------------------------------------

def test_anomaly_mode_flags_and_warning():
    def scenario(T):
        seen = [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
        with T.autograd.detect_anomaly(check_nan=False):
            seen += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
        seen += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
        with T.autograd.set_detect_anomaly(True):
            seen += [T.is_anomaly_enabled()]
        seen += [T.is_anomaly_enabled()]
        T.autograd.set_detect_anomaly(True, check_nan=False)
        seen += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
        T.autograd.set_detect_anomaly(False)
        seen += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
        return seen
    differential(scenario)


def test_anomaly_mode_decorator():
    def scenario(T):
        @T.autograd.detect_anomaly()
        def inner():
            return T.is_anomaly_enabled()
        return inner(), T.is_anomaly_enabled()
    differential(scenario, may_raise=True)


def _nan_gradient(T):
    x = leaf(T, [0., 1.])
    y = x * T.tensor([float("inf"), 2.])
    y.backward(T.tensor([0., 1.]))        # 0 * inf = nan
    return x.grad


def test_anomaly_check_nan():
    def scenario(T):
        with T.autograd.detect_anomaly():
            _nan_gradient(T)
    outcome = anomaly_differential(scenario)
    assert raised(outcome) == "Function 'MulBackward0' returned nan values in its 0th output."


def test_anomaly_without_forward_information():
    def scenario(T):
        x = leaf(T, [1., 2.])
        y = x * x
        y.backward(T.ones(2))
        with T.autograd.detect_anomaly():
            y.backward(T.ones(2))
    differential(scenario, may_raise=True)


def test_anomaly_parent_of_double_backward_nodes():
    """A node created by a backward pass (create_graph) records the node that
    was running as its parent; errors report both forward stacks."""
    def parents(T):
        with T.autograd.detect_anomaly():
            x = leaf(T, [1., 2.])
            y = x * x
            z = y * y
            (g,) = T.autograd.grad(z, x, T.ones(2), create_graph=True)
        parent = g.grad_fn.metadata["parent_"]
        return (g.grad_fn, parent is y.grad_fn, parent is z.grad_fn,
                "parent_" in z.grad_fn.metadata, sorted(z.grad_fn.metadata))

    def scenario(T):
        with T.autograd.detect_anomaly():
            x = leaf(T, [1., 2.])
            y = x * x
            z = y * y
            (g,) = T.autograd.grad(z, x, T.ones(2), create_graph=True)
            g.backward(T.ones(2))
            g.backward(T.ones(2))
    anomaly_differential(parents)
    outcome = anomaly_differential(scenario)
    assert outcome[3][2].startswith("\n\nPrevious calculation was induced by MulBackward0. "
                                    "Traceback of forward call that induced the previous "
                                    "calculation:\n")


def test_nan_gradient_without_check_nan():
    def scenario(T):
        with T.autograd.detect_anomaly(check_nan=False):
            return _nan_gradient(T)
    differential(scenario)
    differential(_nan_gradient)


def test_anomaly_forward_trace_on_error():
    def scenario(T):
        with T.autograd.detect_anomaly():
            x = leaf(T, [1., 2.])
            y = x * x
            y.backward(T.ones(2))
            y.backward(T.ones(2))
    assert "y = x * x" in anomaly_differential(scenario)[3][1]


# -- saved tensor hooks ------------------------------------------------------------------

def test_saved_tensors_hooks_counts():
    def scenario(T):
        packed, unpacked = [], []

        def pack(t):
            packed.append(tuple(t.shape))
            return ("box", t)

        def unpack(box):
            unpacked.append(box[0])
            return box[1]

        x = leaf(T, [1., 2.])
        with T.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x * x
            z = y * x + y
        counts = [len(packed), len(unpacked)]
        z.backward(T.ones(2))
        return counts, len(packed), len(unpacked), x.grad
    assert returned(differential(scenario))[:3] == ((4, 0), 4, 4)


def test_saved_tensors_hooks_exp_then_mul():
    """pytorch-facts §4.7: exp (saves its result) then y * x: 3 packs in
    forward, 3 unpacks in backward; what unpack returns gets its history back."""
    def scenario(T):
        counts = {"pack": 0, "unpack": 0}

        def pack(t):
            counts["pack"] += 1
            return t

        def unpack(t):
            counts["unpack"] += 1
            return t

        x = leaf(T, [1., 2.])
        with T.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.exp()
            z = y * x
        forward = dict(counts)
        saved = (y.grad_fn._saved_result, z.grad_fn._saved_self, z.grad_fn._saved_other)
        z.backward(T.ones(2))
        return forward, counts, saved, x.grad
    out = returned(differential(scenario))
    assert out[0] == {"pack": 3, "unpack": 0} and out[1] == {"pack": 3, "unpack": 6}


def test_saved_tensors_hooks_nesting_and_version_check():
    def scenario(T):
        log = []
        x = leaf(T, [1., 2.])
        w = x * 1.
        with T.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t,
                                                   lambda t: t):
            with T.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t,
                                                       lambda t: t):
                y = w * w
            z = y * 2
        w.add_(1)      # no version error: the hooks decide what is unpacked
        z.backward(T.ones(2))
        return log, x.grad
    differential(scenario)


def test_saved_tensors_hooks_unpack_must_return_tensor():
    def scenario(T):
        x = leaf(T, [1., 2.])
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = x * x
        y.backward(T.ones(2))
    differential(scenario, may_raise=True)


def test_disable_saved_tensors_hooks():
    def scenario(T):
        with T.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    assert raised(differential(scenario, may_raise=True)) == "no hooks here"


def test_save_on_cpu():
    def scenario(T):
        x = leaf(T, [1., 2.])
        with T.autograd.graph.save_on_cpu():
            y = x * x * x
        y.backward(T.ones(2))
        return x.grad
    differential(scenario)


# -- final callbacks ------------------------------------------------------------------------

def test_queue_callback():
    def scenario(T):
        log = []
        x = leaf(T, [1., 2.])
        engine = T.autograd.Variable._execution_engine

        def hook(grad):
            log.append("hook")
            engine.queue_callback(lambda: log.append(("callback", x.grad is not None)))
            return None

        y = x * 2
        y.register_hook(hook)
        (y * 3).backward(T.ones(2))
        log.append("after")
        return log
    assert returned(differential(scenario)) == ("hook", ("callback", True), "after")


def test_queue_callback_outside_backward():
    differential(lambda T: T.autograd.Variable._execution_engine.queue_callback(lambda: None),
                 may_raise=True)


def test_variable_is_tensor():
    def scenario(T):
        x = T.ones(2)
        v = T.autograd.Variable(x, requires_grad=True)
        return isinstance(x, T.autograd.Variable), v.requires_grad, v.is_leaf, \
            v.data_ptr() == x.data_ptr(), type(v) is T.Tensor, x.requires_grad
    differential(scenario)


@pytest.mark.parametrize("program", ["mul", "nll_loss", "mean_dim", "index", "cat", "addmm",
                                     "sum_keepdim", "softmax"])
def test_saved_attributes_as_pytorch_exposes_them(program):
    """``grad_fn._saved_<name>``: the same names (named returns by name, no
    ScalarType), and values of the same kinds (tuples, ints, tensors' shapes)."""
    def scenario(lib):
        x = lib.ones(2, 3, requires_grad=True)
        y = {"mul": lambda: x * 2,
             "nll_loss": lambda: lib.nn.functional.nll_loss(lib.log_softmax(x, 1),
                                                           lib.tensor([0, 1])),
             "mean_dim": lambda: x.mean(dim=[1]),
             "index": lambda: x[lib.tensor([0, 1])],
             "cat": lambda: lib.cat([x, x * 3]),
             "addmm": lambda: lib.addmm(lib.ones(3), x, lib.ones(3, 3)),
             "sum_keepdim": lambda: x.sum(1, keepdim=True),
             "softmax": lambda: lib.softmax(x, 1)}[program]()
        node = y.grad_fn

        def kind(value):
            if isinstance(value, lib.Tensor):
                return ("tensor", tuple(value.shape))
            if isinstance(value, (tuple, list)):
                return (type(value).__name__, tuple(kind(v) for v in value))
            return value
        # Left out: torch shows a negative SymInt (ignore_index=-100) as its unsigned
        # 64-bit wrap, and saves addmm's mat2 strides only when mat2 needs a gradient.
        return {name: kind(getattr(node, name)) for name in dir(node)
                if name.startswith("_saved_") and name not in (
                    "_saved_ignore_index", "_saved_mat2_sym_strides")}
    differential(scenario)
