"""Render negative scenes: application screens that show no Netron graph, as screenshots and simulated photos.

    python -m train.render_negatives --out DIR [--scenes 150] [--seed 606]

A phone pointed at something else must get an empty graph back, and the scanner decides that from the detector's
best card score (`ScanParams::min_node_score`) and from how many cards the recovered edges join
(`ScanParams::min_connected_share`). The detector is trained on Netron canvases and the desktop around
them, so card-like things it has never been told are not cards (solid buttons, tag pills, window controls, form
fields, table headers) can score close to real cards. These scenes teach it otherwise: each is a procedurally drawn
screen of toolbars, buttons, pills, forms, tables, lists and text (no card with a title bar and rows, no edges), in
a light or dark theme, and its truth has no element at all (`canvas.box` is the whole image). The photo is the same
screen through `datagen.camera.simulate`, the simulator of the training photos.

Scene k is drawn from `numpy.random.default_rng([seed, k])`; the layout is docs/dataset.md's (k.shot.png,
k.shot.json, k.photo.jpg, k.photo.json), so `train.merge_scenes --views` takes the folder like any other. Nothing
here reads an image from outside: the test pictures of `tests/fixtures/non_netron` are drawn by their own script
and are never trained on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from datagen import build, camera

VIEWPORTS = [(1366, 768), (1440, 900), (1536, 864), (1920, 1080), (1280, 800), (1600, 900)]
ACCENTS = [(0, 120, 212), (16, 124, 16), (196, 43, 28), (135, 100, 184), (202, 80, 16), (0, 153, 188),
           (232, 17, 35), (255, 185, 0), (70, 70, 70), (51, 102, 204)]


def _word(rng: np.random.Generator) -> str:
    return str(rng.choice(camera._WORDS))


def _label(rng: np.random.Generator, hard: bool = True) -> str:
    """Short text: a word or two, now and then a number or (with `hard`) an operator name or a shape. Buttons and
    tags never say an operator's name: a solid box reading `Relu` is what Netron draws for a bare node."""
    u = rng.random()
    if hard and u < 0.12:
        return str(rng.choice(camera._HARD_NEGATIVES))
    if u < 0.2:
        return str(int(rng.integers(0, 10000)))
    return " ".join(_word(rng) for _ in range(int(rng.integers(1, 3)))).title()


class _Screen:
    """Draws controls on an RGB image; every size is in CSS px times `dsf`."""

    def __init__(self, w: int, h: int, dsf: float, dark: bool, rng: np.random.Generator):
        self.rng, self.dsf, self.dark = rng, dsf, dark
        self.bg = (32, 32, 36) if dark else (248, 248, 250)
        self.fg = (225, 225, 225) if dark else (30, 30, 30)
        self.muted = (150, 150, 150) if dark else (110, 110, 110)
        self.line = (70, 70, 76) if dark else (210, 210, 214)
        self.img = Image.new("RGB", (w, h), self.bg)
        self.d = ImageDraw.Draw(self.img)
        self.font_pick = int(rng.integers(3))

    def px(self, v: float) -> float:
        return v * self.dsf

    def text(self, x: float, y: float, s: str, size: float, fill) -> float:
        """Draws `s` with its top-left at (x, y); returns its width in image px."""
        name = camera._CJK_FONT if "\u3008" in s else camera._SANS_FONTS[self.font_pick]
        font = camera._font(name, round(self.px(size)))
        self.d.text((x, y), s, font=font, fill=fill)
        return float(self.d.textlength(s, font=font))

    def button(self, x: float, y: float, solid: bool, pill: bool = False) -> tuple[float, float]:
        """A button or tag at (x, y); returns its (width, height)."""
        rng = self.rng
        size = float(rng.uniform(11, 16))
        s = _label(rng, hard=False)
        font = camera._font(camera._SANS_FONTS[self.font_pick], round(self.px(size)))
        tw = float(self.d.textlength(s, font=font))
        padx, pady = self.px(rng.uniform(8, 20)), self.px(rng.uniform(4, 10))
        w, h = tw + 2 * padx, self.px(size) * 1.2 + 2 * pady
        accent = ACCENTS[int(rng.integers(len(ACCENTS)))]
        r = h / 2 if pill else self.px(rng.choice([0, 2, 4, 6]))
        if solid:
            self.d.rounded_rectangle([x, y, x + w, y + h], radius=r, fill=accent)
            fill = (255, 255, 255) if sum(accent) < 500 else (20, 20, 20)
        else:
            self.d.rounded_rectangle([x, y, x + w, y + h], radius=r, fill=self.bg, outline=self.line,
                                     width=max(1, round(self.dsf)))
            fill = self.fg
        self.d.text((x + padx, y + pady), s, font=font, fill=fill)
        return w, h

    def toolbar(self, y: float, h: float, w: float) -> None:
        rng = self.rng
        self.d.rectangle([0, y, w, y + h], fill=(45, 45, 50) if self.dark else (236, 236, 240))
        x = self.px(10)
        while x < w - self.px(120):
            if rng.random() < 0.4:
                s = self.px(rng.uniform(14, 22))
                self.d.rounded_rectangle([x, y + (h - s) / 2, x + s, y + (h + s) / 2], radius=self.px(3),
                                         fill=camera._rgb(rng.uniform(60, 230, 3)))
                x += s + self.px(12)
            else:
                x += self.text(x, y + h / 2 - self.px(8), _label(rng), 13, self.fg) + self.px(18)
        for i, s in enumerate(["×", "□", "–"]):
            self.text(w - self.px(30 + 40 * i), y + h / 2 - self.px(8), s, 14, self.fg)

    def panel(self, box: tuple[float, float, float, float], fill=None) -> None:
        """Fills `box` with one kind of content, clipped to it."""
        bx0, by0 = round(box[0]), round(box[1])
        bw, bh = max(1, round(box[2]) - bx0), max(1, round(box[3]) - by0)
        main_img, main_d = self.img, self.d
        self.img = Image.new("RGB", (bw, bh), fill or self.bg)
        self.d = ImageDraw.Draw(self.img)
        try:
            self._panel_content((0.0, 0.0, float(bw), float(bh)))
            main_img.paste(self.img, (bx0, by0))
        finally:
            self.img, self.d = main_img, main_d

    def _panel_content(self, box: tuple[float, float, float, float]) -> None:
        rng = self.rng
        x0, y0, x1, y1 = box
        kind = str(rng.choice(["buttons", "form", "table", "text", "list", "tags", "tiles"],
                              p=[0.2, 0.15, 0.15, 0.15, 0.1, 0.15, 0.1]))
        if rng.random() < 0.5:
            self.d.rectangle([x0, y0, x1 - 1, y1 - 1], outline=self.line, width=max(1, round(self.dsf)))
        x, y = x0 + self.px(12), y0 + self.px(12)
        if rng.random() < 0.6:
            self.text(x, y, _label(rng), float(rng.uniform(15, 22)), self.fg)
            y += self.px(34)
        if kind in ("buttons", "tags"):
            while y < y1 - self.px(40):
                x = x0 + self.px(12)
                row_h = 0.0
                while x < x1 - self.px(80):
                    bw, bh = self.button(x, y, solid=rng.random() < 0.7, pill=kind == "tags" or rng.random() < 0.2)
                    x += bw + self.px(rng.uniform(6, 24))
                    row_h = max(row_h, bh)
                y += row_h + self.px(rng.uniform(8, 30))
        elif kind == "form":
            while y < y1 - self.px(40):
                self.text(x, y + self.px(6), _label(rng) + ":", 13, self.muted)
                fx = x + self.px(rng.uniform(90, 140))
                fw = min(x1 - self.px(12), fx + self.px(rng.uniform(120, 320))) - fx
                if fw > 0:  # a panel narrower than the label leaves no room for the field
                    self.d.rounded_rectangle([fx, y, fx + fw, y + self.px(28)], radius=self.px(3), fill=self.bg,
                                             outline=self.line, width=max(1, round(self.dsf)))
                    if rng.random() < 0.7:
                        self.text(fx + self.px(6), y + self.px(6), _label(rng), 13, self.fg)
                y += self.px(rng.uniform(36, 48))
            if y1 - y > self.px(30):
                self.button(x, y1 - self.px(38), solid=True)
        elif kind == "table":
            cols = int(rng.integers(2, 7))
            cw = (x1 - x0 - self.px(24)) / cols
            rh = self.px(rng.uniform(22, 32))
            head = ACCENTS[int(rng.integers(len(ACCENTS)))] if rng.random() < 0.5 else self.line
            r = 0
            while y + rh < y1 - self.px(8):
                if r == 0:
                    self.d.rectangle([x, y, x + cols * cw, y + rh], fill=head)
                self.d.line([x, y + rh, x + cols * cw, y + rh], fill=self.line, width=max(1, round(self.dsf)))
                for c in range(cols):
                    s = _label(rng) if (r == 0 or rng.random() < 0.5) else str(rng.choice(
                        [f"{rng.uniform(0, 100):.2f}", str(int(rng.integers(0, 99999))),
                         "×".join(str(int(v)) for v in rng.integers(1, 512, int(rng.integers(2, 5))))]))
                    self.text(x + c * cw + self.px(6), y + rh / 2 - self.px(7), s, 12,
                              (255, 255, 255) if r == 0 and head != self.line else self.fg)
                y += rh
                r += 1
        elif kind in ("text", "list"):
            lh = self.px(rng.uniform(18, 26))
            while y + lh < y1 - self.px(8):
                if kind == "list":
                    self.d.ellipse([x, y + lh / 2 - self.px(3), x + self.px(6), y + lh / 2 + self.px(3)],
                                   fill=self.muted)
                    s = _label(rng)
                else:
                    s = " ".join(_word(rng) for _ in range(int(rng.integers(4, 14))))
                self.text(x + (self.px(14) if kind == "list" else 0), y, s, 13, self.fg)
                y += lh
        else:  # tiles: coloured squares with a caption
            while y < y1 - self.px(90):
                x = x0 + self.px(12)
                s = self.px(rng.uniform(48, 96))
                while x + s < x1 - self.px(12):
                    self.d.rounded_rectangle([x, y, x + s, y + s], radius=self.px(rng.choice([0, 4, 10])),
                                             fill=camera._rgb(rng.uniform(40, 240, 3)))
                    self.text(x, y + s + self.px(4), _label(rng), 11, self.fg)
                    x += s + self.px(rng.uniform(12, 30))
                y += s + self.px(rng.uniform(26, 40))


def draw_screen(rng: np.random.Generator) -> tuple[Image.Image, float, str]:
    """One screen: (RGB image, device scale, theme). A toolbar, an optional side list, and a grid of panels."""
    vw, vh = VIEWPORTS[int(rng.integers(len(VIEWPORTS)))]
    dsf = float(rng.choice([1.0, 1.25, 1.5, 2.0], p=[0.4, 0.15, 0.15, 0.3]))
    dark = bool(rng.random() < 0.45)
    w, h = round(vw * dsf), round(vh * dsf)
    s = _Screen(w, h, dsf, dark, rng)
    top = 0.0
    if rng.random() < 0.85:
        th = s.px(rng.uniform(32, 48))
        s.toolbar(0, th, w)
        top = th
    left = 0.0
    if rng.random() < 0.5:
        left = s.px(rng.uniform(160, 260))
        s.panel((0, top, left, h), fill=(40, 40, 44) if dark else (240, 240, 244))
    rows, cols = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    gw, gh = (w - left) / cols, (h - top) / rows
    for r in range(rows):
        for c in range(cols):
            m = s.px(rng.uniform(4, 16))
            s.panel((left + c * gw + m, top + r * gh + m, left + (c + 1) * gw - m, top + (r + 1) * gh - m))
    return s.img, dsf, "dark" if dark else "light"


def empty_truth(width: int, height: int, dsf: float, theme: str, seed: int, k: int) -> dict:
    """A schema-v1 truth with no element, for a screenshot of `width` × `height`."""
    return {
        "format": "netron-ocr.graph", "version": 1, "direction": "vertical",
        "image": {"width": int(width), "height": int(height)},
        "canvas": {"box": [0.0, 0.0, float(width), float(height)], "confidence": 1.0},
        "nodes": [], "inputs": [], "outputs": [], "tensors": [], "edges": [],
        "scene": {"kind": "screenshot", "negative": True, "device_scale": dsf, "theme": theme, "seed": int(seed),
                  "index": int(k), "generator_version": "negatives-1"},
    }


def make_negative_scene(seed: int, k: int, out: Path) -> None:
    """Writes scene `k`'s four files (screenshot, photo and their truths) under `out/scenes/`."""
    rng = np.random.default_rng([int(seed), int(k)])
    image, dsf, theme = draw_screen(rng)
    shot_truth = camera.screenshot_truth(empty_truth(image.width, image.height, dsf, theme, seed, k))
    photo, photo_truth = camera.simulate(image, shot_truth, rng)
    paths = build.scene_paths(out, k)
    paths["shot.png"].parent.mkdir(parents=True, exist_ok=True)
    build._write_atomic(paths["shot.png"], build._png_bytes(image))
    build._write_atomic(paths["photo.jpg"], build._jpeg_bytes(photo))
    build._write_atomic(paths["shot.json"], build.dumps(shot_truth).encode("utf-8"))
    build._write_atomic(paths["photo.json"], build.dumps(photo_truth).encode("utf-8"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.render_negatives", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--scenes", type=int, default=150)
    p.add_argument("--seed", type=int, default=606)
    args = p.parse_args(argv)
    from tqdm import tqdm

    for k in tqdm(range(args.scenes), desc="negatives", file=sys.stderr):
        if not build.scene_paths(args.out, k)["photo.json"].exists():
            make_negative_scene(args.seed, k, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
