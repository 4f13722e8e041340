"""The C wrapper (``config.c_wrapper``): a graph as few C calls as it can be.

Consecutive wrapper steps that C can run, the fused kernels and the float32 / float64 matrix products
(``aten.mm``, ``aten.bmm``; ``addmm`` is an ``mm`` whose bias the next kernel
adds), become one generated C function, a *run*::

    void graph_run_0(void **p)
    {
        float *primals_1 = p[0];
        ...
        cpp_fused_native_layer_norm_0(primals_1, primals_2, buf0);
        gt_mm_f32(CblasNoTrans, CblasTrans, 64, 96, 32, buf3, 32, primals_6, 32, buf4, 96);
        ...
    }

The Python wrapper keeps what C cannot do: the other extern calls (each one
splits the runs), allocating the graph's outputs, and setting the data
pointers that change from call to call.  A graph of kernels and matrix
products alone is one ctypes call.  This is the CPU counterpart of the CUDA
graph that PyTorch's reduce-overhead mode records and replays.

* **Pointers.**  ``data_ptrs`` holds every buffer a run touches.  Under
  static memory (``mode="reduce-overhead"``) it is one array per graph: its
  static buffers and constants never move, so their slots are filled once,
  when the graph is loaded, and the Python wrapper allocates only the
  outputs.  Otherwise each call gets a fresh array (a graph may then be
  re-entered) with the constants' slots filled, and allocates its buffers
  as the Python wrapper does, but for the buffers that nothing reads after
  their run: those are windows of one ``workspace`` allocation of the call.
  Inputs, buffers and the results of Python steps are set before the run
  that first reads them, in one slice.
* **Outputs.**  Every output is a fresh tensor on each call, as
  ``static_memory`` already gives.  PyTorch's CUDA graphs hand back their
  static outputs, which the next replay overwrites.  Fresh outputs cost one
  allocation each and keep eager's semantics.
* **BLAS.**  The runs call ``cblas_sgemm`` / ``cblas_dgemm`` of the BLAS
  numpy ships (``find_blas``), through pointers given to the library when it
  is loaded: the generated code links no BLAS.  As in eager ``mm``
  (``native.matmul``), BLAS runs single-threaded, and a large product is
  split among the intra-op threads (OpenMP here): its rows or columns, or a
  ``bmm``'s matrices.  An operand BLAS cannot
  read with a transpose flag and a leading dimension (an expanded one, say),
  another dtype, or no BLAS found leaves the product a Python step.
* **Rounding.**  The product is BLAS's ``gemm``, as in eager, where numpy's
  ``matmul`` calls the same ``gemm`` for such operands (or, for a few shapes,
  ``gemv``/``syrk``/its own loop); so compiled products agree with eager's
  within float rounding, and are compared with a tolerance.
"""
from __future__ import annotations

import ctypes
import functools
import os
from typing import NamedTuple

from ..._core import dtype as dt
from ..._core.allocator import storage_nbytes
from ..._ops.kernels import native
from .. import config
from ..ir import ExternKernel, c_expr, is_one, is_symbolic
from ..scheduler import FusedKernel
from .cpp import C_TYPES, sizes_used

_C_KEYWORDS = frozenset((
    "auto break case char const continue default do double else enum extern float for goto "
    "if inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while bool true false p i").split())


class Blas(NamedTuple):
    """cblas's ``sgemm`` and ``dgemm`` in a loaded library: their addresses and
    the C type of their integer arguments."""
    path: str
    sgemm: int
    dgemm: int
    int_type: str


# (prefix, suffix) of cblas symbols: scipy-openblas (numpy's wheels) names its
# 64-bit-integer interface scipy_cblas_sgemm64_
_CBLAS_NAMES = (("scipy_cblas_", "64_"), ("cblas_", "64_"), ("scipy_cblas_", ""), ("cblas_", ""))


def _blas_paths():
    """numpy's bundled BLAS, then any BLAS library already loaded in the process
    (a numpy built against the system's)."""
    yield from native.numpy_blas_paths()
    try:
        with open("/proc/self/maps") as maps:
            mapped = {line.split()[-1] for line in maps if "blas" in line and ".so" in line}
    except OSError:
        return
    yield from sorted(mapped)


@functools.cache
def find_blas() -> Blas | None:
    """The cblas gemm functions the generated C calls; None when there are none."""
    for path in _blas_paths():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in _CBLAS_NAMES:
            sgemm = getattr(library, f"{prefix}sgemm{suffix}", None)
            dgemm = getattr(library, f"{prefix}dgemm{suffix}", None)
            if sgemm is not None and dgemm is not None:
                address = lambda fn: ctypes.cast(fn, ctypes.c_void_p).value
                return Blas(path, address(sgemm), address(dgemm),
                            "int64_t" if suffix == "64_" else "int")
    return None


# -- matrix products ---------------------------------------------------------------------


def _blas_operand(rows: int, cols: int, row_stride: int, col_stride: int):
    """How row-major BLAS reads a ``rows x cols`` matrix with these strides:
    ``("CblasNoTrans", ld)`` or ``("CblasTrans", ld)``; None when no leading
    dimension describes it (an expanded or a sliced-both-ways matrix)."""
    if col_stride == 1 or cols == 1:
        ld = row_stride if rows > 1 else cols
        if ld >= cols:
            return "CblasNoTrans", ld
    if row_stride == 1 or rows == 1:
        ld = col_stride if cols > 1 else rows
        if ld >= rows:
            return "CblasTrans", ld
    return None


class MatrixProduct:
    """An ``mm`` or ``bmm`` step as BLAS calls: ``C = op(A) op(B)`` for each
    matrix of the batch, C row-major."""

    SUFFIX = {dt.float32: "f32", dt.float64: "f64"}

    def __init__(self, step, operands, batch, m, n, k, output):
        self.step, self.batch, self.m, self.n, self.k = step, batch, m, n, k
        self.operands = operands        # [(buffer, offset, batch stride, trans, ld)] of A, B
        self.output = output            # (offset, batch stride, ld) of C

    @classmethod
    def of(cls, step):
        """The product ``step`` computes, when BLAS can; else None."""
        from glasstorch import ops
        aten = ops.aten
        batched = {aten.mm.default: False, aten.bmm.default: True}.get(step.op)
        if batched is None or step.kwargs or step.layout is None or \
                step.layout.dtype not in cls.SUFFIX:
            return None
        a, b = step.args
        if a.layout.dtype is not step.layout.dtype or b.layout.dtype is not step.layout.dtype:
            return None
        lead = 1 if batched else 0
        batch = step.layout.size[0] if batched else 1
        (m, k), n = a.layout.size[lead:], b.layout.size[-1]
        if 0 in (batch, m, n, k):
            return None
        operands = []
        for arg in (a, b):
            lay = arg.layout
            read = _blas_operand(*lay.size[lead:], *lay.stride[lead:])
            if read is None:
                return None
            operands.append((arg.storage().name, lay.offset, lay.stride[0] if batched else 0,
                             *read))
        out = step.layout
        written = _blas_operand(m, n, *out.stride[lead:])
        if written is None or written[0] != "CblasNoTrans":
            return None       # (ATen lays products out row-major: not seen)
        return cls(step, operands, batch, m, n, k,
                   (out.offset, out.stride[0] if batched else 0, written[1]))

    def buffers(self) -> list:
        """The buffers the product reads and writes."""
        return [name for name, *_ in self.operands] + [self.step.name]

    def c_lines(self) -> list:
        """The C of the product: one ``gt_mm`` call, or a loop of gemms for a batch."""
        (a, a_off, a_bs, ta, lda), (b, b_off, b_bs, tb, ldb) = self.operands
        c_off, c_bs, ldc = self.output

        def at(name, offset, batch_stride):
            terms = [_c_name(name)] + ([f"({c_expr(offset)})"] if _nonzero(offset) else []) + \
                ([f"({c_expr(batch_stride)}) * i"]
                 if not is_one(self.batch) and _nonzero(batch_stride) else [])
            return " + ".join(terms)
        lda, ldb, ldc = map(c_expr, (lda, ldb, ldc))
        shape = f"{ta}, {tb}, {c_expr(self.m)}, {c_expr(self.n)}, {c_expr(self.k)}"
        a, b, c = at(a, a_off, a_bs), at(b, b_off, b_bs), at(self.step.name, c_off, c_bs)
        if is_one(self.batch):
            suffix = self.SUFFIX[self.step.layout.dtype]
            return [f"gt_mm_{suffix}({shape}, {a}, {lda}, {b}, {ldb}, {c}, {ldc});"]
        gemm = "gt_sgemm" if self.step.layout.dtype is dt.float32 else "gt_dgemm"
        work = c_expr(self.batch * self.m * self.n * self.k)   # the matrices shared among threads
        return [f"#pragma omp parallel for if({work} >= {native.MIN_PARALLEL_MATMUL})",
                f"for (int64_t i = 0; i < {c_expr(self.batch)}; i++)   "
                "/* bmm: a gemm per matrix */",
                f"    {gemm}(CblasRowMajor, {shape}, 1, {a}, {lda}, {b}, {ldb}, 0, {c}, {ldc});"]


def _nonzero(n) -> bool:
    return is_symbolic(n) or n != 0


def blas_prelude(blas: Blas, prefix: str, dtypes) -> str:
    """The gemm functions of ``dtypes`` (given to the library by
    ``<prefix>_set_blas`` when it loads) and ``gt_mm_<type>``, a product
    threaded as eager's."""
    parts = [f"""
/* BLAS: cblas gemm of {os.path.basename(blas.path)}, given by {prefix}_set_blas */
#include <omp.h>
typedef {blas.int_type} gt_blasint;
enum {{ CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112 }};
"""]
    setters = []
    for dtype, letter in ((dt.float32, "s"), (dt.float64, "d")):
        if dtype not in dtypes:
            continue
        ctype, suffix = C_TYPES[dtype], MatrixProduct.SUFFIX[dtype]
        parts.append(f"""typedef void (*gt_{letter}gemm_fn)(int, int, int, gt_blasint, gt_blasint,
    gt_blasint, {ctype}, const {ctype} *, gt_blasint, const {ctype} *, gt_blasint, {ctype},
    {ctype} *, gt_blasint);
static gt_{letter}gemm_fn gt_{letter}gemm;

/* C = op(A) op(B), row-major: a product of at least {native.MIN_PARALLEL_MATMUL} multiply-adds
   is split among the OpenMP threads along the longer side of C, each block one
   single-threaded gemm: rows (eager's matmul), or, for a wide C of few rows
   (a small batch times a weight), columns, so that each thread reads only its
   part of B */
static void gt_mm_{suffix}(int ta, int tb, int64_t m, int64_t n, int64_t k,
                       const {ctype} *a, int64_t lda, const {ctype} *b, int64_t ldb,
                       {ctype} *c, int64_t ldc)
{{
    int64_t side = m >= n ? m : n;
    int threads = m * n * k >= {native.MIN_PARALLEL_MATMUL} ? omp_get_max_threads() : 1;
    if (threads > side) threads = (int)side;
    if (threads < 2) {{
        gt_{letter}gemm(CblasRowMajor, ta, tb, m, n, k, 1, a, lda, b, ldb, 0, c, ldc);
        return;
    }}
    #pragma omp parallel for num_threads(threads)
    for (int t = 0; t < threads; t++) {{
        int64_t lo = side * t / threads, hi = side * (t + 1) / threads;
        if (m >= n) {{
            const {ctype} *rows = ta == CblasNoTrans ? a + lo * lda : a + lo;
            gt_{letter}gemm(CblasRowMajor, ta, tb, hi - lo, n, k, 1, rows, lda, b, ldb, 0,
                      c + lo * ldc, ldc);
        }} else {{
            const {ctype} *cols = tb == CblasNoTrans ? b + lo : b + lo * ldb;
            gt_{letter}gemm(CblasRowMajor, ta, tb, m, hi - lo, k, 1, a, lda, cols, ldb, 0,
                      c + lo, ldc);
        }}
    }}
}}
""")
        setters.append(f"gt_{letter}gemm = (gt_{letter}gemm_fn){letter}gemm;")
    parts.append(f"void {prefix}_set_blas(void *sgemm, void *dgemm)\n{{\n    "
                 + " ".join(setters) + "\n}\n")
    return "\n".join(parts)


# -- the wrapper ------------------------------------------------------------------------


class Run:
    """Consecutive steps that C runs: kernels, matrix products, allocations."""

    def __init__(self):
        self.name = None         # its C function (None: it only allocates)
        self.last = None         # the index of its last step
        self.allocated = []      # (buffer, layout) its steps allocate, in order
        self.touched = {}        # the buffers its C reads or writes, in order (a set)
        self.products = []       # its MatrixProducts
        self.statements = []     # its C

    def add(self, index: int, step, product, code, kernel_params: dict) -> None:
        self.last = index
        if isinstance(step, FusedKernel):
            self.allocated += [(n.name, n.layout) for n in code._kernel_buffers(step)]
            params = [name for name, _ in kernel_params[step.name]]
            self.statements.append(f"{step.name}({', '.join(map(_c_name, params))});")
            self.touched.update(dict.fromkeys(params))
        else:
            self.allocated.append((step.name, step.layout))
        if product is not None:
            self.products.append(product)
            self.statements += product.c_lines()
            self.touched.update(dict.fromkeys(product.buffers()))


class CWrapper:
    """The C runs of a graph and the Python wrapper that calls them; made by
    ``WrapperCode`` when ``config.c_wrapper`` is on, and used when there is a run."""

    def __init__(self, code, outputs: set):
        self.code, self.graph, self.outputs = code, code.graph, outputs
        # one library per graph: its names need not tell graphs apart, and the same
        # kernels in another graph (or process) must make the same source, the cache's key
        self.prefix = "graph"
        self.blas = find_blas()
        self.segments = self._segments()
        self.runs = [s for s in self.segments if isinstance(s, Run) and s.statements]
        for i, run in enumerate(self.runs):
            run.name = f"{self.prefix}_run_{i}"
            run.touched.update(dict.fromkeys(sizes_used(run.statements, self.graph.size_sources)))
        self.product_dtypes = {p.step.layout.dtype for run in self.runs for p in run.products}
        self.slots = {}             # buffer name -> its index in data_ptrs
        self.fixed = []             # buffers whose slot is filled once (static, constants)
        self.c_source = self.python_source = ""
        if self.runs:
            self._assign_slots()
            self.c_source = self._c()
            self.python_source = self._python()

    def _segments(self) -> list:
        """The steps in order: Runs, and the other steps (Python calls) alone, as
        ``(index, step)``."""
        segments, kernel_params = [], dict(self.code.kernels)
        for i, step in enumerate(self.code.scheduler.steps):
            product = None
            if isinstance(step, ExternKernel):
                product = MatrixProduct.of(step) if self.blas else None
                if product is None:
                    segments.append((i, step))
                    continue
            if not segments or not isinstance(segments[-1], Run):
                segments.append(Run())
            segments[-1].add(i, step, product, self.code, kernel_params)
        return segments

    def _assign_slots(self):
        """Under static memory, the memory the runs allocate is static but for
        the outputs.  Slots: first the buffers that change per call, run by
        run, so that a run's new pointers are one slice; then those that never
        move."""
        for segment in self.segments:
            if isinstance(segment, Run) and config.static_memory:
                self.code.static.update((name, layout) for name, layout in segment.allocated
                                        if name not in self.outputs and
                                        not layout.is_symbolic())
        for run in self.runs:
            for name in run.touched:
                if name in self.code.static or name in self.graph.constants:
                    if name not in self.fixed:
                        self.fixed.append(name)
                elif name not in self.slots:
                    self.slots[name] = len(self.slots)
        for name in self.fixed:
            self.slots[name] = len(self.slots)

    # -- C -----------------------------------------------------------------------------

    def _c(self) -> str:
        parts = ["\n/* the graph's C wrapper: each run of kernels "
                 "and matrix products is\n   one call; p[i] is the data of buffer i of "
                 "data_ptrs */"]
        if self.product_dtypes:
            parts.append(blas_prelude(self.blas, self.prefix, self.product_dtypes))
        for run in self.runs:
            decls = [f"int64_t {name} = (int64_t)(intptr_t)p[{self.slots[name]}];"
                     if name in self.graph.size_sources else
                     f"{C_TYPES[self.graph.buffer_dtype(name)]} *{_c_name(name)} = "
                     f"p[{self.slots[name]}];" for name in run.touched]
            body = "\n".join(f"    {line}" for line in decls + run.statements)
            parts.append(f"void {run.name}(void **p)\n{{\n{body}\n}}\n")
        return "\n".join(parts)

    # -- Python ------------------------------------------------------------------------

    def _python(self) -> str:
        from .wrapper import _alloc, _value, with_sizes
        code, graph = self.code, self.graph
        lines = [f"# kernels: {', '.join(k for k, _ in code.kernels) or 'none'}",
                 f"# C wrapper: {', '.join(run.name for run in self.runs)} "
                 f"(data_ptrs: the buffers' data pointers)", "", "", "def call(args):"]
        names = list(graph.gm_placeholders)
        if names:
            lines.append(f"    {', '.join(names)}, = args")
        lines.append("    args.clear()")
        if not config.static_memory:      # buffers move from call to call: pointers per call
            lines.append("    data_ptrs = pointer_array()")
        last_use = code._last_uses(self.outputs)
        bound, pointed = set(names), set(self.fixed)
        for segment in self.segments:
            if isinstance(segment, Run):
                done = segment.last
                workspace = self._workspace(segment, last_use)
                if workspace:
                    lines += [f"    workspace = empty_strided(({workspace.pop(None)},), (1,), "
                              f"torch.uint8)   # {', '.join(workspace)}",
                              "    base = data_ptr(workspace)"]
                for name, layout in segment.allocated:
                    if name not in code.static and name not in workspace:
                        lines.append(f"    {name} = {_alloc(layout)}")
                        bound.add(name)
                if segment.name is None:
                    continue
                new = [name for name in segment.touched if name not in pointed]
                pointed.update(new)
                lines += _set_pointers(new, self.slots[new[0]], workspace,
                                       graph.size_sources) if new else []
                lines.append(f"    {segment.name}(data_ptrs)")
                if workspace:
                    lines.append("    del workspace")
            else:
                done, step = segment
                for buf in step.inputs():     # a Python step reads static buffers by name
                    if buf.name in code.static and buf.name not in bound:
                        lines.append(f"    {buf.name} = static_{buf.name}")
                        bound.add(buf.name)
                lines += code._extern_lines(step)
                bound.update([step.name] + [out.name for out in code._multi_outputs(step)])
            dead = sorted(n for n, last in last_use.items() if last <= done and n in bound)
            if dead:
                lines.append(f"    del {', '.join(dead)}")
                bound.difference_update(dead)
        rendered = ", ".join(_value(v) for v in graph.outputs)
        lines.append(f"    return ({rendered}{',' if len(graph.outputs) == 1 else ''})")
        return "\n".join(with_sizes(lines, graph.size_sources)) + "\n"

    def _workspace(self, run: Run, last_use: dict) -> dict:
        """The buffers ``run`` allocates that are dead once it returns (no
        output, no Python step reads them), placed in one allocation of the
        call: name -> byte offset, each a multiple of ``_ALIGN_TO``, and None ->
        the bytes in all.  One allocation and one pointer instead of one each
        (PyTorch's wrapper plans buffers into pools too).  Static memory needs
        none; fewer than two such buffers gain nothing."""
        if config.static_memory or run.name is None:
            return {}
        inside = [(name, layout) for name, layout in run.allocated
                  if last_use.get(name, run.last + 1) <= run.last and not layout.is_symbolic()]
        if len(inside) < 2:
            return {}
        offsets, at = {}, 0
        for name, layout in inside:
            offsets[name] = at
            nbytes = storage_nbytes(tuple(layout.size), layout.dtype.itemsize,
                                    tuple(layout.stride))
            at += -(-nbytes // _ALIGN_TO) * _ALIGN_TO
        offsets[None] = at
        return offsets

    # -- loading -------------------------------------------------------------------------

    def bind(self, library, namespace: dict) -> None:
        """The wrapper's globals (``namespace``, its static buffers made) given
        the runs and ``data_ptrs`` with its fixed slots filled; the library
        given its BLAS."""
        if self.product_dtypes:
            getattr(library, f"{self.prefix}_set_blas")(ctypes.c_void_p(self.blas.sgemm),
                                                        ctypes.c_void_p(self.blas.dgemm))
        fixed = [(self.slots[name], (namespace[f"static_{name}"] if name in self.code.static
                                     else namespace[name]).data_ptr()) for name in self.fixed]
        pointers = ctypes.c_void_p * len(self.slots)

        def pointer_array():
            """A fresh ``data_ptrs`` with the fixed slots filled."""
            array = pointers()
            for slot, address in fixed:
                array[slot] = address
            return array
        namespace["data_ptrs"], namespace["pointer_array"] = pointer_array(), pointer_array
        for run in self.runs:
            fn = getattr(library, run.name)
            fn.argtypes = [ctypes.c_void_p]
            fn.restype = None
            namespace[run.name] = fn


_ALIGN_TO = 64    # bytes: a workspace buffer's offset, as c10 aligns allocations


def _set_pointers(names: list, first: int, workspace: dict, sizes) -> list:
    """Python lines setting slots ``first, first + 1, ...`` of data_ptrs to the
    data of ``names`` (those in ``workspace`` at their offset from ``base``;
    a size symbol in ``sizes`` to its value)."""
    values = [(f"base + {workspace[name]}" if workspace[name] else "base") if name in workspace
              else name if name in sizes else f"data_ptr({name})" for name in names]
    if len(names) == 1:
        return [f"    data_ptrs[{first}] = {values[0]}"]
    values = [value + "," for value in values]
    return [f"    data_ptrs[{first}:{first + len(names)}] = (",
            *(f"        {' '.join(values[i:i + 4])}" for i in range(0, len(values), 4)), "    )"]


def _c_name(name: str) -> str:
    """A buffer's variable in a run (a C keyword gets a trailing ``_``)."""
    return name + "_" if name in _C_KEYWORDS else name
