"""torch.distributed: process groups and collectives (see distributed_c10d)."""
from .distributed_c10d import (  # noqa: F401
    Backend, GroupMember, ProcessGroup, ReduceOp, Work, all_gather, all_gather_into_tensor,
    all_gather_object, all_reduce, barrier, broadcast, broadcast_object_list,
    destroy_process_group, get_backend, get_rank, get_world_size, init_process_group,
    is_available, is_gloo_available, is_initialized, is_mpi_available, is_nccl_available,
    is_torchelastic_launched, new_group, reduce, reduce_scatter_tensor)
