"""``torch._dynamo.config``: Dynamo's switches, as PyTorch names them."""
from __future__ import annotations

# compiled entries one code object may have before it runs eagerly for good
recompile_limit = 8
cache_size_limit = recompile_limit       # the name older PyTorch programs set
# every frame's graph must be whole (torch.compile(fullgraph=True) sets it per call)
error_on_graph_break = False
capture_scalar_outputs = False
# trace into nn.RNN / LSTM / GRU (off: a frame calling one runs eagerly, as in PyTorch)
allow_rnn = False
