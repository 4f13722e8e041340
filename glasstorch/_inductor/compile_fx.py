"""``torch._inductor.compile_fx``: Inductor's entry points.

``compile_fx(gm, example_inputs)`` is torch.compile's default backend: AOTAutograd
splits the Dynamo graph into forward and backward graphs of core ATen ops
(with Inductor's decompositions), and ``compile_fx_inner`` compiles each:

    GraphLowering (FX -> loop IR) -> Scheduler (fusion) -> WrapperCode (C + Python)
    -> codecache.load (cc, on-disk cache) -> the wrapper's ``call(args)``

Without a C compiler the graphs run as their ATen kernels (the graph's own
Python), so compiled code works everywhere, only slower.
"""
from __future__ import annotations

import ctypes
import itertools
import warnings

from .. import _logging
from .._core.device import device as Device
from .._ops.structured import empty_tensor
from .._tensor import Tensor
from . import autotune, codecache, config
from .codegen.wrapper import WrapperCode
from .graph import GraphLowering, graph_symbols
from .scheduler import Scheduler

_ids = itertools.count()
_CPU = Device("cpu")


def empty_strided(size, stride, dtype):
    """A new CPU tensor (no dispatch: the wrapper knows the geometry is valid)."""
    return empty_tensor(size, dtype, _CPU, stride)


# Tensor.data_ptr without the __torch_function__ check in front of it: the
# wrapper's buffers are plain tensors it made or was given (PyTorch's wrapper reads
# the pointer in C++, with no Python hook either)
data_ptr = Tensor.data_ptr.__wrapped__


def reinterpret(base, size, stride, offset):
    """A strided view of ``base``'s memory (Inductor's ``reinterpret_tensor``)."""
    return type(base)._make(base._storage, tuple(size), tuple(stride), base._offset + offset,
                            base.dtype, base.device, base._keys)


class CompiledGraph:
    """One graph, compiled: its IR, kernels and sources, and ``call(args)``."""

    def __init__(self, gm, name: str):
        self.graph = GraphLowering(gm, name=name).run()
        unbound = graph_symbols(gm) - set(self.graph.size_sources)
        if unbound:
            raise SymbolicSizesUnsupported(f"no input holds the sizes {sorted(unbound)}")
        self.scheduler = Scheduler(self.graph)
        if config.max_autotune and not self.graph.size_sources:   # (timed at fixed sizes)
            self.code, self.autotune_report = autotune.tuned_code(self.graph, self.scheduler, name)
        else:
            self.code, self.autotune_report = WrapperCode(self.graph, self.scheduler, name), None
        library = codecache.load(self.code.c_source) \
            if self.code.kernels or self.code.c_wrapper else None
        namespace = self._namespace(library)
        exec(compile(self.code.python_source, f"<inductor {name}>", "exec"), namespace)
        self.call = namespace["call"]

    def _namespace(self, library) -> dict:
        from glasstorch import ops
        import glasstorch
        namespace = {"empty_strided": empty_strided, "reinterpret": reinterpret,
                     "data_ptr": data_ptr,
                     "aten": ops.aten, "ops": ops, "torch": glasstorch,
                     "device": Device, "inf": float("inf"), "nan": float("nan")}
        namespace.update(self.graph.constants)
        namespace.update(self.code.externs)
        namespace.update((f"static_{name}", empty_strided(layout.size, layout.stride,
                                                          layout.dtype))
                         for name, layout in self.code.static.items())
        for name, params in self.code.kernels:
            fn = getattr(library, name)
            fn.argtypes = [ctypes.c_void_p if out is not None else ctypes.c_int64
                           for _, out in params]      # (None: a size)
            fn.restype = None
            namespace[name] = fn
        if self.code.c_wrapper:
            self.code.c_wrapper.bind(library, namespace)
        return namespace

    def __call__(self, args: list):
        return self.call(args)


class SymbolicSizesUnsupported(Exception):
    """A graph whose symbolic sizes the generated code cannot take as
    arguments (a size no input holds, one C cannot write)."""


def compile_fx_inner(gm, example_inputs=None, name: str = "0_inference"):
    """One AOT graph compiled; a boxed callable (``call(list_of_args)``).
    ``name`` is the graph's AOT id (``0_forward``, ``0_backward``).  A graph
    with symbolic sizes takes them as arguments (Note [Symbolic sizes] in
    ir.py), or else is compiled per shape (``PerShape``)."""
    if not codecache.available():
        from .._functorch.aot_autograd import make_boxed_func
        return make_boxed_func(gm.forward)
    try:
        compiled = CompiledGraph(gm, name)
    except codecache.CompileError as error:
        return _ran_as_aten(gm, error)
    except Exception as error:         # (what the symbolic lowering does not cover yet)
        if not graph_symbols(gm):
            raise
        _logging.trace("dynamic", _logging.current_compile_id,
                       f"Inductor: {name} is compiled per shape: {type(error).__name__}: {error}")
        call = PerShape(gm, name)
        call._boxed_call = True
        return call
    compile_id = _logging.current_compile_id
    if _logging.is_enabled("output_code") or config.debug:
        _logging.trace("output_code", compile_id, output_code_text(compiled))
    call = compiled.call
    call._boxed_call = True
    call.compiled_graph = compiled
    return call


class PerShape:
    """A graph with symbolic sizes that the generated code cannot take as
    arguments, compiled once per concrete geometry of its arguments: the
    nodes' sizes are propagated from the call's tensors (on FakeTensors),
    then the graph is lowered as a static one."""

    def __init__(self, gm, name: str):
        self.gm, self.name, self.compiled = gm, name, {}

    def __call__(self, args: list):
        key = tuple((tuple(a.shape), a.stride(), a.dtype) if isinstance(a, Tensor) else a
                    for a in args)
        call = self.compiled.get(key)
        if call is None:
            with _concrete_meta(self.gm, args):
                compiled = CompiledGraph(self.gm, f"{self.name}_{len(self.compiled)}")
            if _logging.is_enabled("output_code") or config.debug:
                _logging.trace("output_code", _logging.current_compile_id,
                               output_code_text(compiled))
            call = self.compiled[key] = compiled.call
        return call(args)


class _concrete_meta:
    """Each node's ``meta["val"]`` replaced, for the block, by its value on
    FakeTensors shaped like ``args``."""

    def __init__(self, gm, args):
        from .._subclasses.fake_tensor import FakeTensorMode
        from .._tensor import Tensor
        from ..fx.interpreter import Interpreter
        self.gm, self.saved = gm, {}
        mode = FakeTensorMode(allow_non_fake_inputs=True)
        fakes = [mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args]
        values = {}

        class Recorder(Interpreter):
            def run_node(self, n):
                values[n] = result = super().run_node(n)
                return result
        with mode:
            Recorder(gm).run(*fakes)
        self.values = values

    def __enter__(self):
        for node, value in self.values.items():
            self.saved[node] = node.meta.get("val")
            node.meta["val"] = value

    def __exit__(self, *exc):
        for node, value in self.saved.items():
            node.meta["val"] = value


def _ran_as_aten(gm, error):
    """A graph whose C the compiler rejected (a compiler without OpenMP or
    libmvec, or a code generator bug) runs as its ATen kernels, with a warning:
    compiled code must work on every machine, if slower."""
    from .._functorch.aot_autograd import make_boxed_func
    warnings.warn(f"Inductor: the C compiler failed, so this graph runs as its ATen "
                  f"kernels:\n{str(error)[:2000]}", RuntimeWarning, stacklevel=2)
    return make_boxed_func(gm.forward)


def output_code_text(compiled: CompiledGraph) -> str:
    """What ``TORCH_LOGS=output_code`` prints: the wrapper, then its kernels' C."""
    return (f"Output code: \n# AOT ID: ['{compiled.code.name}']\n"
            f"{compiled.code.python_source}\n# C kernels\n{compiled.code.c_source}")


def decompositions() -> dict:
    """Inductor's decomposition table: core ATen's, plus the composite
    backward ops that lower better as their parts; the ops with their own
    lowering (softmax, layer_norm, gelu) are kept whole."""
    from .._decomp import core_aten_decompositions, get_decompositions
    from glasstorch import ops
    aten = ops.aten
    from .lowering import lowerings
    table = dict(core_aten_decompositions())
    table.update(get_decompositions([
        aten._softmax_backward_data, aten._log_softmax_backward_data, aten.gelu_backward,
        aten.native_layer_norm_backward, aten.nll_loss_forward, aten.nll_loss_backward,
        aten.masked_fill, aten.split, aten.t, aten.transpose, aten.silu, aten.silu_backward,
        aten.sigmoid_backward, aten.tanh_backward, aten.threshold_backward, aten.mse_loss,
        aten.mse_loss_backward, aten.native_dropout_backward, aten.leaky_relu,
        aten.leaky_relu_backward, aten.hardtanh_backward, aten.elu, aten.elu_backward,
        aten.glu, aten.lerp, aten.rsub, aten.logsumexp, aten.clamp_min, aten.clamp_max,
        aten.hardsigmoid, aten.hardswish, aten.softplus, aten.mish, aten.ones_like,
        aten.zeros_like]))
    for op in list(table):
        if op in lowerings:
            del table[op]
    return table


def next_aot_id() -> int:
    """The number naming the next compiled graphs (``3_forward``, ``3_backward``)."""
    return next(_ids)


# what each torch.compile mode changes: max-autotune also takes reduce-overhead's static
# memory (PyTorch's turns on CUDA graphs), max-autotune-no-cudagraphs does not
MODES = {"reduce-overhead": {"static_memory": True},
         "max-autotune-no-cudagraphs": {"max_autotune": True},
         "max-autotune": {"max_autotune": True, "static_memory": True}}


def compile_fx(gm, example_inputs, config_patches=None, **kwargs):
    """torch.compile's ``inductor`` backend; ``config_patches`` (from the
    mode and options) hold for every graph it compiles, the backward too."""
    from .._dynamo.backends.registry import aot_eager
    aot_id = next_aot_id()
    patches = dict(config_patches or {})

    def compiler(kind):
        def compile_graph(graph, inputs):
            with config.patch(**patches):
                return compile_fx_inner(graph, inputs, f"{aot_id}_{kind}")
        return compile_graph
    return aot_eager(gm, example_inputs, fw_compiler=compiler("forward"),
                     bw_compiler=compiler("backward"), inference_compiler=compiler("inference"),
                     decompositions=decompositions(), **kwargs)


class InductorBackend:
    """``torch.compile(mode=..., options=...)``'s backend: Inductor with the
    mode's and the options' config (PyTorch's ``_TorchCompileInductorWrapper``)."""

    def __init__(self, mode=None, options=None):
        self.config_patches = {**MODES.get(mode or "default", {}), **(options or {})}
        for key in self.config_patches:
            _check_option(key)

    def __call__(self, gm, example_inputs, **kwargs):
        return compile_fx(gm, example_inputs, config_patches=self.config_patches, **kwargs)


def _check_option(key: str) -> None:
    target, attr = (config.cpp, key[4:]) if key.startswith("cpp.") else (config, key)
    if not hasattr(target, attr):
        known = sorted(k for k, v in vars(config).items()
                       if not k.startswith("_") and isinstance(v, (bool, int, float, str)))
        raise RuntimeError(f"Unexpected optimization option {key}, known options are {known}")
