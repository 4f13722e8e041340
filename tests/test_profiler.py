"""torch.profiler / torch.autograd.profiler against real PyTorch.

The same programs run under both profilers.  Compared exactly: what autograd
sees of the forward pass (the ops called with an autograd key and grad mode
on, ``sequence_nr >= 0``; the inner ops kernels dispatch below it, which
glasstorch's kernels dispatch too while observed, are compared op for op in
tests/test_profiler_trees.py), the backward steps and the ops backward
nodes call, labels, call counts, table columns, memory columns, FLOPs, trace
layout, errors and warnings.  Times are checked for consistency only (self
<= total, parents contain children, all within the wall time).
"""
from __future__ import annotations

import json
import os
import re
import sys
import time

import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch.autograd import engine as gt_engine
from glasstorch._core.allocator import cpu_allocator
from glasstorch._dispatcher.dispatcher import _observers

from .differential import differential, raised


def profiled(lib, program, **options):
    """Run ``program(lib)`` under ``lib.profiler.profile``; the profiler."""
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **options) as prof:
        program(lib)
    return prof


def mlp_step(lib):
    """Linear/ReLU/Linear forward and backward, with labels."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = lib.randn(5, 8)
    record_function = lib.profiler.record_function

    def program(lib):
        with record_function("forward"):
            y = model(x)
        with record_function("loss"):
            loss = y.pow(2).mean()
        with record_function("backward"):
            loss.backward()
    return program


def mm_chain(lib):
    a, b = lib.ones(16, 16) * 0.5, lib.ones(16, 16)

    def program(lib):
        c = lib.mm(a, b)
        d = lib.mm(c, b).relu()
        with lib.profiler.record_function("lbl"):
            d + a
    return program


def custom_loop(lib):
    w = lib.zeros(4, 3, requires_grad=True)
    x = lib.ones(6, 4)

    def program(lib):
        for step in range(3):
            with lib.profiler.record_function(f"step{step}"):
                loss = (x @ w).tanh().sum()
                loss.backward()
                with lib.no_grad():
                    w.sub_(0.1 * w.grad)
                    w.grad.zero_()
    return program


PROGRAMS = [mlp_step, mm_chain, custom_loop]


# -- what autograd sees, labels, backward steps ---------------------------------------------

def _autograd_view(event, first_seq):
    """The part of an event's subtree both libraries have in common: labels,
    forward ops called at the autograd key (sequence_nr >= 0, counted from the
    recording's first: the counter is process-wide), backward steps and nodes,
    and the ops a backward node calls directly."""
    children = []
    for child in event.cpu_children:
        kept = child.is_user_annotation or child.sequence_nr >= 0 or child.scope == 1 or \
            event.scope == 1 or child.name.startswith("autograd::engine")
        if kept:
            children.append(_autograd_view(child, first_seq))
        else:
            children.extend(_autograd_view(child, first_seq)[3])   # a helper op's children
    seq = event.sequence_nr - first_seq if event.sequence_nr >= 0 else -1
    return (event.name, seq, event.is_user_annotation, tuple(children))


def _top_level_view(prof):
    events = prof.events()
    first_seq = min((e.sequence_nr for e in events if e.sequence_nr >= 0), default=0)
    return [_autograd_view(e, first_seq) for e in events if e.cpu_parent is None
            and (e.is_user_annotation or e.sequence_nr >= 0 or e.name.startswith("autograd"))]


@pytest.mark.parametrize("make_program", PROGRAMS)
def test_event_tree_matches_torch(make_program):
    theirs = _top_level_view(profiled(torch, make_program(torch)))
    ours = _top_level_view(profiled(gt, make_program(gt)))
    assert ours == theirs


def test_mlp_backward_steps():
    """Each backward node's evaluation holds the node, as in PyTorch."""
    prof = profiled(gt, mlp_step(gt))
    steps = [e for e in prof.events() if e.name.startswith("autograd::engine::evaluate_function")]
    assert [e.name for e in steps][:3] == [
        "autograd::engine::evaluate_function: MeanBackward0",
        "autograd::engine::evaluate_function: PowBackward0",
        "autograd::engine::evaluate_function: AddmmBackward0"]
    for step in steps:
        node = step.cpu_children[0]
        assert step.name.endswith(": " + node.name) and node.scope == 1
        assert node.sequence_nr == step.sequence_nr


def _counts(prof, names):
    return {e.key: e.count for e in prof.key_averages() if e.key in names}


@pytest.mark.parametrize("make_program", PROGRAMS)
def test_call_counts_match_torch(make_program):
    theirs = profiled(torch, make_program(torch))
    names = {e.name for e in theirs.events()
             if e.sequence_nr >= 0 or e.is_user_annotation or e.scope == 1}
    ours = profiled(gt, make_program(gt))
    assert _counts(ours, names) == _counts(theirs, names)


_OPS = {
    "mm": lambda lib, x, y: lib.mm(x, y),
    "add": lambda lib, x, y: x + y,
    "mul": lambda lib, x, y: x * y,
    "relu": lambda lib, x, y: x.relu(),
    "t": lambda lib, x, y: x.t(),
    "matmul": lambda lib, x, y: x @ y,
    "linear": lambda lib, x, y: lib.nn.functional.linear(x, y),
    "sum": lambda lib, x, y: x.sum(0, keepdim=True).expand(4, 4),
}


@settings(max_examples=8)
@given(st.lists(st.sampled_from(sorted(_OPS)), min_size=1, max_size=6), st.booleans())
def test_random_chains_match_torch(names, backward):
    def program_for(lib):
        x = lib.ones(4, 4, requires_grad=True)
        y = lib.full((4, 4), 0.5)

        def program(lib):
            z = x
            for name in names:
                z = _OPS[name](lib, z, y)
            if backward:
                z.sum().backward()
        return program
    assert _top_level_view(profiled(gt, program_for(gt))) == \
        _top_level_view(profiled(torch, program_for(torch)))


# -- times -------------------------------------------------------------------------------

@pytest.mark.parametrize("make_program", PROGRAMS)
def test_times_are_consistent(make_program):
    program = make_program(gt)
    start = time.perf_counter()
    prof = profiled(gt, program)
    wall_us = (time.perf_counter() - start) * 1e6
    events = prof.events()
    assert events
    for event in events:
        assert 0 <= event.self_cpu_time_total <= event.cpu_time_total <= wall_us
        children = sum(c.cpu_time_total for c in event.cpu_children)
        assert event.cpu_time_total == pytest.approx(event.self_cpu_time_total + children)
        for child in event.cpu_children:
            assert event.time_range.start <= child.time_range.start
            assert child.time_range.end <= event.time_range.end
    top = sum(e.cpu_time_total for e in events if e.cpu_parent is None)
    assert prof.events().self_cpu_time_total == pytest.approx(top)
    total = prof.events().total_average()
    assert total.key == "Total" and total.count == len(events)


# -- tables --------------------------------------------------------------------------------

def _columns(table):
    """Header names and the widths of the columns after the name column."""
    lines = table.splitlines()
    separator = next(line for line in lines if line.startswith("-"))
    header = lines[lines.index(separator) + 1]
    widths = [len(dashes) for dashes in separator.split()]
    names = [name for name in re.split(r"\s{2,}", header.strip())]
    return names, widths[1:]


def _rows(table):
    lines = table.splitlines()
    separators = [i for i, line in enumerate(lines) if line.startswith("---")]
    return [re.split(r"\s{2,}", line.strip()) for line in lines[separators[1] + 1:separators[2]]]


def _verbose(lib):
    return lib.profiler._ExperimentalConfig(verbose=True)


TABLES = {
    "plain": (dict(), dict()),
    "shapes": (dict(record_shapes=True), dict(group_by_input_shape=True)),
    "memory": (dict(profile_memory=True), dict()),
    "stack": (dict(with_stack=True), dict(group_by_stack_n=3)),
    "stack-verbose": (dict(with_stack=True, experimental_config=_verbose),
                      dict(group_by_stack_n=3)),
    "flops": (dict(with_flops=True), dict()),
    "overloads": (dict(experimental_config=lambda lib: lib.profiler._ExperimentalConfig(
        capture_overload_names=True)), dict(group_by_overload_name=True)),
}


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_table_columns_match_torch(kind):
    options, grouping = TABLES[kind]

    def table(lib):
        opts = {k: (v(lib) if callable(v) else v) for k, v in options.items()}
        prof = profiled(lib, mm_chain(lib), **opts)
        text = prof.key_averages(**grouping).table(sort_by="cpu_time_total", row_limit=5)
        assert text.splitlines()[-1].startswith("Self CPU time total: ")
        return _columns(text)
    ours, theirs = table(gt), table(torch)
    assert ours[0] == theirs[0]
    # numeric columns are 12 wide; the name, overload, shape and source columns follow
    # their contents
    sized = ("Overload Name", "Input Shapes", "Source Location")
    assert [w for w, n in zip(ours[1], ours[0][1:]) if n not in sized] == \
        [w for w, n in zip(theirs[1], theirs[0][1:]) if n not in sized]


def test_table_sorting_and_row_limit():
    prof = profiled(gt, mlp_step(gt))
    averages = prof.key_averages()
    for key in ("cpu_time_total", "self_cpu_time_total", "count"):
        rows = _rows(averages.table(sort_by=key, row_limit=-1))
        expected = sorted(averages, key=lambda e: getattr(e, key), reverse=True)
        assert [row[0] for row in rows] == [e.key[:52] + "..." if len(e.key) >= 52 else e.key
                                            for e in expected]
    assert len(_rows(averages.table(row_limit=3))) == 3
    assert len(_rows(averages.table(row_limit=0))) == 0
    top = _rows(averages.table(top_level_events_only=True, row_limit=-1))
    assert {row[0] for row in top} == {"forward", "loss", "backward"}


def test_table_options_match_torch():
    def texts(lib):
        prof = profiled(lib, mm_chain(lib))
        averages = prof.key_averages()
        full = averages.table(header="HDR", top_level_events_only=True, max_name_column_width=20,
                              time_unit="ms")
        lines = full.splitlines()
        rule = "=" * (len(lines[4]) - 2)     # as wide as the table (less the trailing gap)
        return (lines[:4] == [rule, "HDR", rule,
                              "This report only display top-level ops statistics"],
                [row[0] for row in _rows(full)],
                bool(re.fullmatch(r"Self CPU time total: \d+\.\d{3}ms", lines[-1])),
                averages.table(row_limit=0, max_name_column_width=20, time_unit="ms")
                .splitlines()[:3] == lines[4:7])
    assert texts(gt) == texts(torch) == (True, ["aten::mm", "aten::relu", "lbl"],
                                         True, True)


def test_profile_memory_matches_torch():
    def rows(lib):
        a, b = lib.ones(16, 16), lib.ones(16, 16)

        def program(lib):
            c = lib.mm(lib.mm(a, b), b)
            del c
            with lib.profiler.record_function("lbl"):
                a + b
        table = profiled(lib, program, profile_memory=True).key_averages().table()
        return {row[0]: (row[6], row[7], row[8]) for row in _rows(table)}
    ours, theirs = rows(gt), rows(torch)
    assert {k: ours[k] for k in ("aten::mm", "[memory]", "lbl", "aten::add")} == \
        {k: theirs[k] for k in ("aten::mm", "[memory]", "lbl", "aten::add")}


def test_flops_match_torch():
    def flops(lib):
        a, b, c = lib.ones(4, 6), lib.ones(6, 5), lib.ones(5)
        x, y = lib.ones(3, 4, 6), lib.ones(3, 6, 2)
        image, weight = lib.ones(2, 3, 8, 8), lib.ones(4, 3, 3, 3)

        def program(lib):
            lib.mm(a, b), lib.addmm(c, a, b), a * 2, a + a, lib.bmm(x, y)
            lib.nn.functional.conv2d(image, weight, stride=2, padding=1)
        prof = profiled(lib, program, with_flops=True)
        return [(e.name, e.flops) for e in prof.events() if e.sequence_nr >= 0]
    assert flops(gt) == flops(torch)


def test_record_shapes_inputs_match_torch():
    def inputs(lib):
        a = lib.ones(4, 6)

        def program(lib):
            lib.nn.functional.linear(a, lib.ones(3, 6), lib.ones(3))
            a.sum(dtype=lib.float64)
            lib.cat([a, a], 0)
        prof = profiled(lib, program, record_shapes=True)
        return [(e.name, e.input_shapes, e.input_dtypes, e.structured_input_shapes,
                 e.concrete_inputs) for e in prof.events() if e.sequence_nr >= 0]
    assert inputs(gt) == inputs(torch)


def test_with_stack_records_python_calls():
    def user_function(lib, a):
        return lib.mm(a, a)

    def views(lib):
        a = lib.ones(4, 4)
        prof = profiled(lib, lambda lib: user_function(lib, a), with_stack=True,
                        experimental_config=_verbose(lib))
        mm = next(e for e in prof.events() if e.name == "aten::mm")
        ancestors = []
        parent = mm.cpu_parent
        while parent is not None:
            ancestors.append(parent.name)
            parent = parent.cpu_parent
        python = [e for e in prof.events() if e.is_python_function]
        return (any(n.endswith(": user_function") for n in ancestors),
                any(s.endswith(": user_function") for s in mm.stack), bool(python))
    assert views(gt) == views(torch) == (True, True, True)


# -- the Chrome trace ---------------------------------------------------------------------

def _trace(lib, tmp_path, **options):
    prof = profiled(lib, mlp_step(lib), **options)
    path = os.path.join(tmp_path, f"{lib.__name__}.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        return json.load(f)


def _nested_in_time(events):
    """On each thread, two X events are disjoint or one contains the other."""
    by_thread = {}
    for e in events:
        by_thread.setdefault(e["tid"], []).append((e["ts"], -(e["ts"] + e["dur"]), e))
    for spans in by_thread.values():
        open_ends = []
        for start, neg_end, _ in sorted(spans, key=lambda s: (s[0], s[1])):
            while open_ends and start >= open_ends[-1] - 1e-3:
                open_ends.pop()
            if open_ends and -neg_end > open_ends[-1] + 1e-3:
                return False
            open_ends.append(-neg_end)
    return True


@pytest.mark.parametrize("options", [dict(), dict(record_shapes=True, profile_memory=True)])
def test_chrome_trace_matches_torch_layout(tmp_path, options):
    ours, theirs = _trace(gt, tmp_path, **options), _trace(torch, tmp_path, **options)
    assert list(ours) == list(theirs)
    assert ours["traceName"].endswith("glasstorch.json")
    assert ours["displayTimeUnit"] == "ms" and ours["deviceProperties"] == []

    def kinds(trace):
        return {(e["ph"], e.get("cat")) for e in trace["traceEvents"]}
    assert kinds(ours) == kinds(theirs)

    def first(trace, name):
        return next(e for e in trace["traceEvents"] if e.get("name") == name and e["ph"] == "X")
    for name in ("aten::addmm", "forward", "autograd::engine::evaluate_function: AddmmBackward0",
                 "AddmmBackward0"):
        mine, real = first(ours, name), first(theirs, name)
        assert set(mine) == set(real) and mine["cat"] == real["cat"]
        assert set(mine["args"]) == set(real["args"]), name
        if options:
            for key in ("Input Dims", "Input type", "Input Strides", "Concrete Inputs"):
                assert mine["args"].get(key) == real["args"].get(key)
    x_events = [e for e in ours["traceEvents"] if e["ph"] == "X" and e["cat"] != "Trace"]
    assert _nested_in_time(x_events)
    assert all(e["dur"] >= 0 and isinstance(e["ts"], float) for e in x_events)
    labels = {e["name"] for e in x_events if e["cat"] == "user_annotation"}
    assert labels == {"forward", "loss", "backward"}
    flows = [e for e in ours["traceEvents"] if e.get("cat") == "fwdbwd"]
    starts = {e["id"] for e in flows if e["ph"] == "s"}
    assert starts and starts == {e["id"] for e in flows if e["ph"] == "f"}
    assert (len(flows), ours.get("record_shapes")) == (len([e for e in theirs["traceEvents"]
                                                            if e.get("cat") == "fwdbwd"]),
                                                       theirs.get("record_shapes"))


def test_legacy_event_list_trace(tmp_path):
    prof = profiled(gt, mm_chain(gt))
    path = os.path.join(tmp_path, "legacy.json")
    prof.events().export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)
    assert {e["name"] for e in events} >= {"aten::mm", "lbl"}
    assert all(e["ph"] == "X" for e in events)


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")
def test_tensorboard_trace_handler(tmp_path):
    handler = gt.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    with gt.profiler.profile(schedule=gt.profiler.schedule(wait=0, warmup=1, active=1),
                             on_trace_ready=handler) as prof:
        for _ in range(3):
            gt.ones(2) + 1
            prof.step()
    files = os.listdir(tmp_path / "tb")
    assert files and all(re.fullmatch(r"w\.\d+\.pt\.trace\.json", f) for f in files)
    with open(tmp_path / "tb" / files[0]) as f:
        assert "traceEvents" in json.load(f)


# -- record_function --------------------------------------------------------------------------

def test_record_function_ops_match_torch():
    def schemas(lib):
        ops = lib.ops.profiler
        return (str(ops._record_function_enter_new.default._schema),
                str(ops._record_function_exit._RecordFunction._schema))
    assert schemas(gt) == schemas(torch)

    def scenario(lib):
        handle = lib.ops.profiler._record_function_enter_new("raw", "args")
        lib.ops.profiler._record_function_exit._RecordFunction(handle)
        return str(handle), re.sub("0x[0-9a-f]+", "0x", repr(handle))
    differential(scenario)


def test_record_function_forms_match_torch():
    def scenario(lib):
        record_function = lib.profiler.record_function

        @record_function("deco")
        def double(x):
            return x * 2
        with record_function("outside"):      # no profiler: nothing to record
            lib.ones(2) + 1
        with lib.profiler.profile() as prof:
            double(lib.ones(2))
            with record_function("outer"):
                with record_function("inner", "some args"):
                    lib.ones(2).neg()
            try:
                with record_function("boom"):
                    raise ValueError("x")
            except ValueError:
                pass
        labels = [e for e in prof.events() if e.is_user_annotation]
        return [(e.name, e.scope, e.cpu_parent.name if e.cpu_parent else None) for e in labels]
    differential(scenario)


# -- the profile object: schedule, errors, warnings --------------------------------------

def test_schedule_matches_torch():
    def scenario(lib):
        seen = []

        def ready(prof):
            seen.append([(e.name, e.trace_name) for e in prof.events()
                         if not e.name.startswith("aten::")])
        with lib.profiler.profile(schedule=lib.profiler.schedule(wait=1, warmup=1, active=2,
                                                                 repeat=1),
                                  on_trace_ready=ready) as prof:
            for _ in range(6):
                lib.ones(2) + 1
                prof.step()
        return seen, prof.step_num, prof.current_action.name
    differential(scenario)


@pytest.mark.parametrize("args", [dict(wait=1, warmup=0, active=1),
                                  dict(wait=1, warmup=1, active=0),
                                  dict(wait=0, warmup=1, active=2, skip_first=2, repeat=2)])
def test_schedule_function_matches_torch(args):
    def scenario(lib):
        schedule = lib.profiler.schedule(**args)
        return [schedule(step).name for step in range(10)]
    differential(scenario, may_raise=True)


ERRORS = {
    "key_averages before start": lambda lib: lib.profiler.profile().key_averages(),
    "events before start": lambda lib: lib.profiler.profile().events(),
    "export before start": lambda lib: lib.profiler.profile().export_chrome_trace("x.json"),
    "stop before start": lambda lib: lib.profiler.profile().stop(),
    "no activities": lambda lib: lib.profiler.profile(activities=[]),
    "not an activity": lambda lib: lib.profiler.profile(activities=["cpu"]),
    "activity twice": lambda lib: lib.profiler.profile(
        activities=[lib.profiler.ProfilerActivity.CPU] * 2),
    "CUDA only": lambda lib: lib.profiler.profile(
        activities=[lib.profiler.ProfilerActivity.CUDA]).start(),
    "unknown sort key": lambda lib: profiled(lib, lambda lib: lib.ones(2) + 1)
    .key_averages().table(sort_by="nonsense"),
    "legacy profile entered twice": lambda lib: _enter_twice(lib),
    "legacy export_stacks without with_stack": lambda lib: _legacy(lib).export_stacks("s.txt"),
}


def _enter_twice(lib):
    prof = lib.autograd.profiler.profile()
    with prof:
        with prof:
            pass


def _legacy(lib):
    with lib.autograd.profiler.profile() as prof:
        lib.ones(2) * 3
    return prof


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raised(differential(ERRORS[name], named=True, may_raise=True))


def test_results_inside_the_context_are_empty():
    def scenario(lib):
        with lib.profiler.profile() as prof:
            lib.ones(2) + 1
            inside = prof.key_averages().table()
        return inside, "aten::add" in [e.name for e in prof.events()]
    differential(scenario)


def test_cuda_activity_warns_and_records_cpu():
    def scenario(lib):
        activity = lib.profiler.ProfilerActivity
        with lib.profiler.profile(activities=[activity.CPU, activity.CUDA]) as prof:
            lib.ones(2) + 1
        names = [e.name for e in prof.events()]
        return "aten::add" in names, sorted(a.name for a in lib.profiler.supported_activities())
    outcome = differential(scenario, named=True)
    assert outcome[2] == (("UserWarning", "CUDA is not available, disabling CUDA profiling"),)


def test_legacy_profiler_matches_torch():
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.autograd.profiler.profile(use_cuda=True, record_shapes=True) as prof:
            (x * x).sum().backward()
        table = prof.key_averages(group_by_input_shape=True).table()
        counts = {e.key: e.count for e in prof.key_averages()
                  if e.key in ("aten::mul", "aten::sum") or "Backward" in e.key
                  or "AccumulateGrad" in e.key}
        return _columns(table)[0], counts, isinstance(prof.self_cpu_time_total, float)
    differential(scenario, named=True)


def test_enums_match_torch():
    def scenario(lib):
        profiler = lib.profiler

        def members(enum):
            return [(m.name, m.value, repr(m), str(m)) for m in enum.__members__.values()]
        return (members(profiler.ProfilerActivity), members(profiler.ProfilerAction),
                members(profiler.DeviceType), members(profiler.RecordScope),
                profiler.kineto_available())
    differential(scenario)


# -- cost when off -------------------------------------------------------------------------

def test_nothing_stays_installed():
    """After a profile, the dispatcher, the engine and the allocator are back
    to their unobserved fast paths."""
    before = dict(cpu_allocator.__dict__)
    with gt.profiler.profile(profile_memory=True, with_stack=True):
        x = gt.ones(3, requires_grad=True)
        (x * 2).sum().backward()
        assert _observers and gt_engine.node_observers
    assert not _observers and not gt_engine.node_observers
    assert cpu_allocator.__dict__ == before
    assert sys.getprofile() is None


def test_dispatch_mode_calls_are_ranges():
    """An op a TorchDispatchMode re-issues is an event inside the mode's
    "PythonDispatchMode" range, inside the op's event: PyTorch's tree (its
    _remove_dup_nodes would fold a same-named only child; the range keeps it)."""
    def events(lib):
        class Forward(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        a = lib.ones(4)
        with lib.profiler.profile() as prof:
            with Forward():
                a + a
        return [(e.name, len(e.cpu_children)) for e in prof.events()]
    assert events(gt) == events(torch) == [("aten::add", 1), ("PythonDispatchMode", 1),
                                           ("aten::add", 0)]
