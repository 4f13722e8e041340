"""``FileLister`` (``list_files``) (torch/utils/data/datapipes/iter/filelister.py)."""
from __future__ import annotations

from typing import Iterator, Sequence

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import _no_valid_length, get_file_pathnames_from_root
from .utils import IterableWrapperIterDataPipe

__all__ = ["FileListerIterDataPipe"]


@functional_datapipe("list_files")
class FileListerIterDataPipe(IterDataPipe[str]):
    """The pathnames of the files in the ``root`` folders (a path, paths, or a
    DataPipe of paths) that match ``masks``, sorted unless ``non_deterministic``;
    ``length`` is what ``len`` reports (-1: no length)."""

    def __init__(self, root: str | Sequence[str] | IterDataPipe = ".",
                 masks: str | list[str] = "", *, recursive: bool = False,
                 abspath: bool = False, non_deterministic: bool = False,
                 length: int = -1) -> None:
        super().__init__()
        if isinstance(root, str):
            root = [root]
        if not isinstance(root, IterDataPipe):
            root = IterableWrapperIterDataPipe(root)
        self.datapipe: IterDataPipe = root
        self.masks = masks
        self.recursive = recursive
        self.abspath = abspath
        self.non_deterministic = non_deterministic
        self.length = length

    def __iter__(self) -> Iterator[str]:
        for path in self.datapipe:
            yield from get_file_pathnames_from_root(path, self.masks, self.recursive,
                                                    self.abspath, self.non_deterministic)

    def __len__(self) -> int:
        if self.length == -1:
            raise _no_valid_length(self)
        return self.length
