"""``torch.autograd.profiler``: the profiler's backend and ``record_function``
(torch/autograd/profiler.py).

``profile`` starts a ``Recorder`` (``glasstorch/profiler/_collector.py``) on
enter and stops it on exit; the recorded ranges become ``FunctionEvent``s only
when something asks for them (``events``/``key_averages``/``table``), and the
Chrome trace is written from the raw recording.  ``torch.profiler.profile``
wraps this class, as in PyTorch.
"""
from __future__ import annotations

import uuid
import warnings
from contextlib import ContextDecorator
from time import perf_counter_ns

from .. import cuda as _cuda
from .._dispatcher.dispatcher import ops
from ..profiler._collector import DeviceType, ProfilerActivity, Recorder, _ExperimentalConfig
from .profiler_util import (EventList, FunctionEvent, MemRecordsAcc, MEMORY_EVENT_NAME,
                            _filter_name, _filter_stack_entry, _rewrite_name)

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "MemRecordsAcc",
           "kineto_available"]


def kineto_available() -> bool:
    """The Chrome traces are written in Kineto's layout, so: yes."""
    return True


_VALID_DEVICES = ("cuda", "xpu", "mtia", "hpu")


class profile:
    """Context manager recording the ops, ``record_function`` labels and
    backward steps run inside it; ``key_averages().table()`` summarizes them.

    ``use_device`` asks for device timings as well; glasstorch runs on the CPU
    only, so it warns and records CPU activity, as PyTorch does without a GPU.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        if not self.enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        self.use_device = use_device
        self._function_events = None
        self._old_function_events = None
        self._needs_processing = False
        self.entered = False
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.experimental_config = experimental_config or _ExperimentalConfig()
        self.kineto_results = None
        self.profiling_start_time_ns = self.profiling_end_time_ns = 0
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.activity_filters = activity_filters or {}
        self.trace_id = ""
        self._recorder = None
        if not use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
        if self.use_device is not None:
            if self.use_device not in _VALID_DEVICES:
                warnings.warn(f"The {self.use_device} is not a valid device option.",
                              stacklevel=2)
                self.use_device = None
            elif self.use_device in ("cuda", "xpu", "hpu"):
                if not (self.use_device == "cuda" and _cuda.is_available()):
                    warnings.warn(f"{self.use_device.upper()} is not available, disabling "
                                  f"{self.use_device.upper()} profiling", stacklevel=2)
                    self.use_cuda = False
                    self.use_device = None
            else:
                raise AssertionError("Legacy MTIA profiling is not supported. Requires "
                                     "use_kineto=True on MTIA devices.")
        self.kineto_activities = {ProfilerActivity.CPU} if use_cpu else set()
        if not self.kineto_activities:
            raise AssertionError("No activities specified for the profiler")
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")

    def create_trace_id(self) -> str:
        if self.custom_trace_id_callback:
            return self.custom_trace_id_callback()
        return f"{uuid.uuid4().int:032X}"

    # -- recording --

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def _prepare_trace(self) -> None:
        self.entered = True
        self.trace_id = self.create_trace_id()
        self._recorder = Recorder(record_shapes=self.record_shapes,
                                  profile_memory=self.profile_memory, with_stack=self.with_stack,
                                  with_flops=self.with_flops, with_modules=self.with_modules,
                                  experimental_config=self.experimental_config)
        self._recorder.metadata["trace_id"] = f'"{self.trace_id}"'

    def _start_trace(self) -> None:
        self.entered = True
        self._recorder.start()
        self.profiling_start_time_ns = perf_counter_ns()

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        if self._function_events and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        self._needs_processing = True
        self.profiling_end_time_ns = perf_counter_ns()
        self.kineto_results = self._recorder.stop()
        if self.acc_events and not self.experimental_config.trace_only:
            self._ensure_function_events()
        return False

    def __repr__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)

    # -- results --

    def _ensure_function_events(self) -> None:
        """Build the ``FunctionEvent``s (once per recording)."""
        if self.experimental_config.trace_only:
            raise RuntimeError("events() is not available when trace_only=True in "
                               "ExperimentalConfig. Use export_chrome_trace() instead.")
        if self._function_events is not None:
            return
        self._needs_processing = False
        parsed = self._parse_kineto_results(self.kineto_results) if self.kineto_results else []
        self._function_events = EventList(parsed, use_device=self.use_device,
                                          profile_memory=self.profile_memory,
                                          with_flops=self.with_flops)
        self._function_events._build_tree()
        if self._old_function_events and self.acc_events:
            self._function_events.extend(self._old_function_events)
            self._old_function_events = None

    @property
    def function_events(self):
        if self._function_events is None or self._needs_processing:
            self._ensure_function_events()
        return self._function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        self._ensure_function_events()
        return self._function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """Write the recording as a Chrome trace (Kineto's JSON layout)."""
        self.kineto_results.save(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total"):
        self._ensure_function_events()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self._function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._ensure_function_events()
        return self._function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                  group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        self._ensure_function_events()
        return self._function_events.total_average()

    total_average.__doc__ = EventList.total_average.__doc__

    @property
    def self_cpu_time_total(self):
        """The sum of all events' self CPU times (µs)."""
        self._ensure_function_events()
        return self._function_events.self_cpu_time_total

    def _parse_kineto_results(self, result) -> list:
        """``FunctionEvent``s from a recording, in (start, -end) order; memory
        instants count toward every range they happen in, and those outside
        every range become ``[memory]`` events of their own."""
        trace_start = result.trace_start_ns
        events = result.events()
        memory_records = [[event, False] for event in events if event.is_memory]
        memory = MemRecordsAcc(memory_records)
        function_events = []
        max_id = 0
        for event in events:
            if _filter_name(event.name):
                continue
            cpu_memory_usage = 0
            for record in memory.in_interval(event.start_ns, event.end_ns):
                cpu_memory_usage += record[0].nbytes
                record[1] = True
            function_event = FunctionEvent(
                id=event.correlation_id,
                name=_rewrite_name(event.name, with_wildcard=True),
                overload_name=event.overload_name,
                trace_name=_rewrite_name(event.name),
                thread=event.thread.index,
                start_us=(event.start_ns - trace_start) / 1000,
                end_us=(event.end_ns - trace_start) / 1000,
                fwd_thread=event.forward_thread,
                input_shapes=event.shapes(),
                concrete_inputs=event.concrete_inputs(),
                kwinputs={},
                stack=[entry for entry in event.stack or () if _filter_stack_entry(entry)],
                scope=event.scope.value,
                use_device=self.use_device,
                cpu_memory_usage=cpu_memory_usage,
                sequence_nr=event.sequence_nr,
                flops=event.flops,
                is_user_annotation=event.is_user_annotation,
                is_python_function=event.is_python_function,
                structured_input_shapes=event.input_dims(),
                structured_input_strides=event.input_strides(),
                input_dtypes=event.input_types(),
                external_id=event.correlation_id,
                python_id=event.python_id,
                python_parent_id=event.python_parent_id)
            max_id = max(max_id, function_event.id)
            function_events.append(function_event)
        for record, attributed in memory_records:
            if not attributed:
                max_id += 1
                start = (record.start_ns - trace_start) / 1000
                function_events.append(FunctionEvent(
                    id=max_id, name=MEMORY_EVENT_NAME, overload_name="", trace_name=None,
                    thread=record.thread.index, start_us=start, end_us=start,
                    fwd_thread=record.thread.index, input_shapes=[], stack=[], scope=0,
                    use_device=self.use_device, cpu_memory_usage=record.nbytes,
                    device_type=DeviceType.CPU))
        function_events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
        return function_events


class record_function(ContextDecorator):
    """Label a block (``with record_function("forward"):``) or a function
    (``@record_function("step")``): while a profiler records, the label is a
    range of its own (a user annotation) holding the ops run inside."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None

    def __enter__(self):
        self.record = ops.profiler._record_function_enter_new(self.name, self.args)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.run_callbacks_on_exit:
            return
        record = self.record
        if record is None:
            raise AssertionError("Expected record to be set")
        ops.profiler._record_function_exit._RecordFunction(record)
