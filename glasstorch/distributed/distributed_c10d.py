"""torch.distributed's c10d front end: the default process group and collectives.

What runs today is PyTorch's behaviour *without* a multi-process job: the
queries and errors of an uninitialised package, and a process group of one
rank (``world_size=1``, the ``gloo`` backend name), in which every collective
is exact and trivial (a sum over one rank is the tensor itself).  Jobs of more
than one process need real transport (MPI), which is not built yet: they are
refused with a clear error rather than run wrongly.
"""
from __future__ import annotations

import enum
import os
from datetime import timedelta

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to "
                    "call init_process_group.")


class ReduceOp:
    """``dist.ReduceOp``: the reduction a collective applies across ranks."""

    class RedOpType(enum.Enum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

        def __repr__(self):
            return f"<RedOpType.{self.name}: {self.value}>"

        def __str__(self):
            return f"RedOpType.{self.name}"


for _op in ReduceOp.RedOpType:
    setattr(ReduceOp, _op.name, _op)


class Backend(str):
    """``dist.Backend``: a backend name, lower-cased (``Backend("GLOO") == "gloo"``)."""

    GLOO, NCCL, MPI, UCC, UNDEFINED = "gloo", "nccl", "mpi", "ucc", "undefined"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        return str.__new__(cls, value if value != Backend.UNDEFINED else name.lower())


class ProcessGroup:
    """A group of ranks that collectives run over (here: one rank)."""

    def __init__(self, backend: str, rank: int, world_size: int):
        self._backend, self._rank, self._world_size = backend, rank, world_size

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._world_size

    def name(self) -> str:
        return self._backend


class Work:
    """What an ``async_op=True`` collective returns; a one-rank collective is done at once."""

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True


class GroupMember:
    """``dist.GroupMember.WORLD``: the default group once initialised, else None."""

    WORLD = None
    NON_GROUP_MEMBER = -100


def is_available() -> bool:
    return True


def is_gloo_available() -> bool:
    return True


def is_mpi_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    return GroupMember.WORLD is not None


def _env_int(name: str) -> int:
    if name not in os.environ:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return int(os.environ[name])


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None, device_id=None) -> None:
    """Create the default process group (``env://`` reads RANK and WORLD_SIZE)."""
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    if (init_method is None or init_method.startswith("env://")) and store is None:
        rank = _env_int("RANK") if rank == -1 else rank
        world_size = _env_int("WORLD_SIZE") if world_size == -1 else world_size
    name = Backend(backend or Backend.GLOO)
    if name == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name not in (Backend.GLOO, Backend.MPI):
        raise AssertionError(f"Unknown backend type {backend}")
    if name == Backend.MPI:
        raise RuntimeError("Distributed package doesn't have MPI built in. MPI is only "
                           "included if you build PyTorch from source on a host that has "
                           "MPI installed.")
    if world_size != 1:
        raise NotImplementedError(
            f"glasstorch.distributed runs one process (world_size=1) for now; world_size="
            f"{world_size} needs multi-process collectives, which are not built yet")
    if rank != 0:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, 0]")
    GroupMember.WORLD = ProcessGroup(name, rank, world_size)


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    if GroupMember.WORLD is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is GroupMember.WORLD:
        GroupMember.WORLD = None


def _group(group: ProcessGroup | None) -> ProcessGroup:
    if group is not None:
        return group
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    return GroupMember.WORLD


def get_rank(group: ProcessGroup | None = None) -> int:
    return _group(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    return _group(group).size()


def get_backend(group: ProcessGroup | None = None) -> str:
    return _group(group).name()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs) -> ProcessGroup:
    world = _group(None)
    if ranks is not None and sorted(ranks) != [0]:
        raise ValueError(f"The new group's rank should be within the world_size set by "
                         f"init_process_group: {ranks}")
    return ProcessGroup(Backend(backend) if backend else world.name(), 0, 1)


def _done(async_op: bool):
    return Work() if async_op else None


def _check_root(group: ProcessGroup, root: int | None, what: str) -> None:
    if root is not None and not 0 <= root < group.size():
        raise RuntimeError(f"ProcessGroupGloo::{what}: invalid root rank: {root}")


# Collectives over one rank: the result on the only rank is its own input.

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    _group(group)
    return _done(async_op)


def reduce(tensor, dst: int | None = None, op=ReduceOp.SUM, group=None, async_op=False,
           group_dst: int | None = None):
    _check_root(_group(group), dst if group_dst is None else group_dst, "reduce")
    return _done(async_op)


def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False,
              group_src: int | None = None):
    _check_root(_group(group), src if group_src is None else group_src, "broadcast")
    return _done(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _group(group)
    tensor_list[0].copy_(tensor)
    return _done(async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _group(group)
    output_tensor.copy_(input_tensor.reshape(output_tensor.shape))
    return _done(async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _group(group)
    output.copy_(input.reshape(output.shape))
    return _done(async_op)


def all_gather_object(object_list, obj, group=None):
    _group(group)
    object_list[0] = obj


def broadcast_object_list(object_list, src: int | None = None, group=None, device=None,
                          group_src: int | None = None):
    _check_root(_group(group), src if group_src is None else group_src, "broadcast")


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    _group(group)
    return _done(async_op)
