"""Samples for issue 16's remaining torch.nn ops: grid sampling and affine grids
(kernels/grid_sample.py), channel shuffle (channel_shuffle.py), time-batch-channel
convolution (conv_tbc.py), randomized leaky ReLU (rrelu.py), CTC loss
(ctc_loss.py), margin losses (margin_loss.py) and pdist (pdist.py)."""
from ..opinfo import sample


def _long(make, lib, values):
    t = lib.tensor(values, dtype=lib.int64)
    return t if make.device == "cpu" else t.to(make.device)


def _lengths(lib, values):
    """Lengths as a CPU tensor on every device: ATen reads them on the host."""
    return lib.tensor(values, dtype=lib.int64)


def _grid(make, *shape, dtype="float32"):
    """Locations a little beyond [-1, 1], so every padding mode matters."""
    return make(*shape, dtype=dtype, low=-1.2, high=1.2)


def _generator(lib, seed):
    return lib.Generator().manual_seed(seed)


# -- grid sampling ---------------------------------------------------------------------------

@sample("aten::grid_sampler", atol=1e-4, rtol=1e-4)
def grid_sampler_bilinear_zeros(make, lib):
    return (make(2, 3, 4, 5), _grid(make, 2, 3, 2, 2), 0, 0, False), {}


@sample("aten::grid_sampler", atol=1e-4, rtol=1e-4)
def grid_sampler_3d_nearest_border(make, lib):
    return (make(1, 2, 3, 4, 2), _grid(make, 1, 2, 2, 3, 3), 1, 1, True), {}


@sample("aten::grid_sampler_2d", atol=1e-4, rtol=1e-4)
def grid_sampler_2d_bicubic_reflection(make, lib):
    return (make(1, 2, 4, 4), _grid(make, 1, 3, 2, 2), 2, 2, False), {}


@sample("aten::grid_sampler_2d", atol=1e-4, rtol=1e-4)
def grid_sampler_2d_bilinear_reflection_aligned(make, lib):
    return (make(2, 1, 3, 5, dtype="float64"), _grid(make, 2, 2, 4, 2, dtype="float64"), 0, 2,
            True), {}


@sample("aten::grid_sampler_2d_backward", atol=1e-4, rtol=1e-4)
def grid_sampler_2d_backward_both(make, lib):
    return (make(1, 2, 3, 2), make(1, 2, 4, 5), _grid(make, 1, 3, 2, 2), 0, 1, False,
            [True, True]), {}


@sample("aten::grid_sampler_2d_backward", atol=1e-4, rtol=1e-4)
def grid_sampler_2d_backward_bicubic(make, lib):
    return (make(1, 1, 2, 2, dtype="float64"), make(1, 1, 3, 3, dtype="float64"),
            _grid(make, 1, 2, 2, 2, dtype="float64"), 2, 0, True, [True, True]), {}


@sample("aten::grid_sampler_3d", atol=1e-4, rtol=1e-4)
def grid_sampler_3d_bilinear_zeros(make, lib):
    return (make(2, 2, 3, 2, 4), _grid(make, 2, 2, 1, 3, 3), 0, 0, False), {}


@sample("aten::grid_sampler_3d_backward", atol=1e-4, rtol=1e-4)
def grid_sampler_3d_backward_grid_only(make, lib):
    return (make(1, 2, 2, 1, 3), make(1, 2, 3, 2, 4), _grid(make, 1, 2, 1, 3, 3), 0, 2, False,
            [False, True]), {}


@sample("aten::grid_sampler_3d_backward", atol=1e-4, rtol=1e-4)
def grid_sampler_3d_backward_both(make, lib):
    return (make(1, 1, 2, 2, 1, dtype="float64"), make(1, 1, 2, 3, 2, dtype="float64"),
            _grid(make, 1, 2, 2, 1, 3, dtype="float64"), 1, 1, True, [True, True]), {}


@sample("aten::_grid_sampler_2d_cpu_fallback", atol=1e-4, rtol=1e-4)
def grid_sampler_cpu_fallback(make, lib):
    return (make(1, 2, 4, 5), _grid(make, 1, 3, 2, 2), 0, 1, False), {}


@sample("aten::_grid_sampler_2d_cpu_fallback_backward", atol=1e-4, rtol=1e-4)
def grid_sampler_cpu_fallback_backward(make, lib):
    return (make(1, 2, 3, 2), make(1, 2, 4, 5), _grid(make, 1, 3, 2, 2), 0, 0, True), {}


@sample("aten::affine_grid_generator")
def affine_grid_generator_2d(make, lib):
    return (make(2, 2, 3), [2, 3, 4, 5], False), {}


@sample("aten::affine_grid_generator")
def affine_grid_generator_3d_aligned(make, lib):
    return (make(1, 3, 4, dtype="float64"), [1, 1, 2, 3, 4], True), {}


@sample("aten::affine_grid_generator_backward")
def affine_grid_generator_backward_2d(make, lib):
    return (make(2, 4, 5, 2), [2, 3, 4, 5], False), {}


# -- channel shuffle, conv_tbc ---------------------------------------------------------------

@sample("aten::channel_shuffle")
def channel_shuffle_4d(make, lib):
    return (make(2, 6, 3, 2), 3), {}


@sample("aten::channel_shuffle")
def channel_shuffle_channels_last(make, lib):
    return (make(2, 4, 3, 2).contiguous(memory_format=lib.channels_last), 2), {}


@sample("aten::native_channel_shuffle")
def native_channel_shuffle_3d(make, lib):
    return (make(2, 6, 5), 2), {}


@sample("aten::conv_tbc", atol=1e-4, rtol=1e-4)
def conv_tbc_padded(make, lib):
    return (make(5, 2, 3), make(3, 3, 4), make(4), 1), {}


@sample("aten::conv_tbc", atol=1e-4, rtol=1e-4)
def conv_tbc_default_pad(make, lib):
    return (make(6, 1, 2, dtype="float64"), make(2, 2, 3, dtype="float64"),
            make(3, dtype="float64")), {}


@sample("aten::conv_tbc_backward", atol=1e-4, rtol=1e-4)
def conv_tbc_backward_padded(make, lib):
    return (make(7, 2, 4), make(5, 2, 3), make(3, 3, 4), make(4), 1), {}


# -- randomized leaky ReLU (a seeded generator: the draws equal torch's) -----------------------

@sample("aten::rrelu")
def rrelu_training(make, lib):
    return (make(4, 5),), {"training": True, "generator": _generator(lib, 3)}


@sample("aten::rrelu")
def rrelu_eval(make, lib):
    return (make(3, 4, dtype="float64"), 0.2, 0.4), {}


@sample("aten::rrelu_", inplace=True)
def rrelu_inplace_training(make, lib):
    return (make(3, 4), 0.1, 0.3, True), {"generator": _generator(lib, 5)}


@sample("aten::rrelu_with_noise")
def rrelu_with_noise_training(make, lib):
    return (make(3, 4), make(3, 4), 0.1, 0.3, True), {"generator": _generator(lib, 7)}


@sample("aten::rrelu_with_noise")
def rrelu_with_noise_eval(make, lib):
    return (make(2, 3, dtype="float64"), make(2, 3, dtype="float64")), {}


@sample("aten::rrelu_with_noise_", inplace=True)
def rrelu_with_noise_inplace(make, lib):
    return (make(3, 4), make(3, 4), 0.125, 0.25, True), {"generator": _generator(lib, 2)}


# (an out of the result's shape: torch's CPU kernel crashes resizing an empty one)
@sample("aten::rrelu_with_noise.out")
def rrelu_with_noise_out(make, lib):
    return (make(3, 4), make(3, 4), 0.1, 0.3, True), {"generator": _generator(lib, 4),
                                                      "out": make(3, 4)}


@sample("aten::rrelu_with_noise_functional")
def rrelu_with_noise_functional(make, lib):
    return (make(3, 4), make(3, 4), 0.1, 0.3, True), {"generator": _generator(lib, 1)}


@sample("aten::rrelu_with_noise_backward")
def rrelu_with_noise_backward_training(make, lib):
    return (make(3, 4), make(3, 4), make(3, 4, low=0.1, high=0.3), 0.1, 0.3, True, False), {}


@sample("aten::rrelu_with_noise_backward")
def rrelu_with_noise_backward_eval(make, lib):
    return (make(3, 4), make(3, 4), make(3, 4), 0.1, 0.3, False, False), {}


# -- ctc loss ---------------------------------------------------------------------------------

def _log_probs(make, steps, batch, classes, dtype="float32"):
    return make(steps, batch, classes, dtype=dtype).log_softmax(2)


def _renormalized(xs):
    """CTC's backward formula assumes normalized log-probabilities (it folds in
    log_softmax's derivative, as ATen's does): gradcheck perturbs the logits."""
    return (xs[0].log_softmax(-1),) + tuple(xs[1:])


@sample("aten::ctc_loss.IntList", atol=1e-4, rtol=1e-4, gradcheck_inputs=_renormalized)
def ctc_loss_intlist_mean(make, lib):
    return (_log_probs(make, 6, 2, 4), _long(make, lib, [[1, 2, 2], [3, 1, 0]]), [6, 5],
            [3, 2]), {}


@sample("aten::ctc_loss.IntList", atol=1e-4, rtol=1e-4, gradcheck_inputs=_renormalized)
def ctc_loss_intlist_concatenated_none(make, lib):
    return (_log_probs(make, 5, 3, 3, "float64"), _long(make, lib, [1, 2, 2, 1]), [5, 4, 5],
            [2, 0, 2], 0, 0, True), {}


@sample("aten::ctc_loss.Tensor", atol=1e-4, rtol=1e-4, gradcheck_inputs=_renormalized)
def ctc_loss_tensor_sum(make, lib):
    return (_log_probs(make, 6, 2, 4), _long(make, lib, [[1, 2, 2], [3, 1, 0]]),
            _lengths(lib, [6, 6]), _lengths(lib, [3, 2]), 0, 2), {}


# (every row of log_alpha written: all inputs and targets at their full lengths)
@sample("aten::_ctc_loss", atol=1e-4, rtol=1e-4, gradcheck_inputs=_renormalized)
def _ctc_loss_full_lengths(make, lib):
    return (_log_probs(make, 5, 2, 4), _long(make, lib, [[1, 2], [3, 3]]), [5, 5], [2, 2]), {}


@sample("aten::_ctc_loss.Tensor", atol=1e-4, rtol=1e-4, gradcheck_inputs=_renormalized)
def _ctc_loss_tensor_full_lengths(make, lib):
    return (_log_probs(make, 4, 2, 3, "float64"), _long(make, lib, [[1, 2], [2, 1]]),
            _lengths(lib, [4, 4]), _lengths(lib, [2, 2])), {}


def _ctc_backward_args(make, lib, lengths_as_tensors):
    lp = _log_probs(make, 5, 2, 4, "float64")
    targets = _long(make, lib, [[1, 2], [3, 3]])
    nll, alpha = lib.ops.aten._ctc_loss(lp, targets, [5, 5], [2, 2])
    lengths = ([5, 5], [2, 2]) if not lengths_as_tensors else \
        (_lengths(lib, [5, 5]), _lengths(lib, [2, 2]))
    return (make(2, dtype="float64"), lp, targets, *lengths, nll, alpha, 0), {}


@sample("aten::_ctc_loss_backward", atol=1e-4, rtol=1e-4)
def _ctc_loss_backward_intlist(make, lib):
    return _ctc_backward_args(make, lib, False)


@sample("aten::_ctc_loss_backward.Tensor", atol=1e-4, rtol=1e-4)
def _ctc_loss_backward_tensor(make, lib):
    return _ctc_backward_args(make, lib, True)


# -- margin losses ------------------------------------------------------------------------------

@sample("aten::multi_margin_loss")
def multi_margin_loss_mean(make, lib):
    return (make(3, 4), _long(make, lib, [0, 3, 1])), {}


@sample("aten::multi_margin_loss")
def multi_margin_loss_weighted_p2_none(make, lib):
    return (make(3, 4, dtype="float64"), _long(make, lib, [2, 2, 0]), 2, 0.5,
            make(4, dtype="float64", low=0.5, high=2), 0), {}


@sample("aten::multi_margin_loss_backward")
def multi_margin_loss_backward_sum(make, lib):
    return (make(()), make(3, 4), _long(make, lib, [0, 3, 1]), 1, 1.0, None, 2), {}


@sample("aten::multi_margin_loss_backward")
def multi_margin_loss_backward_none(make, lib):
    return (make(3, dtype="float64"), make(3, 4, dtype="float64"), _long(make, lib, [1, 1, 2]),
            2, 0.7, make(4, dtype="float64"), 0), {}


_LABELS = [[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 2, 2]]


@sample("aten::multilabel_margin_loss")
def multilabel_margin_loss_mean(make, lib):
    return (make(3, 4), _long(make, lib, _LABELS)), {}


@sample("aten::multilabel_margin_loss_forward")
def multilabel_margin_loss_forward_none(make, lib):
    return (make(3, 4, dtype="float64"), _long(make, lib, _LABELS), 0), {}


@sample("aten::multilabel_margin_loss_forward")
def multilabel_margin_loss_forward_unbatched_sum(make, lib):
    return (make(4), _long(make, lib, [2, 1, -1, 0]), 2), {}


@sample("aten::multilabel_margin_loss_backward")
def multilabel_margin_loss_backward_mean(make, lib):
    x, target = make(3, 4), _long(make, lib, _LABELS)
    is_target = lib.ops.aten.multilabel_margin_loss_forward(x, target, 1)[1]
    return (make(()), x, target, 1, is_target), {}


@sample("aten::soft_margin_loss")
def soft_margin_loss_mean(make, lib):
    return (make(3, 4), make(3, 4).sign()), {}


@sample("aten::soft_margin_loss")
def soft_margin_loss_none(make, lib):
    return (make(5, dtype="float64"), make(5, dtype="float64").sign(), 0), {}


@sample("aten::soft_margin_loss.out")
def soft_margin_loss_out(make, lib):
    return (make(3, 4), make(3, 4).sign(), 1), {"out": make(0)}


@sample("aten::soft_margin_loss_backward")
def soft_margin_loss_backward_sum(make, lib):
    return (make(()), make(3, 4), make(3, 4).sign(), 2), {}


@sample("aten::soft_margin_loss_backward.grad_input")
def soft_margin_loss_backward_grad_input(make, lib):
    return (make(3, 4), make(3, 4), make(3, 4).sign(), 0), {"grad_input": make(0)}


# -- pdist --------------------------------------------------------------------------------------

@sample("aten::pdist", atol=1e-4, rtol=1e-4)
def pdist_euclidean(make, lib):
    return (make(5, 3),), {}


@sample("aten::pdist", atol=1e-4, rtol=1e-4)
def pdist_p_half_transposed(make, lib):
    return (make(3, 4, dtype="float64").t(), 0.5), {}


@sample("aten::_pdist_forward", atol=1e-4, rtol=1e-4)
def _pdist_forward_inf(make, lib):
    return (make(4, 3), float("inf")), {}


@sample("aten::_pdist_backward", atol=1e-4, rtol=1e-4)
def _pdist_backward_p3(make, lib):
    x = make(4, 3, dtype="float64")
    return (make(6, dtype="float64"), x, 3.0, lib.ops.aten._pdist_forward(x, 3.0)), {}


@sample("aten::_pdist_backward", atol=1e-4, rtol=1e-4)
def _pdist_backward_p1(make, lib):
    x = make(3, 2)
    return (make(3), x, 1.0, lib.ops.aten._pdist_forward(x, 1.0)), {}
