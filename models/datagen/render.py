"""Render ONNX models in the real Netron app (netron==9.3.3, Debian's /usr/bin/chromium, Playwright) and read exact
ground truth from the live page.

Contract
- `Renderer(workdir)` starts ONE `netron.serve` (127.0.0.1, free port) for `workdir/served/` and ONE Chromium, and
  reuses both for every scene. Use it as a context manager (or call `close()`).
- `Renderer.render(model, options, scene_id) -> (PIL.Image RGB, truth dict)`: the screenshot is the full viewport at
  `options.viewport` CSS px × `options.device_scale`; truth is schema-v1 graph JSON (docs/graph-json.md) in screenshot
  pixels (CSS px × devicePixelRatio); optional `focus=` centres the view on a named element instead of
  `options.pan` (for real models, see the method doc). Floats are rounded to 2 decimals and ids are assigned in a
  deterministic order (sorted by box top, then left), so the same model and options give byte-identical
  `truth_json(truth)`.
- Any failure of one scene (Netron error dialog, layout timeout, crash, nothing visible, graph too large) raises
  `RenderError`; the renderer stays usable (the page is reloaded or the browser restarted transparently).
- `sample_options(rng)` draws render options with the distributions documented on it.

Truth fields beyond the schema's required ones (all boxes clipped to the graph area of the image; an element less
than 30% visible is left out, a clipped one has `truncated: true`):
- node: `quad`, `title_box` (the coloured header; absent when the header is not visible), `title_truncated`,
  `title_text` (text drawn in the header: the op type, or the ONNX node name in names mode), `name` (ONNX node
  name), `category` (Netron's header category, lower case, "none" for none), `weights[]` rows
  `{name, text, shape, box, value_box, truncated, tensor (initializer name), row_text (as drawn, "W〈16×3×3×3〉")}`
  where `text` is the value without brackets and `shape` is null for value rows (`B = 0.5`), and `attributes[]`
  rows `{name, text, box, truncated, row_text}` for `kernel_shape = 3, 3` rows (and Netron's `〈…〉` hidden-weights
  row, name "〈…〉", text "").
- inputs/outputs: `quad`, `truncated`; `name` is the pill text as drawn.
- tensors (one per drawn edge label; a label may be present without its edge): `quad`, `truncated`, `name` (ONNX
  tensor name); `shape` is null in names mode.
- edges (only when both endpoints are in the truth): `name` (ONNX tensor), `points` (the drawn curve, source to
  target, about every 8 px; endpoints on the element boxes' borders; may run outside the image).
- canvas.box: union of all element boxes and the visible points of every drawn edge (also edges left out).
- scene: `id`, `kind` ("screenshot"), `generator_version`, `renderer`, `theme`, `weights`, `attributes`, `names`,
  `direction`, `zoom`, `device_scale`, `viewport` [w, h] CSS px, `pan`, `scroll` (CSS px), `graph_size` (CSS px at
  zoom 1), `label_font_px` (edge-label font size in image px), `ui_boxes` (Netron's menu button and zoom toolbar
  buttons, drawn over the graph: elements under them are partly hidden), `options` (the RenderOptions as a dict),
  and `focus` {name, shift} only when a focus was given.
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import io
import json
import logging
import math
import random
import re
import time
from pathlib import Path
from typing import Any

import onnx
from PIL import Image

CHROMIUM = Path("/usr/bin/chromium")
PAGE_SCRIPT = Path(__file__).with_name("netron_page.js")
GENERATOR_VERSION = "1"
NETRON_VERSION = "9.3.3"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# Elements with less than this visible fraction (of their box area) are left out of the truth.
MIN_VISIBLE = 0.3
# Sampling step along edge curves, in screenshot pixels.
EDGE_STEP_PX = 8.0
# Netron's edge-label font size (grapher.css `.edge-label`), CSS px at zoom 1.
LABEL_FONT_CSS_PX = 10.0
THEMES = ("light", "dark")
DIRECTIONS = ("vertical", "horizontal")
DEVICE_SCALES = (1.0, 1.25, 1.5, 2.0)
COMMON_VIEWPORTS = (
    (1920, 1080), (1920, 969), (1600, 900), (1536, 864), (1440, 900),
    (1366, 768), (1280, 800), (1680, 1050), (1920, 1200), (1280, 720),
)


class RenderError(Exception):
    """One scene could not be rendered; the caller may skip it. The renderer remains usable."""


@dataclasses.dataclass(frozen=True)
class RenderOptions:
    """How one scene is shown.

    theme: "light" | "dark" (via prefers-color-scheme). weights / attributes / names / direction: Netron's view
    options (names replaces shape labels and node titles with ONNX names). viewport: (width, height) in CSS px.
    device_scale: devicePixelRatio. zoom: scale of the graph relative to Netron's natural size (1.0), applied without
    Netron's clamp, in (0, 2]. pan: (x, y) fractions in [0, 1] of the container's scroll range (0 = left/top edge of
    the canvas visible); only matters when the zoomed graph is larger than the viewport.
    """

    theme: str = "light"
    weights: bool = True
    attributes: bool = False
    names: bool = False
    direction: str = "vertical"
    viewport: tuple[int, int] = (1600, 1000)
    device_scale: float = 1.0
    zoom: float = 1.0
    pan: tuple[float, float] = (0.5, 0.0)

    def validate(self) -> None:
        if self.theme not in THEMES:
            raise ValueError(f"theme must be one of {THEMES}, got {self.theme!r}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {self.direction!r}")
        w, h = self.viewport
        if not (200 <= int(w) <= 4096 and 200 <= int(h) <= 4096):
            raise ValueError(f"viewport out of range: {self.viewport}")
        if not 0.5 <= self.device_scale <= 4:
            raise ValueError(f"device_scale out of range: {self.device_scale}")
        if not 0.01 < self.zoom <= 2.0:
            raise ValueError(f"zoom out of range: {self.zoom}")
        if not all(0.0 <= p <= 1.0 for p in self.pan):
            raise ValueError(f"pan must be fractions in [0, 1]: {self.pan}")

    def label_font_px(self) -> float:
        """Edge-label font size in screenshot pixels (digits are about 0.7 of it tall)."""
        return LABEL_FONT_CSS_PX * self.zoom * self.device_scale


def sample_options(rng: random.Random) -> RenderOptions:
    """Draw render options. Mostly Netron's defaults (light 75%, weights on 85%, attributes on 20%, names on 10%,
    vertical 85%); viewport half from common window sizes, half uniform 1000–1920 × 700–1200; device scale
    1 / 1.25 / 1.5 / 2 with 45/20/15/20%.

    Zoom is drawn through the edge-label font size in screenshot pixels F = 10 × zoom × device_scale so that text
    mostly stays readable: F in [7, 20] 80% of the time, [4.5, 7] 12%, tiny [2.5, 4.5] 8%; zoom is then clamped to
    Netron's own range [0.15, 1.4]. Pan: x near the centre (0.5 ± 0.15) 60% else uniform; y at the top 50% (where
    Netron opens a model) else uniform; swapped for horizontal layouts. Large zooms and off-centre pans give views
    that cut the graph at the viewport edges.
    """
    theme = "dark" if rng.random() < 0.25 else "light"
    weights = rng.random() < 0.85
    attributes = rng.random() < 0.20
    names = rng.random() < 0.10
    direction = "horizontal" if rng.random() < 0.15 else "vertical"
    if rng.random() < 0.5:
        viewport = rng.choice(COMMON_VIEWPORTS)
    else:
        viewport = (rng.randint(1000, 1920), rng.randint(700, 1200))
    device_scale = rng.choices(DEVICE_SCALES, weights=(0.45, 0.20, 0.15, 0.20))[0]
    r = rng.random()
    if r < 0.80:
        font = rng.uniform(7.0, 20.0)
    elif r < 0.92:
        font = rng.uniform(4.5, 7.0)
    else:
        font = rng.uniform(2.5, 4.5)
    zoom = min(1.4, max(0.15, font / (LABEL_FONT_CSS_PX * device_scale)))
    along = 0.0 if rng.random() < 0.5 else rng.random()
    across = min(1.0, max(0.0, rng.gauss(0.5, 0.15))) if rng.random() < 0.6 else rng.random()
    pan = (across, along) if direction == "vertical" else (along, across)
    return RenderOptions(
        theme=theme,
        weights=weights,
        attributes=attributes,
        names=names,
        direction=direction,
        viewport=(int(viewport[0]), int(viewport[1])),
        device_scale=device_scale,
        zoom=round(zoom, 4),
        pan=(round(pan[0], 4), round(pan[1], 4)),
    )


def truth_json(truth: dict) -> str:
    """Canonical serialisation of a truth dict (sorted keys; floats are already rounded by `render`)."""
    return json.dumps(truth, sort_keys=True, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------------------
# Geometry helpers (pure functions; image pixels unless stated).


def _r(v: float) -> float:
    r = round(float(v), 2)
    return 0.0 if r == 0 else r  # no "-0.0"


def _rbox(b) -> list[float]:
    return [_r(v) for v in b]


def _scale(b, s: float) -> list[float]:
    return [v * s for v in b]


def _intersect(a, b):
    x0, y0, x1, y1 = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    if x1 <= x0 or y1 <= y0:
        return None
    return [x0, y0, x1, y1]


def _area(b) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def clip_box(box, clip, min_visible: float = MIN_VISIBLE):
    """Clip `box` to `clip`. Returns (clipped box, truncated) or None when under `min_visible` of it is visible."""
    area = _area(box)
    if area <= 0:
        return None
    inter = _intersect(box, clip)
    if inter is None or _area(inter) / area < min_visible:
        return None
    truncated = any(abs(p - q) > 0.5 for p, q in zip(inter, box))
    return inter, truncated


def _quad(b) -> list[list[float]]:
    x0, y0, x1, y1 = _rbox(b)
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


_PATH_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def parse_path(d: str) -> list[tuple[str, list[float]]]:
    """Parse an SVG path made of absolute M/L/C/Z commands (what Netron's grapher writes) into segments."""
    tokens = _PATH_TOKEN.findall(d)
    commands: list[tuple[str, list[float]]] = []
    arity = {"M": 2, "L": 2, "C": 6, "Z": 0}
    i = 0
    cmd = None
    while i < len(tokens):
        tok = tokens[i]
        if tok.isalpha():
            if tok not in arity:
                raise RenderError(f"unsupported SVG path command {tok!r} in edge path")
            cmd = tok
            i += 1
            if cmd == "Z":
                commands.append(("Z", []))
                continue
        if cmd is None or cmd == "Z":
            raise RenderError(f"malformed SVG path: {d[:80]!r}")
        n = arity[cmd]
        nums = tokens[i:i + n]
        if len(nums) != n or any(t.isalpha() for t in nums):
            raise RenderError(f"malformed SVG path: {d[:80]!r}")
        commands.append((cmd, [float(t) for t in nums]))
        i += n
        if cmd == "M":
            cmd = "L"  # implicit lineto after moveto
    return commands


def sample_path(d: str, ctm, scale: float, step: float = EDGE_STEP_PX) -> list[list[float]]:
    """Polyline of an SVG path, transformed by the screen CTM [a, b, c, d, e, f] (user units -> CSS px) and `scale`
    (CSS px -> image px), with points about every `step` image pixels. Endpoints are exact."""
    a, b, c, dd, e, f = ctm

    def tf(x: float, y: float) -> tuple[float, float]:
        return ((a * x + c * y + e) * scale, (b * x + dd * y + f) * scale)

    pts: list[tuple[float, float]] = []
    cur = None
    start = None
    for cmd, v in parse_path(d):
        if cmd == "M":
            cur = tf(v[0], v[1])
            start = cur
            pts.append(cur)
        elif cmd in ("L", "Z"):
            if cur is None:
                raise RenderError("SVG path does not start with M")
            end = tf(v[0], v[1]) if cmd == "L" else start
            n = max(1, math.ceil(math.dist(cur, end) / step))
            for k in range(1, n + 1):
                t = k / n
                pts.append((cur[0] + (end[0] - cur[0]) * t, cur[1] + (end[1] - cur[1]) * t))
            cur = end
        else:  # C
            if cur is None:
                raise RenderError("SVG path does not start with M")
            p1, p2, p3 = tf(v[0], v[1]), tf(v[2], v[3]), tf(v[4], v[5])
            length = math.dist(cur, p1) + math.dist(p1, p2) + math.dist(p2, p3)  # upper bound of arc length
            n = max(1, math.ceil(length / step))
            for k in range(1, n + 1):
                t = k / n
                u = 1 - t
                pts.append((
                    u * u * u * cur[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t * t * t * p3[0],
                    u * u * u * cur[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t * t * t * p3[1],
                ))
            cur = p3
    out: list[list[float]] = []
    for x, y in pts:
        p = [_r(x), _r(y)]
        if not out or out[-1] != p:
            out.append(p)
    return out


def parse_dims(text: str) -> list[int | str] | None:
    """Parse a Netron shape string (`1×64×56×56`, `batch×3×?×?`) into dims: non-negative integers as int, anything
    else (symbolic names, `?`) as str. None for an empty string or an empty dim."""
    if not text:
        return None
    dims: list[int | str] = []
    for part in text.split("\u00d7"):
        part = part.strip()
        if not part:
            return None
        dims.append(int(part) if part.isascii() and part.isdigit() else part)
    return dims


def _weight_text(value: str) -> tuple[str, list[int | str] | None]:
    """Text and shape of a weight row value as drawn:
    `〈64×3×7×7〉` -> ("64×3×7×7", [64, 3, 7, 7]); ` = 0.5` -> ("0.5", None)."""
    v = value.strip()
    if v.startswith("\u3008") and v.endswith("\u3009"):
        inner = v[1:-1]
        if inner == "":
            return inner, []
        if inner == "\u2026":  # Netron's "shape unknown"
            return inner, None
        return inner, parse_dims(inner)
    if v.startswith("="):
        v = v[1:].strip()
    return v, None


# ---------------------------------------------------------------------------------------------------------------
# Page data -> truth


def build_truth(page: dict, options: RenderOptions, scene_id: str, image_size: tuple[int, int]) -> dict:
    """Turn the page-side data (see netron_page.js) into schema-v1 truth in image pixels."""
    dpr = float(page["dpr"])
    width, height = image_size
    clip_css = page["clip"]
    clip = _intersect(_scale(clip_css, dpr), [0.0, 0.0, float(width), float(height)])
    if clip is None:
        raise RenderError("graph container is not visible")

    nodes: list[dict] = []
    inputs: list[dict] = []
    outputs: list[dict] = []
    for item in page["items"]:
        clipped = clip_box(_scale(item["box"], dpr), clip)
        if clipped is None:
            continue
        box, truncated = clipped
        entry: dict[str, Any] = {"box": _rbox(box), "quad": _quad(box), "confidence": 1.0, "truncated": truncated}
        if item["kind"] == "node":
            entry.update({"op": item["op"], "op_confidence": 1.0, "category": item["category"].lower() or "none",
                          "name": item["onnx_name"], "title_text": item["title"]})
            title = clip_box(_scale(item["title_box"], dpr), clip) if item["title_box"] else None
            if title is not None:
                entry["title_box"] = _rbox(title[0])
                entry["title_truncated"] = title[1]
            weights, attributes = [], []
            for row in item["rows"]:
                rc = clip_box(_scale(row["box"], dpr), clip)
                if rc is None:
                    continue
                rbox, rtrunc = rc
                if row["kind"] == "weight":
                    text, shape = _weight_text(row["value"])
                    w = {"name": row["name"], "text": text, "shape": shape, "box": _rbox(rbox),
                         "truncated": rtrunc, "tensor": row["tensor"], "row_text": row["name"] + row["value"]}
                    vb = clip_box(_scale(row["value_box"], dpr), clip) if row["value_box"] else None
                    if vb is not None:
                        w["value_box"] = _rbox(vb[0])
                    weights.append(w)
                else:
                    text = row["value"].strip()
                    if text.startswith("="):
                        text = text[1:].strip()
                    attributes.append({"name": row["name"], "text": text, "box": _rbox(rbox), "truncated": rtrunc,
                                       "row_text": row["name"] + row["value"]})
            entry["weights"] = weights
            entry["attributes"] = attributes
            nodes.append(entry)
        else:
            entry["name"] = item["title"]
            (inputs if item["kind"] == "input" else outputs).append(entry)
        entry["_key"] = item["key"]
        entry["_order"] = item["order"]

    def order(e: dict) -> tuple:
        return (e["box"][1], e["box"][0], e["_order"])

    by_key: dict[str, str] = {}
    for prefix, group in (("n", nodes), ("i", inputs), ("o", outputs)):
        group.sort(key=order)
        for k, e in enumerate(group):
            e["id"] = f"{prefix}{k}"
            by_key[e.pop("_key")] = e["id"]
            e.pop("_order")

    tensors: list[dict] = []
    edges: list[dict] = []
    drawn_points: list[list[float]] = []
    for k, edge in enumerate(page["edges"]):
        tensor = None
        if edge["label"] is not None and edge["label_box"] is not None:
            lc = clip_box(_scale(edge["label_box"], dpr), clip)
            if lc is not None:
                text = edge["label"]
                tensor = {"text": text, "shape": None if options.names else parse_dims(text),
                          "name": edge["name"], "box": _rbox(lc[0]), "quad": _quad(lc[0]),
                          "confidence": 1.0, "truncated": lc[1], "_order": k}
                tensors.append(tensor)
        if edge["ctm"] is None or not edge["d"]:
            raise RenderError(f"edge {edge['name']!r} has no drawn path")
        points = sample_path(edge["d"], edge["ctm"], dpr)
        # every drawn curve counts for the canvas, also those whose endpoints are out of view
        drawn_points.extend(p for p in points if clip[0] <= p[0] <= clip[2] and clip[1] <= p[1] <= clip[3])
        src, dst = by_key.get(edge["from"]), by_key.get(edge["to"])
        if src is None or dst is None:
            continue
        edges.append({"from": src, "to": dst, "name": edge["name"], "confidence": 1.0,
                      "points": points, "_tensor": tensor})
    tensors.sort(key=order)
    for k, t in enumerate(tensors):
        t["id"] = f"t{k}"
        t.pop("_order")
    for e in edges:
        t = e.pop("_tensor")
        e["tensor"] = t["id"] if t is not None else None
    edges.sort(key=lambda e: (e["from"], e["to"], e["name"]))

    if not nodes and not inputs and not outputs:
        raise RenderError("no graph element is visible in this view")

    union: list[float] | None = None
    boxes = [e["box"] for e in nodes + inputs + outputs + tensors]
    boxes += [[p[0], p[1], p[0], p[1]] for p in drawn_points]
    for b in boxes:
        union = list(b) if union is None else [min(union[0], b[0]), min(union[1], b[1]),
                                                max(union[2], b[2]), max(union[3], b[3])]

    scene = {
        "id": scene_id,
        "kind": "screenshot",
        "generator_version": GENERATOR_VERSION,
        "renderer": f"netron {NETRON_VERSION}",
        "theme": options.theme,
        "weights": options.weights,
        "attributes": options.attributes,
        "names": options.names,
        "direction": options.direction,
        "zoom": _r(options.zoom),
        "device_scale": _r(dpr),
        "viewport": [int(v) for v in page["viewport"]],
        "pan": [_r(p) for p in options.pan],
        "scroll": [_r(v) for v in page["scroll"]],
        "graph_size": [_r(v) for v in page["graph_size"]],
        "label_font_px": _r(options.label_font_px()),
        "ui_boxes": [_rbox(b) for b in (_intersect(_scale(u, dpr), [0.0, 0.0, float(width), float(height)])
                                        for u in page.get("ui", [])) if b is not None],
        "options": dataclasses.asdict(options),
    }
    scene["options"]["viewport"] = list(options.viewport)
    scene["options"]["pan"] = list(options.pan)
    return {
        "format": "netron-ocr.graph",
        "version": 1,
        "image": {"width": int(width), "height": int(height)},
        "canvas": {"box": _rbox(union), "confidence": 1.0},
        "direction": options.direction,
        "nodes": nodes,
        "inputs": inputs,
        "outputs": outputs,
        "tensors": tensors,
        "edges": edges,
        "scene": scene,
    }


# ---------------------------------------------------------------------------------------------------------------
# Renderer


def _safe_name(scene_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", scene_id)[:80] or "scene"


class Renderer:
    """One Netron server + one Chromium page, reused across scenes (see module doc).

    workdir: a folder this renderer owns; models are written to `workdir/served/` (created, emptied of our files).
    timeout_s: per-scene limit for Netron to open and lay out a model. max_nodes: models with more ONNX nodes are
    refused up front with RenderError (Netron's layout of big graphs is slow and shows a Cancel overlay past 2.5 s).
    """

    def __init__(self, workdir: Path, headless: bool = True, timeout_s: float = 10.0, max_nodes: int = 400):
        if not CHROMIUM.exists():
            raise RuntimeError(f"{CHROMIUM} is missing (apt-get install chromium fonts-wqy-microhei)")
        self.workdir = Path(workdir)
        self.served = self.workdir / "served"
        self.served.mkdir(parents=True, exist_ok=True)
        self.cleanup()
        self.headless = headless
        self.timeout_s = float(timeout_s)
        self.max_nodes = int(max_nodes)
        self.blocked_requests: collections.deque[str] = collections.deque(maxlen=200)  # most recent
        self.blocked_count = 0
        self.restarts = 0
        # seconds spent in the last successful render: Netron open+layout, whole page call, screenshot, PNG
        # decode, truth building (not part of the truth, which must stay deterministic)
        self.last_timing: dict[str, float] = {}
        self._counter = 0
        self._playwright = None
        self._browser = None
        self._context = None
        self.page = None
        self._cdp = None
        self._metrics = None
        self._theme = None
        self._address = None
        try:
            self._start_server()
            self._start_browser()
        except BaseException:
            self.close()
            raise

    # -- lifecycle

    def _start_server(self) -> None:
        import netron
        import netron.server as netron_server

        if netron.__version__ != NETRON_VERSION:
            raise RuntimeError(f"netron {netron.__version__} installed, the renderer is pinned to {NETRON_VERSION}")
        logging.getLogger("netron.server").setLevel(logging.WARNING)
        placeholder = self.served / "_placeholder.onnx"
        onnx.save(_placeholder_model(), placeholder)
        before = set(netron_server._threads())
        self._address = netron.serve(str(placeholder), address=("127.0.0.1", 0), browse=False)
        # netron keeps the served folder in a class attribute of its request handler; give this server its own
        # handler subclass so that several Renderers in one process do not serve each other's folders.
        for thread in netron_server._threads():
            if thread not in before and thread.address == self._address:
                handler = thread.server.RequestHandlerClass
                thread.server.RequestHandlerClass = type("NetronOcrHandler", (handler,), {"content": handler.content})
        self.origin = f"http://127.0.0.1:{self._address[1]}"

    def _start_browser(self) -> None:
        from playwright.sync_api import sync_playwright

        if self._playwright is None:
            self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=self.headless, args=CHROMIUM_ARGS)
        self._context = self._browser.new_context(viewport={"width": 1600, "height": 1000})
        self._context.add_init_script(path=str(PAGE_SCRIPT))
        self._context.add_cookies([{"name": "consent", "value": "1", "url": self.origin}])
        origin = self.origin

        def is_foreign(url: str) -> bool:
            return not url.startswith(origin + "/")

        def block(route) -> None:
            self.blocked_requests.append(route.request.url)
            self.blocked_count += 1
            route.abort()

        def strip_date(route) -> None:
            # Netron 9.3.3 locks itself 180 days after its build date (<meta name="date">); without the meta it
            # takes "now" as its build date.
            response = route.fetch()
            body = re.sub(r'<meta name="date"[^>]*>\s*', "", response.text())
            route.fulfill(response=response, body=body)

        self._context.route(is_foreign, block)
        self._context.route(re.compile("^" + re.escape(origin) + r"/(index\.html)?([?#].*)?$"), strip_date)
        self.page = self._context.new_page()
        self._cdp = self._context.new_cdp_session(self.page)
        self._metrics = None
        self._theme = None
        self._load_page()

    def _load_page(self) -> None:
        self.page.goto(self.origin + "/", wait_until="load", timeout=30000)
        self.page.wait_for_function(
            "() => window.__view__ && window.__view__.target && window.__netronOcr"
            " && document.body.className.trim() === 'default'",
            timeout=30000)

    def _restart_browser(self) -> None:
        self.restarts += 1
        try:
            if self._browser is not None:
                self._browser.close()
        except Exception:  # noqa: BLE001 - the browser may already be gone
            pass
        self._browser = None
        self._start_browser()

    def close(self) -> None:
        try:
            if self._browser is not None:
                self._browser.close()
        except Exception:  # noqa: BLE001
            pass
        self._browser = None
        try:
            if self._playwright is not None:
                self._playwright.stop()
        except Exception:  # noqa: BLE001
            pass
        self._playwright = None
        if self._address is not None:
            import netron

            netron.stop(self._address)
            self._address = None

    def __enter__(self) -> "Renderer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- scenes

    def _apply_environment(self, options: RenderOptions) -> None:
        metrics = (int(options.viewport[0]), int(options.viewport[1]), float(options.device_scale))
        if metrics != self._metrics:
            self._cdp.send("Emulation.setDeviceMetricsOverride", {
                "width": metrics[0], "height": metrics[1], "deviceScaleFactor": metrics[2], "mobile": False})
            self._metrics = metrics
        if options.theme != self._theme:
            self.page.emulate_media(color_scheme=options.theme)
            self._theme = options.theme

    def render(self, model: onnx.ModelProto, options: RenderOptions, scene_id: str, focus: str | None = None,
               focus_shift: tuple[float, float] = (0.0, 0.0)) -> tuple[Image.Image, dict]:
        """Render `model` with `options`; returns (RGB screenshot, truth dict). Raises RenderError for this scene.

        focus (optional, not used for generated scenes): the ONNX node name or graph-input name of an element to
        centre the view on, displaced by `focus_shift` (fractions of the view size, element appears at
        (0.5 + dx, 0.5 + dy) of the view) — this replaces `options.pan`; the truth then records the pan actually
        used in `scene.pan` / `scene.options.pan` and `scene.focus = {name, shift}`.
        """
        from playwright.sync_api import Error as PlaywrightError

        options.validate()
        if not all(-0.5 <= float(v) <= 0.5 for v in focus_shift):
            raise ValueError(f"focus_shift must be fractions in [-0.5, 0.5]: {focus_shift}")
        if self._browser is None:
            raise RuntimeError("renderer is closed")
        count = len(model.graph.node)
        if count > self.max_nodes:
            raise RenderError(f"graph has {count} nodes, over max_nodes={self.max_nodes}")
        self._counter += 1
        name = f"{self._counter:06d}_{_safe_name(scene_id)}.onnx"
        path = self.served / name
        path.write_bytes(model.SerializeToString())
        try:
            self._apply_environment(options)
            args = {
                "file": name,
                "weights": options.weights,
                "attributes": options.attributes,
                "names": options.names,
                "direction": options.direction,
                "zoom": options.zoom,
                "pan": list(options.pan),
                "timeoutMs": int(self.timeout_s * 1000),
            }
            if focus is not None:
                args["focus"] = str(focus)
                args["focusShift"] = [float(v) for v in focus_shift]
            t0 = time.perf_counter()
            page_data = self.page.evaluate("args => window.__netronOcr.render(args)", args)
            t1 = time.perf_counter()
            shot = self._cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
            t2 = time.perf_counter()
            image = Image.open(io.BytesIO(base64.b64decode(shot["data"])))
            image = image.convert("RGB")
        except PlaywrightError as error:
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            self._recover()
            raise RenderError(f"scene {scene_id}: {message}") from error
        finally:
            path.unlink(missing_ok=True)
        if abs(float(page_data["dpr"]) - options.device_scale) > 1e-6:
            raise RenderError(f"devicePixelRatio {page_data['dpr']} != requested {options.device_scale}")
        scale = options.device_scale
        expected = (round(options.viewport[0] * scale), round(options.viewport[1] * scale))
        if abs(image.size[0] - expected[0]) > 1 or abs(image.size[1] - expected[1]) > 1:
            raise RenderError(f"screenshot size {image.size} != viewport × scale {expected}")
        t3 = time.perf_counter()
        if focus is not None:
            pan = tuple(round(min(1.0, max(0.0, v)), 4) for v in page_data["focus_pan"])
            options = dataclasses.replace(options, pan=pan)
        truth = build_truth(page_data, options, scene_id, image.size)
        if focus is not None:
            truth["scene"]["focus"] = {"name": str(focus), "shift": [_r(v) for v in focus_shift]}
        self.last_timing = {"open": page_data["open_ms"] / 1000, "page": t1 - t0, "screenshot": t2 - t1,
                            "decode": t3 - t2, "truth": time.perf_counter() - t3}
        return image, truth

    def _recover(self) -> None:
        """Bring the page back to a clean state after a failed scene: reload, or restart the browser."""
        try:
            self._load_page()
            self._metrics = None
            self._theme = None
        except Exception:  # noqa: BLE001 - anything wrong with the page: start over
            self._restart_browser()

    def cleanup(self) -> None:
        """Remove scene files left in the served folder (e.g. after a crash)."""
        for p in self.served.glob("*.onnx"):
            if p.name != "_placeholder.onnx":
                p.unlink(missing_ok=True)


def draw_truth(image: Image.Image, truth: dict) -> Image.Image:
    """Debug overlay: a copy of `image` with truth boxes (nodes red, titles orange, weights/attributes magenta,
    inputs/outputs blue, tensor labels green, canvas grey) and edge polylines (cyan, endpoints marked)."""
    from PIL import ImageDraw

    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    draw.rectangle(truth["canvas"]["box"], outline=(150, 150, 150), width=1)
    for e in truth["edges"]:
        pts = [tuple(p) for p in e["points"]]
        if len(pts) > 1:
            draw.line(pts, fill=(0, 200, 220), width=2)
        for p in (pts[0], pts[-1]):
            draw.ellipse([p[0] - 3, p[1] - 3, p[0] + 3, p[1] + 3], outline=(0, 120, 255), width=2)
    for n in truth["nodes"]:
        draw.rectangle(n["box"], outline=(255, 0, 0), width=2)
        if "title_box" in n:
            draw.rectangle(n["title_box"], outline=(255, 150, 0), width=1)
        for row in n.get("weights", []) + n.get("attributes", []):
            draw.rectangle(row["box"], outline=(220, 0, 220), width=1)
    for p in truth["inputs"] + truth["outputs"]:
        draw.rectangle(p["box"], outline=(0, 0, 255), width=2)
    for t in truth["tensors"]:
        draw.rectangle(t["box"], outline=(0, 170, 0), width=1)
    return out


def _placeholder_model() -> onnx.ModelProto:
    """Tiny model netron.serve needs as its 'first' file; Netron opens it on page load."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "placeholder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


__all__ = [
    "RenderError", "RenderOptions", "Renderer", "sample_options", "truth_json", "build_truth", "parse_dims",
    "sample_path", "parse_path", "clip_box", "draw_truth", "GENERATOR_VERSION",
]


def _fallback_model(rng: random.Random) -> onnx.ModelProto:
    """Small Conv/Relu chain with a skip connection, for benchmarking before/without graphgen."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    blocks = rng.randint(3, 12)
    nodes, inits, prev, channels = [], [], "input", 3
    for i in range(blocks):
        out = rng.choice((8, 16, 32))
        inits.append(numpy_helper.from_array(np.zeros((out, channels, 3, 3), np.float32), f"w{i}"))
        nodes.append(helper.make_node("Conv", [prev, f"w{i}"], [f"c{i}"], name=f"conv{i}", kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        prev, channels = f"r{i}", out
    graph = helper.make_graph(nodes, "bench", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                                             ["N", 3, 64, 64])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return onnx.shape_inference.infer_shapes(model)


def main(argv: list[str] | None = None) -> int:
    """`python -m datagen.render --bench N`: render N scenes (graphgen models if available) and print scenes/s;
    `--save DIR` also writes each screenshot, its truth and a truth overlay there."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--bench", type=int, default=20, help="number of timed scenes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        from . import graphgen

        make = lambda k: graphgen.random_model(args.seed * 1_000_003 + k)  # noqa: E731
        source = "graphgen"
    except ImportError:
        make = lambda k: _fallback_model(random.Random(f"bench:{args.seed}:{k}"))  # noqa: E731
        source = "fallback Conv/Relu chains (graphgen not available)"
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, Renderer(Path(tmp)) as renderer:
        renderer.render(make(10**6), RenderOptions(), "warmup")
        failed = 0
        phases: collections.Counter = collections.Counter()
        start = time.perf_counter()
        for k in range(args.bench):
            options = sample_options(random.Random(f"bench:{args.seed}:{k}"))
            try:
                image, truth = renderer.render(make(k), options, f"bench-{k:06d}")
            except RenderError as error:
                failed += 1
                print(f"scene {k}: {error}")
                continue
            phases.update(renderer.last_timing)
            if args.save:
                image.save(args.save / f"{k:06d}.png")
                (args.save / f"{k:06d}.json").write_text(truth_json(truth))
                draw_truth(image, truth).save(args.save / f"{k:06d}.overlay.png")
        seconds = time.perf_counter() - start
    print(f"{args.bench} scenes ({source}), {failed} failed: {seconds:.1f} s, "
          f"{args.bench / seconds:.2f} scenes/s, {seconds / args.bench:.3f} s/scene")
    done = max(1, args.bench - failed)
    print("mean seconds per scene: " + ", ".join(f"{k} {v / done:.3f}" for k, v in phases.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
