"""``torch._inductor``: the compiler that turns FX graphs into fused C kernels.

The pipeline, one module a stage:

    lowering.py / graph.py   FX graph of ATen ops -> loop IR (ir.py)
    scheduler.py             IR buffers -> fused kernels, with the reason for each decision
    codegen/cpp.py           each kernel -> one C function (OpenMP, vectorizable loops)
    codegen/wrapper.py       the whole graph -> a Python ``call(args)``
    codecache.py             C -> shared library, cached on disk
    compile_fx.py            the entry points (torch.compile's default backend)

``glasstorch._inductor.debug.stages(fn, *args)`` prints every stage for a function.
"""
from . import config  # noqa: F401
