"""A DDP program as nanoGPT's train.py imports it, run with one rank: the
uninitialised package's errors, init from env://, DDP training with no_sync,
DistributedSampler's slices, one-rank collectives, DataParallel on CPU."""
import contextlib
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
print(dist.is_available(), dist.is_initialized())
for f in [dist.get_rank, dist.get_world_size, dist.barrier, dist.destroy_process_group,
          lambda: DDP(torch.nn.Linear(2, 2)), lambda: dist.all_reduce(torch.ones(2)),
          lambda: dist.init_process_group("gloo"), lambda: dist.init_process_group("nccl"),
          lambda: DistributedSampler(range(10))]:
    try: print(f())
    except Exception as e: print(type(e).__name__, e)
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("PORT", "29561"), RANK="0", WORLD_SIZE="1")
dist.init_process_group(backend="gloo")
print(dist.is_initialized(), dist.get_rank(), dist.get_world_size(), dist.get_backend())
torch.manual_seed(0)
m = DDP(torch.nn.Linear(3, 2))
print(m)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x = torch.randn(4, 3)
for i in range(3):
    ctx = m.no_sync() if i == 1 else contextlib.nullcontext()
    with ctx:
        loss = m(x).pow(2).sum()
        loss.backward()
    opt.step(); opt.zero_grad()
    print(round(loss.item(), 5), m.require_backward_grad_sync)
print(list(m.state_dict()))
s = DistributedSampler(range(10), shuffle=True, seed=3); s.set_epoch(2); print(list(s), len(s))
s = DistributedSampler(range(10), num_replicas=3, rank=2, drop_last=False, shuffle=False); print(list(s), len(s))
s = DistributedSampler(range(10), num_replicas=3, rank=1, drop_last=True); print(list(s), len(s))
try: DistributedSampler(range(10), num_replicas=3, rank=3)
except Exception as e: print(type(e).__name__, e)
t = [torch.zeros(2)]; dist.all_gather(t, torch.ones(2)); print(t)
w = dist.all_reduce(torch.ones(2), op=dist.ReduceOp.AVG, async_op=True); print(w.wait())
try: dist.broadcast(torch.ones(1), src=1)
except Exception as e: print(type(e).__name__, e)
try: dist.init_process_group(backend="gloo")
except Exception as e: print(type(e).__name__, e)
dist.destroy_process_group(); print(dist.is_initialized())
dp = torch.nn.DataParallel(torch.nn.Linear(2, 2)); print(dp(torch.ones(1, 2)).shape, list(dp.state_dict()))
import torch.onnx
print(torch.onnx.is_in_onnx_export())
print("real torch:", "torch._C._distributed_c10d" in sys.modules)
