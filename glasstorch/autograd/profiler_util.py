"""The profiler's results as Python objects (torch/autograd/profiler_util.py):
``FunctionEvent`` (one range), ``FunctionEventAvg`` (the ranges of one key
added up), ``EventList`` (``key_averages``, ``table``, ``total_average``,
the legacy ``export_chrome_trace``).

Times are microseconds (floats) from the start of the profile.  An event's
children are the events whose interval lies inside its own on the same
thread; "self" time is its time minus its children's, so across one tree the
self times add up to the root's total.
"""
from __future__ import annotations

import bisect
import itertools
import json
import math
from collections import defaultdict, namedtuple
from operator import attrgetter

from ..profiler._collector import DeviceType, MEMORY_EVENT_NAME, RecordScope

__all__ = ["EventList", "FormattedTimesMixin", "Interval", "Kernel", "FunctionEvent",
           "FunctionEventAvg", "MemRecordsAcc"]

OUT_OF_MEMORY_EVENT_NAME = "[OutOfMemory]"


class EventList(list):
    """A list of ``FunctionEvent``s (or of ``FunctionEventAvg``s, from
    ``key_averages``) with the summaries PyTorch offers."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False

    def __str__(self):
        return self.table()

    # -- the tree --

    def _build_tree(self) -> None:
        self._populate_cpu_children()
        self._remove_dup_nodes()
        self._set_backward_stacktraces()
        self._tree_built = True

    def _populate_cpu_children(self) -> None:
        """Parent = the innermost event whose interval contains this one's, per
        thread: sort by (start, -end) and keep a stack of open intervals."""
        events = sorted((e for e in self if not e.is_async and e.device_type == DeviceType.CPU),
                        key=attrgetter("thread"))
        for _, thread_events in itertools.groupby(events, key=lambda e: (e.thread, e.node_id)):
            open_events: list = []
            for event in sorted(thread_events,
                                key=lambda e: (e.time_range.start, -e.time_range.end)):
                while open_events:
                    parent = open_events[-1]
                    if event.time_range.start >= parent.time_range.end or \
                            event.time_range.end > parent.time_range.end:
                        open_events.pop()
                    else:
                        parent.append_cpu_child(event)
                        event.set_cpu_parent(parent)
                        break
                open_events.append(event)

    def _remove_dup_nodes(self) -> None:
        """An only child named like its parent (an op re-entered through a
        dispatch mode, say) is folded into the parent."""
        while True:
            removed = set()
            for index, event in enumerate(self):
                parent = event.cpu_parent
                if parent is not None and parent.name == event.name and \
                        len(parent.cpu_children) == 1:
                    parent.cpu_children = event.cpu_children
                    parent.kernels = event.kernels
                    for child in event.cpu_children:
                        child.cpu_parent = parent
                    removed.add(index)
            if not removed:
                return
            kept = [event for index, event in enumerate(self) if index not in removed]
            self.clear()
            self.extend(kept)

    def _set_backward_stacktraces(self) -> None:
        """Events inside a backward node get the stack of the forward op that
        created the node (same sequence number, forward thread)."""
        def backward_parent(event):
            while event is not None:
                if event.scope == RecordScope.BACKWARD_FUNCTION.value:
                    return event
                event = event.cpu_parent
            return None

        forward_stacks = {}
        for event in self:
            if backward_parent(event) is None and event.stack is not None:
                forward_stacks.setdefault((event.sequence_nr, event.thread), event.stack)
        for event in self:
            parent = backward_parent(event)
            if parent is not None:
                event.stack = forward_stacks.get((parent.sequence_nr, parent.fwd_thread), [])

    # -- summaries --

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None) -> str:
        """The events as PyTorch prints them; ``sort_by`` names an attribute
        (``cpu_time_total``, ``self_cpu_time_total``, ``count``,
        ``cpu_memory_usage`` ...), largest first."""
        return _build_table(self, sort_by=sort_by, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            profile_memory=self._profile_memory, with_flops=self._with_flops,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path) -> None:
        """The legacy trace: a JSON list of complete ("X") events."""
        events = [{"name": e.trace_name, "ph": "X", "ts": e.time_range.start,
                   "dur": e.time_range.elapsed_us(), "tid": e.thread, "pid": "CPU functions",
                   "args": {}}
                  for e in self if e.trace_name is not None]
        with open(path, "w") as f:
            json.dump(events, f)

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path: str, metric: str) -> None:
        """One line per event with a stack: ``outer;...;inner value`` (flame graphs)."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: "
                             + str(self.supported_export_stacks_metrics()))
        translate = str.maketrans(" ;\t\n", "____")
        attribute = metric.replace("cuda", "device").replace("xpu", "device") \
            .replace("privateuse1", "device")
        with open(path, "w") as f:
            for event in self:
                value = getattr(event, attribute)
                if event.stack and int(value) > 0:
                    frames = ";".join(entry.translate(translate) for entry in reversed(event.stack))
                    f.write(f"{frames} {int(value)}\n")

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False) -> "EventList":
        """One ``FunctionEventAvg`` per key: the name (and node, device, kind),
        plus input shapes / the top ``group_by_stack_n`` frames / the overload
        when asked."""
        if not self._tree_built:
            raise AssertionError("Expected tree to be built before calling key_averages")
        stats: dict = defaultdict(FunctionEventAvg)
        for event in self:
            key = [str(event.key), str(event.node_id), str(event.device_type),
                   str(event.is_legacy), str(event.is_user_annotation)]
            if group_by_overload_name:
                key.append(event.overload_name)
            if group_by_input_shapes:
                key.append(str(event.input_shapes))
            if group_by_stack_n > 0:
                key += event.stack[:group_by_stack_n]
            stats[tuple(key)].add(event)
        averages = EventList(stats.values(), use_device=self._use_device,
                             profile_memory=self._profile_memory, with_flops=self._with_flops)
        for average in averages:
            average.stack = average.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                average.input_shapes = ""
            if not group_by_overload_name:
                average.overload_name = ""
        return averages

    def total_average(self) -> "FunctionEventAvg":
        """All events added into one ``FunctionEventAvg`` with key "Total"."""
        total = FunctionEventAvg()
        for event in self:
            total += event
            total.key = None
        total.key = "Total"
        return total


# -- formatting --------------------------------------------------------------------

def _format_time(time_us) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us) -> str:
    if total_time_us == 0:
        if time_us != 0:
            raise AssertionError(f"Expected time_us == 0 but got {time_us}")
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes) -> str:
    for unit, scale in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= scale:
            return f"{nbytes * 1.0 / scale:.2f} {unit}"
    return f"{nbytes} B"


def _time_property(name):
    return property(lambda self: _format_time(getattr(self, name)))


class FormattedTimesMixin:
    """``*_str`` renderings and per-call averages of an event's times."""

    cpu_time_str = _time_property("cpu_time")
    device_time_str = _time_property("device_time")
    cpu_time_total_str = _time_property("cpu_time_total")
    device_time_total_str = _time_property("device_time_total")
    self_cpu_time_total_str = _time_property("self_cpu_time_total")
    self_device_time_total_str = _time_property("self_device_time_total")

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else 1.0 * self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else 1.0 * self.device_time_total / self.count


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


Kernel = namedtuple("Kernel", ["name", "device", "duration"])   # a device kernel (none on CPU)


class FunctionEvent(FormattedTimesMixin):
    """One profiled range: an op call, a ``record_function`` label, a backward
    step, a Python call or a ``[memory]`` instant."""

    def __init__(self, id, name, thread, start_us, end_us, overload_name=None, fwd_thread=None,
                 input_shapes=None, stack=None, scope=0, use_device=None, cpu_memory_usage=0,
                 device_memory_usage=0, is_async=False, is_remote=False, sequence_nr=-1,
                 node_id=-1, device_type=DeviceType.CPU, device_index=0, device_resource_id=None,
                 is_legacy=False, flops=None, trace_name=None, concrete_inputs=None,
                 kwinputs=None, is_user_annotation=False, is_python_function=False,
                 structured_input_shapes=None, structured_input_strides=None, input_dtypes=None,
                 external_id=0, python_id=-1, python_parent_id=-1):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels: list = []
        self.count = 1
        self.cpu_children: list = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.is_python_function = is_python_function
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1
        self.structured_input_shapes = structured_input_shapes
        self.structured_input_strides = structured_input_strides
        self.input_dtypes = input_dtypes
        self.external_id = external_id
        self.python_id = python_id
        self.python_parent_id = python_parent_id

    def append_kernel(self, name, device, duration) -> None:
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child) -> None:
        """Add a direct child (only direct children keep self times right)."""
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent) -> None:
        self.cpu_parent = parent

    @property
    def self_cpu_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_memory_usage - sum(child.cpu_memory_usage for child in self.cpu_children)

    @property
    def self_device_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.device_memory_usage - sum(child.device_memory_usage
                                              for child in self.cpu_children)

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us() if self.device_type == DeviceType.CPU else 0

    @property
    def self_cpu_time_total(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def device_time_total(self):
        """Device (CUDA) time: none on a CPU-only run."""
        if self.is_async or not self.use_device:
            return 0
        return sum(kernel.duration for kernel in self.kernels) + \
            sum(child.device_time_total for child in self.cpu_children)

    @property
    def self_device_time_total(self):
        if self.is_async or not self.use_device:
            return 0
        return self.device_time_total - sum(child.device_time_total
                                            for child in self.cpu_children)

    @property
    def key(self):
        return self.name

    def __repr__(self):
        device = self.use_device
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
                f"device_type={self.device_type} node_id={self.node_id} "
                f"cpu_time={self.cpu_time_str} start_us={self.time_range.start} "
                f"end_us={self.time_range.end} "
                f"cpu_children={str([child.id for child in self.cpu_children])} "
                f"{device}_time={self.device_time_str} name={self.name} thread={self.thread} "
                f"input_shapes={str(self.input_shapes)} cpu_memory_usage={self.cpu_memory_usage} "
                f"{device}_memory_usage={self.device_memory_usage} is_async={self.is_async} "
                f"is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(FormattedTimesMixin):
    """The events of one key added up (``count`` of them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0

    def add(self, other):
        if self.key is None:    # the first event: its identity becomes ours
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    __iadd__ = add

    def __repr__(self):
        device = "cuda" if not self.use_device else self.use_device
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_{device}_time="
                f"{self.self_device_time_total_str} {device}_time={self.device_time_str} "
                f"input_shapes={str(self.input_shapes)} cpu_memory_usage={self.cpu_memory_usage} "
                f"{device}_memory_usage={self.device_memory_usage}>")


class MemRecordsAcc:
    """The ``[memory]`` events sorted by time, to find those inside an interval."""

    def __init__(self, mem_records):
        self._mem_records = mem_records
        order = sorted(range(len(mem_records)), key=lambda i: mem_records[i][0].start_ns)
        self._indices = order
        self._start_nses = [mem_records[i][0].start_ns for i in order]

    def in_interval(self, start_ns, end_ns):
        first = bisect.bisect_left(self._start_nses, start_ns)
        last = bisect.bisect_right(self._start_nses, end_ns)
        for i in range(first, last):
            yield self._mem_records[self._indices[i]]


def _filter_stack_entry(entry) -> bool:
    """Leave the frames of the backward machinery out of stacks."""
    return not any(file in entry and function in entry for file, function in (
        ("autograd/__init__", "_make_grads"), ("autograd/__init__", "backward"),
        ("torch/tensor", "backward"), ("_tensor", "backward")))


def _filter_name(name) -> bool:
    """Names left out of the results (utility ops, the memory instants)."""
    return name in (MEMORY_EVENT_NAME, OUT_OF_MEMORY_EVENT_NAME,
                    "profiler::_record_function_enter", "profiler::_record_function_enter_new",
                    "profiler::_record_function_exit", "aten::is_leaf", "aten::output_nr",
                    "aten::_version")


def _rewrite_name(name, with_wildcard=False) -> str:
    """Steps of a profiler schedule aggregate as "ProfilerStep*"."""
    if with_wildcard and name.startswith("ProfilerStep#"):
        return "ProfilerStep*"
    return name


# -- the table -----------------------------------------------------------------------

_COLUMN_WIDTH = 12
_SPACING = 2
_FLOP_UNITS = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]


def _format_in_unit(time_us, default, time_unit) -> str:
    if time_unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if time_unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if time_unit == "us":
        return f"{time_us:.3f}us"
    return default


def _flops_scale(flops):
    """(multiplier, unit) for the smallest positive FLOP count."""
    unit = int(max(0, min(math.log10(flops) / 3, len(_FLOP_UNITS) - 1)))
    return 10.0 ** (-3 * unit), _FLOP_UNITS[unit]


def _trim_path(path, width) -> str:
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, with_flops=False,
                 profile_memory=False, top_level_events_only=False, time_unit=None) -> str:
    """PyTorch's profiler table: its columns, widths, separators and footer."""
    if len(events) == 0:
        return ""
    has_device_time = any(event.self_device_time_total > 0 for event in events)
    has_device_mem = any(event.self_device_memory_usage > 0 for event in events)
    use_device = events[0].use_device
    if not use_device and has_device_time:
        raise RuntimeError("use_device is None, but there is device performance data.")
    has_input_shapes = any(event.input_shapes is not None and len(event.input_shapes) > 0
                           for event in events)
    has_overload_names = any(event.overload_name is not None and len(event.overload_name) > 0
                             for event in events)
    if sort_by is not None:
        attribute = sort_by.replace("cuda", "device").replace("xpu", "device") \
            .replace("privateuse1", "device")
        events = EventList(sorted(events, key=lambda e: getattr(e, attribute), reverse=True),
                           use_device=use_device, profile_memory=profile_memory,
                           with_flops=with_flops)

    name_width = max(len(event.key) for event in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(event.input_shapes)) for event in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    stacks = [event.stack for event in events if event.stack is not None and len(event.stack) > 0]
    has_stack = len(stacks) > 0
    if has_stack:
        src_width = max(max(len(entry) for entry in stack) for stack in stacks) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    device_name = use_device.upper() if use_device is not None else "None"
    headers = ["Name"] + (["Overload Name"] if has_overload_names else [])
    headers += ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        headers += [f"Self {device_name}", f"Self {device_name} %", f"{device_name} total",
                    f"{device_name} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if use_device and has_device_mem:
            headers += [f"{device_name} Mem", f"Self {device_name} Mem"]
    headers.append("# of Calls")
    append_node_id = any(event.node_id != -1 for event in events)
    if append_node_id:
        headers.append("Node ID")

    columns = [(name_width, ">")] * (1 + has_overload_names) + \
        [(_COLUMN_WIDTH, ">")] * (len(headers) - 1 - has_overload_names)
    if has_input_shapes:
        headers.append("Input Shapes")
        columns.append((shapes_width, ">"))
    if has_stack:
        headers.append("Source Location")
        columns.append((src_width, "<"))
    if with_flops:
        raw_flops = [event.flops for event in events if event.flops > 0]
        if raw_flops:
            flops_scale, flops_unit = _flops_scale(min(raw_flops))
            headers.append(f"Total {flops_unit}")
            columns.append((_COLUMN_WIDTH, ">"))
        else:
            with_flops = False
    row_format = "".join("{: " + align + str(width) + "}" + " " * _SPACING
                         for width, align in columns)
    separator = "".join("-" * width + " " * _SPACING for width, _ in columns)
    line_length = sum(width + _SPACING for width, _ in columns) - _SPACING

    sum_self_cpu = 0
    sum_self_device = 0
    for event in events:
        sum_self_cpu += event.self_cpu_time_total
        if event.device_type == DeviceType.CPU and event.is_legacy:
            sum_self_device += event.self_device_time_total
        elif event.device_type in (DeviceType.CUDA, DeviceType.PrivateUse1, DeviceType.MTIA,
                                   DeviceType.XPU) and not event.is_user_annotation:
            sum_self_device += event.self_device_time_total

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]

    shown = 0
    for event in events:
        if shown == row_limit:
            break
        if top_level_events_only and event.cpu_parent is not None:
            continue
        shown += 1
        name = event.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        event.self_cpu_percent = _format_time_share(event.self_cpu_time_total, sum_self_cpu)
        event.total_cpu_percent = _format_time_share(event.cpu_time_total, sum_self_cpu) \
            if not event.is_async else 0
        row = [name]
        if has_overload_names:
            overload = event.overload_name
            if max_name_column_width is not None and len(overload) >= max_name_column_width - 3:
                overload = overload[:max_name_column_width - 3] + "..."
            row.append(overload)
        row += [event.self_cpu_percent,
                _format_in_unit(event.self_cpu_time_total, event.self_cpu_time_total_str,
                                time_unit),
                event.total_cpu_percent,
                _format_in_unit(event.cpu_time_total, event.cpu_time_total_str, time_unit),
                _format_in_unit(event.cpu_time, event.cpu_time_str, time_unit)]
        if has_device_time:
            event.total_device_percent = _format_time_share(event.self_device_time_total,
                                                            sum_self_device)
            row += [_format_in_unit(event.self_device_time_total,
                                    event.self_device_time_total_str, time_unit),
                    event.total_device_percent,
                    _format_in_unit(event.device_time_total, event.device_time_total_str,
                                    time_unit),
                    _format_in_unit(event.device_time, event.device_time_str, time_unit)]
        if profile_memory:
            row += [_format_memory(event.cpu_memory_usage),
                    _format_memory(event.self_cpu_memory_usage)]
            if use_device and has_device_mem:
                row += [_format_memory(event.device_memory_usage),
                        _format_memory(event.self_device_memory_usage)]
        row.append(event.count)
        if append_node_id:
            row.append(event.node_id)
        if has_input_shapes:
            row.append(str(event.input_shapes)[:shapes_width])
        # (PyTorch fills the FLOPs cell before the source cell, the reverse of
        # the header order; with both columns the two cells swap places)
        if with_flops:
            row.append("--" if event.flops <= 0 else f"{event.flops * flops_scale:8.3f}")
        if has_stack:
            row.append(_trim_path(event.stack[0], src_width) if len(event.stack) > 0 else "")
        lines.append(row_format.format(*row))
        if has_stack:
            blanks = [""] * (len(headers) - 1)
            for entry in event.stack[1:]:
                lines.append(row_format.format(*blanks, _trim_path(entry, src_width)))
            lines.append(row_format.format(*blanks, ""))

    lines.append(separator)
    lines.append("Self CPU time total: "
                 + _format_in_unit(sum_self_cpu, _format_time(sum_self_cpu), time_unit))
    if has_device_time:
        lines.append(f"Self {device_name} time total: "
                     + _format_in_unit(sum_self_device, _format_time(sum_self_device), time_unit))
    return "".join(line + "\n" for line in lines)
