"""Fetching one batch (or one sample) from a dataset (torch/utils/data/_utils/fetch.py).

A fetcher turns what the index sampler yields into collated data:

    map-style       indices [i, j, ...]  -> collate([ds[i], ds[j], ...])
                    (one ``ds.__getitems__(indices)`` call when the dataset has it)
                    index i (no auto-batching) -> collate_fn(ds[i])
    iterable-style  a batch of placeholders -> the next ``len(batch)`` items of
                    ``iter(ds)``, collated; StopIteration once the stream is
                    exhausted (or when the last batch is short and drop_last)
"""
from __future__ import annotations


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


class _MapDatasetFetcher(_BaseDatasetFetcher):
    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if getattr(self.dataset, "__getitems__", None):
            data = self.dataset.__getitems__(possibly_batched_index)
        else:
            data = [self.dataset[idx] for idx in possibly_batched_index]
        return self.collate_fn(data)
