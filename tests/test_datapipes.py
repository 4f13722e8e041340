"""DataPipes (torch.utils.data.datapipes) against real PyTorch: every pipeline is
built the same way in both libraries and iterated; items, lengths, reprs,
warnings, exception types and messages must agree.  Seeded shuffles (through
``manual_seed``, ``set_seed`` or the DataLoader's generator) give the same
orders, and the DataLoader treats DataPipes as PyTorch's does (shuffle
settings, seeding, sharding over workers).
"""
from __future__ import annotations

import functools
import importlib
import pickle

import pytest
from hypothesis import given, settings, strategies as st

from .test_data import attempt, returned, same


def _double(x):
    return 2 * x


def _is_even(x):
    return x % 2 == 0


def _add(a, b):
    return a + b


def _sum_is_even(a, b):
    return (a + b) % 2 == 0


def _next_seed(lib):
    """An int64 from the default generator: shows that both consumed it alike."""
    return lib.empty((), dtype=lib.int64).random_().item()


def _parity(x):
    return x % 2


def _mod3(x):
    return x % 3


def _names(chunks):
    """Items with the type name of each container (DataChunk or list or tuple)."""
    if isinstance(chunks, (list, tuple)):
        return (type(chunks).__name__, [_names(c) for c in chunks])
    return chunks


def _dp(lib):
    return lib.utils.data.datapipes


# -- the functional API, reprs, lengths ----------------------------------------------------


def test_functional_pipeline_items_lengths_reprs():
    def scenario(lib):
        it = _dp(lib).iter
        src = it.IterableWrapper(range(11))
        dp = src.map(_double).filter(_is_even).batch(3)
        by_class = it.Batcher(it.Filter(it.Mapper(src, _double), _is_even), 3, drop_last=True)
        return (_names(list(dp)), len(src.map(_double).batch(4)), repr(dp), str(dp),
                _names(list(by_class)), attempt(lambda: len(by_class)), repr(src),
                attempt(lambda: len(src.filter(_is_even))),
                attempt(lambda: src.no_such_function),
                attempt(lambda: len(it.IterableWrapper(iter(range(3))))),
                type(dp).__qualname__, sorted(set(dir(dp)) & {"map", "batch", "shuffle"}),
                dp.map.__doc__ is not None)
    same(scenario)


def test_datachunk():
    def scenario(lib):
        chunk = lib.utils.data.DataChunk([1, 2, 3])
        return (chunk.as_str("  "), list(chunk), list(chunk.raw_iterator()), chunk.items,
                isinstance(chunk, list))
    same(scenario)


def test_mapper_columns():
    def scenario(lib):
        it = _dp(lib).iter
        rows = it.IterableWrapper([(1, 2, 3), (4, 5, 6)])
        lists = it.IterableWrapper([[1, 2, 3], [4, 5, 6]])
        dicts = it.IterableWrapper([{"a": 1, "b": 2}])
        return (list(rows.map(_double, input_col=0)),
                list(rows.map(_add, input_col=[0, 2])),
                list(rows.map(_add, input_col=(1, 2), output_col=-1)),
                list(lists.map(_double, input_col=1, output_col=[0])),
                list(dicts.map(_double, input_col="a", output_col="c")),
                attempt(lambda: rows.map(_double, output_col=1)),
                attempt(lambda: rows.map(_double, input_col=0, output_col=[0, 1])),
                attempt(lambda: rows.map(_add, input_col=0)),
                attempt(lambda: rows.map(_double, input_col=[0, 1])),
                attempt(lambda: rows.map(lambda a, *, k: a, input_col=0)),
                attempt(lambda: rows.map(3)),
                list(rows.map(functools.partial(_add, 10), input_col=2)),
                list(rows.map(max, input_col=[0, 1])))
    same(scenario)


def test_errors_inside_iter_name_the_datapipe():
    def bad_key(x):
        return x[5]

    def scenario(lib):
        it = _dp(lib).iter
        src = it.IterableWrapper([1, 2, 3])
        not_bool = src.filter(_parity)
        return (attempt(lambda: list(not_bool)),
                attempt(lambda: list(it.IterableWrapper([[1]]).map(bad_key))),
                attempt(lambda: list(src.filter(_is_even, input_col=0))),
                list(it.IterableWrapper([(1, 2), (3, 3)]).filter(_sum_is_even, input_col=[0, 1])
                     .filter(_is_even, input_col=1)))
    same(scenario)


def test_batch_unbatch_collate():
    def scenario(lib):
        it = _dp(lib).iter
        src = it.IterableWrapper(range(7))
        nested = it.IterableWrapper([[[0, 1], [2]], [[3]]])
        pairs = it.IterableWrapper([(1, 2.0), (3, 4.0), (5, 6.0)]).batch(2)
        return (_names(list(src.batch(3))), len(src.batch(3)), len(src.batch(3, drop_last=True)),
                _names(list(src.batch(2, wrapper_class=list))),
                attempt(lambda: src.batch(0)),
                list(nested.unbatch()), list(nested.unbatch(unbatch_level=2)),
                list(nested.unbatch(unbatch_level=-1)), list(nested.unbatch(unbatch_level=0)),
                attempt(lambda: list(nested.unbatch(unbatch_level=3))),
                attempt(lambda: list(nested.unbatch(unbatch_level=-2))),
                list(pairs.collate()), list(pairs.collate(collate_fn=len)),
                list(it.Collator(pairs, conversion=len)),
                attempt(lambda: list(src.batch(1).collate(conversion={"a": len}))),
                attempt(lambda: list(src.batch(2).collate(conversion=None))))
    same(scenario)


# -- shuffling: seeded orders ----------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 40), buffer_size=st.integers(1, 50))
def test_shuffle_seeded_orders(seed, n, buffer_size):
    def scenario(lib):
        lib.manual_seed(seed)
        dp = _dp(lib).iter.IterableWrapper(range(n)).shuffle(buffer_size=buffer_size)
        first, second = list(dp), list(dp)
        fixed = list(dp.set_seed(seed)), list(dp.set_seed(seed))
        return first, second, fixed, len(dp), list(dp.set_shuffle(False))
    same(scenario)


def test_shuffle_options_and_state():
    def scenario(lib):
        it = _dp(lib).iter
        lib.manual_seed(3)
        batched = it.IterableWrapper(range(12)).batch(3).shuffle(unbatch_level=1, buffer_size=4)
        shuffler = it.Shuffler(it.IterableWrapper(range(30)), buffer_size=7)
        iterator = iter(shuffler)
        head = [next(iterator) for _ in range(10)]
        restored = pickle.loads(pickle.dumps(shuffler))
        return (list(batched), head, list(iterator),
                attempt(lambda: it.Shuffler(batched, buffer_size=0)),
                attempt(lambda: len(it.IterableWrapper(iter([])).shuffle())),
                type(restored).__name__, restored.buffer_size, restored._enabled)
    same(scenario)


def test_sampler_datapipe():
    def scenario(lib):
        it = _dp(lib).iter
        data = lib.utils.data
        src = it.IterableWrapper(range(6))
        generator = lib.Generator().manual_seed(5)
        return (list(it.Sampler(src)), len(it.Sampler(src)),
                list(it.Sampler(src, sampler=data.RandomSampler,
                                sampler_kwargs={"generator": generator})),
                attempt(lambda: it.Sampler(it.IterableWrapper(iter([])).filter(_is_even))))
    same(scenario)


# -- combining -------------------------------------------------------------------------------


def test_concat_zip_mux():
    def scenario(lib):
        it = _dp(lib).iter
        a, b, c = (it.IterableWrapper(r) for r in (range(3), range(10, 15), range(20, 22)))
        endless = it.IterableWrapper(iter(range(4)))
        return (list(a.concat(b, c)), len(a.concat(b)), list(a.zip(b, c)), len(a.zip(b, c)),
                list(a.mux(b, c)), len(a.mux(b, c)), list(it.Multiplexer(b, a)),
                attempt(lambda: it.Concater()), attempt(lambda: a.concat([1])),
                attempt(lambda: a.zip([1])), attempt(lambda: len(a.concat(endless))),
                attempt(lambda: len(a.zip(endless))), attempt(lambda: len(a.mux(endless))),
                attempt(lambda: list(it.Zipper())))
    same(scenario)


def test_fork():
    def scenario(lib):
        it = _dp(lib).iter
        src = it.IterableWrapper([[0], [1], [2], [3]])
        one = src.fork(1)
        d1, d2, d3 = src.fork(3, copy="deep")
        i1, i2 = iter(d1), iter(d2)
        steps = [next(i1), next(i1), next(i2), next(i1), next(i2)]
        steps[0].append("changed")      # a deep copy: the others never see it
        rest = list(i1), list(i2), list(d3)
        s1, s2 = src.fork(2, buffer_size=1)
        tight = iter(s1)
        overflow = attempt(lambda: [next(tight) for _ in range(3)])
        return (one is src, steps, rest, len(d1), overflow,
                attempt(lambda: src.fork(0)), attempt(lambda: src.fork(2, copy="odd")),
                type(d1).__name__, repr(d1))
    same(scenario)


def test_fork_restarts_and_invalidates():
    def scenario(lib):
        it = _dp(lib).iter
        c1, c2 = it.IterableWrapper(range(5)).fork(2)
        first = iter(c1)
        head = next(first), next(first)
        again = list(c2), list(c1)        # a restart while c1's first pass is unfinished
        return head, again, attempt(lambda: next(first))
    same(scenario)


def test_demux():
    def scenario(lib):
        it = _dp(lib).iter
        src = it.IterableWrapper(range(10))
        evens, odds = src.demux(2, _parity)
        zero, one, two = src.demux(3, _mod3, buffer_size=-1)
        none_dropping = src.demux(2, lambda x: None if x < 3 else x % 2, drop_none=True)
        bad = src.demux(2, _mod3)
        small = src.demux(2, _parity, buffer_size=2)
        return (list(evens), list(odds), list(two), list(one), list(zero),
                [list(d) for d in none_dropping], attempt(lambda: list(bad[0])),
                attempt(lambda: list(small[1])),
                attempt(lambda: list(src.demux(2, lambda x: None)[0])),
                attempt(lambda: len(evens)), attempt(lambda: src.demux(0, _parity)))
    same(scenario)


def test_groupby():
    def scenario(lib):
        it = _dp(lib).iter
        src = it.IterableWrapper([1, 4, 7, 2, 5, 8, 3, 10, 13, 6])
        return (_names(list(src.groupby(_mod3))),
                list(src.groupby(_mod3, keep_key=True, group_size=2)),
                _names(list(src.groupby(_mod3, buffer_size=3))),
                list(src.groupby(_mod3, buffer_size=4, group_size=3, guaranteed_group_size=2,
                                 drop_remaining=True)),
                attempt(lambda: list(src.groupby(_mod3, buffer_size=3, group_size=3,
                                                 guaranteed_group_size=2))),
                attempt(lambda: src.groupby(_mod3, buffer_size=2, group_size=3)),
                attempt(lambda: src.groupby(_mod3, guaranteed_group_size=2)))
    same(scenario)


# -- the one-iterator rule -----------------------------------------------------------------


def test_single_iterator_per_datapipe():
    def scenario(lib):
        it = _dp(lib).iter
        dp = it.IterableWrapper(range(3)).map(_double)
        first = iter(dp)
        next(first)
        second = iter(dp)
        second_head = next(second)      # a generator starts (and invalidates `first`) here

        class Countdown(lib.utils.data.IterDataPipe):
            """Its own iterator: __iter__ returns self, __next__ counts down."""

            def __init__(self):
                self.n = 3

            def __iter__(self):
                self.n = 3
                return self

            def __next__(self):
                if self.n == 0:
                    raise StopIteration
                self.n -= 1
                return self.n

        countdown = Countdown()
        return (attempt(lambda: next(first)), second_head, list(second), list(countdown),
                list(countdown),
                countdown._number_of_samples_yielded, dp._number_of_samples_yielded,
                dp._valid_iterator_id, repr(countdown))
    same(scenario)


# -- decorators, registration, types -------------------------------------------------------


def test_functional_datapipe_registration_and_determinism():
    def scenario(lib):
        data = lib.utils.data
        name = "_test_square"

        @data.functional_datapipe(name)
        class Square(data.IterDataPipe):
            def __init__(self, source):
                self.source = source

            def __iter__(self):
                for x in self.source:
                    yield x * x

        @data.non_deterministic
        class Random(data.IterDataPipe):
            def __init__(self, source):
                self.source = source

            def __iter__(self):
                yield from self.source

        @data.non_deterministic(lambda source, flag: flag)
        class Sometimes(data.IterDataPipe):
            def __init__(self, source, flag):
                self.source = source

            def __iter__(self):
                yield from self.source

        src = data.datapipes.iter.IterableWrapper(range(4))
        squared = list(getattr(src, name)())
        with data.guaranteed_datapipes_determinism():
            refused = attempt(lambda: Random(src))
            refused_inputs = attempt(lambda: Sometimes(src, True))
            allowed = list(Sometimes(src, False))
        return (squared, attempt(lambda: data.functional_datapipe(name)(Square)),
                refused, refused_inputs, allowed, list(Random(src)),
                attempt(lambda: data.non_deterministic(int)),
                attempt(lambda: data.non_deterministic(3)),
                attempt(lambda: data.non_deterministic(lambda: True)(int)),
                attempt(lambda: list(data.non_deterministic(lambda s: 1)(Random)(src))))
    same(scenario)


def test_runtime_and_argument_validation():
    def scenario(lib):
        data = lib.utils.data
        DataPipeType = data.datapipes._typing._DataPipeType

        class Ints(data.IterDataPipe):
            type = DataPipeType(int)

            def __init__(self, items):
                self.items = items

            @data.runtime_validation
            def __iter__(self):
                yield from self.items

        class Strs(data.IterDataPipe):
            type = DataPipeType(str)

            def __iter__(self):
                yield "a"

        class Untyped(data.IterDataPipe):
            @data.runtime_validation
            def __iter__(self):
                yield 1

        def init(self, dp, other=0):
            self.dp = dp

        init.__annotations__ = {"dp": Ints, "other": int}

        class Consumer(data.IterDataPipe):
            __init__ = data.argument_validation(init)

            def __iter__(self):
                yield from self.dp

        good = list(Ints([1, 2]))
        not_int = attempt(lambda: list(Ints([True])))
        bad = attempt(lambda: list(Ints([1, "x"])))
        with data.runtime_validation_disabled():
            unchecked = list(Ints([1, "x"]))
        return (good, not_int, bad, unchecked, attempt(lambda: list(Untyped())),
                list(Consumer(Ints([3]))), attempt(lambda: Consumer(Strs())),
                attempt(lambda: Consumer([1])),
                attempt(lambda: data.runtime_validation(lambda self: None)))
    same(scenario)


_TYPES = ["int", "bool", "float", "complex", "str", "None", "typing.Any", "list",
          "typing.List[int]", "typing.List[float]", "list[bool]", "tuple", "typing.Tuple[int, str]",
          "typing.Tuple[int]", "dict", "typing.Dict[str, int]", "typing.Union[int, str]",
          "typing.Optional[int]", "typing.Union[float, typing.List[int]]", "T_int", "T_num",
          "typing.Iterator[int]", "typing.Sequence[int]"]


def _type(name):
    import typing
    scope = {"typing": typing, "T_int": typing.TypeVar("T_int", bound=int),
             "T_num": typing.TypeVar("T_num", int, float)}
    return eval(name, scope)    # noqa: S307 - a fixed list of type expressions


def test_issubtype_and_issubinstance():
    values = [1, True, 1.5, "s", None, [1, 2], [1, "a"], (1, "a"), (1,), {"k": 1}, {"k": "v"},
              {1, 2}, [], ()]

    def scenario(lib):
        typing_mod = _dp(lib)._typing
        subtypes = {(a, b): typing_mod.issubtype(_type(a), _type(b))
                    for a in _TYPES for b in _TYPES}
        instances = {(repr(v), t): typing_mod.issubinstance(v, _type(t))
                     for v in values for t in _TYPES if not t.startswith("T_")}
        wrapped = typing_mod._DataPipeType(_type("typing.List[int]"))
        return (subtypes, instances, repr(wrapped), wrapped == typing_mod._DataPipeType(list[int]),
                wrapped.issubtype(typing_mod._DataPipeType(list)),
                wrapped.issubtype_of_instance([1]),
                attempt(lambda: wrapped.issubtype(3)))
    same(scenario)


def test_subscripting_and_class_structure():
    def scenario(lib):
        data = lib.utils.data

        class Mine(data.IterDataPipe[int]):
            def __iter__(self):
                yield 1

        return (repr(data.IterDataPipe[int]).split(".")[-1], data.MapDataPipe[str].__args__,
                type(data.IterDataPipe[int]).__name__, isinstance(Mine(), data.IterableDataset),
                isinstance(data.datapipes.map.SequenceWrapper([1]), data.Dataset),
                type(type(Mine())).__name__, type(data.MapDataPipe).__name__,
                hasattr(Mine(), "type"), list(Mine()),
                issubclass(data.DFIterDataPipe, data.IterDataPipe),
                data.DFIterDataPipe()._is_dfpipe())
    same(scenario)


# -- sharding and graph settings ------------------------------------------------------------


def test_sharding_filter_and_graph_settings():
    def scenario(lib):
        data = lib.utils.data
        it = data.datapipes.iter
        gs = data.graph_settings
        prio = it.sharding.SHARDING_PRIORITIES
        shards = []
        for i in range(3):
            dp = it.IterableWrapper(range(10)).sharding_filter()
            gs.apply_sharding(dp, 3, i)
            shards.append((list(dp), len(dp)))
        grouped = it.IterableWrapper(range(12)).sharding_filter()
        grouped.apply_sharding(2, 1, prio.DISTRIBUTED)
        grouped.apply_sharding(3, 2, prio.MULTIPROCESSING)
        filtered = it.ShardingFilter(it.IterableWrapper(range(12)),
                                     sharding_group_filter=prio.DISTRIBUTED)
        filtered.apply_sharding(2, 1, prio.DISTRIBUTED)
        filtered.apply_sharding(3, 2, prio.MULTIPROCESSING)
        twice = it.IterableWrapper(range(4)).sharding_filter().map(_double).sharding_filter()
        mixed = it.IterableWrapper(range(4)).sharding_filter()
        mixed.apply_sharding(2, 0)
        return (shards, list(grouped), list(filtered),
                attempt(lambda: gs.apply_sharding(twice, 2, 0)),
                attempt(lambda: mixed.apply_sharding(2, 0, prio.DISTRIBUTED)),
                attempt(lambda: it.IterableWrapper([]).sharding_filter().apply_sharding(2, 2)),
                attempt(lambda: len(it.IterableWrapper(iter([])).sharding_filter())))
    same(scenario)


def _graph_shape(graph):
    return sorted((type(dp).__name__, _graph_shape(sub)) for dp, sub in graph.values())


def test_traverse_and_random_seeds():
    def scenario(lib):
        data = lib.utils.data
        it = data.datapipes.iter
        a = it.IterableWrapper(range(6)).shuffle(buffer_size=3)
        b, c = a.map(_double).fork(2)
        pipe = b.zip(c.shuffle(), it.IterableWrapper(range(3)).concat(it.IterableWrapper([9])))
        graph = data.graph.traverse_dps(pipe)
        pipes = data.graph_settings.get_all_graph_pipes(graph)
        data.graph_settings.apply_random_seed(pipe, lib.Generator().manual_seed(11))
        lib.manual_seed(0)
        seeded = list(pipe)
        with pytest.warns(FutureWarning):
            data.graph_settings.apply_shuffle_seed(pipe, lib.Generator().manual_seed(11))
        toggled = data.graph_settings.apply_shuffle_settings(pipe, shuffle=False)
        appended = data.graph_settings.apply_shuffle_settings(it.IterableWrapper(range(3)), True)
        return (_graph_shape(graph), sorted(type(p).__name__ for p in pipes), seeded,
                toggled is pipe, list(pipe), type(appended).__name__,
                data.graph_settings.apply_shuffle_settings(pipe) is pipe,
                attempt(lambda: data.graph.traverse_dps([1])),
                _graph_shape(data.graph.traverse_dps(
                    data.datapipes.map.SequenceWrapper([1]).map(_double))))
    same(scenario)


def test_snapshot_restoration():
    def scenario(lib):
        data = lib.utils.data
        snapshot = importlib.import_module(f"{lib.__name__}.utils.data.datapipes.utils.snapshot")\
            ._simple_graph_snapshot_restoration
        lib.manual_seed(0)
        dp = data.datapipes.iter.IterableWrapper(range(10)).shuffle().map(_double)
        snapshot(dp, 4, lib.Generator().manual_seed(2))
        rest = list(dp)
        again = dp._snapshot_state.name
        snapshot(dp, 0, lib.Generator().manual_seed(2))
        return (rest, again, dp._snapshot_state.name,
                attempt(lambda: snapshot(dp, 1, lib.Generator().manual_seed(2))),
                list(dp), attempt(lambda: snapshot(dp, 11, lib.Generator().manual_seed(2))))
    same(scenario)


# -- map-style DataPipes ----------------------------------------------------------------------


def test_map_datapipes():
    def scenario(lib):
        mp = _dp(lib).map
        seq = mp.SequenceWrapper(range(7))
        other = mp.SequenceWrapper("abc")
        lib.manual_seed(4)
        shuffled = seq.shuffle()
        return (list(seq.map(_double)), len(seq.map(_double)), list(mp.Mapper(seq)),
                _names(list(seq.batch(3))), len(seq.batch(3)), len(seq.batch(3, drop_last=True)),
                attempt(lambda: seq.batch(3, drop_last=True)[2]),
                attempt(lambda: seq.batch(3)[3]), attempt(lambda: seq.batch(-1)),
                list(seq.concat(other)), len(seq.concat(other)),
                attempt(lambda: seq.concat(other)[10]),
                list(seq.zip(other)), len(seq.zip(other)), attempt(lambda: seq.zip(other)[5]),
                attempt(lambda: mp.Concater()), attempt(lambda: mp.Zipper(seq, [1])),
                list(shuffled), list(shuffled), type(shuffled).__name__, len(shuffled),
                list(mp.Shuffler(seq, indices=[1, 3, 5]).set_seed(8)),
                list(seq.shuffle().set_shuffle(False)), repr(seq),
                mp.SequenceWrapper({"a": 1})["a"], attempt(lambda: seq.no_such),
                list(mp.SequenceWrapper([[1]], deepcopy=False)))
    same(scenario)


# -- files -------------------------------------------------------------------------------------


def test_file_datapipes(tmp_path):
    (tmp_path / "sub").mkdir()
    for name, text in [("b.txt", "bee"), ("a.txt", "ay"), ("c.csv", "1,2"), ("sub/d.txt", "dee")]:
        (tmp_path / name).write_text(text)
    root = str(tmp_path)

    def scenario(lib):
        it = _dp(lib).iter
        rel = functools.partial(_relative, root)
        listed = it.FileLister(root, "*.txt")
        recursive = it.FileLister([root], ["*.txt", "*.csv"], recursive=True, length=5)
        opened = listed.open_files(mode="b")
        read = [(rel(name), stream.read()) for name, stream in opened]
        chunks = list(listed.open_files().read_from_stream(chunk=2))
        return ([rel(p) for p in listed], [rel(p) for p in recursive], len(recursive),
                attempt(lambda: len(listed)), read, [(rel(n), d) for n, d in chunks],
                [rel(p) for p in it.FileLister(root + "/a.txt")],
                attempt(lambda: it.FileOpener(listed, mode="w")),
                attempt(lambda: it.FileOpener(listed, mode="rb", encoding="utf-8")),
                attempt(lambda: len(it.FileOpener(listed))),
                attempt(lambda: list(it.FileOpener(it.IterableWrapper([3])))))
    same(scenario)


def _relative(root, path):
    return path[len(root):]


# -- the DataLoader ------------------------------------------------------------------------------


def test_dataloader_with_datapipes():
    def scenario(lib):
        data = lib.utils.data
        it = data.datapipes.iter
        lib.manual_seed(7)
        shuffled = it.IterableWrapper(range(10)).shuffle(buffer_size=4).map(_double)
        epochs = [list(data.DataLoader(shuffled, batch_size=3)) for _ in range(2)]
        loader = data.DataLoader(shuffled, batch_size=None, shuffle=False)
        unshuffled = list(loader)
        generator = lib.Generator().manual_seed(3)
        seeded = list(data.DataLoader(it.IterableWrapper(range(6)).shuffle(), batch_size=2,
                                      shuffle=True, generator=generator))
        plain = it.IterableWrapper(range(4))
        appended = list(data.DataLoader(plain, batch_size=2, shuffle=True))
        mapped = data.DataLoader(data.datapipes.map.SequenceWrapper(range(5)), batch_size=2,
                                 shuffle=True, generator=lib.Generator().manual_seed(1))
        endless = data.DataLoader(it.IterableWrapper(iter(range(2))))
        return (epochs, unshuffled, type(loader.dataset).__name__, seeded, appended,
                list(mapped), len(mapped), type(mapped.dataset).__name__,
                attempt(lambda: len(endless)), len(data.DataLoader(plain, batch_size=3)),
                attempt(lambda: data.DataLoader(plain, sampler=[0])),
                lib.initial_seed() == 7, _next_seed(lib))
    same(scenario)


@pytest.mark.parametrize("num_workers", [2])
def test_dataloader_workers_shard_and_seed(num_workers):
    def scenario(lib):
        data = lib.utils.data
        it = data.datapipes.iter
        lib.manual_seed(5)
        dp = it.IterableWrapper(range(12)).shuffle().sharding_filter().map(_double)
        loader = data.DataLoader(dp, batch_size=2, num_workers=num_workers,
                                 persistent_workers=True)
        epochs = [list(loader) for _ in range(2)]
        sharded_map = data.DataLoader(data.datapipes.map.SequenceWrapper(range(4)),
                                      num_workers=num_workers)
        return epochs, list(sharded_map), _next_seed(lib)
    returned(same(scenario))


def test_profiler_records_datapipe_steps():
    def scenario(lib):
        dp = _dp(lib).iter.IterableWrapper(range(3)).map(_double)
        with lib.profiler.profile() as prof:
            items = list(dp)
        names = sorted({e.name for e in prof.events() if "DataPipe" in e.name
                        or "(" in e.name and "=" in e.name})
        return items, names
    same(scenario)


def test_common_helpers_and_hooks(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("line one\nline two\n")

    def scenario(lib):
        data = lib.utils.data
        common = data.datapipes.utils.common
        warn = common._deprecation_warning
        parent = common.StreamWrapper(open(path), name="parent")
        child = common.StreamWrapper(open(path), parent_stream=parent)
        parent.autoclose()
        still_open = parent.closed
        common.StreamWrapper.close_streams({"a": [child]})
        lines = list(common.StreamWrapper(open(path)))
        dp = data.datapipes.iter.IterableWrapper([1])
        data.IterDataPipe.set_getstate_hook(lambda state: state)
        try:
            twice = attempt(lambda: data.IterDataPipe.set_getstate_hook(lambda state: state))
        finally:
            data.IterDataPipe.set_getstate_hook(None)
        with pytest.warns(FutureWarning):
            old = data.graph.traverse(dp)
        return (warn("Old", deprecation_version="1.0", removal_version="2.0",
                     old_functional_name="old", new_class_name="New", new_functional_name="new"),
                warn("Old", deprecation_version="1.0", removal_version="2.0",
                     old_argument_name="a", new_argument_name="b"),
                warn("Old", deprecation_version="1.0", removal_version="2.0",
                     old_functional_name="old", deprecate_functional_name_only=True),
                attempt(lambda: warn("Old", deprecation_version="1", removal_version="2",
                                     new_functional_name="n")),
                attempt(lambda: warn("Old", deprecation_version="1", removal_version="2",
                                     old_functional_name="o", old_argument_name="a")),
                still_open, parent.closed, child.closed, repr(parent).split(",")[0], lines,
                common.match_masks("a.txt", ["*.csv", "*.txt"]), common.match_masks("a", ""),
                attempt(lambda: common.validate_pathname_binary_tuple(("a", 1))),
                attempt(lambda: common.validate_pathname_binary_tuple(["a"])),
                attempt(lambda: common.validate_pathname_binary_tuple(("a",))),
                attempt(lambda: common.validate_pathname_binary_tuple((1, 2))),
                twice, len(old))
    same(scenario)
