"""The bad-input catalogue: mistakes a user would plausibly make, each run in
glasstorch and in PyTorch.

Each case is one line, ``(id, lambda L: ...)`` where ``L`` is the library.  Where
PyTorch returns, glasstorch must return the same (values, dtype, shape, as
``differential.observe`` describes them); where PyTorch raises, glasstorch must
raise the same exception type with a close message (see ``close``), and never
from a numpy frame or with a message that mentions numpy.
"""
from __future__ import annotations

import os
import pickle
import re
import tempfile
import traceback
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import glasstorch as gt

from .differential import observe

_TMP = tempfile.mkdtemp(prefix="glasstorch-bad-inputs-")


def _file(name, data: bytes) -> str:
    path = os.path.join(_TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


# Files every case reads the same way (written once, by real PyTorch where the
# format is PyTorch's own).
NOT_A_CHECKPOINT = _file("notes.txt", b"these are my notes, not a checkpoint\n")
EMPTY_FILE = _file("empty.pt", b"")
BARE_PICKLE = _file("bare.pkl", pickle.dumps({"weights": [1.0, 2.0]}))
TRUNCATED = _file("truncated.pt", b"PK\x03\x04\x00\x00")
LEGACY = os.path.join(_TMP, "legacy.pt")
torch.save({"w": torch.arange(4.0)}, LEGACY, _use_new_zipfile_serialization=False)
MISSING = os.path.join(_TMP, "does-not-exist.pt")


def E(L):
    """A (3, 3) tensor whose rows are one row: every column aliases itself."""
    return L.zeros(1, 3).expand(3, 3)


def ar(L, n=5):
    return L.arange(float(n))


def Z(L):
    return L.tensor([1 + 2j, 3 - 1j])


def saved(L, obj, name):
    path = os.path.join(_TMP, f"{L.__name__}-{name}.pt")
    L.save(obj, path)
    return path


def step(L, opt_cls, **kw):
    """One optimizer step on a (2,) parameter; returns the parameter."""
    p = L.nn.Parameter(L.ones(2))
    opt = opt_cls([p], **kw)
    p.sum().backward()
    opt.step()
    return p.detach()


class Squares:
    """A map-style dataset of 0-dim tensors i*i; len() may lie."""

    def __init__(self, L, n, claimed=None):
        self.L, self.n, self.claimed = L, n, claimed

    def __len__(self):
        return self.n if self.claimed is None else self.claimed

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return self.L.tensor(float(i * i))


def loader(L, dataset, **kw):
    return list(L.utils.data.DataLoader(dataset, **kw))


def ragged(L):
    return [L.ones(2), L.ones(3)]


def leaf(L, *shape):
    return L.ones(*shape, requires_grad=True)


CASES = [
    # -- shapes -------------------------------------------------------------------------
    ("add broadcast mismatch", lambda L: L.ones(2, 3) + L.ones(4)),
    ("mul broadcast mismatch", lambda L: L.ones(2, 3) * L.ones(3, 2)),
    ("add_ result bigger than self", lambda L: L.ones(3).add_(L.ones(2, 3))),
    ("view wrong numel", lambda L: ar(L, 6).view(4, 2)),
    ("view two -1", lambda L: ar(L, 6).view(-1, -1)),
    ("view of transposed", lambda L: L.ones(2, 3).t().view(6)),
    ("view negative size", lambda L: ar(L, 6).view(-2, 3)),
    ("reshape wrong numel", lambda L: ar(L, 6).reshape(5)),
    ("reshape infers", lambda L: ar(L, 6).reshape(3, -1)),
    ("reshape -1 of empty ambiguous", lambda L: L.ones(0).reshape(-1, 0)),
    ("matmul inner mismatch", lambda L: L.ones(2, 3) @ L.ones(2, 3)),
    ("mm 1-d", lambda L: L.mm(L.ones(3), L.ones(3))),
    ("mm 3-d", lambda L: L.mm(L.ones(2, 2, 2), L.ones(2, 2))),
    ("bmm batch mismatch", lambda L: L.bmm(L.ones(2, 3, 4), L.ones(3, 4, 5))),
    ("bmm 2-d", lambda L: L.bmm(L.ones(3, 4), L.ones(4, 5))),
    ("matmul 0-d", lambda L: L.matmul(L.tensor(2.0), L.ones(3))),
    ("dot sizes", lambda L: L.dot(L.ones(3), L.ones(4))),
    ("dot 2-d", lambda L: L.dot(L.ones(2, 2), L.ones(2, 2))),
    ("mv mismatch", lambda L: L.mv(L.ones(2, 3), L.ones(2))),
    ("cat dims differ", lambda L: L.cat([L.ones(2, 3), L.ones(2, 4)])),
    ("cat ranks differ", lambda L: L.cat([L.ones(2, 3), L.ones(3)])),
    ("cat empty list", lambda L: L.cat([])),
    ("cat dim out of range", lambda L: L.cat([L.ones(2), L.ones(2)], dim=1)),
    ("cat a tensor not a list", lambda L: L.cat(L.ones(2, 2))),
    ("stack shapes differ", lambda L: L.stack([L.ones(2), L.ones(3)])),
    ("stack empty", lambda L: L.stack([])),
    ("squeeze dim out of range", lambda L: L.ones(2, 1).squeeze(2)),
    ("unsqueeze dim out of range", lambda L: L.ones(2).unsqueeze(3)),
    ("transpose dim out of range", lambda L: L.ones(2, 3).transpose(0, 2)),
    ("t of 3-d", lambda L: L.ones(2, 3, 4).t()),
    ("permute too few dims", lambda L: L.ones(2, 3, 4).permute(0, 1)),
    ("permute repeated dim", lambda L: L.ones(2, 3).permute(0, 0)),
    ("expand smaller", lambda L: L.ones(3).expand(2)),
    ("expand non-singleton", lambda L: L.ones(2, 3).expand(4, 3)),
    ("expand fewer dims", lambda L: L.ones(2, 3).expand(3)),
    ("zeros negative size", lambda L: L.zeros(-1)),
    ("ones negative size 2-d", lambda L: L.ones(2, -3)),
    ("zeros float size", lambda L: L.zeros(2.5)),
    ("rand tuple and int", lambda L: L.rand((2, 3), 4)),
    ("split size 0", lambda L: ar(L, 4).split(0)),
    ("chunk 0", lambda L: ar(L, 4).chunk(0)),
    ("split sizes wrong sum", lambda L: ar(L, 4).split([1, 2])),
    ("narrow past end", lambda L: ar(L, 4).narrow(0, 2, 3)),
    ("select out of range", lambda L: L.ones(2, 3).select(1, 3)),
    ("flatten start after end", lambda L: L.ones(2, 3, 4).flatten(2, 1)),
    ("unflatten wrong product", lambda L: L.ones(2, 6).unflatten(1, (4, 2))),
    ("repeat fewer dims", lambda L: L.ones(2, 3).repeat(2)),
    ("sum dim out of range", lambda L: L.ones(2, 3).sum(2)),
    ("mean dim out of range negative", lambda L: L.ones(2, 3).mean(-3)),
    ("argmax dim out of range", lambda L: L.ones(2).argmax(1)),
    ("max of empty", lambda L: L.ones(0).max()),
    ("argmax of empty", lambda L: L.ones(0).argmax()),
    ("softmax dim out of range", lambda L: L.ones(2, 3).softmax(2)),
    ("unbind dim out of range", lambda L: L.ones(2).unbind(1)),
    ("movedim repeated", lambda L: L.ones(2, 3).movedim((0, 0), (0, 1))),
    ("roll shifts and dims differ", lambda L: ar(L).roll((1, 2), (0,))),
    ("where broadcast mismatch", lambda L: L.where(L.ones(2, dtype=L.bool), L.ones(3), L.ones(3))),
    ("diag of 3-d", lambda L: L.diag(L.ones(2, 2, 2))),
    ("outer 2-d", lambda L: L.outer(L.ones(2, 2), L.ones(2))),
    ("tensor ragged list", lambda L: L.tensor([[1, 2], [3]])),
    ("tensor of strings", lambda L: L.tensor(["a", "b"])),
    ("tensor of None", lambda L: L.tensor([1.0, None])),
    ("scalar tensor len", lambda L: len(L.tensor(3.0))),
    ("scalar tensor iterate", lambda L: list(L.tensor(3.0))),
    ("scalar tensor index", lambda L: L.tensor(3.0)[0]),
    ("bool of two elements", lambda L: bool(L.ones(2))),
    ("item of two elements", lambda L: L.ones(2).item()),
    ("float of two elements", lambda L: float(L.ones(2))),
    ("int of empty", lambda L: int(L.ones(0))),
    ("resize_ negative", lambda L: L.ones(2).resize_(-1)),
    ("new_zeros negative", lambda L: L.ones(2).new_zeros(-2)),
    ("full wrong fill type", lambda L: L.full((2,), "a")),
    ("arange step 0", lambda L: L.arange(0, 5, 0)),
    ("arange wrong direction", lambda L: L.arange(5, 0, 1)),
    ("linspace negative steps", lambda L: L.linspace(0, 1, -1)),
    ("eye negative", lambda L: L.eye(-2)),
    # -- dtypes -------------------------------------------------------------------------
    ("string dtype zeros", lambda L: L.zeros(2, dtype="float32")),
    ("string dtype ones", lambda L: L.ones(2, dtype="float32")),
    ("string dtype tensor", lambda L: L.tensor([1.0], dtype="float32")),
    ("python float dtype", lambda L: L.zeros(2, dtype=float)),
    ("python int dtype", lambda L: L.ones(2, dtype=int)),
    ("int dtype value", lambda L: L.zeros(2, dtype=3)),
    ("to string dtype", lambda L: L.zeros(2).to("float32")),
    ("randn int dtype", lambda L: L.randn(2, dtype=L.int64)),
    ("rand bool dtype", lambda L: L.rand(2, dtype=L.bool)),
    ("requires_grad int tensor", lambda L: L.ones(2, dtype=L.int64).requires_grad_()),
    ("tensor int requires_grad", lambda L: L.tensor([1, 2], requires_grad=True)),
    ("bitwise and of floats", lambda L: L.ones(2) & L.ones(2)),
    ("bitwise not of float", lambda L: ~L.ones(2)),
    ("shift of floats", lambda L: L.ones(2) << 1),
    ("neg of bool", lambda L: -L.ones(2, dtype=L.bool)),
    ("sub of bools", lambda L: L.ones(2, dtype=L.bool) - L.ones(2, dtype=L.bool)),
    ("float add_ into int", lambda L: L.ones(2, dtype=L.int64).add_(1.5)),
    ("float tensor add_ into int", lambda L: L.ones(2, dtype=L.int64).add_(L.ones(2))),
    ("div_ int true division", lambda L: L.ones(2, dtype=L.int64).div_(2)),
    ("int floor divide by zero", lambda L: L.ones(2, dtype=L.int64) // 0),
    ("int remainder by zero", lambda L: L.ones(2, dtype=L.int64) % 0),
    ("int div by zero true", lambda L: L.ones(2, dtype=L.int64) / 0),
    ("int pow negative", lambda L: L.tensor([2]) ** -1),
    ("mean of int", lambda L: L.tensor([1, 2]).mean()),
    ("std of int", lambda L: L.tensor([1, 2]).std()),
    ("sqrt of int", lambda L: L.tensor([4]).sqrt()),
    ("matmul int and float", lambda L: L.ones(2, 2, dtype=L.int64) @ L.ones(2, 2)),
    ("mm float and double", lambda L: L.mm(L.ones(2, 2), L.ones(2, 2, dtype=L.float64))),
    ("out= lower category", lambda L: L.add(L.ones(2), 1.5, out=L.zeros(2, dtype=L.int64))),
    ("out= bool from float", lambda L: L.mul(L.ones(2), 2, out=L.zeros(2, dtype=L.bool))),
    ("index_put dtype mismatch", lambda L: L.zeros(3).index_put_((L.tensor([0]),), L.tensor([1], dtype=L.float64))),
    ("scatter src dtype mismatch", lambda L: L.zeros(3).scatter_(0, L.tensor([0]), L.ones(1, dtype=L.float64))),
    ("gather float index", lambda L: L.ones(3).gather(0, L.tensor([0.0]))),
    ("index_select float index", lambda L: L.ones(3).index_select(0, L.tensor([0.0]))),
    ("masked_fill float mask", lambda L: L.ones(3).masked_fill(L.ones(3), 0.0)),
    ("where float condition", lambda L: L.where(L.ones(2), L.ones(2), L.zeros(2))),
    ("cross_entropy float target", lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.ones(2))),
    ("nll_loss float target", lambda L: L.nn.functional.nll_loss(L.ones(2, 3), L.tensor([0.0, 1.0]))),
    ("embedding float indices", lambda L: L.nn.functional.embedding(L.tensor([0.5]), L.ones(3, 2))),
    ("one_hot float", lambda L: L.nn.functional.one_hot(L.tensor([1.0]), 3)),
    ("one_hot negative", lambda L: L.nn.functional.one_hot(L.tensor([-1]), 3)),
    ("int8 overflow fill", lambda L: L.full((2,), 300, dtype=L.int8)),
    ("uint8 negative tensor", lambda L: L.tensor([-1], dtype=L.uint8)),
    ("bool tensor sum", lambda L: L.tensor([True, True]).sum()),
    ("uint16 exists", lambda L: L.zeros(2, dtype=L.uint16).dtype.itemsize),
    ("uint32 exists", lambda L: L.ones(2, dtype=L.uint32).dtype.is_signed),
    ("uint64 exists", lambda L: str(L.tensor([1], dtype=L.uint64).dtype)),
    ("huge python int", lambda L: L.tensor([2 ** 70])),
    ("huge python int to float", lambda L: L.tensor([2 ** 70], dtype=L.float32)),
    ("int64 overflow scalar add", lambda L: L.ones(2, dtype=L.int64) + 2 ** 64),
    ("float to int of nan", lambda L: L.tensor([float("nan")]).long().shape),
    ("numpy of requires_grad", lambda L: leaf(L, 2).numpy()),
    ("numpy of bfloat16", lambda L: L.ones(2, dtype=L.bfloat16).numpy()),
    ("from_numpy list", lambda L: L.from_numpy([1, 2])),
    ("from_numpy object array", lambda L: L.from_numpy(np.array(["a"], dtype=object))),
    ("as_tensor string", lambda L: L.as_tensor("abc")),
    # -- devices ------------------------------------------------------------------------
    ("bad device string", lambda L: L.zeros(2, device="gpu")),
    ("bad device index", lambda L: L.device("cpu:x")),
    ("negative device index", lambda L: L.device("cuda", -2)),
    ("cuda unavailable zeros", lambda L: L.zeros(2, device="cuda")),
    ("cuda unavailable to", lambda L: L.ones(2).to("cuda")),
    ("cuda method", lambda L: L.ones(2).cuda()),
    ("device type unknown", lambda L: L.device("tpu")),
    ("device string without colon", lambda L: L.device("cuda1")),
    ("empty device string", lambda L: L.ones(2, device="")),
    ("meta item", lambda L: L.ones(2, device="meta").sum().item()),
    ("meta numpy", lambda L: L.ones(2, device="meta").numpy()),
    ("meta tolist", lambda L: L.ones(2, device="meta").tolist()),
    ("meta to cpu", lambda L: L.ones(2, device="meta").to("cpu")),
    ("meta plus cpu", lambda L: L.ones(2, device="meta") + L.ones(2)),
    ("meta bool", lambda L: bool(L.ones((), device="meta"))),
    ("set_default_device bad", lambda L: L.set_default_device("gpu")),
    ("module to bad device", lambda L: L.nn.Linear(2, 2).to("gpu")),
    # -- indices ------------------------------------------------------------------------
    ("int index out of range", lambda L: ar(L)[5]),
    ("negative index out of range", lambda L: ar(L)[-6]),
    ("second dim out of range", lambda L: L.ones(2, 3)[0, 3]),
    ("too many indices", lambda L: L.ones(2)[0, 0]),
    ("tensor index out of range", lambda L: ar(L)[L.tensor([5])]),
    ("tensor index negative out of range", lambda L: ar(L)[L.tensor([-6])]),
    ("float tensor index", lambda L: ar(L)[L.tensor([1.0])]),
    ("float python index", lambda L: ar(L)[1.0]),
    ("string index", lambda L: ar(L)["a"]),
    ("list of floats index", lambda L: ar(L)[[0.5, 1.0]]),
    ("mask wrong shape", lambda L: ar(L)[L.tensor([True, False])]),
    ("2-d mask wrong shape", lambda L: L.ones(2, 3)[L.ones(3, 2, dtype=L.bool)]),
    ("slice step 0", lambda L: ar(L)[::0]),
    ("negative slice step", lambda L: ar(L)[::-1]),
    ("index tensors dont broadcast", lambda L: L.ones(3, 3)[L.tensor([0, 1]), L.tensor([0, 1, 2])]),
    ("setitem shape mismatch", lambda L: ar(L).__setitem__(slice(0, 2), L.ones(3))),
    ("setitem index out of range", lambda L: ar(L).__setitem__(7, 1.0)),
    ("setitem tensor index out of range", lambda L: ar(L).__setitem__(L.tensor([7]), 1.0)),
    ("setitem string value", lambda L: ar(L).__setitem__(0, "a")),
    ("setitem list values", lambda L: ar(L).__setitem__(slice(0, 2), [1.0, 2.0, 3.0])),
    ("gather index out of range", lambda L: ar(L).gather(0, L.tensor([5]))),
    ("gather index rank mismatch", lambda L: L.ones(2, 2).gather(0, L.tensor([0]))),
    ("scatter index out of range", lambda L: L.zeros(3).scatter_(0, L.tensor([3]), 1.0)),
    ("scatter_add index out of range", lambda L: L.zeros(3).scatter_add_(0, L.tensor([3]), L.ones(1))),
    ("index_select out of range", lambda L: ar(L).index_select(0, L.tensor([5]))),
    ("index_select 2-d index", lambda L: ar(L).index_select(0, L.tensor([[0]]))),
    ("index_add out of range", lambda L: L.zeros(3).index_add_(0, L.tensor([5]), L.ones(1))),
    ("index_add negative", lambda L: L.zeros(3).index_add_(0, L.tensor([-1]), L.ones(1))),
    ("index_add out of range 2-d", lambda L: L.zeros(3, 2).index_add_(0, L.tensor([3]), L.ones(1, 2))),
    ("index_add functional out of range", lambda L: L.index_add(L.zeros(3), 0, L.tensor([3]), L.ones(1))),
    ("index_add source shape", lambda L: L.zeros(3, 2).index_add_(0, L.tensor([0]), L.ones(1, 3))),
    ("index_copy out of range", lambda L: L.zeros(3).index_copy_(0, L.tensor([3]), L.ones(1))),
    ("index_fill out of range", lambda L: L.zeros(3).index_fill_(0, L.tensor([3]), 1.0)),
    ("take out of range", lambda L: ar(L).take(L.tensor([9]))),
    ("put_ out of range", lambda L: L.zeros(3).put_(L.tensor([3]), L.ones(1))),
    ("index_put out of range", lambda L: L.zeros(3).index_put_((L.tensor([3]),), L.tensor(1.0))),
    ("embedding index out of range", lambda L: L.nn.functional.embedding(L.tensor([3]), L.ones(3, 2))),
    ("embedding negative index", lambda L: L.nn.functional.embedding(L.tensor([-1]), L.ones(3, 2))),
    ("one_hot class out of range", lambda L: L.nn.functional.one_hot(L.tensor([3]), 3)),
    ("nll_loss target out of range", lambda L: L.nn.functional.nll_loss(L.zeros(2, 3), L.tensor([0, 3]))),
    ("cross_entropy target out of range", lambda L: L.nn.functional.cross_entropy(L.zeros(2, 3), L.tensor([0, 5]))),
    ("cross_entropy ignore_index ok", lambda L: L.nn.functional.cross_entropy(L.zeros(2, 3), L.tensor([0, -100]))),
    ("masked_select wrong shape", lambda L: ar(L).masked_select(L.tensor([True, False]))),
    ("masked_select on meta", lambda L: L.masked_select(L.empty(3, device="meta"),
                                                        L.ones(3, dtype=L.bool, device="meta"))),
    ("lstsq on meta", lambda L: L.linalg.lstsq(L.empty(5, 3, device="meta"),
                                               L.empty(5, 2, device="meta"))),
    ("lstsq on meta and cpu", lambda L: L.linalg.lstsq(L.empty(5, 3, device="meta"), L.empty(5, 2))),
    ("lstsq on meta, rows mismatched", lambda L: L.linalg.lstsq(L.empty(5, 3, device="meta"),
                                                                L.empty(4, 2, device="meta"))),
    ("topk k too large", lambda L: ar(L).topk(6)),
    ("kthvalue out of range", lambda L: ar(L).kthvalue(0)),
    ("multinomial too many", lambda L: L.multinomial(L.ones(3), 4)),
    ("multinomial negative weights", lambda L: L.multinomial(L.tensor([1.0, -1.0]), 1)),
    ("randint high below low", lambda L: L.randint(5, 2, (3,))),
    ("randperm negative", lambda L: L.randperm(-1)),
    # -- memory overlap -----------------------------------------------------------------
    ("add_ into expanded", lambda L: E(L).add_(1)),
    ("mul_ into expanded", lambda L: E(L).mul_(2)),
    ("exp_ into expanded", lambda L: E(L).exp_()),
    ("clamp_ into expanded", lambda L: E(L).clamp_(0, 1)),
    ("relu_ into expanded", lambda L: E(L).relu_()),
    ("copy_ into expanded", lambda L: E(L).copy_(L.ones(3, 3))),
    ("copy_ scalar into expanded", lambda L: L.zeros(1).expand(3).copy_(L.tensor(1.0))),
    ("zero_ of expanded allowed", lambda L: E(L).zero_()),
    ("fill_ of expanded allowed", lambda L: E(L).fill_(2.0)),
    ("add out= expanded", lambda L: L.add(L.ones(3, 3), 1, out=E(L))),
    ("add_ shifted input", lambda L: (lambda x: x[1:].add_(x[:-1]))(ar(L))),
    ("div_ shifted input", lambda L: (lambda x: x[1:].div_(x[:-1]))(ar(L))),
    ("add_ transposed self", lambda L: (lambda x: x.add_(x.t()))(ar(L, 4).view(2, 2))),
    ("add_ itself allowed", lambda L: (lambda x: x.add_(x))(ar(L))),
    ("add_ detached alias allowed", lambda L: (lambda x: x.mul_(x.detach()))(ar(L))),
    ("copy_ shifted", lambda L: (lambda x: x[1:].copy_(x[:-1]))(ar(L))),
    ("copy_ transposed", lambda L: (lambda x: x.copy_(x.t()))(ar(L, 4).view(2, 2))),
    ("copy_ itself allowed", lambda L: (lambda x: x.copy_(x))(ar(L))),
    ("add out= shifted", lambda L: (lambda x: L.add(x[:-1], 1, out=x[1:]))(ar(L))),
    ("neg out= shifted", lambda L: (lambda x: L.neg(x[:-1], out=x[1:]))(ar(L))),
    ("add out= same allowed", lambda L: (lambda x: L.add(x, 1, out=x))(ar(L))),
    ("cat out= overlapping input", lambda L: (lambda x: L.cat([x[:2], x[:2]], out=x[1:]))(ar(L))),
    ("index_add_ into expanded", lambda L: E(L).index_add_(0, L.tensor([0]), L.ones(1, 3))),
    ("index_add_ source overlaps", lambda L: (lambda x: x.index_add_(0, L.tensor([0, 1]), x[1:3]))(ar(L))),
    ("index_put_ values overlap", lambda L: (lambda x: x.index_put_((L.tensor([0, 1]),), x[1:3]))(ar(L))),
    ("index_put_ values are self", lambda L: (lambda x: x.index_put_((L.arange(5),), x))(ar(L))),
    ("index_put_ into expanded warns", lambda L: E(L).index_put_((L.tensor([0]),), L.tensor(1.0))),
    ("setitem tensor index into expanded", lambda L: (lambda e: (e.__setitem__(L.tensor([0]), 1.0), e)[1])(E(L))),
    ("setitem int into expanded", lambda L: (lambda e: (e.__setitem__(0, 1.0), e)[1])(E(L))),
    ("masked_fill_ into expanded warns", lambda L: E(L).masked_fill_(L.ones(3, 3, dtype=L.bool), 1.0)),
    ("scatter_ into expanded", lambda L: E(L).scatter_(0, L.tensor([[0]]), 1.0)),
    ("scatter_ src is self", lambda L: (lambda x: x.scatter_(0, L.tensor([0]), x))(ar(L))),
    ("index_copy_ into expanded", lambda L: E(L).index_copy_(0, L.tensor([0]), L.ones(1, 3))),
    ("put_ into expanded", lambda L: E(L).put_(L.tensor([0]), L.ones(1))),
    ("bernoulli_ into expanded", lambda L: E(L).bernoulli_(0.5)),
    ("bernoulli_ p overlaps", lambda L: (lambda x: x[1:].bernoulli_(x[:-1]))(L.full((4,), 0.5))),
    ("lerp_ into expanded", lambda L: E(L).lerp_(L.ones(3, 3), 0.5)),
    ("uniform_ into expanded", lambda L: E(L).uniform_()),
    ("normal_ into expanded", lambda L: E(L).normal_()),
    ("exponential_ into expanded", lambda L: E(L).exponential_()),
    # reductions check no overlap; what they then write into aliased memory is undefined
    ("sum out= expanded allowed", lambda L: L.sum(L.ones(3, 3, 3), 0, out=E(L)).shape),
    ("mean out= overlapping allowed", lambda L: (lambda x: L.mean(x.view(5, 1), 1, out=x))(ar(L)).shape),
    ("addcmul_ into expanded", lambda L: E(L).addcmul_(L.ones(3, 3), L.ones(3, 3))),
    ("sigmoid_ into expanded", lambda L: E(L).sigmoid_()),
    ("int view out= overlap", lambda L: (lambda x: L.gt(x[:-1], 0, out=x.view(L.int32)[1:]))(ar(L))),
    ("empty expanded add_ allowed", lambda L: L.zeros(1, 0).expand(3, 0).add_(1)),
    # -- complex inputs -----------------------------------------------------------------
    ("complex lt", lambda L: Z(L) < Z(L)),
    ("complex gt scalar", lambda L: Z(L) > 1),
    ("complex ge", lambda L: L.ge(Z(L), Z(L))),
    ("complex le", lambda L: Z(L) <= 0),
    ("complex eq allowed", lambda L: Z(L) == Z(L)),
    ("complex maximum", lambda L: L.maximum(Z(L), Z(L))),
    ("complex minimum", lambda L: L.minimum(Z(L), Z(L))),
    ("complex fmax", lambda L: L.fmax(Z(L), Z(L))),
    ("complex sign", lambda L: Z(L).sign()),
    ("complex sgn allowed", lambda L: Z(L).sgn()),
    ("complex floor", lambda L: Z(L).floor()),
    ("complex ceil", lambda L: L.ceil(Z(L))),
    ("complex round", lambda L: Z(L).round()),
    ("complex round decimals", lambda L: Z(L).round(decimals=1)),
    ("complex trunc", lambda L: Z(L).trunc()),
    ("complex frac", lambda L: Z(L).frac()),
    ("complex clamp", lambda L: Z(L).clamp(0, 1)),
    ("complex clamp min", lambda L: L.clamp(Z(L), min=0)),
    ("complex clamp_", lambda L: Z(L).clamp_(max=1)),
    ("complex clip", lambda L: L.clip(Z(L), 0, 1)),
    ("complex relu", lambda L: L.relu(Z(L))),
    ("complex signbit", lambda L: Z(L).signbit()),
    ("complex remainder", lambda L: Z(L) % 2),
    ("complex abs allowed", lambda L: Z(L).abs()),
    ("complex sort", lambda L: Z(L).sort()),
    ("complex max", lambda L: Z(L).max()),
    ("complex argmax", lambda L: Z(L).argmax()),
    ("complex to float warns", lambda L: Z(L).float()),
    ("complex item to float", lambda L: float(L.tensor(1 + 1j))),
    # -- value checks -------------------------------------------------------------------
    ("bernoulli p above 1", lambda L: L.bernoulli(L.zeros(3), 2.0)),
    ("bernoulli p negative", lambda L: L.bernoulli(L.zeros(3), -0.5)),
    ("bernoulli p nan", lambda L: L.bernoulli(L.zeros(3), float("nan"))),
    ("bernoulli_ p above 1", lambda L: L.zeros(3).bernoulli_(1.5)),
    ("bernoulli tensor p above 1", lambda L: L.bernoulli(L.tensor([2.0, 0.5]))),
    ("bernoulli tensor p negative", lambda L: L.bernoulli(L.tensor([-1.0]))),
    ("bernoulli tensor p nan", lambda L: L.bernoulli(L.tensor([float("nan")]))),
    ("bernoulli_ tensor p nan", lambda L: L.zeros(2).bernoulli_(L.tensor([float("nan"), 0.5]))),
    ("bernoulli int probabilities", lambda L: L.bernoulli(L.tensor([1, 0]))),
    ("set_grad_enabled string", lambda L: L.set_grad_enabled("yes")),
    ("set_grad_enabled int", lambda L: L.set_grad_enabled(1)),
    ("set_grad_enabled None", lambda L: L.set_grad_enabled(None)),
    ("dropout p above 1", lambda L: L.nn.functional.dropout(L.ones(2), p=1.5)),
    ("dropout p negative module", lambda L: L.nn.Dropout(-0.1)),
    ("normal_ negative std", lambda L: L.zeros(2).normal_(0, -1)),
    ("normal negative std tensor", lambda L: L.normal(L.zeros(2), L.tensor([-1.0, 1.0]))),
    ("uniform_ from above to", lambda L: L.zeros(2).uniform_(1, 0)),
    ("exponential_ negative", lambda L: L.zeros(2).exponential_(-1.0)),
    ("manual_seed string", lambda L: L.manual_seed("a")),
    ("manual_seed negative huge", lambda L: L.manual_seed(-2 ** 64)),
    ("softmax without dim warns", lambda L: L.nn.functional.softmax(L.ones(2, 2))),
    ("log_softmax dtype string", lambda L: L.log_softmax(L.ones(2), 0, dtype="float64")),
    ("norm p string", lambda L: L.ones(2).norm(p="bad")),
    ("quantile out of range", lambda L: L.quantile(ar(L), 1.5)),
    ("histc min above max", lambda L: L.histc(ar(L), bins=3, min=5, max=1)),
    ("cdist p negative", lambda L: L.cdist(L.ones(1, 2), L.ones(1, 2), p=-1.0)),
    # -- huge allocations ---------------------------------------------------------------
    ("empty 2**62", lambda L: L.empty(2 ** 62)),
    ("empty 2**63", lambda L: L.empty(2 ** 63)),
    ("empty 2**40", lambda L: L.empty(2 ** 40)),
    ("ones 2**32 x 2**32", lambda L: L.ones(2 ** 32, 2 ** 32)),
    # -- autograd misuse ----------------------------------------------------------------
    ("backward of non-scalar", lambda L: leaf(L, 2).mul(2).backward()),
    ("backward without grad", lambda L: L.ones(2).sum().backward()),
    ("backward twice", lambda L: (lambda y: (y.backward(retain_graph=False), y.backward()))(leaf(L, 2).exp().sum())),
    ("backward grad shape mismatch", lambda L: leaf(L, 2).mul(2).backward(L.ones(3))),
    ("backward grad dtype", lambda L: leaf(L, 2).mul(2).backward(L.ones(2, dtype=L.int64))),
    ("grad of non-leaf is None", lambda L: (lambda x: (x * 2).grad)(leaf(L, 2))),
    ("grad unused input", lambda L: L.autograd.grad(leaf(L, 2).sum(), [leaf(L, 2)])),
    ("grad allow_unused", lambda L: L.autograd.grad(leaf(L, 2).sum(), [leaf(L, 2)], allow_unused=True)),
    ("grad of non-tensor output", lambda L: L.autograd.grad(3.0, [leaf(L, 2)])),
    ("grad input without grad", lambda L: (lambda x: L.autograd.grad((x * 2).sum(), [L.ones(2)]))(leaf(L, 2))),
    ("in-place on leaf", lambda L: leaf(L, 2).add_(1)),
    ("in-place on leaf view", lambda L: leaf(L, 2)[0].mul_(2)),
    ("modified saved tensor", lambda L: (lambda x: (lambda y: (y.add_(1), y.sum().backward()))(x.exp()))(leaf(L, 2))),
    ("requires_grad_ on non-leaf false", lambda L: (leaf(L, 2) * 2).requires_grad_(False)),
    ("requires_grad on int tensor", lambda L: L.ones(2, dtype=L.int32, requires_grad=True)),
    ("set .grad wrong shape", lambda L: setattr(leaf(L, 2), "grad", L.ones(3))),
    ("set .grad wrong type", lambda L: setattr(leaf(L, 2), "grad", [1.0, 2.0])),
    ("set .data wrong type", lambda L: setattr(L.ones(2), "data", [1.0])),
    ("backward inside no_grad", lambda L: L.no_grad()(lambda x: (x * 2).sum().backward())(leaf(L, 2))),
    ("inference tensor requires_grad", lambda L: L.inference_mode()(lambda: L.ones(2))().requires_grad_()),
    ("detach_ of view", lambda L: leaf(L, 2, 2)[0].detach_()),
    ("retain_grad on no-grad tensor", lambda L: L.ones(2).retain_grad()),
    ("register_hook without grad", lambda L: L.ones(2).register_hook(lambda g: g)),
    ("hook returns wrong shape", lambda L: (lambda x: (x.register_hook(lambda g: L.ones(3)), (x * 2).sum().backward()))(leaf(L, 2))),
    ("Function without backward", lambda L: type("F", (L.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 2)}).apply(leaf(L, 2)).sum().backward()),
    ("Function called directly", lambda L: type("F", (L.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x)})()(L.ones(1))),
    ("checkpoint non-tensor output", lambda L: L.utils.checkpoint.checkpoint(lambda x: x * 2, leaf(L, 2), use_reentrant=False).sum()),
    # -- Modules ------------------------------------------------------------------------
    ("Linear input features mismatch", lambda L: L.nn.Linear(3, 2)(L.ones(4, 5))),
    ("Linear negative features", lambda L: L.nn.Linear(-1, 2)),
    ("Linear int input", lambda L: L.nn.Linear(2, 2)(L.ones(1, 2, dtype=L.int64))),
    ("Linear double input", lambda L: L.nn.Linear(2, 2)(L.ones(1, 2, dtype=L.float64))),
    ("Conv2d 2-d input", lambda L: L.nn.Conv2d(1, 1, 3)(L.ones(5, 5))),
    ("Conv2d channel mismatch", lambda L: L.nn.Conv2d(3, 1, 3)(L.ones(1, 1, 5, 5))),
    ("Conv2d kernel larger than input", lambda L: L.nn.Conv2d(1, 1, 7)(L.ones(1, 1, 5, 5))),
    ("Conv2d groups not dividing", lambda L: L.nn.Conv2d(3, 2, 3, groups=2)),
    ("Conv2d bad padding string", lambda L: L.nn.Conv2d(1, 1, 3, padding="full")),
    ("Conv2d same padding strided", lambda L: L.nn.Conv2d(1, 1, 3, stride=2, padding="same")),
    ("MaxPool2d kernel too large", lambda L: L.nn.MaxPool2d(7)(L.ones(1, 1, 5, 5))),
    ("MaxPool2d padding too large", lambda L: L.nn.MaxPool2d(2, padding=2)(L.ones(1, 1, 5, 5))),
    ("BatchNorm1d one value per channel", lambda L: L.nn.BatchNorm1d(3)(L.ones(1, 3))),
    ("BatchNorm2d wrong channels", lambda L: L.nn.BatchNorm2d(3)(L.ones(2, 4, 2, 2))),
    ("BatchNorm2d 3-d input", lambda L: L.nn.BatchNorm2d(3)(L.ones(2, 3, 2))),
    ("LayerNorm shape mismatch", lambda L: L.nn.LayerNorm(4)(L.ones(2, 3))),
    ("Embedding index out of range", lambda L: L.nn.Embedding(3, 2)(L.tensor([3]))),
    ("Embedding float input", lambda L: L.nn.Embedding(3, 2)(L.tensor([1.0]))),
    ("Embedding padding_idx out of range", lambda L: L.nn.Embedding(3, 2, padding_idx=5)),
    ("register_parameter tensor", lambda L: L.nn.Module().register_parameter("w", L.ones(2))),
    ("register_parameter dotted name", lambda L: L.nn.Module().register_parameter("a.b", None)),
    ("register_buffer empty name", lambda L: L.nn.Module().register_buffer("", L.ones(1))),
    ("register_buffer not a tensor", lambda L: L.nn.Module().register_buffer("b", [1.0])),
    ("assign tensor over parameter", lambda L: setattr(L.nn.Linear(2, 2), "weight", L.ones(2, 2))),
    ("missing attribute", lambda L: L.nn.Linear(2, 2).wieght),
    ("add_module not a module", lambda L: L.nn.Module().add_module("m", 3)),
    ("Sequential index out of range", lambda L: L.nn.Sequential(L.nn.ReLU())[1]),
    ("ModuleList append non-module", lambda L: L.nn.ModuleList().append(3)),
    ("ModuleDict non-string key", lambda L: L.nn.ModuleDict({1: L.nn.ReLU()})),
    ("Module forward not implemented", lambda L: L.nn.Module()(L.ones(1))),
    ("load_state_dict missing key", lambda L: L.nn.Linear(2, 2).load_state_dict({"weight": L.ones(2, 2)})),
    ("load_state_dict unexpected key", lambda L: L.nn.Linear(2, 2, bias=False).load_state_dict({"weight": L.ones(2, 2), "bias": L.ones(2)})),
    ("load_state_dict wrong shape", lambda L: L.nn.Linear(2, 2).load_state_dict({"weight": L.ones(3, 2), "bias": L.ones(2)})),
    ("load_state_dict not a dict", lambda L: L.nn.Linear(2, 2).load_state_dict([L.ones(2, 2)])),
    ("load_state_dict non-strict result", lambda L: tuple(L.nn.Linear(2, 2).load_state_dict({"weight": L.ones(2, 2)}, strict=False))),
    ("Parameter of list", lambda L: L.nn.Parameter([1.0, 2.0])),
    ("Parameter int requires grad", lambda L: L.nn.Parameter(L.ones(2, dtype=L.int64))),
    ("MSELoss shape mismatch warns", lambda L: L.nn.MSELoss()(L.ones(2, 1), L.ones(2))),
    ("MSELoss bad reduction", lambda L: L.nn.functional.mse_loss(L.ones(2), L.ones(2), reduction="avg")),
    ("BCELoss out of range input", lambda L: L.nn.functional.binary_cross_entropy(L.tensor([1.5]), L.tensor([1.0]))),
    ("BCELoss target shape", lambda L: L.nn.functional.binary_cross_entropy(L.tensor([0.5, 0.5]), L.tensor([1.0]))),
    ("CrossEntropy batch mismatch", lambda L: L.nn.CrossEntropyLoss()(L.ones(3, 4), L.tensor([0, 1]))),
    ("CrossEntropy 1-d target for 3-d input", lambda L: L.nn.CrossEntropyLoss()(L.ones(2, 3, 4), L.tensor([0, 1]))),
    ("NLLLoss 3-d target shape", lambda L: L.nn.functional.nll_loss(L.ones(2, 3, 4), L.zeros(2, 5, dtype=L.long))),
    ("softmax module no dim", lambda L: L.nn.Softmax()(L.ones(2, 2))),
    ("Flatten start after end", lambda L: L.nn.Flatten(2, 1)(L.ones(2, 3, 4))),
    ("interpolate no size", lambda L: L.nn.functional.interpolate(L.ones(1, 1, 4))),
    ("interpolate bad mode", lambda L: L.nn.functional.interpolate(L.ones(1, 1, 4), size=8, mode="cubic")),
    ("pad odd length", lambda L: L.nn.functional.pad(L.ones(2, 2), (1,))),
    ("pad reflect too large", lambda L: L.nn.functional.pad(L.ones(1, 1, 3), (3, 3), mode="reflect")),
    ("LSTM input size mismatch", lambda L: L.nn.LSTM(3, 4)(L.ones(2, 1, 5))),
    ("RNN 4-d input", lambda L: L.nn.RNN(3, 4)(L.ones(1, 2, 1, 3))),
    ("clip_grad_norm_ negative", lambda L: L.nn.utils.clip_grad_norm_([leaf(L, 2)], -1.0)),
    # -- optimizers ---------------------------------------------------------------------
    ("SGD negative lr", lambda L: L.optim.SGD([leaf(L, 2)], lr=-0.1)),
    ("SGD no lr", lambda L: step(L, L.optim.SGD)),
    ("SGD empty params", lambda L: L.optim.SGD([], lr=0.1)),
    ("SGD params a tensor", lambda L: L.optim.SGD(leaf(L, 2), lr=0.1)),
    ("SGD params a generator of nothing", lambda L: L.optim.SGD((p for p in []), lr=0.1)),
    ("SGD negative momentum", lambda L: L.optim.SGD([leaf(L, 2)], lr=0.1, momentum=-1)),
    ("SGD nesterov without momentum", lambda L: L.optim.SGD([leaf(L, 2)], lr=0.1, nesterov=True)),
    ("SGD negative weight decay", lambda L: L.optim.SGD([leaf(L, 2)], lr=0.1, weight_decay=-1)),
    ("SGD non-leaf param", lambda L: L.optim.SGD([leaf(L, 2) * 2], lr=0.1)),
    ("SGD duplicate params warn", lambda L: len(L.optim.SGD([(p := leaf(L, 2)), p], lr=0.1).param_groups[0]["params"])),
    ("SGD param without grad steps", lambda L: (lambda p: (L.optim.SGD([p], lr=0.1).step(), p)[1].detach())(leaf(L, 2))),
    ("SGD step one", lambda L: step(L, L.optim.SGD, lr=0.5)),
    ("Adam beta above 1", lambda L: L.optim.Adam([leaf(L, 2)], betas=(1.0, 0.999))),
    ("Adam second beta negative", lambda L: L.optim.Adam([leaf(L, 2)], betas=(0.9, -0.1))),
    ("Adam negative eps", lambda L: L.optim.Adam([leaf(L, 2)], eps=-1e-8)),
    ("Adam negative lr", lambda L: L.optim.Adam([leaf(L, 2)], lr=-1)),
    ("AdamW negative weight decay", lambda L: L.optim.AdamW([leaf(L, 2)], weight_decay=-0.1)),
    ("Adam step one", lambda L: step(L, L.optim.Adam, lr=0.1)),
    ("RMSprop negative alpha", lambda L: L.optim.RMSprop([leaf(L, 2)], alpha=-1)),
    ("Adagrad negative lr decay", lambda L: L.optim.Adagrad([leaf(L, 2)], lr_decay=-1)),
    ("add_param_group duplicate", lambda L: (lambda p: L.optim.SGD([p], lr=0.1).add_param_group({"params": [p]}))(leaf(L, 2))),
    ("add_param_group not a dict", lambda L: L.optim.SGD([leaf(L, 2)], lr=0.1).add_param_group([leaf(L, 2)])),
    ("load_state_dict group count", lambda L: L.optim.SGD([leaf(L, 2)], lr=0.1).load_state_dict({"state": {}, "param_groups": []})),
    ("load_state_dict group size", lambda L: L.optim.SGD([leaf(L, 2)], lr=0.1).load_state_dict(L.optim.SGD([leaf(L, 2), leaf(L, 2)], lr=0.1).state_dict())),
    ("StepLR not an optimizer", lambda L: L.optim.lr_scheduler.StepLR(leaf(L, 2), 1)),
    ("zero_grad set_to_none false", lambda L: (lambda p: (p.sum().backward(), L.optim.SGD([p], lr=0.1).zero_grad(set_to_none=False), p.grad)[2])(leaf(L, 2))),
    # -- DataLoader ---------------------------------------------------------------------
    ("batch_size 0", lambda L: loader(L, Squares(L, 4), batch_size=0)),
    ("batch_size negative", lambda L: loader(L, Squares(L, 4), batch_size=-1)),
    ("batch_size float", lambda L: loader(L, Squares(L, 4), batch_size=1.5)),
    ("shuffle with sampler", lambda L: loader(L, Squares(L, 4), shuffle=True, sampler=[0, 1])),
    ("batch_sampler with batch_size", lambda L: loader(L, Squares(L, 4), batch_size=2, batch_sampler=[[0, 1]])),
    ("batch_sampler with drop_last", lambda L: loader(L, Squares(L, 4), drop_last=True, batch_sampler=[[0, 1]])),
    ("num_workers negative", lambda L: loader(L, Squares(L, 4), num_workers=-1)),
    ("prefetch without workers", lambda L: loader(L, Squares(L, 4), prefetch_factor=2)),
    ("collate ragged tensors", lambda L: loader(L, ragged(L), batch_size=2)),
    ("len lies", lambda L: loader(L, Squares(L, 2, claimed=4), batch_size=2)),
    ("drop_last keeps full batches", lambda L: loader(L, Squares(L, 5), batch_size=2, drop_last=True)),
    ("batch_size None", lambda L: loader(L, Squares(L, 3), batch_size=None)),
    ("len of iterable dataset", lambda L: len(type("It", (L.utils.data.IterableDataset,), {"__iter__": lambda self: iter([1])})())),
    ("iterable dataset with shuffle", lambda L: loader(L, type("It", (L.utils.data.IterableDataset,), {"__iter__": lambda self: iter([1])})(), shuffle=True)),
    ("random_split bad lengths", lambda L: L.utils.data.random_split(range(5), [2, 2])),
    ("random_split fractions", lambda L: [len(s) for s in L.utils.data.random_split(range(5), [0.5, 0.5], generator=L.Generator().manual_seed(0))]),
    ("random_split fractions not summing", lambda L: L.utils.data.random_split(range(5), [0.5, 0.2])),
    ("TensorDataset size mismatch", lambda L: L.utils.data.TensorDataset(L.ones(3), L.ones(4))),
    ("TensorDataset index out of range", lambda L: L.utils.data.TensorDataset(L.ones(3))[3]),
    ("Subset index out of range", lambda L: L.utils.data.Subset(range(3), [5])[0]),
    ("ConcatDataset empty", lambda L: L.utils.data.ConcatDataset([])),
    ("RandomSampler negative num_samples", lambda L: L.utils.data.RandomSampler(range(3), num_samples=-1)),
    ("RandomSampler replacement not bool", lambda L: L.utils.data.RandomSampler(range(3), replacement=1)),
    ("BatchSampler batch_size 0", lambda L: L.utils.data.BatchSampler(range(3), 0, False)),
    ("BatchSampler drop_last not bool", lambda L: L.utils.data.BatchSampler(range(3), 2, 1)),
    ("WeightedRandomSampler negative", lambda L: list(L.utils.data.WeightedRandomSampler([1.0, -1.0], 2))),
    ("default_collate of strings", lambda L: L.utils.data.default_collate(["a", "b"])),
    ("default_collate of objects", lambda L: L.utils.data.default_collate([object(), object()])),
    # -- checkpoints --------------------------------------------------------------------
    ("load missing file", lambda L: L.load(MISSING)),
    ("load text file", lambda L: L.load(NOT_A_CHECKPOINT)),
    ("load empty file", lambda L: L.load(EMPTY_FILE)),
    ("load bare pickle", lambda L: L.load(BARE_PICKLE)),
    ("load bare pickle unsafe", lambda L: L.load(BARE_PICKLE, weights_only=False)),
    ("load truncated zip", lambda L: L.load(TRUNCATED)),
    ("load legacy format", lambda L: L.load(LEGACY, weights_only=False)),
    ("load legacy format weights_only", lambda L: L.load(LEGACY)),
    ("load directory", lambda L: L.load(_TMP)),
    ("load bad map_location", lambda L: L.load(saved(L, L.ones(2), "t"), map_location="gpu")),
    ("load weights_only object", lambda L: L.load(saved(L, {"f": Squares}, "obj"))),
    ("load round trip", lambda L: L.load(saved(L, {"w": L.arange(3.0)}, "rt"))),
    ("save to directory", lambda L: L.save(L.ones(2), _TMP)),
    ("save to missing folder", lambda L: L.save(L.ones(2), os.path.join(_TMP, "no", "x.pt"))),
    ("save a lambda", lambda L: L.save(lambda x: x, os.path.join(_TMP, "f.pt"))),
    ("load_state_dict from loaded list", lambda L: L.nn.Linear(2, 2).load_state_dict(L.load(saved(L, [L.ones(2)], "list")))),
    # -- complex inputs to real-only kernels; dtype of out= -------------------------------
    ("erf of complex", lambda L: L.erf(L.tensor([1 + 1j]))),
    ("erfc of complex", lambda L: L.erfc(L.tensor([1 + 1j]))),
    ("erfinv of complex", lambda L: L.erfinv(L.tensor([0.5j]))),
    ("special.ndtr of complex", lambda L: L.special.ndtr(L.tensor([1 + 1j]))),
    ("logit of complex", lambda L: L.logit(L.tensor([0.5 + 0.1j]))),
    ("xlogy of complex", lambda L: L.xlogy(L.tensor([1j]), L.tensor([2j]))),
    ("gelu of complex", lambda L: L.nn.functional.gelu(L.tensor([1j]))),
    ("softplus of complex", lambda L: L.nn.functional.softplus(L.tensor([1j]))),
    ("elu of complex", lambda L: L.nn.functional.elu(L.tensor([1j]))),
    ("selu of complex", lambda L: L.nn.functional.selu(L.tensor([1j]))),
    ("leaky_relu of complex", lambda L: L.nn.functional.leaky_relu(L.tensor([1j]))),
    ("mish of complex", lambda L: L.nn.functional.mish(L.tensor([1j]))),
    ("hardtanh of complex", lambda L: L.nn.functional.hardtanh(L.tensor([1j]))),
    ("relu6 of complex", lambda L: L.nn.functional.relu6(L.tensor([1j]))),
    ("logsigmoid of complex", lambda L: L.nn.functional.logsigmoid(L.tensor([1j]))),
    ("hardswish of complex", lambda L: L.nn.functional.hardswish(L.tensor([1j]))),
    ("hardsigmoid of complex", lambda L: L.nn.functional.hardsigmoid(L.tensor([1j]))),
    ("silu of complex (accepted)", lambda L: L.nn.functional.silu(L.tensor([1 + 1j]))),
    ("logaddexp of complex (accepted)", lambda L: L.logaddexp(L.tensor([1j]), L.tensor([2j]))),
    ("nan_to_num of complex",
     lambda L: L.nan_to_num(L.tensor([complex(float("nan"), float("inf")), 1 - 1j]))),
    ("deg2rad of int into an int out", lambda L: L.deg2rad(L.tensor([1, 2]),
                                                            out=L.empty(2, dtype=L.int64))),
    ("rad2deg of bool into a bool out", lambda L: L.rad2deg(L.tensor([True]),
                                                             out=L.empty(1, dtype=L.bool))),
    ("sparse plus a number", lambda L: L.ones(2, 2).to_sparse() + 1),
    ("Scalar from a one-element 1-d tensor", lambda L: L.full((2,), L.tensor([3.0]))),
    ("alpha from a one-element 1-d tensor",
     lambda L: L.ones(2).add(L.ones(2), alpha=L.tensor([2.0]))),
    ("float from a one-element 1-d tensor",
     lambda L: L.dropout(L.ones(2), L.tensor([0.5]), False)),
    ("Scalar from a 0-dim tensor", lambda L: L.full((2,), L.tensor(3.0))),
    ("CSR narrow (no strides)", lambda L: L.ones(2, 2).to_sparse_csr().narrow(0, 0, 1)),
    ("CSC is_contiguous", lambda L: L.ones(2, 2).to_sparse_csc().is_contiguous()),
]


# -- comparison -------------------------------------------------------------------------

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_CPP_TRACE = re.compile(r"\nException raised from .*", re.S)
_QUOTED_PATH = re.compile(re.escape(_TMP) + r"[^'\"\s]*")


def normalise(message: str) -> str:
    """A message with what legitimately differs removed: PyTorch's C++ stack trace,
    object addresses, the library's name, temporary paths, whitespace runs."""
    message = _CPP_TRACE.sub("", message)
    message = _ADDRESS.sub("0x?", message)
    message = _QUOTED_PATH.sub("<tmp>", message)
    message = message.replace("glasstorch", "torch")
    return " ".join(message.split())


def close(ours: str, theirs: str) -> bool:
    """Close messages: equal once normalised, or one contains the other (PyTorch
    often appends a hint or a C++ location to the same sentence)."""
    ours, theirs = normalise(ours), normalise(theirs)
    return ours == theirs or (bool(ours) and ours in theirs) or (bool(theirs) and theirs in ours)


def outcome(case, lib):
    """``("returned", observation)`` or ``("raised", type name, message, exception)``."""
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("returned", observe(case(lib)))
        except Exception as exc:  # noqa: BLE001 - the exception is what we compare
            return ("raised", type(exc).__name__, str(exc), exc)


def numpy_frames(exc) -> list:
    """The traceback frames (of ``exc`` and the exceptions it chains) in numpy."""
    frames, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames += [f"{f.filename}:{f.lineno}" for f in traceback.extract_tb(exc.__traceback__)
                   if f"{os.sep}numpy{os.sep}" in f.filename]
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return frames


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_bad_input(case):
    theirs = outcome(case, torch)
    ours = outcome(case, gt)
    if theirs[0] == "returned":
        assert ours[:2] == theirs, f"\nglasstorch: {ours[:3]}\ntorch:      {theirs}"
        return
    assert ours[0] == "raised", f"torch raised {theirs[1]}: {theirs[2]}\nglasstorch: {ours}"
    assert ours[1] == theirs[1], f"\nglasstorch: {ours[1]}: {ours[2]}\ntorch:      {theirs[1]}: {theirs[2]}"
    assert close(ours[2], theirs[2]), f"\nglasstorch: {ours[2]!r}\ntorch:      {theirs[2]!r}"
    assert not numpy_frames(ours[3]), numpy_frames(ours[3])
    assert "numpy" not in ours[2].lower() or "numpy" in theirs[2].lower(), ours[2]


@given(n=st.integers(1, 6), a=st.integers(0, 6), b=st.integers(0, 6), step=st.integers(1, 2),
       op=st.sampled_from(["add_", "copy_", "out="]))
def test_shifted_views_overlap_as_in_torch(n, a, b, step, op):
    """Writing one window of a tensor from another: refused exactly when PyTorch
    refuses (partial overlap), else the same values, whatever the shift."""
    def case(L):
        x = L.arange(16.0)
        dst, src = x[a:a + n * step:step], x[b:b + n * step:step]
        if op == "out=":
            L.mul(src, 2, out=dst)
        else:
            getattr(dst, op)(src)
        return x
    theirs, ours = outcome(case, torch), outcome(case, gt)
    assert ours[:3] == theirs[:3]


@given(rows=st.integers(1, 3), cols=st.integers(0, 3), op=st.sampled_from(["add_", "mul_", "exp_"]))
def test_expanded_writes_as_in_torch(rows, cols, op):
    """In-place ops on an expanded tensor: refused when an element repeats."""
    def case(L):
        x = L.ones(1, cols).expand(rows, cols)
        return getattr(x, op)(*([2] if op != "exp_" else []))
    theirs, ours = outcome(case, torch), outcome(case, gt)
    assert ours[:3] == theirs[:3]


def test_catalogue_size():
    assert len(CASES) >= 260
    assert len({i for i, _ in CASES}) == len(CASES), "case ids must be unique"
