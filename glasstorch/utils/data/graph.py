"""The graph of a DataPipe pipeline (torch/utils/data/graph.py).

``traverse_dps(dp)`` returns ``{id(dp): (dp, {id(source): (source, {...}), ...})}``:
each DataPipe with the DataPipes it was built from.  They are found the way
PyTorch finds them, by pickling: while ``dp`` is pickled into a scratch buffer,
a ``__reduce_ex__`` hook records every other DataPipe met (and stands a stub in
for it, so the pickling stops there), and a ``__getstate__`` hook keeps only the
attributes that are DataPipes or collections (so DataPipes held in lists,
tuples and dicts are found, other attributes are skipped).
"""
from __future__ import annotations

import io
import pickle
import warnings
from typing import Collection

from .datapipes.datapipe import IterDataPipe, MapDataPipe
from .datapipes.utils.common import _import_dill

__all__ = ["traverse", "traverse_dps"]

DataPipe = IterDataPipe | MapDataPipe
DataPipeGraph = dict


def _stub_unpickler() -> str:
    return "STUB"


def _keep_datapipes_and_collections(ori_state):
    """``__getstate__`` hook: of a DataPipe's state, only the DataPipes and collections."""
    def wanted(v):
        return isinstance(v, (IterDataPipe, MapDataPipe, Collection))

    if isinstance(ori_state, dict):
        return {k: v for k, v in ori_state.items() if wanted(v)}
    if isinstance(ori_state, (tuple, list)):
        return [v for v in ori_state if wanted(v)]
    return ori_state if wanted(ori_state) else None


def _list_connected_datapipes(scan_obj, only_datapipe: bool, cache: set[int]) -> list:
    """The DataPipes met when pickling ``scan_obj`` (not looking into them), each
    once; ``cache`` holds the ids already seen on this path."""
    f = io.BytesIO()
    captured_connections = []

    def reduce_hook(obj):
        if obj == scan_obj or id(obj) in cache:
            raise NotImplementedError   # pickled as usual
        captured_connections.append(obj)
        cache.add(id(obj))
        return _stub_unpickler, ()

    classes = (IterDataPipe, MapDataPipe)
    dill = _import_dill()
    try:
        for cls in classes:
            cls.set_reduce_ex_hook(reduce_hook)
            if only_datapipe:
                cls.set_getstate_hook(_keep_datapipes_and_collections)
        try:
            pickle.Pickler(f).dump(scan_obj)
        except (pickle.PickleError, AttributeError, TypeError):
            if dill is None:
                raise
            dill.Pickler(f).dump(scan_obj)
    finally:
        for cls in classes:
            cls.set_reduce_ex_hook(None)
            if only_datapipe:
                cls.set_getstate_hook(None)
        if dill is not None:
            dill.extend(False)      # undo dill's change to pickle's dispatch table
    return captured_connections


def traverse_dps(datapipe) -> DataPipeGraph:
    """The graph of ``datapipe``: its DataPipe and collection attributes, recursively."""
    return _traverse_helper(datapipe, only_datapipe=True, cache=set())


def traverse(datapipe, only_datapipe: bool | None = None) -> DataPipeGraph:
    """Deprecated form of ``traverse_dps``: by default it looks into every attribute."""
    msg = ("`traverse` function is deprecated and will be removed after 1.13. "
           "Please use `traverse_dps` instead.")
    if not only_datapipe:
        msg += " And, the behavior will be changed to the equivalent of `only_datapipe=True`."
    warnings.warn(msg, FutureWarning, stacklevel=2)
    return _traverse_helper(datapipe, bool(only_datapipe), set())


def _traverse_helper(datapipe, only_datapipe: bool, cache: set[int]) -> DataPipeGraph:
    if not isinstance(datapipe, (IterDataPipe, MapDataPipe)):
        raise RuntimeError(
            f"Expected `IterDataPipe` or `MapDataPipe`, but {type(datapipe)} is found")
    dp_id = id(datapipe)
    if dp_id in cache:      # a cycle on this path
        return {}
    cache.add(dp_id)
    # copies: a DataPipe reached along two paths appears under both
    items = _list_connected_datapipes(datapipe, only_datapipe, cache.copy())
    children: DataPipeGraph = {}
    for item in items:
        children.update(_traverse_helper(item, only_datapipe, cache.copy()))
    return {dp_id: (datapipe, children)}
