"""The built-in iterable-style DataPipes (torch/utils/data/datapipes/iter)."""
from .callable import CollatorIterDataPipe as Collator, MapperIterDataPipe as Mapper
from .combinatorics import SamplerIterDataPipe as Sampler, ShufflerIterDataPipe as Shuffler
from .combining import (ConcaterIterDataPipe as Concater,
                        DemultiplexerIterDataPipe as Demultiplexer,
                        ForkerIterDataPipe as Forker, MultiplexerIterDataPipe as Multiplexer,
                        ZipperIterDataPipe as Zipper)
from .filelister import FileListerIterDataPipe as FileLister
from .fileopener import FileOpenerIterDataPipe as FileOpener
from .grouping import (BatcherIterDataPipe as Batcher, GrouperIterDataPipe as Grouper,
                       UnBatcherIterDataPipe as UnBatcher)
from .selecting import FilterIterDataPipe as Filter
from .sharding import ShardingFilterIterDataPipe as ShardingFilter
from .streamreader import StreamReaderIterDataPipe as StreamReader
from .utils import IterableWrapperIterDataPipe as IterableWrapper

__all__ = ["Batcher", "Collator", "Concater", "Demultiplexer", "FileLister", "FileOpener",
           "Filter", "Forker", "Grouper", "IterableWrapper", "Mapper", "Multiplexer", "Sampler",
           "ShardingFilter", "Shuffler", "StreamReader", "UnBatcher", "Zipper"]
