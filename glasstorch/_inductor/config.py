"""``torch._inductor.config``: the switches of glasstorch's Inductor.

Set them as attributes (``torch._inductor.config.max_fusion_size = 8``), or
for a block with ``patch`` (``with config.patch(max_fusion_size=8): ...``).
"""
from __future__ import annotations

import contextlib
import os

# fusion
max_fusion_size = 64                 # buffers at most in one fused kernel
realize_reads_threshold = 4          # a pointwise value read by several nodes is stored,
realize_opcount_threshold = 30       # not recomputed, above these loads / ops

# mode="reduce-overhead": a compiled graph's internal buffers (not its outputs) are
# allocated once and reused by every call, the CPU counterpart of CUDA graphs' static
# memory: no allocation and no fresh pages per call (a graph must not be re-entered)
static_memory = False

# the wrapper's runs of kernels and matrix products as generated C functions (codegen/
# wrapper_c.py), one ctypes call each, BLAS called from C: no dispatcher call per product
c_wrapper = True

# mode="max-autotune" (autotune.py): each kernel's variants (block sizes, parallel threshold,
# vector width) and each small extern mm/bmm against generated C matmuls are timed per
# shape, the fastest kept; the choices are cached on disk beside the code cache
max_autotune = os.environ.get("TORCHINDUCTOR_MAX_AUTOTUNE") == "1"
autotune_budget = 10.0               # seconds of compiling and timing variants per graph at most
autotune_matmul_max_work = 1 << 22   # multiply-adds above which a matmul stays extern, untimed

# print each generated kernel's C, and the wrapper, to stderr (also TORCH_LOGS=output_code)
debug = os.environ.get("TORCHINDUCTOR_DEBUG", "0") == "1"


class cpp:
    """The C backend."""

    cxx = os.environ.get("CC")            # the compiler; None: cc, then gcc
    min_parallel_work = 32768             # elements below which a kernel runs on one thread
    chunk_size = 4096                     # the block a thread takes of a 1-d pointwise loop
    column_block = 64                     # outputs accumulated together by a column reduction
    row_cache_size = 4096                 # longest row whose costly values a kernel keeps
    extra_flags = ()


@contextlib.contextmanager
def patch(**changes):
    """Set config values for the duration of a ``with`` block."""
    import sys
    module = sys.modules[__name__]
    old = {}
    for key, value in changes.items():
        target, attr = (cpp, key[4:]) if key.startswith("cpp.") else (module, key)
        if not hasattr(target, attr):
            raise AttributeError(f"torch._inductor.config has no option {key!r}")
        old[key] = (target, attr, getattr(target, attr))
        setattr(target, attr, value)
    try:
        yield
    finally:
        for target, attr, value in old.values():
            setattr(target, attr, value)
