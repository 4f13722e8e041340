"""The Chrome trace of a recording, in Kineto's JSON layout (what
``prof.export_chrome_trace(path)`` writes; chrome://tracing and Perfetto open
it).

Top level: ``schemaVersion``, ``deviceProperties``, the session's metadata
(``trace_id``, ``record_shapes`` ...), ``host_name``, ``displayTimeUnit``,
``baseTimeNanoseconds``, ``traceEvents``, ``traceName``.  Events:

* ``"M"`` metadata naming the process and its threads;
* ``"X"`` complete events, ``ts``/``dur`` in microseconds: ``cpu_op`` (ops
  and backward steps), ``user_annotation`` (``record_function``),
  ``python_function`` (``with_stack``);
* ``"s"``/``"f"`` flow pairs (``fwdbwd``) from the forward op to the backward
  node it created (same sequence number);
* ``"i"`` instants: ``[memory]`` (``cpu_instant_event``, with
  ``profile_memory``);
* the ``Trace`` span "PyTorch Profiler (0)" covering the whole recording.

``ts`` is ``perf_counter_ns()`` in microseconds (CLOCK_MONOTONIC on Linux, the
clock Kineto uses); ``baseTimeNanoseconds`` is that clock's zero in Unix time.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import time

from ._collector import RecordScope

__all__ = ["write_trace"]


def _us(ns: int) -> float:
    return round(ns / 1000, 3)


def write_trace(result, path: str, extra_metadata: dict) -> None:
    pid = os.getpid()
    events = result.events()
    start, end = result.trace_start_ns, result.trace_end_ns
    trace_events = _process_and_threads(pid, events, _us(start))
    trace_events += _events(pid, events, result.record_shapes)
    trace_events += [
        {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
         "tid": "PyTorch Profiler", "ts": _us(start), "dur": _us(end - start),
         "args": {"Op count": 0}},
        {"ph": "M", "name": "process_sort_index", "ts": _us(start), "pid": "Spans", "tid": 0,
         "args": {"sort_index": 536870912}},
        {"ph": "i", "s": "g", "name": "Iteration Start: PyTorch Profiler", "pid": "Traces",
         "tid": "Trace PyTorch Profiler", "ts": _us(start)},
        {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": _us(end)},
    ]
    trace = {"schemaVersion": 1, "deviceProperties": []}
    for key, text in {**result.metadata, **extra_metadata}.items():
        trace[key] = json.loads(text)
    trace["host_name"] = socket.gethostname()
    trace["displayTimeUnit"] = "ms"
    trace["baseTimeNanoseconds"] = time.time_ns() - time.perf_counter_ns()
    with open(path, "w") as f:   # one event per line: a readable file that stays small
        f.write(json.dumps(trace)[:-1] + ', "traceEvents": [\n')
        f.write(",\n".join(json.dumps(event) for event in trace_events))
        f.write(f"\n], \"traceName\": {json.dumps(path)}}}\n")


def _process_name() -> str:
    return os.path.basename(sys.executable).rstrip("0123456789.") or "python"


def _process_and_threads(pid, events, ts) -> list:
    name = _process_name()
    out = [{"ph": "M", "name": "process_name", "ts": ts, "pid": pid, "tid": 0,
            "args": {"name": name}},
           {"ph": "M", "name": "process_labels", "ts": ts, "pid": pid, "tid": 0,
            "args": {"labels": "CPU"}},
           {"ph": "M", "name": "process_sort_index", "ts": ts, "pid": pid, "tid": 0,
            "args": {"sort_index": pid}}]
    threads = {event.thread.native_id: event.thread for event in events}
    for tid, thread in sorted(threads.items()):
        label = name if thread.name == "MainThread" else thread.name
        out += [{"ph": "M", "name": "thread_name", "ts": ts, "pid": pid, "tid": tid,
                 "args": {"name": f"thread {tid} ({label})"}},
                {"ph": "M", "name": "thread_sort_index", "ts": ts, "pid": pid, "tid": tid,
                 "args": {"sort_index": tid}}]
    return out


def _concrete_text(value) -> str:
    """An argument value as c10 prints an IValue ("" for tensors and None)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{int(value)}." if value.is_integer() else repr(value)
    return str(value)


def _events(pid, events, record_shapes) -> list:
    """The ranges ("X", flows) and memory instants ("i"), with "Ev Idx" numbering."""
    forward_ops = {}     # sequence number -> the latest forward op carrying it
    for event in events:
        if event.sequence_nr >= 0 and event.scope is RecordScope.FUNCTION and \
                not event.name.startswith("autograd::engine::"):
            forward_ops[event.sequence_nr] = event
    flow_ids = {}        # id(event) -> flow id, for both ends of each flow
    for event in events:
        forward = forward_ops.get(event.sequence_nr)
        if event.scope is RecordScope.BACKWARD_FUNCTION and forward is not None and \
                id(forward) not in flow_ids:
            flow = len(flow_ids) // 2 + 1
            flow_ids[id(forward)] = flow_ids[id(event)] = flow

    out = []
    for index, event in enumerate(events):
        tid = event.thread.native_id
        if event.is_memory:
            out.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": event.name,
                        "pid": pid, "tid": tid, "ts": _us(event.start_ns),
                        "args": {"Total Reserved": 0, "Total Allocated": event.total_allocated,
                                 "Bytes": event.nbytes, "Device Id": -1, "Device Type": 0,
                                 "Addr": event.address, "finished": False, "Ev Idx": index}})
            continue
        args = {}
        if event.is_python_function:
            category = "python_function"
            if event.python_parent_id >= 0:
                args["Python parent id"] = event.python_parent_id
            args["Python id"] = event.python_id
        else:
            category = "user_annotation" if event.is_user_annotation else "cpu_op"
            args["External id"] = event.correlation_id
            if event.sequence_nr >= 0:
                args["Sequence number"] = event.sequence_nr
                args["Fwd thread id"] = event.forward_thread
            args["Record function id"] = 0
            if record_shapes and event.inputs:
                args["Concrete Inputs"] = [_concrete_text(v) for v in event.concrete_inputs()]
                args["Input type"] = event.input_types()
                args["Input Strides"] = event.input_strides()
                args["Input Dims"] = event.input_dims()
            if event.stack:
                args["Call stack"] = ";".join(event.stack)
        args["Ev Idx"] = index
        ts = _us(event.start_ns)
        out.append({"ph": "X", "cat": category, "name": event.name, "pid": pid, "tid": tid,
                    "ts": ts, "dur": _us(event.end_ns - event.start_ns), "args": args})
        flow = flow_ids.get(id(event))
        if flow is not None:
            start = event.scope is RecordScope.FUNCTION
            out.append({"ph": "s" if start else "f", "id": flow, "pid": pid, "tid": tid, "ts": ts,
                        "cat": "fwdbwd", "name": "fwdbwd", **({} if start else {"bp": "e"})})
    return out
