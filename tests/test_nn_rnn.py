"""Recurrent layers against real PyTorch: RNN (tanh/relu), LSTM (with and without
projections), GRU and the three cells in several configurations (layers,
directions, batch_first, unbatched input, given or default initial states,
dropout between layers): repr, state_dict, outputs and gradients
(tests/nn_differential.check_module); default initialization bit-identical
under the same seed; PyTorch's argument and input errors; packed sequences
(pad_sequence, pack_padded_sequence, pad_packed_sequence) and layers on them."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt

from .differential import differential
from .nn_differential import check_module, same_inputs


def _nn(build):
    return lambda lib: build(lib.nn)


def _states(*shapes, seed=1):
    """Inputs: a sequence, then the initial state(s) (one tuple for LSTM)."""
    def make(lib):
        rng = np.random.default_rng(seed)
        arrays = [lib.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]
        if len(arrays) == 3:
            return arrays[0], (arrays[1], arrays[2])
        return tuple(arrays)
    return make


SEQ = (5, 3, 4)            # (T, B, input_size)
SEQ_BF = (3, 5, 4)         # batch_first
LAYER_CASES = [
    ("rnn_tanh", lambda nn: nn.RNN(4, 6), same_inputs(SEQ)),
    ("rnn_relu_2layers", lambda nn: nn.RNN(4, 6, 2, "relu"), same_inputs(SEQ)),
    ("rnn_bidir_bf_h0", lambda nn: nn.RNN(4, 6, bidirectional=True, batch_first=True),
     _states(SEQ_BF, (2, 3, 6))),
    ("rnn_no_bias", lambda nn: nn.RNN(4, 6, bias=False, nonlinearity="relu"), same_inputs(SEQ)),
    ("rnn_unbatched", lambda nn: nn.RNN(4, 6, num_layers=2), _states((5, 4), (2, 6))),
    ("lstm", lambda nn: nn.LSTM(4, 6), same_inputs(SEQ)),
    ("lstm_2layers_bidir", lambda nn: nn.LSTM(4, 6, num_layers=2, bidirectional=True),
     same_inputs(SEQ)),
    ("lstm_bf_h0c0", lambda nn: nn.LSTM(4, 6, batch_first=True),
     _states(SEQ_BF, (1, 3, 6), (1, 3, 6))),
    ("lstm_proj", lambda nn: nn.LSTM(4, 6, num_layers=2, proj_size=3), same_inputs(SEQ)),
    ("lstm_proj_bidir_h0", lambda nn: nn.LSTM(4, 6, proj_size=2, bidirectional=True),
     _states(SEQ, (2, 3, 2), (2, 3, 6))),
    ("lstm_unbatched_h0", lambda nn: nn.LSTM(4, 6, bias=False), _states((5, 4), (1, 6), (1, 6))),
    ("lstm_unbatched_bf", lambda nn: nn.LSTM(4, 6, batch_first=True, bidirectional=True),
     same_inputs((5, 4))),
    ("gru", lambda nn: nn.GRU(4, 6), same_inputs(SEQ)),
    ("gru_3layers_bf", lambda nn: nn.GRU(4, 5, 3, batch_first=True), same_inputs(SEQ_BF)),
    ("gru_bidir_h0", lambda nn: nn.GRU(4, 6, bidirectional=True), _states(SEQ, (2, 3, 6))),
    ("gru_unbatched", lambda nn: nn.GRU(4, 6, bias=False), _states((5, 4), (1, 6))),
    ("rnncell", lambda nn: nn.RNNCell(4, 6), _states((3, 4), (3, 6))),
    ("rnncell_relu_default_h", lambda nn: nn.RNNCell(4, 6, nonlinearity="relu"),
     same_inputs((3, 4))),
    ("rnncell_unbatched_nobias", lambda nn: nn.RNNCell(4, 6, bias=False), _states((4,), (6,))),
    ("lstmcell", lambda nn: nn.LSTMCell(4, 6), _states((3, 4), (3, 6), (3, 6))),
    ("lstmcell_default_h", lambda nn: nn.LSTMCell(4, 6, bias=False), same_inputs((3, 4))),
    ("lstmcell_unbatched", lambda nn: nn.LSTMCell(4, 6), _states((4,), (6,), (6,))),
    ("grucell", lambda nn: nn.GRUCell(4, 6), _states((3, 4), (3, 6))),
    ("grucell_unbatched_default_h", lambda nn: nn.GRUCell(4, 6), same_inputs((4,))),
]


@pytest.mark.parametrize("build,inputs", [c[1:] for c in LAYER_CASES],
                         ids=[c[0] for c in LAYER_CASES])
def test_layer_matches_pytorch(build, inputs):
    check_module(_nn(build), inputs)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_eval_mode_and_float64(kind):
    check_module(_nn(lambda nn: getattr(nn, kind)(4, 6, 2, dropout=0.5).double()),
                 lambda lib: (lib.from_numpy(np.random.default_rng(0).standard_normal(SEQ)),),
                 train=False)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_dropout_between_layers_same_seed(kind):
    """Dropout draws from the default generator as PyTorch's does: same seed, same masks."""
    def build(lib):
        module = getattr(lib.nn, kind)(4, 6, num_layers=3, dropout=0.4)
        lib.manual_seed(7)  # the forward's dropout draws start here in both libraries
        return module
    check_module(build, same_inputs(SEQ))


@pytest.mark.parametrize("build", [
    lambda nn: nn.RNN(3, 5, 2, bidirectional=True),
    lambda nn: nn.LSTM(3, 5, 2, proj_size=2, bias=False),
    lambda nn: nn.GRU(3, 5, batch_first=True),
    lambda nn: nn.RNNCell(3, 5, nonlinearity="relu"),
    lambda nn: nn.LSTMCell(3, 5),
    lambda nn: nn.GRUCell(3, 5, bias=False),
], ids=["rnn", "lstm_proj", "gru", "rnncell", "lstmcell", "grucell"])
def test_init_bit_identical(build):
    torch.manual_seed(3)
    gt.manual_seed(3)
    theirs, ours = build(torch.nn), build(gt.nn)
    t_state, o_state = theirs.state_dict(), ours.state_dict()
    assert list(o_state) == list(t_state)
    for key in t_state:
        np.testing.assert_array_equal(o_state[key].numpy(), t_state[key].numpy(), err_msg=key)


def test_flat_weights_and_module_api():
    torch.manual_seed(0)
    gt.manual_seed(0)
    theirs, ours = torch.nn.LSTM(3, 4, 2, bidirectional=True), gt.nn.LSTM(3, 4, 2,
                                                                          bidirectional=True)
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [tuple(w.shape) for w in ours._flat_weights] == \
        [tuple(w.shape) for w in theirs._flat_weights]
    assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
    ours.flatten_parameters()
    new = gt.nn.Parameter(gt.zeros(16, 3))
    ours.weight_ih_l0 = new
    assert ours._flat_weights[0] is new
    ours.double()
    assert ours._flat_weights[1].dtype is gt.float64


def test_step_results_match_functional_ops():
    """torch.lstm / gru / rnn_tanh and the cells called directly, as aten ops."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 2, 3)).astype(np.float32)
    h = rng.standard_normal((2, 2, 5)).astype(np.float32)
    w = [rng.standard_normal(s).astype(np.float32) for s in [(15, 3), (15, 5), (15,), (15,)]]
    w2 = [rng.standard_normal(s).astype(np.float32) for s in [(15, 3), (15, 5)]]

    def scenario(lib):
        t = lib.from_numpy
        out = lib.gru(t(x), t(h), [t(a) for a in w] + [t(a) for a in w2 + w[2:]], True, 1, 0.0,
                      False, True, False)
        cell = lib.gru_cell(t(x[0]), t(h[0]), *[t(a) for a in w])
        return out, cell
    differential(scenario)


# -- argument and input errors ---------------------------------------------------------------

ERROR_CASES = [
    lambda nn: nn.RNN(4, 6, nonlinearity="gelu"),
    lambda nn: nn.RNN(4, 6, proj_size=2),
    lambda nn: nn.GRU(4, 6, proj_size=2),
    lambda nn: nn.LSTM(4, 6, proj_size=6),
    lambda nn: nn.LSTM(4, 6, proj_size=-1),
    lambda nn: nn.LSTM(4, 6, dropout=1.5),
    lambda nn: nn.LSTM(4, 6, dropout=True),
    lambda nn: nn.LSTM(4, 6, bias=1),
    lambda nn: nn.LSTM(4, 6, batch_first=None),
    lambda nn: nn.LSTM(4.0, 6),
    lambda nn: nn.LSTM(0, 6),
    lambda nn: nn.LSTM(4, 6.0),
    lambda nn: nn.LSTM(4, 0),
    lambda nn: nn.LSTM(4, 6, num_layers=0),
    lambda nn: nn.LSTM(4, 6, dropout=0.3),     # a warning, with one layer
]


@pytest.mark.parametrize("build", ERROR_CASES)
def test_constructor_errors(build):
    differential(lambda lib: repr(build(lib.nn)), may_raise=True)


def _forward(kind, x_shape, state_shapes=(), **kwargs):
    def scenario(lib):
        lib.manual_seed(0)
        module = getattr(lib.nn, kind)(4, 6, **kwargs)
        x = lib.zeros(*x_shape)
        states = [lib.zeros(*s) for s in state_shapes]
        if kind in ("LSTM", "LSTMCell") and states:
            return module(x, tuple(states))
        return module(x, *states)
    return scenario


FORWARD_ERRORS = [
    ("RNN", (5, 3, 5)),                              # input_size
    ("GRU", (5, 3, 4, 1)),                           # 4-D input
    ("LSTM", (5,)),
    ("RNN", (5, 3, 4), [(1, 2, 6)]),                 # hidden batch
    ("GRU", (5, 3, 4), [(2, 3, 6)]),                 # hidden layers
    ("RNN", (5, 3, 4), [(3, 6)]),                    # 2-D hidden with 3-D input
    ("GRU", (5, 4), [(1, 1, 6)]),                    # 3-D hidden with 2-D input
    ("LSTM", (5, 3, 4), [(1, 3, 6), (1, 3, 5)]),     # cell size
    ("LSTM", (5, 3, 4), [(1, 3, 5), (1, 3, 6)]),
    ("LSTM", (5, 3, 4), [(3, 6), (1, 3, 6)]),
    ("LSTM", (5, 4), [(1, 1, 6), (1, 1, 6)]),
    ("LSTM", (0, 3, 4)),                             # empty sequence
    ("RNNCell", (3, 5)),
    ("RNNCell", (2, 3, 4)),
    ("RNNCell", (3, 4), [(2, 6)]),
    ("GRUCell", (3, 4), [(3, 5)]),
    ("GRUCell", (3, 4), [(1, 2, 3)]),
    ("LSTMCell", (3, 4), [(3, 6), (2, 6)]),
    ("LSTMCell", (3, 4), [(3, 6), (1, 3, 6)]),
]


@pytest.mark.parametrize("case", FORWARD_ERRORS, ids=[str(c) for c in FORWARD_ERRORS])
def test_forward_errors(case):
    differential(_forward(*case), may_raise=True)


def test_dtype_mismatch_error():
    differential(lambda lib: lib.nn.GRU(4, 6)(lib.zeros(2, 3, 4, dtype=lib.float64)),
                 may_raise=True)


def test_cell_op_errors():
    def scenario(lib):
        return lib.lstm_cell(lib.zeros(2, 3), [lib.zeros(2, 4)], lib.zeros(16, 3),
                             lib.zeros(16, 4))
    differential(scenario, may_raise=True)
    differential(lambda lib: lib.rnn_tanh_cell(lib.zeros(2, 3), lib.zeros(2, 4),
                                               lib.zeros(5, 3), lib.zeros(5, 4)), may_raise=True)


# -- padded and packed sequences --------------------------------------------------------------

def _sequences(lib, lengths, features=3, seed=0):
    rng = np.random.default_rng(seed)
    return [lib.from_numpy(rng.standard_normal((n, features)).astype(np.float32))
            for n in lengths]


@settings(max_examples=15, deadline=None)
@given(lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4), batch_first=st.booleans(),
       side=st.sampled_from(["left", "right"]), value=st.sampled_from([0.0, -1.5]))
def test_pad_sequence(lengths, batch_first, side, value):
    def scenario(lib):
        seqs = [s.requires_grad_() for s in _sequences(lib, lengths)]
        out = lib.nn.utils.rnn.pad_sequence(seqs, batch_first, value, side)
        out.sum().backward()
        return out, [s.grad for s in seqs]
    differential(scenario)


def test_pad_sequence_errors():
    differential(lambda lib: lib.nn.utils.rnn.pad_sequence([]), may_raise=True)
    differential(lambda lib: lib.nn.utils.rnn.pad_sequence(5), may_raise=True)
    differential(lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2)], padding_side="mid"),
                 may_raise=True)


@settings(max_examples=15, deadline=None)
@given(lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4), batch_first=st.booleans(),
       total=st.sampled_from([None, 7]))
def test_pack_and_unpack_round_trip(lengths, batch_first, total):
    def scenario(lib):
        rnn = lib.nn.utils.rnn
        seqs = [s.requires_grad_() for s in _sequences(lib, lengths)]
        padded = rnn.pad_sequence(seqs, batch_first)
        packed = rnn.pack_padded_sequence(padded, lib.tensor(lengths), batch_first,
                                          enforce_sorted=False)
        unpacked, out_lengths = rnn.pad_packed_sequence(packed, batch_first, 0.5, total)
        (unpacked * 2).sum().backward()
        return (tuple(packed), unpacked, out_lengths, [s.grad for s in seqs],
                rnn.unpack_sequence(rnn.pack_sequence(seqs, enforce_sorted=False)))
    differential(scenario)


def test_pack_errors():
    rnn_utils = lambda lib: lib.nn.utils.rnn  # noqa: E731
    differential(lambda lib: rnn_utils(lib).pack_padded_sequence(lib.zeros(3, 2, 1), [1, 3]),
                 may_raise=True)
    differential(lambda lib: rnn_utils(lib).pack_padded_sequence(lib.zeros(3, 2, 1), [3, 0]),
                 may_raise=True)
    differential(lambda lib: rnn_utils(lib).pack_padded_sequence(lib.zeros(3, 2, 1), [3, 2, 1]),
                 may_raise=True)
    differential(lambda lib: rnn_utils(lib).pad_packed_sequence(
        rnn_utils(lib).pack_sequence([lib.zeros(3, 1)]), total_length=2), may_raise=True)


@pytest.mark.parametrize("kind,kwargs", [
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2}),
    ("GRU", {"bidirectional": True}),
    ("RNN", {"num_layers": 2, "nonlinearity": "relu"}),
])
@pytest.mark.parametrize("with_state", [False, True])
def test_layers_on_packed_sequences(kind, kwargs, with_state):
    lengths = [2, 5, 3]

    def scenario(lib):
        lib.manual_seed(0)
        module = getattr(lib.nn, kind)(3, 4, **kwargs)
        seqs = [s.requires_grad_() for s in _sequences(lib, lengths)]
        packed = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        args = (packed,)
        if with_state:
            layers = module.num_layers * (2 if module.bidirectional else 1)
            rng = np.random.default_rng(2)
            h = lib.from_numpy(rng.standard_normal(
                (layers, 3, module.proj_size or 4)).astype(np.float32))
            c = lib.from_numpy(rng.standard_normal((layers, 3, 4)).astype(np.float32))
            args = (packed, (h, c) if kind == "LSTM" else h)
        out, hidden = module(*args)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
        hn = hidden[0] if kind == "LSTM" else hidden
        (padded.sum() + hn.sum()).backward()
        return padded, hidden, [s.grad for s in seqs], module.weight_hh_l0.grad
    differential(scenario)
