"""Inductor's on-disk cache (``glasstorch/_inductor/codecache.py``) and
``torch._inductor.utils.fresh_inductor_cache``.

Damaged entries (each file kind, corrupted between two runs in new
processes), processes racing to compile one new kernel, a cache directory
that cannot be written and a missing C compiler must all give the right
result; ``fresh_inductor_cache`` is checked against torch's own.
Results are compared with real torch computing the same function.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import warnings

import numpy as np
import pytest

import glasstorch as gt
import glasstorch._inductor.utils as gt_utils
from glasstorch._inductor import codecache, config

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

needs_compiler = pytest.mark.skipif(not codecache.available(), reason="no C compiler")

# A pointwise chain (one fused kernel) with a constant of the caller's: a new
# constant is a new kernel, never found in a cache left by an earlier run.
# A pointwise chain (one fused kernel) with a constant of the caller's: a new
# constant is a new kernel, never found in a cache left by an earlier run.  Each
# job compiles it afresh (Dynamo reset) with its own cache directory, so a library
# is never one this process has loaded already.
PROGRAM = r"""
import json, os, sys, time
import glasstorch as torch
from glasstorch._inductor import codecache
from glasstorch._ops.kernels import native

options = json.loads(sys.argv[1])
compiles = []
original = native.compile_to
def counted(command, path):
    compiles.append(path)
    if options.get("meet"):               # all processes compile at once: each waits
        open(os.path.join(options["meet"], str(os.getpid())), "w").close()
        deadline = time.time() + 60       # for the others to reach their compiler
        while len(os.listdir(options["meet"])) < options["n"] and time.time() < deadline:
            time.sleep(0.005)
    return original(command, path)
native.compile_to = counted
if options.get("ready"):                  # a barrier: all processes start compiling together
    open(options["ready"], "w").close()
    while not os.path.exists(options["go"]):
        time.sleep(0.005)

results = []
for cache, c in options["jobs"]:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    torch._dynamo.reset()
    def f(x):
        return ((x * c + 0.25).sin() * 1.5 - x).abs()
    x = torch.linspace(-3, 3, 1001)
    try:
        results.append(torch.compile(f)(x).tolist())
    except Exception as error:       # reported per job, so one failure hides no other
        results.append(f"{type(error).__name__}: {error}")
print(json.dumps({"results": results, "available": codecache.available(),
                  "compiles": len(compiles), "compiled": compiles}))
"""


def reference(c):
    import torch
    x = torch.linspace(-3, 3, 1001)
    return (((x * c + 0.25).sin() * 1.5 - x).abs()).numpy()


def new_constant():
    return 1.0 + (uuid.uuid4().int % 10 ** 6) / 10 ** 7


def environment(cache, **changes):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), OMP_NUM_THREADS="1")
    env.pop("GLASSTORCH_NATIVE", None)
    env.pop("CC", None)
    for key, value in changes.items():
        env[key] = value
    return env


def start(jobs, env=None, **options):
    """A new process running PROGRAM on ``jobs``: [(cache directory, constant)]."""
    options["jobs"] = [[str(cache), c] for cache, c in jobs]
    env = env or environment(jobs[0][0])
    return subprocess.Popen([sys.executable, "-c", PROGRAM, json.dumps(options)], env=env,
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process, timeout=120):
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err
    assert "Traceback" not in err and "cannot be written" not in err, err
    return json.loads(out.strip().splitlines()[-1])


def check(y, c):
    assert not isinstance(y, str), y
    np.testing.assert_allclose(np.array(y, dtype=np.float32), reference(c),
                               rtol=1e-5, atol=1e-5)


def entries(root) -> dict:
    """stem -> {suffix: path} of the cache's entries."""
    found = {}
    for directory, _, files in os.walk(root):
        for name in files:
            stem, suffix = os.path.splitext(name)
            found.setdefault(os.path.join(directory, stem), {})[suffix] = \
                os.path.join(directory, name)
    return found


def read(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def write(path, data: bytes):
    with open(path, "wb") as f:
        f.write(data)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def only_entry(root) -> str:
    found = entries(root)
    assert len(found) == 1, found
    stem, files = next(iter(found.items()))
    assert set(files) == {".c", ".so", ".sha256"}, files
    return stem


def assert_whole(stem, source: bytes):
    """The entry is complete and consistent: checksum of its library, its source."""
    assert read(stem + ".sha256").decode().strip() == sha(read(stem + ".so"))
    assert read(stem + ".c") == source


# -- damaged entries, between runs in new processes ---------------------------------------

def _so_garbage(stem, other):
    write(stem + ".so", os.urandom(len(read(stem + ".so"))))


def _so_truncated(stem, other):
    data = read(stem + ".so")
    write(stem + ".so", data[:len(data) // 2])


def _so_empty(stem, other):
    write(stem + ".so", b"")


def _so_missing(stem, other):
    os.unlink(stem + ".so")


def _so_other_library(stem, other):      # a valid library, of another kernel
    write(stem + ".so", read(other + ".so"))


def _so_garbage_sha_agrees(stem, other):  # the checksum passes, dlopen refuses it
    data = os.urandom(20000)
    write(stem + ".so", data)
    write(stem + ".sha256", sha(data).encode())


def _so_directory(stem, other):
    os.unlink(stem + ".so")
    os.mkdir(stem + ".so")


def _sha_garbage(stem, other):
    write(stem + ".sha256", os.urandom(64) + b"\xff\xfe")


def _sha_wrong(stem, other):
    write(stem + ".sha256", sha(b"something else").encode())


def _sha_empty(stem, other):
    write(stem + ".sha256", b"")


def _sha_missing(stem, other):
    os.unlink(stem + ".sha256")


def _c_stale(stem, other):
    write(stem + ".c", read(other + ".c"))


def _c_missing(stem, other):
    os.unlink(stem + ".c")


def _all_empty(stem, other):
    for suffix in (".c", ".so", ".sha256"):
        write(stem + suffix, b"")


REBUILT = [_so_garbage, _so_truncated, _so_empty, _so_missing, _so_other_library,
           _so_garbage_sha_agrees, _so_directory, _sha_garbage, _sha_wrong, _sha_empty,
           _sha_missing, _c_stale, _c_missing, _all_empty]


def _intact(stem, other):
    pass


def _temporary_leftovers(stem, other):    # what a process killed mid-write leaves
    directory = os.path.dirname(stem)
    write(os.path.join(directory, "tmpk1ll3d.so"), os.urandom(3000))
    write(os.path.join(directory, "tmpk1ll3d.tmp"), b"12")


KEPT = [_intact, _temporary_leftovers]


@needs_compiler
def test_damaged_entries_are_rebuilt(tmp_path):
    c, c_other = new_constant(), new_constant() + 0.5
    pristine, other = tmp_path / "pristine", tmp_path / "other"
    first = finish(start([(pristine, c), (other, c_other)]))
    check(first["results"][0], c)
    check(first["results"][1], c_other)
    assert first["compiles"] == 2
    stem_rel = os.path.relpath(only_entry(pristine), pristine)
    other_stem = only_entry(other)
    source = read(os.path.join(pristine, stem_rel) + ".c")
    assert read(other_stem + ".c") != source
    assert_whole(os.path.join(pristine, stem_rel), source)

    # then each damage in a copy of the entry, all loaded by one new process
    damages = REBUILT + KEPT
    stems = []
    for damage in damages:
        root = tmp_path / damage.__name__
        shutil.copytree(pristine, root)
        stem = os.path.join(root, stem_rel)
        damage(stem, other_stem)
        stems.append(stem)
    second = finish(start([(tmp_path / d.__name__, c) for d in damages]))
    compiled = {os.path.realpath(path) for path in second["compiled"]}
    failures = []
    for damage, y, stem in zip(damages, second["results"], stems):
        try:
            check(y, c)
            assert_whole(stem, source)
            rebuilt = os.path.realpath(stem + ".so") in compiled
            if damage in REBUILT:
                assert rebuilt, "library not rebuilt"
            else:
                assert not rebuilt, "intact entry rebuilt"
        except (AssertionError, OSError) as error:
            failures.append(f"{damage.__name__}: {str(error)[:300]}")
    assert failures == []
    assert second["compiles"] == len(REBUILT)


# -- processes racing to compile one new kernel ----------------------------------------------

def _race(tmp_path, n, meet):
    cache = tmp_path / "cache"
    c = new_constant()
    go = tmp_path / "go"
    options = {}
    if meet:
        (tmp_path / "meet").mkdir()
        options = {"meet": str(tmp_path / "meet"), "n": n}
    processes = [start([(cache, c)], ready=str(tmp_path / f"ready{i}"), go=str(go), **options)
                 for i in range(n)]
    deadline = time.time() + 120
    while not all((tmp_path / f"ready{i}").exists() for i in range(n)):
        assert time.time() < deadline and all(p.poll() is None for p in processes), \
            [p.communicate() for p in processes if p.poll() is not None]
        time.sleep(0.01)
    go.touch()
    results = [finish(p) for p in processes]
    for result in results:
        check(result["results"][0], c)
    stem = only_entry(cache)       # one entry, no temporary files left behind
    source = read(stem + ".c")
    assert_whole(stem, source)
    return c, cache, results


def _reused(c, cache, monkeypatch):
    """The entry serves a later compilation, here, without compiling."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache))
    calls = []
    monkeypatch.setattr(codecache, "_store", lambda *args: calls.append(args))
    gt._dynamo.reset()
    _compile_new(c)
    assert calls == []


@needs_compiler
def test_two_processes_compiling_one_kernel_at_once(tmp_path, monkeypatch):
    c, cache, results = _race(tmp_path, 2, meet=False)
    _reused(c, cache, monkeypatch)


@needs_compiler
def test_two_processes_both_compiling(tmp_path, monkeypatch):
    # each process waits at its compiler for the other, so both find no entry and both
    # compile the kernel into the same files at once
    c, cache, results = _race(tmp_path, 2, meet=True)
    assert [r["compiles"] for r in results] == [1, 1], results
    _reused(c, cache, monkeypatch)


# -- no C compiler ---------------------------------------------------------------------------

def test_no_compiler_runs_aten_kernels(tmp_path):
    c = new_constant()
    runs = {name: (tmp_path / name, start([(tmp_path / name, c)],
                                          environment(tmp_path / name, **env)))
            for name, env in [("missing_cc", {"CC": "/nonexistent"}),
                              ("native_off", {"GLASSTORCH_NATIVE": "0"})]}
    for name, (cache, process) in runs.items():
        result = finish(process)
        check(result["results"][0], c)
        assert result["available"] is False and result["compiles"] == 0, name
        assert entries(cache) == {}, name


def test_no_compiler_in_process(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    c = new_constant()
    x = gt.linspace(-3, 3, 1001)

    def f(x):
        return ((x * c + 0.25).sin() * 1.5 - x).abs()
    with config.patch(**{"cpp.cxx": "/nonexistent"}):
        assert codecache.compiler() is None and not codecache.available()
        np.testing.assert_allclose(gt.compile(f)(x).numpy(), reference(c), rtol=1e-5, atol=1e-5)
    monkeypatch.setenv("GLASSTORCH_NATIVE", "0")
    assert not codecache.available()

    def g(x):
        return ((x * c + 0.25).sin() * 1.5 - x).abs()
    np.testing.assert_allclose(gt.compile(g)(x).numpy(), reference(c), rtol=1e-5, atol=1e-5)
    assert entries(tmp_path) == {}


def test_compiler_command_with_words(tmp_path, monkeypatch):
    program = shutil.which("cc") or shutil.which("gcc")
    if program is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    source = "int gt_seven(void) { return 7; }\n"
    plain = codecache.path_of(source)
    with config.patch(**{"cpp.cxx": f"{program} -w"}):
        assert codecache._compiler_command() == [program, "-w"]
        assert codecache.available()
        assert codecache.path_of(source) != plain        # the command is part of the key
        assert codecache.load(source).gt_seven() == 7
    with config.patch(**{"cpp.cxx": "no-such-compiler-here -w"}):
        assert codecache._compiler_command() is None


# -- a cache directory that cannot be written ------------------------------------------------

def _compile_new(c):
    def f(x):
        return ((x * c + 0.25).sin() * 1.5 - x).abs()
    y = gt.compile(f)(gt.linspace(-3, 3, 1001))
    np.testing.assert_allclose(y.numpy(), reference(c), rtol=1e-5, atol=1e-5)


@needs_compiler
def test_unwritable_cache_compiles_privately(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"         # a path under a file: unwritable, even for root
    blocker.write_text("x")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(blocker / "cache"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _compile_new(new_constant())
        _compile_new(new_constant())
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "cannot be written" in messages[0], messages
    private = codecache._private
    assert private and len(entries(private)) >= 2
    assert blocker.read_text() == "x"


@needs_compiler
def test_unwritable_shard_directory(tmp_path, monkeypatch):
    # the entry's own <key[:2]> directory is a file
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    source = "void gt_probe(void) {}\n" + "/* " + uuid.uuid4().hex + " */\n"
    stem = codecache.path_of(source)
    write(os.path.dirname(stem), b"not a directory")
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        library = codecache.load(source)
    library.gt_probe()
    assert read(os.path.dirname(stem)) == b"not a directory"


@needs_compiler
def test_read_only_cache_with_entry_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    source = "int gt_answer(void) { return 42; }\n" + "/* " + uuid.uuid4().hex + " */\n"
    assert codecache.load(source).gt_answer() == 42
    stem = codecache.path_of(source)
    assert_whole(stem, source.encode())

    def no_writes(*args):
        raise PermissionError("read-only")
    monkeypatch.setattr(codecache, "_store", no_writes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert codecache.load(source).gt_answer() == 42     # verified entry, no write


@needs_compiler
@pytest.mark.skipif(os.geteuid() == 0, reason="permissions do not bind root")
def test_read_only_directory(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o500)
    try:
        monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache))
        with pytest.warns(RuntimeWarning, match="cannot be written"):
            _compile_new(new_constant())
    finally:
        cache.chmod(0o700)


@needs_compiler
def test_compile_error_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    with pytest.raises(codecache.CompileError):
        codecache.load("this is not C " + uuid.uuid4().hex)
    assert not any(".so" in files for files in entries(tmp_path).values())


# -- fresh_inductor_cache, against torch's -------------------------------------------------------

def _observe(utils, tmp_path, monkeypatch):
    """What ``fresh_inductor_cache`` does to the environment and the disk."""
    seen = {}
    outer = str(tmp_path / "outer")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", outer)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    base = tmp_path / "base"
    base.mkdir(parents=True)

    entries_ = {}
    with utils.fresh_inductor_cache(entries_, dir=str(base)):
        inner = os.environ["TORCHINDUCTOR_CACHE_DIR"]
        seen["new_dir"] = inner != outer
        seen["under_dir"] = os.path.dirname(inner) == str(base)
        seen["exists_empty"] = os.path.isdir(inner) and os.listdir(inner) == []
        seen["triton"] = os.environ.get("TRITON_CACHE_DIR") == os.path.join(inner, "triton")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = "changed inside"
    seen["restored"] = os.environ["TORCHINDUCTOR_CACHE_DIR"] == outer
    seen["triton_unset_after"] = "TRITON_CACHE_DIR" not in os.environ
    seen["deleted"] = not os.path.exists(inner)
    seen["entries_empty_block"] = entries_

    with utils.fresh_inductor_cache(delete=False):
        kept = os.environ["TORCHINDUCTOR_CACHE_DIR"]
    seen["default_parent"] = os.path.dirname(kept) == tempfile.gettempdir()
    seen["kept_without_delete"] = os.path.isdir(kept)
    shutil.rmtree(kept)

    try:
        with utils.fresh_inductor_cache(entries_, dir=str(base)):
            failed = os.environ["TORCHINDUCTOR_CACHE_DIR"]
            raise KeyError("inside")
    except KeyError:
        seen["error_propagates"] = True
    seen["kept_on_error"] = os.path.isdir(failed)
    seen["restored_on_error"] = os.environ["TORCHINDUCTOR_CACHE_DIR"] == outer
    seen["entries_untouched_on_error"] = entries_

    full = {"x": 1}
    try:
        with utils.fresh_inductor_cache(full, dir=str(base)):
            asserted = os.environ["TORCHINDUCTOR_CACHE_DIR"]
        seen["nonempty_dict"] = "accepted"
    except AssertionError:
        seen["nonempty_dict"] = "AssertionError"
    seen["kept_on_assert"] = os.path.isdir(asserted)
    seen["full_dict"] = full

    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    with utils.fresh_inductor_cache(dir=str(base)):
        seen["set_when_unset"] = "TORCHINDUCTOR_CACHE_DIR" in os.environ
    seen["unset_again"] = "TORCHINDUCTOR_CACHE_DIR" not in os.environ
    seen["aliases"] = utils.fresh_inductor_cache is utils.fresh_cache
    return seen


def test_fresh_inductor_cache_like_torch(tmp_path, monkeypatch):
    import torch._inductor.utils as torch_utils
    ours = _observe(gt_utils, tmp_path / "glasstorch", monkeypatch)
    theirs = _observe(torch_utils, tmp_path / "torch", monkeypatch)
    assert ours == theirs
    # and what torch documents, so that the comparison is not of two empty answers
    assert ours["new_dir"] and ours["under_dir"] and ours["exists_empty"] and ours["restored"]
    assert ours["deleted"] and ours["kept_without_delete"] and ours["kept_on_error"]
    assert ours["nonempty_dict"] == "AssertionError" and ours["unset_again"]


def test_import_path():
    import importlib
    module = importlib.import_module("glasstorch._inductor.utils")
    assert gt._inductor.utils is module
    assert callable(module.fresh_inductor_cache)


@needs_compiler
def test_fresh_inductor_cache_compiles_anew_and_lists_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "outer"))
    c = new_constant()
    _compile_new(c)                            # an entry in the outer cache
    outer = entries(tmp_path / "outer")
    listed = {}
    with gt_utils.fresh_inductor_cache(listed, dir=str(tmp_path)):
        inner = os.environ["TORCHINDUCTOR_CACHE_DIR"]
        gt._dynamo.reset()
        _compile_new(c)                        # the same kernel: compiled again, in here
        _compile_new(new_constant())
        files = {os.path.basename(path): os.path.getsize(path)
                 for entry in entries(inner).values() for path in entry.values()}
        write(os.path.join(inner, "tmpabc.so"), b"half")   # a file being written
    assert not os.path.exists(inner)
    assert entries(tmp_path / "outer") == outer
    assert listed == files
    assert len(listed) == 6 and {os.path.splitext(n)[1] for n in listed} == {".c", ".so", ".sha256"}
    assert any(os.path.basename(stem) + ".so" in listed for stem in outer)
    # the cache's own files, with their real sizes
    for name, size in listed.items():
        assert size > 0 and name.startswith("c")


def test_compiler_failure_runs_aten_kernels(tmp_path, monkeypatch):
    """A compiler that rejects the generated C (here an option it does not
    know; elsewhere no OpenMP, no libmvec): the graph runs as its ATen
    kernels, with a warning saying so, and the result is right."""
    program = shutil.which("cc") or shutil.which("gcc")
    if program is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    c = new_constant()
    x = gt.linspace(-3, 3, 1001)

    def f(x):
        return ((x * c + 0.25).sin() * 1.5 - x).abs()
    gt._dynamo.reset()
    with config.patch(**{"cpp.cxx": f"{program} -fno-such-option-anywhere"}):
        with pytest.warns(RuntimeWarning, match="runs as its ATen kernels"):
            y = gt.compile(f)(x)
    np.testing.assert_allclose(y.numpy(), reference(c), rtol=1e-5, atol=1e-5)
    assert not [n for n in entries(tmp_path) if n.endswith(".so")]
