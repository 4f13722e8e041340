"""``torch.testing``: ``assert_close`` (and the deprecated ``assert_allclose``)
for comparing results, ``make_tensor`` for making test inputs."""
from ._comparison import assert_allclose, assert_close  # noqa: F401
from ._creation import make_tensor  # noqa: F401
