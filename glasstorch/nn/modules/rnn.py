"""``torch.nn.modules.rnn``: RNNBase, RNN, LSTM, GRU and the single-step cells.

Parameters are named, shaped and initialized as in PyTorch (every parameter
U(-1/sqrt(hidden_size), +) in registration order, so the same manual_seed gives
the same weights bit for bit).  The forward passes call the same aten ops
PyTorch's do (``aten::lstm.input`` ... in glasstorch/_ops/kernels/rnn.py), with
PyTorch's argument checks and messages.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import empty, zeros
from ..._dispatcher.dispatcher import ops
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

aten = ops.aten

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _apply_permutation(tensor, permutation, dim: int = 1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """What RNN, LSTM and GRU share: parameters per layer and direction
    (``weight_ih_l{k}[_reverse]``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``,
    and ``weight_hr_l{k}`` for an LSTM with projections), checks, repr."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._check_arguments(dropout)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = {"weight_ih": (gate_size, layer_input_size),
                          "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shape, **factory_kwargs)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def _check_arguments(self, dropout) -> None:
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and self.num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={self.num_layers}", stacklevel=3)
        for name, value, kind in (("bias", self.bias, bool), ("batch_first", self.batch_first, bool),
                                  ("input_size", self.input_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
        if self.input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(self.hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(self.hidden_size).__name__}")
        if self.hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if self.num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if self.proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if self.proj_size >= self.hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

    @property
    def _flat_weights(self) -> list:
        """The parameters in the order the aten ops take them (always current, so
        reassigning ``self.weight_ih_l0`` needs no bookkeeping)."""
        return [getattr(self, name, None) for name in self._flat_weights_names]

    def flatten_parameters(self) -> None:
        """Compacts the weights for cuDNN in PyTorch; nothing to do on CPU."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    # -- checks ---------------------------------------------------------------------------

    def check_input(self, input, batch_sizes) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- forward plumbing shared by RNN and GRU (LSTM carries two states) ----------------

    def _zero_state(self, input, batch: int, size: int):
        num_directions = 2 if self.bidirectional else 1
        return zeros(self.num_layers * num_directions, batch, size, dtype=input.dtype,
                     device=input.device)

    def _run_one_state(self, name: str, op, input, hx):
        """Unpack/unbatch ``input``, default and check ``hx``, call ``op`` (an aten
        overload packet: ``.input`` for tensors, ``.data`` for packed sequences)."""
        orig_input = input
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                hx = self._zero_state(input, int(batch_sizes[0]), self.hidden_size)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = None
            if input.dim() not in (2, 3):
                detail = "D tensor instead" if name == "RNN" else "D instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}"
                                 f"{detail}")
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D "
                                           f"but got {hx.dim()}-D tensor")
                    hx = hx.unsqueeze(1)
            elif hx is not None and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
            if hx is None:
                batch = input.size(0) if self.batch_first else input.size(1)
                hx = self._zero_state(input, batch, self.hidden_size)
        self.check_forward_args(input, hx, batch_sizes)
        args = (self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                self.bidirectional)
        if batch_sizes is None:
            output, hidden = op.input(input, hx, *args, self.batch_first)
        else:
            output, hidden = op.data(input, batch_sizes, hx, *args)
        if isinstance(orig_input, PackedSequence):
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = hidden.squeeze(1)
        return output, hidden


class RNN(RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        op = aten.rnn_tanh if self.mode == "RNN_TANH" else aten.rnn_relu
        return self._run_one_state("RNN", op, input, hx)


class LSTM(RNNBase):
    """Long short-term memory; optional output projection (``proj_size``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        orig_input = input
        batch_sizes = None
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                batch = int(batch_sizes[0])
                hx = (self._zero_state(input, batch, real_hidden_size),
                      self._zero_state(input, batch, self.hidden_size))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D "
                                 "instead")
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is None:
                batch = input.size(0) if self.batch_first else input.size(1)
                hx = (self._zero_state(input, batch, real_hidden_size),
                      self._zero_state(input, batch, self.hidden_size))
            else:
                expected = 3 if is_batched else 2
                if hx[0].dim() != expected or hx[1].dim() != expected:
                    kind = "batched 3-D" if is_batched else "unbatched 2-D"
                    raise RuntimeError(f"For {kind} input, hx and cx should also be "
                                       f"{expected}-D but got ({hx[0].dim()}-D, "
                                       f"{hx[1].dim()}-D) tensors")
                if not is_batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, batch_sizes)
        args = (self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                self.bidirectional)
        if batch_sizes is None:
            output, *hidden = aten.lstm.input(input, list(hx), *args, self.batch_first)
        else:
            output, *hidden = aten.lstm.data(input, batch_sizes, list(hx), *args)
        hidden = tuple(hidden)
        if isinstance(orig_input, PackedSequence):
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, hidden


class GRU(RNNBase):
    """Gated recurrent unit (reset, update and new gates, in that parameter order)."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run_one_state("GRU", aten.gru, input, hx)


# -- cells -------------------------------------------------------------------------------------

class RNNCellBase(Module):
    """One timestep: ``weight_ih`` (chunks*hidden, input), ``weight_hh`` (chunks*hidden,
    hidden) and optional ``bias_ih``/``bias_hh``."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size),
                                         **factory_kwargs))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size),
                                         **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, name: str, input, hx):
        """(input, hx, is_batched) with 1-D input/hidden given a batch dim of 1."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act tanh or relu."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched("RNNCell", input, hx)
        if self.nonlinearity == "tanh":
            op = aten.rnn_tanh_cell.default
        elif self.nonlinearity == "relu":
            op = aten.rnn_relu_cell.default
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = op(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h, c) -> (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            state = zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                          device=input.device)
            hx = (state, state)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        ret = aten.lstm_cell.default(input, list(hx), self.weight_ih, self.weight_hh,
                                     self.bias_ih, self.bias_hh)
        return ret if is_batched else (ret[0].squeeze(0), ret[1].squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h -> h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched("GRUCell", input, hx)
        ret = aten.gru_cell.default(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                                    self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
