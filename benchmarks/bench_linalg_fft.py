"""torch.linalg and torch.fft on 512x512 float32, glasstorch beside torch in one
process (issue 16's target: at most 1.3x torch's time).

    python -m benchmarks.bench_linalg_fft             # every case, torch's default threads
    python -m benchmarks.bench_linalg_fft --only fft  # cases whose name contains "fft"
    python -m benchmarks.bench_linalg_fft --threads 1 # both libraries on one thread

Each case is ``(name, fn)`` with ``fn(lib, data)`` calling one library on
inputs it builds from ``data`` (a dict of numpy arrays, the same for both).
Rounds alternate between the libraries; the ratio is glasstorch's median time
over torch's.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch

import glasstorch

SIZE = 512


def _data():
    rng = np.random.default_rng(0)
    real = rng.standard_normal((SIZE, SIZE)).astype(np.float32)
    spectrum = np.fft.fft2(real).astype(np.complex64)
    half = np.fft.rfft2(real).astype(np.complex64)
    rhs = rng.standard_normal((SIZE, SIZE)).astype(np.float32)
    spd = (real @ real.T + SIZE * np.eye(SIZE)).astype(np.float32)
    return {"real": real, "spectrum": spectrum, "half": half, "rhs": rhs, "spd": spd}


LINALG_CASES = [
    ("inv", lambda L, d: L.linalg.inv(d["real"])),
    ("solve", lambda L, d: L.linalg.solve(d["real"], d["rhs"])),
    ("det", lambda L, d: L.linalg.det(d["real"])),
    ("cholesky", lambda L, d: L.linalg.cholesky(d["spd"])),
    ("qr", lambda L, d: L.linalg.qr(d["real"])),
    ("svd", lambda L, d: L.linalg.svd(d["real"])),
    ("eigh", lambda L, d: L.linalg.eigh(d["spd"])),
    ("lstsq", lambda L, d: L.linalg.lstsq(d["real"], d["rhs"])),
]

FFT_CASES = [
    ("fft2", lambda L, d: L.fft.fft2(d["real"])),
    ("rfft2", lambda L, d: L.fft.rfft2(d["real"])),
    ("ifft2", lambda L, d: L.fft.ifft2(d["spectrum"])),
    ("irfft2", lambda L, d: L.fft.irfft2(d["half"])),
    ("fft (last dim)", lambda L, d: L.fft.fft(d["real"])),
]


def _timed(fn, rounds, loops):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        times.append((time.perf_counter() - start) / loops)
    return times


SETTLE_S = 0.015


def _settle():
    """Busy-wait until the other library's idle OpenMP workers have gone to
    sleep (torch's spin ~6 ms after its last parallel region, as libgomp's
    default does): each round then times one library alone on the cores, as
    in a program that uses only it.  A busy wait, not a sleep, keeps the CPU
    clocked as the timed calls find it."""
    end = time.perf_counter() + SETTLE_S
    while time.perf_counter() < end:
        pass


def measure(case, data, rounds=7, loops=20):
    """Median seconds per call for glasstorch and torch, rounds interleaved."""
    _, fn = case
    calls = {}
    for lib in (glasstorch, torch):
        tensors = {k: lib.tensor(v) for k, v in data.items()}
        calls[lib] = (lambda lib=lib, tensors=tensors: fn(lib, tensors))
        calls[lib]()            # warm-up
    ours, theirs = [], []
    for r in range(rounds):
        order = (glasstorch, torch) if r % 2 == 0 else (torch, glasstorch)
        for lib in order:
            _settle()
            (ours if lib is glasstorch else theirs).extend(_timed(calls[lib], 1, loops))
    return statistics.median(ours), statistics.median(theirs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=None,
                        help="intra-op threads for both (default: torch's own default)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    glasstorch.set_num_threads(torch.get_num_threads())
    print(f"threads: torch {torch.get_num_threads()}, glasstorch {glasstorch.get_num_threads()}; "
          f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    data = _data()
    print(f"{'case':<24}{'glasstorch':>14}{'torch':>14}{'ratio':>9}")
    for group, cases in (("linalg", LINALG_CASES), ("fft", FFT_CASES)):
        for case in cases:
            name = f"{group}: {case[0]}"
            if args.only and not any(o in name for o in args.only):
                continue
            ours, theirs = measure(case, data, rounds=args.rounds)
            print(f"{name:<24}{ours * 1e6:>11.0f} us{theirs * 1e6:>11.0f} us"
                  f"{ours / theirs:>8.2f}x")


if __name__ == "__main__":
    main()
