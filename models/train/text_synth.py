"""Synthetic text crops for the OCR: random Netron-like strings rendered with PIL.

They complement the rendered dataset with strings it rarely contains: every digit combination (so `1×8×56×56` vs
`1×8×56×55` is learnt from pixels, not from string frequency), one-digit mutations of the dataset's own texts, and a
few fonts besides the Liberation Sans that Chromium uses here (the user's Netron may run on Windows or macOS).

`render_text(text, rng)` returns a uint8 grey canvas and the text's box on it, in the convention of the truth files
(the box spans the advance width and the font's ascent + descent, like an SVG text's bounding client rect).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

# (path, weight): Chromium here renders Netron's labels in Liberation Sans (Arial metrics: `N×3×32×32` at 10 px is
# 53 px wide in the fixture render, as in Liberation); the others stand in for Helvetica/Segoe/DejaVu setups.
FONT_CANDIDATES = (
    ("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf", 0.5),
    ("/usr/share/fonts/opentype/urw-base35/NimbusSans-Regular.otf", 0.15),
    ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 0.15),
    ("/usr/share/fonts/truetype/liberation/LiberationSansNarrow-Regular.ttf", 0.05),
    ("/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed.ttf", 0.05),
    ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", 0.1),
)
# Netron's brackets around weight shapes come from this font (the Latin fonts have no glyph for them).
CJK_FONT = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
CJK_CHARS = frozenset("〈〉")
SYMBOLIC_DIMS = ("batch", "N", "B", "T", "seq", "seq_len", "height", "width", "batch_size", "sequence_length",
                 "unk__0", "unk__12", "dim_1", "num_boxes", "H", "W", "C")
NAME_WORDS = ("layer1", "layer2", "layer3", "conv", "bn", "relu", "fc", "encoder", "decoder", "block", "attn",
              "mlp", "head", "stem", "down", "up", "proj", "norm", "embed", "pool", "features", "classifier")
NAME_OPS = ("Conv", "Relu", "Add", "MatMul", "Gemm", "Mul", "Reshape", "Transpose", "Concat", "Softmax",
            "Sigmoid", "BatchNormalization", "MaxPool", "Gather", "Slice", "Resize", "Div", "Sub")
WEIGHT_NAMES = ("W", "W", "W", "B", "B", "R", "scale", "bias", "mean", "var", "shape", "axes", "pads", "min",
                "max", "slope", "indices", "scales", "sizes", "K", "starts", "ends", "steps", "weight", "x_scale",
                "y_scale", "x_zero_point", "y_zero_point")
MAX_SHAPE_CHARS = 16  # Netron drops longer shape labels


@lru_cache(maxsize=None)
def available_fonts() -> tuple[tuple[str, float], ...]:
    """Font candidates present on this machine; falls back to Pillow's bundled font (path "")."""
    found = tuple((p, w) for p, w in FONT_CANDIDATES if Path(p).is_file())
    return found or (("", 1.0),)


@lru_cache(maxsize=512)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    if not path:
        return ImageFont.load_default(size=size)
    return ImageFont.truetype(path, size=size)


def _dim(rng: np.random.Generator) -> str:
    r = rng.random()
    if r < 0.05:
        return "?"
    if r < 0.12:
        return str(rng.choice(SYMBOLIC_DIMS))
    if r < 0.40:
        return str(int(rng.integers(1, 17)))
    if r < 0.65:
        return str(int(2 ** rng.integers(0, 13)))
    if r < 0.72:
        return "-1"
    return str(int(np.exp(rng.uniform(0.0, np.log(10000)))))


def random_shape(rng: np.random.Generator) -> str:
    """A Netron shape label: 1–6 dims joined by `×`, at most 16 characters."""
    for _ in range(100):
        rank = int(rng.choice([1, 2, 3, 4, 4, 4, 5, 6]))
        text = "×".join(_dim(rng) for _ in range(rank))
        if len(text) <= MAX_SHAPE_CHARS:
            return text
    return "1"


def random_name(rng: np.random.Generator) -> str:
    """A tensor / graph I/O name in the usual exporter styles, at most 32 characters."""
    for _ in range(100):
        r = rng.random()
        n = int(rng.integers(0, 200))
        if r < 0.3:
            parts = [str(rng.choice(NAME_WORDS)) for _ in range(int(rng.integers(1, 3)))]
            text = "/" + "/".join(parts) + f"/{rng.choice(NAME_OPS)}_output_0"
        elif r < 0.5:
            text = f"onnx::{rng.choice(NAME_OPS)}_{n}"
        elif r < 0.65:
            text = f"{rng.choice(('input', 'x', 'data', 'images', 'onnx'))}.{n}"
        elif r < 0.8:
            text = "_".join(str(rng.choice(NAME_WORDS)) for _ in range(int(rng.integers(1, 4))))
            if rng.random() < 0.5:
                text += f"_{n}"
        else:
            text = f"{rng.choice(NAME_WORDS)}.{n}.{rng.choice(('weight', 'bias', 'out'))}"
        if rng.random() < 0.15:
            text = text.upper() if rng.random() < 0.3 else text.capitalize()
        if len(text) <= 32:
            return text
    return "x"


def random_weight(rng: np.random.Generator) -> tuple[str, int]:
    """A weight row as Netron draws it and the dataset builder writes it (`W〈64×3×7×7〉`, `B = 0.5`), and the
    length of its bold name prefix."""
    name = str(rng.choice(WEIGHT_NAMES))
    if rng.random() < 0.8:
        return f"{name}〈{random_shape(rng)}〉", len(name)
    if rng.random() < 0.3:  # long floats are cut by Netron: `x_scale = 0.05000000…`
        value = f"{rng.uniform(0, 1):.8f}"[:10] + "…"
    else:
        value = str(rng.choice(["0", "1", "-1", "2", "0.5", "1e-05", "0.1", "6", "3.14", "0.001", "255", "-0.5"]))
    return f"{name} = {value}", len(name)


def mutate_digits(text: str, rng: np.random.Generator) -> str:
    """Change, insert or delete one digit of `text` (the one-digit hard pairs); unchanged if it has no digit."""
    pos = [i for i, c in enumerate(text) if c.isdigit()]
    if not pos:
        return text
    i = int(rng.choice(pos))
    r = rng.random()
    if r < 0.7:
        new = str((int(text[i]) + int(rng.integers(1, 10))) % 10)
        return text[:i] + new + text[i + 1:]
    if r < 0.85 and len(text) < MAX_SHAPE_CHARS:
        return text[:i] + str(int(rng.integers(0, 10))) + text[i:]
    out = text[:i] + text[i + 1:]
    # never leave an empty dim behind
    return text if ("××" in out or out.startswith("×") or out.endswith("×") or not out) else out


def _bold(path: str) -> str:
    """The bold face next to a regular font file, or the regular one if there is none."""
    for a, b in (("-Regular.", "-Bold."), ("Sans.ttf", "Sans-Bold.ttf"), ("Condensed.ttf", "Condensed-Bold.ttf")):
        if a in path and Path(path.replace(a, b)).is_file():
            return path.replace(a, b)
    return path


def render_text(text: str, rng: np.random.Generator, font_px: float | None = None, bold_chars: int = 0):
    """Render `text` grey-on-background like a Netron label; returns (uint8 H×W canvas, (x0, y0, x1, y1) box).

    Font size is `font_px` or drawn from 6–36 px; light or dark theme; the first `bold_chars` characters in the bold
    face (weight-row names); with probability 0.3 an edge-like line crosses the canvas. Blur/noise/JPEG are left to
    the caller's augmentation."""
    fonts = available_fonts()
    weights = np.array([w for _, w in fonts])
    path = fonts[int(rng.choice(len(fonts), p=weights / weights.sum()))][0]
    size = int(round(font_px if font_px is not None else float(np.exp(rng.uniform(np.log(6), np.log(36))))))
    size = max(4, size)
    supersample = 3 if size < 12 else 1
    big = size * supersample
    main = _font(path, big)
    cjk = _font(CJK_FONT, big) if Path(CJK_FONT).is_file() else main
    bold = _font(_bold(path), big) if path else main
    faces = [cjk if c in CJK_CHARS else bold if i < bold_chars else main for i, c in enumerate(text)]
    ascent, descent = main.getmetrics()
    advances = [f.getlength(c) for f, c in zip(faces, text)]
    width = int(np.ceil(sum(advances)))
    margin = big
    cw, ch = width + 2 * margin, ascent + descent + 2 * margin
    dark = rng.random() < 0.3
    if dark:
        bg = int(rng.integers(20, 70))
        fg = int(rng.integers(170, 256))
    else:
        bg = int(rng.integers(200, 256))
        fg = int(rng.integers(0, 90))
    img = Image.new("L", (cw, ch), bg)
    draw = ImageDraw.Draw(img)
    if rng.random() < 0.3:
        line = int(rng.integers(100, 170))
        x = float(rng.uniform(0, cw))
        draw.line([(x, 0), (x + rng.uniform(-cw / 2, cw / 2), ch)], fill=line, width=max(1, supersample))
    x = float(margin)
    for c, adv, face in zip(text, advances, faces):
        draw.text((x, margin), c, fill=fg, font=face)
        x += adv
    arr = np.asarray(img)
    box = (margin, margin, margin + width, margin + ascent + descent)
    if supersample > 1:
        arr = cv2.resize(arr, (cw // supersample, ch // supersample), interpolation=cv2.INTER_AREA)
        sx, sy = arr.shape[1] / cw, arr.shape[0] / ch
        box = (box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy)
    return np.ascontiguousarray(arr), tuple(float(v) for v in box)
