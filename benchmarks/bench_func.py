"""Function transforms: per-sample gradients with vmap(grad), side by side with torch.

    python -m benchmarks.bench_func                # both libraries at their default threads
    python -m benchmarks.bench_func --threads 1    # set_num_threads(1) in both
    python -m benchmarks.bench_func --repeats 9    # more alternating rounds

The case (issue 15): the gradient of each example's cross-entropy loss with
respect to every parameter of an MLP, for a batch of 64, as
``vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)`` over
``functional_call``.  Rows, with issue 15's targets:

  glasstorch vmap(grad) / torch vmap(grad)                       <= 3
  glasstorch vmap(grad) / glasstorch's loop of 64 grad calls     <= 0.2 (5x faster)

Two MLPs: the benchmarks' 784-512-512-10 (most of its time is writing 64
copies of the weights' gradients: 134 MB) and a small 784-128-10 (where the
transforms' own cost shows).  Both libraries get the same weights and data;
the first results are compared (a mismatch reads WRONG).  Method as in
bench_inductor: warm-up, calibrated rounds, alternating order, medians.
"""
from __future__ import annotations

import argparse
import statistics
import warnings

import numpy as np

from benchmarks.bench_ops import _calibrate, _time_loop, data, fmt_ratio, fmt_time

BATCH = 64
SIZES = {"mlp 784-512-512-10": (784, 512, 512, 10), "mlp 784-128-10": (784, 128, 10)}


def _model(lib, sizes):
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(lib.nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    model = lib.nn.Sequential(*layers)
    for j, p in enumerate(model.parameters()):      # the same numbers in both libraries
        p.data.copy_(lib.tensor(data(*p.shape, seed=100 + j) * 0.05))
    return model


def per_sample_grads(lib, sizes, loop=False):
    """A callable returning the per-example gradients (dict name -> (64, *shape))."""
    model = _model(lib, sizes)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.tensor(data(BATCH, sizes[0], seed=1))
    y = lib.tensor(np.random.default_rng(2).integers(0, sizes[-1], BATCH))

    def loss(p, xi, yi):
        out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))
    grad = lib.func.grad(loss)
    if loop:
        return lambda: [grad(params, x[i], y[i]) for i in range(BATCH)]
    batched = lib.func.vmap(grad, in_dims=(None, 0, 0))
    return lambda: batched(params, x, y)


def _as_arrays(result):
    if isinstance(result, list):
        return {k: np.stack([r[k].detach().numpy() for r in result]) for k in result[0]}
    return {k: v.detach().numpy() for k, v in result.items()}


def _median_times(contestants, repeats, round_time):
    loops = {}
    for name, fn in contestants.items():
        for _ in range(3):
            fn()
        loops[name] = _calibrate(fn, round_time, keep_gc=True)[0]
    times = {name: [] for name in contestants}
    order = list(contestants)
    for r in range(repeats):
        for name in (order if r % 2 == 0 else order[::-1]):
            times[name].append(_time_loop(contestants[name], loops[name], True) / loops[name])
    return {name: statistics.median(t) for name, t in times.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", choices=("1", "default"), default="default")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--round-time", type=float, default=0.3)
    args = parser.parse_args(argv)
    import torch
    import glasstorch as gt
    if args.threads == "1":
        torch.set_num_threads(1)
        gt.set_num_threads(1)
    warnings.simplefilter("ignore")
    print(f"per-sample gradients, batch {BATCH}, threads: {args.threads}")
    print(f"{'case':<22} {'glasstorch':>11} {'torch':>10} {'gt/torch':>9} {'(≤ 3)':>6}"
          f" {'gt loop':>10} {'vmap/loop':>10} {'(≤ 0.2)':>8}")
    for title, sizes in SIZES.items():
        ours, theirs = per_sample_grads(gt, sizes), per_sample_grads(torch, sizes)
        ours_loop = per_sample_grads(gt, sizes, loop=True)
        mine, ref, looped = _as_arrays(ours()), _as_arrays(theirs()), _as_arrays(ours_loop())
        same = all(np.allclose(mine[k], ref[k], rtol=1e-4, atol=1e-6) and
                   np.allclose(mine[k], looped[k], rtol=1e-4, atol=1e-6) for k in ref)
        t = _median_times({"gt": ours, "torch": theirs, "loop": ours_loop}, args.repeats,
                          args.round_time)
        vs_torch, vs_loop = t["gt"] / t["torch"], t["gt"] / t["loop"]
        print(f"{title:<22} {fmt_time(t['gt']):>11} {fmt_time(t['torch']):>10} "
              f"{fmt_ratio(vs_torch):>9} {'PASS' if vs_torch <= 3 else 'FAIL':>6} "
              f"{fmt_time(t['loop']):>10} {fmt_ratio(vs_loop):>10} "
              f"{'PASS' if vs_loop <= 0.2 else 'FAIL':>8}{'' if same else '  WRONG'}")


if __name__ == "__main__":
    main()
