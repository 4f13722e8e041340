"""``FileOpener`` (``open_files``) (torch/utils/data/datapipes/iter/fileopener.py)."""
from __future__ import annotations

from typing import Iterable, Iterator

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import _no_valid_length, get_file_binaries_from_pathnames

__all__ = ["FileOpenerIterDataPipe"]


@functional_datapipe("open_files")
class FileOpenerIterDataPipe(IterDataPipe):
    """``(pathname, stream)`` for each pathname, the file opened in ``mode``
    (``"r"``, ``"rb"``, ``"rt"``, ``"b"``, ``"t"``) as a ``StreamWrapper``."""

    def __init__(self, datapipe: Iterable[str], mode: str = "r", encoding: str | None = None,
                 length: int = -1) -> None:
        super().__init__()
        self.datapipe = datapipe
        self.mode = mode
        self.encoding = encoding
        if self.mode not in ("b", "t", "rb", "rt", "r"):
            raise ValueError(f"Invalid mode {mode}")
        if "b" in mode and encoding is not None:
            raise ValueError("binary mode doesn't take an encoding argument")
        self.length = length

    def __iter__(self) -> Iterator:
        yield from get_file_binaries_from_pathnames(self.datapipe, self.mode, self.encoding)

    def __len__(self) -> int:
        if self.length == -1:
            raise _no_valid_length(self)
        return self.length
