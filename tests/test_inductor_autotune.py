"""``mode="max-autotune"`` (``glasstorch/_inductor/autotune.py``): kernel
variants and generated matmuls timed per shape, the fastest kept.

Results under max-autotune equal the default mode's and torch's (the
oracle); the report names the variants timed and the one kept; a second
compile reuses the choices on disk without timing (the timer is patched and
its calls counted); generated matmuls stay within twice the in-order error
bound of ATen's ``mm``; the budget stops timing.  Nothing here asserts speed.
"""
import logging
import time

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch._inductor import autotune, codecache, config, debug
from glasstorch._inductor.codegen import wrapper_c
from glasstorch._inductor.ir import Layout

from .helpers import to_numpy

pytestmark = pytest.mark.skipif(not codecache.available(), reason="no C compiler")


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Each test starts without cached code or choices."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def timed(monkeypatch):
    """The calls ``autotune.benchmark`` gets, counted (times still measured)."""
    calls = []
    real = autotune.benchmark

    def counting(runs, reset=None, deadline=float("inf")):
        calls.append(runs)
        return real(runs, reset, deadline)
    monkeypatch.setattr(autotune, "benchmark", counting)
    return calls


def _values(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _pointwise(lib, x):
    return (lib.sin(x) * 2 + lib.cos(x)).relu().exp()


def _softmax(lib, x):
    return lib.softmax(x, -1)


def _layer_norm(lib, x, w, b):
    return lib.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


CASES = {"pointwise": (_pointwise, [(1 << 16,)]),
         "softmax": (_softmax, [(256, 512)]),
         "layer_norm": (_layer_norm, [(256, 512), (512,), (512,)])}


@pytest.mark.parametrize("name", sorted(CASES))
def test_max_autotune_equals_default_and_torch(name, timed):
    """The kept variants compute what the default kernels compute (bitwise for
    the pointwise chain; reductions may take another vector width, so their
    sums within float rounding) and what torch computes."""
    fn, shapes = CASES[name]
    arrays = [_values(*shape, seed=i) for i, shape in enumerate(shapes)]
    args = [gt.from_numpy(a) for a in arrays]
    tuned = gt.compile(lambda *a: fn(gt, *a), mode="max-autotune")(*args)
    default = gt.compile(lambda *a: fn(gt, *a))(*args)
    expected = fn(torch, *[torch.from_numpy(a) for a in arrays]).numpy()
    assert timed, "max-autotune timed nothing"
    if name == "pointwise":
        np.testing.assert_array_equal(to_numpy(tuned), to_numpy(default))
    np.testing.assert_allclose(to_numpy(tuned), to_numpy(default), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(to_numpy(tuned), expected, rtol=2e-5, atol=2e-6)


def _mlp_losses(lib, mode, steps=3):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    with lib.no_grad():        # the same weights in both libraries
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.from_numpy(_values(*p.shape, seed=10 + i) * 0.1))
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-2)
    x = lib.from_numpy(_values(16, 32, seed=1))
    y = lib.from_numpy(np.arange(16) % 10)
    forward = lib.compile(model, mode=mode) if lib is gt else model
    opt_step = lib.compile(optimizer.step, mode=mode) if lib is gt else optimizer.step
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(forward(x), y)
        loss.backward()
        opt_step()
        losses.append(float(loss.detach()))
    return losses, [to_numpy(p.detach()) for p in model.parameters()]


def test_mlp_training_step(timed):
    """An MLP's forward, backward and Adam step under max-autotune: the losses
    and weights of default mode and of torch."""
    tuned_losses, tuned_weights = _mlp_losses(gt, "max-autotune")
    default_losses, default_weights = _mlp_losses(gt, None)
    torch_losses, torch_weights = _mlp_losses(torch, None)
    assert timed
    np.testing.assert_allclose(tuned_losses, default_losses, rtol=1e-5)
    np.testing.assert_allclose(tuned_losses, torch_losses, rtol=1e-5)
    for tuned, default, expected in zip(tuned_weights, default_weights, torch_weights):
        np.testing.assert_allclose(tuned, default, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(tuned, expected, rtol=1e-4, atol=1e-5)


# -- the report --------------------------------------------------------------------------


def _report(fn, *args):
    stages = debug.stages(fn, *args, mode="max-autotune")
    return stages, stages.graphs["inference"][1].autotune_report


def test_report_lists_the_variants_and_the_choice():
    """The pointwise chain's chunked loop: chunk sizes below its length, the
    other side of the parallel threshold (with several threads), 256-bit
    vectors where the flags prefer 512; each variant's C differs; one is
    kept (``*``), and ``debug.stages`` prints the table."""
    x = gt.from_numpy(_values(1 << 16))
    stages, report = _report(lambda x: _pointwise(gt, x), x)
    (tuning,) = report.tunings
    labels = [label for label, _, _ in tuning.timings]
    assert labels[0] == "default" and tuning.chosen in labels
    assert {"chunk 1024", "chunk 16384"} <= set(labels) and "chunk 65536" not in labels
    if gt.get_num_threads() > 1:
        assert "serial" in labels
    if "-mprefer-vector-width=512" in codecache.flags():
        assert "256-bit vectors" in labels
    assert all(check in ("reference", "bitwise") for _, _, check in tuning.timings)
    text = str(stages)
    assert "== 5. autotuning (inference)" in text
    assert f"* {tuning.chosen}" in text and tuning.name in text


def test_variants_differ_in_their_c():
    """``kernel_variants``: the default first, no two with the same C; a
    column reduction gets column blocks, not chunk sizes."""
    x = gt.from_numpy(_values(64, 512))
    stages = debug.stages(lambda x: x.sum(0), x)
    compiled = stages.graphs["inference"][1]
    (kernel,) = [s for s in compiled.scheduler.steps if hasattr(s, "sections")]
    variants = autotune.kernel_variants(kernel, compiled.graph, compiled.code.removed)
    assert variants[0].label == "default" and variants[0].source in compiled.code.c_source
    assert len({v.source for v in variants}) == len(variants) > 1
    labels = [v.label for v in variants]
    assert any("column block 128" in label for label in labels)
    assert not any("chunk" in label for label in labels)


def test_autotuning_log(timed):
    """TORCH_LOGS=autotuning logs each graph's report under its compile id."""
    lines = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())
    handler = Keep()
    logging.getLogger("torch._logging").addHandler(handler)
    gt._logging.set_logs(autotuning=True)
    try:
        gt.compile(lambda x: _softmax(gt, x), mode="max-autotune")(
            gt.from_numpy(_values(64, 256)))
    finally:
        gt._logging.set_logs(autotuning=False)
        logging.getLogger("torch._logging").removeHandler(handler)
    text = "\n".join(lines)
    assert "[__autotuning] autotuning" in text and "cpp_fused_softmax" in text


def test_default_mode_times_nothing(timed):
    x = gt.from_numpy(_values(64, 256))
    stages = debug.stages(lambda x: _softmax(gt, x), x)
    assert stages.graphs["inference"][1].autotune_report is None
    assert "5. autotuning" not in str(stages)
    assert not timed


# -- the cache and the budget ------------------------------------------------------------------


def test_second_compile_reuses_the_choices(timed):
    """The choices are on disk: compiling again (as another process would:
    nothing is kept in memory) times nothing and keeps the same variants."""
    x, w = gt.from_numpy(_values(64, 512)), gt.from_numpy(_values(512, 8, seed=1))

    def fn(x, w):
        return _softmax(gt, x).sum(0) @ w
    _, first = _report(fn, x, w)
    assert timed and not any(t.cached for t in first.tunings)
    count = len(timed)
    stages, second = _report(fn, x, w)
    assert len(timed) == count
    timed_before = [t for t in first.tunings if t.timings]
    assert timed_before and all(t.cached for t in second.tunings if t.timings)
    assert [(t.name, t.chosen) for t in first.tunings] == \
        [(t.name, t.chosen) for t in second.tunings]
    assert "cached, timed by an earlier process" in str(stages)


def test_budget_stops_timing(timed, monkeypatch):
    """No budget: nothing is compiled or timed, every kernel keeps its
    default and says why.  A small budget: timing stops once it is spent."""
    x = gt.from_numpy(_values(64, 512))
    with config.patch(autotune_budget=0.0):
        _, report = _report(lambda x: _softmax(gt, x).sum(0), x)
    assert not timed
    assert all("budget" in t.note for t in report.tunings)

    def slow(runs, reset=None, deadline=float("inf")):
        timed.append(runs)
        time.sleep(0.15)        # longer than the budget
        return [1.0] * len(runs)
    monkeypatch.setattr(autotune, "benchmark", slow)
    with config.patch(autotune_budget=0.12):
        _, report = _report(lambda x: _layer_norm(gt, x, None, None).exp().sum(0), x)
    # the budget is checked before each compile and timing round: one kernel runs past it
    assert len(timed) == 1
    assert sum("budget" in t.note for t in report.tunings) == len(report.tunings) - 1


def test_benchmark_rounds_stop_at_the_deadline():
    """Two warm-up calls per candidate, then rounds of every candidate in
    turn; past the deadline only the first round runs."""
    counts = [0, 0]

    def candidate(i):
        def run():
            counts[i] += 1
            time.sleep(autotune.ROUND_SECONDS * 1.5)    # one call fills a round
        return run
    autotune.benchmark([candidate(0), candidate(1)], deadline=0.0)
    assert counts == [3, 3]
    autotune.benchmark([candidate(0)])
    assert counts[0] == 3 + 2 + autotune.ROUNDS


# -- generated matmuls ----------------------------------------------------------------------------


def _layout(size, transposed):
    """A float32 layout of ``size``, its last two dims transposed in memory if asked."""
    if not transposed:
        return Layout(gt.float32, size)
    *batch, m, n = size
    stride = [m * n] * len(batch) + [1, m]
    return Layout(gt.float32, size, stride)


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 3), m=st.integers(1, 40), k=st.integers(1, 70), n=st.integers(1, 90),
       a_t=st.booleans(), b_t=st.booleans(), form=st.sampled_from(["axpy", "dot"]),
       parallel=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_generated_matmul_matches_aten(batch, m, k, n, a_t, b_t, form, parallel, seed):
    """A generated matmul (either form, any operand layout, batched or not)
    against ATen's mm / bmm and torch's: within ``matmul_tolerance``, twice
    the error bound of an in-order float32 product."""
    batched = batch > 1
    lead = (batch,) if batched else ()
    a, b = _layout(lead + (m, k), a_t), _layout(lead + (k, n), b_t)
    out = Layout(gt.float32, lead + (m, n))
    source = autotune.matmul_source("gen", (batch, m, k, n, a, b, out), form, parallel)
    fn = autotune._function(codecache.load(autotune.PRELUDE + source), "gen", 3)
    rng = np.random.default_rng(seed)
    operands = []
    for layout in (a, b):
        memory = rng.uniform(-1, 1, autotune._extent(layout)).astype(np.float32)
        operands.append(gt.from_numpy(memory).as_strided(layout.size, layout.stride))
    got = to_numpy(autotune.GeneratedMatmul("gen", fn, out)(*operands)).astype(np.float64)
    aten = (gt.ops.aten.bmm.default if batched else gt.ops.aten.mm.default)(*operands)
    oracle = torch.matmul(*[torch.from_numpy(to_numpy(t).copy()) for t in operands])
    bound = autotune.matmul_tolerance(to_numpy(operands[0]), to_numpy(operands[1]), gt.float32)
    assert (np.abs(got - to_numpy(aten)) <= bound).all()
    assert (np.abs(got - oracle.numpy()) <= bound).all()


def test_generated_matmul_in_a_compiled_graph(monkeypatch):
    """When a generated matmul times faster (here: the timer says so), the
    Python wrapper calls it in place of ``aten.mm``; the graph's result stays
    within the bound of torch's.  With the C wrapper, which calls BLAS for
    the product, it is not timed."""
    monkeypatch.setattr(autotune, "benchmark",      # each candidate twice as fast as the last
                        lambda runs, reset=None, deadline=None: [0.5 ** i for i in
                                                                 range(len(runs))])
    xa, wa = _values(16, 24), _values(24, 12, seed=1)
    x, w = gt.from_numpy(xa), gt.from_numpy(wa)
    if wrapper_c.find_blas() is not None:
        _, report = _report(lambda x, w: (x @ w).relu(), x, w)
        assert report.tunings[0].note.startswith("not timed: the C wrapper calls BLAS")
    with config.patch(c_wrapper=False):
        stages, report = _report(lambda x, w: (x @ w).relu(), x, w)
    matmul = report.tunings[0]
    assert matmul.chosen.startswith("generated")
    assert [c for _, _, c in matmul.timings] == ["reference"] + \
        ["within bound"] * (len(matmul.timings) - 1)
    assert "extern_cpp_mm_0_" in stages.graphs["inference"][1].code.python_source
    got = stages.graphs["inference"][1]([x, w])[0]
    expected = (torch.from_numpy(xa) @ torch.from_numpy(wa)).relu().numpy()
    bound = autotune.matmul_tolerance(xa, wa, gt.float32)
    assert (np.abs(to_numpy(got) - expected) <= bound).all()
