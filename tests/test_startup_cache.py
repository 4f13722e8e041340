"""The startup cache (``_core/startup_cache.py``): what importing glasstorch
parses and compiles, kept between runs.  A fresh, a reused and a damaged
cache file all give the same glasstorch (here: ops whose parsers, derivatives,
autograd kernels and key-set functions come from the cache, against torch),
and a damaged file is rewritten whole."""
from __future__ import annotations

import marshal
import os
import subprocess
import sys

import pytest

PROGRAM = """
import glasstorch as gt, torch
a = [1.5, -2.0, 3.25]
x = gt.tensor(a, requires_grad=True)
y = gt.add(x, 2, alpha=3).sum()
y.backward()
tx = torch.tensor(a, requires_grad=True)
ty = torch.add(tx, 2, alpha=3).sum()
ty.backward()
assert y.item() == ty.item() and x.grad.tolist() == tx.grad.tolist()
print("ok")
"""


def _run(cache_dir):
    env = {**os.environ, "GLASSTORCH_CACHE_DIR": str(cache_dir)}
    return subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          env=env, timeout=300)


def _entry(cache_dir):
    files = [f for f in os.listdir(cache_dir) if f.startswith("startup-")]
    assert len(files) == 1, files
    return os.path.join(cache_dir, files[0])


def _entries(path):
    """The cached entries: the file is a SHA-256 digest, then the marshalled dict."""
    with open(path, "rb") as f:
        return marshal.loads(f.read()[32:])


@pytest.mark.parametrize("damage", [b"", b"garbage"])
def test_fresh_reused_and_damaged_cache(tmp_path, damage):
    first = _run(tmp_path)
    assert first.stdout.strip() == "ok", first.stderr[-2000:]
    path = _entry(tmp_path)
    assert len(_entries(path)) > 1000                # the parsers, the YAML, the kernels
    assert _run(tmp_path).stdout.strip() == "ok"     # from the cache
    with open(path, "wb") as f:
        f.write(damage)
    damaged = _run(tmp_path)
    assert damaged.stdout.strip() == "ok", damaged.stderr[-2000:]
    assert len(_entries(path)) > 1000                # written again, whole


def test_damage_that_still_unmarshals(tmp_path):
    """A changed byte inside the cached YAML (``add.Tensor`` declared as
    ``add.Tensoq``) still unmarshals; the checksum rejects the file, so
    glasstorch is built from its sources and add.Tensor is there."""
    assert _run(tmp_path).stdout.strip() == "ok"
    path = _entry(tmp_path)
    with open(path, "rb") as f:
        data = f.read()
    damaged = data.replace(b"add.Tensor(", b"add.Tensoq(", 1)
    assert damaged != data
    assert isinstance(marshal.loads(damaged[32:]), dict)
    with open(path, "wb") as f:
        f.write(damaged)
    result = _run(tmp_path)
    assert result.stdout.strip() == "ok", result.stderr[-2000:]
    with open(path, "rb") as f:
        assert f.read() == data                      # written again, as it was
