"""Side-by-side benchmarks of glasstorch against real PyTorch.

Not part of the ``glasstorch`` package and never imported by it or by the
tests.  Run ``python -m benchmarks.bench_ops --help``; see benchmarks/README.md.
"""
