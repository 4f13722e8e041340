"""``torch.utils.flop_counter``: count the FLOPs of matmul-like operators.

``FlopCounterMode`` is a context manager around a TorchDispatchMode: every
operator call inside it (forward and backward) whose packet has a formula in
the registry adds its count, under ``"Global"`` and under each module running
at the time (tracked by ``ModuleTracker``)::

    with FlopCounterMode(display=False) as counter:
        model(x).sum().backward()
    counter.get_total_flops()      # e.g. for MFU estimates

Formulas get the argument *shapes* (tensors replaced by their sizes, and
``out_shape`` for the result) unless registered with ``get_raw=True``.  Only
multiplications-and-adds of the big ops are counted, as PyTorch counts them:
2 FLOPs per multiply-accumulate, biases and pointwise work ignored.
"""
from __future__ import annotations

import warnings
from collections import defaultdict
from functools import wraps
from math import prod

from .._dispatcher.dispatcher import OpOverloadPacket, ops
from .._tensor import Tensor
from ._python_dispatch import TorchDispatchMode
from ._pytree import tree_map, tree_map_
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]

aten = ops.aten

flop_registry: dict = {}


def get_shape(value):
    """A tensor's size; anything else unchanged."""
    return value.shape if isinstance(value, Tensor) else value


def shape_wrapper(formula):
    """Adapt a formula over shapes to be called with the real arguments and ``out_val``."""
    @wraps(formula)
    def on_arguments(*args, out_val=None, **kwargs):
        args, kwargs, out_shape = tree_map(get_shape, (args, kwargs, out_val))
        return formula(*args, out_shape=out_shape, **kwargs)
    return on_arguments


def register_flop_formula(targets, get_raw=False):
    """Decorator: register ``formula`` for an op packet (or a list of them)."""
    def register_formula(formula):
        if not get_raw:
            formula = shape_wrapper(formula)

        def register(target):
            if not isinstance(target, OpOverloadPacket):
                raise ValueError(
                    f"register_flop_formula(targets): expected each target to be "
                    f"OpOverloadPacket (i.e. torch.ops.mylib.foo), JitFunction, "
                    f"or HigherOrderOperator, got {target} which is of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = formula

        tree_map_(register, targets)
        return formula
    return register_formula


@register_flop_formula(aten.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """(m, k) @ (k, n): m*n dot products of length k."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"mm_flop: inner dimensions differ: {a_shape} @ {b_shape}")
    return 2 * m * n * k


@register_flop_formula(aten.addmm)
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """As mm; adding ``self`` is not counted."""
    return mm_flop(a_shape, b_shape)


@register_flop_formula(aten.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """A batch of mm's."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2 or k != k2:
        raise AssertionError(f"bmm_flop: shapes do not match: {a_shape} @ {b_shape}")
    return 2 * b * m * n * k


@register_flop_formula(aten.baddbmm)
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """As bmm; adding ``self`` is not counted."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed: bool = False) -> int:
    """Each filter tap meets each spatial point of the output (of the input,
    when transposed), for every batch element and (out, in) channel pair.
    Padding and groups are not accounted for, as in PyTorch."""
    batch = x_shape[0]
    spatial = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *kernel = w_shape
    return 2 * prod(spatial) * prod(kernel) * batch * c_out * c_in


@register_flop_formula(aten.convolution)
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs) -> int:
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


@register_flop_formula(aten.convolution_backward)
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation,
                       transposed, _output_padding, _groups, output_mask, out_shape,
                       **kwargs) -> int:
    """grad_input is the transposed convolution of grad_out with the weight;
    grad_weight is a convolution of input and grad_out with batch and channel
    dimensions swapped (grad_out and input trade places when transposed)."""
    def swap_batch_channel(shape):
        return [shape[1], shape[0], *shape[2:]]

    count = 0
    if output_mask[0]:
        count += conv_flop_count(grad_out_shape, w_shape, get_shape(out_shape[0]), not transposed)
    if output_mask[1]:
        image, kernel = (grad_out_shape, x_shape) if transposed else (x_shape, grad_out_shape)
        count += conv_flop_count(swap_batch_channel(image), swap_batch_channel(kernel),
                                 swap_batch_channel(get_shape(out_shape[1])))
    return count


suffixes = ["", "K", "M", "B", "T"]


def get_suffix_str(number) -> str:
    """The unit for a number: thousands from 5 digits on (1001M, not 1.001B)."""
    return suffixes[max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number, suffix) -> str:
    return f"{number / 1000 ** suffixes.index(suffix):.3f}" + suffix


def convert_to_percent_str(num, denom) -> str:
    return "0%" if denom == 0 else f"{num / denom:.2%}"


class FlopCounterMode:
    """Counts FLOPs inside its context; per module when modules run inside it.

    ``display=True`` prints ``get_table(depth)`` on exit (which needs the
    ``tabulate`` package).  ``custom_mapping`` adds or overrides formulas
    ({packet: formula over shapes}) for this counter only.  Not reentrant.
    """

    def __init__(self, mods=None, depth: int = 2, display: bool = True, custom_mapping=None):
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode = None
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=2)
        custom = {packet: formula if getattr(formula, "_get_raw", False) else shape_wrapper(formula)
                  for packet, formula in (custom_mapping or {}).items()}
        self.flop_registry = {**flop_registry, **custom}
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict:
        """{module name: {op packet: flops}}, ``"Global"`` holding everything."""
        return {name: dict(counts) for name, counts in self.flop_counts.items()}

    def get_table(self, depth=None) -> str:
        """The counts as a text table, modules nested down to ``depth`` levels."""
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        import tabulate

        tabulate.PRESERVE_WHITESPACE = True
        global_flops = self.get_total_flops()
        unit = get_suffix_str(global_flops)
        global_subsumed = False

        def rows_for(name, indent):
            nonlocal global_subsumed
            total = sum(self.flop_counts[name].values())
            global_subsumed |= total >= global_flops
            pad = " " * indent
            rows = [[pad + name, convert_num_with_suffix(total, unit),
                     convert_to_percent_str(total, global_flops)]]
            for packet, flops in self.flop_counts[name].items():
                rows.append([pad + " - " + str(packet), convert_num_with_suffix(flops, unit),
                             convert_to_percent_str(flops, global_flops)])
            return rows

        rows = []
        for name in sorted(self.flop_counts):
            level = name.count(".") + 1
            if name != "Global" and level <= depth:
                rows.extend(rows_for(name, level - 1))
        # "Global" is shown only when some FLOPs ran outside every module.
        if "Global" in self.flop_counts and not global_subsumed:
            for row in rows:
                row[0] = " " + row[0]
            rows = rows_for("Global", 0) + rows
        if not rows:
            rows = [["Global", "0", "0%"]]
        return tabulate.tabulate(rows, headers=["Module", "FLOP", "% Total"],
                                 colalign=("left", "right", "right"))

    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args):
        result = self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return result

    def _count_flops(self, packet, out, args, kwargs):
        """Add one call's FLOPs to Global and to every module running now."""
        formula = self.flop_registry.get(packet)
        if formula is not None:
            flops = formula(*args, **kwargs, out_val=out)
            for name in set(self.mod_tracker.parents):
                self.flop_counts[name][packet] += flops
        return out


class _FlopCounterMode(TorchDispatchMode):
    """The dispatch mode behind FlopCounterMode: run each op, then count it.
    An op without a formula is first offered its decomposition, whose parts
    may have one."""

    def __init__(self, counter: FlopCounterMode):
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.overloadpacket not in self.counter.flop_registry:
            with self:
                result = func.decompose(*args, **kwargs)
            if result is not NotImplemented:
                return result
        out = func(*args, **kwargs)
        return self.counter._count_flops(func.overloadpacket, out, args, kwargs)
