"""Settings applied across a DataPipe graph (torch/utils/data/graph_settings.py):
sharding, shuffling on/off and the seeds of random DataPipes.  The DataLoader
calls these on the DataPipe it is given."""
from __future__ import annotations

import inspect
import warnings

from ... import empty, int64
from .datapipes.iter.sharding import SHARDING_PRIORITIES, _ShardingIterDataPipe
from .graph import DataPipeGraph, traverse_dps

__all__ = ["apply_random_seed", "apply_sharding", "apply_shuffle_seed",
           "apply_shuffle_settings", "get_all_graph_pipes"]


def get_all_graph_pipes(graph: DataPipeGraph) -> list:
    """Every DataPipe of ``graph``, each once, parents before their sources."""
    results: list = []
    seen: set[int] = set()

    def visit(sub_graph):
        for dp_id, (datapipe, inner) in sub_graph.items():
            if dp_id in seen:
                continue
            seen.add(dp_id)
            results.append(datapipe)
            visit(inner)

    visit(graph)
    return results


def _has_method(datapipe, *names) -> bool:
    return all(hasattr(datapipe, name) and inspect.ismethod(getattr(datapipe, name))
               for name in names)


def _is_sharding_datapipe(datapipe) -> bool:
    return isinstance(datapipe, _ShardingIterDataPipe) or _has_method(datapipe, "apply_sharding")


def apply_sharding(datapipe, num_of_instances: int, instance_id: int,
                   sharding_group=SHARDING_PRIORITIES.DEFAULT):
    """Call ``apply_sharding`` of each sharding DataPipe of the graph; two on one
    branch is a RuntimeError."""
    def visit(graph, prev_applied=None) -> None:
        for dp, sub_graph in graph.values():
            applied = prev_applied
            if _is_sharding_datapipe(dp):
                if prev_applied is not None:
                    raise RuntimeError(
                        "Sharding twice on a single pipeline is likely unintended and will cause "
                        f"data loss. Sharding already applied to {prev_applied} while trying to "
                        f"apply to {dp}")
                # older apply_sharding methods take no sharding_group
                if len(inspect.signature(dp.apply_sharding).parameters) < 3:
                    dp.apply_sharding(num_of_instances, instance_id)
                else:
                    dp.apply_sharding(num_of_instances, instance_id, sharding_group=sharding_group)
                applied = dp
            visit(sub_graph, applied)

    visit(traverse_dps(datapipe))
    return datapipe


def _is_shuffle_datapipe(datapipe) -> bool:
    return _has_method(datapipe, "set_shuffle", "set_seed")


def apply_shuffle_settings(datapipe, shuffle: bool | None = None):
    """``set_shuffle(shuffle)`` on every shuffling DataPipe of the graph (``None``:
    leave them); ``shuffle=True`` with none appends a ``Shuffler`` (with a warning)."""
    if shuffle is None:
        return datapipe
    shufflers = [pipe for pipe in get_all_graph_pipes(traverse_dps(datapipe))
                 if _is_shuffle_datapipe(pipe)]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. "
                      "Adding one at the end. Be aware that the default buffer size might not "
                      "be sufficient for your task.", stacklevel=2)
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for shuffler in shufflers:
        shuffler.set_shuffle(shuffle)
    return datapipe


def apply_shuffle_seed(datapipe, rng):
    """Deprecated name of ``apply_random_seed``."""
    warnings.warn("`apply_shuffle_seed` is deprecated since 1.12 and will be removed in the "
                  "future releases. Please use `apply_random_seed` instead.", FutureWarning,
                  stacklevel=2)
    return apply_random_seed(datapipe, rng)


def _is_random_datapipe(datapipe) -> bool:
    return _has_method(datapipe, "set_seed")


def apply_random_seed(datapipe, rng):
    """``set_seed`` each random DataPipe of the graph (once each, in graph order)
    with an int64 drawn from the generator ``rng``."""
    random_datapipes = []
    seen: set[int] = set()
    for pipe in get_all_graph_pipes(traverse_dps(datapipe)):
        if id(pipe) not in seen and _is_random_datapipe(pipe):
            random_datapipes.append(pipe)
            seen.add(id(pipe))
    for pipe in random_datapipes:
        pipe.set_seed(int(empty((), dtype=int64).random_(generator=rng).item()))
    return datapipe
