"""torch.fx against PyTorch's: the graphs symbolic tracing records, the code
GraphModule generates (character for character), running it, the Interpreter,
and building and editing graphs by hand."""
from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
import torch

import glasstorch as gt

from .helpers import to_numpy


def _tree(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = lib.nn.Linear(4, 4)
            self.scale = lib.nn.Parameter(lib.ones(4))

        def forward(self, x):
            return self.proj(x) * self.scale

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = lib.nn.Linear(4, 5)
            self.param = lib.nn.Parameter(lib.ones(5))
            self.block = Block()
            self.seq = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.ReLU())

        def forward(self, x, y):
            a = self.linear(self.seq(self.block(x))) + self.param
            b = lib.relu(a).sum(dim=-1, keepdim=True)
            c = a.transpose(0, 1)
            return b * 2 + y, c.shape[0], lib.cat([a, a], 1)
    return Net()


PROGRAMS = {   # name -> (lib) -> (function or module, example inputs)
    "chain": lambda lib: (lambda x: (x + 1).exp().neg() - x, (lib.ones(3),)),
    "operators": lambda lib: (lambda x, y: (x * y, -x, x @ y, abs(x), x[:, 1:2], 2 ** x,
                                            x / 3, x // 2, x > y, ~(x > 0)),
                              (lib.ones(3, 3), lib.ones(3, 3))),
    "names": lambda lib: (lambda x: (lib.sum(x, dim=0), x.sum(), x.size(0) * 2, x.max()),
                          (lib.ones(3, 3),)),
    "defaults": lambda lib: (lambda x, y=3: x * y, (lib.ones(2),)),
    "methods": lambda lib: (lambda x: x.softmax(-1).view(-1).unsqueeze(0).float(),
                            (lib.ones(2, 3),)),
    "modules": lambda lib: (_tree(lib), (lib.ones(2, 4), lib.ones(2, 1))),
}


def _traced(lib, name):
    program, inputs = PROGRAMS[name](lib)
    lib.manual_seed(0)
    if isinstance(program, lib.nn.Module):
        lib.manual_seed(0)
        program, inputs = PROGRAMS[name](lib)
    return lib.fx.symbolic_trace(program), program, inputs


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_symbolic_trace_prints_and_runs_as_torch(name):
    import torch.fx  # noqa: F401
    ours, our_program, our_inputs = _traced(gt, name)
    theirs, their_program, their_inputs = _traced(torch, name)
    assert ours.code == theirs.code
    assert str(ours.graph) == str(theirs.graph)
    assert [n.name for n in ours.graph.nodes] == [n.name for n in theirs.graph.nodes]
    assert repr(ours) == repr(theirs)
    flat = lambda out: out if isinstance(out, tuple) else (out,)   # noqa: E731
    for a, b in zip(flat(ours(*our_inputs)), flat(theirs(*their_inputs))):
        if isinstance(b, torch.Tensor):
            np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-6, atol=1e-6)
        else:
            assert a == b
    for a, b in zip(flat(gt.fx.Interpreter(ours).run(*our_inputs)), flat(ours(*our_inputs))):
        if isinstance(a, gt.Tensor):
            assert np.array_equal(a.detach().numpy(), b.detach().numpy())
        else:
            assert a == b


def _by_hand(lib):
    g = lib.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(operator.add, (x, 1))
    z = g.call_function(lib.sum, (y,), {"dim": 0})
    w = g.call_method("sum", (y,))
    unused = g.call_function(operator.mul, (x, 2))
    m = g.call_function(max, (z, 2))
    g.output((w, m))
    return g, (x, y, z, w, unused, m)


def test_graphs_built_and_edited_by_hand_as_torch():
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        g, (x, y, z, w, unused, m) = _by_hand(lib)
        before = g.python_code("self").src
        with g.inserting_after(y):
            y2 = g.call_function(operator.mul, (y, 3))
        y.replace_all_uses_with(y2)
        y2.args = (y, 3)                 # the new node still reads y
        dead = g.eliminate_dead_code()
        g.lint()
        results.append((before, str(g), dead, [n.name for n in g.nodes], len(y.users),
                        g.python_code("self").src))
    assert results[0] == results[1]


def test_trace_errors_as_torch():
    import torch.fx  # noqa: F401

    def branch(x):
        return x if x.sum() > 0 else -x

    def loop(x):
        return [a for a in x]
    for fn in (branch, loop):
        errors = []
        for lib in (gt, torch):
            with pytest.raises(Exception) as info:
                lib.fx.symbolic_trace(fn)
            errors.append((type(info.value).__name__, str(info.value)))
        assert errors[0] == errors[1]


def test_erase_node_with_users_refused_as_torch():
    import torch.fx  # noqa: F401
    messages = []
    for lib in (gt, torch):
        g, (x, y, *_rest) = _by_hand(lib)
        with pytest.raises(RuntimeError) as info:
            g.erase_node(y)
        messages.append(str(info.value).split(" in the graph")[0])
    assert messages[0] == messages[1]


def test_recompile_after_an_edit_changes_forward():
    gm = gt.fx.symbolic_trace(lambda x: x + 1)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is operator.add:
            node.target = operator.mul
    gm.recompile()
    assert "x * 1" in gm.code
    assert np.array_equal(gm(gt.full((2,), 3.0)).numpy(), np.array([3.0, 3.0], np.float32))


def test_shape_prop_and_transformer_as_torch():
    """ShapeProp's node.meta["tensor_meta"] and a Transformer's rewritten graph."""
    import torch.fx  # noqa: F401
    from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

    from glasstorch.fx.passes.shape_prop import ShapeProp
    results, values = [], []
    for lib, shape_prop in ((gt, ShapeProp), (torch, TorchShapeProp)):
        gm = lib.fx.symbolic_trace(lambda x: ((x + 1).relu().t(), x.shape))
        shape_prop(gm).propagate(lib.ones(2, 3))
        metas = [repr(n.meta.get("tensor_meta")) for n in gm.graph.nodes]

        class Swap(lib.fx.Transformer):
            def call_method(self, target, args, kwargs):
                return super().call_method("sigmoid" if target == "relu" else target, args,
                                           kwargs)
        swapped = Swap(gm).transform()
        results.append((metas, swapped.code, repr(swapped)))
        values.append(swapped(lib.full((2, 3), 0.5))[0].tolist())
    assert results[0] == results[1]
    np.testing.assert_allclose(values[0], values[1], rtol=1e-6)    # sigmoid: SLEEF's exp in torch


def test_print_readable_and_tabular_as_torch(capsys):
    import torch.fx  # noqa: F401
    outputs = []
    for lib in (gt, torch):
        def f(x):
            return (x + 1).relu().transpose(0, 1)
        gm = lib.fx.symbolic_trace(f)
        readable = gm.print_readable(print_output=False)
        gm.graph.print_tabular()
        outputs.append((readable, capsys.readouterr().out))
    assert outputs[0] == outputs[1]


def test_deepcopy_as_torch():
    """A deep copy prints the same code, computes the same values and owns its
    parameters: training the copy leaves the original alone."""
    import copy

    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        lib.manual_seed(0)
        gm = lib.fx.symbolic_trace(_tree(lib))
        clone = copy.deepcopy(gm)
        x, y = lib.ones(2, 4), lib.ones(2, 1)
        same = [a.tolist() if isinstance(a, lib.Tensor) else a
                for a in clone(x, y)] == [a.tolist() if isinstance(a, lib.Tensor) else a
                                          for a in gm(x, y)]
        with lib.no_grad():
            clone.param.add_(1)
        results.append((clone.code == gm.code, str(clone.graph) == str(gm.graph), repr(clone),
                        same, gm.param.sum().item(), clone.param.sum().item(),
                        clone.graph is gm.graph))
    assert results[0] == results[1]


# -- what torch.* and torch.nn.functional calls record, and how the code names them --

def _functional_calls(lib):
    F = lib.nn.functional

    def f(x, w):
        a = F.gelu(F.relu(F.linear(x, w)))
        b = F.dropout(F.layer_norm(F.softmax(a, dim=-1), (4,)), 0.0)
        c = lib.flatten(lib.cat([lib.matmul(b, w), b], 1))
        d = F.conv2d(x.view(1, 1, 4, 4), w.view(1, 1, 4, 4))
        return (lib.sigmoid(c), F.log_softmax(x, 1), F.silu(x), F.mse_loss(x, w),
                F.cross_entropy(x, w.softmax(1)), F.max_pool2d(d, 1), F.pad(x, (1, 1)),
                F.scaled_dot_product_attention(x, x, x), F.embedding(x.long().abs(), w),
                lib.zeros(3), F.softplus(x), F.l1_loss(x, w), lib.tensordot(x, w, 1))
    return f


@settings(max_examples=10, deadline=None)
@given(values=st.lists(st.floats(-3, 3, width=32), min_size=32, max_size=32))
def test_functional_calls_record_and_print_as_torch(values):
    """Python-level functionals record torch's keyword form (defaults filled in),
    C-bound ones their own path (``torch._C._nn.linear``); a tensor made while
    tracing becomes a ``_tensor_constant`` attribute; the results agree."""
    import torch.fx  # noqa: F401
    x, w = np.array(values[:16], np.float32).reshape(4, 4), np.array(values[16:], np.float32)
    traced, outputs = [], []
    for lib in (gt, torch):
        gm = lib.fx.symbolic_trace(_functional_calls(lib))
        traced.append((gm.code, str(gm.graph), sorted(k for k, _ in gm.named_buffers())))
        outputs.append(gm(lib.tensor(x), lib.tensor(w.reshape(4, 4))))
    assert traced[0] == traced[1]
    for a, b in zip(*outputs):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-4, atol=1e-5)


def test_c_nn_bindings_by_name():
    """Generated code calls ``torch._C._nn.linear``: the name must reach the op."""
    x, w = gt.ones(2, 3), gt.ones(4, 3)
    assert gt._C._nn.linear(x, w).tolist() == gt.nn.functional.linear(x, w).tolist()
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        gt._C._nn.nope


# -- concrete_args, fx.wrap and autowrap --

def _specialised(x, flag, scale=2.0, opt=None):
    if flag:
        x = x * scale
    if opt is None:
        x = x + 1
    return x


def _nested(x, d):
    return x + d["a"] * d["b"]


@pytest.mark.parametrize("concrete", [{"flag": True, "opt": None}, {"flag": False, "scale": 4.0},
                                      (gt.fx.PH, True, 2.0, None)])
def test_concrete_args_specialise_as_torch(concrete):
    """Each concrete value becomes a placeholder ``<name>_1`` guarded by
    ``torch._assert`` (``_assert_is_none`` for None); other inputs fail the guard."""
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        own = tuple(lib.fx.PH if c is gt.fx.PH else c for c in concrete) \
            if isinstance(concrete, tuple) else concrete
        gm = lib.fx.symbolic_trace(_specialised, concrete_args=own)
        args = dict(zip(("flag", "scale", "opt"), (True, 2.0, None)))
        args.update({k: v for k, v in (own.items() if isinstance(own, dict) else [])})
        value = gm(lib.full((2,), 3.0), *args.values()).tolist()
        with pytest.raises(AssertionError) as info:
            gm(lib.full((2,), 3.0), not args["flag"], args["scale"], args["opt"])
        results.append((gm.code, str(gm.graph), value, str(info.value)))
    assert results[0] == results[1]


def test_concrete_args_structure_of_placeholders_as_torch():
    """``{'d': {'a': PH, 'b': PH}}``: forward takes ``d`` and flattens it."""
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        gm = lib.fx.symbolic_trace(_nested, concrete_args={"d": {"a": lib.fx.PH, "b": lib.fx.PH}})
        out = gm(lib.full((2,), 1.0), {"a": lib.full((2,), 2.0), "b": lib.full((2,), 3.0)})
        results.append((gm.code, str(gm.graph), out.tolist()))
    assert results[0] == results[1]


def test_concrete_args_bad_count_as_torch():
    import torch.fx  # noqa: F401
    errors = []
    for lib in (gt, torch):
        with pytest.raises(RuntimeError) as info:
            lib.fx.symbolic_trace(_specialised, concrete_args=(True,))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def _leaf_sum(x, y):
    return x.sum() + y


def _leaf_decorated(x):
    return x * 2


gt.fx.wrap("_leaf_sum")
torch.fx.wrap("_leaf_sum")
_leaf_decorated = torch.fx.wrap(gt.fx.wrap(_leaf_decorated))


def autowrapped_triple(x):
    return x * 3


def _uses_leaves(x):
    import math
    return _leaf_sum(x, math.sqrt(x.shape[0])) + _leaf_decorated(x) + autowrapped_triple(x) + \
        math.floor(2.5)


def test_wrap_and_autowrap_as_torch():
    """fx.wrap'd functions and autowrapped ones (math's, autowrap_functions) are
    call_function leaves; the code wraps them again; the original globals return."""
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        tracer = lib.fx.Tracer(autowrap_functions=(autowrapped_triple,))
        graph = tracer.trace(_uses_leaves)
        gm = lib.fx.GraphModule(tracer.root, graph, "_uses_leaves")
        plain = lib.fx.symbolic_trace(_uses_leaves)
        results.append((gm.code, str(gm.graph), plain.code, gm(lib.ones(4)).tolist(),
                        _leaf_sum.__name__, globals()["autowrapped_triple"] is autowrapped_triple))
    assert results[0] == results[1]


def test_wrap_refused_as_torch():
    import torch.fx  # noqa: F401
    errors = []
    for lib in (gt, torch):
        for bad in (3, "inner"):
            with pytest.raises((RuntimeError, NotImplementedError)) as info:
                lib.fx.wrap(bad)
            errors.append((type(info.value).__name__, str(info.value)))
    assert errors[:2] == errors[2:]


# -- editing graphs and modules, saving GraphModules --

def _editable(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 3)
            self.unused = lib.nn.ReLU()
            self.sub = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Tanh())

        def forward(self, x, y=2):
            return lib.relu(self.sub(self.lin(x))) + y * x.sum()
    lib.manual_seed(0)
    return lib.fx.symbolic_trace(M())


def test_node_and_graph_editing_api_as_torch():
    """find_nodes, update_arg/update_kwarg, replace_input_with, next/prev,
    all_input_nodes, inserting_before/after (None: the start / the end) and
    erase_node's refusals and warning."""
    import warnings

    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        gm = _editable(lib)
        g = gm.graph
        nodes = list(g.nodes)
        add = g.find_nodes(op="call_function", target=operator.add)[0]
        found = (g.find_nodes(op="call_module"), g.find_nodes(op="call_function", target=lib.relu),
                 g.find_nodes(op="placeholder"))
        with pytest.raises(AssertionError) as info:
            g.find_nodes(op="call_function")
        links = [(n.prev.name, n.next.name, n.all_input_nodes) for n in nodes]
        add.update_arg(1, 5)
        add.update_kwarg("alpha", 2)
        nodes[3].replace_input_with(nodes[2], nodes[0])
        with g.inserting_before(nodes[1]):
            neg = g.call_function(operator.neg, (nodes[0],))
        with g.inserting_before():
            first = g.call_function(operator.pos, (1,))
        with g.inserting_after():
            last = g.placeholder("z")
        errors = []
        for graph, node in ((g, nodes[0]), (lib.fx.Graph(), neg)):
            with pytest.raises(RuntimeError) as err:
                graph.erase_node(node)
            errors.append(str(err.value).split(" in the graph")[0])
        g.erase_node(neg)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g.erase_node(neg)
        results.append(repr((found, str(info.value), links, add.args, add.kwargs, str(g),
                             [first.name, last.name], errors, [str(w.message) for w in caught])))
    assert results[0] == results[1]


def test_proxy_unpacking_and_refusals_as_torch():
    """``a, b = proxy`` unpacks into getitems; loops, len() and bool() raise
    what torch raises."""
    import torch.fx  # noqa: F401

    def unpack(x):
        a, b = x
        return a - b

    def loop(x):
        return [a for a in x]

    def length(x):
        return len(x)

    def branch(x):
        return 1 if x else 0
    results = []
    for lib in (gt, torch):
        gm = lib.fx.symbolic_trace(unpack)
        outcome = [gm.code, str(gm), gm(lib.tensor([5.0, 2.0])).item()]
        for fn in (loop, length, branch):
            with pytest.raises(Exception) as info:
                lib.fx.symbolic_trace(fn)
            outcome.append((type(info.value).__name__, str(info.value)))
        results.append(outcome)
    assert results[0] == results[1]


def test_submodule_editing_as_torch():
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        gm = _editable(lib)
        deleted = (gm.delete_submodule("unused"), gm.delete_submodule("nope"),
                   gm.delete_submodule("sub.0"), gm.delete_submodule("lin.weight"))
        added = (gm.add_submodule("new.inner", lib.nn.ReLU()),
                 gm.add_submodule("lin.extra", lib.nn.ReLU()))
        before = [n for n, _ in gm.named_modules()]
        gm.delete_all_unused_submodules()
        results.append((deleted, added, before, [n for n, _ in gm.named_modules()]))
    assert results[0] == results[1]


class _Saved:
    """A module whose trace holds every kind of global: an operator, a wrapped
    math function, a tensor constant, a Sequential's child."""

    @staticmethod
    def build(lib):
        import math

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(2, 2)
                self.act = lib.nn.ReLU()
                self.p = lib.nn.Parameter(lib.ones(2))
                self.register_buffer("b", lib.zeros(2))
                self.seq = lib.nn.Sequential(lib.nn.Linear(2, 2))

            def forward(self, x):
                return abs(self.act(self.lin(x))) + self.p + self.b + \
                    math.sqrt(x.shape[0]) + self.seq(x) + lib.zeros(2)
        lib.manual_seed(0)
        return lib.fx.symbolic_trace(M())


@settings(max_examples=5, deadline=None)
@given(values=st.lists(st.floats(-4, 4, width=32), min_size=6, max_size=6))
def test_pickle_round_trip_as_torch(values):
    """Unpickling retraces the code: same code, graph and class name as torch's,
    and the same values as before pickling."""
    import pickle

    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        gm = _Saved.build(lib)
        back = pickle.loads(pickle.dumps(gm))
        x = lib.tensor(np.array(values, np.float32).reshape(3, 2))
        results.append((type(back).__name__, back.code, str(back.graph), back.code == gm.code,
                        to_numpy(back(x)).tolist() == to_numpy(gm(x)).tolist()))
        np.testing.assert_allclose(to_numpy(back(x)), to_numpy(_Saved.build(torch)(
            torch.tensor(np.array(values, np.float32).reshape(3, 2)))), rtol=1e-5, atol=1e-5)
    assert results[0] == results[1]


def test_to_folder_writes_torchs_module_file(tmp_path):
    import os

    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        folder = tmp_path / lib.__name__
        with pytest.warns(UserWarning) as caught:
            _Saved.build(lib).to_folder(folder, "Foo")
        text = (folder / "module.py").read_text().replace(str(folder), "FOLDER")
        results.append((text, sorted(os.listdir(folder)), (folder / "__init__.py").read_text(),
                        [str(w.message) for w in caught]))
    assert results[0] == results[1]


# -- subgraph rewriting --

def _rewritten(lib):
    """The docs' replace_pattern example, a pattern with a literal, a filter,
    ignore_literals and a two-output pattern: every resulting graph."""
    from importlib import import_module
    rewriter = import_module(f"{lib.__name__}.fx.subgraph_rewriter")

    class M(lib.nn.Module):
        def forward(self, x, w1, w2):
            m1 = lib.cat([w1, w2]).sum()
            m2 = lib.cat([w1, w2]).sum()
            return x + lib.max(m1) + lib.max(m2)

    def chain(x, y):
        a = lib.relu(x + y)
        b = lib.relu(a + 1)
        return lib.relu(b + y), a

    def two(x):
        a, b = x.sin(), x.cos()
        return a + b, a * b
    out = []

    def record(gm, matches):
        out.append((gm.code, str(gm.graph),
                    [(m.anchor.name, sorted((k.name, repr(v)) for k, v in m.nodes_map.items()))
                     for m in matches]))
    gm = lib.fx.symbolic_trace(M())
    record(gm, lib.fx.replace_pattern(gm, lambda w1, w2: lib.cat([w1, w2]).sum(),
                                      lambda w1, w2: lib.cat([w1, w2], 0) * 2))
    gm = lib.fx.symbolic_trace(chain)
    record(gm, lib.fx.replace_pattern(gm, lambda p, q: lib.relu(p + q),
                                      lambda p, q: lib.sigmoid(p * q)))
    gm = lib.fx.symbolic_trace(chain)
    replaced = rewriter.replace_pattern_with_filters(
        gm, lambda p: lib.relu(p + 1), lambda p: lib.neg(p),
        match_filters=[lambda match, graph, pattern: True])
    record(gm, replaced)
    out.append([[r.name for r in m.replacements] for m in replaced])
    gm = lib.fx.symbolic_trace(chain)
    record(gm, rewriter.replace_pattern_with_filters(
        gm, lambda p, q: lib.relu(p + q), lambda p, q: p - q, ignore_literals=True))
    gm = lib.fx.symbolic_trace(chain)
    record(gm, rewriter.replace_pattern_with_filters(
        gm, lambda p, q: lib.relu(p + q), lambda p, q: p - q,
        match_filters=[lambda match, graph, pattern:
                       match.nodes_map[match.anchors[0]].name != "relu"]))
    gm = lib.fx.symbolic_trace(two)
    record(gm, lib.fx.replace_pattern(gm, lambda x: (x.sin(), x.cos()),
                                      lambda x: (x.cos(), x.sin())))
    out.append(gm(lib.full((2,), 0.5))[1].tolist())
    return out


def test_replace_pattern_as_torch():
    import torch.fx  # noqa: F401
    ours, theirs = _rewritten(gt), _rewritten(torch)
    assert ours[:-1] == theirs[:-1]
    np.testing.assert_allclose(ours[-1], theirs[-1], rtol=1e-6)


def test_replace_pattern_refusals_as_torch():
    """A pattern with dead code; a replacement taking another number of inputs."""
    import torch.fx  # noqa: F401

    def dead(x):
        x.neg()
        return x.relu()
    errors = []
    for lib in (gt, torch):
        for pattern, replacement in ((dead, lambda x: x), (lambda x: x.relu(), lambda x, y: x)):
            gm = lib.fx.symbolic_trace(lambda x: x.relu() + 1)
            with pytest.raises(AssertionError) as info:
                lib.fx.replace_pattern(gm, pattern, replacement)
            errors.append(str(info.value))
    assert errors[:2] == errors[2:]


# -- the torch.fx documentation's programs, run unchanged on both libraries --

def _small_cnn(lib):
    class CNN(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = lib.nn.Conv2d(1, 4, 3, padding=1)
            self.bn = lib.nn.BatchNorm2d(4)
            self.pool = lib.nn.MaxPool2d(2)
            self.fc = lib.nn.Linear(4 * 4 * 4, 10)

        def forward(self, x):
            x = self.pool(lib.relu(self.bn(self.conv(x))))
            return lib.nn.functional.log_softmax(self.fc(lib.flatten(x, 1)), dim=-1)
    lib.manual_seed(0)
    return CNN()


def test_doc_custom_tracer_leaf_override_as_torch():
    """A Tracer subclass: a user module kept as a leaf, and Linear traced through
    (its forward's F.linear printed as torch._C._nn.linear)."""
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        class Special(lib.nn.Module):
            def forward(self, x):
                return x.neg().exp()

        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.special = Special()
                self.lin = lib.nn.Linear(3, 2)

            def forward(self, x):
                return self.lin(self.special(x)).relu()

        class LeafTracer(lib.fx.Tracer):
            def is_leaf_module(self, m, module_qualified_name):
                if isinstance(m, lib.nn.Linear):
                    return False
                return isinstance(m, Special) or super().is_leaf_module(m, module_qualified_name)
        lib.manual_seed(0)
        net = Net()
        graph = LeafTracer().trace(net)
        gm = lib.fx.GraphModule(net, graph)
        x = lib.ones(2, 3)
        results.append((gm.code, str(graph), to_numpy(gm(x)).round(5).tolist(),
                        to_numpy(net(x)).round(5).tolist()))
    assert results[0] == results[1]


def test_doc_replace_add_with_mul_as_torch():
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        class M(lib.nn.Module):
            def forward(self, x, y):
                return lib.add(x, y), lib.add(x, y) + x

        def transform(m):
            gm = lib.fx.symbolic_trace(m)
            for node in gm.graph.nodes:
                if node.op == "call_function" and node.target == lib.add:
                    node.target = lib.mul
            gm.graph.lint()
            gm.recompile()
            return gm
        gm = transform(M())
        a, b = gm(lib.full((2,), 3.0), lib.full((2,), 4.0))
        results.append((gm.code, str(gm.graph), a.tolist(), b.tolist()))
    assert results[0] == results[1]


def test_doc_inline_submodule_graph_as_torch():
    """A submodule kept as a call_module node, then its own graph copied in its
    place (graph_copy with the call's arguments for its placeholders)."""
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        class Inner(lib.nn.Module):
            def forward(self, a, b):
                return lib.sigmoid(a) * b + a

        class Outer(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()

            def forward(self, x):
                return self.inner(x.relu(), x) - 1

        class KeepInner(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return isinstance(m, Inner) or super().is_leaf_module(m, qualname)
        outer = Outer()
        gm = lib.fx.GraphModule(outer, KeepInner().trace(outer))
        before = gm.code
        call = next(n for n in gm.graph.nodes if n.op == "call_module")
        inner_graph = lib.fx.symbolic_trace(outer.inner).graph
        val_map = dict(zip([n for n in inner_graph.nodes if n.op == "placeholder"], call.args))
        with gm.graph.inserting_before(call):
            value = gm.graph.graph_copy(inner_graph, val_map)
        call.replace_all_uses_with(value)
        gm.graph.erase_node(call)
        gm.delete_all_unused_submodules()
        gm.recompile()
        x = lib.tensor([-1.0, 0.5, 2.0])
        results.append((before, gm.code, str(gm.graph), [n for n, _ in gm.named_modules()],
                        to_numpy(gm(x)).round(6).tolist(), to_numpy(outer(x)).round(6).tolist()))
    assert results[0] == results[1]


def test_doc_profiling_interpreter_as_torch():
    """The docs' ProfilingInterpreter: every node timed once; the nodes and the
    result agree (not the times)."""
    import time

    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        class ProfilingInterpreter(lib.fx.Interpreter):
            def __init__(self, mod):
                super().__init__(lib.fx.symbolic_trace(mod))
                self.total_runtime_sec = []
                self.runtimes_sec = {}

            def run(self, *args):
                start = time.time()
                value = super().run(*args)
                self.total_runtime_sec.append(time.time() - start)
                return value

            def run_node(self, n):
                start = time.time()
                value = super().run_node(n)
                self.runtimes_sec.setdefault(n, []).append(time.time() - start)
                return value
        model = _small_cnn(lib).eval()
        interp = ProfilingInterpreter(model)
        x = lib.tensor(np.linspace(-1, 1, 2 * 64, dtype=np.float32).reshape(2, 1, 8, 8))
        out = interp.run(x)
        results.append(([(n.name, n.op, len(t)) for n, t in interp.runtimes_sec.items()],
                        len(interp.total_runtime_sec), to_numpy(out)))
    assert results[0][:2] == results[1][:2]
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-4, atol=1e-5)


def test_doc_graph_inversion_as_torch():
    """The docs' ``invert``: a new graph built backwards with each function's
    inverse, run on the forward's outputs."""
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        invert_mapping = {}
        for a, b in ((lib.sin, lib.asin), (lib.cos, lib.acos), (lib.tan, lib.atan),
                     (lib.exp, lib.log)):
            invert_mapping[a], invert_mapping[b] = b, a

        def invert(model):
            fx_model = lib.fx.symbolic_trace(model)
            new_graph = lib.fx.Graph()
            env = {}
            for node in reversed(fx_model.graph.nodes):
                if node.op == "call_function":
                    new_node = new_graph.call_function(invert_mapping[node.target],
                                                       (env[node.name],))
                    env[node.args[0].name] = new_node
                elif node.op == "output":
                    new_node = new_graph.placeholder(node.name)
                    env[node.args[0].name] = new_node
                elif node.op == "placeholder":
                    new_graph.output(env[node.name])
                else:
                    raise NotImplementedError
            return lib.fx.GraphModule(fx_model, new_graph)

        def f(x):
            return lib.exp(lib.tan(x))
        inverted = invert(f)
        x = lib.tensor([0.1, 0.5, 1.0])
        results.append((inverted.code, str(inverted.graph),
                        to_numpy(inverted(f(x))).round(5).tolist()))
    assert results[0] == results[1]


def test_doc_shape_prop_on_a_cnn_as_torch():
    import torch.fx  # noqa: F401
    from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

    from glasstorch.fx.passes.shape_prop import ShapeProp
    results = []
    for lib, shape_prop in ((gt, ShapeProp), (torch, TorchShapeProp)):
        gm = lib.fx.symbolic_trace(_small_cnn(lib))
        shape_prop(gm).propagate(lib.ones(2, 1, 8, 8))
        results.append((gm.code,
                        [(n.name, repr(n.meta.get("tensor_meta"))) for n in gm.graph.nodes]))
    assert results[0] == results[1]


def test_variadic_and_keyword_only_parameters_as_torch():
    """``*args`` / ``**kwargs`` become one placeholder each (``*args``, named
    ``_args``), keyword-only parameters positional ones."""
    import torch.fx  # noqa: F401

    def star(x, *args, **kw):
        return x + args[0] * kw["s"]

    def keyword_only(x, *, k=2):
        return x * k
    results = []
    for lib in (gt, torch):
        class Rest(lib.nn.Module):
            def forward(self, x, *rest):
                return x + rest[1]
        traced = [lib.fx.symbolic_trace(fn) for fn in (star, keyword_only, Rest())]
        values = (traced[0](lib.ones(1), lib.full((1,), 2.0), s=3).item(),
                  traced[1](lib.ones(1), 3).item(), traced[2](lib.ones(1), 1, 5).item())
        results.append(([(gm.code, str(gm.graph)) for gm in traced], values))
    assert results[0] == results[1]


# -- torch.* functions torch writes in Python or binds in C, and what each records --

TORCH_CALLS = {   # name -> (lib) -> function of one 2x4 tensor
    "stack": lambda lib: lambda x: (lib.stack([x, x]), lib.stack((x, x), 1),
                                    lib.stack([x, x], dim=-1)),
    "cat": lambda lib: lambda x: (lib.cat([x, x]), lib.cat((x, x), 1), lib.cat([x, x], dim=-1)),
    "concat": lambda lib: lambda x: (lib.concat([x, x]), lib.concatenate((x, x), 1)),
    "split": lambda lib: lambda x: (lib.split(x, 2), lib.split(x, [1, 3], 1),
                                    lib.split(x, 1, dim=0)),
    "chunk": lambda lib: lambda x: (lib.chunk(x, 2), lib.chunk(x, 2, 1), lib.unbind(x),
                                    lib.tensor_split(x, 2, dim=1)),
    "flatten": lambda lib: lambda x: (lib.flatten(x), lib.flatten(x, 1), lib.flatten(x, 0, -1)),
    "einsum": lambda lib: lambda x: (lib.einsum("ij,kj->ik", x, x),
                                     lib.einsum("ij,kj->ik", [x, x]), lib.einsum("ij->j", (x,))),
    "norm": lambda lib: lambda x: (lib.norm(x), lib.norm(x, 1, 1), lib.norm(x, dim=0),
                                   lib.linalg.norm(x), lib.linalg.vector_norm(x, 3)),
    "meshgrid": lambda lib: lambda x: (lib.meshgrid(x[0], x[1], indexing="ij"),
                                       lib.meshgrid([x[0], x[1]], indexing="xy"),
                                       lib.meshgrid((x[0],), indexing="ij")),
    "broadcast": lambda lib: lambda x: (lib.broadcast_tensors(x, x[0]),
                                        lib.broadcast_tensors(x[:, :1], x)),
    "unique": lambda lib: lambda x: (lib.unique(x), lib.unique(x, return_counts=True),
                                     lib.unique(x, sorted=True, return_inverse=True, dim=0)),
}


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [to_numpy(value)]


@pytest.mark.parametrize("name", sorted(TORCH_CALLS))
def test_torch_calls_record_what_torch_records(name):
    """A function PyTorch binds in C records its call as written (``torch.stack([x,
    x])``: no ``dim`` filled in; ``concat`` by its own name), one of
    torch.functional its ``handle_torch_function`` form (``torch.functional.split(x,
    2, dim = 0)``; ``einsum(eq, [a, b])`` spread out; ``meshgrid([a, b])`` as the C
    binding ``torch.meshgrid``); the traced code computes what eager does."""
    import torch.fx  # noqa: F401
    values = np.arange(8, dtype=np.float32).reshape(2, 4) % 3
    traced, outputs = [], []
    for lib in (gt, torch):
        fn = TORCH_CALLS[name](lib)
        gm = lib.fx.symbolic_trace(fn)
        x = lib.tensor(values)
        traced.append((gm.code, str(gm.graph)))
        outputs.append((_leaves(gm(x)), _leaves(fn(x))))
    assert traced[0] == traced[1]
    for ours, theirs in zip(*outputs):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_function_modes_see_c_bound_calls_as_written():
    """``torch.stack([x, x])`` reaches a TorchFunctionMode with no ``dim``, an
    ``out=`` as given, and ``concat`` under its own name, as in PyTorch."""
    seen = []
    for lib in (gt, torch):
        calls = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                calls.append((func.__name__, len(args), sorted(kwargs or {})))
                return func(*args, **(kwargs or {}))
        x, out = lib.ones(2, 2), lib.empty(2, 2, 2)
        with Log():
            lib.stack([x, x])
            lib.stack([x, x], dim=1, out=out)
            lib.cat((x, x), 1)
            lib.concat([x, x])
            lib.concatenate([x, x], -1)
        seen.append(calls)
    assert seen[0] == seen[1]


def test_assert_at_top_level_traced_and_kept_as_torch():
    """``torch._assert`` lives at the top level (module ``torch``); traced on a
    Proxy it is one ``torch._assert`` node that dead-code elimination keeps, and
    the generated code raises its message."""
    import torch.fx  # noqa: F401

    def checked(x):
        lib = gt if isinstance(x, gt.fx.Proxy) else torch
        lib._assert(x.sum() > 0, "needs a positive sum")
        return x * 2
    results = []
    for lib in (gt, torch):
        gm = lib.fx.symbolic_trace(checked)
        changed = gm.graph.eliminate_dead_code()
        gm.recompile()
        with pytest.raises(AssertionError) as info:
            gm(-lib.ones(2))
        with pytest.raises(AssertionError) as eager:
            lib._assert(lib.tensor(False), "plain")
        results.append((lib._assert.__module__, lib._assert.__name__, gm.code, changed,
                        gm(lib.ones(2)).tolist(), str(info.value), str(eager.value)))
    assert results[0] == results[1]


def test_linalg_and_mha_calls_run_as_torch():
    """Generated code reaches linalg through ``torch._C._linalg`` (which glasstorch
    provides, with ``_special``/``_fft`` beside it), and
    ``multi_head_attention_forward`` records torch's keyword order (``is_causal``
    after ``attn_mask``)."""
    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        F = lib.nn.functional

        def f(q, w, ow):
            attended, _ = F.multi_head_attention_forward(
                q, q, q, 4, 2, w, None, None, None, False, 0.0, ow, None, training=False,
                need_weights=False)
            return lib.linalg.norm(attended), lib.linalg.vector_norm(attended, 1, dim=-1)
        gm = lib.fx.symbolic_trace(f)
        q = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 1, 4))
        w = lib.tensor(np.linspace(-0.5, 0.5, 48, dtype=np.float32).reshape(12, 4))
        ow = lib.tensor(np.linspace(0.2, -0.2, 16, dtype=np.float32).reshape(4, 4))
        errors = []
        for namespace in ("_linalg", "_special", "_fft"):
            with pytest.raises(AttributeError) as info:
                getattr(getattr(lib._C, namespace), "nope")
            errors.append(str(info.value))
        results.append((gm.code, [np.round(to_numpy(v), 5).tolist() for v in gm(q, w, ow)],
                        errors))
    assert results[0] == results[1]


def test_pytree_codegen_survives_deepcopy_and_pickle_as_torch():
    """A make_fx graph of nested inputs deep-copies with its ``_PyTreeCodeGen`` and
    specs (the copy takes ``(x, (a, b))`` as the original does).  Pickling
    retraces the code, as torch's does: a make_fx graph (one without ATen calls)
    or a symbolic trace of a ``PH`` structure comes back with a plain CodeGen
    whose code indexes into the nested argument."""
    import copy
    import pickle
    from importlib import import_module

    import torch.fx  # noqa: F401
    results = []
    for lib in (gt, torch):
        make_fx = import_module(f"{lib.__name__}.fx.experimental.proxy_tensor").make_fx
        t = lib.arange(4.0)

        def nested(x, pair):
            return x + pair[0] * pair[1], {"first": pair[0]}
        gm = make_fx(nested)(t, (t + 1, t + 2))
        picked = pickle.loads(pickle.dumps(make_fx(lambda x, pair: (pair[1], x))(t, (t, t))))
        clone = copy.deepcopy(gm)
        gm.graph.eliminate_dead_code()
        gm.recompile()
        out, named = clone(t, (t, t + 1))
        traced = lib.fx.symbolic_trace(_nested, concrete_args={"d": {"a": lib.fx.PH,
                                                                     "b": lib.fx.PH}})
        back = pickle.loads(pickle.dumps(traced))
        d = {"a": lib.full((2,), 2.0), "b": lib.full((2,), 3.0)}
        results.append((clone.code, str(clone.graph), type(clone.graph._codegen).__name__,
                        str(clone._in_spec), str(clone._out_spec), clone._in_spec == gm._in_spec,
                        out.tolist(), sorted(named), back.code, str(back.graph),
                        type(back.graph._codegen).__name__, back(lib.ones(2), d).tolist(),
                        copy.deepcopy(traced).code == traced.code, picked.code,
                        [v.tolist() for v in picked(t, (t, t + 1))]))
    assert results[0] == results[1]


def test_aten_calls_on_proxies_as_torch():
    """``torch.ops.aten.*`` called on Proxies hands the call to the Proxy's
    ``__torch_function__`` (PyTorch's op wrapper does): symbolic_trace records
    OpOverload targets, and a pickled make_fx graph (rebuilt by tracing its code
    again) runs."""
    import pickle

    def f(lib):
        return lambda x: lib.ops.aten.mul.Tensor(x, 2) + lib.ops.aten.relu.default(x)
    results = []
    for lib in (gt, torch):
        from importlib import import_module
        make_fx = import_module(f"{lib.__name__}.fx.experimental.proxy_tensor").make_fx
        gm = make_fx(lambda x, pair: x * pair[0] + pair[1].sin())(
            lib.ones(2), (lib.ones(2), lib.ones(2)))
        again = pickle.loads(pickle.dumps(gm))
        results.append((lib.fx.symbolic_trace(f(lib)).code, again.code,
                        again(lib.ones(2), (lib.ones(2), lib.full((2,), 2.0))).tolist()))
    assert results[0] == results[1]
