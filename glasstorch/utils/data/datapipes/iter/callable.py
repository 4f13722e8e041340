"""``Mapper`` (``map``) and ``Collator`` (``collate``)
(torch/utils/data/datapipes/iter/callable.py)."""
from __future__ import annotations

import functools
import importlib.util
from collections import namedtuple
from typing import Callable, Iterator, Sized, TypeVar

from ..._utils.collate import default_collate
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import _check_unpickable_fn, _no_valid_length, validate_input_col

__all__ = ["CollatorIterDataPipe", "MapperIterDataPipe"]

_T_co = TypeVar("_T_co", covariant=True)


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe[_T_co]):
    """``fn`` applied to each item, or to the columns ``input_col`` of each item
    (several columns: as several arguments), the result replacing the first input
    column (the others are removed) or stored at ``output_col`` (-1: appended)."""

    datapipe: IterDataPipe
    fn: Callable

    def __init__(self, datapipe: IterDataPipe, fn: Callable, input_col=None,
                 output_col=None) -> None:
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(fn)
        self.fn = fn
        self.input_col = input_col
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]
        self.output_col = output_col
        validate_input_col(fn, input_col)

    def _apply_fn(self, data):
        if self.input_col is None and self.output_col is None:
            return self.fn(data)
        if self.input_col is None:
            res = self.fn(data)
        elif isinstance(self.input_col, (list, tuple)):
            res = self.fn(*(data[col] for col in self.input_col))
        else:
            res = self.fn(data[self.input_col])

        is_tuple = isinstance(data, tuple)
        if is_tuple:
            data = list(data)
        if self.output_col is None:
            if isinstance(self.input_col, (list, tuple)):
                data[self.input_col[0]] = res
                for idx in sorted(self.input_col[1:], reverse=True):
                    del data[idx]
            else:
                data[self.input_col] = res
        elif self.output_col == -1:
            data.append(res)
        else:
            data[self.output_col] = res
        return tuple(data) if is_tuple else data

    def __iter__(self) -> Iterator[_T_co]:
        for data in self.datapipe:
            yield self._apply_fn(data)

    def __len__(self) -> int:
        if isinstance(self.datapipe, Sized):
            return len(self.datapipe)
        raise _no_valid_length(self)


def _collate_helper(conversion, item):
    """Collate a batch holding one DataFrame column by column: ``conversion[name]``
    for the columns it names, TorchArrow's default for the others; a namedtuple."""
    if len(item.items) > 1:
        raise RuntimeError("Only supports one DataFrame per batch")
    df = item[0]
    if importlib.util.find_spec("pandas") is None:     # the DataFrame prototype's backend
        raise RuntimeError("DataFrames prototype requires pandas to function")
    columns_name = list(df.columns.values.tolist())
    for name in conversion:
        if name not in columns_name:
            raise RuntimeError("Conversion keys mismatch")
    tuple_names, tuple_values = [], []
    for name in columns_name:
        if name in conversion:
            if not callable(conversion[name]):
                raise RuntimeError("Collate (DF)DataPipe requires callable as dict values")
            collation_fn = conversion[name]
        else:
            try:
                import torcharrow.pytorch as tap
                collation_fn = tap.rec.Default()
            except Exception as e:
                raise RuntimeError(
                    "unable to import default collation function from the TorchArrow") from e
        tuple_names.append(str(name))
        tuple_values.append(collation_fn(df[name]))
    return namedtuple("CollateResult", tuple_names)(*tuple_values)


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    """``map`` with a collate function (``collate_fn``, or a callable
    ``conversion``; default ``default_collate``); a dict ``conversion`` collates
    DataFrame batches column by column."""

    def __init__(self, datapipe: IterDataPipe, conversion=default_collate,
                 collate_fn: Callable | None = None) -> None:
        if collate_fn is None:
            collate_fn = conversion if callable(conversion) else \
                functools.partial(_collate_helper, conversion)
        super().__init__(datapipe, fn=collate_fn)
