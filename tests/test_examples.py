"""The examples and the demo run end to end and print what they promise.

Both run as subprocesses in their quick modes, started together (one per
core) by a module fixture; each test then reads its own output.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
COMMANDS = {
    "classifier": [sys.executable, str(ROOT / "examples" / "train_classifier.py"), "--quick"],
    "demo": [sys.executable, "-m", "glasstorch", "demo", "--quick"],
}


@pytest.fixture(scope="module")
def runs():
    """{name: CompletedProcess-like (returncode, stdout, stderr)} for COMMANDS."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path,
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    procs = {name: subprocess.Popen(cmd, cwd=ROOT, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for name, cmd in COMMANDS.items()}
    results = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=300)   # bytes: keep the progress bar's \r
        results[name] = subprocess.CompletedProcess(COMMANDS[name], proc.returncode,
                                                    stdout.decode(), stderr.decode())
    return results


def test_classifier_reaches_its_stated_accuracy(runs):
    run = runs["classifier"]
    assert run.returncode == 0, run.stderr + run.stdout
    assert run.stdout.startswith("glasstorch: MLP")
    epochs = re.findall(r"epoch (\d): train loss ([\d.]+), held-out accuracy ([\d.]+)%", run.stdout)
    assert [int(e) for e, _, _ in epochs] == [1, 2]
    assert float(epochs[1][1]) < float(epochs[0][1])            # the training loss fell
    final = re.search(r"held-out accuracy ([\d.]+)% after 2 epochs: target 90% reached", run.stdout)
    assert final and float(final[1]) >= 90.0, run.stdout


def test_demo_trains_samples_and_shows_the_runtime(runs):
    run = runs["demo"]
    assert run.returncode == 0, run.stderr + run.stdout
    out = run.stdout
    # training: a \r-updated progress bar, periodic losses, a falling loss, a sample
    assert "\r[" in out and "step   20/20" in out
    assert re.findall(r"step +(\d+): train loss [\d.]+, val loss [\d.]+", out) == ["1", "10", "20"]
    first, last = map(float, re.search(r"trained 20 steps in [\d.]+ s; first loss ([\d.]+), "
                                       r"last loss ([\d.]+)", out).groups())
    assert 3.9 < first < 4.3 and last < first - 0.5
    sample = out.split("sample:\n", 1)[1].split("\n== ", 1)[0]
    assert len(sample.strip()) > 30
    # one watched step: kernels per dispatch key in each phase
    table = out.split("kernels run per dispatch key", 1)[1].split("\n== ", 1)[0]
    rows = {line.split()[0]: line.split()[1:4] for line in table.splitlines()
            if line.startswith("  ") and line.split()[0] in ("AutogradCPU", "CPU", "total")}
    assert set(rows) == {"AutogradCPU", "CPU", "total"}
    assert all(int(n) > 0 for n in rows["CPU"] + rows["AutogradCPU"])
    # the autograd graph and the allocator's books
    nodes = re.search(r"(\d+) nodes reachable from loss.grad_fn \((\w+) at the root\)", out)
    assert nodes and int(nodes[1]) > 50 and nodes[2] == "NllLossBackward0"
    assert re.search(r"AccumulateGrad +28\b", out)      # one per parameter, the tied weight once
    assert re.search(r"peak during the step: +[\d.]+ MB", out)
    # the extension points: profiler rows, a dispatch mode's log, FakeTensor, autocast, SVG
    assert "Optimizer.step#AdamW.step" in out and "Self CPU time total:" in out
    assert "aten.t.default -> aten.addmm.default -> aten.gelu.default" in out
    assert "logits: FakeTensor of shape (4096, 32, 60)" in out
    assert "logits torch.bfloat16, loss torch.float32" in out
    svg = re.search(r"SVG written to (\S+)", out)[1]
    assert open(svg).read().startswith("<?xml")
    # linalg's steps: syevd's own, the slow one in lapack.c (LAPACK's driver without a compiler)
    assert re.search(r"took syevd's own steps: (LAPACK sytrd -> LAPACK stedc -> lapack\.c "
                     r"apply_q|LAPACK syevd)\n", out)
    # the walkthrough underneath
    assert "[call] op=[aten::add.Tensor], key=[AutogradCPU]" in out
    assert "demo finished in" in out


def test_op_counter_counts_each_key_a_call_passes():
    """The demo's OpCounter: one entry per kernel run, under the key that ran it."""
    import glasstorch as gt
    from glasstorch._dispatcher.dispatcher import _observers
    from glasstorch._dispatcher.op_counter import OpCounter

    a, b = gt.ones(2, 2), gt.ones(2, 2, requires_grad=True)
    with OpCounter() as counts:
        a + a                                   # no input requires grad: autograd, then CPU
        (a * b).sum()
    assert counts not in _observers              # removed on exit
    assert counts.by_op_key["aten::add.Tensor", "AutogradCPU"] == 1
    assert counts.by_op_key["aten::add.Tensor", "CPU"] == 1
    assert counts.by_op_key["aten::mul.Tensor", "AutogradCPU"] == 1
    # CPU: add, mul, sum, and the as_strided and fill_ ATen's sum kernel dispatches
    assert counts.by_key["AutogradCPU"] == 3 and counts.by_key["CPU"] == 5
    assert counts.by_op_key["aten::fill_.Scalar", "CPU"] == 1
    assert counts.total == sum(counts.by_op.values()) == 8
    assert counts.report().startswith("8 kernel entries")
