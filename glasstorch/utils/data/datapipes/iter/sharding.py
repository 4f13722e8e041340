"""``ShardingFilter`` (``sharding_filter``) (torch/utils/data/datapipes/iter/sharding.py).

``apply_sharding(n, i, group)`` (which the DataLoader calls through
``graph_settings.apply_sharding``: once per process with the distributed world,
once per worker) makes the filter keep items ``i, i + n, i + 2n, ...``.
Shardings of several priority groups combine: the lowest group varies fastest.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Sized

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import _no_valid_length

__all__ = ["SHARDING_PRIORITIES", "ShardingFilterIterDataPipe"]


class SHARDING_PRIORITIES(IntEnum):
    DEFAULT = 1
    DISTRIBUTED = 2
    MULTIPROCESSING = 3


class _ShardingIterDataPipe(IterDataPipe):
    """A DataPipe that ``graph_settings.apply_sharding`` shards."""

    def apply_sharding(self, num_of_instances: int, instance_id: int, sharding_group):
        raise NotImplementedError


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(_ShardingIterDataPipe):
    """Every ``num_of_instances``-th item, from ``instance_id`` on (only the group
    ``sharding_group_filter`` counts, when given)."""

    def __init__(self, source_datapipe: IterDataPipe, sharding_group_filter=None) -> None:
        super().__init__()
        self.source_datapipe = source_datapipe
        self.sharding_group_filter = sharding_group_filter
        self.groups: dict[int, tuple[int, int]] = {}
        self.num_of_instances = 1
        self.instance_id = 0
        self._update_num_of_instances()

    def apply_sharding(self, num_of_instances, instance_id,
                       sharding_group=SHARDING_PRIORITIES.DEFAULT):
        if instance_id >= num_of_instances:
            raise ValueError(f"instance_id({instance_id}) should be smaller than "
                             f"num_of_instances({num_of_instances})")
        is_default = sharding_group == SHARDING_PRIORITIES.DEFAULT
        has_default = SHARDING_PRIORITIES.DEFAULT in self.groups
        if (is_default and self.groups and not has_default) or (not is_default and has_default):
            raise RuntimeError("ShardingFilter cannot mix DEFAULT and non DEFAULT groups")
        self.groups[sharding_group] = (num_of_instances, instance_id)
        self._update_num_of_instances()

    def _update_num_of_instances(self) -> None:
        """Combine the groups' shardings, highest priority value outermost."""
        self.num_of_instances, self.instance_id = 1, 0
        for key in sorted(self.groups, reverse=True):
            if self.sharding_group_filter is None or key == self.sharding_group_filter:
                group_num_of_instances, group_instance_id = self.groups[key]
                self.instance_id += self.num_of_instances * group_instance_id
                self.num_of_instances *= group_num_of_instances

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self) -> int:
        if isinstance(self.source_datapipe, Sized):
            n = len(self.source_datapipe)
            return n // self.num_of_instances + (
                1 if self.instance_id < n % self.num_of_instances else 0)
        raise _no_valid_length(self)
