"""How PyTorch spells a ``call_function`` target, and the arguments it records.

Note [torch's Python-level functions]: a function PyTorch writes in Python
(``torch.nn.functional.relu``, ``torch.functional.split``) hands a Proxy to
``__torch_function__`` through its own ``handle_torch_function(...)`` line,
which passes the first few parameters positionally and every later one by
keyword, defaults filled in::

    F.relu(x)  ->  torch.nn.functional.relu(x, inplace = False)
    F.softmax(x, -1)  ->  torch.nn.functional.softmax(x, dim = -1, _stacklevel = 3, dtype = None)

``_PYTHON_LEVEL`` records how many go positionally (read off PyTorch 2.13's
sources).  What PyTorch binds in C (``torch.relu``, ``torch._C._nn.linear``)
records the call as written, and is named by the module it is bound in, which
glasstorch's generated bindings already carry in ``__module__``.
"""
from __future__ import annotations

import builtins
import inspect
import types

__all__ = ["qualified_name", "torch_call_args"]

# torch module -> {function: how many parameters handle_torch_function passes positionally}
_PYTHON_LEVEL = {
    "torch.nn.functional": {
        "max_pool1d": 2, "max_pool2d": 2, "max_pool1d_with_indices": 2,
        "max_pool2d_with_indices": 2, "adaptive_max_pool1d": 2, "adaptive_max_pool2d": 2,
        "adaptive_max_pool1d_with_indices": 2, "adaptive_max_pool2d_with_indices": 2,
        "adaptive_avg_pool2d": 2, "dropout": 1, "alpha_dropout": 1, "dropout1d": 1,
        "dropout2d": 1, "dropout3d": 1, "feature_alpha_dropout": 1, "relu": 1, "glu": 1,
        "_threshold": 3,
        "hardtanh": 1, "relu6": 1, "elu": 1, "selu": 1, "celu": 1, "leaky_relu": 1,
        "tanhshrink": 1, "softsign": 1, "softmin": 1, "softmax": 1, "log_softmax": 1,
        "hardsigmoid": 1, "silu": 1, "mish": 1, "hardswish": 1, "embedding": 2,
        "batch_norm": 3, "instance_norm": 1, "layer_norm": 2, "rms_norm": 2, "group_norm": 2,
        "nll_loss": 2, "poisson_nll_loss": 2, "gaussian_nll_loss": 3, "kl_div": 2,
        "cross_entropy": 2, "binary_cross_entropy": 2, "binary_cross_entropy_with_logits": 2,
        "smooth_l1_loss": 2, "huber_loss": 2, "l1_loss": 2, "mse_loss": 2,
        "margin_ranking_loss": 3, "hinge_embedding_loss": 2, "multilabel_soft_margin_loss": 2,
        "cosine_embedding_loss": 3, "interpolate": 1, "pad": 2, "triplet_margin_loss": 3,
        "normalize": 1, "multi_head_attention_forward": 13},
    "torch.functional": {"split": 2, "tensordot": 2, "cdist": 2, "norm": 1, "unique": 1},
}
# keyword parameters PyTorch's handle_torch_function line leaves out
_NOT_PASSED = {"l1_loss": ("weight",)}
# keyword parameters that line passes in an order other than the signature's
_KEYWORD_ORDER = {"multi_head_attention_forward": (
    "training", "key_padding_mask", "need_weights", "attn_mask", "is_causal",
    "use_separate_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "static_k",
    "static_v", "average_attn_weights")}
# functional names glasstorch writes in Python that PyTorch binds in C, as it names them
_C_BOUND = {"avg_pool1d": "torch.avg_pool1d", "avg_pool2d": "torch._C._nn.avg_pool2d",
            "elu_": "torch._C._nn.elu_", "hardtanh_": "torch._C._nn.hardtanh_",
            "leaky_relu_": "torch._C._nn.leaky_relu_", "one_hot": "torch._C._nn.one_hot",
            "relu_": "torch.relu_", "softplus": "torch._C._nn.softplus",
            "softshrink": "torch._C._nn.softshrink"}


def _namespace(module: str):
    import glasstorch
    return glasstorch.nn.functional if module == "torch.nn.functional" else glasstorch


def _module_of(module: str):
    """glasstorch's module for a torch module path (None if it has none)."""
    import importlib
    try:
        return importlib.import_module(module.replace("torch", "glasstorch", 1))
    except ImportError:
        return None


def _python_level(target):
    """(torch module, positional count) if PyTorch writes ``target`` in Python."""
    name = getattr(target, "__name__", None)
    for module, counts in _PYTHON_LEVEL.items():
        if name in counts and getattr(_namespace(module), name, None) is target:
            return module, counts[name]
    return None


def torch_call_args(target, args: tuple, kwargs: dict):
    """The (args, kwargs) PyTorch records for a call of ``target`` (see the note)."""
    found = _python_level(target)
    if found is None:
        return args, kwargs
    bound = inspect.signature(target).bind(*args, **kwargs)
    bound.apply_defaults()
    values = list(bound.arguments.items())
    positional = found[1]
    skipped = _NOT_PASSED.get(target.__name__, ())
    keywords = {k: v for k, v in values[positional:] if k not in skipped}
    order = _KEYWORD_ORDER.get(target.__name__)
    if order is not None:
        keywords = {k: keywords[k] for k in order}
    return tuple(v for _, v in values[:positional]), keywords


def qualified_name(target) -> str:
    """How PyTorch names a call_function target: ``operator.add``, ``builtins.getattr``,
    ``torch.relu``, ``torch._C._nn.linear``, ``torch.nn.functional.relu``,
    ``torch.functional.split``; other functions by their module."""
    if getattr(target, "__module__", None) in ("_operator", "operator"):
        return f"operator.{target.__name__}"
    if isinstance(target, types.BuiltinFunctionType) and getattr(builtins, target.__name__,
                                                                 None) is target:
        return f"builtins.{target.__name__}"
    import glasstorch
    name = getattr(target, "__name__", repr(target))
    found = _python_level(target)
    if found is not None and getattr(_module_of(found[0]), name, None) is not None:
        return f"{found[0]}.{name}"
    if name in _C_BOUND and getattr(glasstorch.nn.functional, name, None) is target:
        return _C_BOUND[name]
    module = getattr(target, "__module__", None) or ""
    if module.startswith("torch._ops"):     # OpOverloads: torch.ops.aten.t.default
        return f"{module.replace('torch._ops', 'torch.ops')}.{name}"
    if module == "torch" or module.startswith("torch."):    # a generated binding
        return f"{module}.{name}"
    if module.startswith("glasstorch._") and getattr(glasstorch, name, None) is target:
        return f"torch.{name}"     # glasstorch's own home for what torch binds in C
    module = module.replace("glasstorch", "torch")
    return f"{module}.{name}" if module else name
