"""Dynamo capture against torch's: the same programs compiled by both, with
graph counts, break counts and reasons, the captured graphs' code, recompiles
and results compared (``glasstorch/_dynamo``)."""
from __future__ import annotations

import collections
import importlib
import itertools
import re

import numpy as np
import pytest
import torch

import glasstorch as gt

from examples.dual import tiny_gpt

from .helpers import to_numpy


def _programs(lib):
    def g(y):
        print(y.shape)
        return y * 2

    def print_start(x):
        print("hi")
        return x + 1

    def item(x):
        n = x.sum().item()
        return x + n

    def branch(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    def bool_of_tensor(x):
        y = x.cos()
        bool(y.sum())
        return y

    def break_in_callee(x):
        return g(x + 1) + 1

    def loop_over_list(x, ys):
        out = x
        for y in ys:
            out = out + y * 2
        return out, len(ys)

    def functional_and_views(x):
        return lib.nn.functional.relu(x) + x.view(-1, 1).sum(0)

    def list_across_break(x):
        a = x * 2
        c = [a, a + 1]
        print("break")
        return c[0] + c[1]

    def shapes_and_constants(x, n):
        b, d = x.shape
        y = x.reshape(d, b) * n
        for _ in range(n):
            y = y + x.size(0)
        return y.sum(dim=0, keepdim=True), x.dim()

    def kwargs_and_methods(x, w):
        h = lib.matmul(x, w).softmax(dim=-1)
        return h.transpose(0, 1).contiguous().mean(dim=1), lib.cat([h, h], dim=0)

    @lib.compiler.disable
    def helper(x):
        return x * 3

    def disabled_callee(x):
        y = x + 1
        return helper(y) - 1

    def no_grad_block(x):
        with lib.no_grad():
            y = x * 2
        return y + x

    def user_graph_break(x):
        y = x * 2
        lib._dynamo.graph_break()
        return y + 1

    def local_containers(x):
        outs = []
        for i in range(3):
            outs.append(x * i)
        d = {}
        d["a"] = outs[-1]
        d.update(b=x + 1)
        outs.insert(0, d["b"])
        last = outs.pop()
        return lib.stack(outs).sum(0) + last + d["a"]

    weight = lib.ones(3, requires_grad=True)

    def backward_inside(x):
        loss = (weight * x).sum()
        loss.backward()                  # a graph break: it runs, not dropped from the graph
        return loss * 2

    def chain_and_profiler_range(x):
        with lib.autograd.profiler.record_function("range"):   # nothing in the graph
            y = x * 2
        for t in itertools.chain([y], [x]):
            y = y + t
        return y

    scales = collections.OrderedDict(a=2.0, b=3.0)     # (as an optimizer's hooks are kept)

    def imports_and_ordered_dict(x):
        from math import pi
        import math
        for scale in scales.values():
            x = x * scale
        return x * pi + math.e

    return {f.__name__: f for f in (print_start, item, branch, bool_of_tensor,
                                    break_in_callee, loop_over_list, functional_and_views,
                                    list_across_break, shapes_and_constants,
                                    kwargs_and_methods, disabled_callee, no_grad_block,
                                    user_graph_break, local_containers,
                                    imports_and_ordered_dict, backward_inside,
                                    chain_and_profiler_range)}


def _args(lib, name):
    rng = np.random.default_rng(0)

    def t(*shape):
        return lib.from_numpy(rng.standard_normal(shape).astype(np.float32))
    return {"loop_over_list": lambda: (t(3), [t(3), t(3)]),
            "shapes_and_constants": lambda: (t(2, 3), 2),
            "kwargs_and_methods": lambda: (t(2, 3), t(3, 4))}.get(name, lambda: (t(3),))()


def _explain(lib, name):
    lib._dynamo.reset()
    fn = _programs(lib)[name]
    out = lib._dynamo.explain(fn)(*_args(lib, name))
    reasons = [([re.sub(r" at 0x[0-9a-f]+", "", line) for line in r.reason.splitlines()[:2]],
                [s.name for s in r.user_stack]) for r in out.break_reasons]
    return (out.graph_count, out.graph_break_count, [len(o) for o in out.ops_per_graph],
            reasons, [g.code for g in out.graphs])


NAMES = sorted(_programs(gt))


@pytest.mark.parametrize("name", NAMES)
def test_explain_graphs_and_breaks_as_torch(name, capsys):
    """Graph and break counts, ops per graph, break reasons with their stack of
    functions, and each graph's code, character for character."""
    assert _explain(gt, name) == _explain(torch, name)
    capsys.readouterr()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_compiled_results_equal_eager(name, backend, capsys):
    """Every backend gives the eager results (the breaks' prints included)."""
    fn = _programs(gt)[name]
    gt._dynamo.reset()
    compiled = gt.compile(fn, backend=backend)
    for _ in range(2):                     # the second call runs the cached frames
        got, want = compiled(*_args(gt, name)), fn(*_args(gt, name))
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for a, b in zip(got, want):
            if isinstance(b, gt.Tensor):
                np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-6, atol=1e-6)
            else:
                assert a == b
    printed = capsys.readouterr().out.splitlines()
    assert printed[:len(printed) // 2] == printed[len(printed) // 2:]


def _recompile_cases(lib):
    def f(x, n):
        return x * n + x.shape[0]
    x = lib.ones(3)

    def marked(size):
        t = lib.ones(size)
        lib._dynamo.mark_dynamic(t, 0)
        return t
    static, automatic, dynamic = {"dynamic": False}, {}, {"dynamic": True}
    return f, {
        "same inputs": ([(x, 2), (lib.zeros(3), 2)], static),
        "python int changes": ([(x, 2), (x, 3), (x, 2)], static),
        "python int changes, automatic dynamic": ([(x, 2), (x, 3), (x, 5), (x, 2)], automatic),
        "dtype changes": ([(x, 2), (x.double(), 2)], static),
        "requires_grad changes": ([(x, 2), (lib.ones(3, requires_grad=True), 2)], static),
        "shape changes, dynamic=False": ([(x, 2), (lib.ones(4), 2), (lib.ones(5), 2)], static),
        "shape changes, automatic dynamic": ([(x, 2), (lib.ones(4), 2), (lib.ones(5), 2),
                                              (lib.ones(9), 2)], automatic),
        "shape changes, dynamic=True": ([(x, 2), (lib.ones(4), 2), (lib.ones(5), 2)], dynamic),
        "mark_dynamic": ([(marked(3), 2), (marked(7), 2)], static),
    }


@pytest.mark.parametrize("case", list(_recompile_cases(gt)[1]))
def test_recompiles_as_torch(case):
    """A failed guard recompiles; shapes follow dynamic=False / True / None (a size
    that changed becomes symbolic on the recompile) and mark_dynamic: the number
    of graphs compiled, and each graph's code, equal torch's."""
    results = []
    for lib in (gt, torch):
        f, cases = _recompile_cases(lib)
        calls, options = cases[case]
        lib._dynamo.reset()
        graphs = []
        compiled = lib.compile(f, backend=lambda gm, inputs: graphs.append(gm) or gm.forward,
                               **options)
        for args in calls:
            got = compiled(*args)
            assert lib.equal(got, f(*args))
        results.append([g.code for g in graphs])
    assert results[0] == results[1]


def test_recompile_limit_falls_back_to_eager_with_a_warning():
    gt._dynamo.reset()
    compiled = gt.compile(lambda x, n: x + n, backend="eager", dynamic=False)
    x = gt.ones(2)
    with pytest.warns(UserWarning, match=r"torch._dynamo hit config.recompile_limit \(8\)"):
        for n in range(10):
            assert gt.equal(compiled(x, n), x + n)


_FULLGRAPH = """
import {lib} as lib
def f(x):
    print("no")
    return x + 1
try:
    lib.compile(f, backend="eager", fullgraph=True)(lib.ones(2))
except lib._dynamo.exc.Unsupported as e:
    print(type(e).__name__, str(e).splitlines()[0])
"""


def test_fullgraph_raises_at_a_break():
    """fullgraph=True turns the break into torch's Unsupported error.  (Each library
    in its own process: a failed torch.compile leaves torch's autograd profiling
    changed for the rest of the process, which other tests compare against.)"""
    import subprocess
    import sys
    outputs = [subprocess.run([sys.executable, "-c", _FULLGRAPH.format(lib=lib)],
                              capture_output=True, text=True, check=True).stdout
               for lib in ("glasstorch", "torch")]
    assert outputs[0] == outputs[1] == "Unsupported Failed to trace builtin operator\n"


def test_module_compile_trains_like_eager():
    """torch.compile(model): parameters are graph inputs named by their source,
    the graph's code is torch's, and gradients equal eager's."""
    codes = []
    for lib in (gt, torch):
        lib.manual_seed(0)

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 2)
                self.ln = lib.nn.LayerNorm(2)
                self.drop = lib.nn.Dropout(0.0)

            def forward(self, x):
                h = self.drop(self.ln(self.fc(x)))
                return lib.nn.functional.gelu(h).softmax(-1)
        m = M()
        lib._dynamo.reset()
        graphs = []
        compiled = lib.compile(m, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
        x = lib.ones(4, 3)
        compiled(x).sum().backward()
        codes.append(graphs[0].code)
    assert codes[0] == codes[1]
    gt.manual_seed(0)
    m = gt.nn.Linear(3, 2)
    gt._dynamo.reset()
    c = gt.compile(m, backend="aot_eager")
    x = gt.randn(4, 3)
    c(x).pow(2).sum().backward()
    got = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    m(x).pow(2).sum().backward()
    for a, p in zip(got, m.parameters()):
        np.testing.assert_allclose(to_numpy(a), to_numpy(p.grad), rtol=1e-6)


def test_example_gpt_is_one_graph_as_torch():
    """The example GPT's forward with its loss: one graph, the same code as
    torch's (parameters named by source, the tied lm_head weight read once), and
    through aot_eager the loss and every gradient of eager."""
    codes = []
    for lib in (gt, torch):
        model, idx, targets = tiny_gpt(lib)
        lib._dynamo.reset()
        graphs = []
        lib.compile(model, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)(
            idx, targets)
        assert len(graphs) == 1
        codes.append(graphs[0].code)
    assert codes[0] == codes[1]
    model, idx, targets = tiny_gpt(gt)
    gt._dynamo.reset()
    _, loss = gt.compile(model, backend="aot_eager")(idx, targets)
    loss.backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    _, eager_loss = model(idx, targets)
    eager_loss.backward()
    assert loss.item() == pytest.approx(eager_loss.item(), rel=1e-6)
    for a, p in zip(got, model.parameters()):
        np.testing.assert_allclose(to_numpy(a), to_numpy(p.grad), rtol=1e-4, atol=1e-6)


def test_custom_op_with_a_fake_impl_is_one_graph_as_torch():
    """Seed 001's exercise 4: a torch.library custom op with a fake implementation
    goes into the graph as its OpOverload, with no break."""
    codes = []
    for lib in (gt, torch):
        @lib.library.custom_op("dynamo_test::clip_norm", mutates_args=(),
                               schema="(Tensor x, float max_norm) -> Tensor")
        def clip_norm(x, max_norm):
            return x * (max_norm / x.norm()).clamp(max=1.0)

        @clip_norm.register_fake
        def _(x, max_norm):
            return lib.empty_like(x)

        def f(x):
            return clip_norm(x * 2, 1.0) + 1
        lib._dynamo.reset()
        out = lib._dynamo.explain(f)(lib.ones(3))
        assert (out.graph_count, out.graph_break_count) == (1, 0)
        codes.append(out.graphs[0].code)
        compiled = lib.compile(f, backend="eager")(lib.ones(3))
        assert lib.allclose(compiled, f(lib.ones(3)))
    assert codes[0] == codes[1]


def test_autograd_function_inside_compiled_code():
    """A custom autograd.Function: one graph, eager's values and gradients
    (torch's graph holds it as a higher-order op; glasstorch's as a call of
    ``apply``, which keeps the backward)."""
    class MyFn(gt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()

    def f(x):
        return MyFn.apply(x * 2) + 1
    gt._dynamo.reset()
    out = gt._dynamo.explain(f)(gt.ones(3, requires_grad=True))
    assert (out.graph_count, out.graph_break_count) == (1, 0)
    for backend in ("eager", "aot_eager"):
        gt._dynamo.reset()
        x, x2 = gt.linspace(0, 1, 3).requires_grad_(), gt.linspace(0, 1, 3).requires_grad_()
        got, want = gt.compile(f, backend=backend)(x), f(x2)
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=1e-6)
        np.testing.assert_allclose(to_numpy(x.grad), to_numpy(x2.grad), rtol=1e-6)


_RECOMPILE_LOG = """
import {lib} as lib
lib._logging.set_logs(recompiles=True)
def f(x, n):
    return x * n + 1
compiled = lib.compile(f, backend="eager", dynamic=False)
compiled(lib.ones(3), 2)
compiled(lib.ones(3), 3)
compiled(lib.ones(3, dtype=lib.float64), 3)
compiled(lib.ones(4, dtype=lib.float64), 3)
compiled(lib.ones(4, dtype=lib.float64, requires_grad=True), 3)
"""


def _log_lines(tmp_path, program: str, lib: str, artifact: str) -> list:
    """The ``[__<artifact>]`` lines a program prints, run as a file of its own (so
    both libraries name the same file and line in their comments)."""
    import subprocess
    import sys
    script = tmp_path / "program.py"
    script.write_text(program.format(lib=lib))
    err = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True, cwd=tmp_path).stderr
    return [line.split(f"[__{artifact}] ", 1)[1] for line in err.splitlines()
            if f"[__{artifact}] " in line]


def test_recompile_log_names_the_failed_guards_as_torch(tmp_path):
    """TORCH_LOGS=recompiles: for each recompile, every cached entry's first failed
    guard, newest first, in PyTorch's words, with its source comment and the
    user stack that installed it."""
    # the comment's file is cut relative to each library's own folder (PyTorch's
    # shorten_filename), so it depends on where each is installed: compare names
    short = lambda lines: [re.sub(r"  # \S*?(\w+\.py):(\d+) in ", r"  # \1:\2 in ", line)
                           for line in lines]
    ours, theirs = (short(_log_lines(tmp_path, _RECOMPILE_LOG, lib, "recompiles"))
                    for lib in ("glasstorch", "torch"))
    assert ours == theirs
    assert "    - 0/1: tensor 'x' dtype mismatch. expected Float, actual Double" in ours
    assert any(line.startswith("    - 0/0: n == 2  ") and "# return x * n + 1  # " in line
               for line in ours)


_GRAPH_BREAK_LOG = """
import {lib} as lib
lib._logging.set_logs(graph_breaks=True, recompiles=True)

@lib.compiler.disable
def helper(x):
    return x + 1

def with_print(x, n):
    y = lib.sin(x) * n
    print("hi")
    return y.sum()

def with_graph_break(x):
    y = x * 2
    lib._dynamo.graph_break()
    return y + 1

def with_item(x):
    return x * x.sum().item()

def with_branch(x):
    y = x + 1
    if y.sum() > 0:
        return y
    return -y

compiled = lib.compile(with_print, backend="eager")
compiled(lib.ones(3), 2)
compiled(lib.ones(3, dtype=lib.float64), 2)
for f in (with_graph_break, with_item, with_branch):
    lib.compile(f, backend="eager")(lib.ones(3))
"""


def test_graph_break_log_as_torch(tmp_path):
    """TORCH_LOGS=graph_breaks: where, "Encountered graph break when attempting to
    trace CALL", the break's type, explanation and hints, the documentation
    link, the user's stack from the calling module down with carets, a repeated
    break's stack suppressed; frame ids counted across compiled functions;
    a resume function's recompile names the break's line.  The developer
    context names each library's own tracker classes; caret lines are left
    out (PyTorch's sometimes span one more token: ``helper(x) + 1``, ``0:``)
    and so is its lazy trackers' source attribution."""
    ours, theirs = (_log_lines(tmp_path, _GRAPH_BREAK_LOG, lib, artifact)
                    for lib in ("glasstorch", "torch") for artifact in ["graph_breaks"])
    context = lambda line: line.replace("glasstorch._dynamo.variables.", "torch._dynamo."
                                        "variables.constant.")
    drop_carets = lambda lines: [line for line in lines if set(line.strip()) != {"^"}]
    text = "\n".join(theirs)          # torch's lazy trackers' attribution: not ours
    theirs = re.sub(r"Stack variable source attribution:\n(.*\n)*?\n", "", text).split("\n")
    assert drop_carets(list(map(context, ours))) == drop_carets(theirs)
    assert ours.count("    return x * x.sum().item()") == 1
    ours, theirs = ([re.sub(r"  # \S*?(\w+\.py):(\d+) in ", r"  # \1:\2 in ", line)
                     for line in _log_lines(tmp_path, _GRAPH_BREAK_LOG, lib, "recompiles")]
                    for lib in ("glasstorch", "torch"))
    assert ours == theirs


_GUARDS_LOG = """
import {lib} as lib
lib._logging.set_logs(guards=True)

def f(x, ys, n, scale):
    return lib.sin(x) * n + ys[0] * ys[1] * scale

class Net(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = lib.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)

lib.compile(f, backend="eager")(lib.ones(4, 3), [lib.ones(3), lib.ones(3)], 2, 1.5)
lib.compile(Net(), backend="eager")(lib.ones(4, 3))
"""

# PyTorch's ambient guards (saved-tensor hooks, its global-state blob, the mode
# stack, the default device, the dynamic-marking attributes) check state
# glasstorch has no counterpart for; GLOBAL_STATE holds other fields in each.
_AMBIENT = re.compile(r"LAMBDA_GUARD: torch\._functorch|GLOBAL_STATE|TORCH_FUNCTION_MODE_STACK|"
                      r"DEFAULT_DEVICE|DIMENSION_DYNAMIC_MARKING_GUARD|"
                      r"Guard eval latency")


def test_guards_log_is_torchs_tree(tmp_path):
    """TORCH_LOGS=guards: the TREE_GUARD_MANAGER form, a GuardManager per value
    (frame locals, list items, globals, a module's ``__dict__``, ``_modules``,
    ``_parameters``) with its accessor and type, then its guards with the
    source line that needed them."""
    def normal(line):
        line = re.sub(r"\b\d{7,}\b", "ID", line)
        line = line.replace("glasstorch._tensor.Tensor", "torch.Tensor")
        line = line.replace("glasstorch.nn.", "torch.nn.").replace("glasstorch_dot_", "torch_dot_")
        line = line.replace("<class 'function'>", "<class 'builtin_function_or_method'>")
        return re.sub(r"# (.*)  # \S*/(\w+\.py):\d+ in (\w+)", r"# \2 in \3", line)
    ours, theirs = ([normal(line) for line in _log_lines(tmp_path, _GUARDS_LOG, lib, "guards")
                     if not _AMBIENT.search(line)] for lib in ("glasstorch", "torch"))
    split = lambda lines: "\n".join(lines).split("GUARDS:")[1:]
    (function, module), (their_function, their_module) = split(ours), split(theirs)
    assert function == their_function
    # the module: the same path to each parameter (PyTorch also guards its global
    # hook dicts, the module's type where glasstorch checks its identity, and the
    # type of the top module's own _parameters dict)
    managers = lambda text: [line for line in text.splitlines() if "GuardManager: source=L" in line
                             and "L['self']._parameters" not in line]
    assert managers(module) == managers(their_module)


def _seed_exercise_3(lib):
    """Seed 001's exercise 3: a branch on ``n.item()`` breaks the graph; torch.where
    and torch.cond keep it whole."""
    def with_item(x, n):
        if n.item() > 0:
            return x.sin()
        return x.cos()

    def with_where(x, n):
        return lib.where(n > 0, x.sin(), x.cos())

    def with_cond(x, n):
        return lib.cond(n > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))
    return with_item, with_where, with_cond


@pytest.mark.parametrize("version", [0, 1, 2], ids=["item", "where", "cond"])
def test_seed_exercise_3_break_and_both_fixes(version):
    results = []
    for lib in (gt, torch):
        fn = _seed_exercise_3(lib)[version]
        lib._dynamo.reset()
        out = lib._dynamo.explain(fn)(lib.ones(3), lib.tensor(2.0))
        codes = [g.code for g in out.graphs]
        codes += [getattr(g, name).code for g in out.graphs
                  for name in ("cond_true_0", "cond_false_0") if hasattr(g, name)]
        values = []
        for n in (2.0, -2.0):
            lib._dynamo.reset()
            x = lib.linspace(0, 1, 3).requires_grad_()
            y = lib.compile(fn, backend="aot_eager")(x, lib.tensor(n))
            y.sum().backward()
            values.append((to_numpy(y), to_numpy(x.grad)))
        results.append((out.graph_count, out.graph_break_count, codes, values))
    (g_count, g_breaks, g_codes, g_values), (t_count, t_breaks, t_codes, t_values) = results
    assert (g_count, g_breaks, g_codes) == (t_count, t_breaks, t_codes)
    for (gy, ggrad), (ty, tgrad) in zip(g_values, t_values):
        np.testing.assert_allclose(gy, ty, rtol=1e-6)
        np.testing.assert_allclose(ggrad, tgrad, rtol=1e-6)


def _example_models(lib):
    from examples.dual import load_example
    nn = lib.nn
    lib.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 10))
    classifier = load_example("train_classifier.py", lib.__name__)
    lib.manual_seed(0)
    mlp = classifier.make_model(hidden=32)
    lib.manual_seed(0)

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(5, 6, batch_first=True)
            self.head = nn.Linear(6, 3)

        def forward(self, x):
            return self.head(self.lstm(x)[0])
    rng = np.random.default_rng(0)

    def t(*shape):
        return lib.from_numpy(rng.standard_normal(shape).astype(np.float32))
    return {"cnn": (cnn, t(2, 1, 8, 8)), "classifier": (mlp, t(4, 1, 16, 16)),
            "lstm": (Tagger(), t(2, 4, 5))}


@pytest.mark.parametrize("name", ["cnn", "classifier", "lstm"])
def test_example_models_capture_and_train_as_torch(name):
    """The CNN (BatchNorm's buffer update in the graph), the example classifier and
    an LSTM tagger (a frame calling an LSTM runs eagerly, as torch's Dynamo leaves
    RNNs alone): explain's graphs equal torch's; a compiled training step gives
    eager's loss and gradients."""
    explained = []
    for lib in (gt, torch):
        model, x = _example_models(lib)[name]
        lib._dynamo.reset()
        out = lib._dynamo.explain(model)(x)
        explained.append((out.graph_count, out.graph_break_count, [g.code for g in out.graphs]))
    assert explained[0] == explained[1]
    model, x = _example_models(gt)[name]
    eager_model, _ = _example_models(gt)[name]
    gt._dynamo.reset()
    compiled = gt.compile(model, backend="aot_eager")
    loss = compiled(x).pow(2).mean()
    loss.backward()
    eager_loss = eager_model(x).pow(2).mean()
    eager_loss.backward()
    assert loss.item() == pytest.approx(eager_loss.item(), rel=1e-5)
    for p, q in zip(model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(to_numpy(p.grad), to_numpy(q.grad), rtol=1e-4, atol=1e-6)
    for (key, b), (_, c) in zip(model.named_buffers(), eager_model.named_buffers()):
        np.testing.assert_allclose(to_numpy(b), to_numpy(c), rtol=1e-5, err_msg=key)


def _python_312():
    """A Python 3.12 with glasstorch's dependencies, if this machine has one."""
    import glob
    import shutil
    import subprocess
    candidates = [shutil.which("python3.12"), *sorted(glob.glob(
        "/root/.pyenv/versions/3.12*/bin/python"))]
    for python in filter(None, candidates):
        probe = subprocess.run([python, "-c", "import numpy, ml_dtypes, yaml, bytecode"],
                               capture_output=True)
        if probe.returncode == 0:
            return python
    return None


def test_capture_on_python_312():
    """The same bytecode interpreter on Python 3.12's opcodes: compiled programs
    (loops, comprehensions, breaks in callees, .item(), torch.cond, no_grad,
    dynamic shapes) give glasstorch's eager results (torch is not installed for
    3.12).  .ci/run installs the dependencies into the machine's 3.12."""
    import os
    import subprocess
    python = _python_312()
    if python is None:
        pytest.skip("no Python 3.12 with numpy, ml_dtypes, PyYAML and bytecode here")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run([python, os.path.join(root, "tests", "dynamo_other_python.py")],
                            capture_output=True, text=True, cwd=root,
                            env={**os.environ, "PYTHONPATH": root})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "ok (3, 12)" in result.stdout


def _readable(lib):
    from importlib import import_module
    make_fx = import_module(lib.__name__ + ".fx.experimental.proxy_tensor").make_fx

    def f(x, w):
        return (x @ w).relu().sum(0)
    out = [make_fx(f)(lib.ones(2, 3), lib.ones(3, 4)).print_readable(print_output=False),
           make_fx(f, tracing_mode="symbolic")(lib.ones(2, 3), lib.ones(3, 4)).print_readable(
               print_output=False)]
    for fn, args, options in (
            (lambda x, n: (x * n).sum(0), (lib.ones(4, 3), 3), {"dynamic": True}),
            (lambda x, n: lib.cond(n.sum() > 0, lambda x: x.sin(), lambda x: x.cos() + 1, (x,)),
             (lib.ones(3), lib.ones(2)), {})):
        lib._dynamo.reset()
        graphs = []
        lib.compile(fn, backend=lambda gm, inputs: graphs.append(gm) or gm.forward,
                    **options)(*args)
        out.append(graphs[0].print_readable(print_output=False, include_stride=True,
                                            include_device=True))
    return out


def test_print_readable_as_torch():
    """print_readable: values annotated with dtype, shape, strides and device
    (``"f32[s77, s27][s27, 1]cpu"``, ``"Sym(s86)"``), a comment naming each group
    of nodes' source line, a cond's branches nested: character for character."""
    assert _readable(gt) == _readable(torch)


def test_module_compile_in_place_as_torch():
    """``model.compile()``: later calls of a module with its own forward run the
    compiled frame (one graph, torch's code) with eager's results; a library
    module (nn.Sequential) stays eager, as torch's frame rules leave it."""
    codes = []
    for lib in (gt, torch):
        lib.manual_seed(0)

        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU())

            def forward(self, x):
                return self.body(x) * 2
        counts = []
        for model in (Net(), lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU())):
            graphs = []
            lib._dynamo.reset()
            model.compile(backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
            x = lib.ones(2, 3)
            assert lib.allclose(model(x), model.forward(x))
            model(x)
            counts.append(len(graphs))
            codes += [g.code for g in graphs]
        assert counts == [1, 0]
    assert codes[0] == codes[1]


def test_explain_out_guards_name_constants_as_torch():
    """explain's out_guards: a Python int specialised into the graph is guarded as
    ``L['n'] == 3`` (EQUALS_MATCH), a tensor by TENSOR_MATCH, as in torch."""
    found = []
    for lib in (gt, torch):
        lib._dynamo.reset()
        out = lib._dynamo.explain(lambda x, n: x * n)(lib.ones(2), 3)
        found.append(sorted((g.name, tuple(g.code_list)) for g in out.out_guards
                            if "EQUALS_MATCH" in (g.guard_types or ())))
        assert any("TENSOR_MATCH" in (g.guard_types or ()) and g.name == "L['x']"
                   for g in out.out_guards)
    assert found[0] == found[1] == [("L['n']", ("L['n'] == 3",))]


def _stateful(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 3)
            self.steps = 0
            self.last = None

        def forward(self, x):
            self.steps += 1
            y = self.fc(x) * self.steps
            self.last = y.detach()
            print("step", self.steps)
            return y + self.last
    lib.manual_seed(0)
    return Counter()


def test_attribute_writes_replayed_as_torch(capsys):
    """``self.steps += 1`` and ``self.last = y.detach()`` in a compiled forward:
    later reads in the trace see the new values, the writes happen after the graph
    (before a break's call runs), a changed int recompiles, and the graphs' code
    equals torch's (a written module is read through its __dict__)."""
    results = []
    for lib in (gt, torch):
        model = _stateful(lib)
        lib._dynamo.reset()
        graphs = []
        compiled = lib.compile(model, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
        x = lib.ones(2, 3)
        outs = [compiled(x) for _ in range(2)]
        results.append((model.steps, [g.code for g in graphs], to_numpy(outs[1]),
                        to_numpy(model.last), capsys.readouterr().out))
    (g_steps, g_codes, g_out, g_last, g_printed), (t_steps, t_codes, t_out, t_last,
                                                    t_printed) = results
    assert (g_steps, g_codes, g_printed) == (t_steps, t_codes, t_printed)
    np.testing.assert_allclose(g_out, t_out, rtol=1e-6)
    np.testing.assert_allclose(g_last, t_last, rtol=1e-6)


def test_argument_containers_rewritten_as_torch():
    """``outs.append(y)``, ``outs[0] = ...``, ``cache[k] = ...``, ``cache.update(...)``
    on arguments: the containers end as eager leaves them, and the graph returns
    their final contents after its own outputs, as torch's does."""
    results = []
    for lib in (gt, torch):
        def f(x, outs, cache):
            y = x * 2
            outs.append(y)
            outs[0] = x + 1
            cache["k"] = y.sum()
            cache.update({"n": len(outs)})
            return y + len(outs)
        lib._dynamo.reset()
        graphs = []
        compiled = lib.compile(f, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
        outs, cache = [lib.zeros(2)], {}
        got = compiled(lib.ones(2), outs, cache)
        want_outs, want_cache = [lib.zeros(2)], {}
        want = f(lib.ones(2), want_outs, want_cache)
        assert lib.equal(got, want) and len(outs) == len(want_outs) == 2
        assert all(lib.equal(a, b) for a, b in zip(outs, want_outs))
        assert cache["n"] == want_cache["n"] and lib.equal(cache["k"], want_cache["k"])
        results.append(graphs[0].code)
    assert results[0] == results[1]


_GLOBAL_WRITE = """
counter = 0
def f(x):
    global counter
    counter += 1
    return x * counter
"""


def test_global_writes_replayed_as_torch():
    """``global counter; counter += 1``: the global is written after the graph, the
    changed value recompiles (it was specialized), and graphs equal torch's."""
    results = []
    for lib in (gt, torch):
        namespace: dict = {}
        exec(_GLOBAL_WRITE, namespace)       # each library's own module globals
        lib._dynamo.reset()
        graphs = []
        compiled = lib.compile(namespace["f"],
                               backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
        outs = [to_numpy(compiled(lib.ones(2))) for _ in range(3)]
        results.append((namespace["counter"], [o.tolist() for o in outs],
                        [g.code for g in graphs]))
    assert results[0] == results[1]
    assert results[0][0] == 3


_BAD_CALLS = {
    "unknown mode": lambda lib: lib.compile(lambda x: x, mode="bogus"),
    "unknown backend": lambda lib: lib.compile(lambda x: x, backend="nope"),
    "cond on a 2-element pred": lambda lib: lib.cond(lib.ones(2) > 0, lambda x: x,
                                                     lambda x: x, (lib.ones(2),)),
    "cond on a string pred": lambda lib: lib.cond("yes", lambda x: x, lambda x: x,
                                                  (lib.ones(2),)),
    "cond on an int pred": lambda lib: lib.cond(1, lambda x: x + 1, lambda x: x,
                                                (lib.ones(2),)).tolist(),
}


@pytest.mark.parametrize("case", list(_BAD_CALLS))
def test_bad_arguments_raise_as_torch(case):
    """Bad arguments to torch.compile and torch.cond: torch's exception type and
    message (or torch's result where torch accepts them)."""
    def outcome(lib):
        try:
            return ("returned", _BAD_CALLS[case](lib))
        except Exception as e:
            return (type(e).__name__, str(e).splitlines()[0])
    assert outcome(gt) == outcome(torch)


def test_one_tensor_passed_twice_is_guarded_as_torch():
    """A tensor passed as two arguments is one graph input: the frame is reused
    only while they stay one tensor (DUPLICATE_INPUT), and distinct inputs only
    while they stay distinct (NO_TENSOR_ALIASING); values and graph counts as
    torch's."""
    results = []
    for lib in (gt, torch):
        lib._dynamo.reset()
        lib._dynamo.utils.counters.clear()

        def f(x, y):
            return x + y * 2
        compiled = lib.compile(f, backend="eager")
        a, b = lib.ones(3), lib.full((3,), 5.0)
        values = [compiled(a, a), compiled(a, b), compiled(b, b), compiled(b, a)]
        results.append(([to_numpy(v).tolist() for v in values],
                        lib._dynamo.utils.counters["stats"]["unique_graphs"]))
    assert results[0] == results[1]
    assert results[0][0][1] == [11.0] * 3


def _cond_program(lib):
    def f(pred, x, w):
        return lib.cond(pred, lambda x, w: (x.sin() * w,), lambda x, w: (x.cos() + w,),
                        (x, w))[0]
    return f


def test_aot_autograd_traces_through_cond_as_torch():
    """aot_eager on a graph holding torch.cond: the forward graph calls
    ``cond`` over subgraphs true_graph_0/false_graph_0, the backward a ``cond``
    over each branch's backward (true_graph_1/false_graph_1); every graph's
    code equals torch's, and values and gradients equal eager's for both
    branches."""
    seen = []
    for lib in (gt, torch):
        aot = importlib.import_module(lib.__name__ + "._functorch.aot_autograd")
        codes = []

        def keep(gm, _):
            codes.append([gm.code] + [getattr(gm, name).code for name in
                                      sorted(n.target for n in gm.graph.nodes
                                             if n.op == "get_attr")])
            return gm

        def backend(gm, inputs):
            return aot.aot_module_simplified(gm, inputs, keep, keep)
        lib._dynamo.reset()
        compiled = lib.compile(_cond_program(lib), backend=backend)
        runs = []
        for flag in (True, False):
            x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
            w = lib.tensor([1.5, -1.0, 0.25], requires_grad=True)
            out = compiled(lib.tensor(flag), x, w)
            out.sum().backward()
            runs.append([to_numpy(t).tolist() for t in (out, x.grad, w.grad)])
        seen.append((codes, runs))
    (our_codes, our_runs), (their_codes, their_runs) = seen
    assert our_codes == their_codes
    np.testing.assert_allclose(np.array(our_runs, dtype=object).tolist(), their_runs, rtol=1e-6)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_cond_gradients_as_eager(backend):
    """The compiled cond's gradients, through the autograd node (eager backend)
    or the AOT graphs, equal an eager ``if``'s for either branch."""
    for flag in (True, False):
        gt._dynamo.reset()
        grads = []
        for fn in (gt.compile(_cond_program(gt), backend=backend), _cond_program(gt)):
            x = gt.tensor([0.5, 1.0, 2.0], requires_grad=True)
            w = gt.tensor([1.5, -1.0, 0.25], requires_grad=True)
            (fn(gt.tensor(flag), x, w) ** 2).sum().backward()
            grads.append([to_numpy(x.grad), to_numpy(w.grad)])
        np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-6)
        np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-6)


_GLOBAL_STATE_LOG = """
import {lib} as lib
lib._logging.set_logs(recompiles=True)
def f(x, w):
    return x @ w
compiled = lib.compile(f, backend="eager")
x, w = lib.randn(2, 3), lib.randn(3, 2)
dtypes = [compiled(x, w).dtype]
with lib.no_grad():
    dtypes.append(compiled(x, w).dtype)
with lib.autocast("cpu", dtype=lib.bfloat16):
    dtypes.append(compiled(x, w).dtype)
with lib.autocast("cpu", dtype=lib.float16):
    dtypes.append(compiled(x, w).dtype)
print([str(d) for d in dtypes], lib._dynamo.utils.counters["stats"]["unique_graphs"])
"""


def test_grad_mode_and_autocast_are_guarded_as_torch(tmp_path):
    """A graph traced without autocast (or with grad on) is not reused inside
    ``torch.autocast`` (or ``no_grad``): GLOBAL_STATE recompiles, with torch's
    reasons, and the results' dtypes are eager's."""
    import subprocess
    import sys
    outs = []
    for lib in ("glasstorch", "torch"):
        script = tmp_path / "program.py"
        script.write_text(_GLOBAL_STATE_LOG.format(lib=lib))
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             check=True)
        outs.append((run.stdout.strip().splitlines()[-1],
                     [line.split("[__recompiles] ", 1)[1] for line in run.stderr.splitlines()
                      if "[__recompiles] " in line]))
    assert outs[0] == outs[1]
    assert "    - 0/0: GLOBAL_STATE changed: autocast(cpu)_enabled " in outs[0][1]


_OUTPUT_CODE_LOG = """
import {lib} as lib
lib._logging.set_logs(output_code=True)
f = lib.compile(lambda x: (x.sin() * 2).sum())
x = lib.ones(3, requires_grad=True)
f(x).backward()
"""


def test_output_code_log_shows_the_code_that_runs(tmp_path):
    """TORCH_LOGS=output_code under the default backend: the forward and backward
    code that runs, each under its AOT id as torch prints it: Inductor's
    wrapper (``def call(args)``) and the C of its kernels."""
    for lib in ("glasstorch", "torch"):
        text = "\n".join(_log_lines(tmp_path, _OUTPUT_CODE_LOG, lib, "output_code"))
        assert "# AOT ID: ['0_forward']" in text and "# AOT ID: ['0_backward']" in text
        assert "def call(" in text and "cpp_fused_" in text


def _ema(lib):
    class Ema(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("avg", lib.zeros(3))
            self.fc = lib.nn.Linear(3, 3)

        def forward(self, x):
            self.avg = self.avg * 0.9 + x.mean(0) * 0.1
            return self.fc(x) - self.avg
    lib.manual_seed(0)
    return Ema()


def test_buffer_replaced_in_forward_as_torch():
    """``self.avg = 0.9 * self.avg + ...`` on a registered buffer: one graph (no
    break, the frame not left eager) returning the new buffer after the
    output, as torch's; after each call the buffer is the new tensor, still a
    buffer, with eager's values."""
    codes, results = [], []
    for lib in (gt, torch):
        lib._dynamo.reset()
        module, eager = _ema(lib), _ema(lib)
        graphs = []
        compiled = lib.compile(module, backend=lambda gm, inputs: graphs.append(gm.code)
                               or gm.forward)
        outs = []
        for step in range(3):
            x = lib.arange(6.0).reshape(2, 3) + step
            outs.append((to_numpy(compiled(x).detach()), to_numpy(eager(x).detach())))
        codes.append(graphs)
        results.append([to_numpy(module.avg), "avg" in module._buffers])
        for got, want in outs:
            np.testing.assert_allclose(got, want, rtol=1e-6)
        np.testing.assert_allclose(to_numpy(module.avg), to_numpy(eager.avg), rtol=1e-6)
    assert codes[0] == codes[1] and len(codes[0]) == 1
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    assert results[0][1] and results[1][1]


def test_is_compiling_and_the_dynamic_shape_switches_as_torch():
    """``torch.compiler.is_compiling()`` folds to True in traced code (one graph,
    the compiled branch taken) and is False eagerly; ``mark_static``,
    ``maybe_mark_dynamic`` and ``config.automatic_dynamic_shapes`` /
    ``assume_static_by_default`` give torch's recompile counts and graphs."""
    def run(lib):
        out = {}

        def f(x):
            if lib.compiler.is_compiling():
                return x * 2
            return x * 3
        lib._dynamo.reset()
        graphs = []
        backend = (lambda gm, inputs: graphs.append(gm.code) or gm.forward)
        out["is_compiling"] = (to_numpy(lib.compile(f, backend=backend)(lib.ones(2))).tolist(),
                               lib.compiler.is_compiling(), lib._dynamo.is_compiling(), len(graphs))

        def g(x):
            return x.sum(0) * 2
        for name, setup in (("mark_static", lambda t: lib._dynamo.mark_static(t, 0)),
                            ("maybe_mark_dynamic", lambda t: lib._dynamo.maybe_mark_dynamic(t, 0)),
                            ("no_automatic", None), ("not_static_by_default", None)):
            lib._dynamo.reset()
            graphs.clear()
            config = lib._dynamo.config
            saved = config.automatic_dynamic_shapes, config.assume_static_by_default
            config.automatic_dynamic_shapes = name != "no_automatic"
            config.assume_static_by_default = name != "not_static_by_default"
            try:
                compiled = lib.compile(g, backend=backend)
                for n in (3, 4, 5):
                    x = lib.ones(n, 2)
                    if setup is not None:
                        setup(x)
                    compiled(x)
            finally:
                config.automatic_dynamic_shapes, config.assume_static_by_default = saved
            out[name] = list(graphs)
        return out
    assert run(gt) == run(torch)


_FAILING_BACKEND = """
import {lib} as lib
def bad(gm, inputs):
    raise ValueError("nope")
try:
    lib.compile(lambda x: x + 1, backend=bad)(lib.ones(2))
except Exception as e:
    print(type(e).__name__)
    print(str(e).split("\\n\\n")[0])
lib._dynamo.config.suppress_errors = True
print(lib.compile(lambda x: x * 2, backend=bad)(lib.ones(2)).tolist())
"""


def test_a_failing_backend_raises_torchs_error_or_runs_eagerly(tmp_path):
    """A backend that raises: torch's BackendCompilerFailed naming it; with
    ``config.suppress_errors`` the frame runs eagerly instead.  Each library in
    its own process (a failed torch.compile changes torch's autograd profiling
    for the rest of the process)."""
    import subprocess
    import sys
    outs = []
    for lib in ("glasstorch", "torch"):
        script = tmp_path / "program.py"
        script.write_text(_FAILING_BACKEND.format(lib=lib))
        outs.append(subprocess.run([sys.executable, str(script)], capture_output=True,
                                   text=True, check=True).stdout)
    assert outs[0] == outs[1]
    assert outs[0].startswith("BackendCompilerFailed\nbackend='bad' raised:\nValueError: nope")

_AOT_GRAPHS_LOG = """
import {lib} as lib
lib._logging.set_logs(aot_graphs=True)
f = lib.compile(lambda x: (x.sin() * 2).sum(), backend="aot_eager")
x = lib.ones(3, requires_grad=True)
f(x).backward()
"""


def test_aot_graphs_log_as_torch(tmp_path):
    """TORCH_LOGS=aot_graphs: the forward and backward graphs, numbered, with
    dtypes, sizes, strides and devices, the forward's nodes under the source
    lines of the captured graph's nodes, as torch prints them (torch's line
    naming the module file it generated the class in, its metadata dump, and
    the backward's source comments, which torch copies from the forward node
    each gradient belongs to, aside)."""
    def lines(lib):
        out = _log_lines(tmp_path, _AOT_GRAPHS_LOG, lib, "aot_graphs")
        backward = out.index(" ===== Backward graph 0 =====")
        return [re.sub(r"^ \S+ class ", "class ", line) for i, line in enumerate(out)
                if line.strip() and not line.startswith("aot_config id") and
                not (i > backward and line.strip().startswith("#"))]
    ours, theirs = lines("glasstorch"), lines("torch")
    assert ours == theirs
    assert " ===== Backward graph 0 =====" in ours


def _python_programs(lib):
    """Everyday Python in compiled code: each was a crash, a wrong result or an
    eager frame before (found by trying programs as a user writes them)."""
    nn = lib.nn

    class Base(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, t):
            return self.lin(t)

    class Child(Base):
        def forward(self, t):
            return super().forward(t).relu()

    def item_update(t):               # y[0] += 1: an in-place add and an item write
        y = t.clone()
        y[0] += 1
        y.mul_(2)
        return y

    @lib.no_grad()
    def decorated(t):
        return t * 2

    def comprehension(t):
        return lib.stack([t[i] * i for i in range(t.shape[0])])

    def attributes(t):
        return t.T @ t, t.mT.shape, t.ndim, t.is_contiguous()

    def sort_fields(t):
        return sorted([3, 1, 2]), t.sort(dim=1).values

    def with_autocast(a, b):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            return a @ b
    lib.manual_seed(0)
    x = lib.arange(12.0).reshape(3, 4)
    return {"super_forward": (Child(), (x,)), "item_update": (item_update, (x,)),
            "no_grad_decorator": (decorated, (x,)), "comprehension": (comprehension, (x,)),
            "tensor_attributes": (attributes, (x,)), "sort_fields": (sort_fields, (x,)),
            "autocast_block": (with_autocast, (x, x.T))}


@pytest.mark.parametrize("name", ["super_forward", "item_update", "no_grad_decorator",
                                  "comprehension", "tensor_attributes", "sort_fields",
                                  "autocast_block"])
def test_everyday_python_as_torch(name):
    """Zero-argument ``super()``, ``y[0] += 1``, a ``@torch.no_grad()`` function,
    a list comprehension over a tensor, ``t.T``, ``x.sort().values``, and a
    ``with torch.autocast(...)`` block: one graph as torch's, with eager's values."""
    seen = []
    for lib in (gt, torch):
        fn, args = _python_programs(lib)[name]
        lib._dynamo.reset()
        out = lib._dynamo.explain(fn)(*args)
        lib._dynamo.reset()
        compiled = lib.compile(fn, backend="eager")(*args)
        eager = fn(*args)
        flat = lambda v: lib.utils._pytree.tree_leaves(v)
        for got, want in zip(flat(compiled), flat(eager)):
            if isinstance(got, lib.Tensor):
                assert got.dtype == want.dtype
                np.testing.assert_allclose(to_numpy(got.detach().float()),
                                           to_numpy(want.detach().float()), rtol=1e-6)
            else:
                assert got == want
        seen.append((out.graph_count, out.graph_break_count, [g.code for g in out.graphs]))
    ours, theirs = seen
    assert ours[:2] == theirs[:2] == (1, 0)
    if name != "tensor_attributes":     # torch keeps the unused `l_t_.mT` node; DCE drops it
        assert ours[2] == theirs[2]


def test_generators_run_to_their_end_as_torch():
    """A generator expression (and a generator function) in compiled code runs to
    its end while tracing; ``sum`` over tensors is one addition per item, each
    named ``value``: torch's graph, eager's values."""
    seen = []
    for lib in (gt, torch):
        def f(t):
            total = sum(v * 2 for v in [t, t + 1])
            return total, sum([t, t], start=t), tuple(y.relu() for y in (t, -t))
        lib._dynamo.reset()
        out = lib._dynamo.explain(f)(lib.arange(3.0))
        lib._dynamo.reset()
        got, want = lib.compile(f, backend="eager")(lib.arange(3.0)), f(lib.arange(3.0))
        for a, b in zip(lib.utils._pytree.tree_leaves(got), lib.utils._pytree.tree_leaves(want)):
            np.testing.assert_allclose(to_numpy(a), to_numpy(b))
        seen.append((out.graph_count, out.graph_break_count, [g.code for g in out.graphs]))
    assert seen[0] == seen[1]
    assert seen[0][:2] == (1, 0)


def test_compiled_module_frames_named_as_torch():
    """torch.compile(module) and explain(module) compile a user module's own
    ``forward`` (inputs ``L['self']``...) but a library module's (nn.Sequential)
    through a call of it (``L['fn']``, ``L['args']``), as torch does."""
    codes = []
    for lib in (gt, torch):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

            def forward(self, t):
                return self.lin(t).relu()
        lib.manual_seed(0)
        found = []
        for module in (Net(), nn.Sequential(nn.Linear(3, 3), nn.ReLU())):
            lib._dynamo.reset()
            found.append(lib._dynamo.explain(module)(lib.ones(2, 3)).graphs[0].code)
            lib._dynamo.reset()
            graphs = []
            lib.compile(module, backend=lambda gm, inputs: graphs.append(gm.code)
                        or gm.forward)(lib.ones(2, 3))
            found += graphs
        codes.append(found)
    assert codes[0] == codes[1]
    assert "L_self_modules_lin" in codes[0][0] and "L_fn_modules_0" in codes[0][2]


def _masked_by_length(lib):
    class Masked(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mask", lib.ones(8, 8).tril())

        def forward(self, x):
            T = x.shape[1]
            return x.masked_fill(self.mask[:T, :T] == 0, 0.0)
    return Masked()


def test_symbolic_slices_of_a_buffer_recompile_as_torch():
    """Windows of changing length, sliced from one tensor (strides no size
    explains), masked by a buffer sliced to the length: automatic dynamic
    makes the length and the strides symbolic, the buffer keeps its size, the
    slice bound stays symbolic, and the whole mask (length 8, contiguous)
    recompiles on the contiguity guard: as many graphs as torch, same values."""
    counts = []
    for lib in (gt, torch):
        lib._dynamo.reset()
        graphs = []
        module = _masked_by_length(lib)
        compiled = lib.compile(module, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)
        base = lib.arange(2 * 9 * 9.0).reshape(2, 9, 9)
        for t in (3, 5, 6, 8, 7):
            x = base[:, :t, :t]
            assert lib.equal(compiled(x), module(x))
        counts.append(len(graphs))
    assert counts[0] == counts[1]
