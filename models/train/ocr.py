"""Text OCR (tensor-shape labels, graph I/O and tensor names, weight rows): one text crop → CTC `logits`.

Inference contract (what the Rust core must reproduce; `preprocess_text` / `to_ocr_tensor` / `ctc_greedy_decode`
are the reference implementations, `models/ocr_alphabet.json` the machine-readable alphabet):
- grey: the source image (full resolution, upright) converted to 8-bit luma with Pillow's `convert("L")`,
  exactly L = (R·19595 + G·38470 + B·7471 + 32768) >> 16 (ITU-R 601 weights, rounded);
- crop: the text box padded by 0.15 × box height on every side, clipped to the image;
- resize: height 48 keeping the aspect ratio, width w = clamp(round(crop_w · 48 / crop_h), 1, 320) (so crops wider
  than 320 after scaling are squashed horizontally only), with Pillow's BILINEAR filter over the float crop box
  (antialiased; fast_image_resize `Convolution(Bilinear)` with float crop offsets);
- pad: columns w..159 are filled with the mean grey of the resized crop's border pixels (top row, bottom row, left
  column, right column, concatenated; corners count twice), computed in float;
- normalise: float32 `image` [N, 1, 48, 320] = (v / 255 − 0.5) / 0.5 (so [−1, 1]);
- output: `logits` [N, 80, C] (C = 1 + number of symbols); decode greedily per row: argmax over C at each of the
  80 steps, collapse consecutive repeats, drop the blank (class 0); class i ≥ 1 is `symbols[i − 1]`.

Training (`python -m train.ocr --help`): text crops are pre-cut once per scene image into a grey disk cache (text
box plus a 0.5 × height margin at native resolution), then re-cut per sample with random padding, slight rotation
and photometric augmentation. Real crops are drawn with weight count(text)^-0.75 within a kind (rare strings are
not drowned by common ones), mixed with PIL-rendered strings (`train.text_synth`: random shapes, one-digit mutations
of dataset texts, names). Scenes k % 10 == 8 validate (best checkpoint), k % 10 == 9 are the test split.
`--pack PACK --titles` trains from an OCR pack (`train.pack --model ocr`) instead of the dataset, `--device cuda`
and `--workers N` (batches cut by forked processes, `common.BatchPool`) on a lent GPU (`train/device_ocr.sh`).
`--arch attention` trains the issue's attention design instead (`train.ocr_attn`), kept for comparison: at equal
CPU time it read far less than this network (`ocr.MODEL.md`, "Why CTC").
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import torch
from PIL import Image
from torch import nn
from torch.nn import functional as F

from train import common, crop_index, text_synth

ALPHABET_PATH = Path(__file__).resolve().parents[1] / "ocr_alphabet.json"
INPUT_NAMES, OUTPUT_NAMES = ("image",), ("logits",)
OCR_H, OCR_W, TIME_STEPS, MAX_LEN = 48, 320, 80, 32
INFER_PAD_FRAC = 0.15
CACHE_MARGIN_FRAC = 0.5  # cached regions: text box plus this margin (× box height) on every side,
CACHE_MAX_H, CACHE_MAX_W = 96, 1600  # native resolution, scaled down only beyond this
MIN_TEXT_PX = 3.0  # boxes lower than this are skipped entirely
MIN_TRAIN_TEXT_PX = 6.0  # ... and lower than this are not trained on (unreadable; still evaluated)
KINDS = ("shape", "name", "weight", "title")
DEFAULT_CONFIG = {"channels": [16, 32, 64, 96], "hidden": 96, "rnn_layers": 2}
PARAM_BUDGET = 1_260_000
SKEW_MIN_DEG, SKEW_MAX_DEG = 1.5, 20.0  # crops are cut rotated when the image's skew is at least SKEW_MIN_DEG
SKEW_MAX_SIDE = 512  # the skew is estimated on the canvas region block-averaged to at most this side
SKEW_MAX_SS = 4  # rotated crops: at most 4×4 bilinear samples per output pixel
SIZE_BUCKETS = ((0.0, 6.0, "<6px"), (6.0, 9.0, "6-9px"), (9.0, 14.0, "9-14px"), (14.0, 1e9, ">=14px"))


def split_of(scene_index: int) -> str:
    r = scene_index % 10
    return "test" if r == 9 else "val" if r == 8 else "train"


def size_bucket(box_height: float) -> str:
    return next(name for lo, hi, name in SIZE_BUCKETS if lo <= box_height < hi)


# ----------------------------------------------------------------------------------------------------------------
# Alphabet and CTC decoding


class AlphabetError(ValueError):
    """ocr_alphabet.json is malformed."""


class Alphabet:
    """CTC classes: 0 is the blank, class i ≥ 1 is `symbols[i - 1]`."""

    def __init__(self, symbols: list[str]):
        if not symbols or any(len(s) != 1 for s in symbols) or len(set(symbols)) != len(symbols):
            raise AlphabetError("symbols must be distinct single characters")
        self.symbols = list(symbols)
        self.index = {s: i + 1 for i, s in enumerate(self.symbols)}

    @property
    def num_classes(self) -> int:
        return len(self.symbols) + 1

    def covers(self, text: str) -> bool:
        return all(c in self.index for c in text)

    def encode(self, text: str) -> list[int]:
        """Class ids of `text`; raises KeyError on a character outside the alphabet."""
        return [self.index[c] for c in text]

    def decode(self, ids) -> str:
        """Class ids (no blanks expected; blanks are skipped) → text."""
        return "".join(self.symbols[i - 1] for i in ids if i != 0)


def load_alphabet(path: Path = ALPHABET_PATH) -> Alphabet:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise AlphabetError(f"cannot read {path}: {e}") from e
    if doc.get("format") != "netron-ocr.ocr-alphabet" or doc.get("version") != 1 or doc.get("blank") != 0:
        raise AlphabetError(f"{path}: not a netron-ocr.ocr-alphabet v1 file with blank 0")
    alphabet = Alphabet(doc["symbols"])
    if doc.get("num_classes") != alphabet.num_classes:
        raise AlphabetError(f"{path}: num_classes {doc.get('num_classes')} != {alphabet.num_classes}")
    return alphabet


def ctc_greedy_ids(logits: np.ndarray) -> list[list[int]]:
    """[N, T, C] (or [T, C]) scores → per row the class ids after argmax, repeat collapsing and blank removal."""
    arr = np.asarray(logits)
    if arr.ndim == 2:
        arr = arr[None]
    best = arr.argmax(-1)
    out = []
    for row in best:
        ids, prev = [], 0
        for k in row.tolist():
            if k != prev and k != 0:
                ids.append(k)
            prev = k
        out.append(ids)
    return out


def ctc_greedy_decode(logits: np.ndarray, alphabet: Alphabet) -> list[str]:
    return [alphabet.decode(ids) for ids in ctc_greedy_ids(logits)]


def ctc_beam_ids(log_probs: np.ndarray, beam: int = 8, prune: float = -9.0) -> list[tuple[list[int], float]]:
    """CTC prefix beam search over one crop's log-softmax rows `log_probs` [T, C] (blank 0): up to `beam`
    labelings with their log-probability summed over every alignment the search kept, best first (ties: the
    labeling found first). Per step only the `beam` likeliest classes with log-probability above `prune` extend
    a prefix (the blank always counts). Twin of `read::ctc_beam` in the core, which must give the same labelings
    in the same order."""
    lp = np.asarray(log_probs, np.float64)
    neg = -math.inf

    def lae(a: float, b: float) -> float:
        if a == neg:
            return b
        if b == neg:
            return a
        return max(a, b) + math.log1p(math.exp(-abs(a - b)))

    beams: list[tuple[tuple[int, ...], float, float]] = [((), 0.0, neg)]  # (prefix, log p_blank, log p_nonblank)
    for arr in lp:
        row = arr.tolist()
        cand = sorted((int(c) for c in np.nonzero(arr > prune)[0] if c != 0), key=lambda c: -row[c])[:max(1, beam)]
        nxt: dict[tuple[int, ...], list[float]] = {}
        order: list[tuple[int, ...]] = []

        def slot(prefix):
            if prefix not in nxt:
                nxt[prefix] = [neg, neg]
                order.append(prefix)
            return nxt[prefix]

        for prefix, pb, pnb in beams:
            total = lae(pb, pnb)
            s = slot(prefix)
            s[0] = lae(s[0], total + row[0])
            if prefix:
                s[1] = lae(s[1], pnb + row[prefix[-1]])
            for c in cand:
                ext = prefix + (c,)
                e = slot(ext)
                src = pb if prefix and prefix[-1] == c else total
                e[1] = lae(e[1], src + row[c])
        scored = [(p, nxt[p][0], nxt[p][1]) for p in order if nxt[p][0] > neg or nxt[p][1] > neg]
        # Stable sort: equal scores keep insertion order, as in the Rust twin.
        scored.sort(key=lambda b: -lae(b[1], b[2]))
        beams = scored[:max(1, beam)]
    return [(list(p), float(lae(pb, pnb))) for p, pb, pnb in beams]


def ctc_feasible(ids: list[int], steps: int = TIME_STEPS) -> bool:
    """Whether a CTC path of `steps` frames can emit `ids` (each repeat needs a blank between)."""
    repeats = sum(1 for a, b in zip(ids, ids[1:]) if a == b)
    return 0 < len(ids) and len(ids) + repeats <= steps


# ----------------------------------------------------------------------------------------------------------------
# Model


class OcrNet(nn.Module):
    """CNN (height 48 → 1, width 320 → 80) + bidirectional GRU + linear classifier.

    Input float32 [N, 1, 48, 320]; output logits [N, 80, num_classes]."""

    def __init__(self, num_classes: int, channels=(16, 32, 64, 96), hidden: int = 96, rnn_layers: int = 2):
        super().__init__()
        a, b, c, d = channels
        collapse = common.ConvBNAct(d, d, (3, 1))
        collapse.conv.padding = (0, 0)  # 3 rows → 1
        self.cnn = nn.Sequential(
            common.ConvBNAct(1, a, 3, stride=2),  # 24×80
            common.ConvBNAct(a, b, 3),
            nn.MaxPool2d(2),  # 12×80
            common.ConvBNAct(b, c, 3),
            common.ConvBNAct(c, c, 3),
            nn.MaxPool2d((2, 1)),  # 6×80
            common.ConvBNAct(c, d, 3),
            nn.MaxPool2d((2, 1)),  # 3×80
            collapse,  # 1×80
        )
        self.rnn = nn.GRU(d, hidden, num_layers=rnn_layers, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.cnn(x).squeeze(2).transpose(1, 2)  # N×80×d
        return self.fc(self.rnn(f)[0])


def build_model(config: dict) -> nn.Module:
    """The network a checkpoint's config describes: `OcrNet` (CTC), or with `arch` "attention" the comparison
    model `ocr_attn.AttnOcrNet`."""
    if config.get("arch") == "attention":
        from train import ocr_attn

        return ocr_attn.build_model(config)
    return OcrNet(config["num_classes"], tuple(config["channels"]), config["hidden"], config.get("rnn_layers", 2))


def widen_recurrent(model: OcrNet, hidden: int) -> OcrNet:
    """A copy of `model` whose GRU has `hidden` units per direction and layer (at least the model's), giving the same
    logits. The added units keep PyTorch's initialisation for what they read, but nothing reads them yet: their
    columns are zero in the old units' recurrent weights, in the next layer's input weights of the old units and in
    the classifier. Training then grows into them from the model it started from (a larger head warm-started from a
    shipped `ocr.onnx`)."""
    rnn = model.rnn
    old = rnn.hidden_size
    if hidden < old:
        raise ValueError(f"cannot narrow the GRU from {old} to {hidden} units")
    dirs = 2 if rnn.bidirectional else 1
    wide = copy.deepcopy(model)
    wide.rnn = nn.GRU(rnn.input_size, hidden, num_layers=rnn.num_layers, bidirectional=rnn.bidirectional,
                      batch_first=True)
    wide.fc = nn.Linear(hidden * dirs, model.fc.out_features)

    def unit_columns(width: int) -> torch.Tensor:
        """Where the old layer outputs (direction-major, `old` units each) sit among `width`-unit outputs."""
        return torch.cat([torch.arange(old) + d * width for d in range(dirs)])

    gate_rows = torch.cat([torch.arange(old) + g * hidden for g in range(3)])
    with torch.no_grad():
        for layer in range(rnn.num_layers):
            for suffix in ["", "_reverse"][:dirs]:
                name = f"l{layer}{suffix}"
                w_ih, w_hh = getattr(wide.rnn, f"weight_ih_{name}"), getattr(wide.rnn, f"weight_hh_{name}")
                in_cols = torch.arange(rnn.input_size) if layer == 0 else unit_columns(hidden)
                w_ih[gate_rows] = 0.0
                w_ih[gate_rows[:, None], in_cols[None, :]] = getattr(rnn, f"weight_ih_{name}")
                w_hh[gate_rows] = 0.0
                w_hh[gate_rows[:, None], torch.arange(old)[None, :]] = getattr(rnn, f"weight_hh_{name}")
                for kind in ("ih", "hh"):
                    getattr(wide.rnn, f"bias_{kind}_{name}")[gate_rows] = getattr(rnn, f"bias_{kind}_{name}")
        wide.fc.weight.zero_()
        wide.fc.weight[:, unit_columns(hidden)] = model.fc.weight
        wide.fc.bias.copy_(model.fc.bias)
    return wide


# ----------------------------------------------------------------------------------------------------------------
# Preprocessing


def output_width(crop_w: float, crop_h: float) -> int:
    return int(min(OCR_W, max(1, round(crop_w * OCR_H / max(crop_h, 1e-6)))))


def run_width(w: int, margin: int | None, max_w: int = OCR_W) -> int:
    """Input width a 48×w crop runs at in the Rust reader (`read::run_width`, `ReadParams::width_margin`): w plus
    at least `margin` columns of padding, rounded up to a multiple of 32, at most `max_w`; `max_w` without a
    margin (the training width)."""
    if margin is None:
        return max_w
    return min(max_w, -(-(w + margin) // 32) * 32)


def padded_text_box(box, pads, width: float, height: float):
    """box grown by pads (left, top, right, bottom) given as fractions of the box height, clipped to the image."""
    x0, y0, x1, y1 = box
    h = y1 - y0
    l, t, r, b = pads
    return (max(0.0, x0 - l * h), max(0.0, y0 - t * h), min(float(width), x1 + r * h), min(float(height), y1 + b * h))


def preprocess_text(gray: Image.Image, box, pad_frac: float = INFER_PAD_FRAC, skew_deg: float = 0.0) -> np.ndarray:
    """Reference inference preprocessing: grey ("L") source image + text box → uint8 48×w crop (w ≤ 320), unpadded.

    `skew_deg` is the image's skew (`estimate_skew`); within [SKEW_MIN_DEG, SKEW_MAX_DEG] the crop is
    `rotated_text_crop`."""
    if SKEW_MIN_DEG <= abs(skew_deg) <= SKEW_MAX_DEG:
        return rotated_text_crop(np.asarray(gray), box, skew_deg, (pad_frac,) * 4)
    crop = padded_text_box(box, (pad_frac,) * 4, gray.width, gray.height)
    w = output_width(crop[2] - crop[0], crop[3] - crop[1])
    return np.asarray(gray.resize((w, OCR_H), Image.BILINEAR, box=crop))


def estimate_skew(grey: np.ndarray, region) -> float:
    """Skew of the Netron canvas in degrees: the direction of text lines and card edges, atan2(dy, dx) in image
    coordinates (y down; negative = rising to the right), in [−SKEW_MAX_DEG, SKEW_MAX_DEG], else 0.

    Reference for the Rust core (same arithmetic, float64): the integer region (floor/ceil of `region`, clipped) is
    block-averaged by f = ceil(max side / SKEW_MAX_SIDE) (integer block sums / f²; trailing rows/columns dropped);
    3×3 Sobel gx, gy on the interior; magnitude sqrt(gx² + gy²); orientation degrees(atan2(gy, gx)) folded modulo
    90° into [−45, 45); pixels with magnitude above the (n·9 div 10)-th smallest magnitude vote, weighted by
    magnitude, into 180 bins of 0.5°; the histogram is smoothed circularly with (1, 2, 3, 2, 1); the first maximum
    is refined by a parabola through its neighbours. Regions under 32 px on a side (or under 3 blocks) give 0."""
    if not all(math.isfinite(v) for v in region):
        return 0.0
    h_img, w_img = grey.shape[:2]
    x0, y0 = max(0, math.floor(region[0])), max(0, math.floor(region[1]))
    x1, y1 = min(w_img, math.ceil(region[2])), min(h_img, math.ceil(region[3]))
    if x1 - x0 < 32 or y1 - y0 < 32:
        return 0.0
    f = max(1, math.ceil(max(x1 - x0, y1 - y0) / SKEW_MAX_SIDE))
    hh, ww = (y1 - y0) // f, (x1 - x0) // f
    if hh < 3 or ww < 3:
        return 0.0
    block = grey[y0:y0 + hh * f, x0:x0 + ww * f].astype(np.int64).reshape(hh, f, ww, f).sum(axis=(1, 3))
    g = block.astype(np.float64) / float(f * f)
    gx = (g[:-2, 2:] + 2.0 * g[1:-1, 2:] + g[2:, 2:]) - (g[:-2, :-2] + 2.0 * g[1:-1, :-2] + g[2:, :-2])
    gy = (g[2:, :-2] + 2.0 * g[2:, 1:-1] + g[2:, 2:]) - (g[:-2, :-2] + 2.0 * g[:-2, 1:-1] + g[:-2, 2:])
    mag = np.sqrt(gx * gx + gy * gy).ravel()
    folded = (np.mod(np.degrees(np.arctan2(gy, gx)).ravel() + 45.0, 90.0) - 45.0)
    thr = np.sort(mag)[(mag.size * 9) // 10]
    sel = mag > thr
    if not sel.any():
        return 0.0
    bins = np.clip(np.floor((folded[sel] + 45.0) * 2.0).astype(np.int64), 0, 179)
    hist = np.bincount(bins, weights=mag[sel], minlength=180)
    sm = (hist[np.arange(-2, 178) % 180] + 2.0 * hist[np.arange(-1, 179) % 180] + 3.0 * hist
          + 2.0 * hist[np.arange(1, 181) % 180] + hist[np.arange(2, 182) % 180])
    k = int(np.argmax(sm))
    left, mid, right = sm[(k - 1) % 180], sm[k], sm[(k + 1) % 180]
    denom = left - 2.0 * mid + right
    d = 0.5 * (left - right) / denom if denom != 0.0 else 0.0
    angle = -45.0 + (k + 0.5 + d) * 0.5
    return float(angle) if abs(angle) <= SKEW_MAX_DEG else 0.0


def skewed_text_rect(box, angle_deg: float) -> tuple[float, float, float, float]:
    """(cx, cy, w, h) of the text rectangle rotated by `angle_deg` whose axis-aligned bounds are `box`: solves
    W = w·c + h·s, H = w·s + h·c (c = cos|θ|, s = sin|θ|), then w ≥ W/4 and h ≥ H·c. The solved h is fragile (a
    detector box 2 px short of the truth takes a sixth off a 12 px line at 7°, and the crop clips the text): the
    floor H·c keeps the rectangle at least as tall as the box (on the development photos with skew ≥ 1.5°, the
    session-6 OCR on detector boxes read 58.6% of the labels with the bare solve, 68.1% axis-aligned, 71.9% with
    the floor)."""
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    t = math.radians(abs(angle_deg))
    c, s = math.cos(t), math.sin(t)
    det = c * c - s * s
    w = max((bw * c - bh * s) / det, 0.25 * bw)
    h = max((bh * c - bw * s) / det, bh * c)
    return (x0 + x1) / 2.0, (y0 + y1) / 2.0, w, h


def rotated_text_crop(grey: np.ndarray, box, angle_deg: float, pads, origin=(0.0, 0.0),
                      scale=(1.0, 1.0)) -> np.ndarray:
    """Reference rotated crop: the `skewed_text_rect` of `box`, grown by `pads` (left, top, right, bottom, × its
    height) along its own axes, sampled upright into uint8 48×w (w = `output_width` of the grown rectangle).

    Output pixel (j, i) averages ss × ss bilinear samples (ss = min(SKEW_MAX_SS, ceil(max(du, dv))), du, dv = source
    pixels per output pixel) at rectangle coordinates u = u0 + (j + (a + ½)/ss)·du, v = v0 + (i + (b + ½)/ss)·dv,
    source x = cx + u·cos θ − v·sin θ, y = cy + u·sin θ + v·cos θ, pixel centres at +½, coordinates clamped to the
    image (edge replicated); the mean is rounded with floor(v + ½). `origin`/`scale` map source coordinates into
    `grey` when it is a resized cut-out (training cache): X = (x − origin_x)·scale_x."""
    cx, cy, w, h = skewed_text_rect(box, angle_deg)
    left, top, right, bottom = pads
    u0, v0 = -w / 2.0 - left * h, -h / 2.0 - top * h
    uw, vh = w + (left + right) * h, h + (top + bottom) * h
    ow = output_width(uw, vh)
    du, dv = uw / ow, vh / OCR_H
    ss = int(min(SKEW_MAX_SS, max(1, math.ceil(max(du, dv) - 1e-9))))
    t = math.radians(angle_deg)
    c, s = math.cos(t), math.sin(t)
    sub = (np.arange(ss) + 0.5) / ss
    u = u0 + (np.arange(ow)[:, None] + sub[None, :]).ravel() * du  # ow·ss
    v = v0 + (np.arange(OCR_H)[:, None] + sub[None, :]).ravel() * dv  # 48·ss
    x = cx + u[None, :] * c - v[:, None] * s
    y = cy + u[None, :] * s + v[:, None] * c
    gh, gw = grey.shape[:2]
    fx = (x - origin[0]) * scale[0] - 0.5
    fy = (y - origin[1]) * scale[1] - 0.5
    fx = np.clip(fx, 0.0, gw - 1.0)
    fy = np.clip(fy, 0.0, gh - 1.0)
    ix, iy = np.floor(fx).astype(np.int64), np.floor(fy).astype(np.int64)
    ax, ay = fx - ix, fy - iy
    ix1, iy1 = np.minimum(ix + 1, gw - 1), np.minimum(iy + 1, gh - 1)
    p = grey.astype(np.float64)
    val = ((1.0 - ay) * ((1.0 - ax) * p[iy, ix] + ax * p[iy, ix1]) + ay * ((1.0 - ax) * p[iy1, ix] + ax * p[iy1, ix1]))
    val = val.reshape(OCR_H, ss, ow, ss).mean(axis=(1, 3))
    return np.clip(np.floor(val + 0.5), 0, 255).astype(np.uint8)


def border_mean(crop: np.ndarray) -> float:
    """Mean of top row, bottom row, left column, right column (concatenated, corners twice) as float."""
    c = crop.astype(np.float64)
    return float(np.concatenate([c[0], c[-1], c[:, 0], c[:, -1]]).mean())


def to_ocr_tensor(crops: list[np.ndarray]) -> torch.Tensor:
    """uint8 48×w grey crops (w ≤ 320) → float32 [N, 1, 48, 320]: (v/255 − 0.5)/0.5, right-padded with the
    normalised border mean."""
    out = np.empty((len(crops), 1, OCR_H, OCR_W), np.float32)
    for k, c in enumerate(crops):
        if c.ndim != 2 or c.shape[0] != OCR_H or not 1 <= c.shape[1] <= OCR_W:
            raise ValueError(f"crop must be uint8 {OCR_H}×(1..{OCR_W}), got {c.shape}")
        w = c.shape[1]
        out[k, 0, :, :w] = c.astype(np.float32) / 127.5 - 1.0
        out[k, 0, :, w:] = border_mean(c) / 127.5 - 1.0
    return torch.from_numpy(out)


def warp_text(canvas: np.ndarray, region, target, angle_deg: float = 0.0) -> np.ndarray:
    """Cut float source box `target` out of `canvas` (a copy of source `region` = (x0, y0, x1, y1), stretched to
    the canvas size) and resize it to 48×w with w from `output_width`; bilinear at 2× then a 2×2 area average when
    the canvas is denser than the output."""
    rx0, ry0, rx1, ry1 = region
    ch, cw = canvas.shape[:2]
    sx, sy = cw / max(1e-6, rx1 - rx0), ch / max(1e-6, ry1 - ry0)
    tx0, ty0, tx1, ty1 = target
    w = output_width(tx1 - tx0, ty1 - ty0)
    ax, ay = (tx1 - tx0) * sx / w, (ty1 - ty0) * sy / OCR_H
    ss = 2 if max(ax, ay) > 1.3 else 1
    ow, oh = w * ss, OCR_H * ss
    a, d = ax / ss, ay / ss
    m = np.array([[a, 0.0, (tx0 - rx0) * sx + 0.5 * a - 0.5], [0.0, d, (ty0 - ry0) * sy + 0.5 * d - 0.5]])
    if angle_deg:
        c, s = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
        cx, cy = (ow - 1) / 2, (oh - 1) / 2
        m = m @ np.array([[c, -s, cx - c * cx + s * cy], [s, c, cy - s * cx - c * cy], [0, 0, 1]])
    out = cv2.warpAffine(np.ascontiguousarray(canvas), m, (ow, oh), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                         borderMode=cv2.BORDER_REPLICATE)
    if ss == 2:
        out = cv2.resize(out, (w, OCR_H), interpolation=cv2.INTER_AREA)
    return out


def sample_text_pads(rng: np.random.Generator) -> tuple[float, float, float, float]:
    """Training padding as fractions of box height: left/right −0.05–0.45, top/bottom −0.08–0.35 (around the
    inference 0.15, as wide as the detector's box errors: their offsets from the truth box have a standard
    deviation of 0.13–0.23 × height horizontally, 0.07–0.09 vertically)."""
    lr = rng.uniform(-0.05, 0.45, size=2)
    tb = rng.uniform(-0.08, 0.35, size=2)
    return float(lr[0]), float(tb[0]), float(lr[1]), float(tb[1])


def augment_grey(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`common.augment_photometric` on a grey crop (via RGB replication, back to luma)."""
    rgb = common.augment_photometric(np.repeat(crop[:, :, None], 3, axis=2), rng)
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)


# ----------------------------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class TextCrop:
    """One text in one scene image: box in source pixels, the text as drawn, kind "shape" | "name" | "weight"."""

    image: common.SceneImage
    box: tuple[float, float, float, float]
    text: str
    kind: str

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


def collect_text_crops(data_dir: Path, alphabet: Alphabet, titles: bool = False) -> tuple[list[TextCrop], Counter]:
    """Every text crop of `DIR/ocr/index.jsonl` (or, without it, of the truth files; `train.crop_index`) that the
    OCR can learn: known kind, 1–32 characters of the alphabet, CTC-feasible in 80 steps, box ≥ MIN_TEXT_PX high.
    With `titles`, node titles as drawn (kind `title`, derived from the truth files) are added.
    Returns (crops sorted by image then y, x; counts of skipped records by reason)."""
    skipped: Counter = Counter()
    crops = []
    records = crop_index.index_records(data_dir, "ocr")
    if titles:
        records += crop_index.index_records(data_dir, "ocr-titles")
    for img, rec in records:
        box = tuple(float(v) for v in rec["box"])
        text, kind = rec.get("text") or "", rec.get("kind")
        if kind not in KINDS:
            skipped[f"kind {kind}"] += 1
        elif not text or len(text) > MAX_LEN:
            skipped["length"] += 1
        elif not alphabet.covers(text):
            skipped["characters"] += 1
        elif not ctc_feasible(alphabet.encode(text)):
            skipped["ctc"] += 1
        elif box[3] - box[1] < MIN_TEXT_PX or box[2] - box[0] < 1.0:
            skipped["tiny"] += 1
        else:
            crops.append(TextCrop(img, box, text, kind))
    crops.sort(key=lambda c: (c.image.index, c.image.kind, c.box[1], c.box[0]))
    return crops, skipped


def text_cache_region(box, width: int, height: int) -> tuple[int, int, int, int]:
    """Integer source region cached for a text box: the box plus CACHE_MARGIN_FRAC × its height, clipped."""
    x0, y0, x1, y1 = box
    m = CACHE_MARGIN_FRAC * (y1 - y0)
    return (max(0, int(math.floor(x0 - m))), max(0, int(math.floor(y0 - m))),
            min(width, int(math.ceil(x1 + m))), min(height, int(math.ceil(y1 + m))))


class TextCache(crop_index.RegionCache):
    """Text boxes plus a 0.5 × height margin, grey, native resolution (scaled down only beyond CACHE_MAX_H × W)."""

    def __init__(self, crops: list[TextCrop], cache_dir: Path, progress: bool = True):
        self.crops = crops
        super().__init__([(c.image, c.box) for c in crops], text_cache_region, cache_dir,
                         f"ocr-m{CACHE_MARGIN_FRAC}-{CACHE_MAX_H}x{CACHE_MAX_W}", grey=True, max_h=CACHE_MAX_H,
                         max_w=CACHE_MAX_W, progress=progress, desc="text cache")


def cached_sample(cache: TextCache, i: int, pads, angle: float = 0.0, skew: float = 0.0) -> np.ndarray:
    """Training crop i with `pads`; `angle` a small extra rotation (augmentation), `skew` the image's skew:
    within [SKEW_MIN_DEG, SKEW_MAX_DEG] the crop is cut rotated as at inference (`rotated_text_crop`), from the
    cached region."""
    canvas, region, (w, h) = cache.get(i)
    if SKEW_MIN_DEG <= abs(skew) <= SKEW_MAX_DEG:
        scale = (canvas.shape[1] / max(1e-6, region[2] - region[0]), canvas.shape[0] / max(1e-6, region[3] - region[1]))
        return rotated_text_crop(canvas, cache.crops[i].box, skew, pads, origin=region[:2], scale=scale)
    target = padded_text_box(cache.crops[i].box, pads, w, h)
    return warp_text(canvas, region, target, angle)


def canvas_region(truth: dict) -> tuple[float, float, float, float]:
    """The truth canvas box grown by 4% of its size on every side (what the cropper's padded crop approximates)."""
    x0, y0, x1, y1 = truth["canvas"]["box"]
    px, py = 0.04 * (x1 - x0), 0.04 * (y1 - y0)
    return x0 - px, y0 - py, x1 + px, y1 + py


def image_skews(images, cache_dir: Path, progress: bool = True) -> dict[str, float]:
    """`estimate_skew` of every image in `images` (SceneImage: photos and screenshots alike, as the core does) on
    its `canvas_region`, keyed by image key and cached in `cache_dir/skew.json`."""
    from tqdm import tqdm

    path = Path(cache_dir) / "skew.json"
    known = json.loads(path.read_text()) if path.is_file() else {}
    todo = sorted({im for im in images if im.key not in known}, key=lambda im: im.key)
    for im in tqdm(todo, desc="skew", disable=not progress or not todo, dynamic_ncols=True):
        with Image.open(im.image_path) as pil:
            grey = np.asarray(pil.convert("RGB").convert("L"))
        known[im.key] = estimate_skew(grey, canvas_region(common.load_truth(im.truth_path)))
    if todo:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(known, sort_keys=True))
    return {im.key: known[im.key] for im in images}


def synthetic_sample(rng: np.random.Generator, mutation_pool: list[str]) -> tuple[np.ndarray, str, str]:
    """A PIL-rendered crop: (uint8 48×w, text, kind). Mix: random shapes 50%, one-digit mutations of dataset texts
    25%, names 15%, weight values 10%."""
    r = rng.random()
    bold = 0
    if r < 0.5 or (r < 0.75 and not mutation_pool):
        text, kind = text_synth.random_shape(rng), "shape"
    elif r < 0.75:
        base = mutation_pool[int(rng.integers(0, len(mutation_pool)))]
        text, kind = text_synth.mutate_digits(base, rng), "shape"
    elif r < 0.9:
        text, kind = text_synth.random_name(rng), "name"
    else:
        (text, bold), kind = text_synth.random_weight(rng), "weight"
    canvas, box = text_synth.render_text(text, rng, bold_chars=bold)
    h, w = canvas.shape
    target = padded_text_box(box, sample_text_pads(rng), w, h)
    angle = float(rng.normal(0.0, 0.7)) if rng.random() < 0.5 else 0.0
    return augment_grey(warp_text(canvas, (0, 0, w, h), target, angle), rng), text, kind


# ----------------------------------------------------------------------------------------------------------------
# Metrics


def edit_ops(ref: str, hyp: str) -> tuple[int, list[tuple[str, str]]]:
    """Levenshtein distance and the aligned edits as (ref char or "", hyp char or "") pairs."""
    n, m = len(ref), len(hyp)
    d = np.zeros((n + 1, m + 1), np.int32)
    d[:, 0] = np.arange(n + 1)
    d[0, :] = np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + (ref[i - 1] != hyp[j - 1]))
    ops = []
    i, j = n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0 and d[i, j] == d[i - 1, j - 1] + (ref[i - 1] != hyp[j - 1]):
            if ref[i - 1] != hyp[j - 1]:
                ops.append((ref[i - 1], hyp[j - 1]))
            i, j = i - 1, j - 1
        elif i > 0 and d[i, j] == d[i - 1, j] + 1:
            ops.append((ref[i - 1], ""))
            i -= 1
        else:
            ops.append(("", hyp[j - 1]))
            j -= 1
    return int(d[n, m]), ops[::-1]


def text_metrics(refs: list[str], hyps: list[str], kinds: list[str] | None = None,
                 heights: list[float] | None = None, top: int = 15, sources: list[str] | None = None) -> dict:
    """exact-match rate, character accuracy (1 − Σ edits / Σ ref chars), most frequent confusions, per kind and
    per box-height bucket; with `sources` (the image kind of each crop: "photo" / "screenshot") also per source,
    each with its own per-height buckets."""
    def block(idx):
        if not idx:
            return {"n": 0}
        exact = sum(refs[i] == hyps[i] for i in idx)
        edits = sum(edit_ops(refs[i], hyps[i])[0] for i in idx)
        chars = sum(len(refs[i]) for i in idx)
        return {"n": len(idx), "exact": exact / len(idx), "char_acc": 1.0 - edits / max(1, chars)}

    def by_height(idx):
        return {name: block([i for i in idx if lo <= heights[i] < hi]) for lo, hi, name in SIZE_BUCKETS}

    all_idx = list(range(len(refs)))
    out = block(all_idx)
    conf: Counter = Counter()
    for r, h in zip(refs, hyps):
        if r != h:
            conf.update(edit_ops(r, h)[1])
    out["confusions"] = [{"true": a or "∅", "pred": b or "∅", "count": c} for (a, b), c in conf.most_common(top)]
    if kinds is not None:
        out["per_kind"] = {k: block([i for i in all_idx if kinds[i] == k]) for k in KINDS
                           if any(kk == k for kk in kinds)}
    if heights is not None:
        out["per_height"] = by_height(all_idx)
    if sources is not None:
        out["per_source"] = {}
        for src in sorted(set(sources)):
            idx = [i for i in all_idx if sources[i] == src]
            out["per_source"][src] = block(idx)
            if heights is not None:
                out["per_source"][src]["per_height"] = by_height(idx)
    return out


def predict(model: nn.Module, crops: list[np.ndarray], alphabet: Alphabet, batch: int = 128,
            device: torch.device | None = None) -> list[str]:
    """Greedy readings of uint8 48×w crops, the model in eval mode (on `device`, default CPU)."""
    if getattr(model, "greedy", None) is not None:
        from train import ocr_attn

        return ocr_attn.predict(model, crops, alphabet, batch)
    model.eval()
    out = []
    with torch.no_grad():
        for s in range(0, len(crops), batch):
            x = to_ocr_tensor(crops[s:s + batch])
            logits = model(x if device is None else x.to(device)).float().cpu().numpy()
            out += ctc_greedy_decode(logits, alphabet)
    return out


# ----------------------------------------------------------------------------------------------------------------
# Training command


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m train.ocr", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=None, help="dataset dir (docs/dataset.md) or a bare scenes folder")
    p.add_argument("--pack", type=Path, default=None, help="train from an OCR pack (`train.pack --model ocr`) "
                   "instead of --data")
    p.add_argument("--device", type=str, default="cpu", help="torch device for the model (cpu, cuda)")
    p.add_argument("--workers", type=int, default=0, help="processes drawing training batches (0: in the loop)")
    p.add_argument("--out", type=Path, required=True, help="checkpoint dir outside the repo "
                   "(e.g. /root/.cache/netron-ocr/ckpt/ocr); resumes from its last.pt")
    p.add_argument("--alphabet", type=Path, default=ALPHABET_PATH)
    p.add_argument("--cache", type=Path, default=None, help="crop cache dir (default: common.default_cache_dir)")
    p.add_argument("--epochs", type=float, default=30.0, help="epochs of --epoch-samples samples each")
    p.add_argument("--epoch-samples", type=int, default=20000)
    p.add_argument("--steps", type=int, default=None, help="total optimizer steps (overrides --epochs)")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--eval-every", type=int, default=None, help="steps (default: once per epoch)")
    p.add_argument("--max-val", type=int, default=3000)
    p.add_argument("--synth-frac", type=float, default=0.3, help="share of each batch rendered by text_synth")
    p.add_argument("--kind-weights", type=str, default="shape=0.65,name=0.2,weight=0.15",
                   help="kind=weight,…; with --titles add e.g. title=0.15")
    p.add_argument("--titles", action="store_true",
                   help="also train (and validate) on node titles as drawn (kind `title`: the op, or the node name "
                        "in names mode); crops cached under a separate `ocr-titles` cache")
    p.add_argument("--no-skew", action="store_true", help="cut every crop axis-aligned (the pre-session-7 "
                   "preprocessing): no `estimate_skew`, no rotated crops")
    p.add_argument("--rarity-power", type=float, default=0.75, help="real crops drawn ∝ count(text)^-power")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--weight-ema", type=float, default=0.0, help="evaluate and save an exponential moving "
                   "average of the weights with this decay (e.g. 0.998; 0: off; common.train_loop)")
    p.add_argument("--max-minutes", type=float, default=None)
    p.add_argument("--budget-minutes", type=float, default=None,
                   help="training time over which the LR schedule runs (and then stops), summed over resumed runs")
    p.add_argument("--init", type=Path, default=None,
                   help="a checkpoint (.pt) whose config and model weights start a new run (fresh optimizer)")
    p.add_argument("--warm-start", type=Path, default=None, help="exported ocr .onnx to start from "
                   "(only when --out has no checkpoint yet; BatchNorm is then kept frozen)")
    p.add_argument("--channels", type=str, default=None, help="c1,c2,c3,c4 CNN widths (new runs only)")
    p.add_argument("--hidden", type=int, default=None, help="GRU units per direction (new runs only); with "
                   "--warm-start from a file with fewer, its GRU is widened without changing its output")
    p.add_argument("--arch", choices=["ctc", "attention"], default="ctc",
                   help="new runs only: the shipped CTC network, or the issue's attention design for comparison "
                        "(`train.ocr_attn`: patches, Transformer encoder, GRU decoder with cross-attention)")
    return p.parse_args(argv)


class RealSampler:
    """Draws training crop ids: kind by `kind_weights` (renormalised over kinds present), then a crop within the
    kind with probability ∝ count(text)^-power."""

    def __init__(self, crops: list[TextCrop], ids: list[int], kind_weights: dict[str, float], power: float):
        self.kinds, self.kind_p, self.ids, self.cum = [], [], {}, {}
        for kind in KINDS:
            kid = [i for i in ids if crops[i].kind == kind]
            if not kid or kind_weights.get(kind, 0.0) <= 0:
                continue
            counts = Counter(crops[i].text for i in kid)
            w = np.array([counts[crops[i].text] ** -power for i in kid])
            self.kinds.append(kind)
            self.kind_p.append(kind_weights[kind])
            self.ids[kind] = np.array(kid)
            self.cum[kind] = np.cumsum(w / w.sum())
        if not self.kinds:
            raise ValueError("no training crops of a weighted kind")
        self.kind_p = np.array(self.kind_p) / sum(self.kind_p)

    def draw(self, rng: np.random.Generator) -> int:
        kind = self.kinds[int(rng.choice(len(self.kinds), p=self.kind_p))]
        j = int(np.searchsorted(self.cum[kind], rng.random() * self.cum[kind][-1], side="right"))
        return int(self.ids[kind][min(j, len(self.ids[kind]) - 1)])


def main(argv=None) -> int:
    args = parse_args(argv)
    if (args.data is None) == (args.pack is None):
        raise SystemExit("give exactly one of --data and --pack")
    if args.pack is not None and not args.titles:
        raise SystemExit("OCR packs hold node titles: train from them with --titles")
    common.seed_everything(args.seed)
    common.set_threads(args.threads)
    alphabet = load_alphabet(args.alphabet)
    if args.pack is not None:
        from train.pack import PackedTexts

        cache = PackedTexts(args.pack)
        crops, skipped, cache_dir = cache.crops, Counter(), args.pack
        skew_of = [0.0] * len(crops) if args.no_skew else cache.skews
    else:
        crops, skipped = collect_text_crops(args.data, alphabet, titles=args.titles)
        if not crops:
            raise SystemExit(f"no text crops found under {args.data}")
        cache_dir = args.cache or common.default_cache_dir(args.data, "ocr-titles" if args.titles else "ocr")
        cache = TextCache(crops, cache_dir)
        skews = image_skews([c.image for c in crops], cache_dir) if not args.no_skew else {}
        skew_of = [skews.get(c.image.key, 0.0) for c in crops]
    train_ids = [i for i, c in enumerate(crops) if split_of(c.image.index) == "train" and c.height >= MIN_TRAIN_TEXT_PX]
    val_ids = [i for i, c in enumerate(crops) if split_of(c.image.index) == "val"]
    if not train_ids:
        raise SystemExit("no training crops (scenes with k % 10 not in {8, 9})")
    if not val_ids:
        print("warning: no validation scenes (k % 10 == 8); validating on a training subset", file=sys.stderr)
        val_ids = train_ids[: max(1, len(train_ids) // 10)]
    if len(val_ids) > args.max_val:
        val_ids = sorted(np.random.default_rng(args.seed + 17).choice(val_ids, args.max_val, replace=False).tolist())
    kind_weights = {k: float(v) for k, v in (kv.split("=") for kv in args.kind_weights.split(","))}
    sampler = RealSampler(crops, train_ids, kind_weights, args.rarity_power)
    mutation_pool = sorted({crops[i].text for i in train_ids if crops[i].kind == "shape"})
    kinds = Counter(crops[i].kind for i in train_ids)
    print(f"{len(crops)} text crops (skipped {dict(skipped)}): train {len(train_ids)} {dict(kinds)}, "
          f"{len({crops[i].text for i in train_ids})} distinct texts, val {len(val_ids)}, cache {cache_dir}",
          flush=True)

    def new_config() -> dict:
        if args.arch == "attention":
            from train import ocr_attn

            if args.warm_start or args.channels or args.hidden or args.device != "cpu":
                raise SystemExit("--arch attention starts from scratch, with its own sizes, on the CPU")
            return dict(ocr_attn.DEFAULT_CONFIG, num_classes=alphabet.num_classes, symbols=alphabet.symbols,
                        warm_start=None)
        config = dict(DEFAULT_CONFIG, num_classes=alphabet.num_classes, symbols=alphabet.symbols,
                      warm_start=str(args.warm_start) if args.warm_start else None)
        if args.channels:
            config["channels"] = [int(v) for v in args.channels.split(",")]
        if args.hidden:
            config["hidden"] = args.hidden
        return config

    ckpts = common.Checkpoints(args.out)
    previous = ckpts.load_latest()
    config, init_weights = common.run_start(previous, args.init, new_config)
    if config["symbols"] != alphabet.symbols:
        raise SystemExit("ocr_alphabet.json differs from the checkpoint's alphabet")
    model = build_model(config)
    n_params = common.count_params(model)
    if config.get("arch") == "attention":
        sizes = {k: v for k, v in config.items() if k not in ("symbols", "num_classes", "warm_start")}
        print(f"AttnOcrNet {sizes}: {n_params} params", flush=True)
    else:
        print(f"OcrNet {config['channels']} GRU {config['hidden']}×{config.get('rnn_layers', 2)}: {n_params} params",
              flush=True)
    if n_params > PARAM_BUDGET:
        raise SystemExit(f"{n_params} params exceed the budget {PARAM_BUDGET}")
    if previous is None and args.warm_start:
        from train.export_cls_ocr import onnx_gru_hidden, warm_start

        shipped = onnx_gru_hidden(args.warm_start)
        if shipped < config["hidden"]:
            base = build_model(dict(config, hidden=shipped))
            warm_start(base, args.warm_start, "ocr")
            model = widen_recurrent(base, config["hidden"])
            print(f"warm start from {args.warm_start}, its GRU widened from {shipped} to {config['hidden']} units",
                  flush=True)
        else:
            warm_start(model, args.warm_start, "ocr")
            print(f"warm start from {args.warm_start}", flush=True)
    if init_weights is not None:
        model.load_state_dict(init_weights)
        print(f"initialised from {args.init}", flush=True)
    cfg = common.epoch_loop_config(args)

    def draw_samples(n: int, rng: np.random.Generator) -> tuple[list[np.ndarray], list[str]]:
        images, texts = [], []
        n_syn = int(rng.binomial(n, args.synth_frac))
        for _ in range(n_syn):
            img, text, _ = synthetic_sample(rng, mutation_pool)
            images.append(img)
            texts.append(text)
        for _ in range(n - n_syn):
            i = sampler.draw(rng)
            angle = float(rng.normal(0.0, 0.7)) if rng.random() < 0.5 else 0.0
            skew = skew_of[i] + float(rng.normal(0.0, 0.5)) if skew_of[i] else 0.0
            images.append(augment_grey(cached_sample(cache, i, sample_text_pads(rng), angle, skew), rng))
            texts.append(crops[i].text)
        return images, texts

    pool = common.BatchPool(draw_samples, args.batch, args.workers) if args.workers > 0 else None
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    model.to(device)

    def next_batch(rng: np.random.Generator):
        images, texts = pool.next(rng) if pool else draw_samples(args.batch, rng)
        targets = [alphabet.encode(t) for t in texts]
        return (to_ocr_tensor(images).to(device),
                torch.tensor([k for t in targets for k in t], dtype=torch.long, device=device),
                torch.tensor([len(t) for t in targets], dtype=torch.long, device=device))

    def loss_fn(model, batch):
        x, targets, lengths = batch
        if config.get("arch") == "attention":
            from train import ocr_attn

            return ocr_attn.loss(model, x, targets, lengths), {}
        log_probs = model(x).log_softmax(2).transpose(0, 1)  # T×N×C
        inputs = torch.full((x.shape[0],), log_probs.shape[0], dtype=torch.long, device=x.device)
        loss = F.ctc_loss(log_probs, targets, inputs, lengths, blank=0, reduction="mean", zero_infinity=True)
        return loss, {}

    val_images = [cached_sample(cache, i, (INFER_PAD_FRAC,) * 4, skew=skew_of[i]) for i in val_ids]
    val_refs = [crops[i].text for i in val_ids]
    val_kinds = [crops[i].kind for i in val_ids]
    val_heights = [crops[i].height for i in val_ids]

    def evaluate(model):
        hyps = predict(model, val_images, alphabet, device=device)
        m = text_metrics(val_refs, hyps, val_kinds, val_heights, top=5)
        readable = [i for i, h in enumerate(val_heights) if h >= MIN_TRAIN_TEXT_PX]
        exact_readable = sum(val_refs[i] == hyps[i] for i in readable) / max(1, len(readable))
        flat = {"val_exact": m["exact"], "val_char_acc": m["char_acc"], "val_exact_readable": exact_readable,
                "val_n": m["n"]}
        for k, b in m.get("per_kind", {}).items():
            if b["n"]:
                flat[f"val_exact_{k}"] = b["exact"]
        flat["confusions"] = m["confusions"]
        return exact_readable + 1e-3 * m["char_acc"], flat

    prepare = common.freeze_batchnorm if config.get("warm_start") else None
    t0 = time.time()
    try:
        common.train_loop(model, cfg, ckpts, next_batch, loss_fn, evaluate, config, prepare, desc="ocr",
                          eval_at_start=bool(args.warm_start or args.init))
    finally:
        if pool:
            pool.close()
    print(f"training took {time.time() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
