"""glasstorch: PyTorch's runtime rebuilt in readable Python.

``import glasstorch as torch`` and PyTorch programs run unchanged.  The layers,
top to bottom (see docs/architecture.md):

    glasstorch/__init__.py, nn/, optim/   Python frontend
    _dispatcher/binding.py                argument parsing (torch._C bindings)
    _ops/  (native_functions.yaml)        the op library (ATen)
    _dispatcher/                          the dispatcher (c10 dispatch)
    _core/                                dtype, device, storage, keys, TLS (c10)
    _ops/kernels/                         backend kernels (numpy on CPU)
"""
from __future__ import annotations

import builtins as _builtins

from ._core.dtype import (bool_ as bool, uint8, int8, int16, int32, int64, float16, bfloat16,
                          float32, float64, complex64, complex128, uint16, uint32, uint64,
                          dtype, promote_types,
                          can_cast, get_default_dtype, set_default_dtype)
from ._core.dtype import ALIASES as _DTYPE_ALIASES
from ._core.device import device
from ._core.storage import UntypedStorage, TypedStorage
from ._core.layout import (layout, strided, memory_format, contiguous_format, channels_last,
                           channels_last_3d, preserve_format)
from ._core.layout import sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc
from ._tensor import Tensor, Size
from ._core import collector as _collector
from ._dispatcher.dispatcher import ops
from ._ops import registry as _registry
from ._ops.structured import result_type
from ._ops.tags import Tag
from ._ops.kernels.native import get_num_threads, set_num_threads

float = float32
double = float64
half = float16
long = int64
int = int32
short = int16
cfloat = complex64
cdouble = complex128

with _collector.paused():     # its ~100k lasting objects, unscanned (see _core/collector.py)
    _registry.load()
globals().update(_registry.FUNCTIONS["torch"])

from ._creation import *  # noqa: E402,F401,F403  (tensor, from_numpy, ...)
from .random import *  # noqa: E402,F401,F403  (manual_seed, Generator, ...)
from ._indexing import *  # noqa: E402,F401,F403  (installs Tensor.__getitem__ / __setitem__)
from . import return_types  # noqa: E402,F401
from . import _C, cuda, distributed, library, nn, onnx  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from .functional import *  # noqa: E402,F401,F403  (torch.functional: einsum, norm, unique ...)
from .functional import _assert  # noqa: E402,F401  (torch._assert, FX's traceable assert)
from ._tensor_types import *  # noqa: E402,F401,F403  (torch.FloatTensor ..., Tensor.new)
from ._toplevel import *  # noqa: E402,F401,F403  (torch.pi, switches, x.H, x.real ...)
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: E402,F401  (torch._lowrank)
from ._core.type_info import finfo, iinfo  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from . import special  # noqa: E402,F401
from . import sparse  # noqa: E402,F401  (torch.sparse)
from .sparse import (sparse_compressed_tensor, sparse_coo_tensor,  # noqa: E402,F401
                     sparse_csc_tensor, sparse_csr_tensor)
from . import signal  # noqa: E402,F401
from . import backends  # noqa: E402,F401
from ._tensor_str import set_printoptions  # noqa: E402
from . import autograd  # noqa: E402
from .autograd import variable_type as _variable_type, variable as _variable  # noqa: E402
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: E402,F401
                                 is_grad_enabled, is_inference_mode_enabled)
from .autograd.anomaly_mode import (is_anomaly_enabled, is_anomaly_check_nan_enabled,  # noqa: E402,F401
                                    set_anomaly_enabled)



def is_inference(input) -> bool:
    """``torch.is_inference(t)``: made in inference mode (no autograd keys)."""
    return input.is_inference()


with _collector.paused():
    _variable_type.register_autograd_kernels()
_variable.install()
from . import overrides  # noqa: E402,F401
from ._dispatcher import torch_function as _torch_function  # noqa: E402
_torch_function.install_tensor_overrides()
from .utils import checkpoint as _checkpoint_module  # noqa: E402,F401  (torch.utils.checkpoint)

__version__ = "0.1.0"

from ._core import startup_cache as _startup_cache  # noqa: E402
_startup_cache.save()      # what this import parsed and compiled, for the next one


_float32_matmul_precision = "highest"
_deterministic = {"mode": False, "warn_only": False}


def set_float32_matmul_precision(precision: str) -> None:
    """Recorded for programs that set it; CPU matmuls are always full float32."""
    global _float32_matmul_precision
    if precision not in ("highest", "high", "medium"):
        import warnings
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.")
        return
    _float32_matmul_precision = precision


def get_float32_matmul_precision() -> str:
    return _float32_matmul_precision


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """glasstorch's CPU kernels are deterministic already; the flag is recorded.
    (``bool`` here is ``glasstorch.bool``, the dtype: hence ``not not``.)"""
    _deterministic.update(mode=not not mode, warn_only=not not warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic["mode"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """``torch.set_deterministic_debug_mode``: 0 "default", 1 "warn", 2 "error",
    i.e. use_deterministic_algorithms off, on with warn_only, on."""
    if not isinstance(debug_mode, (_builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> _builtins.int:
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _deterministic["warn_only"]


# Automatic mixed precision: torch.autocast, torch.amp, and the autocast state functions
# PyTorch binds from C++ (glasstorch/amp/autocast_state.py).
from . import amp, cpu  # noqa: E402,F401
from . import distributions  # noqa: E402,F401  (torch.distributions)
from . import masked  # noqa: E402,F401  (torch.masked)
from .amp import autocast  # noqa: E402,F401
from .amp.autocast_state import (  # noqa: E402,F401
    is_autocast_enabled, set_autocast_enabled, get_autocast_dtype, set_autocast_dtype,
    is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache,
    autocast_increment_nesting, autocast_decrement_nesting,
    is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype,
    set_autocast_cpu_dtype, get_autocast_gpu_dtype, set_autocast_gpu_dtype,
    is_autocast_ipu_enabled, set_autocast_ipu_enabled, get_autocast_ipu_dtype,
    set_autocast_ipu_dtype, is_autocast_xla_enabled, set_autocast_xla_enabled,
    get_autocast_xla_dtype, set_autocast_xla_dtype)

from . import profiler  # noqa: E402,F401  (torch.profiler; also binds torch.autograd.profiler)
from . import multiprocessing  # noqa: E402,F401  (torch.multiprocessing: tensor reducers)
from .utils import _pytree  # noqa: E402,F401  (torch.utils._pytree)
from . import _subclasses  # noqa: E402,F401  (torch._subclasses: FakeTensor, FakeTensorMode)
from . import fx  # noqa: E402,F401  (torch.fx: graphs, symbolic tracing)
fx.node.has_side_effect(_assert)              # state changes graphs keep, as torch.fx does
fx.node.has_side_effect(_C._set_grad_enabled)
from .fx.experimental.sym_node import SymInt, SymBool, sym_max, sym_min  # noqa: E402,F401
from . import func  # noqa: E402,F401  (torch.func: function transforms)
from .func import vmap  # noqa: E402,F401  (torch.vmap)
from . import _decomp  # noqa: E402,F401  (torch._decomp: the decomposition table)
from . import _dynamo, _functorch  # noqa: E402,F401  (AOTAutograd; the backend registry)
from . import compiler  # noqa: E402,F401  (torch.compiler: stages(fn, *args))
from . import export  # noqa: E402,F401  (torch.export: whole-program capture)
from . import __future__, jit, testing  # noqa: E402,F401  (torch.__future__/jit/testing)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor",
            mode=None, options=None, disable: bool = False):
    """``torch.compile``: ``model`` (a function or Module) captured by Dynamo into
    graphs run by ``backend`` (``glasstorch/_dynamo``).  Used bare, as
    ``@compile(...)``, it returns the decorator."""
    if model is None:
        def decorator(m):
            if m is None:
                raise RuntimeError("Model can't be None")
            return compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)
        return decorator
    if disable:
        return model
    modes = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
    if mode is not None and mode not in modes:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(modes)}")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if backend == "inductor" and (mode or options):
        from ._inductor.compile_fx import InductorBackend
        backend = InductorBackend(mode, options)
    return _dynamo.optimize(backend, nopython=fullgraph, dynamic=dynamic)(model)
from . import _logging  # noqa: E402,F401  (torch._logging: TORCH_LOGS, set_logs)
from ._higher_order_ops import cond  # noqa: E402  (torch.cond)
from ._higher_order_ops import cond_op as _cond_op  # noqa: E402

ops.higher_order.cond = _cond_op
