"""Datasets for DataLoader tests with the "spawn" start method: a spawned worker
imports the dataset's module, so this one imports glasstorch and never torch."""
import sys

import glasstorch


class Probe(glasstorch.utils.data.Dataset):
    """Item i: (i as a tensor, whether torch was imported in this process, worker id)."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = glasstorch.utils.data.get_worker_info()
        return glasstorch.tensor(i), "torch" in sys.modules, info.id
