"""``torch.utils.data``: datasets, samplers, collation, the DataLoader and DataPipes."""
from .dataloader import _DatasetKind, DataLoader, default_collate, default_convert, get_worker_info
from .datapipes._decorator import (argument_validation, functional_datapipe,
                                   guaranteed_datapipes_determinism, non_deterministic,
                                   runtime_validation, runtime_validation_disabled)
from .datapipes.datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,
                      TensorDataset, random_split)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DFIterDataPipe", "DataChunk",
           "DataLoader", "Dataset", "DistributedSampler", "IterDataPipe", "IterableDataset",
           "MapDataPipe", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "_DatasetKind", "argument_validation", "default_collate", "default_convert",
           "functional_datapipe", "get_worker_info", "guaranteed_datapipes_determinism",
           "non_deterministic", "random_split", "runtime_validation",
           "runtime_validation_disabled"]
