"""Recording what runs: PyTorch's RecordFunction callbacks and the Kineto
collector (torch/csrc/profiler/collection.cpp, profiler_kineto.cpp), and the
``torch.ops.profiler`` ops behind ``record_function``
(torch/csrc/autograd/record_function_ops.cpp).

A ``Recorder`` is one profiling session.  While it records it listens at four
places, and each costs nothing while no recorder is active:

* the dispatcher's observers (``_dispatcher.dispatcher._observers``): every
  operator *call* is one range.  Redispatches are not: PyTorch's
  RecordFunction fires in ``Dispatcher::call`` only, so ``aten::linear``
  holds ``aten::t`` and ``aten::addmm``, the ops its decomposition calls, and
  an autograd kernel handing ``aten::mm`` down to the CPU kernel adds nothing;
* the backward engine (``autograd.engine.node_observers``): each node's step
  is a range ``autograd::engine::evaluate_function: MmBackward0`` holding a
  range ``MmBackward0`` around the node's ``apply``;
* ``record_function``: ``torch.ops.profiler._record_function_enter_new``
  opens a user-annotation range named by the label, ``_record_function_exit``
  closes it;
* with ``profile_memory``, the CPU allocator: each allocation and free is an
  instant ``[memory]`` event; with ``with_stack``, Python calls
  (``_python_tracer.py``).

A range is kept as a raw tuple of ``time.perf_counter_ns()`` stamps and what
describes it (the ``OpOverload``, its argument metadata with ``record_shapes``).
``stop()`` hands them over as a ``ProfilerResult``; names, FLOPs and
correlation ids are worked out there, after the recording, and
``autograd/profiler.py`` turns its events into ``FunctionEvent``s.
"""
from __future__ import annotations

import itertools
import threading
import time
from _thread import get_ident
from enum import Enum

from .._core import dispatch_key as dk
from .._core import dtype as _dtypes
from .._core import layout as _layout
from .._core.allocator import cpu_allocator
from .._core.tls import state as _tls
from .._dispatcher.dispatcher import _observers
from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd import graph as _graph
from ..library import Library
from . import _python_tracer

__all__ = ["ProfilerActivity", "DeviceType", "RecordScope", "_ExperimentalConfig", "Recorder",
           "ProfilerResult", "KinetoEvent", "TensorMetadata", "MEMORY_EVENT_NAME",
           "supported_activities"]

perf_counter_ns = time.perf_counter_ns


class ProfilerActivity(Enum):
    """``torch.profiler.ProfilerActivity`` (torch._C._profiler), same values."""

    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5


class DeviceType(Enum):
    """``torch.autograd.DeviceType`` (c10::DeviceType), same values."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    MTIA = 19
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    PrivateUse1 = 20


class RecordScope(Enum):
    """``torch.profiler.RecordScope`` (at::RecordScope): what opened a range."""

    FUNCTION = 0               # an operator call
    BACKWARD_FUNCTION = 1      # a backward node's apply
    TORCHSCRIPT_FUNCTION = 2
    KERNEL_FUNCTION_DTYPE = 3
    CUSTOM_CLASS = 4
    BUILD_FEATURE = 5
    LITE_INTERPRETER = 6
    USER_SCOPE = 7             # record_function
    STATIC_RUNTIME_OP = 8
    STATIC_RUNTIME_MODEL = 9


class _ExperimentalConfig:
    """``torch._C._profiler._ExperimentalConfig``.  glasstorch reads ``verbose``
    (each op's Python stack in ``FunctionEvent.stack``, with ``with_stack``),
    ``capture_overload_names`` and ``trace_only``; the rest is kept."""

    def __init__(self, profiler_metrics=(), profiler_measure_per_kernel=False, verbose=False,
                 performance_events=(), enable_cuda_sync_events=False, adjust_profiler_step=False,
                 disable_external_correlation=False, profile_all_threads=False,
                 capture_overload_names=False, record_python_gc_info=False,
                 expose_kineto_event_metadata=False, custom_profiler_config="",
                 adjust_timestamps=False, trace_only=False):
        self.profiler_metrics = list(profiler_metrics)
        self.profiler_measure_per_kernel = profiler_measure_per_kernel
        self.verbose = verbose
        self.performance_events = list(performance_events)
        self.enable_cuda_sync_events = enable_cuda_sync_events
        self.adjust_profiler_step = adjust_profiler_step
        self.disable_external_correlation = disable_external_correlation
        self.profile_all_threads = profile_all_threads
        self.capture_overload_names = capture_overload_names
        self.record_python_gc_info = record_python_gc_info
        self.expose_kineto_event_metadata = expose_kineto_event_metadata
        self.custom_profiler_config = custom_profiler_config
        self.adjust_timestamps = adjust_timestamps
        self.trace_only = trace_only


def supported_activities() -> set:
    """The activities a profiler can record here: the CPU (no device is)."""
    return {ProfilerActivity.CPU}


MEMORY_EVENT_NAME = "[memory]"
UINT64_MAX = _graph.UINT64_MAX

_AUTOGRAD_KEYS = frozenset(k for k in dk.DispatchKey
                           if k.name.startswith("Autograd") and not dk.is_alias(k))


def _peek_sequence_nr() -> int:
    """The sequence number the next autograd node will get
    (``at::sequence_number::peek()``)."""
    return _graph._sequence.__reduce__()[1][0]


# -- threads ------------------------------------------------------------------

class ThreadInfo:
    """A thread as the profiler names it: ``index`` counts from 1 in order of
    first appearance (``FunctionEvent.thread``); ``native_id`` is the OS id
    the Chrome trace shows."""

    __slots__ = ("index", "native_id", "name")
    _count = itertools.count(1)

    def __init__(self):
        self.index = next(ThreadInfo._count)
        self.native_id = threading.get_native_id()
        self.name = threading.current_thread().name


_threads: dict = {}   # threading.get_ident() -> ThreadInfo


def current_thread_info() -> ThreadInfo:
    ident = get_ident()
    info = _threads.get(ident)
    if info is None:
        info = _threads[ident] = ThreadInfo()
    return info


# -- what a range describes --------------------------------------------------------

class NamedRange:
    """A range that is not an operator call: a ``record_function`` label or a
    backward step (for an op the range's source is its ``OpOverload``)."""

    __slots__ = ("name", "scope", "forward_thread")

    def __init__(self, name, scope, forward_thread=0):
        self.name = name
        self.scope = scope
        self.forward_thread = forward_thread


class TensorMetadata:
    """A tensor argument as ``record_shapes`` keeps it (the tensor itself is
    not kept alive)."""

    __slots__ = ("shape", "strides", "dtype")

    def __init__(self, tensor):
        self.shape = tensor._shape
        self.strides = tensor._stride
        self.dtype = tensor.dtype


def _describe_argument(value):
    if isinstance(value, Tensor):
        return TensorMetadata(value)
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, Tensor) for v in value):
            return [None if v is None else TensorMetadata(v) for v in value]
        return tuple(value)
    return value


def _describe_inputs(op, args, kwargs) -> tuple:
    """Every schema argument of the call, defaults filled in, as PyTorch's
    RecordFunction receives the boxed stack."""
    described = []
    n = len(args)
    for i, argument in enumerate(op._schema.arguments):
        if i < n and not argument.kwarg_only:
            value = args[i]
        elif argument.name in kwargs:
            value = kwargs[argument.name]
        elif argument.has_default_value():
            value = argument.default_value
        else:
            value = None
        described.append(_describe_argument(value))
    return tuple(described)


# -- the recorder ----------------------------------------------------------------

class Recorder:
    """One profiling session: listens while started, returns a
    ``ProfilerResult`` when stopped.

    A range is the list
    ``[source, start_ns, end_ns, thread ident, sequence_nr, inputs, stack, below]``:
    ``source`` is the ``OpOverload`` or a ``NamedRange``, ``inputs`` the
    described arguments (``record_shapes``), ``stack`` the Python frames
    (``with_stack`` and a verbose config), ``below`` whether calls inside it
    run below autograd.  It is appended when it opens and
    gets its end when it closes (an end of 0: still open when recording stopped).
    """

    def __init__(self, *, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None):
        config = experimental_config or _ExperimentalConfig()
        self.record_shapes = record_shapes or with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.capture_overload_names = config.capture_overload_names
        self.stacks_on_events = with_stack and config.verbose
        self.ranges: list = []
        self.memory_events: list = []   # (time_ns, bytes, total_allocated, address, thread ident)
        self.python_tracer = _python_tracer.PythonTracer(self.stacks_on_events) \
            if with_stack else None
        self._open: dict = {}           # thread ident -> open ranges, innermost last
        self.metadata: dict = {}        # top-level trace keys -> JSON text
        self.start_ns = self.end_ns = 0

    # -- lifetime --

    def start(self) -> None:
        self.start_ns = perf_counter_ns()
        _active.append(self)
        _observers.append(self)
        _engine.node_observers.append(self)
        if self.profile_memory:
            _memory_hook.add(self)
        if self.python_tracer is not None:
            self.python_tracer.start(current_thread_info())

    def stop(self) -> "ProfilerResult":
        if self.python_tracer is not None:
            self.python_tracer.stop()
        if self.profile_memory:
            _memory_hook.remove(self)
        _engine.node_observers.remove(self)
        _observers.remove(self)
        _active.remove(self)
        self.end_ns = perf_counter_ns()
        return ProfilerResult(self)

    def _open_ranges(self, ident) -> list:
        """This thread's open ranges (the first time: an empty stack, and the
        thread gets its ``ThreadInfo``)."""
        current_thread_info()
        stack = self._open[ident] = []
        return stack

    def _python_stack(self):
        return self.python_tracer.current_stack() if self.stacks_on_events else None

    # -- the dispatcher observer: one range per operator call --

    def enter(self, op, kind, key, args, kwargs) -> None:
        if kind != "call":
            return
        ident = get_ident()
        stack = self._open.get(ident) or self._open_ranges(ident)
        # The sequence number autograd will give its next node, for a call
        # autograd handles (PyTorch: the key set holds an autograd key and grad
        # mode is on).  Inside a kernel below autograd PyTorch's calls carry no
        # autograd key (thread-local exclusion), glasstorch's do: so the
        # enclosing range decides.
        below = bool(stack) and stack[-1][7]
        autograd = key in _AUTOGRAD_KEYS and not below
        sequence_nr = _peek_sequence_nr() if autograd and _tls.grad_enabled else -1
        inputs = _describe_inputs(op, args, kwargs) if self.record_shapes else None
        frames = self.python_tracer.current_stack() if self.stacks_on_events else None
        record = [op, perf_counter_ns(), 0, ident, sequence_nr, inputs, frames, not autograd]
        stack.append(record)
        self.ranges.append(record)

    def exit(self, op, kind, key) -> None:
        if kind != "call":
            return
        end = perf_counter_ns()
        stack = self._open.get(get_ident())
        # (a call that began before this recorder started has no open range)
        if stack and stack[-1][0] is op:
            stack.pop()[2] = end

    # -- the engine observer: a backward step and its node's apply --

    def node_enter(self, node, what, args) -> None:
        name = node.name()
        seq = node._seq
        ident = get_ident()
        forward_thread = current_thread_info().index
        if what == "apply":
            source = NamedRange(name, RecordScope.BACKWARD_FUNCTION, forward_thread)
            inputs = tuple(None if g is None else TensorMetadata(g) for g in args[0]) \
                if self.record_shapes else None
        else:
            source = NamedRange(f"autograd::engine::evaluate_function: {name}",
                                RecordScope.FUNCTION, forward_thread)
            inputs = () if self.record_shapes else None
        record = [source, perf_counter_ns(), 0, ident, -1 if seq == UINT64_MAX else seq, inputs,
                  self._python_stack(), False]
        (self._open.get(ident) or self._open_ranges(ident)).append(record)
        self.ranges.append(record)

    def node_exit(self, node, what) -> None:
        end = perf_counter_ns()
        stack = self._open.get(get_ident())
        if stack and isinstance(stack[-1][0], NamedRange):
            stack.pop()[2] = end

    # -- RECORD_FUNCTION inside a kernel (dispatcher.function_range) --

    def function_enter(self, name, inputs) -> None:
        ident = get_ident()
        described = tuple(TensorMetadata(t) for t in inputs) if self.record_shapes else None
        record = [NamedRange(name, RecordScope.FUNCTION), perf_counter_ns(), 0, ident, -1,
                  described, self._python_stack(), True]
        (self._open.get(ident) or self._open_ranges(ident)).append(record)
        self.ranges.append(record)

    def function_exit(self, name) -> None:
        end = perf_counter_ns()
        stack = self._open.get(get_ident())
        if stack and isinstance(stack[-1][0], NamedRange) and stack[-1][0].name == name:
            stack.pop()[2] = end

    # -- record_function: user ranges may close in any order --

    def begin_user_range(self, name, args) -> list:
        inputs = None
        if self.record_shapes:
            inputs = () if args is None else (args,)
        current_thread_info()
        record = [NamedRange(name, RecordScope.USER_SCOPE), perf_counter_ns(), 0, get_ident(), -1,
                  inputs, self._python_stack(), False]
        self.ranges.append(record)
        return record

    def end_user_range(self, record) -> None:
        record[2] = perf_counter_ns()

    # -- memory --

    def memory_event(self, nbytes, address) -> None:
        current_thread_info()
        self.memory_events.append((perf_counter_ns(), nbytes, cpu_allocator.stats.current,
                                   address, get_ident()))


_active: list = []   # the recorders now recording


def _add_metadata_json(key: str, value: str) -> None:
    """``torch.autograd._add_metadata_json``: a top-level key of the traces
    being recorded (``value`` is JSON text)."""
    for recorder in _active:
        recorder.metadata[key] = value


# -- record_function's ops --------------------------------------------------------

class _RecordFunction:
    """``torch.classes.profiler._RecordFunction``: the handle
    ``_record_function_enter_new`` returns; it remembers which recorders
    opened a range for it."""

    __slots__ = ("name", "args", "ranges")

    def __init__(self, name, args):
        self.name = name
        self.args = args
        self.ranges = [(recorder, recorder.begin_user_range(name, args)) for recorder in _active]

    def end(self) -> None:
        ranges, self.ranges = self.ranges, []
        for recorder, token in ranges:
            recorder.end_user_range(token)

    def __str__(self):
        return "ScriptObject <__torch__.torch.classes.profiler._RecordFunction>"

    def __repr__(self):
        return f"<torch.ScriptObject object at {hex(id(self))}>"


_RECORD_FUNCTION_CLASS = "__torch__.torch.classes.profiler._RecordFunction"
_profiler_ops = Library("profiler", "DEF")
_profiler_ops.define(f"_record_function_enter_new(str name, str? args=None) -> "
                     f"{_RECORD_FUNCTION_CLASS}", alias_analysis="CONSERVATIVE")
_profiler_ops.define(f"_record_function_exit._RecordFunction({_RECORD_FUNCTION_CLASS} record) "
                     f"-> ()", alias_analysis="CONSERVATIVE")
_profiler_ops.impl("_record_function_enter_new",
                   lambda name, args=None: _RecordFunction(name, args), "CompositeExplicitAutograd")
_profiler_ops.impl("_record_function_exit._RecordFunction", lambda record: record.end(),
                   "CompositeExplicitAutograd")
PROFILER_OP_NAMES = frozenset({"profiler::_record_function_enter",
                               "profiler::_record_function_enter_new",
                               "profiler::_record_function_exit"})


# -- the CPU allocator, watched while some recorder profiles memory ---------------------

class _MemoryHook:
    """Wraps ``cpu_allocator``'s ``allocate``/``adopt``/``free`` (as instance
    attributes, removed again when the last memory-profiling recorder stops)
    so each allocation and free becomes a ``[memory]`` event.  ``free`` is
    told only the size, so a free's address is reported as 0."""

    def __init__(self):
        self.recorders: list = []

    def add(self, recorder) -> None:
        if not self.recorders:
            self._install()
        self.recorders.append(recorder)

    def remove(self, recorder) -> None:
        self.recorders.remove(recorder)
        if not self.recorders:
            for name in ("allocate", "adopt", "free"):
                cpu_allocator.__dict__.pop(name, None)

    def _install(self) -> None:
        allocate, adopt, free = cpu_allocator.allocate, cpu_allocator.adopt, cpu_allocator.free
        recorders = self.recorders

        def recorded(array):
            address = array.__array_interface__["data"][0]
            for recorder in recorders:
                recorder.memory_event(array.nbytes, address)
            return array

        cpu_allocator.allocate = lambda shape, np_dtype: recorded(allocate(shape, np_dtype))
        cpu_allocator.adopt = lambda array: recorded(adopt(array))

        def recorded_free(nbytes):
            free(nbytes)
            for recorder in recorders:
                recorder.memory_event(-nbytes, 0)

        cpu_allocator.free = recorded_free


_memory_hook = _MemoryHook()


# -- after the recording ---------------------------------------------------------------

_correlation_ids = itertools.count(1)   # "External id": unique across sessions, as in Kineto

_FLOP_OPS = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::conv2d",
                       "aten::mul", "aten::add"})


def _shape(value):
    return value.shape if isinstance(value, TensorMetadata) else None


def compute_flops(name, inputs) -> int:
    """Estimated floating-point operations of one call, for the ops PyTorch
    estimates (torch/csrc/profiler/util.cpp ``computeFlops``); 0 otherwise."""
    if name not in _FLOP_OPS or not inputs:
        return 0
    shapes = [_shape(v) for v in inputs]
    if name in ("aten::mm", "aten::addmm"):
        first, second = (shapes[0], shapes[1]) if name == "aten::mm" else (shapes[1], shapes[2])
        if first is None or second is None or len(first) != 2 or len(second) != 2:
            return 0
        return 2 * first[0] * first[1] * second[1]
    if name in ("aten::bmm", "aten::baddbmm"):
        first, second = (shapes[0], shapes[1]) if name == "aten::bmm" else (shapes[1], shapes[2])
        if first is None or second is None or len(first) != 3 or len(second) != 3:
            return 0
        return 2 * first[0] * first[1] * first[2] * second[2]
    if name == "aten::conv2d":
        return _conv2d_flops(shapes, inputs)
    first = shapes[0]              # aten::mul, aten::add: one per output element
    if first is None:
        return 0
    count = 1
    for size in first:
        count *= size
    return count


def _conv2d_flops(shapes, inputs) -> int:
    image, weight = shapes[0], shapes[1]
    if image is None or weight is None or len(image) != 4 or len(weight) != 4:
        return 0
    stride, padding, groups = (list(inputs[3]), list(inputs[4]), inputs[6]) \
        if len(inputs) >= 7 else ([1, 1], [0, 0], 1)
    stride = stride * 2 if len(stride) == 1 else stride
    padding = padding * 2 if len(padding) == 1 else padding
    batch, in_channels, height, width = image
    out_channels, _, kernel_h, kernel_w = weight
    out_h = (height + 2 * padding[0] - kernel_h) // stride[0] + 1
    out_w = (width + 2 * padding[1] - kernel_w) // stride[1] + 1
    return 2 * batch * out_h * out_w * kernel_h * kernel_w * in_channels * out_channels // groups


class KinetoEvent:
    """One recorded range or instant, named and numbered
    (``torch._C._autograd._KinetoEvent``'s fields as plain attributes)."""

    __slots__ = ("name", "overload_name", "start_ns", "end_ns", "thread", "sequence_nr", "scope",
                 "forward_thread", "is_user_annotation", "is_python_function", "inputs", "stack",
                 "correlation_id", "flops", "python_id", "python_parent_id", "nbytes",
                 "total_allocated", "address")

    def __init__(self, name, start_ns, end_ns, thread, *, overload_name="", sequence_nr=-1,
                 scope=RecordScope.FUNCTION, forward_thread=0, is_user_annotation=False,
                 is_python_function=False, inputs=None, stack=None, flops=0, python_id=-1,
                 python_parent_id=-1, nbytes=0, total_allocated=0, address=0):
        self.name = name
        self.overload_name = overload_name
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.thread = thread
        self.sequence_nr = sequence_nr
        self.scope = scope
        self.forward_thread = forward_thread
        self.is_user_annotation = is_user_annotation
        self.is_python_function = is_python_function
        self.inputs = inputs
        self.stack = stack
        self.correlation_id = 0
        self.flops = flops
        self.python_id = python_id
        self.python_parent_id = python_parent_id
        self.nbytes = nbytes
        self.total_allocated = total_allocated
        self.address = address

    @property
    def is_memory(self) -> bool:
        return self.name == MEMORY_EVENT_NAME

    # -- the arguments, as record_shapes reports them (empty lists without it) --

    def shapes(self) -> list:
        """One shape per argument; ``[]`` for non-tensors and tensor lists."""
        return [list(v.shape) if isinstance(v, TensorMetadata) else []
                for v in self.inputs or ()]

    def input_dims(self) -> list:
        """Like ``shapes``, with one shape per tensor of a tensor list ("Input Dims")."""
        return [_per_tensor(v, lambda t: list(t.shape)) for v in self.inputs or ()]

    def input_strides(self) -> list:
        return [_per_tensor(v, lambda t: list(t.strides)) for v in self.inputs or ()]

    def input_types(self) -> list:
        """c10's type names: ``float`` for a float32 tensor, ``Scalar``,
        ``ScalarList``, ``TensorList``; ``""`` for None and others."""
        return [_input_type(v) for v in self.inputs or ()]

    def concrete_inputs(self) -> list:
        """The values of scalar arguments (a dtype as its ScalarType number);
        None for tensors and the rest."""
        return [_concrete_value(v) for v in self.inputs or ()]


def _per_tensor(value, get):
    if isinstance(value, TensorMetadata):
        return get(value)
    if isinstance(value, list):    # a tensor list
        return [[] if t is None else get(t) for t in value]
    return []




# dtypes, layouts and memory formats reach kernels as c10 enum numbers
_ENUM_NUMBERS = {**{d: d.scalar_type for d in _dtypes.ALL_DTYPES}, _layout.strided: 0,
                 **{f: i for i, f in enumerate(_layout._BY_INDEX)}}
_ENUM_TYPES = (_dtypes.dtype, _layout.layout, _layout.memory_format)


def _input_type(value) -> str:
    if isinstance(value, TensorMetadata):
        return _dtypes.type_meta_name(value.dtype)
    if isinstance(value, list):
        return "TensorList"
    if isinstance(value, tuple):
        return "ScalarList"
    if isinstance(value, (bool, int, float, complex, *_ENUM_TYPES)):
        return "Scalar"
    return ""


def _concrete_value(value):
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, (bool, int, float, complex)):
        return value
    return _ENUM_NUMBERS.get(value) if isinstance(value, _ENUM_TYPES) else None


class ProfilerResult:
    """What one session recorded (``torch._C._autograd._ProfilerResult``):
    ``events()`` in start order (ops, labels, backward steps, Python calls,
    then the ``[memory]`` instants), ``save(path)`` for the Chrome trace.
    The raw ranges become named events the first time they are asked for."""

    def __init__(self, recorder: Recorder):
        self.trace_start_ns = recorder.start_ns
        self.trace_end_ns = recorder.end_ns
        self.record_shapes = recorder.record_shapes
        self.profile_memory = recorder.profile_memory
        self.with_flops = recorder.with_flops
        self.metadata = dict(recorder.metadata)
        self._recorder = recorder
        self._events = None

    def events(self) -> list:
        if self._events is None:
            self._events = self._name_events(self._recorder)
            self._recorder = None
        return self._events

    @staticmethod
    def _name_events(recorder) -> list:
        # record_function's own ops are not events (PyTorch leaves them out too), nor are
        # ranges still open when the recording stopped
        ranges = [_named_event(r, recorder) for r in recorder.ranges
                  if r[2] and (isinstance(r[0], NamedRange)
                               or r[0]._schema.name not in PROFILER_OP_NAMES)]
        if recorder.python_tracer is not None:
            ranges += [KinetoEvent(name, start, end, thread, is_python_function=True,
                                   python_id=python_id, python_parent_id=parent, stack=stack)
                       for name, start, end, thread, python_id, parent, stack
                       in recorder.python_tracer.finished]
        ranges.sort(key=lambda e: (e.start_ns, -e.end_ns))
        for event in ranges:
            event.correlation_id = next(_correlation_ids)
        return ranges + [KinetoEvent(MEMORY_EVENT_NAME, t, t, _threads[ident], nbytes=nbytes,
                                     total_allocated=total, address=address)
                         for t, nbytes, total, address, ident in recorder.memory_events]

    def save(self, path: str, metadata: dict | None = None) -> None:
        from ._chrome_trace import write_trace   # (it imports this module)
        write_trace(self, path, metadata or {})


def _named_event(raw, recorder) -> KinetoEvent:
    source, start, end, ident, sequence_nr, inputs, stack, _ = raw
    thread = _threads[ident]
    if isinstance(source, NamedRange):
        return KinetoEvent(source.name, start, end, thread, sequence_nr=sequence_nr,
                           scope=source.scope, forward_thread=source.forward_thread,
                           is_user_annotation=source.scope is RecordScope.USER_SCOPE,
                           inputs=inputs, stack=stack)
    schema = source._schema
    flops = compute_flops(schema.name, inputs) if recorder.with_flops else 0
    overload = schema.overload_name if recorder.capture_overload_names else ""
    return KinetoEvent(schema.name, start, end, thread, overload_name=overload,
                       sequence_nr=sequence_nr, inputs=inputs, stack=stack, flops=flops)
