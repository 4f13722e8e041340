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
# dynamic=None: a size or int that changed is traced symbolically on the recompile
automatic_dynamic_shapes = True
# a module's parameters and buffers keep static sizes, even under dynamic=True
force_nn_module_property_static_shapes = True
# dynamic=None starts static (False: every size and int argument symbolic at once)
assume_static_by_default = True
# a backend that raises: False re-raises it (BackendCompilerFailed), True runs the
# frame eagerly with a warning.  Gaps in glasstorch's own tracer always run eagerly.
suppress_errors = False
