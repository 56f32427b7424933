"""Detector: operator cards, tensor-shape labels, graph inputs and outputs inside the cropped canvas.

Contract (mirrored in models/detector.MODEL.md; the Rust side re-implements `letterbox`, `postprocess`):
- input `image`: float32 [N, 3, H, W] RGB, H and W multiples of 32 up to 512 (the network is fully convolutional
  with total stride 32). The crop box [x0, y0, x1, y1] (source pixels, float, inside the image) of width cw and
  height ch is resized, aspect kept, with s = min(512/cw, 512/ch) to tw × th = clamp(round(cw·s), 1, 512) ×
  clamp(round(ch·s), 1, 512) with *antialiased* bilinear resampling over the fractional crop box (Pillow
  `Image.resize(..., BILINEAR, box=crop)`; the Rust side reproduces it bit for bit), placed at the top-left corner,
  normalised `(v/255 - MEAN) / STD`; every other pixel of the tensor is 0.0 (the mean colour). At inference the
  input is trimmed to the content plus a margin: H = min(512, ceil32(th + 32)), W = min(512, ceil32(tw + 32))
  (`input_size`; the long side is 512). Training, and `letterbox(..., square=True)`, use the full 512 × 512 (the
  contract before issue #6).
- outputs, all at stride 4 (H/4 × W/4 cells; cell (row j, col i) covers input pixels [4i, 4i+4) × [4j, 4j+4)):
  `heatmap` [N, 4, H/4, W/4] logits (classes 0 node, 1 tensor label, 2 input, 3 output);
  `size` [N, 2, H/4, W/4]: ln(box width), ln(box height) in input pixels;
  `offset` [N, 2, H/4, W/4]: box centre = ((i + offset_x) · 4, (j + offset_y) · 4) in input pixels.
- post-processing (`postprocess`, outside the graph): see models/detector.MODEL.md.

Training command: `python -m train.detector --data DIR --out CKPT_DIR --epochs E` (see `--help`).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torch import nn

from train.common import (
    Checkpoints,
    ConvBNAct,
    DepthwiseSeparable,
    DiskCache,
    LoopConfig,
    SceneImage,
    augment_photometric,
    clip_box,
    count_params,
    default_cache_dir,
    freeze_batchnorm,
    list_scene_images,
    load_rgb,
    load_truth,
    seed_everything,
    set_threads,
    split_scene_images,
    to_input_tensor,
    train_loop,
    truth_elements,
    warm_cache,
    warm_start_from_onnx,
)

SIZE = 512
STRIDE = 4
GRID = SIZE // STRIDE
# Input height and width are multiples of this (the network's total stride).
INPUT_MULTIPLE = 32
# A trimmed input keeps at least this much padding (px) beyond the content (when the side stays under 512): without
# it, detections within ~70 px of the trimmed edge change (held-out photo mean F1 0.948 → 0.938; with it 0.947).
INPUT_MARGIN = 32
CLASSES = ("node", "tensor", "input", "output")
KIND_TO_CLASS = {"nodes": 0, "tensors": 1, "inputs": 2, "outputs": 3}
PARAM_BUDGET = 2_350_000
INPUT_NAMES = ("image",)
OUTPUT_NAMES = ("heatmap", "size", "offset")

# Post-processing constants (documented in detector.MODEL.md).
SCORE_THRESHOLD = 0.3
TOP_K = 300
NMS_IOU = 0.5
CROSS_CLASS_IOU = 0.5  # boxes of different classes overlapping more than this: the weaker goes
# Cropper padding the detector's crop includes (eval with truth crops uses canvas.box expanded by this).
CROP_PAD = 0.04
# Training crops: each edge of the truth canvas box is pushed outward by U(JITTER_MIN, JITTER_MAX) × its size.
JITTER_MIN, JITTER_MAX = 0.02, 0.16
# An element counts (target and ground truth) when at least this share of its image-clipped area is in the crop.
MIN_VISIBLE = 0.35
# Tiling of elongated crops (see `tiles_for_crop`).
TILE_MIN = 512.0
TILE_ASPECT = 1.5
TILE_OVERLAP = 0.25
TILE_MAX = 8
# Share of training samples that use one tile of the jittered crop instead of the whole crop.
TILE_PROB = 0.5
# Context crops (`--context-prob`): each edge pushed out by U(JITTER_MIN, CONTEXT_MAX) × its size instead, so the
# detector also sees what a loose crop brings in (sidebars, toolbars, other windows, the monitor's bezel) as
# negatives. The cached region then covers CONTEXT_MAX and keeps up to CACHE_SHORT_CONTEXT px on its short side.
CONTEXT_MAX = 1.0
CACHE_SHORT_CONTEXT = 1024
# Cached training regions: short side at most CACHE_SHORT px and long side at most CACHE_LONG px (enough that
# tiles, letterboxed at scale ≤ 512/TILE_MIN = 1 or ≤ 512/(1.5·short), are cut from the cache without upscaling).
CACHE_SHORT = 512
CACHE_LONG = 4096


# ----------------------------------------------------------------------------------------------------------------
# Model


class DetectorNet(nn.Module):
    """Depthwise-separable backbone (strides 2–32) with a top-down FPN merged at stride 4 and a shared head.

    forward(image [N,3,H,W], H and W multiples of 32) → (heatmap [N,4,H/4,W/4] logits, size [N,2,H/4,W/4] log-px,
    offset [N,2,H/4,W/4] cells); 512 × 512 gives 128 × 128. ~2.0 M parameters, most of them at strides 16 and 32 where they are cheap.
    """

    def __init__(self, fpn: int = 64):
        super().__init__()
        self.stem = ConvBNAct(3, 24, 3, stride=2)  # 256
        self.s4 = nn.Sequential(DepthwiseSeparable(24, 32, 2), DepthwiseSeparable(32, 32))  # 128
        self.s8 = nn.Sequential(DepthwiseSeparable(32, 64, 2), DepthwiseSeparable(64, 64),
                                DepthwiseSeparable(64, 64))  # 64
        self.s16 = nn.Sequential(DepthwiseSeparable(64, 160, 2), *[DepthwiseSeparable(160, 160) for _ in range(3)],
                                 DepthwiseSeparable(160, 160, dilation=2))  # 32
        self.s32 = nn.Sequential(DepthwiseSeparable(160, 384, 2), *[DepthwiseSeparable(384, 384) for _ in range(4)],
                                 DepthwiseSeparable(384, 384, dilation=2))  # 16
        self.lat32 = ConvBNAct(384, 128, 1)
        self.lat16 = ConvBNAct(160, 128, 1)
        self.smooth16 = DepthwiseSeparable(128, 128)
        self.red16 = ConvBNAct(128, 96, 1)
        self.lat8 = ConvBNAct(64, 96, 1)
        self.smooth8 = DepthwiseSeparable(96, 96)
        self.red8 = ConvBNAct(96, fpn, 1)
        self.lat4 = ConvBNAct(32, fpn, 1)
        self.smooth4 = DepthwiseSeparable(fpn, fpn)
        self.trunk = DepthwiseSeparable(fpn, fpn)
        self.heat = nn.Conv2d(fpn, len(CLASSES), 1)
        self.size = nn.Conv2d(fpn, 2, 1)
        self.offset = nn.Conv2d(fpn, 2, 1)
        nn.init.constant_(self.heat.bias, -2.19)  # sigmoid prior 0.1
        nn.init.constant_(self.size.bias, math.log(16.0))
        nn.init.constant_(self.offset.bias, 0.5)
        # ×2 nearest upsampling as a depthwise transposed conv (2×2 kernel of ones, stride 2): exactly the same
        # values, and the exported graph has no Resize, which tract's NNEF writer cannot write with symbolic sizes
        # except through the `tract_onnx` extension that the NNEF build of the library leaves out.
        for c in sorted({128, 96, fpn}):
            self.register_buffer(f"up{c}", torch.ones(c, 1, 2, 2), persistent=False)

    def _up(self, x):
        c = x.shape[1]
        return F.conv_transpose2d(x, getattr(self, f"up{c}"), stride=2, groups=c)

    def forward(self, image):
        f4 = self.s4(self.stem(image))
        f8 = self.s8(f4)
        f16 = self.s16(f8)
        f32 = self.s32(f16)
        p16 = self.smooth16(self.lat16(f16) + self._up(self.lat32(f32)))
        p8 = self.smooth8(self.lat8(f8) + self._up(self.red16(p16)))
        p4 = self.smooth4(self.lat4(f4) + self._up(self.red8(p8)))
        t = self.trunk(p4)
        return self.heat(t), self.size(t), self.offset(t)


def build_model(config: dict | None = None) -> DetectorNet:
    return DetectorNet()


# ----------------------------------------------------------------------------------------------------------------
# Preprocessing


@dataclass(frozen=True)
class Letterbox:
    """Where a crop went in the detector input: crop box in source pixels and the resized size tw × th at the
    top-left (the input is `input_size(tw, th)`, or 512 × 512). Input pixel (u, v) ↔ source
    (x0 + u·cw/tw, y0 + v·ch/th), whatever the padding."""

    crop: tuple[float, float, float, float]
    tw: int
    th: int

    @property
    def sx(self) -> float:
        return (self.crop[2] - self.crop[0]) / self.tw

    @property
    def sy(self) -> float:
        return (self.crop[3] - self.crop[1]) / self.th

    def to_source(self, boxes: np.ndarray) -> np.ndarray:
        b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        return np.stack([self.crop[0] + b[:, 0] * self.sx, self.crop[1] + b[:, 1] * self.sy,
                         self.crop[0] + b[:, 2] * self.sx, self.crop[1] + b[:, 3] * self.sy], 1)

    def to_input(self, boxes: np.ndarray) -> np.ndarray:
        b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        return np.stack([(b[:, 0] - self.crop[0]) / self.sx, (b[:, 1] - self.crop[1]) / self.sy,
                         (b[:, 2] - self.crop[0]) / self.sx, (b[:, 3] - self.crop[1]) / self.sy], 1)


def letterbox_size(cw: float, ch: float) -> tuple[int, int]:
    s = min(SIZE / cw, SIZE / ch)
    return min(SIZE, max(1, round(cw * s))), min(SIZE, max(1, round(ch * s)))


def input_size(tw: int, th: int, square: bool = False) -> tuple[int, int]:
    """Detector input (W, H) for tw × th content: each side plus INPUT_MARGIN, rounded up to a multiple of 32, at
    most 512 (`min(512, ceil32(v + 32))`); with `square`, 512 × 512."""
    if square:
        return SIZE, SIZE

    def side(v: int) -> int:
        return min(SIZE, -(-(v + INPUT_MARGIN) // INPUT_MULTIPLE) * INPUT_MULTIPLE)

    return side(tw), side(th)


def letterbox(image: Image.Image, crop: tuple[float, float, float, float],
              target: tuple[int, int] | None = None, square: bool = False) -> tuple[np.ndarray, Letterbox]:
    """Resize the crop of a PIL RGB image into the top-left of an H×W×3 uint8 array, (W, H) = `input_size(tw, th)`
    (rest 0, masked later by `to_detector_tensor`); `square` makes it 512×512 (training, and the contract before
    issue #6). `crop` is in that image's pixels; `target` (tw, th) overrides `letterbox_size`."""
    x0, y0, x1, y1 = crop
    tw, th = target or letterbox_size(x1 - x0, y1 - y0)
    w, h = input_size(tw, th, square)
    out = np.zeros((h, w, 3), np.uint8)
    out[:th, :tw] = np.asarray(image.resize((tw, th), Image.BILINEAR, box=(x0, y0, x1, y1)))
    return out, Letterbox((x0, y0, x1, y1), tw, th)


def to_detector_tensor(images: list[np.ndarray], boxes: list[Letterbox]) -> torch.Tensor:
    """uint8 H×W×3 letterboxed images (all of one shape) → normalised float32 [N,3,H,W] with the pad area set to
    0.0."""
    x = to_input_tensor(images)
    for i, lb in enumerate(boxes):
        x[i, :, lb.th:, :] = 0.0
        x[i, :, :, lb.tw:] = 0.0
    return x


def padded_canvas(truth: dict, pad: float = CROP_PAD) -> tuple[float, float, float, float]:
    """Truth canvas.box with each edge pushed out by `pad` × its size, clipped to the image."""
    w, h = truth["image"]["width"], truth["image"]["height"]
    x0, y0, x1, y1 = truth["canvas"]["box"]
    bw, bh = x1 - x0, y1 - y0
    b = clip_box([x0 - pad * bw, y0 - pad * bh, x1 + pad * bw, y1 + pad * bh], w, h)
    if b[2] - b[0] < 1 or b[3] - b[1] < 1:
        return 0.0, 0.0, float(w), float(h)
    return tuple(b)


@dataclass(frozen=True)
class Tile:
    """One detector input cut from a crop: `box` is what is letterboxed; detections are kept only when their centre
    lies in `core` (half-open, closed at the crop's far edge), so overlapping tiles do not report an element twice."""

    box: tuple[float, float, float, float]
    core: tuple[float, float, float, float]


def tiles_for_crop(crop) -> list[Tile]:
    """Split an elongated crop along its long axis so that small text is not shrunk away by the letterbox.

    With `short`, `long` the crop's sides (source px): tile length `L = min(long, max(TILE_MIN, TILE_ASPECT·short))`.
    If `long ≤ L` the crop is one tile. Otherwise `n = min(TILE_MAX, ceil((long − L) / (L·(1 − TILE_OVERLAP))) + 1)`
    tiles; if `n` hit TILE_MAX, `L = long / (1 + (n − 1)·(1 − TILE_OVERLAP))`. Tile k starts at
    `a_k = k·(long − L)/(n − 1)` along the long axis and covers the full short axis. Its core runs from the midpoint
    of its overlap with tile k−1 (`(a_k + a_{k−1} + L)/2`, the crop start for k = 0) to the midpoint of its overlap
    with tile k+1 (the crop end for the last tile).
    """
    x0, y0, x1, y1 = (float(v) for v in crop)
    cw, ch = x1 - x0, y1 - y0
    vertical = ch >= cw
    short, long = (cw, ch) if vertical else (ch, cw)
    tl = min(long, max(TILE_MIN, TILE_ASPECT * short))
    if long <= tl + 1e-6:
        return [Tile((x0, y0, x1, y1), (x0, y0, x1, y1))]
    n = math.ceil((long - tl) / (tl * (1 - TILE_OVERLAP))) + 1
    if n > TILE_MAX:
        n = TILE_MAX
        tl = long / (1 + (n - 1) * (1 - TILE_OVERLAP))
    starts = [k * (long - tl) / (n - 1) for k in range(n)]
    lo = y0 if vertical else x0
    out = []
    for k, a in enumerate(starts):
        c0 = 0.0 if k == 0 else (a + starts[k - 1] + tl) / 2
        c1 = long if k == n - 1 else (starts[k + 1] + a + tl) / 2
        if vertical:
            out.append(Tile((x0, lo + a, x1, lo + a + tl), (x0, lo + c0, x1, lo + c1)))
        else:
            out.append(Tile((lo + a, y0, lo + a + tl, y1), (lo + c0, y0, lo + c1, y1)))
    return out


def in_core(boxes: np.ndarray, tile: Tile, crop) -> np.ndarray:
    """Mask of boxes whose centre lies in the tile's core (half-open; closed on the crop's far edges)."""
    cx = (boxes[:, 0] + boxes[:, 2]) / 2
    cy = (boxes[:, 1] + boxes[:, 3]) / 2
    c = tile.core
    okx = (cx >= c[0]) & ((cx < c[2]) | ((c[2] >= crop[2]) & (cx <= c[2])))
    oky = (cy >= c[1]) & ((cy < c[3]) | ((c[3] >= crop[3]) & (cy <= c[3])))
    return okx & oky


def gt_in_crop(truth: dict, crop, min_visible: float = MIN_VISIBLE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ground truth for one crop: (boxes [M,4] source px clipped to image and crop, classes [M], ids [M]).
    An element is kept when ≥ `min_visible` of its image-clipped area lies inside the crop."""
    w, h = truth["image"]["width"], truth["image"]["height"]
    boxes, classes, ids = [], [], []
    for kind, eid, box in truth_elements(truth):
        b = clip_box(box, w, h)
        area = (b[2] - b[0]) * (b[3] - b[1])
        if area <= 0:
            continue
        c = [max(b[0], crop[0]), max(b[1], crop[1]), min(b[2], crop[2]), min(b[3], crop[3])]
        if c[2] - c[0] <= 0 or c[3] - c[1] <= 0:
            continue
        if (c[2] - c[0]) * (c[3] - c[1]) < min_visible * area:
            continue
        boxes.append(c)
        classes.append(KIND_TO_CLASS[kind])
        ids.append(eid)
    return (np.array(boxes, np.float64).reshape(-1, 4), np.array(classes, np.int64), np.array(ids, dtype=object))


# ----------------------------------------------------------------------------------------------------------------
# Targets and loss


def build_targets(boxes_in: np.ndarray, classes: np.ndarray, alpha: float = 0.54,
                  grid: tuple[int, int] = (GRID, GRID)) -> dict[str, np.ndarray]:
    """CenterNet targets for one image from boxes in input pixels, on a `grid` = (rows, cols) of cells (128 × 128
    for a 512 × 512 input): heat [4,rows,cols] (elliptical Gaussians, sigma = alpha·size/6 in cells, at least 0.4,
    peak exactly 1 at the centre cell), size [2,rows,cols] (ln w, ln h in input px), offset [2,rows,cols]
    (centre/4 − cell), mask [rows,cols] (1 at centre cells)."""
    rows, cols = grid
    heat = np.zeros((len(CLASSES), rows, cols), np.float32)
    size = np.zeros((2, rows, cols), np.float32)
    offset = np.zeros((2, rows, cols), np.float32)
    mask = np.zeros((rows, cols), np.float32)
    ys, xs = np.arange(rows, dtype=np.float32)[:, None], np.arange(cols, dtype=np.float32)[None, :]
    # Large boxes first, so a small box sharing a centre cell keeps its regression targets.
    order = np.argsort(-(boxes_in[:, 2] - boxes_in[:, 0]) * (boxes_in[:, 3] - boxes_in[:, 1])) \
        if len(boxes_in) else []
    for k in order:
        x0, y0, x1, y1 = boxes_in[k]
        bw, bh = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
        cx, cy = (x0 + x1) / 2 / STRIDE, (y0 + y1) / 2 / STRIDE
        i, j = min(cols - 1, max(0, int(cx))), min(rows - 1, max(0, int(cy)))
        sx, sy = max(0.4, alpha * bw / STRIDE / 6), max(0.4, alpha * bh / STRIDE / 6)
        rx, ry = int(3 * sx) + 1, int(3 * sy) + 1
        ya, yb, xa, xb = max(0, j - ry), min(rows, j + ry + 1), max(0, i - rx), min(cols, i + rx + 1)
        g = np.exp(-((xs[:, xa:xb] - i) ** 2 / (2 * sx * sx) + (ys[ya:yb] - j) ** 2 / (2 * sy * sy)))
        c = classes[k]
        np.maximum(heat[c, ya:yb, xa:xb], g, out=heat[c, ya:yb, xa:xb])
        size[:, j, i] = (math.log(bw), math.log(bh))
        offset[:, j, i] = (cx - i, cy - j)
        mask[j, i] = 1.0
    return {"heat": heat, "size": size, "offset": offset, "mask": mask}


def focal_loss(logits: torch.Tensor, target: torch.Tensor, class_weights: torch.Tensor) -> torch.Tensor:
    """CenterNet penalty-reduced focal loss (alpha 2, beta 4), each class scaled by its weight, normalised by the
    number of centre cells in the batch."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target.eq(1.0).float()
    neg = 1.0 - pos
    logp, log1p = F.logsigmoid(logits), F.logsigmoid(-logits)
    pos_l = -((1 - p) ** 2) * logp * pos
    neg_l = -((1 - target) ** 4) * p ** 2 * log1p * neg
    w = class_weights.view(1, -1, 1, 1)
    n = pos.sum().clamp(min=1.0)
    return ((pos_l + neg_l) * w).sum() / n


def detector_loss(model: nn.Module, batch: dict, class_weights=(1.0, 1.0, 2.0, 2.0), size_weight: float = 1.0,
                  offset_weight: float = 1.0):
    heat, size, offset = model(batch["image"])
    fl = focal_loss(heat, batch["heat"], torch.tensor(class_weights, dtype=torch.float32))
    m = batch["mask"].unsqueeze(1)
    n = m.sum().clamp(min=1.0)
    sl = (F.l1_loss(size, batch["size"], reduction="none") * m).sum() / n
    ol = (F.l1_loss(offset, batch["offset"], reduction="none") * m).sum() / n
    return fl + size_weight * sl + offset_weight * ol, {"focal": float(fl.detach()), "size": float(sl.detach()),
                                                       "off": float(ol.detach())}


# ----------------------------------------------------------------------------------------------------------------
# Post-processing


def postprocess(heatmap: np.ndarray, size: np.ndarray, offset: np.ndarray, lb: Letterbox | None = None,
                score_threshold: float = SCORE_THRESHOLD, top_k: int = TOP_K, nms_iou: float = NMS_IOU):
    """One image's outputs ([4,rows,cols], [2,rows,cols], [2,rows,cols]; rows × cols = H/4 × W/4 of its input) →
    (boxes [M,4], scores [M], classes [M]).

    1. p = sigmoid(heatmap). A cell is a peak when p ≥ score_threshold and p equals the maximum of its 3×3
       neighbourhood (cells outside the grid ignored; ties all count).
    2. Keep the top_k peaks by p (all classes together; ties broken by flat index c·rows·cols + j·cols + i).
    3. Box in input px: centre ((i + offset[0,j,i])·4, (j + offset[1,j,i])·4), width exp(size[0,j,i]),
       height exp(size[1,j,i]). If `lb` is given, map to source pixels (`Letterbox.to_source`) and clip to the
       crop box; a box the clip empties (a peak in the padding beyond the crop) is dropped.
    4. Class-wise greedy NMS: in descending score order, drop a box whose IoU with a kept box of the same class
       exceeds nms_iou. Output is in descending score order.
    """
    h = torch.from_numpy(np.ascontiguousarray(heatmap, dtype=np.float32))[None]
    p = torch.sigmoid(h)
    pmax = F.max_pool2d(p, 3, stride=1, padding=1)
    p, pmax = p[0].numpy(), pmax[0].numpy()
    peak = (p >= pmax) & (p >= score_threshold)
    flat = np.flatnonzero(peak.ravel())
    scores = p.ravel()[flat]
    order = np.lexsort((flat, -scores))[:top_k]
    flat, scores = flat[order], scores[order]
    rows, cols = p.shape[1:]
    c, rem = np.divmod(flat, rows * cols)
    j, i = np.divmod(rem, cols)
    cx = (i + offset[0, j, i]) * STRIDE
    cy = (j + offset[1, j, i]) * STRIDE
    bw, bh = np.exp(size[0, j, i]), np.exp(size[1, j, i])
    boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], 1).astype(np.float64)
    if lb is not None:
        boxes = lb.to_source(boxes)
        x0, y0, x1, y1 = lb.crop
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(x0, x1)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(y0, y1)
        full = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
        boxes, scores, c = boxes[full], scores[full], c[full]
    keep = nms(boxes, scores, c, nms_iou)
    return boxes[keep], scores[keep].astype(np.float64), c[keep]


def nms(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, iou: float) -> np.ndarray:
    """Class-wise greedy NMS over boxes already sorted by descending score; returns kept indices in order."""
    return _greedy_nms(boxes, classes, iou, same_class=True)


def cross_class_nms(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray,
                    iou: float = CROSS_CLASS_IOU) -> np.ndarray:
    """Greedy NMS across classes over boxes sorted by descending score: a box overlapping a kept box of another
    class by more than `iou` goes (one place is one thing). Applied after `merge_tiles`, as the Rust pipeline
    does (`detect::cross_class_nms`); returns kept indices in order."""
    return _greedy_nms(boxes, classes, iou, same_class=False)


def _greedy_nms(boxes: np.ndarray, classes: np.ndarray, iou: float, same_class: bool) -> np.ndarray:
    keep: list[int] = []
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    for k in range(len(boxes)):
        ok = True
        for q in keep:
            if (classes[q] == classes[k]) != same_class:
                continue
            iw = min(boxes[k, 2], boxes[q, 2]) - max(boxes[k, 0], boxes[q, 0])
            ih = min(boxes[k, 3], boxes[q, 3]) - max(boxes[k, 1], boxes[q, 1])
            if iw <= 0 or ih <= 0:
                continue
            inter = iw * ih
            union = area[k] + area[q] - inter
            if union > 0 and inter / union > iou:
                ok = False
                break
        if ok:
            keep.append(k)
    return np.array(keep, dtype=np.int64)


def merge_tiles(per_tile: list[tuple[np.ndarray, np.ndarray, np.ndarray]], tiles: list[Tile], crop,
                nms_iou: float = NMS_IOU):
    """Combine `postprocess` results (source px) of the tiles of one crop: keep each tile's detections whose centre
    is in its core, sort all by score (stable, tile order), then class-wise NMS again."""
    boxes, scores, classes = [], [], []
    for (b, sc, c), t in zip(per_tile, tiles):
        m = in_core(b, t, crop)
        boxes.append(b[m])
        scores.append(sc[m])
        classes.append(c[m])
    b = np.concatenate(boxes) if boxes else np.zeros((0, 4))
    sc = np.concatenate(scores) if scores else np.zeros(0)
    c = np.concatenate(classes) if classes else np.zeros(0, np.int64)
    order = np.argsort(-sc, kind="stable")
    b, sc, c = b[order], sc[order], c[order]
    keep = nms(b, sc, c, nms_iou)
    return b[keep], sc[keep], c[keep]


# ----------------------------------------------------------------------------------------------------------------
# Data


class DetectorData:
    """Training images: the region around the truth canvas (canvas.box pushed out by JITTER_MAX per edge, clipped
    to the image) cached on disk (short side ≤ CACHE_SHORT, long side ≤ CACHE_LONG px, never upscaled); at sampling
    time a random outward-jittered crop of the canvas — or, with probability TILE_PROB, one random tile of it — is
    letterboxed from that cache. With `context_prob` > 0 that share of crops is pushed out by up to CONTEXT_MAX
    instead, and the cached region covers CONTEXT_MAX (short side ≤ CACHE_SHORT_CONTEXT)."""

    def __init__(self, images: list[SceneImage], cache: DiskCache, context_prob: float = 0.0):
        self.images = images
        self.cache = cache
        self.truths = [load_truth(s.truth_path) for s in images]
        self.context_prob = context_prob
        self.cache_short = CACHE_SHORT_CONTEXT if context_prob > 0 else CACHE_SHORT

    def __len__(self):
        return len(self.images)

    def sampling_weights(self, io_weight: float) -> np.ndarray:
        """Class-aware sampling: scenes showing at least one graph input or output get `io_weight`, others 1."""
        w = np.array([io_weight if (t.get("inputs") or t.get("outputs")) else 1.0 for t in self.truths])
        return w / w.sum()

    def _region(self, t: dict) -> list[float]:
        return list(padded_canvas(t, CONTEXT_MAX if self.context_prob > 0 else JITTER_MAX))

    def cached(self, i: int) -> tuple[np.ndarray, dict]:
        s, t = self.images[i], self.truths[i]

        def build():
            region = self._region(t)
            rw, rh = region[2] - region[0], region[3] - region[1]
            c = min(1.0, self.cache_short / min(rw, rh), CACHE_LONG / max(rw, rh))
            cw, ch = max(1, round(rw * c)), max(1, round(rh * c))
            with Image.open(s.image_path) as im:
                arr = np.asarray(im.convert("RGB").resize((cw, ch), Image.BILINEAR, box=tuple(region)))
            return arr, {"region": region, "sx": cw / rw, "sy": ch / rh}

        arr = self.cache.get(s.key, s.image_path, build)
        return arr, self.cache.meta(s.key)

    def warm(self, desc: str = "cache", workers: int = 1) -> None:
        warm_cache(self.cached, len(self), workers, desc)

    def sample(self, i: int, rng: np.random.Generator, augment: bool):
        """(uint8 512×512×3 letterboxed input, Letterbox in source coordinates, gt boxes in input px, classes)."""
        t = self.truths[i]
        arr, meta = self.cached(i)
        region = meta["region"]
        w, h = t["image"]["width"], t["image"]["height"]
        x0, y0, x1, y1 = t["canvas"]["box"]
        bw, bh = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
        if not augment:
            j = np.full(4, CROP_PAD)
        else:
            j = rng.uniform(JITTER_MIN, CONTEXT_MAX if rng.random() < self.context_prob else JITTER_MAX, size=4)
        crop = clip_box([x0 - j[0] * bw, y0 - j[1] * bh, x1 + j[2] * bw, y1 + j[3] * bh], w, h)
        crop = [max(crop[0], region[0]), max(crop[1], region[1]), min(crop[2], region[2]), min(crop[3], region[3])]
        if crop[2] - crop[0] < 1 or crop[3] - crop[1] < 1:
            crop = list(region)
        if augment and rng.random() < TILE_PROB:
            tiles = tiles_for_crop(crop)
            crop = list(tiles[int(rng.integers(len(tiles)))].box)
        cache_box = ((crop[0] - region[0]) * meta["sx"], (crop[1] - region[1]) * meta["sy"],
                     (crop[2] - region[0]) * meta["sx"], (crop[3] - region[1]) * meta["sy"])
        tw, th = letterbox_size(crop[2] - crop[0], crop[3] - crop[1])
        img, _ = letterbox(Image.fromarray(np.asarray(arr)), cache_box, (tw, th), square=True)
        lb = Letterbox(tuple(crop), tw, th)
        if augment:
            img = augment_photometric(img, rng)
        boxes, classes, _ = gt_in_crop(t, crop)
        return img, lb, lb.to_input(boxes), classes


def make_batch(data: DetectorData, idx: np.ndarray, rng: np.random.Generator, augment: bool,
               window: int = 0) -> dict:
    """A training batch. With `window` (a multiple of 4, < 512) each sample is a random window × window part of
    its letterboxed input, inside the resized crop where possible, with the targets sliced to match. The network
    is fully convolutional, so this trains the same function at about (window/512)² of the cost."""
    imgs, lbs, targets = [], [], []
    for i in idx:
        img, lb, boxes, classes = data.sample(int(i), rng, augment)
        imgs.append(img)
        lbs.append(lb)
        targets.append(build_targets(boxes, classes))
    x = to_detector_tensor(imgs, lbs)
    if window and window < SIZE:
        g = window // STRIDE
        xs, ts = [], []
        for n, (lb, t) in enumerate(zip(lbs, targets)):
            i0 = int(rng.integers(0, max(0, lb.tw - window) // STRIDE + 1))
            j0 = int(rng.integers(0, max(0, lb.th - window) // STRIDE + 1))
            xs.append(x[n, :, j0 * STRIDE:j0 * STRIDE + window, i0 * STRIDE:i0 * STRIDE + window])
            ts.append({k: v[..., j0:j0 + g, i0:i0 + g] for k, v in t.items()})
        x, targets = torch.stack(xs), ts
    batch = {"image": x.contiguous()}
    for k in ("heat", "size", "offset", "mask"):
        batch[k] = torch.from_numpy(np.ascontiguousarray(np.stack([t[k] for t in targets])))
    return batch


# ----------------------------------------------------------------------------------------------------------------
# Command line


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m train.detector", description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, required=True, help="dataset directory (with scenes/) or a scenes folder")
    p.add_argument("--out", type=Path, required=True, help="checkpoint directory (outside the repo); resumes")
    p.add_argument("--epochs", type=float, default=30)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup-steps", type=int, default=None, help="linear LR warm-up (default: min(200|300, 10%%))")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-minutes", type=float, default=None, help="stop this invocation after M minutes")
    p.add_argument("--budget-minutes", type=float, default=None,
                   help="total training time (over resumes); the LR schedule follows it when it runs out first")
    p.add_argument("--eval-every", type=int, default=0,
                   help="steps between held-out evals (0: every epoch or every 500 steps, whichever is sooner)")
    p.add_argument("--eval-limit", type=int, default=200, help="at most this many held-out images per eval")
    p.add_argument("--io-weight", type=float, default=3.0, help="sampling weight of scenes with inputs/outputs")
    p.add_argument("--class-weights", type=float, nargs=4, default=(1.0, 1.0, 2.0, 2.0),
                   metavar=("NODE", "TENSOR", "INPUT", "OUTPUT"), help="focal-loss class weights")
    p.add_argument("--warm-start", type=Path, default=None, help="an exported detector .onnx to start from")
    p.add_argument("--init", type=Path, default=None,
                   help="a checkpoint (.pt) whose model weights start a new run (fresh optimizer and schedule)")
    p.add_argument("--context-prob", type=float, default=0.0,
                   help="share of training crops pushed out by up to CONTEXT_MAX × the canvas size per edge")
    p.add_argument("--window", type=int, default=0,
                   help="train on random window×window parts of each 512×512 input (multiple of 4; 0 = whole)")
    p.add_argument("--cache", type=Path, default=None, help="input cache dir (default under ~/.cache)")
    p.add_argument("--cache-workers", type=int, default=1, help="processes that pre-decode images into the cache")
    p.add_argument("--cache-format", choices=DiskCache.FORMATS, default="png",
                   help="png: lossless (default); jpg: quality 95, ~5x smaller on disk")
    p.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke runs)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    set_threads(args.threads)
    seed_everything(args.seed)
    images = list_scene_images(args.data)
    train_imgs, held = split_scene_images(images)
    if not train_imgs:
        print(f"no training scenes in {args.data}", file=sys.stderr)
        return 2
    if not held:
        print("warning: no held-out scenes (k % 10 == 9); evaluating on training scenes", file=sys.stderr)
        held = train_imgs[: min(len(train_imgs), 16)]
    cache_name = (f"detector-ctx{CONTEXT_MAX:g}-{CACHE_SHORT_CONTEXT}-{CACHE_LONG}" if args.context_prob > 0
                  else f"detector-{CACHE_SHORT}-{CACHE_LONG}")
    cache_dir = args.cache or default_cache_dir(args.data, cache_name)
    cache = DiskCache(cache_dir, args.cache_format)
    train_data = DetectorData(train_imgs, cache, args.context_prob)
    train_data.warm("cache train", args.cache_workers)

    from train import eval_detector

    held_set = eval_detector.EvalSet.from_images(held[: args.eval_limit], desc="prepare held-out")

    model = build_model()
    print(f"detector: {count_params(model)} parameters, {len(train_data)} training / {len(held_set)} held-out images")
    prepare = None
    if args.warm_start is not None:
        n = warm_start_from_onnx(model, args.warm_start, torch.zeros(1, 3, SIZE, SIZE))
        print(f"warm start: {n} convolutions from {args.warm_start}; BatchNorm frozen")
        prepare = freeze_batchnorm
    if args.init is not None:
        model.load_state_dict(torch.load(args.init, map_location="cpu", weights_only=False)["model"])
        print(f"initialised from {args.init}")
    if args.window % STRIDE or args.window >= SIZE or args.window < 0:
        print(f"--window must be a multiple of {STRIDE} below {SIZE}", file=sys.stderr)
        return 2

    steps_per_epoch = max(1, len(train_data) // args.batch)
    total = int(round(args.epochs * steps_per_epoch))
    if args.max_steps is not None:
        total = min(total, args.max_steps)
    cfg = LoopConfig(total_steps=total, lr=args.lr, eval_every=args.eval_every or min(500, steps_per_epoch),
                     warmup_steps=args.warmup_steps or min(300, max(1, total // 10)), max_minutes=args.max_minutes,
                     budget_minutes=args.budget_minutes, seed=args.seed)
    weights = train_data.sampling_weights(args.io_weight)

    def next_batch(rng):
        return make_batch(train_data, rng.choice(len(train_data), size=args.batch, p=weights), rng, augment=True,
                          window=args.window)

    def loss(m, b):
        return detector_loss(m, b, class_weights=tuple(args.class_weights))

    def evaluate(m):
        res = eval_detector.evaluate(eval_detector.torch_predict(m), held_set)
        return eval_detector.score(res), eval_detector.summary(res)

    config = {"model": "detector", "size": SIZE, "args": {k: str(v) for k, v in vars(args).items()}}
    train_loop(model, cfg, Checkpoints(args.out), next_batch, loss, evaluate, config, prepare, "detector")
    return 0


if __name__ == "__main__":
    sys.exit(main())
