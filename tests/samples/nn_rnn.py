"""Samples for the recurrent-layer ops (kernels/rnn.py) and the padded/packed sequence
ops (kernels/packed_sequence.py).

LSTM samples are float64: PyTorch runs float32 LSTMs through oneDNN
(mkldnn_rnn_layer, a node of its own), float64 through the decomposition these
kernels follow, so outputs and grad_fn names are comparable there."""
from ..opinfo import sample

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _params(make, mode, input_size, hidden, layers=1, directions=1, bias=True, proj=0,
            dtype="float32"):
    """Flat weights in PyTorch's order: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    gate = GATES[mode] * hidden
    out_size = proj or hidden
    params = []
    for layer in range(layers):
        layer_input = input_size if layer == 0 else out_size * directions
        for _ in range(directions):
            shapes = [(gate, layer_input), (gate, out_size)]
            if bias:
                shapes += [(gate,), (gate,)]
            if proj:
                shapes.append((proj, hidden))
            params += [make(*s, dtype=dtype, low=-0.5, high=0.5) for s in shapes]
    return params


def _batch_sizes(lib, values):
    return lib.tensor(values, dtype=lib.int64)   # always a CPU tensor, as in PyTorch


# -- whole sequences ---------------------------------------------------------------------------

def _rnn_input_sample(mode, dtype="float32", **config):
    layers, directions = config.get("layers", 1), config.get("directions", 1)
    batch_first, bias = config.get("batch_first", False), config.get("bias", True)
    dropout, proj = config.get("dropout", 0.0), config.get("proj", 0)
    hidden = 3 if layers * directions == 1 else 2   # small: gradcheck perturbs every weight

    def fn(make, lib):
        x = make(2, 3, 2, dtype=dtype) if batch_first else make(3, 2, 2, dtype=dtype)
        h = make(layers * directions, 2, proj or hidden, dtype=dtype, low=-1, high=1)
        hx = [h, make(layers * directions, 2, hidden, dtype=dtype, low=-1, high=1)] \
            if mode == "lstm" else h
        params = _params(make, mode, 2, hidden, layers, directions, bias, proj, dtype)
        return (x, hx, params, bias, layers, dropout, dropout > 0, directions == 2,
                batch_first), {}
    fn.__name__ = f"{mode}_" + "_".join(f"{k}_{v}" for k, v in config.items()) if config \
        else f"{mode}_basic"
    return fn


for _mode in GATES:
    _dtype = "float64" if _mode == "lstm" else "float32"
    _overload = f"aten::{_mode}.input"
    for _config in ({}, {"directions": 2}, {"batch_first": True, "bias": False},
                    {"layers": 2, "batch_first": True}):
        sample(_overload, atol=1e-5, rtol=1e-5)(_rnn_input_sample(_mode, _dtype, **_config))
    sample(_overload, random=True)(_rnn_input_sample(_mode, _dtype, layers=2, dropout=0.5))
# stacked bidirectional layers (the second layer reads both directions), once per cell kind
# in tests/test_nn_rnn.py; here on the cheapest cell (gradcheck perturbs every weight)
sample("aten::rnn_tanh.input", atol=1e-5, rtol=1e-5)(
    _rnn_input_sample("rnn_tanh", layers=2, directions=2, batch_first=True))

sample("aten::lstm.input", atol=1e-5, rtol=1e-5)(
    _rnn_input_sample("lstm", "float64", layers=2, proj=1))
sample("aten::lstm.input", atol=1e-5, rtol=1e-5)(
    _rnn_input_sample("lstm", "float64", directions=2, proj=1, bias=False))


# -- packed sequences --------------------------------------------------------------------------

def _rnn_data_sample(mode, dtype="float32", directions=1, layers=1, proj=0):
    hidden = 3 if layers * directions == 1 else 2

    def fn(make, lib):
        batch_sizes = [3, 2, 1]
        data = make(sum(batch_sizes), 2, dtype=dtype)
        h = make(layers * directions, 3, proj or hidden, dtype=dtype, low=-1, high=1)
        hx = [h, make(layers * directions, 3, hidden, dtype=dtype, low=-1, high=1)] \
            if mode == "lstm" else h
        params = _params(make, mode, 2, hidden, layers, directions, True, proj, dtype)
        return (data, _batch_sizes(lib, batch_sizes), hx, params, True, layers, 0.0, True,
                directions == 2), {}
    fn.__name__ = f"{mode}_packed_d{directions}_l{layers}_p{proj}"
    return fn


for _mode in GATES:
    _dtype = "float64" if _mode == "lstm" else "float32"
    sample(f"aten::{_mode}.data", atol=1e-5, rtol=1e-5)(_rnn_data_sample(_mode, _dtype))
    sample(f"aten::{_mode}.data", atol=1e-5, rtol=1e-5)(
        _rnn_data_sample(_mode, _dtype, directions=2))
sample("aten::rnn_relu.data", atol=1e-5, rtol=1e-5)(
    _rnn_data_sample("rnn_relu", directions=2, layers=2))
sample("aten::lstm.data", atol=1e-5, rtol=1e-5)(
    _rnn_data_sample("lstm", "float64", layers=2, proj=1))


# -- single steps ------------------------------------------------------------------------------

def _cell_sample(mode, bias=True):
    def fn(make, lib):
        gate = GATES[mode] * 3
        x, h = make(2, 3), make(2, 3, low=-1, high=1)
        hx = [h, make(2, 3, low=-1, high=1)] if mode == "lstm" else h
        biases = (make(gate), make(gate)) if bias else ()
        return (x, hx, make(gate, 3, low=-0.5, high=0.5), make(gate, 3, low=-0.5, high=0.5),
                *biases), {}
    fn.__name__ = f"{mode}_cell_{'bias' if bias else 'no_bias'}"
    return fn


for _mode in GATES:
    for _bias in (True, False):
        sample(f"aten::{_mode}_cell", atol=1e-5, rtol=1e-5)(_cell_sample(_mode, _bias))


# -- pad / pack --------------------------------------------------------------------------------

@sample("aten::pad_sequence")
def pad_sequence_time_major(make, lib):
    return ([make(3, 2), make(1, 2), make(4, 2)],), {}


@sample("aten::pad_sequence")
def pad_sequence_batch_first_left(make, lib):
    return ([make(2), make(5), make(3)], True, -1.0, "left"), {}


@sample("aten::_pack_padded_sequence")
def pack_padded_sequence_time_major(make, lib):
    return (make(4, 3, 2), lib.tensor([4, 2, 2]), False), {}


@sample("aten::_pack_padded_sequence")
def pack_padded_sequence_batch_first(make, lib):
    return (make(3, 5), lib.tensor([5, 3, 1]), True), {}


@sample("aten::_pack_padded_sequence_backward")
def pack_padded_sequence_backward_time_major(make, lib):
    return (make(8, 2), [4, 3, 2], _batch_sizes(lib, [3, 3, 1, 1]), False), {}


@sample("aten::_pack_padded_sequence_backward")
def pack_padded_sequence_backward_batch_first(make, lib):
    return (make(6), [3, 4], _batch_sizes(lib, [3, 2, 1]), True), {}


@sample("aten::_pad_packed_sequence")
def pad_packed_sequence_time_major(make, lib):
    return (make(6, 2), _batch_sizes(lib, [3, 2, 1]), False, 0.0, 3), {}


@sample("aten::_pad_packed_sequence")
def pad_packed_sequence_batch_first_total_length(make, lib):
    return (make(5), _batch_sizes(lib, [2, 2, 1]), True, -2.5, 5), {}
