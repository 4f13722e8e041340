"""torch.fx against PyTorch's: the graphs symbolic tracing records, the code
GraphModule generates (character for character), running it, the Interpreter,
and building and editing graphs by hand."""
from __future__ import annotations

import operator

import numpy as np
import pytest
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
