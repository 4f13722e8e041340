"""Small data sets shipped with glasstorch, so the examples and the demo run
without a network (glasstorch's own addition: PyTorch has no ``torch.data``).

* ``sonnets.txt``: 76 of Shakespeare's Sonnets (first printed 1609; public
  domain), each headed by its Roman numeral, in the modernized spelling of the
  common nineteenth-century editions.  Written out from memory, so a word or a
  mark of punctuation may differ here and there from a printed edition.
  About 47 KB, 60 distinct characters.  ``load_sonnets()``.
* ``digits.npz``: 6,000 16x16 grayscale images of the digits 0-9 rendered
  from two bitmap fonts with random size, rotation, shear, shift, stroke
  weight and speckle noise; 5,000 for training and 1,000 held out.
  ``make_digits.py`` made it and documents how.  ``load_digits(split)``.

Both loaders return plain Python / numpy values, so the same data feeds
glasstorch or PyTorch.
"""
from __future__ import annotations

import pathlib

import numpy as np

__all__ = ["load_sonnets", "load_digits"]

_HERE = pathlib.Path(__file__).parent


def load_sonnets() -> str:
    """The text of ``sonnets.txt``."""
    return (_HERE / "sonnets.txt").read_text(encoding="utf-8")


def load_digits(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """``(images, labels)`` of the ``"train"`` or ``"test"`` split: float32
    images (N, 16, 16) scaled to [0, 1] and int64 labels (N,)."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    with np.load(_HERE / "digits.npz") as data:
        images = data[f"{split}_images"].astype(np.float32) / 255.0
        labels = data[f"{split}_labels"].astype(np.int64)
    return images, labels
