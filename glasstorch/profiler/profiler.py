"""``torch.profiler.profile`` and its schedule (torch/profiler/profiler.py).

``profile`` wraps the backend ``torch.autograd.profiler.profile``: it adds
the activities argument, trace metadata, and the step schedule.  With a
``schedule``, each ``step()`` asks it what the next step is
(``ProfilerAction``: NONE, WARMUP, RECORD, RECORD_AND_SAVE) and moves between
those states; a recording cycle ends at RECORD_AND_SAVE, calls
``on_trace_ready(prof)``, and each step is a ``ProfilerStep#N`` label.
"""
from __future__ import annotations

import gzip
import os
import shutil
import tempfile
import warnings
from enum import Enum

from ..autograd import profiler as prof
from ._collector import ProfilerActivity, _add_metadata_json
from ._collector import supported_activities as _supported_activities

__all__ = ["supported_activities", "ProfilerAction", "schedule", "tensorboard_trace_handler",
           "profile"]

PROFILER_STEP_NAME = "ProfilerStep"
_WARNINGS_SHOWN: set = set()


def _warn_once(message) -> None:
    if message not in _WARNINGS_SHOWN:
        _WARNINGS_SHOWN.add(message)
        warnings.warn(message, stacklevel=3)


def supported_activities() -> set:
    """The activities this build can record: ``{ProfilerActivity.CPU}``."""
    return _supported_activities()


def _parse_activities(activities):
    """A set of activities and the per-activity filters (``{CUDA: [...]}`` items)."""
    parsed: set = set()
    filters: dict = {}
    for item in activities:
        if isinstance(item, ProfilerActivity):
            if item in parsed:
                raise ValueError(f"Activity {item} specified more than once")
            parsed.add(item)
        elif isinstance(item, dict):
            for key, names in item.items():
                if key in parsed:
                    raise ValueError(f"Activity {key} specified more than once")
                parsed.add(key)
                filters[key] = set(names)
        else:
            raise TypeError(f"Expected ProfilerActivity or dict, got {type(item)}")
    return parsed, filters


class _KinetoProfile:
    """The profiler without a schedule: ``start()``/``stop()`` one recording."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is not None:
            self.activities, self.activity_filters = _parse_activities(activities)
        else:
            self.activities, self.activity_filters = supported_activities(), {}
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.profiler: prof.profile | None = None
        self.use_device = None
        for activity, device in ((ProfilerActivity.CUDA, "cuda"), (ProfilerActivity.XPU, "xpu"),
                                 (ProfilerActivity.MTIA, "mtia"), (ProfilerActivity.HPU, "hpu")):
            if activity in self.activities:
                self.use_device = device
                break
        self.preset_metadata: dict = {}
        self._trace_metadata: dict = {}

    def start(self) -> None:
        self.prepare_trace()
        self.start_trace()

    def stop(self) -> None:
        self.stop_trace()

    def prepare_trace(self) -> None:
        if self.profiler is not None and not self.acc_events:
            _warn_once("Warning: Profiler clears events at the end of each cycle. Only events "
                       "from the current cycle will be reported. To keep events across cycles, "
                       "set acc_events=True.")
        if self.profiler is None or not self.acc_events:
            self.profiler = prof.profile(
                use_cpu=ProfilerActivity.CPU in self.activities, use_device=self.use_device,
                record_shapes=self.record_shapes, with_flops=self.with_flops,
                profile_memory=self.profile_memory, with_stack=self.with_stack,
                with_modules=self.with_modules, use_kineto=True,
                experimental_config=self.experimental_config, acc_events=self.acc_events,
                custom_trace_id_callback=self.custom_trace_id_callback,
                post_processing_timeout_s=self.post_processing_timeout_s,
                activity_filters=self.activity_filters or None)
        self.profiler._prepare_trace()

    def start_trace(self) -> None:
        if self.execution_trace_observer:
            self.execution_trace_observer.start()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        self.profiler._start_trace()
        for flag in ("profile_memory", "with_stack", "record_shapes", "with_modules",
                     "with_flops"):
            if getattr(self, flag):
                self.add_metadata_json(flag, "1")
        for key, value in self.preset_metadata.items():
            self.add_metadata_json(key, value)

    def stop_trace(self) -> None:
        if self.execution_trace_observer:
            self.execution_trace_observer.stop()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self.profiler.__exit__(None, None, None)

    def export_chrome_trace(self, path: str, use_python_export: bool = False):
        """Write the last recording as a Chrome trace (gzip-compressed if
        ``path`` ends in ``.gz``)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        if not path.endswith(".gz"):
            return self.profiler.export_chrome_trace(path, self._trace_metadata)
        with tempfile.TemporaryDirectory() as directory:
            plain = os.path.join(directory, "trace.json")
            self.profiler.export_chrome_trace(plain, self._trace_metadata)
            with open(plain, "rb") as source, gzip.open(path, "wb") as target:
                shutil.copyfileobj(source, target)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total"):
        """Stacks with ``metric`` per line, for flame graphs (needs with_stack)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        return self.profiler.export_stacks(path, metric)

    def toggle_collection_dynamic(self, enable: bool, activities) -> None:
        """Only CPU activity exists here, and it is always collected."""

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False):
        """The events grouped by name (and optionally input shapes, stack, overload)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def events(self):
        """The unaggregated ``FunctionEvent``s of the last recording."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        if self.experimental_config is not None and self.experimental_config.trace_only:
            raise RuntimeError("events() is not available when trace_only=True in "
                               "ExperimentalConfig. Use export_chrome_trace() instead.")
        return self.profiler.function_events

    def add_metadata(self, key: str, value: str) -> None:
        """A string entry at the top level of the trace."""
        self.add_metadata_json(key, '"' + value.replace('"', '\\"') + '"')

    def add_metadata_json(self, key: str, value: str) -> None:
        """An entry at the top level of the trace; ``value`` is JSON text."""
        self._trace_metadata[key] = value
        _add_metadata_json(key, value)

    def preset_metadata_json(self, key: str, value: str) -> None:
        """Metadata to add when the next recording starts."""
        self.preset_metadata[key] = value


class ProfilerAction(Enum):
    """What a schedule asks for at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """A schedule for ``profile``: skip ``skip_first`` steps, then cycles of
    ``wait`` idle, ``warmup`` and ``active`` recorded steps (the last one
    RECORD_AND_SAVE), ``repeat`` times (0: forever)."""
    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 \
            else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    """Without a schedule: record every step."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False):
    """An ``on_trace_ready`` that writes ``<worker>.<time_ns>.pt.trace.json``
    files into ``dir_name`` (TensorBoard's profiler plugin reads them)."""
    import socket
    import time

    def handler_fn(p) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        p.export_chrome_trace(os.path.join(dir_name, file_name),
                              use_python_export=use_python_export)
    return handler_fn


_A = ProfilerAction


class profile(_KinetoProfile):
    """``torch.profiler.profile``: a context manager recording ops,
    ``record_function`` labels, backward steps (and memory, Python calls,
    shapes, FLOPs when asked), following ``schedule`` when given::

        with profile(record_shapes=True) as prof:
            model(x).sum().backward()
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
        prof.export_chrome_trace("trace.json")

    ``ProfilerActivity.CUDA`` is accepted; with no GPU it warns and records
    the CPU only.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        if activities is not None:
            activities_set = set()
            for item in activities:
                if isinstance(item, ProfilerActivity):
                    activities_set.add(item)
                elif isinstance(item, dict):
                    activities_set.update(item.keys())
        else:
            activities_set = supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            if use_cuda:
                activities_set.add(ProfilerActivity.CUDA)
            else:
                activities_set.discard(ProfilerActivity.CUDA)
        if len(activities_set) == 0:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config,
                         execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events, custom_trace_id_callback=custom_trace_id_callback,
                         post_processing_timeout_s=post_processing_timeout_s)
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = bool(schedule)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn: prof.record_function | None = None
        self.current_action = self._checked_action(self.step_num)
        self._prev_schedule_action = self.current_action
        # (previous action, next action) -> what to do; None: the profiler stops
        record_and_save = [self.stop_trace, self._trace_ready]
        self.action_map = {
            (_A.NONE, _A.NONE): [],
            (_A.NONE, _A.WARMUP): [self.prepare_trace],
            (_A.NONE, _A.RECORD): [self.prepare_trace, self.start_trace],
            (_A.NONE, _A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (_A.WARMUP, _A.NONE): [lambda: warnings.warn("Incorrect schedule: WARMUP followed "
                                                         "by NONE"),
                                   self.start_trace, self.stop_trace],
            (_A.WARMUP, _A.WARMUP): [],
            (_A.WARMUP, _A.RECORD): [self.start_trace],
            (_A.WARMUP, _A.RECORD_AND_SAVE): [self.start_trace],
            (_A.RECORD, _A.NONE): [lambda: warnings.warn("Incorrect schedule: RECORD followed "
                                                         "by NONE"),
                                   self.stop_trace],
            (_A.RECORD, _A.WARMUP): [lambda: warnings.warn("Incorrect schedule: RECORD "
                                                           "followed by WARMUP"),
                                     self.stop_trace],
            (_A.RECORD, _A.RECORD): [],
            (_A.RECORD, _A.RECORD_AND_SAVE): [],
            (_A.RECORD_AND_SAVE, _A.NONE): record_and_save,
            (_A.RECORD_AND_SAVE, _A.WARMUP): record_and_save + [self.prepare_trace],
            (_A.RECORD_AND_SAVE, _A.RECORD): record_and_save + [self.prepare_trace,
                                                                self.start_trace],
            (_A.RECORD_AND_SAVE, _A.RECORD_AND_SAVE): record_and_save + [self.prepare_trace,
                                                                         self.start_trace],
            (_A.WARMUP, None): [self.start_trace, self.stop_trace],
            (_A.RECORD, None): record_and_save,
            (_A.RECORD_AND_SAVE, None): record_and_save,
        }

    def _checked_action(self, step) -> ProfilerAction:
        action = self.schedule(step)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                             "and must not be returned by a user-provided schedule")
        return action

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def start(self) -> None:
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function(f"{PROFILER_STEP_NAME}#{self.step_num}")
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)
        self.current_action = self._prev_schedule_action

    def step(self) -> None:
        """The next step begins: follow the schedule."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        previous = self.current_action
        self.step_num += 1
        self.current_action = self._checked_action(self.step_num)
        self._prev_schedule_action = self.current_action
        self._transit_action(previous, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function(f"{PROFILER_STEP_NAME}#{self.step_num}")
            self.step_rec_fn.__enter__()

    def set_custom_trace_id_callback(self, callback) -> None:
        self.custom_trace_id_callback = callback

    def get_trace_id(self):
        """The trace id of the current (or last) recording."""
        return None if self.profiler is None else self.profiler.trace_id

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, previous, current) -> None:
        for action in self.action_map.get((previous, current)) or ():
            action()
