"""``mode="max-autotune"``: each kernel's variants timed, the fastest kept, per shape.

Graphs are compiled per concrete geometry, so every kernel has fixed sizes and
its choices can be measured rather than guessed.  For each fused kernel the
candidates are the switches of ``config.cpp`` that change its C:

* ``chunk_size`` of a one-dimensional pointwise loop, ``column_block`` of a
  column reduction (each tried only below the extent of the loop it blocks);
* the parallel threshold ``min_parallel_work``, flipped to the other side of
  the kernel's work (serial where the default runs threads, and the reverse),
  when more than one thread runs;
* the vector width: on a machine whose flags prefer 512-bit vectors, also the
  function compiled with ``target("prefer-vector-width=256")``.

Their combinations are written, only those whose C differs are kept, and all
of a kernel's variants are compiled into one library (``codecache``, so a
variant is compiled once per machine).  Each runs on random buffers of the
kernel's dtypes and sizes; its outputs must equal the default's bitwise,
except the float outputs of a kernel with an OpenMP sum or product reduction,
whose order changes with the vector width and the threads (within 1e-4,
relative to the output's largest magnitude).  ``benchmark`` times the
correct ones in interleaved rounds (a busy spell of a shared machine hits
them alike), keeping each one's least time per call; a variant replaces the
default only when it is ``NOISE_MARGIN`` faster.  The chosen C replaces the
default's in the graph's source; nothing else changes.

An extern ``mm`` or ``bmm`` (``addmm`` lowers to ``mm``) with float operands
and at most ``config.autotune_matmul_max_work`` multiply-adds, that the C
wrapper does not call through BLAS itself, is timed
against generated C matmuls (``matmul_source``); when one is faster, the
wrapper calls it instead (a ``GeneratedMatmul``, same arguments).  Summed
in any order, K products lie within ``gamma_K * (|A| @ |B|)`` of the exact
product, ``gamma_K = K u / (1 - K u)`` with ``u`` the unit roundoff (2^-24
for float32; Higham, *Accuracy and Stability of Numerical Algorithms*,
3.1).  So a generated result (summed over k in order, or in vector lanes)
and ATen's differ by at most twice that, ``matmul_tolerance``; a generated
result outside it is rejected.

Kernels that read integer data are not timed: random integers could index
out of bounds or divide by zero.  The graph's ``config.autotune_budget``
seconds bound compiling and timing: matmuls first, then kernels from the
most work down; once it is spent no candidate library is compiled and no
timing round begins, and what was not timed keeps the default.  Each choice
is stored on disk next to the code cache, keyed by the candidates' C, the
compiler, flags and CPU, and the thread count, so another process reuses it
without timing.  The ``AutotuneReport`` of a graph is the compiled graph's
``autotune_report``, part of ``debug.stages(..., mode="max-autotune")`` and
logged by ``TORCH_LOGS=autotuning``.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import json
import os
import time
import warnings

import numpy as np

from .. import _logging
from .._core import dtype as dt
from .._core.allocator import storage_nbytes
from .._ops.kernels import native
from . import codecache, config
from .codegen.cpp import C_TYPES, PRELUDE, KernelWriter, libm_declarations
from .codegen.wrapper import WrapperCode
from .codegen.wrapper_c import MatrixProduct, find_blas
from .ir import ExternKernel
from .scheduler import FusedKernel

CHUNK_SIZES = (1024, 4096, 16384, 65536)
COLUMN_BLOCKS = (16, 32, 64, 128)
NOISE_MARGIN = 0.03        # a variant replaces the default only when this much faster
ROUNDS = 7                 # timing rounds per candidate; the least is kept
ROUND_SECONDS = 2e-3       # calls per round: enough to fill this long
VECTOR_256 = '__attribute__((target("prefer-vector-width=256")))'
MATMUL_BLOCK = 64          # outputs of a row accumulated together by the axpy matmul


# -- the report ---------------------------------------------------------------------------


class Tuning:
    """What was timed for one kernel or matmul: ``timings`` as (label,
    seconds per call or None, check) in candidate order, the default first;
    ``chosen``, the label kept; ``note``, why nothing was timed."""

    def __init__(self, name: str, what: str):
        self.name, self.what = name, what
        self.timings, self.chosen, self.note, self.cached = [], "default", "", False

    def text(self) -> list:
        head = f"{self.name} ({self.what})"
        if self.note:
            return [f"{head}: {self.chosen} kept, {self.note}"]
        base = self.timings[0][1]
        lines = [head + (": cached, timed by an earlier process" if self.cached else "")]
        for label, seconds, check in self.timings:
            mark = "*" if label == self.chosen else " "
            time_text = f"{seconds * 1e6:12.1f}" if seconds is not None else f"{'-':>12}"
            ratio = f"{seconds / base:8.2f}" if seconds is not None and base else f"{'-':>8}"
            lines.append(f"  {mark} {label:<44}{time_text}{ratio}  {check}")
        return lines


class AutotuneReport:
    """The choices ``mode="max-autotune"`` made for one graph, printable."""

    def __init__(self, graph_name: str):
        self.graph_name = graph_name
        self.threads = native.get_num_threads()
        self.budget = config.autotune_budget
        self.spent = 0.0
        self.tunings = []

    def __str__(self):
        lines = [f"autotuning {self.graph_name}: {self.threads} thread(s), budget "
                 f"{self.budget:g} s, {self.spent:.2f} s spent",
                 f"    {'candidate':<44}{'us/call':>12}{'ratio':>8}  check (* kept)"]
        for tuning in self.tunings:
            lines += tuning.text()
        return "\n".join(lines)


# -- entry point ----------------------------------------------------------------------------


def tuned_code(graph, scheduler, name: str) -> tuple:
    """The graph's ``WrapperCode`` with each kernel's and matmul's fastest
    variant, and the ``AutotuneReport`` saying what was timed."""
    report = AutotuneReport(name)
    start = time.perf_counter()
    deadline = start + config.autotune_budget
    for step in scheduler.steps:
        if isinstance(step, ExternKernel) and _matmul_geometry(step) is not None:
            if config.c_wrapper and find_blas() is not None and \
                    MatrixProduct.of(step) is not None:
                tuning = Tuning(step.name, str(step.op))
                tuning.note = "not timed: the C wrapper calls BLAS for it (a generated " \
                              "matmul would be a Python step between its runs)"
            else:
                tuning = _tune_matmul(step, len(report.tunings), deadline)
            report.tunings.append(tuning)
    code = WrapperCode(graph, scheduler, name)
    kernels = [s for s in scheduler.steps if isinstance(s, FusedKernel)]
    for kernel in sorted(kernels, key=lambda k: -k.work()):
        tuning = Tuning(kernel.name, f"work {kernel.work()}")
        report.tunings.append(tuning)
        _tune_kernel(kernel, graph, code, tuning, deadline)
    report.spent = time.perf_counter() - start
    _logging.trace("autotuning", _logging.current_compile_id, str(report))
    return code, report


def _out_of_time(deadline: float, tuning: Tuning) -> bool:
    if time.perf_counter() < deadline:
        return False
    tuning.note = "not timed: the graph's autotune_budget is spent"
    return True


def benchmark(runs: list, reset=None, deadline: float = float("inf")) -> list:
    """Seconds per call of each of ``runs``: the least over up to ``ROUNDS``
    rounds (the round the machine disturbed least).  Each round runs every
    candidate in turn, the order reversed every other round, so that a busy
    spell of a shared machine hits them alike; a candidate's turn is as many
    calls as fill ``ROUND_SECONDS``, after ``reset()`` (off the clock).  No
    round starts after ``deadline`` but the first."""
    calls = []
    for run in runs:
        run()
        started = time.perf_counter()
        run()
        calls.append(max(1, int(ROUND_SECONDS / max(time.perf_counter() - started, 1e-7))))
    best = [float("inf")] * len(runs)
    order = list(range(len(runs)))
    for round_ in range(ROUNDS):
        if round_ and time.perf_counter() >= deadline:
            break
        for i in order if round_ % 2 == 0 else order[::-1]:
            if reset is not None:
                reset()
            started = time.perf_counter()
            for _ in range(calls[i]):
                runs[i]()
            best[i] = min(best[i], (time.perf_counter() - started) / calls[i])
    return best


def _timed(tuning: Tuning, candidates: list, reset, deadline: float) -> None:
    """Time the correct ``candidates`` (label, run, check) together, record
    every one in ``tuning`` and choose the fastest: the default (the first)
    unless another beats it by ``NOISE_MARGIN``."""
    correct = [(label, run) for label, run, check in candidates if check != "WRONG"]
    seconds = dict(zip([label for label, _ in correct],
                       benchmark([run for _, run in correct], reset, deadline)))
    tuning.timings = [(label, seconds.get(label), check) for label, _, check in candidates]
    default = tuning.timings[0]
    fastest, label = min((t, label) for label, t in seconds.items())
    tuning.chosen = label if fastest < default[1] * (1 - NOISE_MARGIN) else default[0]


# -- kernel variants -------------------------------------------------------------------------


class Variant:
    """One way to write a kernel: the config patches it is written under,
    whether it prefers 256-bit vectors, and its C, parameters and libm calls."""

    def __init__(self, kernel, graph, removed, patches: dict, vector_256: bool):
        self.patches, self.vector_256, self.work = patches, vector_256, kernel.work()
        with config.patch(**patches):
            self.source, self.params, self.libm, _ = KernelWriter(kernel, graph, removed).write()
        if vector_256:
            self.source = f"{VECTOR_256}\n{self.source}"

    @property
    def label(self) -> str:
        words = [_SWITCH_WORDS[key](value, self.work) for key, value in self.patches.items()]
        if self.vector_256:
            words.append("256-bit vectors")
        return ", ".join(words) or "default"


_SWITCH_WORDS = {"cpp.chunk_size": lambda value, work: f"chunk {value}",
                 "cpp.column_block": lambda value, work: f"column block {value}",
                 "cpp.min_parallel_work": lambda value, work:
                 "parallel" if work >= value else "serial"}


def kernel_variants(kernel, graph, removed) -> list:
    """The variants of ``kernel`` whose C differs, the default first: the
    combinations of the switch values that each change the C on their own."""
    default = Variant(kernel, graph, removed, {}, False)
    work = kernel.work()
    extent = kernel.outer[-1] if kernel.outer else work   # the loop a block size cuts
    switches = [[{"cpp.chunk_size": c} for c in CHUNK_SIZES
                 if c != config.cpp.chunk_size and c < extent],
                [{"cpp.column_block": b} for b in COLUMN_BLOCKS
                 if b != config.cpp.column_block and b < extent]]
    if native.get_num_threads() > 1 and work > 0:
        parallel = work >= config.cpp.min_parallel_work
        switches.append([{"cpp.min_parallel_work": work + 1 if parallel else work}])
    relevant = [[{}] + [p for p in values
                        if Variant(kernel, graph, removed, p, False).source != default.source]
                for values in switches]
    widths = (False, True) if "-mprefer-vector-width=512" in codecache.flags() else (False,)
    variants, seen = [default], {default.source}
    for combination in itertools.product(*relevant, widths):
        patches = {k: v for patch in combination[:-1] for k, v in patch.items()}
        variant = Variant(kernel, graph, removed, patches, combination[-1])
        if variant.source not in seen and variant.params == default.params:
            seen.add(variant.source)
            variants.append(variant)
    return variants


def _tune_kernel(kernel, graph, code, tuning: Tuning, deadline: float) -> None:
    """Replace ``kernel``'s C in ``code.c_source`` by its fastest variant's."""
    reads = {name for reads in kernel.reads.values() for name, _ in reads}
    if any(_is_integer(graph.buffer_dtype(name)) for name in reads):
        tuning.note = "not timed: it reads integer data (random values could index out " \
                      "of bounds or divide by zero)"
        return
    if kernel.work() == 0:
        tuning.note = "not timed: no work"
        return
    variants = kernel_variants(kernel, graph, code.removed)
    if variants[0].source not in code.c_source:
        tuning.note = "not timed: the wrapper wrote other C for it"
        return
    if len(variants) == 1:
        tuning.note = "no other variant changes its C"
        return
    by_label = {v.label: v for v in variants}
    candidates_source = _candidates_source([(v.source, kernel.name) for v in variants],
                                           set().union(*(v.libm for v in variants)))
    key = _key(candidates_source)
    if not _cached(key, tuning, by_label):
        if _out_of_time(deadline, tuning):
            return
        try:
            library = codecache.load(candidates_source)
        except codecache.CompileError as error:
            tuning.note = f"not timed: its variants do not compile ({str(error)[:200]})"
            return
        _time_variants(kernel, graph, variants, library, tuning, deadline, reads)
        _store_choice(key, tuning)
    chosen = by_label[tuning.chosen]
    code.c_source = code.c_source.replace(variants[0].source, chosen.source, 1)


def _candidates_source(functions: list, libm: set) -> str:
    """One C file with each (source, name) function renamed ``<name>_v<i>``."""
    renamed = [source.replace(f"void {name}(", f"void {name}_v{i}(", 1)
               for i, (source, name) in enumerate(functions)]
    return PRELUDE + libm_declarations(libm) + "\n\n" + "\n".join(renamed)


def _time_variants(kernel, graph, variants, library, tuning: Tuning, deadline: float,
                   reads: set) -> None:
    """Each variant run once and checked against the default's outputs, then
    the correct ones timed together."""
    params = variants[0].params
    buffers = _KernelBuffers(graph, params, reads)
    order_changes = any(clause in variants[0].source
                        for clause in ("reduction(+:", "reduction(*:"))
    pointers, reference, candidates = buffers.pointers(), None, []
    for i, variant in enumerate(variants):
        fn = _function(library, f"{kernel.name}_v{i}", len(params))
        buffers.reset()
        fn(*pointers)
        outputs = buffers.outputs()
        if reference is None:
            reference, check = outputs, "reference"
        else:
            check = _compare(reference, outputs, order_changes)
        if check == "WRONG":
            warnings.warn(f"Inductor autotuning: variant {variant.label!r} of {kernel.name} "
                          f"computes other values than the default; it is not used",
                          RuntimeWarning, stacklevel=2)
        candidates.append((variant.label, functools.partial(fn, *pointers), check))
    _timed(tuning, candidates, buffers.reset_in_place, deadline)


def _compare(reference: list, outputs: list, order_changes: bool) -> str:
    """The check of a variant's outputs against the default's: ``bitwise``
    when every bit is equal; ``close`` when the reduction order may differ
    and the float outputs are within 1e-4; else ``WRONG``."""
    if all(np.array_equal(a.view(np.uint8), b.view(np.uint8)) for a, b in zip(reference,
                                                                            outputs)):
        return "bitwise"
    if not order_changes:
        return "WRONG"
    for a, b in zip(reference, outputs):
        if a.dtype.kind != "f":
            if not np.array_equal(a, b):
                return "WRONG"
            continue
        a, b = a.astype(np.float64), b.astype(np.float64)
        scale = max(1.0, float(np.nanmax(np.abs(a), initial=0.0)))
        if not np.allclose(b, a, rtol=1e-4, atol=1e-4 * scale, equal_nan=True):
            return "WRONG"
    return "close"


def _is_integer(dtype) -> bool:
    return not dtype.is_floating_point and dtype is not dt.bool_


def _extent(layout) -> int:
    """Elements of memory a buffer with ``layout`` spans."""
    size = storage_nbytes(tuple(layout.size), 1, tuple(layout.stride))
    return layout.offset + size if size else 0


def _random_array(layout, rng) -> np.ndarray:
    """The memory of a buffer with ``layout``: floats uniform in [0.5, 1.5)
    (no NaN from logs or square roots, no denormals), anything else zero."""
    values = rng.uniform(0.5, 1.5, _extent(layout))
    if layout.dtype.is_floating_point:
        return values.astype(layout.dtype.numpy)
    return np.zeros(values.size, layout.dtype.numpy)


class _KernelBuffers:
    """Random memory for each parameter of a kernel, restorable: outputs start
    random too, so that an element a variant fails to write shows."""

    def __init__(self, graph, params: list, reads: set):
        rng = np.random.default_rng(0)
        self.params = params
        self.pristine = [_random_array(graph.name_to_buffer[name].layout, rng)
                         for name, _ in params]
        self.arrays = [a.copy() for a in self.pristine]
        # outputs the kernel also reads (in-place updates): restored before each round
        self.in_place = [i for i, (name, out) in enumerate(params) if out and name in reads]

    def pointers(self) -> list:
        return [a.ctypes.data for a in self.arrays]

    def reset(self):
        for array, pristine in zip(self.arrays, self.pristine):
            array[...] = pristine

    def reset_in_place(self):
        for i in self.in_place:
            self.arrays[i][...] = self.pristine[i]

    def outputs(self) -> list:
        """Copies of the outputs (bfloat16 widened to float32, which is exact)."""
        return [a.astype(np.float32) if a.dtype == dt.bfloat16.numpy else a.copy()
                for a, (_, out) in zip(self.arrays, self.params) if out]


# -- matmuls ---------------------------------------------------------------------------------


_MATMULS = ("aten.mm.default", "aten.bmm.default")


def _matmul_geometry(step):
    """(batch, m, k, n, layouts of a, b and out) of a small float ``mm`` or
    ``bmm`` extern call; None for anything else."""
    if str(step.op) not in _MATMULS or step.kwargs or step.layout is None or \
            len(step.args) != 2:
        return None
    layouts = [getattr(a, "layout", None) for a in step.args] + [step.layout]
    if any(lay is None or lay.dtype is not step.layout.dtype for lay in layouts) or \
            step.layout.dtype not in (dt.float32, dt.float64):
        return None
    a, b, out = layouts
    batch = a.size[0] if len(a.size) == 3 else 1
    (m, k), n = a.size[-2:], b.size[-1]
    if min(batch, m, k, n) == 0 or batch * m * k * n > config.autotune_matmul_max_work:
        return None
    return batch, m, k, n, a, b, out


def matmul_source(name: str, geometry, form: str, parallel: bool) -> str:
    """A C function ``name(a, b, out)``: ``out = a @ b`` (per batch), each
    output accumulated over k in order.  ``form`` "axpy" walks a row of b at
    a time into MATMUL_BLOCK outputs (vectorized along n); "dot" takes each
    output as one dot product (vectorized along k, lanes summed at the end)."""
    batch, m, k, n, a, b, out = geometry
    ctype = C_TYPES[out.dtype]

    def at(layout, *index):
        return " + ".join(f"{s}L*{i}" for s, i in zip(layout.stride[-len(index):], index)
                          if s) or "0"
    outer = [f"for (int64_t g = 0; g < {batch}; g++)"] if batch > 1 else []
    outer.append(f"for (int64_t i = 0; i < {m}; i++)")
    lines = [f"#pragma omp parallel for collapse({len(outer)})" if parallel else "", *outer]
    g = ["g"] if batch > 1 else []
    if form == "axpy":
        block = min(n, MATMUL_BLOCK)
        width = block if n % block == 0 else f"({n} - j0 < {block} ? {n} - j0 : {block})"
        lines += [
            "{",
            f"    for (int64_t j0 = 0; j0 < {n}; j0 += {block})",
            "    {",
            f"        {ctype} acc[{block}];",
            f"        for (int64_t j = 0; j < {block}; j++) acc[j] = 0;",
            f"        for (int64_t p = 0; p < {k}; p++)",
            "        {",
            f"            {ctype} left = a[{at(a, *g, 'i', 'p')}];",
            "            #pragma omp simd",
            f"            for (int64_t j = 0; j < {width}; j++)",
            f"                acc[j] += left * b[{at(b, *g, 'p', '(j0 + j)')}];",
            "        }",
            f"        for (int64_t j = 0; j < {width}; j++)",
            f"            out[{at(out, *g, 'i', '(j0 + j)')}] = acc[j];",
            "    }",
            "}"]
    else:
        lines += [
            f"for (int64_t j = 0; j < {n}; j++)",
            "{",
            f"    {ctype} acc = 0;",
            "    #pragma omp simd reduction(+:acc)",
            f"    for (int64_t p = 0; p < {k}; p++)",
            f"        acc += a[{at(a, *g, 'i', 'p')}] * b[{at(b, *g, 'p', 'j')}];",
            f"    out[{at(out, *g, 'i', 'j')}] = acc;",
            "}"]
    body = "\n".join("    " + line for line in lines if line)
    return (f"void {name}(const {ctype}* __restrict__ a, const {ctype}* __restrict__ b, "
            f"{ctype}* __restrict__ out)\n{{\n{body}\n}}\n")


def _matmul_forms(geometry) -> list:
    """The generated (form, parallel) candidates: the forms whose vector loop
    reads memory contiguously (axpy when none does), serial and, with
    several threads, parallel."""
    _, _, _, _, a, b, _ = geometry
    forms = (["axpy"] if b.stride[-1] == 1 else []) + \
        (["dot"] if a.stride[-1] == 1 and b.stride[-2] == 1 else [])
    threads = (False, True) if native.get_num_threads() > 1 else (False,)
    return [(form, parallel) for form in forms or ["axpy"] for parallel in threads]


class GeneratedMatmul:
    """A generated C matmul standing in for an extern ``mm``/``bmm``: the
    wrapper calls it with the same tensors (of the geometry it was made
    for) and gets a new output of the extern's layout."""

    def __init__(self, name: str, fn, layout):
        from .compile_fx import empty_strided
        self.__name__, self.fn, self.layout = name, fn, layout
        self._empty = empty_strided

    def __call__(self, a, b):
        lay = self.layout
        out = self._empty(lay.size, lay.stride, lay.dtype)
        self.fn(a.data_ptr(), b.data_ptr(), out.data_ptr())
        return out

    def __repr__(self):
        return self.__name__


def matmul_tolerance(a: np.ndarray, b: np.ndarray, dtype) -> np.ndarray:
    """Twice the forward error bound of an in-order float product:
    ``2 gamma_K (|a| @ |b|)``, with ``gamma_K = K u / (1 - K u)``."""
    u = 2.0 ** -24 if dtype is dt.float32 else 2.0 ** -53
    k = a.shape[-1]
    gamma = k * u / (1 - k * u)
    return 2 * gamma * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def _tune_matmul(step, index: int, deadline: float) -> Tuning:
    """Time ``step``'s extern op against the generated matmuls; the faster
    one becomes ``step.op`` (the wrapper is written after this)."""
    geometry = _matmul_geometry(step)
    batch, m, k, n, a, b, out = geometry
    op = str(step.op).split(".")[1]
    tuning = Tuning(step.name, f"{step.op} {f'{batch}x' if op == 'bmm' else ''}{m}x{k} "
                               f"@ {k}x{n}")
    candidates = _matmul_forms(geometry)
    names = [f"cpp_{op}_{index}_{form}{'_parallel' * parallel}" for form, parallel in candidates]
    source = PRELUDE + "\n".join(matmul_source(name, geometry, form, parallel)
                                 for name, (form, parallel) in zip(names, candidates))
    labels = [f"extern {step.op}"] + [f"generated {form}{', parallel' * parallel}"
                                      for form, parallel in candidates]
    key = _key(f"{source}\0{step.op}\0{[(lay.size, lay.stride) for lay in (a, b, out)]}")
    if not _cached(key, tuning, labels):
        if _out_of_time(deadline, tuning):
            return tuning
        try:
            library = codecache.load(source)
        except codecache.CompileError as error:
            tuning.note = f"not timed: the generated matmul does not compile ({error})"
            return tuning
        _time_matmuls(step, geometry, library, names, labels, tuning, deadline)
        _store_choice(key, tuning)
    if tuning.chosen != labels[0]:
        name = names[labels.index(tuning.chosen) - 1]
        step.op = GeneratedMatmul(name, _function(codecache.load(source), name, 3), out)
    return tuning


def _function(library, name: str, arity: int):
    """``library``'s C function ``name`` over ``arity`` pointers."""
    fn = getattr(library, name)
    fn.argtypes, fn.restype = [ctypes.c_void_p] * arity, None
    return fn


def _time_matmuls(step, geometry, library, names, labels, tuning, deadline) -> None:
    """The extern call and the generated matmuls timed together on random
    operands; a generated result outside ``matmul_tolerance`` of the
    extern's is WRONG."""
    import glasstorch
    _, _, _, _, a, b, out = geometry
    rng = np.random.default_rng(0)
    operands, arrays = [], []
    for layout in (a, b):
        memory = rng.uniform(-1, 1, _extent(layout)).astype(layout.dtype.numpy)
        operands.append(glasstorch.from_numpy(memory).as_strided(layout.size, layout.stride,
                                                                 layout.offset))
        arrays.append(operands[-1].numpy())
    expected = step.op(*operands).numpy().astype(np.float64)
    bound = matmul_tolerance(arrays[0], arrays[1], out.dtype)
    candidates = [(labels[0], functools.partial(step.op, *operands), "reference")]
    for name, label in zip(names, labels[1:]):
        generated = GeneratedMatmul(name, _function(library, name, 3), out)
        error = np.abs(generated(*operands).numpy().astype(np.float64) - expected)
        within = (error <= bound).all()
        if not within:
            warnings.warn(f"Inductor autotuning: the generated matmul {name} is off by more "
                          f"than its error bound; it is not used", RuntimeWarning, stacklevel=2)
        candidates.append((label, functools.partial(generated, *operands),
                           "within bound" if within else "WRONG"))
    _timed(tuning, candidates, None, deadline)


# -- the choices on disk -------------------------------------------------------------------------


def _key(text: str) -> str:
    """The choice's key: the candidates' C (and what else ``text`` holds), the
    compiler, flags and CPU (``codecache.key_of``), and the thread count."""
    return codecache.key_of(f"{text}\0autotune threads={native.get_num_threads()}")


def _choice_path(key: str) -> str:
    return os.path.join(codecache.cache_dir(), "autotune", key[:2], f"{key}.json")


def _cached(key: str, tuning: Tuning, labels) -> bool:
    """Fill ``tuning`` from the stored choice of ``key``, if there is a whole
    one naming one of ``labels``."""
    try:
        with open(_choice_path(key), encoding="utf-8") as f:
            entry = json.load(f)
        chosen, timings = entry["chosen"], [tuple(t) for t in entry["timings"]]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if chosen not in labels:
        return False
    tuning.timings, tuning.chosen, tuning.cached = timings, chosen, True
    return True


def _store_choice(key: str, tuning: Tuning) -> None:
    """Write the choice (a cache that cannot be written only loses sharing)."""
    path = _choice_path(key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        codecache._write_atomic(path, json.dumps({"chosen": tuning.chosen,
                                                  "timings": tuning.timings}))
    except OSError:
        pass
