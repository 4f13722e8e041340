"""torch.nn.parallel: DataParallel (and data_parallel) and DistributedDataParallel."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
