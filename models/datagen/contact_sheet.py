"""Contact sheet: a grid of random scenes (photos and screenshots alternately) with their truth drawn on top, to check
by eye that annotations line up with the pixels after the camera transform.

Colours: node quad red, node title orange (op name written above it), weight rows magenta, inputs blue, outputs
cyan, tensor labels green (text written below), edges yellow polylines (endpoints dotted), canvas grey.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

COLORS = {
    "node": (230, 30, 30),
    "title": (255, 150, 0),
    "weight": (220, 0, 220),
    "input": (30, 80, 255),
    "output": (0, 200, 220),
    "tensor": (0, 170, 0),
    "edge": (240, 210, 0),
    "canvas": (150, 150, 150),
}
_FONT = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
_FONT_FALLBACK = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _font(size: int):
    for f in (_FONT, _FONT_FALLBACK):
        try:
            return ImageFont.truetype(f, size)
        except OSError:
            continue
    return ImageFont.load_default()


def _poly(el: dict, s: float) -> list[tuple[float, float]]:
    if el.get("quad"):
        return [(x * s, y * s) for x, y in el["quad"]]
    x0, y0, x1, y1 = (v * s for v in el["box"])
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def _box_poly(b, s: float) -> list[tuple[float, float]]:
    x0, y0, x1, y1 = (v * s for v in b)
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def content_region(truth: dict, pad: float = 0.25, min_frac: float = 0.35) -> tuple[int, int, int, int]:
    """The canvas box padded by `pad` of its size, at least `min_frac` of the image per axis, inside the image."""
    iw, ih = truth["image"]["width"], truth["image"]["height"]
    x0, y0, x1, y1 = truth["canvas"]["box"]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    w = min(iw, max((x1 - x0) * (1 + 2 * pad), min_frac * iw))
    h = min(ih, max((y1 - y0) * (1 + 2 * pad), min_frac * ih))
    left = min(max(0.0, cx - w / 2), iw - w)
    top = min(max(0.0, cy - h / 2), ih - h)
    return int(left), int(top), int(round(left + w)), int(round(top + h))


def draw_tile(image: Image.Image, truth: dict, width: int, height: int, caption: str,
              region: tuple[int, int, int, int] | None = None) -> Image.Image:
    """`region` of the image (default: all of it) letterboxed into width x height, with the truth drawn at tile
    resolution."""
    rx, ry, rx1, ry1 = region or (0, 0, image.width, image.height)
    iw, ih = rx1 - rx, ry1 - ry
    s = min(width / iw, (height - 16) / ih)
    tile = Image.new("RGB", (width, height), (24, 24, 24))
    small = image.convert("RGB").crop((rx, ry, rx1, ry1)).resize(
        (max(1, round(iw * s)), max(1, round(ih * s))), Image.Resampling.LANCZOS)
    ox, oy = (width - small.width) // 2 - rx * s, 16 - ry * s
    tile.paste(small, (round(ox + rx * s), round(oy + ry * s)))
    layer = Image.new("RGBA", tile.size, (0, 0, 0, 0))
    d = ImageDraw.Draw(layer)
    font = _font(9)

    def off(pts):
        return [(x + ox, y + oy) for x, y in pts]

    d.polygon(off(_box_poly(truth["canvas"]["box"], s)), outline=COLORS["canvas"] + (255,))
    for e in truth.get("edges", []):
        pts = off([(x * s, y * s) for x, y in e.get("points", [])])
        if len(pts) > 1:
            d.line(pts, fill=COLORS["edge"] + (230,), width=1)
        for p in pts[:1] + pts[-1:]:
            d.ellipse([p[0] - 2, p[1] - 2, p[0] + 2, p[1] + 2], fill=COLORS["edge"] + (255,))
    for n in truth.get("nodes", []):
        d.polygon(off(_poly(n, s)), outline=COLORS["node"] + (255,))
        if n.get("title_box"):
            tq = n.get("title_quad")
            d.polygon(off([(x * s, y * s) for x, y in tq] if tq else _box_poly(n["title_box"], s)),
                      outline=COLORS["title"] + (255,))
        for w in n.get("weights", []):
            if w.get("box"):
                wq = w.get("quad")
                d.polygon(off([(x * s, y * s) for x, y in wq] if wq else _box_poly(w["box"], s)),
                          outline=COLORS["weight"] + (200,))
        x0, y0 = n["box"][0] * s + ox, n["box"][1] * s + oy
        d.text((x0, y0 - 10), str(n.get("op")), fill=COLORS["title"] + (255,), font=font)
    for kind, group in (("input", "inputs"), ("output", "outputs")):
        for p in truth.get(group, []):
            d.polygon(off(_poly(p, s)), outline=COLORS[kind] + (255,))
            d.text((p["box"][0] * s + ox, p["box"][3] * s + oy), str(p.get("name", ""))[:20],
                   fill=COLORS[kind] + (255,), font=font)
    for t in truth.get("tensors", []):
        d.polygon(off(_poly(t, s)), outline=COLORS["tensor"] + (255,))
        d.text((t["box"][0] * s + ox, t["box"][3] * s + oy), str(t.get("text", "")), fill=COLORS["tensor"] + (255,),
               font=font)
    tile = Image.alpha_composite(tile.convert("RGBA"), layer).convert("RGB")
    ImageDraw.Draw(tile).text((4, 2), caption, fill=(255, 255, 255), font=_font(11))
    return tile


def make_sheet(data: Path, out: Path, n: int = 16, seed: int = 0, tile: tuple[int, int] = (640, 480),
               cols: int = 4, full: bool = False) -> int:
    """Writes a contact sheet of `n` random complete scenes of `data` to `out` (alternating photo / screenshot),
    each tile cropped around the graph content (`full`: the whole image). Returns the number of tiles drawn."""
    scenes_dir = Path(data) / "scenes"
    ids = sorted(p.name.split(".")[0] for p in scenes_dir.glob("*.photo.json"))
    if not ids:
        raise FileNotFoundError(f"no scenes in {scenes_dir}")
    rng = random.Random(seed)
    picks = [ids[i] for i in rng.sample(range(len(ids)), min(n, len(ids)))] if len(ids) >= n else \
        [ids[i % len(ids)] for i in range(n)]
    tiles = []
    for i, sid in enumerate(picks):
        kind = ("photo", "jpg") if i % 2 == 0 else ("shot", "png")
        truth = json.loads((scenes_dir / f"{sid}.{kind[0]}.json").read_text("utf-8"))
        image = Image.open(scenes_dir / f"{sid}.{kind[0]}.{kind[1]}")
        sc = truth.get("scene", {})
        cam = sc.get("camera", {})
        caption = f"{sid} {kind[0]} {truth['image']['width']}x{truth['image']['height']} {sc.get('theme', '')}"
        if cam:
            caption += f" s={cam.get('strength')} roll={cam.get('roll_deg')} text={cam.get('text_height_px')}px"
        region = None if full else content_region(truth)
        tiles.append(draw_tile(image, truth, tile[0], tile[1], caption, region))
    rows = (len(tiles) + cols - 1) // cols
    sheet = Image.new("RGB", (cols * tile[0], rows * tile[1]), (0, 0, 0))
    for i, t in enumerate(tiles):
        sheet.paste(t, ((i % cols) * tile[0], (i // cols) * tile[1]))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)
    return len(tiles)
