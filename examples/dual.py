"""Load an example file on glasstorch or on PyTorch.

Each example imports its library in one line, ``import glasstorch as torch``;
``load_example("gpt.py", "torch")`` runs the file with that line reading
``import torch`` instead and everything else unchanged, as a fresh module
object (named ``gpt_on_torch``), so both versions can live in one process,
which is how the tests and ``benchmarks/bench_train.py`` compare the two
libraries on the very same model code.
"""
from __future__ import annotations

import pathlib
import sys
import types

LIBRARY_LINE = "import glasstorch as torch"
EXAMPLES = pathlib.Path(__file__).parent


def load_example(filename: str, library: str) -> types.ModuleType:
    """The module ``filename`` (in examples/) with ``torch`` bound to ``library``
    (``"glasstorch"`` or ``"torch"``)."""
    if library not in ("glasstorch", "torch"):
        raise ValueError(f"library must be 'glasstorch' or 'torch', got {library!r}")
    path = EXAMPLES / filename
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(LIBRARY_LINE)]
    if len(at) != 1:
        raise ValueError(f"{path} must have exactly one line starting with {LIBRARY_LINE!r}")
    if library == "torch":
        lines[at[0]] = lines[at[0]].replace(LIBRARY_LINE, "import torch", 1)
    name = f"{path.stem}_on_{library}"
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module          # dataclasses look their module up while decorating
    exec(compile("".join(lines), str(path), "exec"), module.__dict__)
    return module


def tiny_gpt(lib):
    """The example GPT at the size the tests and benchmarks compare (2 layers,
    32 wide, 23 tokens, a block of 16), seeded, with one batch of 4 sequences:
    ``(model, idx, targets)``."""
    import numpy as np
    gpt = load_example("gpt.py", lib.__name__)
    lib.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(vocab_size=23, block_size=16, n_layer=2, n_head=2, n_embd=32))
    rng = np.random.default_rng(0)
    return model, lib.from_numpy(rng.integers(0, 23, (4, 16))), \
        lib.from_numpy(rng.integers(0, 23, (4, 16)))
