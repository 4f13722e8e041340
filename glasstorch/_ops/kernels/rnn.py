"""Recurrent layers (ATen's RNN.cpp, CPU path): lstm / gru / rnn_tanh / rnn_relu on
padded (``.input``) or packed (``.data``) sequences, and the single-step cells.

All are CompositeImplicitAutograd: autograd records the ops they call.  Per layer
and direction the input projection ``x W_ih^T + b_ih`` is one matmul over the
whole sequence; each timestep then costs one ``addmm`` (h W_hh^T + b_hh) plus the
cell's pointwise math:

    RNN   h' = act(ig + hg)
    LSTM  i, f, g, o = split(ig + hg);  c' = sig(f) c + sig(i) tanh(g);
          h' = sig(o) tanh(c')                     (h' @ W_hr^T with projections)
    GRU   r, z = sig(ig[:2H] + hg[:2H]);  n = tanh(ig[2H:] + r hg[2H:]);
          h' = (h - n) z + n

A hidden state is a tuple: (h,) for RNN/GRU, (h, c) for LSTM.  Layers are
stacked with dropout (training only) between them; a bidirectional layer
concatenates the forward and the reversed pass along the feature dim.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from . import kernel

aten = ops.aten


# -- cells: one timestep, from precomputed input gates ----------------------------------------

class _Weights:
    """One layer-direction's parameters, with W_hh^T (and W_hr^T) taken once."""

    def __init__(self, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
        self.w_ih, self.b_ih, self.b_hh = w_ih, b_ih, b_hh
        self.w_hh_t = aten.t.default(w_hh)
        self.w_hr_t = aten.t.default(w_hr) if w_hr is not None else None

    def input_gates(self, x):
        return aten.linear.default(x, self.w_ih, self.b_ih)

    def hidden_gates(self, h):
        if self.b_hh is None:
            return aten.mm.default(h, self.w_hh_t)
        return aten.addmm.default(self.b_hh, h, self.w_hh_t)


def _simple_step(activation):
    """``activation`` names an aten op (looked up at call time: ops are declared after
    the kernel modules load)."""
    def step(igates, hidden, w):
        gates = aten.add.Tensor(w.hidden_gates(hidden[0]), igates)
        return (getattr(aten, activation).default(gates),)
    return step


def _lstm_step(igates, hidden, w):
    hx, cx = hidden
    gates = aten.add.Tensor(w.hidden_gates(hx), igates)
    n = gates._shape[1] // 4
    sig = aten.sigmoid.default(gates)  # i, f and o gates; the g slice is replaced by tanh
    ingate, forgetgate, _, outgate = aten.split.Tensor(sig, n, 1)
    cellgate = aten.tanh.default(aten.narrow.default(gates, 1, 2 * n, n))
    cy = aten.add.Tensor(aten.mul.Tensor(forgetgate, cx), aten.mul.Tensor(ingate, cellgate))
    hy = aten.mul.Tensor(outgate, aten.tanh.default(cy))
    if w.w_hr_t is not None:
        hy = aten.matmul.default(hy, w.w_hr_t)
    return hy, cy


def _gru_step(igates, hidden, w):
    hx = hidden[0]
    hgates = w.hidden_gates(hx)
    n = hgates._shape[1] // 3
    reset_input = aten.sigmoid.default(aten.add.Tensor(aten.narrow.default(hgates, 1, 0, 2 * n),
                                                       aten.narrow.default(igates, 1, 0, 2 * n)))
    reset_gate, input_gate = aten.split.Tensor(reset_input, n, 1)
    new_gate = aten.tanh.default(aten.add.Tensor(
        aten.narrow.default(igates, 1, 2 * n, n),
        aten.mul.Tensor(aten.narrow.default(hgates, 1, 2 * n, n), reset_gate)))
    return (aten.add.Tensor(aten.mul.Tensor(aten.sub.Tensor(hx, new_gate), input_gate),
                            new_gate),)


_STEPS = {
    "lstm": _lstm_step,
    "gru": _gru_step,
    "rnn_tanh": _simple_step("tanh"),
    "rnn_relu": _simple_step("relu"),
}


# -- layers over a padded sequence -------------------------------------------------------------

def _full_pass(step, gates, hidden, w, reverse):
    """Run ``step`` over the (T, B, G) projected inputs; outputs stacked in time order."""
    steps = aten.unbind.int(gates, 0)
    if reverse:
        steps = steps[::-1]
    outputs = []
    for igates in steps:
        hidden = step(igates, hidden, w)
        outputs.append(hidden[0])
    if not outputs:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    if reverse:
        outputs.reverse()
    return aten.stack.default(outputs, 0), hidden


def _full_layer(step, x, hiddens, weights):
    """One layer, one or two directions; returns (output, final hiddens)."""
    outputs, finals = [], []
    for direction, (hidden, w) in enumerate(zip(hiddens, weights)):
        out, final = _full_pass(step, w.input_gates(x), hidden, w, reverse=direction == 1)
        outputs.append(out)
        finals.append(final)
    if len(outputs) == 1:
        return outputs[0], finals
    return aten.cat.default(outputs, len(outputs[0]._shape) - 1), finals


# -- layers over a packed sequence -------------------------------------------------------------

def _narrow_hidden(hidden, start, length):
    return tuple(aten.narrow.default(t, 0, start, length) for t in hidden)


def _cat_hiddens(hiddens):
    return tuple(aten.cat.default(list(parts), 0) for parts in zip(*hiddens))


def _packed_forward(step, gates, batch_sizes, hidden, w):
    """Sequences end at different steps: as the batch shrinks, the finished rows'
    hidden states are set aside (they are the final states of those sequences)."""
    outputs, finished, offset, last = [], [], 0, batch_sizes[0]
    for batch in batch_sizes:
        if batch < last:
            finished.append(_narrow_hidden(hidden, batch, last - batch))
            hidden = _narrow_hidden(hidden, 0, batch)
        hidden = step(aten.narrow.default(gates, 0, offset, batch), hidden, w)
        outputs.append(hidden[0])
        offset, last = offset + batch, batch
    finished.append(hidden)
    return aten.cat.default(outputs, 0), _cat_hiddens(finished[::-1])


def _packed_reverse(step, gates, batch_sizes, hidden0, w):
    """From the last step back: rows join (with their initial state) as the batch grows."""
    outputs, offset, last = [], gates._shape[0], batch_sizes[-1]
    hidden = _narrow_hidden(hidden0, 0, last)
    for batch in reversed(batch_sizes):
        if batch > last:
            hidden = _cat_hiddens([hidden, _narrow_hidden(hidden0, last, batch - last)])
        offset -= batch
        hidden = step(aten.narrow.default(gates, 0, offset, batch), hidden, w)
        outputs.append(hidden[0])
        last = batch
    return aten.cat.default(outputs[::-1], 0), hidden


def _packed_layer(batch_sizes):
    def layer(step, data, hiddens, weights):
        outputs, finals = [], []
        for direction, (hidden, w) in enumerate(zip(hiddens, weights)):
            run = _packed_reverse if direction == 1 else _packed_forward
            out, final = run(step, w.input_gates(data), batch_sizes, hidden, w)
            outputs.append(out)
            finals.append(final)
        if len(outputs) == 1:
            return outputs[0], finals
        return aten.cat.default(outputs, -1), finals
    return layer


# -- the layer stack ---------------------------------------------------------------------------

def _gather_weights(params, has_biases, has_projections=False):
    per_layer = (4 if has_biases else 2) + (1 if has_projections else 0)
    if len(params) % per_layer != 0:
        raise RuntimeError("got an incorrect number of RNN parameters")
    groups = [params[i:i + per_layer] for i in range(0, len(params), per_layer)]
    if has_biases:
        return [_Weights(*g) for g in groups]
    return [_Weights(g[0], g[1], None, None, *g[2:]) for g in groups]


def _check_devices(input, params, hiddens):
    for name, tensors in (("hidden", hiddens), ("parameter", params)):
        for t in tensors:
            if t.device != input.device:
                raise RuntimeError(f"Input and {name} tensors are not at the same device, "
                                   f"found input tensor at {input.device} and {name} tensor "
                                   f"at {t.device}")


def _stack_layers(mode, layer, x, hx, params, has_biases, num_layers, dropout, train,
                  bidirectional, has_projections=False):
    """Feed ``x`` through ``num_layers`` layers; ``hx`` holds the initial state tensors
    ((L*D, B, H) each).  Returns the last layer's output and the stacked final states."""
    directions = 2 if bidirectional else 1
    weights = _gather_weights(params, has_biases, has_projections)
    per_direction = list(zip(*(aten.unbind.int(t, 0) for t in hx)))
    if len(per_direction) != num_layers * directions:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if len(weights) != num_layers * directions:
        raise RuntimeError("Expected more weights in stacked_rnn")
    finals = []
    for index in range(num_layers):
        chosen = slice(index * directions, (index + 1) * directions)
        x, layer_finals = layer(_STEPS[mode], x, per_direction[chosen], weights[chosen])
        finals.extend(layer_finals)
        if dropout != 0 and train and index < num_layers - 1:
            x = aten.dropout.default(x, dropout, True)
    return (x,) + tuple(aten.stack.default(list(states), 0) for states in zip(*finals))


def _check_lstm_hidden(hx, num_layers, bidirectional):
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    expected = num_layers * (2 if bidirectional else 1)
    for i, name in enumerate(("h_0", "c_0")):
        if hx[i].dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx[{i}] ({name}) should be 3-D but got "
                               f"{hx[i].dim()}-D tensor")
    for i, name in enumerate(("h_0", "c_0")):
        if hx[i]._shape[0] != expected:
            raise RuntimeError(f"Expected {name} size(0) to be {expected} (num_layers * "
                               f"num_directions), but got {hx[i]._shape[0]}")
    return hx[0]._shape[2] != hx[1]._shape[2]


def _padded(mode):
    def run(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
            batch_first):
        hx = list(hx) if mode == "lstm" else [hx]
        projections = _check_lstm_hidden(hx, num_layers, bidirectional) if mode == "lstm" \
            else False
        _check_devices(input, params, hx)
        x = aten.transpose.int(input, 0, 1) if batch_first else input
        output, *states = _stack_layers(mode, _full_layer, x, hx, params, has_biases,
                                        num_layers, dropout, train, bidirectional, projections)
        if batch_first:  # PyTorch transposes its own result in place for these, not for LSTM
            output = (aten.transpose.int(output, 0, 1) if mode == "lstm"
                      else aten.transpose_.default(output, 0, 1))
        return (output, *states)
    return run


def _packed(mode):
    def run(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
            bidirectional):
        hx = list(hx) if mode == "lstm" else [hx]
        projections = _check_lstm_hidden(hx, num_layers, bidirectional) if mode == "lstm" \
            else False
        layer = _packed_layer([int(b) for b in batch_sizes.tolist()])
        return _stack_layers(mode, layer, data, hx, params, has_biases, num_layers, dropout,
                             train, bidirectional, projections)
    return run


for _mode in _STEPS:
    kernel(f"{_mode}_input")(_padded(_mode))
    kernel(f"{_mode}_data")(_packed(_mode))


# -- single-step cells (nn.RNNCell / LSTMCell / GRUCell) ---------------------------------------

def _check_cell_input(input, w_ih):
    if input._shape[1] != w_ih._shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input._shape[1]} expected "
                           f"{w_ih._shape[1]}")


def _check_cell_weights(w_ih, w_hh, gate_count):
    hidden_size = w_hh._shape[1]
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w._shape[0] != gate_count * hidden_size:
            raise RuntimeError(f"{name} first dim must be {gate_count} * hidden_size = "
                               f"{gate_count * hidden_size}, but got {w._shape[0]}")


def _check_cell_hidden(input, hidden, w_hh):
    for label, h in enumerate(hidden):
        if input._shape[0] != h._shape[0]:
            raise RuntimeError(f"Input batch size {input._shape[0]} doesn't match hidden{label} "
                               f"batch size {h._shape[0]}")
        if h._shape[1] != w_hh._shape[1]:
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {h._shape[1]}, "
                               f"expected {w_hh._shape[1]}")


def _cell(mode, gate_count):
    """The checks run in PyTorch's order for each cell."""
    def run(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        if mode == "lstm":
            if len(hx) != 2:
                raise RuntimeError("lstm_cell expects two hidden states")
            hidden = tuple(hx)
            _check_cell_input(input, w_ih)
            _check_cell_weights(w_ih, w_hh, gate_count)
            _check_cell_hidden(input, hidden, w_hh)
        elif mode == "gru":
            hidden = (hx,)
            _check_cell_input(input, w_ih)
            _check_cell_hidden(input, hidden, w_hh)
            _check_cell_weights(w_ih, w_hh, gate_count)
        else:
            hidden = (hx,)
            _check_cell_weights(w_ih, w_hh, gate_count)
            _check_cell_input(input, w_ih)
            _check_cell_hidden(input, hidden, w_hh)
        w = _Weights(w_ih, w_hh, b_ih, b_hh)
        result = _STEPS[mode](w.input_gates(input), hidden, w)
        return result if mode == "lstm" else result[0]
    return run


for _mode, _gates in (("lstm", 4), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)):
    kernel(f"{_mode}_cell")(_cell(_mode, _gates))
