"""Run a PyTorch program on glasstorch with no edit at all.

``python -m glasstorch run train.py --args`` puts an import hook in front of
every other one, so that ``import torch``, ``import torch.nn as nn`` and
``from torch.nn.parallel import DistributedDataParallel`` all bind glasstorch's
modules (the very same module objects: ``sys.modules["torch.nn"] is
glasstorch.nn``), then runs the script as ``__main__``.  Editing the import
line to ``import glasstorch as torch`` only reaches attribute access
(``torch.nn.Linear``); ``from torch.utils.data import X`` needs this hook.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import runpy
import sys


class TorchAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch`` and ``torch.<sub>`` as ``glasstorch`` and ``glasstorch.<sub>``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        try:
            importlib.import_module("glasstorch" + fullname[len("torch"):])
        except ModuleNotFoundError:
            return None         # not in glasstorch: the import fails as it would
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return sys.modules["glasstorch" + spec.name[len("torch"):]]

    def exec_module(self, module):
        pass                    # already executed under its glasstorch name


def install() -> None:
    """Make ``torch`` mean glasstorch in this process (idempotent)."""
    if not any(isinstance(finder, TorchAliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, TorchAliasFinder())


def run_script(path: str, argv: list[str]) -> None:
    """Run ``path`` as ``__main__`` with ``sys.argv = [path, *argv]`` on glasstorch."""
    install()
    sys.argv = [path, *argv]
    runpy.run_path(path, run_name="__main__")
