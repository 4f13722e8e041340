"""``torch.profiler``: what ran, for how long, inside what.

    with torch.profiler.profile(record_shapes=True) as prof:
        with torch.profiler.record_function("forward"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total"))
    prof.export_chrome_trace("trace.json")       # chrome://tracing, Perfetto

Where things live:

    _collector.py      the recorder: dispatcher observer (one range per op call),
                       backward-engine observer, record_function's ops, memory
    _python_tracer.py  Python calls as events (with_stack)
    _chrome_trace.py   the Kineto-layout JSON trace
    profiler.py        profile (schedule, steps), ProfilerAction, schedule
    ../autograd/profiler.py       the backend profile, record_function
    ../autograd/profiler_util.py  FunctionEvent, EventList, key_averages, table
"""
from ..autograd.profiler import kineto_available, record_function  # noqa: F401
from ._collector import DeviceType, ProfilerActivity, RecordScope, _ExperimentalConfig  # noqa: F401
from .profiler import (ProfilerAction, _KinetoProfile, profile, schedule,  # noqa: F401
                       supported_activities, tensorboard_trace_handler)


__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "DeviceType",
           "record_function"]
