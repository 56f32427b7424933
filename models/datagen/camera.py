"""Camera simulator: a phone photo of a monitor that shows a Netron screenshot.

`simulate(screenshot, truth, rng, strength)` composes the screenshot into a Netron window (title bar, browser tabs,
maybe a sidebar) on a desktop with other windows and distractor text, puts that screen into a monitor bezel in a
room, photographs it with a random camera pose (homography: yaw/pitch/roll, distance, framing) and degrades the
result (exposure gradient, white balance, vignetting, shadows, glare, reflections, screen moiré, chromatic
fringing, defocus, motion blur, resampling blur, sensor noise, JPEG).

Coordinates: boxes and points are in pixel-edge coordinates (pixel `i` covers `[i, i+1)`), as in the truth JSON.
Every geometric annotation of the screenshot truth is mapped with the one homography `H` (screenshot px -> photo
px) that also moved the pixels: boxes become `quad` (mapped corners, clockwise from the object's top left) plus the
enclosing `box` clipped to the image; edge polylines are mapped point by point. `H` is stored in
`scene.camera.homography` (row-major 3x3).

Framing keeps the whole graph content (`canvas.box` of the screenshot) inside the photo, so an element is
truncated in the photo only if it already was in the screenshot. Degradations are capped by the height of the
shape-label text in the photo so that a person can still read the graph.

Speed: about 0.1-0.3 s per ~2 MP photo on one core (OpenCV with one thread).
"""

from __future__ import annotations

import colorsys
import copy
import functools
import io
import math
from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

# Photo sizes (width, height, weight). Most are <= 2 MP for speed; 12 MP is rare.
PHOTO_SIZES = [
    ((1920, 1080), 0.30),
    ((1600, 1200), 0.25),
    ((1440, 1080), 0.15),
    ((1280, 960), 0.12),
    ((2016, 1512), 0.10),
    ((1920, 1440), 0.06),
    ((4032, 3024), 0.02),
]

# Most pixels the supersampled internal photo and the screen canvas may have (speed bound).
MAX_INTERNAL_PIXELS = 3.2e6
MAX_CANVAS_PIXELS = 4.5e6

# Readability: the median shape-label height (label box height, digits are ~0.7 of it) in the photo should reach
# this many pixels when the framing allows it, and blur is capped relative to that height.
MIN_TEXT_PX = 12.0
# ... and in 30% of photos only this (the photographer framed the whole window, not the text).
HARD_MIN_TEXT_PX = 7.0
# At most this many photo px per screenshot px at the content centre (closer shots only magnify the pixel grid).
MAX_ZOOM = 2.0
BLUR_SIGMA_PER_TEXT_PX = 0.08
MOTION_LEN_PER_TEXT_PX = 0.3

_FONT_DIR = "/usr/share/fonts/truetype/"
_SANS_FONTS = [
    "dejavu/DejaVuSans.ttf",
    "liberation/LiberationSans-Regular.ttf",
    "dejavu/DejaVuSansCondensed.ttf",
]
_CJK_FONT = "wqy/wqy-microhei.ttc"  # has the 〈 〉 brackets of Netron's weight rows
_MONO_FONTS = [
    "dejavu/DejaVuSansMono.ttf",
    "liberation/LiberationMono-Regular.ttf",
]

_WORDS = (
    "model export layer weights train epoch loss accuracy dataset batch config notes readme report draft meeting "
    "agenda project budget invoice summary results figure table review pending merged branch commit release build "
    "deploy server client cache index query search filter update delete create account settings profile message "
    "inbox calendar today tomorrow monday friday january march october download upload folder documents pictures "
    "music videos desktop terminal editor browser console network memory storage device camera phone tablet laptop "
    "monitor keyboard mouse window screen display image photo scan print copy paste undo redo open save close "
    "help about version license source python rust android kotlin swift onnx tensor graph node edge input output "
    "shape kernel stride padding channel feature vector matrix linear conv relu pooling attention encoder decoder "
    "transformer embedding token sequence logits softmax sigmoid gradient optimizer schedule warmup checkpoint"
).split()

_CODE_LINES = [
    "import torch", "import torch.nn as nn", "import numpy as np", "from onnx import helper, TensorProto",
    "class Net(nn.Module):", "    def __init__(self):", "        super().__init__()",
    "        self.conv1 = nn.Conv2d(3, 64, 7, stride=2)", "        self.bn1 = nn.BatchNorm2d(64)",
    "        self.relu = nn.ReLU(inplace=True)", "    def forward(self, x):", "        x = self.conv1(x)",
    "        x = self.relu(self.bn1(x))", "        return self.fc(x.flatten(1))", "model = Net().eval()",
    "x = torch.randn(1, 3, 224, 224)", "torch.onnx.export(model, x, 'model.onnx', opset_version=17)",
    "sess = ort.InferenceSession('model.onnx')", "out = sess.run(None, {'input': x.numpy()})",
    "print(out[0].shape)", "for epoch in range(num_epochs):", "    loss = criterion(logits, target)",
    "    optimizer.zero_grad()", "    loss.backward()", "if __name__ == '__main__':", "    main()",
    "fn main() -> Result<()> {", "    let model = tract_onnx::onnx().model_for_path(path)?;", "}",
    "$ python export.py --opset 17", "$ netron model.onnx", "Serving 'model.onnx' at http://localhost:8080",
    "$ git status", "On branch main", "nothing to commit, working tree clean", "$ ls -la", "total 48",
    "def load(path):", "    with open(path, 'rb') as f:", "        return f.read()", "# TODO: fuse batchnorm",
    "const x = await fetch(url);", "return { width: 1920, height: 1080 };", "SELECT * FROM runs WHERE id = 42;",
]

_HARD_NEGATIVES = [
    "Conv", "Relu", "MatMul", "Add", "Gemm", "Softmax", "Reshape", "Concat", "1×64×56×56", "3×224×224",
    "batch×1000", "W〈64×3×7×7〉", "B〈64〉", "input", "output", "logits",
]


@functools.lru_cache(maxsize=256)
def _font(name: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(_FONT_DIR + name, max(4, int(size)))


def _rgb(v) -> tuple[int, int, int]:
    return tuple(int(max(0, min(255, round(c)))) for c in v)


# ---------------------------------------------------------------------------------------------------------------
# Geometry
# ---------------------------------------------------------------------------------------------------------------

def _translate(dx: float, dy: float) -> np.ndarray:
    return np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]])


def _scale(sx: float, sy: float | None = None) -> np.ndarray:
    return np.diag([sx, sx if sy is None else sy, 1.0])


def map_points(h: np.ndarray, pts) -> np.ndarray:
    """Maps (N, 2) points with the 3x3 homography `h`; returns (N, 2) float64."""
    p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = p @ h[:, :2].T + h[:, 2]
    return q[:, :2] / q[:, 2:3]


def _box_corners(b) -> np.ndarray:
    x0, y0, x1, y1 = b
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


def _rotation(yaw: float, pitch: float, roll: float) -> np.ndarray:
    cy, sy = math.cos(yaw), math.sin(yaw)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cr, sr = math.cos(roll), math.sin(roll)
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rx = np.array([[1, 0, 0], [0, cp, -sp], [0, sp, cp]])
    rz = np.array([[cr, -sr, 0], [sr, cr, 0], [0, 0, 1]])
    return rz @ ry @ rx


def _plane_homography(center, unit: float, yaw: float, pitch: float, roll: float, dist: float) -> np.ndarray:
    """Pinhole projection (focal 1) of the screen plane, with `center` on the optical axis at distance `dist`
    (in units of `unit` screen pixels)."""
    r = _rotation(yaw, pitch, roll)
    n = np.array([[1.0 / unit, 0, -center[0] / unit], [0, 1.0 / unit, -center[1] / unit], [0, 0, 1.0]])
    m = np.column_stack([r[:, 0], r[:, 1], np.array([0.0, 0.0, dist])])
    return m @ n


def _depths(h: np.ndarray, pts) -> np.ndarray:
    p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    return p @ h[2, :2] + h[2, 2]


def _local_scale(h: np.ndarray, pt) -> float:
    """sqrt(|det J|) of `h` at `pt`: output pixels per input pixel (geometric mean of the two axes)."""
    x, y = pt
    q = map_points(h, [[x, y], [x + 1, y], [x, y + 1]])
    j = np.column_stack([q[1] - q[0], q[2] - q[0]])
    return math.sqrt(abs(np.linalg.det(j)))


# ---------------------------------------------------------------------------------------------------------------
# Desktop: the screen content around the screenshot
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class _Window:
    rect: tuple[float, float, float, float]
    kind: str
    dark: bool
    title: str


@dataclass
class _Desktop:
    """Screen layout in base units (screenshot pixels)."""
    width: float
    height: float
    ui: float  # base units per CSS pixel
    os: str
    theme: str
    bar: tuple[float, float, float, float] | None
    window: tuple[float, float, float, float]
    shot_xy: tuple[float, float]
    shot_size: tuple[int, int]
    chrome: str
    title_h: float
    tabs_h: float
    toolbar_h: float
    sidebar: tuple[str, float] | None
    others: list[_Window] = field(default_factory=list)
    icons: int = 0
    wallpaper: dict = field(default_factory=dict)


def _layout_desktop(shot_w: int, shot_h: int, dsf: float, theme: str, rng: np.random.Generator) -> _Desktop:
    ui = float(dsf)
    os_kind = str(rng.choice(["windows", "mac", "linux"], p=[0.5, 0.35, 0.15]))
    chrome = str(rng.choice(["app", "browser"], p=[0.55, 0.45]))
    title_h = {"windows": 32, "mac": 28, "linux": 36}[os_kind] * ui
    tabs_h = 0.0
    toolbar_h = 0.0
    if chrome == "browser":
        tabs_h = float(rng.uniform(32, 40)) * ui
        toolbar_h = float(rng.uniform(34, 44)) * ui
        title_h = 0.0 if rng.random() < 0.6 else title_h * 0.5
    sidebar = None
    if rng.random() < 0.3:
        sidebar = (str(rng.choice(["right", "left"], p=[0.7, 0.3])), float(rng.uniform(220, 380)) * ui)
    border = 1.0 * ui
    ww = shot_w + 2 * border + (sidebar[1] if sidebar else 0.0)
    wh = shot_h + title_h + tabs_h + toolbar_h + border
    bar_h = {"windows": 44, "mac": 25, "linux": 30}[os_kind] * ui

    aspect = float(rng.choice([16 / 9, 16 / 10, 3 / 2, 21 / 9], p=[0.5, 0.3, 0.1, 0.1]))
    if rng.random() < 0.3:
        margin = float(rng.uniform(0.0, 0.04))  # nearly maximized
    else:
        margin = float(rng.uniform(0.04, 0.6))
    sw = ww * (1 + margin)
    sh = max(sw / aspect, wh + bar_h + 2 * ui)
    sw = max(sw, sh * aspect)
    if os_kind == "windows":
        bar = (0.0, sh - bar_h, sw, sh)
        free = (0.0, 0.0, sw, sh - bar_h)
    else:
        bar = (0.0, 0.0, sw, bar_h)
        free = (0.0, bar_h, sw, sh)
    wx = free[0] + rng.uniform(0, max(0.0, free[2] - free[0] - ww))
    wy = free[1] + rng.uniform(0, max(0.0, free[3] - free[1] - wh))
    sx = wx + border + (sidebar[1] if sidebar and sidebar[0] == "left" else 0.0)
    sy = wy + title_h + tabs_h + toolbar_h
    others = []
    for _ in range(int(rng.integers(0, 6))):
        w = sw * rng.uniform(0.2, 0.6)
        h = sh * rng.uniform(0.2, 0.7)
        x = rng.uniform(-0.1 * w, sw - 0.9 * w)
        y = rng.uniform(free[1], max(free[1] + 1, free[3] - 0.5 * h))
        kind = str(rng.choice(["code", "terminal", "text", "list", "grid", "image"]))
        others.append(_Window((x, y, x + w, y + h), kind, bool(rng.random() < 0.5), _words(rng, 1, 3)))
    wallpaper = {
        "kind": str(rng.choice(["gradient", "solid", "blobs", "waves"], p=[0.35, 0.15, 0.35, 0.15])),
        "c0": _muted_color(rng), "c1": _muted_color(rng), "angle": rng.uniform(0, math.pi),
        "seed": int(rng.integers(0, 2**31)),
    }
    return _Desktop(
        width=sw, height=sh, ui=ui, os=os_kind, theme=theme, bar=bar, window=(wx, wy, wx + ww, wy + wh),
        shot_xy=(sx, sy), shot_size=(shot_w, shot_h), chrome=chrome, title_h=title_h, tabs_h=tabs_h,
        toolbar_h=toolbar_h, sidebar=sidebar, others=others, icons=int(rng.integers(0, 9)) if rng.random() < 0.5 else 0,
        wallpaper=wallpaper,
    )


def _muted_color(rng: np.random.Generator) -> np.ndarray:
    """A wallpaper-like colour: any hue, mostly moderate saturation, any brightness."""
    h = rng.uniform(0, 1)
    sat = rng.uniform(0.05, 0.8) ** 1.5
    val = rng.uniform(0.12, 0.95)
    rgb = np.array(colorsys.hsv_to_rgb(h, sat, val)) * 255
    return rgb


def _words(rng: np.random.Generator, lo: int, hi: int) -> str:
    n = int(rng.integers(lo, hi + 1))
    return " ".join(str(w) for w in rng.choice(_WORDS, n))


def _wallpaper(d: _Desktop, w: int, h: int) -> np.ndarray:
    p = d.wallpaper
    lr = np.random.default_rng(p["seed"])
    lw, lh = max(2, w // 16), max(2, h // 16)
    yy, xx = np.mgrid[0:lh, 0:lw].astype(np.float32)
    xx /= lw
    yy /= lh
    c0 = p["c0"].astype(np.float32)
    c1 = p["c1"].astype(np.float32)
    if p["kind"] == "solid":
        t = np.zeros((lh, lw), np.float32)
    elif p["kind"] == "gradient":
        t = xx * math.cos(p["angle"]) + yy * math.sin(p["angle"])
        t = (t - t.min()) / max(1e-6, float(np.ptp(t)))
    elif p["kind"] == "waves":
        t = 0.5 + 0.5 * np.sin(6 * xx + 3 * np.sin(4 * yy + p["angle"]) + p["angle"])
    else:
        n = lr.random((max(2, lh // 4), max(2, lw // 4))).astype(np.float32)
        t = cv2.resize(n, (lw, lh), interpolation=cv2.INTER_CUBIC)
        t = np.clip((t - t.min()) / max(1e-6, float(np.ptp(t))), 0, 1)
    img = c0[None, None, :] * (1 - t[..., None]) + c1[None, None, :] * t[..., None]
    return cv2.resize(np.clip(img, 0, 255).astype(np.uint8), (w, h), interpolation=cv2.INTER_LINEAR)


class _Painter:
    """Draws base-unit geometry on a PIL canvas scaled by `s`."""

    def __init__(self, img: Image.Image, s: float):
        self.img = img
        self.d = ImageDraw.Draw(img)
        self.s = s

    def rect(self, r, fill, outline=None):
        x0, y0, x1, y1 = (v * self.s for v in r)
        if x1 - x0 < 0.5 or y1 - y0 < 0.5:
            return
        self.d.rectangle([x0, y0, max(x0, x1 - 1), max(y0, y1 - 1)], fill=fill, outline=outline)

    def ellipse(self, r, fill):
        x0, y0, x1, y1 = (v * self.s for v in r)
        self.d.ellipse([x0, y0, x1, y1], fill=fill)

    def text(self, xy, s: str, size: float, fill, mono: bool = False, font_pick: int = 0, greek_below: float = 7):
        """Text at base position `xy` with a font of `size` base units; below `greek_below` canvas px it is drawn as
        grey bars (what such text looks like at that size, and much faster)."""
        px = size * self.s
        x, y = xy[0] * self.s, xy[1] * self.s
        if px < 2:
            return
        if px < greek_below:
            cw = 0.55 * px
            for word in s.split(" "):
                wl = len(word) * cw
                if wl > 0:
                    self.d.rectangle([x, y + 0.25 * px, x + wl, y + 0.85 * px], fill=fill)
                x += wl + cw
            return
        fonts = _MONO_FONTS if mono else _SANS_FONTS
        name = _CJK_FONT if "\u3008" in s else fonts[font_pick % len(fonts)]
        self.d.text((x, y), s, font=_font(name, round(px)), fill=fill)


def _draw_other_window(p: _Painter, w: _Window, ui: float, rng: np.random.Generator):
    x0, y0, x1, y1 = w.rect
    bg = (30, 30, 30) if w.dark else (250, 250, 250)
    if w.kind == "terminal":
        bg = (12, 12, 12) if w.dark else (40, 42, 54)
    fg = (220, 220, 220) if (w.dark or w.kind == "terminal") else (40, 40, 40)
    p.rect((x0 - ui, y0 - ui, x1 + ui, y1 + ui), fill=(90, 90, 90))
    p.rect(w.rect, fill=bg)
    th = 30 * ui
    p.rect((x0, y0, x1, y0 + th), fill=(60, 60, 60) if w.dark else (225, 225, 225))
    p.text((x0 + 10 * ui, y0 + 8 * ui), w.title, 13 * ui, fg, font_pick=int(rng.integers(3)))
    line_h = float(rng.uniform(15, 22)) * ui
    y = y0 + th + 6 * ui
    n = 0
    if w.kind in ("code", "terminal", "text", "list"):
        greens = [(120, 220, 120), (230, 200, 120), (150, 180, 255), fg]
        while y + line_h < y1 and n < 28:
            if w.kind == "text":
                s = _words(rng, 3, 12)
                col = fg
            elif w.kind == "list":
                s = _words(rng, 1, 3) + ("    " + str(int(rng.integers(1, 999))) + " KB")
                col = fg
            else:
                s = str(rng.choice(_CODE_LINES))
                if rng.random() < 0.1:
                    s = str(rng.choice(_HARD_NEGATIVES))
                col = greens[int(rng.integers(len(greens)))] if w.kind == "code" else fg
            p.text((x0 + 12 * ui, y), s, line_h * 0.7, col, mono=w.kind in ("code", "terminal"),
                   font_pick=int(rng.integers(3)))
            y += line_h
            n += 1
    elif w.kind == "grid":
        cw = float(rng.uniform(60, 120)) * ui
        yy = y
        while yy < y1 and n < 30:
            p.rect((x0, yy, x1, yy + ui), fill=(200, 200, 200) if not w.dark else (70, 70, 70))
            xx = x0 + 4 * ui
            while xx + cw < x1:
                if rng.random() < 0.7:
                    p.text((xx, yy + 3 * ui), str(rng.choice([_words(rng, 1, 1), str(int(rng.integers(0, 10000)))])),
                           line_h * 0.6, fg)
                xx += cw
            yy += line_h
            n += 1
    else:
        for _ in range(int(rng.integers(2, 7))):
            a = rng.uniform(x0, x1)
            b = rng.uniform(y0 + th, y1)
            p.rect((a, b, a + rng.uniform(0.1, 0.5) * (x1 - x0), b + rng.uniform(0.1, 0.5) * (y1 - y0)),
                   fill=_rgb(rng.uniform(0, 255, 3)))


def _draw_netron_window(p: _Painter, d: _Desktop, rng: np.random.Generator):
    ui = d.ui
    dark = d.theme == "dark"
    x0, y0, x1, y1 = d.window
    chrome_bg = (32, 32, 32) if dark else (235, 235, 235)
    fg = (220, 220, 220) if dark else (30, 30, 30)
    p.rect((x0 - ui, y0 - ui, x1 + ui, y1 + ui), fill=(70, 70, 70) if dark else (150, 150, 150))
    p.rect(d.window, fill=chrome_bg)
    y = y0
    if d.title_h > 0:
        p.rect((x0, y, x1, y + d.title_h), fill=(45, 45, 45) if dark else (222, 222, 222))
        fs = 12.5 * ui
        title = str(rng.choice(["Netron", "model.onnx - Netron", "Netron - " + _words(rng, 1, 1) + ".onnx"]))
        if d.os == "mac":
            for i, c in enumerate([(255, 95, 86), (255, 189, 46), (39, 201, 63)]):
                cx = x0 + (14 + 20 * i) * ui
                p.ellipse((cx - 6 * ui, y + d.title_h / 2 - 6 * ui, cx + 6 * ui, y + d.title_h / 2 + 6 * ui), c)
            p.text(((x0 + x1) / 2 - 3 * fs, y + (d.title_h - fs) / 2), title, fs, fg)
        else:
            p.text((x0 + 12 * ui, y + (d.title_h - fs) / 2), title, fs, fg)
            for i, s in enumerate(["×", "□", "–"]):
                p.text((x1 - (30 + 46 * i) * ui, y + (d.title_h - fs) / 2), s, fs, fg)
        y += d.title_h
    if d.tabs_h > 0:
        p.rect((x0, y, x1, y + d.tabs_h), fill=(28, 28, 28) if dark else (222, 225, 230))
        tx = x0 + (80 if d.os == "mac" and d.title_h == 0 else 8) * ui
        active = int(rng.integers(0, 4))
        for i in range(int(rng.integers(1, 7))):
            tw = float(rng.uniform(140, 240)) * ui
            if tx + tw > x1 - 60 * ui:
                break
            name = "Netron" if i == active else _words(rng, 1, 3).title()
            if i == active:
                p.rect((tx, y + 6 * ui, tx + tw, y + d.tabs_h), fill=(60, 60, 60) if dark else (255, 255, 255))
            p.text((tx + 30 * ui, y + d.tabs_h / 2 - 5 * ui), name, 12 * ui, fg)
            tx += tw
        y += d.tabs_h
    if d.toolbar_h > 0:
        p.rect((x0, y, x1, y + d.toolbar_h), fill=(60, 60, 60) if dark else (255, 255, 255))
        p.rect((x0 + 110 * ui, y + 6 * ui, x1 - 120 * ui, y + d.toolbar_h - 6 * ui),
               fill=(40, 40, 40) if dark else (241, 243, 244))
        url = str(rng.choice(["netron.app", "localhost:8080", "127.0.0.1:8081/", "netron.app/?url=model.onnx"]))
        p.text((x0 + 130 * ui, y + d.toolbar_h / 2 - 7 * ui), url, 14 * ui, fg)
        for i in range(3):
            p.text((x0 + (14 + 30 * i) * ui, y + d.toolbar_h / 2 - 8 * ui), "←→↻"[i], 15 * ui, fg)
        y += d.toolbar_h
    if d.sidebar:
        side, sw = d.sidebar
        sx0 = x1 - ui - sw if side == "right" else x0 + ui
        p.rect((sx0, y, sx0 + sw, y1), fill=(40, 40, 40) if dark else (250, 250, 250))
        p.rect((sx0 if side == "right" else sx0 + sw - ui, y, (sx0 if side == "right" else sx0 + sw - ui) + ui, y1),
               fill=(80, 80, 80) if dark else (210, 210, 210))
        yy = y + 14 * ui
        p.text((sx0 + 14 * ui, yy), str(rng.choice(["Node Properties", "Model Properties", "Connection"])), 15 * ui,
               fg)
        yy += 34 * ui
        rows = ["type", "name", "module", "inputs", "outputs", "ATTRIBUTES", "kernel_shape", "strides", "pads", "axis",
                "format", "producer", "version", "imports", "X", "W", "B", "Y"]
        while yy < y1 - 24 * ui and yy < y + 900 * ui:
            key = str(rng.choice(rows))
            val = str(rng.choice(_HARD_NEGATIVES + [_words(rng, 1, 2), str(int(rng.integers(0, 512)))]))
            p.text((sx0 + 14 * ui, yy), key, 12 * ui, (130, 130, 130))
            p.text((sx0 + 110 * ui, yy), val, 12 * ui, fg, mono=rng.random() < 0.5)
            yy += float(rng.uniform(22, 30)) * ui


def _draw_desktop(d: _Desktop, shot: np.ndarray, s: float, rng: np.random.Generator):
    """Renders the screen at `s` canvas px per base unit. Returns (canvas RGB uint8, A) where A maps screenshot
    pixels to canvas pixels exactly."""
    cw, ch = max(1, round(d.width * s)), max(1, round(d.height * s))
    img = Image.fromarray(_wallpaper(d, cw, ch))
    p = _Painter(img, s)
    ui = d.ui
    for i in range(d.icons):
        x, y = 14 * ui, (d.bar[3] if d.os != "windows" else 0) + (16 + 90 * i) * ui
        p.rect((x + 12 * ui, y, x + 60 * ui, y + 48 * ui), fill=_rgb(rng.uniform(40, 255, 3)))
        p.text((x, y + 54 * ui), _words(rng, 1, 1), 11 * ui, (255, 255, 255))
    for w in d.others:
        _draw_other_window(p, w, ui, rng)
    if d.bar:
        dark_bar = rng.random() < 0.6
        p.rect(d.bar, fill=(25, 25, 30) if dark_bar else (235, 235, 240))
        bc = (230, 230, 230) if dark_bar else (20, 20, 20)
        bx0, by0, bx1, by1 = d.bar
        fs = min(13 * ui, (by1 - by0) * 0.5)
        clock = f"{int(rng.integers(0, 24)):02d}:{int(rng.integers(0, 60)):02d}"
        p.text((bx1 - 90 * ui, by0 + (by1 - by0 - fs) / 2), clock, fs, bc)
        for i in range(int(rng.integers(3, 10))):
            ix = bx0 + (12 + 44 * i) * ui + (0 if d.os != "mac" else 40 * ui)
            if d.os == "mac":
                p.text((ix, by0 + (by1 - by0 - fs) / 2), str(rng.choice(["File", "Edit", "View", "Window", "Help"])),
                       fs, bc)
            else:
                sz = (by1 - by0) * 0.5
                p.rect((ix, by0 + sz / 2, ix + sz, by0 + 1.5 * sz), fill=_rgb(rng.uniform(60, 255, 3)))
    _draw_netron_window(p, d, rng)
    canvas = np.asarray(img).copy()
    sw, sh = d.shot_size
    nw, nh = max(1, round(sw * s)), max(1, round(sh * s))
    px, py = round(d.shot_xy[0] * s), round(d.shot_xy[1] * s)
    if (nw, nh) == (sw, sh):
        small = shot
    else:
        # Prefilter + bilinear: close to INTER_AREA, much faster for non-integer ratios.
        k = sw / nw
        src = cv2.GaussianBlur(shot, (0, 0), 0.5 * math.sqrt(k * k - 1.0)) if k > 1.05 else shot
        small = cv2.resize(src, (nw, nh), interpolation=cv2.INTER_LINEAR)
    # Clip to the canvas (rounding can push the last pixel out).
    w_fit, h_fit = min(nw, cw - px), min(nh, ch - py)
    canvas[py:py + h_fit, px:px + w_fit] = small[:h_fit, :w_fit]
    a = np.array([[nw / sw, 0, px], [0, nh / sh, py], [0, 0, 1.0]])
    return canvas, a


# ---------------------------------------------------------------------------------------------------------------
# Room and monitor
# ---------------------------------------------------------------------------------------------------------------

def _room(w: int, h: int, horizon: float, roll: float, rng: np.random.Generator) -> np.ndarray:
    """Blurry room background at w x h: wall gradient, a light blob, posters/shelves, a desk below `horizon` (y)."""
    lw, lh = max(4, w // 16), max(4, h // 16)
    yy, xx = np.mgrid[0:lh, 0:lw].astype(np.float32)
    xx = xx / lw
    yy = yy / lh
    wall = rng.uniform(0.15, 0.9) * 255 * np.ones(3) + rng.normal(0, 18, 3)
    desk = np.array(
        [[120, 85, 55], [200, 200, 195], [40, 40, 40], [160, 130, 100], [230, 230, 225]][int(rng.integers(5))],
        dtype=np.float64) + rng.normal(0, 10, 3)
    grad = (rng.uniform(-0.4, 0.4) * (xx - 0.5) + rng.uniform(-0.4, 0.2) * (yy - 0.5))[..., None]
    img = wall[None, None, :] * (1 + grad)
    cx, cy = rng.uniform(0, 1, 2)
    blob = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * rng.uniform(0.05, 0.3) ** 2))[..., None]
    img = img + blob * rng.uniform(0, 90)
    for _ in range(int(rng.integers(0, 5))):
        x0, y0 = rng.uniform(0, 1, 2)
        x1, y1 = x0 + rng.uniform(0.05, 0.3), y0 + rng.uniform(0.05, 0.3)
        m = ((xx > x0) & (xx < x1) & (yy > y0) & (yy < y1))[..., None]
        img = np.where(m, rng.uniform(0, 255, 3)[None, None, :], img)
    hy = (horizon / h) + math.tan(roll) * (xx - 0.5) * (w / h)
    img = np.where((yy > hy)[..., None], desk[None, None, :] * (1 + 0.3 * (yy - hy)[..., None]), img)
    img = np.clip(img, 0, 255).astype(np.uint8)
    return cv2.resize(img, (w, h), interpolation=cv2.INTER_LINEAR)


def _fill_quad(img: np.ndarray, pts: np.ndarray, color) -> None:
    shift = 4
    q = np.round(pts * (1 << shift)).astype(np.int64)
    # Keep coordinates in a range OpenCV accepts; far-away vertices only need to be outside the image.
    lim = (1 << shift) * 4 * max(img.shape)
    q = np.clip(q, -lim, lim).astype(np.int32)
    cv2.fillPoly(img, [q.reshape(-1, 1, 2)], _rgb(color), lineType=cv2.LINE_AA, shift=shift)


# ---------------------------------------------------------------------------------------------------------------
# Truth
# ---------------------------------------------------------------------------------------------------------------

def _r2(v: float) -> float:
    r = round(float(v), 2)
    return 0.0 if r == 0 else r  # no "-0.0"


def _clip_box(q: np.ndarray, w: int, h: int) -> tuple[list[float], bool]:
    """Enclosing box of points `q` clipped to the image; also whether clipping changed it."""
    x0, y0 = q.min(axis=0)
    x1, y1 = q.max(axis=0)
    c = [min(max(x0, 0.0), w), min(max(y0, 0.0), h), min(max(x1, 0.0), w), min(max(y1, 0.0), h)]
    clipped = any(abs(a - b) > 0.5 for a, b in zip(c, (x0, y0, x1, y1)))
    return [_r2(v) for v in c], clipped


def _quad_list(q: np.ndarray) -> list[list[float]]:
    return [[_r2(x), _r2(y)] for x, y in q]


def _map_box(obj: dict, key: str, quad_key: str | None, h: np.ndarray, w: int, hh: int) -> None:
    if obj.get(key) is None:
        return
    q = map_points(h, _box_corners(obj[key]))
    obj[key], _ = _clip_box(q, w, hh)
    if quad_key:
        obj[quad_key] = _quad_list(q)


def _map_element(el: dict, h: np.ndarray, w: int, hh: int) -> None:
    """Maps one node / port / tensor: `quad` (from the box when absent) and `box`; node `title_box` (+
    `title_quad`), weight rows `box` (+ `quad`) and `value_box`, attribute rows `box` (+ `quad`)."""
    src = np.asarray(el["quad"], dtype=np.float64) if el.get("quad") else _box_corners(el["box"])
    q = map_points(h, src)
    el["quad"] = _quad_list(q)
    el["box"], clipped = _clip_box(q, w, hh)
    if clipped:
        el["truncated"] = True
    _map_box(el, "title_box", "title_quad", h, w, hh)
    for row in el.get("weights", []):
        _map_box(row, "box", "quad", h, w, hh)
        _map_box(row, "value_box", None, h, w, hh)
    for row in el.get("attributes", []):
        _map_box(row, "box", "quad", h, w, hh)


def element_boxes(truth: dict) -> list[list[float]]:
    """All graph-element boxes of a truth (nodes, inputs, outputs, tensors)."""
    return [el["box"] for k in ("nodes", "inputs", "outputs", "tensors") for el in truth.get(k, [])]


def canvas_box(truth: dict, points_inside=None) -> list[float]:
    """Union of all element boxes and the edge points inside `points_inside` (a box; default: the image), clipped
    to the image; the whole image if there is nothing."""
    w, h = truth["image"]["width"], truth["image"]["height"]
    x0, y0, x1, y1 = points_inside if points_inside is not None else (0.0, 0.0, float(w), float(h))
    pts = [np.asarray(b, dtype=np.float64).reshape(2, 2) for b in element_boxes(truth)]
    for e in truth.get("edges", []):
        if e.get("points"):
            p = np.asarray(e["points"], dtype=np.float64).reshape(-1, 2)
            pts.append(p[(p[:, 0] >= x0) & (p[:, 0] <= x1) & (p[:, 1] >= y0) & (p[:, 1] <= y1)])
    if not pts or sum(len(p) for p in pts) == 0:
        return [0.0, 0.0, float(w), float(h)]
    return _clip_box(np.concatenate(pts), w, h)[0]


def transform_truth(truth: dict, h: np.ndarray, width: int, height: int) -> dict:
    """Maps every geometric annotation of `truth` with homography `h` into an image of `width` x `height`.
    Returns a new dict (`truth` is untouched). `canvas.box` is recomputed as the union of the mapped element boxes
    and of the mapped edge points that were inside the source image."""
    t = copy.deepcopy(truth)
    src_w, src_h = truth["image"]["width"], truth["image"]["height"]
    inside_pts = []
    for e in t.get("edges", []):
        if e.get("points"):
            p = np.asarray(e["points"], dtype=np.float64).reshape(-1, 2)
            inside_pts.append(p[(p[:, 0] >= 0) & (p[:, 0] <= src_w) & (p[:, 1] >= 0) & (p[:, 1] <= src_h)])
            e["points"] = _quad_list(map_points(h, p))
    t["image"] = {"width": int(width), "height": int(height)}
    for k in ("nodes", "inputs", "outputs", "tensors"):
        for el in t.get(k, []):
            _map_element(el, h, width, height)
    scene = t.setdefault("scene", {})
    if scene.get("window_quad"):
        scene["window_quad"] = _quad_list(map_points(h, scene["window_quad"]))
    pts = [np.asarray(b, dtype=np.float64).reshape(2, 2) for b in element_boxes(t)]
    pts += [map_points(h, p) for p in inside_pts if len(p)]
    box = _clip_box(np.concatenate(pts), width, height)[0] if pts else [0.0, 0.0, float(width), float(height)]
    t["canvas"] = {**t.get("canvas", {}), "box": box}
    t["canvas"].setdefault("confidence", 1.0)
    return t


def screenshot_truth(truth: dict) -> dict:
    """The truth of a clean screenshot, in the same form as a photo's: a copy passed through `transform_truth`
    with the identity (so quads, `title_quad` and row quads are filled in), `scene.kind = "screenshot"` and
    `scene.window_quad` = the image corners when absent."""
    w, h = truth["image"]["width"], truth["image"]["height"]
    t = transform_truth(truth, np.eye(3), w, h)
    scene = t.setdefault("scene", {})
    scene["kind"] = "screenshot"
    scene.setdefault("window_quad", _quad_list(_box_corners([0, 0, w, h])))
    return t


def _text_heights(truth: dict, h: np.ndarray) -> np.ndarray:
    """Heights in output px of shape labels (node title text as a fallback) after mapping with `h`: the mean length
    of the quad's left and right sides."""
    boxes = [el["box"] for el in truth.get("tensors", [])]
    factor = 1.0
    if not boxes:
        boxes = [n["title_box"] for n in truth.get("nodes", []) if n.get("title_box")]
        factor = 0.6  # the title bar is taller than its text
    out = []
    for b in boxes:
        if b[3] - b[1] <= 0:
            continue
        q = map_points(h, _box_corners(b))
        out.append(factor * 0.5 * (np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])))
    return np.asarray(out)


# ---------------------------------------------------------------------------------------------------------------
# Photometric degradations
# ---------------------------------------------------------------------------------------------------------------

def _low_res_fields(w: int, h: int, screen_q: np.ndarray, rng: np.random.Generator, params: dict):
    """Multiplicative gain and additive light (in [0, 1] units), smooth fields at 1/8 resolution (lh, lw, 3), and the
    screen-area mask (lh, lw) in [0, 1]."""
    lw, lh = max(4, w // 8), max(4, h // 8)
    yy, xx = np.mgrid[0:lh, 0:lw].astype(np.float32)
    xx = (xx + 0.5) / lw
    yy = (yy + 0.5) / lh
    aspect = w / h
    screen = np.zeros((lh, lw), np.uint8)
    _fill_quad(screen, screen_q * np.array([lw / w, lh / h]), (255,))
    screen = cv2.GaussianBlur(screen.astype(np.float32) / 255.0, (0, 0), 1.0)

    gain = np.ones((lh, lw), np.float32) * params["exposure"]
    ang = rng.uniform(0, 2 * math.pi)
    g = params["exposure_gradient"]
    gain *= 1 + g * ((xx - 0.5) * math.cos(ang) + (yy - 0.5) * math.sin(ang)) * 2
    r2 = ((xx - 0.5) * aspect) ** 2 + (yy - 0.5) ** 2
    gain *= 1 - params["vignette"] * r2 / (0.25 * aspect**2 + 0.25)
    if params["shadow"] > 0:
        cx, cy = rng.uniform(0, 1, 2)
        ax, ay = rng.uniform(0.15, 0.6, 2)
        th = rng.uniform(0, math.pi)
        u = ((xx - cx) * math.cos(th) + (yy - cy) * math.sin(th)) / ax
        v = (-(xx - cx) * math.sin(th) + (yy - cy) * math.cos(th)) / ay
        m = (u**2 + v**2 < 1).astype(np.float32)
        m = cv2.GaussianBlur(m, (0, 0), rng.uniform(1, 4))
        gain *= 1 - params["shadow"] * m
    # Screens seen off-axis lose contrast: handled as a lift on the screen area (added light below).
    add = np.zeros((lh, lw), np.float32)
    if params["glare"] > 0:
        gx, gy = params["glare_xy"]
        rad = params["glare_radius"]
        add += params["glare"] * np.exp(-(((xx - gx) * aspect) ** 2 + (yy - gy) ** 2) / (2 * rad**2)) * (
            0.3 + 0.7 * screen)
    if params["reflection"] > 0:
        th = rng.uniform(0, math.pi)
        for _ in range(int(rng.integers(1, 4))):
            c = rng.uniform(-0.5, 0.5)
            width = rng.uniform(0.03, 0.15)
            d = (xx - 0.5) * math.cos(th) * aspect + (yy - 0.5) * math.sin(th) - c
            add += params["reflection"] * rng.uniform(0.5, 1) * np.exp(-(d**2) / (2 * width**2)) * screen
    add += params["screen_lift"] * screen
    tint = np.asarray(params["white_balance"], np.float32)
    gain3 = gain[..., None] * tint[None, None, :]
    light_tint = np.asarray(params["glare_tint"], np.float32)
    add3 = add[..., None] * light_tint[None, None, :]
    return gain3.astype(np.float32), add3.astype(np.float32), screen


def _moire(hw: int, hh: int, w: int, h: int, h_inv: np.ndarray, screen_lr: np.ndarray, rng: np.random.Generator,
           amp: float, period: float) -> np.ndarray:
    """Coloured interference bands (hh, hw, 3) in [-amp, amp] on the screen area of a w x h photo, at hw x hh: two
    gratings in screen coordinates beating against each other, so the bands follow the perspective. The phase is
    computed at 1/8 resolution (the projective map is smooth) and interpolated."""
    lh, lw = screen_lr.shape
    yy, xx = np.mgrid[0:lh, 0:lw].astype(np.float64)
    pts = np.stack([(xx + 0.5) * (w / lw), (yy + 0.5) * (h / lh)], -1).reshape(-1, 2)
    uv = map_points(h_inv, pts).reshape(lh, lw, 2)
    th = rng.uniform(0, math.pi)
    k = 2 * math.pi / period
    ph = (uv[..., 0] * math.cos(th) + uv[..., 1] * math.sin(th)) * k
    ph2 = (uv[..., 0] * math.cos(th + 0.3) + uv[..., 1] * math.sin(th + 0.3)) * k * rng.uniform(0.3, 0.7)
    phase = np.stack([ph, ph2, screen_lr], -1).astype(np.float32)
    phase = cv2.resize(phase, (hw, hh), interpolation=cv2.INTER_LINEAR)
    p = phase[..., 0] + 0.5 * np.sin(phase[..., 1])
    mask = phase[..., 2] * amp
    return np.stack([np.sin(p) * mask, np.sin(p + 2.1) * mask, np.sin(p + 4.2) * mask], -1)


def _chromatic(img: np.ndarray, shift: float) -> np.ndarray:
    """Lateral chromatic aberration: red scaled up, blue down about the centre so that they are off by `shift`
    px at the corners. Green (which carries most of the luminance) stays put."""
    h, w = img.shape[:2]
    rad = math.hypot(w / 2, h / 2)
    out = img.copy()
    for ch, sgn in ((0, 1), (2, -1)):
        k = 1 + sgn * shift / rad
        m = np.array([[k, 0, (1 - k) * (w - 1) / 2], [0, k, (1 - k) * (h - 1) / 2]], np.float32)
        out[..., ch] = cv2.warpAffine(img[..., ch], m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return out


def _motion_kernel(length: float, angle: float) -> np.ndarray:
    n = int(math.ceil(length)) | 1
    k = np.zeros((n, n), np.float32)
    c = (n - 1) / 2
    for t in np.linspace(-length / 2, length / 2, max(2, int(length * 3))):
        x, y = c + t * math.cos(angle), c + t * math.sin(angle)
        k[int(round(y)), int(round(x))] += 1
    return k / k.sum()


def _light_noise_jpeg(photo: np.ndarray, scr_out: np.ndarray, out_to_base: np.ndarray, rng: np.random.Generator,
                      params: dict) -> bytes:
    """Applies lighting (gain field), additive light + moiré + sensor noise, and JPEG-encodes. `photo` is RGB uint8.
    The smooth fields are built at low resolution and the additive ones summed at half resolution; both are
    quantized to uint8 (gain in 1/128 steps, additive offset by 128) so that the full-resolution work is two uint8
    resizes, one multiply and one saturating add."""
    h, w = photo.shape[:2]
    gain_lr, add_lr, screen_lr = _low_res_fields(w, h, scr_out, rng, params)
    hw, hh = max(2, w // 2), max(2, h // 2)
    add = cv2.resize(add_lr, (hw, hh), interpolation=cv2.INTER_LINEAR)
    # Local signal level (smooth), for the moiré (a modulation of the screen's light) and the shot noise.
    lh, lw = gain_lr.shape[:2]
    level = cv2.resize(photo, (lw, lh), interpolation=cv2.INTER_AREA).astype(np.float32) * (1.0 / 255.0) * gain_lr
    level = cv2.resize(np.clip(level, 0, 1), (hw, hh), interpolation=cv2.INTER_LINEAR)
    if params["moire"] > 0:
        m = _moire(hw, hh, w, h, out_to_base, screen_lr, rng, params["moire"], params["moire_period"])
        add += m * (0.1 + level)
    # Sensor noise: read noise + shot noise that grows with the signal, drawn at half resolution (demosaicing
    # correlates neighbouring pixels).
    sd = np.sqrt(params["noise_read"] ** 2 + params["noise_shot"] ** 2 * level).astype(np.float32)
    noise = np.empty((hh, hw, 3), np.float32)
    cv2.setRNGSeed(int(rng.integers(1, 2**31)))
    cv2.randn(noise, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    cv2.multiply(noise, sd, dst=noise)
    cv2.add(add, noise, dst=add)
    add_u8 = cv2.addWeighted(add, 255.0, add, 0.0, 128.0, dtype=cv2.CV_8U)
    gain_u8 = cv2.addWeighted(gain_lr, 128.0, gain_lr, 0.0, 0.0, dtype=cv2.CV_8U)
    gain_full = cv2.resize(gain_u8, (w, h), interpolation=cv2.INTER_LINEAR)
    add_full = cv2.resize(add_u8, (w, h), interpolation=cv2.INTER_LINEAR)
    lit = cv2.multiply(photo, gain_full, scale=1.0 / 128.0)
    out = cv2.addWeighted(lit, 1.0, add_full, 1.0, -128.0)
    ok, enc = cv2.imencode(".jpg", cv2.cvtColor(out, cv2.COLOR_RGB2BGR),
                           [cv2.IMWRITE_JPEG_QUALITY, int(params["jpeg_quality"])])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return enc.tobytes()


# ---------------------------------------------------------------------------------------------------------------
# Main entry points
# ---------------------------------------------------------------------------------------------------------------

def sample_strength(rng: np.random.Generator) -> float:
    """Overall degradation strength in [0, 1]: some near-clean photos, most moderate, a few hard."""
    u = rng.random()
    if u < 0.15:
        return float(rng.uniform(0.0, 0.25))
    if u < 0.85:
        return float(rng.uniform(0.25, 0.75))
    return float(rng.uniform(0.75, 1.0))


def simulate(screenshot: Image.Image, truth: dict, rng: np.random.Generator, strength: float | None = None):
    """Photographs `screenshot` (RGB, the image `truth` describes) on a monitor.

    Returns `(photo, truth_photo)`: an RGB PIL image (already JPEG-compressed once; its encoded bytes are in
    `photo.info["jpeg_bytes"]` so that a writer can store them without recompressing) and the schema-v1 truth in
    photo pixels with `scene.kind = "photo"` and the simulator parameters in `scene.camera`.
    `strength` in [0, 1] scales every degradation (None: sampled). Deterministic for a given `rng` state.
    """
    cv2.setNumThreads(1)
    s = sample_strength(rng) if strength is None else float(min(max(strength, 0.0), 1.0))
    shot = np.asarray(screenshot.convert("RGB"))
    sh_h, sh_w = shot.shape[:2]
    if (truth["image"]["width"], truth["image"]["height"]) != (sh_w, sh_h):
        raise ValueError(f"truth image size {truth['image']} does not match screenshot {sh_w}x{sh_h}")
    scene = truth.get("scene", {})
    dsf = float(scene.get("device_scale", 1.0) or 1.0)
    theme = str(scene.get("theme", "light"))

    desk = _layout_desktop(sh_w, sh_h, dsf, theme, rng)
    shot_to_base = _translate(*desk.shot_xy)
    content = truth.get("canvas", {}).get("box") or canvas_box(truth)
    if content[2] - content[0] < 4 or content[3] - content[1] < 4:
        content = [0.0, 0.0, float(sh_w), float(sh_h)]
    content_base = map_points(shot_to_base, _box_corners(content))
    center = content_base.mean(axis=0)
    unit = max(content[2] - content[0], content[3] - content[1], 0.3 * max(sh_w, sh_h))

    # Photo size and orientation: portrait is likelier for tall content.
    sizes = [sz for sz, _ in PHOTO_SIZES]
    weights = np.array([wt for _, wt in PHOTO_SIZES])
    out_w, out_h = sizes[int(rng.choice(len(sizes), p=weights / weights.sum()))]
    tall = (content[3] - content[1]) > 1.2 * (content[2] - content[0])
    if rng.random() < (0.45 if tall else 0.08):
        out_w, out_h = out_h, out_w

    # Framing: the photographer aims at the graph, the Netron window or the whole monitor. The camera distance
    # follows from the lens's field of view (main camera, sometimes 2x/3x tele) so that perspective is as strong as
    # a real phone makes it at that framing.
    screen_corners = _box_corners([0, 0, desk.width, desk.height])
    bezel = float(rng.uniform(0.008, 0.04)) * desk.width
    chin = bezel * float(rng.uniform(1.0, 3.0))
    outer = _box_corners([-bezel, -bezel, desk.width + bezel, desk.height + chin])
    target = str(rng.choice(["content", "window", "monitor"], p=[0.4, 0.4, 0.2]))
    target_base = {"content": content_base, "window": _box_corners(desk.window), "monitor": outer}[target]
    fill = float(rng.uniform(0.55, 1.0)) if target == "content" else float(rng.uniform(0.8, 1.1))
    half_fov_tan = 0.62 / float(rng.choice([1.0, 2.0, 3.0], p=[0.75, 0.2, 0.05]))
    extent = max(float(np.ptp(target_base[:, 0])), float(np.ptp(target_base[:, 1])) * out_w / out_h) / unit
    dist0 = extent / (2 * half_fov_tan * fill)

    # Camera pose: moderate perspective, a few degrees of roll, sometimes up to 15.
    ang = math.radians
    for attempt in range(6):
        damp = 0.6**attempt
        yaw = ang(float(np.clip(rng.normal(0, 4 + 10 * s), -28, 28))) * damp
        pitch = ang(float(np.clip(rng.normal(0, 3 + 8 * s), -22, 22))) * damp
        roll = ang(float(rng.normal(0, 1 + 2 * s)) if rng.random() > 0.15 * (0.3 + s) else float(rng.uniform(-15, 15)))
        dist = dist0 * float(rng.uniform(0.9, 1.1))
        h0 = _plane_homography(center, unit, yaw, pitch, roll, dist)
        if _depths(h0, np.concatenate([outer, screen_corners])).min() > 0.25 * dist:
            break
    else:
        yaw = pitch = 0.0
        h0 = _plane_homography(center, unit, yaw, pitch, roll, dist)

    # Scale and position: the target fills `fill` of the photo, but the graph content always fits with a margin;
    # text size and a zoom limit then adjust the scale.
    q = map_points(h0, content_base)
    margin = 0.02 * min(out_w, out_h)

    def fit(pts: np.ndarray) -> float:
        bw, bh = max(float(np.ptp(pts[:, 0])), 1e-9), max(float(np.ptp(pts[:, 1])), 1e-9)
        return min((out_w - 2 * margin) / bw, (out_h - 2 * margin) / bh)

    s_max = fit(q)
    tq = map_points(h0, target_base)
    scale = min(fill * fit(tq), s_max)
    mag0 = _local_scale(h0, center)
    th0 = _text_heights(truth, np.eye(3))
    text_base = float(np.median(th0)) if th0.size else 14.0 * dsf
    min_text = MIN_TEXT_PX if rng.random() < 0.7 else HARD_MIN_TEXT_PX
    s_text = min_text / max(1e-9, mag0 * text_base)
    scale = max(scale, min(s_text, s_max))
    scale = min(scale, MAX_ZOOM / mag0)
    # Centre the target (with jitter), then shift as little as needed for the content to fit.
    x_lo, x_hi = margin - scale * q[:, 0].min(), out_w - margin - scale * q[:, 0].max()
    y_lo, y_hi = margin - scale * q[:, 1].min(), out_h - margin - scale * q[:, 1].max()
    tx = out_w / 2 - scale * (tq[:, 0].min() + tq[:, 0].max()) / 2 + rng.normal(0, 0.05 * out_w)
    ty = out_h / 2 - scale * (tq[:, 1].min() + tq[:, 1].max()) / 2 + rng.normal(0, 0.05 * out_h)
    tx = float(np.clip(tx, x_lo, x_hi)) if x_lo <= x_hi else (x_lo + x_hi) / 2
    ty = float(np.clip(ty, y_lo, y_hi)) if y_lo <= y_hi else (y_lo + y_hi) / 2
    base_to_out = np.array([[scale, 0, tx], [0, scale, ty], [0, 0, 1.0]]) @ h0

    # Internal supersampled resolution (resize blur), sometimes lower (digital zoom softness).
    r = float(rng.choice([1.0, 1.25, 1.5, 2.0], p=[0.25, 0.3, 0.3, 0.15]))
    if rng.random() < 0.12 * s:
        r = float(rng.uniform(0.6, 0.9))
        if scale * mag0 * text_base * r < 9.0:  # the upsampling would make the labels unreadable
            r = 1.0
    r = min(r, math.sqrt(MAX_INTERNAL_PIXELS / (out_w * out_h)))
    in_w, in_h = max(1, round(out_w * r)), max(1, round(out_h * r))
    out_to_int = _scale(in_w / out_w, in_h / out_h)
    base_to_int = out_to_int @ base_to_out

    # Screen canvas resolution: about what the photo resolves, at most 1 px per base unit.
    mag_int = _local_scale(base_to_int, center)
    s1 = min(1.0, 1.3 * mag_int, math.sqrt(MAX_CANVAS_PIXELS / (desk.width * desk.height)))
    s1 = max(s1, 0.05)
    canvas, shot_to_canvas = _draw_desktop(desk, shot, s1, rng)
    canvas_to_int = base_to_int @ _scale(1.0 / s1)
    h_total = np.linalg.inv(out_to_int) @ canvas_to_int @ shot_to_canvas  # screenshot px -> photo px

    # Room and monitor at internal resolution, then the screen warped on top.
    mon_out = map_points(canvas_to_int, outer * s1)
    scr_int = map_points(canvas_to_int, screen_corners * s1)
    horizon = float(mon_out[2:, 1].max()) + rng.uniform(-0.05, 0.2) * in_h
    photo = _room(in_w, in_h, horizon, roll, rng)
    neck_w = desk.width * rng.uniform(0.05, 0.12)
    stand = _box_corners([desk.width / 2 - neck_w / 2, desk.height + chin, desk.width / 2 + neck_w / 2,
                          desk.height + chin + desk.height * rng.uniform(0.1, 0.3)])
    if _depths(base_to_int, stand).min() > 0:
        _fill_quad(photo, map_points(canvas_to_int, stand * s1), rng.uniform(20, 80, 3))
    bezel_col = rng.uniform(8, 45) * np.ones(3) if rng.random() < 0.8 else rng.uniform(140, 200) * np.ones(3)
    _fill_quad(photo, mon_out, bezel_col)
    m_c = _translate(-0.5, -0.5) @ canvas_to_int @ _translate(0.5, 0.5)  # pixel-centre convention for OpenCV
    cv2.warpPerspective(canvas, m_c, (in_w, in_h), dst=photo, flags=cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_TRANSPARENT)
    if (in_w, in_h) == (2 * out_w, 2 * out_h):
        photo = cv2.resize(photo, (out_w, out_h), interpolation=cv2.INTER_AREA)  # exact 2x2 box filter, fast path
    elif in_w > out_w:
        # Box-like prefilter then bilinear: close to INTER_AREA for non-integer ratios and 3x faster.
        photo = cv2.GaussianBlur(photo, (0, 0), 0.5 * math.sqrt(r * r - 1.0))
        photo = cv2.resize(photo, (out_w, out_h), interpolation=cv2.INTER_LINEAR)
    elif in_w < out_w:
        photo = cv2.resize(photo, (out_w, out_h), interpolation=cv2.INTER_LINEAR)
    scr_out = map_points(np.linalg.inv(out_to_int), scr_int)

    # Readability caps from the on-photo text height.
    th = _text_heights(truth, h_total)
    text_h = float(np.median(th)) if th.size else 11 * dsf * _local_scale(h_total, center)
    sigma = float(rng.uniform(0.0, 1.8)) * s if rng.random() < 0.8 else 0.0
    motion = float(rng.uniform(1.5, 8.0)) * s if rng.random() < 0.35 * s else 0.0
    blur_budget = BLUR_SIGMA_PER_TEXT_PX * text_h
    soft = math.hypot(sigma, motion / 3.0)
    if soft > blur_budget and soft > 0:
        sigma *= blur_budget / soft
        motion *= blur_budget / soft
    motion = min(motion, MOTION_LEN_PER_TEXT_PX * text_h)
    motion_angle = float(rng.uniform(0, math.pi))

    params = {
        "exposure": float(np.clip(math.exp(rng.normal(0, 0.08 + 0.15 * s)), 0.65, 1.4)),
        "exposure_gradient": float(rng.uniform(0, 0.3 * s)),
        "white_balance": [float(math.exp(rng.normal(0, 0.03 + 0.06 * s))), 1.0,
                          float(math.exp(rng.normal(0, 0.03 + 0.08 * s)))],
        "vignette": float(rng.uniform(0, 0.45 * s)),
        "shadow": float(rng.uniform(0.1, 0.4) * s) if rng.random() < 0.35 * s else 0.0,
        "glare": float(rng.uniform(0.05, 0.45) * s) if rng.random() < 0.5 else 0.0,
        "glare_xy": [float(v) for v in rng.uniform(0.1, 0.9, 2)],
        "glare_radius": float(rng.uniform(0.08, 0.4)),
        "glare_tint": [float(v) for v in 1 + rng.normal(0, 0.05, 3)],
        "reflection": float(rng.uniform(0.03, 0.15) * s) if rng.random() < 0.4 * (0.3 + s) else 0.0,
        "screen_lift": float(rng.uniform(0, 0.12 * s)),
        "moire": float(rng.uniform(0.01, 0.05) * (0.3 + 0.7 * s)) if rng.random() < 0.5 else 0.0,
        "moire_period": float(rng.uniform(8, 40)),
        "chromatic": float(rng.uniform(0.2, 1.8) * s) if rng.random() < 0.4 else 0.0,
        "defocus_sigma": sigma,
        "motion_length": motion,
        "motion_angle": motion_angle,
        "noise_read": float(rng.uniform(0.002, 0.01 + 0.025 * s)),
        "noise_shot": float(rng.uniform(0.0, 0.03 * s)),
        "jpeg_quality": int(rng.integers(round(94 - 40 * s), 96)),
    }

    if params["chromatic"] > 0.05:
        photo = _chromatic(photo, params["chromatic"])
    if sigma > 0.15:
        photo = cv2.GaussianBlur(photo, (0, 0), sigma)
    if motion > 1.0:
        photo = cv2.filter2D(photo, -1, _motion_kernel(motion, motion_angle), borderType=cv2.BORDER_REFLECT)

    jpeg = _light_noise_jpeg(photo, scr_out, np.linalg.inv(base_to_out), rng, params)
    result = Image.open(io.BytesIO(jpeg))  # decoded lazily: a writer that stores jpeg_bytes never pays for it
    result.info["jpeg_bytes"] = jpeg

    t = transform_truth(truth, h_total, out_w, out_h)
    sc = t.setdefault("scene", {})
    sc["kind"] = "photo"
    if not truth.get("scene", {}).get("window_quad"):
        sc["window_quad"] = _quad_list(map_points(h_total, _box_corners([0, 0, sh_w, sh_h])))
    rounded = {k: ([round(x, 4) for x in v] if isinstance(v, list) else (round(v, 4) if isinstance(v, float) else v))
               for k, v in params.items()}
    sc["camera"] = {
        "strength": round(s, 4),
        "size": [out_w, out_h],
        "supersample": round(r, 4),
        "yaw_deg": round(math.degrees(yaw), 3),
        "pitch_deg": round(math.degrees(pitch), 3),
        "roll_deg": round(math.degrees(roll), 3),
        "distance": round(dist, 4),
        "half_fov_tan": round(half_fov_tan, 4),
        "fill": round(fill, 4),
        "framing": target,
        "text_height_px": round(text_h, 3),
        "screen_scale": round(s1, 4),
        "os": desk.os,
        "chrome": desk.chrome,
        "sidebar": desk.sidebar[0] if desk.sidebar else None,
        "other_windows": len(desk.others),
        "monitor_quad": _quad_list(scr_out),
        "homography": [[float(f"{v:.10g}") for v in row] for row in (h_total / h_total[2, 2])],
        **rounded,
    }
    return result, t
