"""torch.utils.data against real PyTorch: datasets, random_split, samplers,
default_collate / default_convert, and DataLoader batches (same seeds or
generators -> same batches, also over two epochs and with workers), lengths,
warnings and error messages.

Every scenario is a function of the library; ``same`` runs it with torch and
glasstorch and compares what came back (containers with their types, tensors
by dtype/shape/values), what was raised and what was warned.
"""
from __future__ import annotations

import collections
import random

import numpy as np
import pytest
from hypothesis import given, strategies as st

from .differential import differential, observe

Point = collections.namedtuple("Point", ["x", "y"])

# Both warn when num_workers exceeds the CPU count, which depends on the machine
_PROCESS_COUNT_WARNING = "This DataLoader will create"


def describe(value):
    """``value`` with container types spelled out (observe() merges lists and tuples)."""
    if isinstance(value, dict):
        return ("dict", {k: describe(v) for k, v in value.items()})
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, tuple(describe(v) for v in value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(describe(v) for v in value))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.tolist())
    return observe(value)


def _without_process_count_warning(outcome):
    return outcome[:-1] + (tuple(w for w in outcome[-1]
                                 if not w.startswith(_PROCESS_COUNT_WARNING)),)


def same(scenario, *, may_raise=False):
    """``differential`` on ``describe(scenario(lib))``, the warning about the
    machine's process count left out."""
    return differential(lambda lib: describe(scenario(lib)), may_raise=may_raise,
                        normalize=_without_process_count_warning)


def returned(outcome):
    assert outcome[0] == "returned", outcome
    return outcome[1]


def raised(outcome):
    assert outcome[0] == "raised", outcome
    return outcome[1:3]


def attempt(fn):
    """What ``fn()`` raised, as (type name, message), else what it returned."""
    try:
        return fn()
    except Exception as exc:   # noqa: BLE001 - the exception is the observation
        return type(exc).__name__, str(exc)


# -- datasets ------------------------------------------------------------------------------


def squares(lib, n):
    """A map-style dataset of ``n`` (i, i*i) pairs with a readable repr."""
    class Squares(lib.utils.data.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            if not 0 <= i < n:
                raise IndexError(f"index {i} out of range")
            return i, i * i

        def __repr__(self):
            return f"Squares({n})"
    return Squares()


def stream(lib, n, *, shard=False, length=None):
    """An iterable dataset of 0..n-1; ``shard``: each worker takes every num_workers-th."""
    class Stream(lib.utils.data.IterableDataset):
        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            if shard and info is not None:
                return iter(range(info.id, n, info.num_workers))
            return iter(range(n))

        def __repr__(self):
            return f"Stream({n})"

    if length is not None:
        Stream.__len__ = lambda self: length
    return Stream()


def test_tensor_dataset():
    def scenario(lib):
        data = lib.utils.data
        ds = data.TensorDataset(lib.arange(6).reshape(3, 2), lib.tensor([1.0, 2.0, 3.0]))
        return (len(ds), ds[1], ds[-1], ds[0:2], ds[lib.tensor([2, 0])],
                attempt(lambda: data.TensorDataset(lib.ones(3), lib.ones(4))))
    out = returned(same(scenario))
    assert out[1][-1] == ("tuple", ("AssertionError", "Size mismatch between tensors"))


def test_concat_and_chain_datasets():
    def scenario(lib):
        data = lib.utils.data
        a, b = squares(lib, 3), squares(lib, 0)
        c = data.TensorDataset(lib.arange(4))
        cat = a + b + c
        chained = stream(lib, 3) + stream(lib, 2, length=2)
        return (type(cat).__name__, len(cat), cat.cumulative_sizes, [cat[i] for i in range(7)],
                cat[-1], cat[-7], attempt(lambda: cat[-8]), attempt(lambda: cat[7]),
                data.ConcatDataset.cumsum([[1], [], [2, 3]]),
                attempt(lambda: data.ConcatDataset([])),
                attempt(lambda: data.ConcatDataset([a, stream(lib, 2)])),
                type(chained).__name__, list(chained), attempt(lambda: len(chained)),
                len(data.ChainDataset([stream(lib, 1, length=1), stream(lib, 2, length=2)])),
                attempt(lambda: list(data.ChainDataset([a]))),
                attempt(lambda: len(data.ChainDataset([a]))),
                attempt(lambda: data.Dataset()[0]))
    same(scenario)


def test_concat_dataset_deprecated_attribute():
    outcome = same(lambda lib: lib.utils.data.ConcatDataset([[1, 2], [3]]).cummulative_sizes)
    assert returned(outcome) == ("list", (2, 3))


def test_subset_and_stack_dataset():
    def scenario(lib):
        data = lib.utils.data
        base = data.TensorDataset(lib.arange(10) * 10)
        sub = data.Subset(base, [7, 2, 5])
        nested = data.Subset(sub, [2, 0])
        tuples = data.StackDataset(squares(lib, 3), data.TensorDataset(lib.arange(3)))
        named = data.StackDataset(a=sub, b=[4, 5, 6])

        class Overriding(data.Subset):
            def __getitem__(self, i):
                return 0

        return (len(sub), sub[0], sub[-1], sub.__getitems__([1, 2]), nested[0],
                nested.__getitems__([0, 1]),
                attempt(lambda: data.Subset([1, 2, 3], [0, 2])[[0, 1]]),   # a list refuses a list
                len(tuples), tuples[1], tuples.__getitems__([2, 0]),
                len(named), named[2], named.__getitems__([0, 1]),
                attempt(lambda: Overriding(base, [0])),
                attempt(lambda: data.StackDataset()),
                attempt(lambda: data.StackDataset([1], b=[2])),
                attempt(lambda: data.StackDataset([1], [2, 3])),
                attempt(lambda: data.StackDataset(a=[1], b=[2, 3])))
    same(scenario)


def test_stack_dataset_checks_nested_batch_sizes():
    def scenario(lib):
        class Short(lib.utils.data.Dataset):
            def __len__(self):
                return 3

            def __getitems__(self, indices):
                return indices[:-1]
        return (attempt(lambda: lib.utils.data.StackDataset(Short()).__getitems__([0, 1])),
                attempt(lambda: lib.utils.data.StackDataset(x=Short()).__getitems__([2])))
    same(scenario)


# -- random_split ---------------------------------------------------------------------------


@given(n=st.integers(0, 30), cuts=st.lists(st.integers(0, 30), max_size=3),
       seed=st.integers(0, 2**40), own_generator=st.booleans())
def test_random_split_lengths(n, cuts, seed, own_generator):
    cuts = sorted(c for c in cuts if c <= n)
    lengths = [b - a for a, b in zip([0] + cuts, cuts + [n])]

    def scenario(lib):
        lib.manual_seed(seed)
        generator = (lib.Generator().manual_seed(seed + 1) if own_generator
                     else lib.default_generator)
        parts = lib.utils.data.random_split(range(n), lengths, generator=generator)
        return [list(p.indices) for p in parts], [list(p) for p in parts], lib.rand(1)
    same(scenario)


@given(n=st.integers(0, 40), fractions=st.sampled_from(
    [[1.0], [0.5, 0.5], [0.3, 0.3, 0.4], [0.1, 0.2, 0.7], [0.25, 0.25, 0.25, 0.25], [0.9, 0.1],
     [0.0, 1.0], [1 / 3, 1 / 3, 1 / 3], [0.6, 0.2, 0.2]]), seed=st.integers(0, 2**32))
def test_random_split_fractions(n, fractions, seed):
    def scenario(lib):
        g = lib.Generator().manual_seed(seed)
        return [list(p.indices) for p in lib.utils.data.random_split(range(n), fractions, g)]
    same(scenario)


def test_random_split_errors_and_default_generator():
    def scenario(lib):
        split = lib.utils.data.random_split
        lib.manual_seed(3)
        default = [list(p.indices) for p in split(range(5), [2, 3])]
        return (default, attempt(lambda: split(range(5), [2, 2])),
                attempt(lambda: split(range(5), [1.5, -0.5])),
                attempt(lambda: split(range(4), [0.5, 0.6])))
    same(scenario)


# -- samplers -------------------------------------------------------------------------------


@given(n=st.integers(1, 50), num_samples=st.one_of(st.none(), st.integers(1, 80)),
       replacement=st.booleans(), seed=st.integers(0, 2**40), own_generator=st.booleans())
def test_random_sampler(n, num_samples, replacement, seed, own_generator):
    def scenario(lib):
        lib.manual_seed(seed)
        generator = lib.Generator().manual_seed(seed) if own_generator else None
        sampler = lib.utils.data.RandomSampler(range(n), replacement, num_samples, generator)
        return len(sampler), list(sampler), list(sampler), lib.rand(1)
    same(scenario)


@given(weights=st.lists(st.floats(0.01, 5), min_size=1, max_size=12),
       num_samples=st.integers(1, 40), replacement=st.booleans(), seed=st.integers(0, 2**32))
def test_subset_and_weighted_random_samplers(weights, num_samples, replacement, seed):
    if not replacement:
        num_samples = min(num_samples, len(weights))

    def scenario(lib):
        data = lib.utils.data
        lib.manual_seed(seed)
        subset = data.SubsetRandomSampler([10 * i for i in range(len(weights))])
        weighted = data.WeightedRandomSampler(weights, num_samples, replacement,
                                              generator=lib.Generator().manual_seed(seed))
        return (len(subset), list(subset), len(weighted), list(weighted), list(weighted),
                weighted.weights)
    same(scenario)


def test_weighted_sampler_single_draw_with_replacement():
    """PyTorch's multinomial draws a single sample with replacement by the exponential
    (no-replacement) path, so the generator advances that way."""
    def scenario(lib):
        sampler = lib.utils.data.WeightedRandomSampler(
            [1.0, 1.0], 1, generator=lib.Generator().manual_seed(0))
        return [next(iter(sampler)) for _ in range(8)]
    same(scenario)


@given(n=st.integers(0, 30), batch_size=st.integers(1, 12), drop_last=st.booleans())
def test_batch_sampler(n, batch_size, drop_last):
    def scenario(lib):
        data = lib.utils.data
        sampler = data.BatchSampler(data.SequentialSampler(range(n)), batch_size, drop_last)
        return len(sampler), list(sampler), list(data.BatchSampler(range(n), batch_size, drop_last))
    same(scenario)


def test_sampler_argument_errors():
    def scenario(lib):
        data = lib.utils.data
        return (attempt(lambda: data.RandomSampler(range(3), replacement=1)),
                attempt(lambda: data.RandomSampler(range(3), num_samples=0)),
                attempt(lambda: data.RandomSampler(range(0))),
                attempt(lambda: data.RandomSampler(range(3), num_samples=2.0)),
                attempt(lambda: data.WeightedRandomSampler([1.0], 0)),
                attempt(lambda: data.WeightedRandomSampler([1.0], True)),
                attempt(lambda: data.WeightedRandomSampler([1.0], 2, replacement=None)),
                attempt(lambda: data.WeightedRandomSampler([[1.0, 2.0]], 2)),
                attempt(lambda: list(data.WeightedRandomSampler([1.0, 2.0], 3, False))),
                attempt(lambda: data.BatchSampler(range(3), 0, False)),
                attempt(lambda: data.BatchSampler(range(3), True, False)),
                attempt(lambda: data.BatchSampler(range(3), 2, 0)),
                attempt(lambda: list(data.Sampler())),
                attempt(lambda: len(data.Sampler())))
    same(scenario)


# -- collation ------------------------------------------------------------------------------

_NUMPY_DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool", "float16", "int16"]


def leaves():
    """Strategies for one leaf kind; a leaf is drawn once per sample, same kind and shape."""
    return st.sampled_from(["int", "float", "bool", "str", "bytes", "tensor", "ndarray",
                            "np_scalar"])


@st.composite
def structures(draw, depth=0):
    """A sample structure: a leaf kind or a container of structures."""
    if depth >= 2 or draw(st.booleans()):
        kind = draw(leaves())
        shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        dtype = draw(st.sampled_from(_NUMPY_DTYPES))
        return ("leaf", kind, shape, dtype)
    container = draw(st.sampled_from(["list", "tuple", "dict", "namedtuple"]))
    size = 2 if container == "namedtuple" else draw(st.integers(1, 3))
    return (container, [draw(structures(depth + 1)) for _ in range(size)])


def build(structure, rng, lib):
    """One sample of ``structure`` (values from ``rng``; tensors made with ``lib``)."""
    if structure[0] == "leaf":
        _, kind, shape, dtype = structure
        values = np.asarray(rng.standard_normal(shape) * 5).astype(dtype)
        if kind == "int":
            return int(rng.integers(-100, 100))
        if kind == "float":
            return float(rng.standard_normal())
        if kind == "bool":
            return bool(rng.integers(2))
        if kind == "str":
            return f"s{rng.integers(10)}"
        if kind == "bytes":
            return b"b%d" % rng.integers(10)
        if kind == "tensor":
            return lib.from_numpy(values)
        if kind == "ndarray":
            return values
        return values.reshape(-1)[0] if values.size else np.float32(1.5)
    container, parts = structure
    items = [build(part, rng, lib) for part in parts]
    if container == "list":
        return items
    if container == "tuple":
        return tuple(items)
    if container == "namedtuple":
        return Point(*items)
    return {f"k{i}": item for i, item in enumerate(items)}


@given(structure=structures(), batch=st.integers(1, 4), seed=st.integers(0, 2**32))
def test_default_collate_nested(structure, batch, seed):
    def scenario(lib):
        rng = np.random.default_rng(seed)
        samples = [build(structure, rng, lib) for _ in range(batch)]
        collate = lib.utils.data.default_collate
        return collate(samples), lib.utils.data.default_convert(samples[0])
    same(scenario)


def test_default_collate_cases():
    def scenario(lib):
        collate = lib.utils.data.default_collate
        convert = lib.utils.data.default_convert
        t = lib.tensor
        return (collate([0, 1, 2]), collate([True, False]), collate([0.5, 1.5]),
                collate(["a", "b"]), collate([(0, "x"), (1, "y")]),
                collate([{"a": 0, "b": [1.0, 2.0]}, {"a": 3, "b": [4.0, 5.0]}]),
                collate([Point(t([1]), 2), Point(t([3]), 4)]),
                collate([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)]),
                collate([np.float32(1.5), np.float32(2.5)]), collate([np.int64(7)]),
                collate([t(1.0), t(2.0)]), collate([range(2), range(2)]),
                collate([collections.OrderedDict(z=1, a=2)] * 2),
                convert((np.array([1.0]), [np.int64(3), "s", 2.0])),
                convert(Point(np.array(0), 1)), convert({"a": np.zeros(2)}),
                convert(np.array(["x", "y"])), convert(np.str_("x")), convert(range(2)),
                convert(t([1, 2])), convert(7))
    same(scenario)


def test_default_collate_errors():
    def scenario(lib):
        collate = lib.utils.data.default_collate
        t = lib.tensor
        return (attempt(lambda: collate([t([1, 2]), t([1, 2, 3])])),
                attempt(lambda: collate([[1, 2], [3]])),
                attempt(lambda: collate([object()])),
                attempt(lambda: collate([None, None])),
                attempt(lambda: collate([np.array(["a"]), np.array(["b"])])),
                attempt(lambda: collate([np.array([1, 2]), np.array([1])])),
                attempt(lambda: collate([{"a": 1}, {"b": 2}])))
    out = returned(same(scenario))
    assert out[1][0][1][1].startswith("stack expects each tensor to be equal size")


def test_collate_fn_map_is_extensible():
    def scenario(lib):
        collate_module = lib.utils.data._utils.collate

        def count(batch, *, collate_fn_map):
            return len(batch)
        extended = {**collate_module.default_collate_fn_map, str: count}
        return collate_module.collate([("a", 1), ("b", 2)], collate_fn_map=extended)
    assert returned(same(scenario))[0] == "list"


# -- DataLoader -----------------------------------------------------------------------------


def tensor_dataset(lib, n):
    return lib.utils.data.TensorDataset(lib.arange(n),
                                        lib.arange(2 * n, dtype=lib.float32).reshape(n, 2))


@given(n=st.integers(0, 40), batch_size=st.one_of(st.none(), st.integers(1, 12)),
       drop_last=st.booleans(), shuffle=st.booleans(), seed=st.integers(0, 2**40),
       own_generator=st.booleans())
def test_loader_batches(n, batch_size, drop_last, shuffle, seed, own_generator):
    if batch_size is None:
        drop_last = False

    def scenario(lib):
        lib.manual_seed(seed)
        generator = lib.Generator().manual_seed(seed + 7) if own_generator else None
        loader = lib.utils.data.DataLoader(tensor_dataset(lib, n), batch_size=batch_size,
                                           shuffle=shuffle, drop_last=drop_last,
                                           generator=generator)
        return len(loader), list(loader), list(loader), lib.rand(2)
    if shuffle and n == 0:
        assert raised(same(scenario, may_raise=True))[0] == "ValueError"
    else:
        same(scenario)


@given(n=st.integers(0, 20), batch_size=st.one_of(st.none(), st.integers(1, 6)),
       drop_last=st.booleans(), reported=st.integers(0, 20))
def test_loader_iterable_dataset(n, batch_size, drop_last, reported):
    if batch_size is None:
        drop_last = False

    def scenario(lib):
        loader = lib.utils.data.DataLoader(stream(lib, n, length=reported), batch_size=batch_size,
                                           drop_last=drop_last)
        return len(loader), list(loader)      # warns when the stream outlives len(loader)
    same(scenario)


def test_loader_samplers_and_collate_fn():
    def scenario(lib):
        data = lib.utils.data
        ds = squares(lib, 7)
        batches = data.BatchSampler(data.SequentialSampler(ds), 3, False)
        return (list(data.DataLoader(ds, batch_sampler=batches)),
                len(data.DataLoader(ds, batch_sampler=batches)),
                list(data.DataLoader(ds, sampler=[6, 0, 3], batch_size=2)),
                list(data.DataLoader(ds, batch_size=None, sampler=[2, 5])),
                list(data.DataLoader(ds, batch_size=3, collate_fn=lambda b: b)),
                list(data.DataLoader([np.ones(2), np.zeros(2)], batch_size=None)),
                list(data.DataLoader([{"a": 1.0}, {"a": 2.0}], batch_size=2)),
                list(data.DataLoader(data.Subset(tensor_dataset(lib, 6), [5, 1, 3]),
                                     batch_size=2)))
    same(scenario)


def test_loader_getitems_is_used_per_batch():
    def scenario(lib):
        calls = []

        class Batched(lib.utils.data.Dataset):
            def __len__(self):
                return 5

            def __getitems__(self, indices):
                calls.append(list(indices))
                return [lib.tensor(float(i)) for i in indices]

        loaded = list(lib.utils.data.DataLoader(Batched(), batch_size=2))
        return loaded, calls
    same(scenario)


def test_loader_option_errors():
    def scenario(lib):
        data = lib.utils.data
        ds, it = squares(lib, 4), stream(lib, 4)
        bs = data.BatchSampler(range(4), 2, False)
        options = [dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
                   dict(num_workers=1, prefetch_factor=-1), dict(persistent_workers=True),
                   dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=bs, batch_size=2),
                   dict(batch_sampler=bs, shuffle=True), dict(batch_sampler=bs, drop_last=True),
                   dict(batch_sampler=bs, sampler=[0]), dict(batch_size=None, drop_last=True),
                   dict(multiprocessing_context="fork"),
                   dict(num_workers=1, multiprocessing_context="nonsense"),
                   dict(num_workers=1, multiprocessing_context=3)]
        errors = [attempt(lambda: data.DataLoader(ds, **o)) for o in options]
        errors += [attempt(lambda: data.DataLoader(it, **o))
                   for o in (dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]]))]
        loader = data.DataLoader(ds)
        errors += [attempt(lambda: setattr(loader, name, 1))
                   for name in ("batch_size", "sampler", "dataset", "drop_last",
                                "batch_sampler", "persistent_workers")]
        loader.num_workers = 0      # other attributes stay settable
        errors.append(attempt(lambda: iter(data.DataLoader(ds, timeout=1))))
        errors.append(attempt(lambda: len(data.DataLoader(stream(lib, 3)))))
        return errors
    same(scenario)


def test_loader_defaults_and_attributes():
    def scenario(lib):
        data = lib.utils.data
        loader = data.DataLoader(squares(lib, 5), batch_size=2, shuffle=True, drop_last=True)
        plain = data.DataLoader(squares(lib, 5), batch_size=None)
        workers = data.DataLoader(squares(lib, 5), num_workers=2)
        return (type(loader.sampler).__name__, type(loader.batch_sampler).__name__,
                loader.batch_size, loader.drop_last, loader.collate_fn.__name__,
                loader._auto_collation, loader.prefetch_factor, workers.prefetch_factor,
                plain.collate_fn.__name__, plain.batch_sampler, len(plain),
                type(data.DataLoader(stream(lib, 2)).sampler).__name__,
                type(iter(loader)).__name__, type(iter(workers)).__name__,
                len(iter(loader)), data.get_worker_info())
    same(scenario)


def test_loader_pin_memory_warns_without_accelerator():
    def scenario(lib):
        data = lib.utils.data
        plain = list(data.DataLoader(squares(lib, 3), batch_size=2, pin_memory=True))
        list(data.DataLoader(squares(lib, 1), pin_memory=True, pin_memory_device="cpu"))
        return plain
    outcome = same(scenario)
    assert len(outcome[-1]) == 3


def test_loader_iterator_cannot_be_pickled():
    import pickle

    def scenario(lib):
        return attempt(lambda: pickle.dumps(iter(lib.utils.data.DataLoader([1, 2]))))
    same(scenario)


# -- workers (processes in both libraries; more in test_dataloader_workers.py) ------------


def augmenting(lib, n):
    """A dataset drawing from torch, random and numpy in __getitem__, reporting its worker."""
    class Augmenting(lib.utils.data.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            info = lib.utils.data.get_worker_info()
            return (i, lib.rand(2), random.random(), float(np.random.rand()),
                    -1 if info is None else (info.id, info.num_workers))
    return Augmenting()


@pytest.mark.parametrize("num_workers", [1, 2])
def test_workers_batches_and_seeds(num_workers):
    def scenario(lib):
        data = lib.utils.data
        lib.manual_seed(11)
        random.seed(12)
        np.random.seed(13)
        shuffled = data.DataLoader(augmenting(lib, 9), batch_size=2, shuffle=True,
                                   num_workers=num_workers)
        first, second = list(shuffled), list(shuffled)
        return (first, second, lib.rand(1), random.random(), np.random.rand(),
                list(data.DataLoader(stream(lib, 5), batch_size=2, num_workers=num_workers)),
                list(data.DataLoader(stream(lib, 7, shard=True), batch_size=2,
                                     num_workers=num_workers)),
                list(data.DataLoader(stream(lib, 7, shard=True), batch_size=3, drop_last=True,
                                     num_workers=num_workers)),
                list(data.DataLoader(stream(lib, 5, shard=True), batch_size=None,
                                     num_workers=num_workers, prefetch_factor=1)))
    same(scenario)


def test_workers_init_fn_and_persistence():
    def scenario(lib):
        data = lib.utils.data

        def shorten(worker_id):
            info = data.get_worker_info()
            info.dataset.limit = 2 + worker_id

        class Limited(data.IterableDataset):
            limit = 10

            def __iter__(self):
                return iter(range(self.limit))

        lib.manual_seed(2)
        loader = data.DataLoader(Limited(), batch_size=2, num_workers=2, worker_init_fn=shorten,
                                 persistent_workers=True)
        shuffled = data.DataLoader(augmenting(lib, 6), batch_size=2, shuffle=True, num_workers=2,
                                   persistent_workers=True)
        return list(loader), list(loader), list(shuffled), list(shuffled), lib.rand(1)
    same(scenario)


def test_worker_errors_name_the_worker(monkeypatch):
    import torch
    # PyTorch waits this long for a failed worker to exit before terminating it
    monkeypatch.setattr(torch.utils.data._utils, "MP_STATUS_CHECK_INTERVAL", 0.05)

    def first_line(fn):
        outcome = attempt(fn)
        return outcome[0], outcome[1].splitlines()[0]

    def scenario(lib):
        data = lib.utils.data

        def failing_init(worker_id):
            raise ValueError("bad init")

        class Missing(data.Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                raise KeyError(i) if i == 3 else IndexError("no")

        return (first_line(lambda: list(data.DataLoader(squares(lib, 2), num_workers=2,
                                                        worker_init_fn=failing_init))),
                first_line(lambda: list(data.DataLoader(Missing(), batch_size=None,
                                                        sampler=[3], num_workers=1))),
                first_line(lambda: list(data.DataLoader(Missing(), num_workers=2))))
    same(scenario)
