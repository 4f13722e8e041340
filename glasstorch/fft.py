"""``torch.fft``: the discrete Fourier transforms (ops ``fft_*``, declared with
``python_module: fft``) under their ``torch.fft`` names (``fft_rfft`` -> ``rfft``).
Each is CompositeImplicitAutograd over ``_fft_r2c`` / ``_fft_c2r`` / ``_fft_c2c``
(glasstorch/_ops/kernels/spectral.py)."""

from ._creation import _with_requires_grad
from ._ops import registry as _registry
from ._tensor import Tensor

# torch's own list: hfft2, ihfft2, hfftn and ihfftn exist but are not in it
__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
           "Tensor"]

globals().update({name[len("fft_"):]: fn for name, fn in _registry.FUNCTIONS["fft"].items()})
# the factories take requires_grad= in Python, as torch's do
fftfreq = _with_requires_grad(fftfreq, "fftfreq")      # noqa: F821
rfftfreq = _with_requires_grad(rfftfreq, "rfftfreq")   # noqa: F821
