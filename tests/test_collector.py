"""Importing glasstorch pauses the garbage collector while it builds the op
library (``_core/collector.py``) and leaves the collector as it found it:
on, off, and with what the program froze itself still frozen."""
from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """
import gc
{before}
import glasstorch as torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
(x * x).sum().backward()
assert x.grad.tolist() == [2.0, 4.0]
print(gc.isenabled(), gc.get_freeze_count() > 0)
"""


@pytest.mark.parametrize("before, expected", [
    ("", "True False"),
    ("gc.disable()", "False False"),
    ("gc.freeze()", "True True"),
])
def test_collector_left_as_found(before, expected):
    result = subprocess.run([sys.executable, "-c", PROGRAM.format(before=before)],
                            capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == expected, result.stderr[-2000:]
