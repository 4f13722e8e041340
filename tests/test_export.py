"""torch.export against PyTorch 2.13: the same programs exported by both
libraries give the same graph code, the same signature, the same ranges, the
same errors, and modules that compute what the eager ones do.

The printed programs differ only in their ``# File:`` comments where a node
comes from inside the library (glasstorch's ``nn/modules/linear.py`` is not
torch's), so those comments are compared after the file name.
"""
import copy
import importlib
import re

import numpy as np
import pytest

import glasstorch


def _programs(lib):
    """name -> (module, args, kwargs, dynamic_shapes), built in ``lib``."""
    nn = lib.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.register_buffer("b", lib.ones(3))
            self.bn = nn.BatchNorm1d(3)

        def forward(self, x):
            return self.bn(lib.relu(self.fc(x)) + self.b).sum(dim=1) * 2

    class Nested(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = lib.ones(3)
            self.p = nn.Parameter(lib.zeros(3))

        def forward(self, xs, d, *, scale=1.0):
            return xs[0] + xs[1] * self.c + d["k"] * scale + self.p

    class Shapes(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x, y):
            z = self.fc(x).reshape(-1)
            return {"a": z.view(x.shape[0], 3) + y, "b": x.shape[0] * 2}

    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 4, 3, padding=1)
            self.drop = nn.Dropout(0.0)

        def forward(self, x):
            y = self.drop(lib.nn.functional.gelu(self.conv(x)))
            return y.flatten(1).softmax(-1), y.mean()

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.out = nn.Linear(4, 10, bias=False)
            self.out.weight = self.emb.weight

        def forward(self, idx):
            return self.out(self.emb(idx)).log_softmax(-1)

    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, p, x):
            return lib.cond(p, lambda x: self.fc(x).sin(), lambda x: x.cos(), (x,))

    lib.manual_seed(0)
    x = lib.randn(5, 4)
    return {
        "mlp": (MLP(), (lib.randn(2, 4),), None, None),
        "nested": (Nested(), ([lib.randn(3), lib.randn(3)], {"k": lib.randn(3)}),
                   {"scale": 2.0}, None),
        "shapes": (Shapes(), (x, lib.randn(5, 3)), None, None),
        "conv": (Conv(), (lib.randn(2, 2, 5, 5),), None, None),
        "tied": (Tied(), (lib.tensor([[1, 2, 3]]),), None, None),
        "cond": (Branchy(), (lib.tensor(False), lib.randn(3)), None, None),
        "shapes_dynamic": (Shapes(), (x, lib.randn(5, 3)), None,
                           {"x": {0: lib.export.Dim("batch", min=2, max=100)},
                            "y": {0: lib.export.Dim("batch", min=2, max=100)}}),
    }


def _export(lib, name, strict=False):
    module, args, kwargs, dynamic = _programs(lib)[name]
    return lib.export.export(module, args, kwargs, dynamic_shapes=dynamic, strict=strict), \
        module, args, kwargs


def _comparable(text):
    """Printed code with library file paths reduced to their base names, and
    size reads unnumbered: PyTorch reads an input's dynamic size more times
    than it keeps (``sym_size_int_2`` is its first kept read, glasstorch's
    ``sym_size_int_1``)."""
    text = re.sub(r"# File: \S*/([^/]+\.py):\d+ in (\w+), code: .*", r"# File: \1 in \2", text)
    return re.sub(r"\bsym_size_int(_\d+)?\b", "sym_size_int", text)


PROGRAMS = ["mlp", "nested", "shapes", "conv", "tied", "cond", "shapes_dynamic"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_graph_code_and_signature_equal_torchs(torch, name):
    ours, _, _, _ = _export(glasstorch, name)
    theirs, _, _, _ = _export(torch, name)
    assert _comparable(ours.graph_module.code) == _comparable(theirs.graph_module.code)
    subgraphs = lambda ep: [getattr(ep.graph_module, n.target).code for n in ep.graph.nodes
                            if n.op == "get_attr"]
    assert subgraphs(ours) == subgraphs(theirs)
    assert str(ours.graph_signature) == str(theirs.graph_signature)
    assert repr(ours.graph_signature).replace("glasstorch", "torch") == \
        repr(theirs.graph_signature)
    assert str(ours.range_constraints) == str(theirs.range_constraints)
    assert list(ours.state_dict) == list(theirs.state_dict)
    assert list(ours.constants) == list(theirs.constants)


@pytest.mark.parametrize("name", ["mlp", "nested", "shapes_dynamic"])
def test_printed_program_equals_torchs(torch, name):
    ours, _, _, _ = _export(glasstorch, name)
    theirs, _, _, _ = _export(torch, name)
    lines = lambda ep: [line for line in _comparable(str(ep)).splitlines()
                        if "/nn/modules/" not in line and "File: " not in line]
    assert lines(ours) == lines(theirs)
    assert _comparable(str(ours)).count("# File:") == _comparable(str(theirs)).count("# File:")


@pytest.mark.parametrize("name", PROGRAMS)
def test_module_computes_what_eager_does(torch, name):
    """In the mode it was exported in (training: BatchNorm's statistics update
    in both, the exported module's through its in-place ops)."""
    ep, module, args, kwargs = _export(glasstorch, name)
    unlifted = ep.module()
    eager = copy.deepcopy(module)
    expected = eager(*args, **(kwargs or {}))
    got = unlifted(*args, **(kwargs or {}))
    flat = lambda v: glasstorch.utils._pytree.tree_leaves(v)
    buffers = lambda m: [b for _, b in sorted(m.state_dict().items())]
    for a, b in zip(flat(got) + buffers(module), flat(expected) + buffers(eager)):
        if isinstance(a, glasstorch.Tensor):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
        else:
            assert a == b


def test_unlifted_module_code_equals_torchs(torch):
    for name in ("mlp", "shapes_dynamic", "nested", "cond"):
        ours = _export(glasstorch, name)[0].module()
        theirs = _export(torch, name)[0].module()
        assert _comparable(ours.code) == _comparable(theirs.code), name


def test_dynamic_module_takes_other_sizes_and_guards_the_rest(torch):
    results = []
    for lib in (glasstorch, torch):
        unlifted = _export(lib, "shapes_dynamic")[0].module()
        static = _export(lib, "shapes")[0].module()
        out = [tuple(unlifted(lib.randn(7, 4), lib.randn(7, 3))["a"].shape)]
        for module, args in ((unlifted, (lib.randn(7, 5), lib.randn(7, 3))),
                             (unlifted, (lib.randn(7, 4), lib.randn(6, 3))),
                             (static, (lib.randn(6, 4), lib.randn(6, 3)))):
            with pytest.raises(AssertionError) as info:
                module(*args)
            out.append(str(info.value))
        results.append(out)
    assert results[0] == results[1]


def test_run_decompositions_equals_torchs(torch):
    """Core ATen, functional: Linear becomes permute + addmm, the in-place
    counter update an out-of-place add returned as a BUFFER_MUTATION."""
    def lowered(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(4, 3)
                self.register_buffer("steps", lib.zeros((), dtype=lib.int64))

            def forward(self, x):
                self.steps.add_(1)
                return lib.relu(self.fc(x)).flatten() * 2
        lib.manual_seed(0)
        return lib.export.export(M(), (lib.randn(2, 4),)).run_decompositions()
    ours, theirs = lowered(glasstorch), lowered(torch)
    assert ours.graph_module.code == theirs.graph_module.code
    assert str(ours.graph_signature) == str(theirs.graph_signature)
    lines = lambda ep: [line for line in _comparable(str(ep)).splitlines()
                        if "/nn/modules/" not in line and "File: " not in line]
    assert lines(ours) == lines(theirs)


def test_errors_as_torchs(torch):
    def errors(lib):
        Dim = lib.export.Dim

        class N(lib.nn.Module):
            def forward(self, x):
                return x * 2

        class Pinned(lib.nn.Module):
            def forward(self, x):
                return x.view(2, 2)

        class Branch(lib.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x + 1
                return x - 1
        out = []
        calls = [
            lambda: lib.export.export(N(), (lib.randn(4, 3),), dynamic_shapes={"y": {0: Dim("b")}}),
            lambda: lib.export.export(Pinned(), (lib.randn(4),),
                                      dynamic_shapes={"x": {0: Dim("n")}}),
            lambda: lib.export.export(Branch(), (lib.randn(3),), strict=True),
            lambda: lib.export.export(N(), (lib.randn(3),))(lib.randn(3)),
            lambda: lib.export.export(N(), [lib.randn(3)]),
            lambda: lib.export.export(lambda x: x, (lib.randn(3),)),
            lambda: Dim("a", min=5, max=3),
        ]
        for call in calls:
            with pytest.raises(Exception) as info:
                call()
            text = str(info.value)
            text = text.split("\n\nThe error above occurred")[0].split("\n\n      The branch")[0]
            out.append((type(info.value).__name__, text.replace("glasstorch", "torch")))
        out.append([repr(Dim("q", min=3, max=10)), repr(Dim("q")), repr(Dim("b", min=2)),
                    repr(Dim.AUTO), repr(Dim.DYNAMIC(max=8))])
        return out
    assert errors(glasstorch) == errors(torch)


def test_strict_export_gives_the_same_program(torch):
    for name in ("mlp", "shapes", "conv"):
        strict, module, _, _ = _export(glasstorch, name, strict=True)
        loose = _export(glasstorch, name)[0]
        assert strict.graph_module.code == loose.graph_module.code
        assert str(strict.graph_signature) == str(loose.graph_signature)
    strict = _export(glasstorch, "mlp", strict=True)[1]
    assert int(strict.bn.num_batches_tracked) == 0     # the capture ran on a copy


def test_dims_and_signature_accessors(torch):
    def accessors(lib):
        ep = _export(lib, "mlp")[0]
        sig = ep.graph_signature
        return (sig.user_inputs, sig.user_outputs, sig.parameters, sig.buffers,
                sig.inputs_to_parameters, sig.inputs_to_buffers, sig.buffers_to_mutate,
                [name for name, _ in ep.named_parameters()],
                [name for name, _ in ep.named_buffers()],
                [d.__name__ for d in lib.export.dims("a", "b", max=9)])
    assert accessors(glasstorch) == accessors(torch)


def test_exported_cond_takes_either_branch(torch):
    """The exported cond keeps the choice in the graph: the unlifted module
    follows the predicate it is called with, as the eager module does."""
    ep, module, _, _ = _export(glasstorch, "cond")
    unlifted = ep.module()
    for flag in (True, False):
        x = glasstorch.randn(3)
        np.testing.assert_allclose(unlifted(glasstorch.tensor(flag), x).detach().numpy(),
                                   module(glasstorch.tensor(flag), x).detach().numpy(),
                                   rtol=1e-6)


def test_data_dependent_branch_raises_torchs_error_type(torch):
    """Non-strict export of ``if x.sum() > 0``: PyTorch's
    GuardOnDataDependentSymNode (strict export: Dynamo's Unsupported, above)."""
    def branch(lib):
        class Branch(lib.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x + 1
                return x - 1
        with pytest.raises(Exception) as info:
            lib.export.export(Branch(), (lib.randn(3),))
        return type(info.value).__module__.replace("glasstorch", "torch"), \
            type(info.value).__name__, "Could not guard on data-dependent expression" in \
            str(info.value)
    assert branch(glasstorch) == branch(torch)


def test_is_exporting_and_pre_dispatch_make_fx_as_torch(torch):
    """``torch.compiler.is_exporting()`` is True while export traces (its branch is
    the one exported); make_fx(pre_dispatch=True) keeps ``aten.linear`` whole;
    a Dim given two different example sizes fails where torch's trace fails."""
    def run(lib):
        pt = importlib.import_module(lib.__name__ + ".fx.experimental.proxy_tensor")

        class M(lib.nn.Module):
            def forward(self, x, y):
                return (x * 2 if lib.compiler.is_exporting() else x) + y
        code = lib.export.export(M(), (lib.randn(5), lib.randn(5))).graph_module.code
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 2)
        traced = pt.make_fx(lambda x: lib.nn.functional.linear(x, lin.weight, lin.bias).relu(),
                            pre_dispatch=True)(lib.randn(4, 3)).code
        b = lib.export.Dim("b")
        with pytest.raises(Exception) as info:
            lib.export.export(M(), (lib.randn(5), lib.randn(6)),
                              dynamic_shapes={"x": {0: b}, "y": {0: b}})
        return code, traced, type(info.value).__name__, str(info.value).split(" at ")[0]
    assert run(glasstorch) == run(torch)
