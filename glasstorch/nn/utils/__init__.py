"""``torch.nn.utils``: gradient clipping, parameter/vector conversion, packed sequences (``rnn``)."""
from .clip_grad import _clip_grads_with_norm_ as clip_grads_with_norm_
from .clip_grad import _get_total_norm as get_total_norm
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import rnn  # noqa: F401  (torch.nn.utils.rnn)

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters"]
from . import stateless  # noqa: F401,E402  (torch.nn.utils.stateless.functional_call)
