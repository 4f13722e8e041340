"""Generate ``digits.npz``: 16x16 grayscale images of the digits 0-9.

    python -m glasstorch.data.make_digits      # rewrites glasstorch/data/digits.npz

How the images are made (deterministic: numpy's PCG64 seeded with ``SEED``):

1. Each digit has two 5x7 bitmap glyphs (``GLYPHS``: a slashed-zero style and a
   plainer one), drawn below as text.
2. Every image picks a digit and a glyph style, then a random affine map from
   the 16x16 image onto the glyph: height 9.5-13 pixels, width scaled by
   0.8-1.2 on top of that, rotation within +-12 degrees, shear within +-0.25,
   and the glyph's centre shifted up to 2 pixels from the image centre.
3. Each pixel samples the glyph bilinearly (a blurry stroke), and a random
   threshold in [0.2, 0.45] turns the blur into a bold or a thin stroke.
4. Ink intensity 0.65-1.0; speckle noise (3% of the pixels get at least a
   random grey in [0, 0.5]); then quantization to 16 grey levels (0, 17,
   ..., 255), stored as uint8.  Speckle rather than Gaussian noise on every
   pixel keeps the compressed file small (about 0.3 MB).

The file holds ``train_images`` (5000, 16, 16), ``train_labels`` (5000,),
``test_images`` (1000, 16, 16) and ``test_labels`` (1000,), labels as uint8;
each split holds equally many images of every digit, in shuffled order.
Load it with ``glasstorch.data.load_digits()``.  The data set needs neither
the network nor torchvision, and takes a few seconds to regenerate.
"""
from __future__ import annotations

import pathlib

import numpy as np

SEED = 20240601
SIZE = 16
N_TRAIN, N_TEST = 5000, 1000

# Two 5x7 glyphs per digit, '#' = ink.
_GLYPH_TEXT = {
    0: (".###. #...# #..## #.#.# ##..# #...# .###.",
        ".###. #...# #...# #...# #...# #...# .###."),
    1: ("..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
        "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#.."),
    2: (".###. #...# ....# ...#. ..#.. .#... #####",
        ".###. #...# ....# ..##. .#... #.... #####"),
    3: ("##### ...#. ..#.. ...#. ....# #...# .###.",
        ".###. #...# ....# ..##. ....# #...# .###."),
    4: ("...#. ..##. .#.#. #..#. ##### ...#. ...#.",
        "#..#. #..#. #..#. ##### ...#. ...#. ...#."),
    5: ("##### #.... ####. ....# ....# #...# .###.",
        "##### #.... #.... ####. ....# ....# ####."),
    6: ("..##. .#... #.... ####. #...# #...# .###.",
        ".###. #.... #.... ####. #...# #...# .###."),
    7: ("##### ....# ...#. ..#.. .#... .#... .#...",
        "##### ....# ....# ...#. ..#.. ..#.. ..#.."),
    8: (".###. #...# #...# .###. #...# #...# .###.",
        ".###. #...# .#.#. ..#.. .#.#. #...# .###."),
    9: (".###. #...# #...# .#### ....# ...#. .##..",
        ".###. #...# #...# .#### ....# ....# .###."),
}


def _parse(text: str) -> np.ndarray:
    return np.array([[ch == "#" for ch in row] for row in text.split()], dtype=np.float64)


# GLYPHS[digit, style] is a (7, 5) array of 0/1, padded by one blank pixel on
# every side (9, 7) so that bilinear sampling fades to background at the edges.
GLYPHS = np.stack([np.stack([np.pad(_parse(t), 1) for t in _GLYPH_TEXT[d]]) for d in range(10)])


def render(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uint8 (SIZE, SIZE) image per label, drawn as the module docstring says."""
    n = len(labels)
    style = rng.integers(0, 2, n)
    height = rng.uniform(9.5, 13.0, n)                   # glyph height in pixels
    aspect = rng.uniform(0.8, 1.2, n)
    angle = np.deg2rad(rng.uniform(-12, 12, n))
    shear = rng.uniform(-0.25, 0.25, n)
    shift = rng.uniform(-2, 2, (n, 2))
    threshold = rng.uniform(0.2, 0.45, n)
    ink = rng.uniform(0.65, 1.0, n)

    # image pixel centres relative to the (shifted) glyph centre: (n, SIZE*SIZE, 2) as (y, x)
    ys, xs = np.mgrid[0:SIZE, 0:SIZE].reshape(2, -1) + 0.5 - SIZE / 2
    rel = np.stack([ys, xs], -1)[None] - shift[:, None, :]
    # invert rotation and shear, then scale pixels to glyph cells (a cell is height/7 pixels)
    cos, sin = np.cos(angle)[:, None], np.sin(angle)[:, None]
    y = cos * rel[..., 0] - sin * rel[..., 1]
    x = sin * rel[..., 0] + cos * rel[..., 1]
    x = x - shear[:, None] * y
    cell = (height / 7)[:, None]
    gy = y / cell + 4.5                                  # glyph centre in padded cell coordinates
    gx = x / (cell * aspect[:, None]) + 3.5

    # bilinear sample of the padded glyph; outside it is background
    gy, gx = gy - 0.5, gx - 0.5                          # to the coordinates of cell centres
    y0, x0 = np.floor(gy).astype(int), np.floor(gx).astype(int)
    fy, fx = gy - y0, gx - x0
    glyph = GLYPHS[labels, style]                        # (n, 9, 7)

    def at(yy, xx):
        inside = (yy >= 0) & (yy < 9) & (xx >= 0) & (xx < 7)
        vals = glyph[np.arange(n)[:, None], np.clip(yy, 0, 8), np.clip(xx, 0, 6)]
        return np.where(inside, vals, 0.0)

    blur = ((1 - fy) * (1 - fx) * at(y0, x0) + (1 - fy) * fx * at(y0, x0 + 1)
            + fy * (1 - fx) * at(y0 + 1, x0) + fy * fx * at(y0 + 1, x0 + 1))
    stroke = np.clip((blur - threshold[:, None]) / 0.2 + 0.5, 0, 1)
    image = stroke * ink[:, None]
    speckle = rng.random(stroke.shape) < 0.03
    image = np.where(speckle, np.maximum(image, rng.uniform(0, 0.5, stroke.shape)), image)
    levels = np.rint(np.clip(image, 0, 1) * 15).astype(np.uint8)
    return (levels * 17).reshape(n, SIZE, SIZE)


def make(seed: int = SEED) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for split, n in (("train", N_TRAIN), ("test", N_TEST)):
        labels = np.tile(np.arange(10, dtype=np.uint8), n // 10)
        rng.shuffle(labels)
        out[f"{split}_images"] = render(labels, rng)
        out[f"{split}_labels"] = labels
    return out


def main() -> None:
    path = pathlib.Path(__file__).with_name("digits.npz")
    np.savez_compressed(path, **make())
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
