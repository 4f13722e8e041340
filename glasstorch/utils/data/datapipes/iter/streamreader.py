"""``StreamReader`` (``read_from_stream``) (torch/utils/data/datapipes/iter/streamreader.py)."""
from __future__ import annotations

from typing import Iterator

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["StreamReaderIterDataPipe"]


@functional_datapipe("read_from_stream")
class StreamReaderIterDataPipe(IterDataPipe):
    """``(name, chunk)`` for each read of ``chunk`` bytes (all at once when
    ``None``) from each ``(name, stream)``; a stream is closed once read."""

    def __init__(self, datapipe: IterDataPipe, chunk: int | None = None) -> None:
        self.datapipe = datapipe
        self.chunk = chunk

    def __iter__(self) -> Iterator:
        for furl, stream in self.datapipe:
            while True:
                d = stream.read(self.chunk)
                if not d:
                    stream.close()
                    break
                yield furl, d
