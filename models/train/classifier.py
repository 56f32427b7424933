"""Operator classifier: one node-title crop → `logits` [N, 72] over the operators of `models/vocab.json`.

Inference contract (what the Rust core must reproduce; `preprocess_title` is the reference implementation):
- crop: the node's title box padded by `INFER_PAD` (7) source pixels on every side, clipped to the image, cut from
  the full-resolution decoded source image (the photo or screenshot, upright RGB);
- resize: stretched (aspect not kept) to 160×96 (W×H) with Pillow's BILINEAR filter over the float crop box
  (`Image.resize((160, 96), Image.BILINEAR, box=padded_box)`): a separable triangle filter whose support grows
  with the downscale factor (antialiased), i.e. fast_image_resize `ResizeAlg::Convolution(FilterType::Bilinear)`
  with the crop given as float offsets;
- normalise: float32 NCHW, `(v / 255 - MEAN[c]) / STD[c]` with the ImageNet MEAN/STD of `train.common`;
- output: `logits` [N, 72] with the calibration temperature already folded in (softmax gives calibrated
  probabilities); class id = `index` in vocab.json.

Training (`python -m train.classifier --help`): crops are pre-cut once per scene image into a disk cache (the
title box plus a 16 px margin, RGB, native resolution, `.npy` memory-mapped), then every sample re-cuts the title
box from that copy with random padding 0–14 source px per side (and a little jitter/rotation), stretches it to
160×96, and applies photometric augmentation. Sampling is class-balanced over operators. Scenes k % 10 == 8 are the
validation/calibration split (best checkpoint, temperature), k % 10 == 9 the test split (`train.eval_classifier`),
the rest train. `--pack` trains from a title pack (`train.pack`) instead of the dataset, e.g. on a lent GPU.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import torch
from PIL import Image
from torch import nn
from torch.nn import functional as F

from datagen.vocab import VOCAB_PATH, Vocab, load_vocab
from train import common, crop_index

INPUT_NAMES, OUTPUT_NAMES = ("image",), ("logits",)
INPUT_W, INPUT_H = 160, 96
INFER_PAD = 7.0
PAD_RANGE = (0.0, 14.0)
CACHE_MAX_W, CACHE_MAX_H = 320, 192
CACHE_MARGIN = 16.0
MIN_TITLE_PX = 4.0
CALIBRATION_REMAINDER = 8
MIN_CALIBRATION_CROPS = 200  # fewer validation crops give a meaningless temperature
TEST_REMAINDER = 9
DEFAULT_CONFIG = {"widths": [24, 32, 64, 96, 160], "hidden": 128, "dropout": 0.1}
PARAM_BUDGET = 2_710_000


def split_of(scene_index: int) -> str:
    """"test" (k % 10 == 9, docs/dataset.md), "val" (k % 10 == 8: best checkpoint + temperature) or "train"."""
    r = scene_index % 10
    return "test" if r == TEST_REMAINDER else "val" if r == CALIBRATION_REMAINDER else "train"


# ----------------------------------------------------------------------------------------------------------------
# Model


class ClassifierNet(nn.Module):
    """Stem (3×3/2 conv) + four depthwise-separable stages (each: one stride-2 block, one residual block) + global
    average pooling + MLP head. Input float32 N×3×96×160 (normalised), output logits N×num_classes."""

    def __init__(self, num_classes: int, widths=(24, 32, 64, 96, 160), hidden: int = 128, dropout: float = 0.1):
        super().__init__()
        if len(widths) != 5:
            raise ValueError("widths = (stem, stage1, stage2, stage3, stage4)")
        layers: list[nn.Module] = [common.ConvBNAct(3, widths[0], 3, stride=2)]
        cin = widths[0]
        for w in widths[1:]:
            layers += [common.DepthwiseSeparable(cin, w, stride=2), common.DepthwiseSeparable(w, w, stride=1)]
            cin = w
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Sequential(nn.Linear(cin, hidden), nn.ReLU(inplace=True), nn.Dropout(dropout),
                                  nn.Linear(hidden, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.pool(self.features(x)), 1))

    @property
    def last_linear(self) -> nn.Linear:
        return self.head[-1]


def build_model(config: dict) -> ClassifierNet:
    return ClassifierNet(config["num_classes"], tuple(config["widths"]), config["hidden"], config.get("dropout", 0.1))


# ----------------------------------------------------------------------------------------------------------------
# Data: title crops


@dataclass(frozen=True)
class TitleCrop:
    """One node title in one scene image. `box` is the truth title box in source pixels; `label` the class id."""

    image: common.SceneImage
    box: tuple[float, float, float, float]
    label: int
    theme: str


def collect_title_crops(data_dir: Path, vocab: Vocab) -> list[TitleCrop]:
    """Every title of `DIR/classifier/index.jsonl` (or, without it, of the truth files; `train.crop_index`) whose
    op is in the vocabulary and whose box is at least MIN_TITLE_PX on each side. Sorted by image, then y, x."""
    ops = {op: i for i, op in enumerate(vocab.ops)}
    out: list[TitleCrop] = []
    for img, rec in crop_index.index_records(data_dir, "classifier"):
        if rec.get("op") not in ops:
            continue
        x0, y0, x1, y1 = (float(v) for v in rec["box"])
        if x1 - x0 < MIN_TITLE_PX or y1 - y0 < MIN_TITLE_PX:
            continue
        out.append(TitleCrop(img, (x0, y0, x1, y1), ops[rec["op"]], rec.get("theme") or "light"))
    out.sort(key=lambda c: (c.image.index, c.image.kind, c.box[1], c.box[0]))
    return out


def cache_region(box, width: int, height: int) -> tuple[int, int, int, int]:
    """Integer source region cached for a title box: the box plus CACHE_MARGIN, clipped to the image."""
    x0, y0, x1, y1 = box
    return (max(0, int(math.floor(x0 - CACHE_MARGIN))), max(0, int(math.floor(y0 - CACHE_MARGIN))),
            min(width, int(math.ceil(x1 + CACHE_MARGIN))), min(height, int(math.ceil(y1 + CACHE_MARGIN))))


class TitleCache(crop_index.RegionCache):
    """Title boxes plus CACHE_MARGIN px, RGB, at native resolution (scaled down only beyond CACHE_MAX_H × W)."""

    def __init__(self, crops: list[TitleCrop], cache_dir: Path, progress: bool = True):
        self.crops = crops
        super().__init__([(c.image, c.box) for c in crops], cache_region, cache_dir,
                         f"cls-m{int(CACHE_MARGIN)}-{CACHE_MAX_H}x{CACHE_MAX_W}", grey=False, max_h=CACHE_MAX_H,
                         max_w=CACHE_MAX_W, progress=progress, desc="title cache")


def padded_box(box, pads, width: float, height: float) -> tuple[float, float, float, float]:
    """box grown by pads (left, top, right, bottom) source px, clipped to the image."""
    x0, y0, x1, y1 = box
    l, t, r, b = pads
    return (max(0.0, x0 - l), max(0.0, y0 - t), min(float(width), x1 + r), min(float(height), y1 + b))


def cut_from_cache(cached: np.ndarray, region, target, angle_deg: float = 0.0) -> np.ndarray:
    """Re-cut `target` (float source box, inside `region`) from a cached region copy and stretch it to INPUT_W×H,
    optionally rotated by `angle_deg` about its centre. Resampling: bilinear at 2× then a 2×2 area average when the
    cached copy is more than 1.3× denser than the output (approximates the antialiased bilinear of
    `preprocess_title`)."""
    rx0, ry0, rx1, ry1 = region
    ch, cw = cached.shape[:2]
    sx, sy = cw / max(1e-6, rx1 - rx0), ch / max(1e-6, ry1 - ry0)  # cache px per source px
    tx0, ty0, tx1, ty1 = target
    ax = (tx1 - tx0) * sx / INPUT_W  # cache px per output px
    ay = (ty1 - ty0) * sy / INPUT_H
    ss = 2 if max(ax, ay) > 1.3 else 1
    ow, oh = INPUT_W * ss, INPUT_H * ss
    # output pixel centre (i + 0.5) / ss maps to cache coordinate; cache pixel centres are at integer + 0.5
    a, d = ax / ss, ay / ss
    bx = (tx0 - rx0) * sx + 0.5 * a - 0.5
    by = (ty0 - ry0) * sy + 0.5 * d - 0.5
    m = np.array([[a, 0.0, bx], [0.0, d, by]], np.float64)
    if angle_deg:
        # rotate output coordinates about the output centre before mapping
        c, s = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
        cx, cy = (ow - 1) / 2, (oh - 1) / 2
        rot = np.array([[c, -s, cx - c * cx + s * cy], [s, c, cy - s * cx - c * cy], [0, 0, 1]])
        m = m @ rot
    out = cv2.warpAffine(np.ascontiguousarray(cached), m, (ow, oh), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                         borderMode=cv2.BORDER_REPLICATE)
    if ss == 2:
        out = cv2.resize(out, (INPUT_W, INPUT_H), interpolation=cv2.INTER_AREA)
    return out


def preprocess_title(image: Image.Image, title_box, pad: float = INFER_PAD) -> np.ndarray:
    """Reference inference preprocessing (see module doc): PIL RGB source image + title box → uint8 96×160×3."""
    box = padded_box(title_box, (pad, pad, pad, pad), image.width, image.height)
    return np.asarray(image.resize((INPUT_W, INPUT_H), Image.BILINEAR, box=box))


def sample_pads(rng: np.random.Generator) -> tuple[float, float, float, float]:
    """Random training padding: 0–14 source px per side, with an occasional small cut (down to -2 px)."""
    pads = rng.uniform(*PAD_RANGE, size=4)
    cut = rng.random(4) < 0.1
    pads[cut] = rng.uniform(-2.0, 0.0, size=int(cut.sum()))
    return tuple(float(p) for p in pads)


def training_sample(cache, i: int, rng: np.random.Generator) -> np.ndarray:
    cached, region, (w, h) = cache.get(i)
    target = padded_box(cache.crops[i].box, sample_pads(rng), w, h)
    angle = float(rng.normal(0.0, 0.8)) if rng.random() < 0.5 else 0.0
    crop = cut_from_cache(cached, region, target, angle)
    return common.augment_photometric(crop, rng)


def eval_sample(cache, i: int, pads) -> np.ndarray:
    cached, region, (w, h) = cache.get(i)
    return cut_from_cache(cached, region, padded_box(cache.crops[i].box, pads, w, h))


def draw_batch(cache, by_class: dict[int, list[int]], classes: list[int], size: int,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A class-balanced training batch: uint8 size×96×160×3 crops and their labels. `cache` is a `TitleCache` or a
    `pack.PackedTitles`."""
    cls = rng.integers(0, len(classes), size=size)
    ids = [by_class[classes[c]][int(rng.integers(0, len(by_class[classes[c]])))] for c in cls]
    images = np.stack([training_sample(cache, i, rng) for i in ids])
    return images, np.array([cache.crops[i].label for i in ids], np.int64)


# ----------------------------------------------------------------------------------------------------------------
# Calibration and metrics


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """Temperature T > 0 minimising the NLL of softmax(logits / T) (golden-section search on log T in [-3, 3])."""
    lg = torch.from_numpy(np.asarray(logits, np.float64))
    lb = torch.from_numpy(np.asarray(labels, np.int64))

    def nll(log_t: float) -> float:
        return float(F.cross_entropy(lg / math.exp(log_t), lb))

    lo, hi = -3.0, 3.0
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = nll(a), nll(b)
    for _ in range(60):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = nll(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = nll(b)
    return float(math.exp((lo + hi) / 2))


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = 15) -> float:
    """ECE with `bins` equal-width confidence bins on the top-1 probability."""
    conf = probs.max(1)
    correct = probs.argmax(1) == labels
    edges = np.linspace(0.0, 1.0, bins + 1)
    ece = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            ece += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return float(ece)


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def predict_logits(model: nn.Module, images: list[np.ndarray], batch: int = 128, device=None) -> np.ndarray:
    """uint8 96×160×3 crops → raw logits (no temperature), model in eval mode (on `device`, default CPU)."""
    model.eval()
    outs = []
    with torch.no_grad():
        for s in range(0, len(images), batch):
            outs.append(model(common.to_input_tensor(images[s:s + batch], device)).float().cpu().numpy())
    return np.concatenate(outs) if outs else np.zeros((0, model.last_linear.out_features), np.float32)


def fixed_eval_pads(n: int, seed: int = 1234) -> list[tuple[float, float, float, float]]:
    """Deterministic per-crop random pads (0–14 px per side) for validation: detector-like box noise."""
    rng = np.random.default_rng(seed)
    return [tuple(float(v) for v in rng.uniform(*PAD_RANGE, size=4)) for _ in range(n)]


# ----------------------------------------------------------------------------------------------------------------
# Training command


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m train.classifier", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=None, help="dataset dir (docs/dataset.md) or a bare scenes folder")
    p.add_argument("--pack", type=Path, default=None, help="train from a title pack (`train.pack`) instead of --data")
    p.add_argument("--device", type=str, default="cpu", help="torch device for the model (cpu, cuda)")
    p.add_argument("--workers", type=int, default=0, help="processes drawing training batches (0: in the loop)")
    p.add_argument("--amp", action="store_true", help="bfloat16 autocast for the forward pass (CUDA)")
    p.add_argument("--out", type=Path, required=True, help="checkpoint dir, outside the repo "
                   "(e.g. /root/.cache/netron-ocr/ckpt/classifier); resumes from its last.pt")
    p.add_argument("--vocab", type=Path, default=VOCAB_PATH)
    p.add_argument("--cache", type=Path, default=None, help="crop cache dir (default: common.default_cache_dir)")
    p.add_argument("--epochs", type=float, default=30.0, help="epochs of --epoch-samples samples each")
    p.add_argument("--epoch-samples", type=int, default=20000)
    p.add_argument("--steps", type=int, default=None, help="total optimizer steps (overrides --epochs)")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--eval-every", type=int, default=None, help="steps (default: once per epoch)")
    p.add_argument("--max-val", type=int, default=4000, help="validation crops used by the periodic eval")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--weight-ema", type=float, default=0.0, help="evaluate and save an exponential moving "
                   "average of the weights with this decay (e.g. 0.998; 0: off; common.train_loop)")
    p.add_argument("--max-minutes", type=float, default=None)
    p.add_argument("--budget-minutes", type=float, default=None,
                   help="training time over which the LR schedule runs (and then stops), summed over resumed runs")
    p.add_argument("--init", type=Path, default=None,
                   help="a checkpoint (.pt) whose config and model weights start a new run (fresh optimizer)")
    p.add_argument("--warm-start", type=Path, default=None, help="exported classifier .onnx to start from "
                   "(only when --out has no checkpoint yet; BatchNorm is then kept frozen)")
    p.add_argument("--widths", type=str, default=None, help="stem,s1,s2,s3,s4 channel widths (new runs only)")
    p.add_argument("--hidden", type=int, default=None)
    p.add_argument("--no-calibrate", action="store_true", help="skip the temperature fit at the end")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if (args.data is None) == (args.pack is None):
        raise SystemExit("give exactly one of --data and --pack")
    common.seed_everything(args.seed)
    common.set_threads(args.threads)
    vocab = load_vocab(args.vocab)
    if args.pack is not None:
        from train.pack import PackedTitles

        cache = PackedTitles(args.pack)
        crops, cache_dir = cache.crops, args.pack
    else:
        crops = collect_title_crops(args.data, vocab)
        if not crops:
            raise SystemExit(f"no node titles found under {args.data}")
        cache_dir = args.cache or common.default_cache_dir(args.data, "classifier")
        cache = TitleCache(crops, cache_dir)
    train_ids = [i for i, c in enumerate(crops) if split_of(c.image.index) == "train"]
    val_ids = [i for i, c in enumerate(crops) if split_of(c.image.index) == "val"]
    if not train_ids:
        raise SystemExit("no training crops (scenes with k % 10 not in {8, 9})")
    if not val_ids:
        print("warning: no validation scenes (k % 10 == 8); validating on a training subset", file=sys.stderr)
        val_ids = train_ids[: max(1, len(train_ids) // 10)]
    rng_val = np.random.default_rng(args.seed + 17)
    if len(val_ids) > args.max_val:
        val_ids = sorted(rng_val.choice(val_ids, args.max_val, replace=False).tolist())

    by_class: dict[int, list[int]] = {}
    for i in train_ids:
        by_class.setdefault(crops[i].label, []).append(i)
    classes = sorted(by_class)
    print(f"{len(crops)} title crops: train {len(train_ids)} ({len(classes)}/{len(vocab)} ops present), "
          f"val {len(val_ids)}, cache {cache_dir}", flush=True)

    def new_config() -> dict:
        config = dict(DEFAULT_CONFIG, num_classes=len(vocab), vocab_ops=list(vocab.ops),
                      warm_start=str(args.warm_start) if args.warm_start else None)
        if args.widths:
            config["widths"] = [int(v) for v in args.widths.split(",")]
        if args.hidden:
            config["hidden"] = args.hidden
        return config

    ckpts = common.Checkpoints(args.out)
    previous = ckpts.load_latest()
    config, init_weights = common.run_start(previous, args.init, new_config)
    if config["vocab_ops"] != list(vocab.ops):
        raise SystemExit("vocab.json differs from the checkpoint's vocabulary")
    model = build_model(config)
    n_params = common.count_params(model)
    print(f"ClassifierNet {config['widths']} hidden {config['hidden']}: {n_params} params", flush=True)
    if n_params > PARAM_BUDGET:
        raise SystemExit(f"{n_params} params exceed the budget {PARAM_BUDGET}")
    if previous is None and args.warm_start:
        from train.export_cls_ocr import warm_start

        warm_start(model, args.warm_start, "classifier")
        print(f"warm start from {args.warm_start}", flush=True)
    if init_weights is not None:
        model.load_state_dict(init_weights)
        print(f"initialised from {args.init}", flush=True)
    cfg = common.epoch_loop_config(args)
    pool = None
    if args.workers > 0:
        pool = common.BatchPool(lambda n, r: draw_batch(cache, by_class, classes, n, r), args.batch, args.workers)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    model.to(device)

    def next_batch(rng: np.random.Generator):
        images, labels = pool.next(rng) if pool else draw_batch(cache, by_class, classes, args.batch, rng)
        return common.to_input_tensor(images, device), torch.from_numpy(labels).to(device)

    def loss_fn(model, batch):
        x, y = batch
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.amp):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y, label_smoothing=0.05)
        acc = float((logits.argmax(1) == y).float().mean())
        return loss, {"acc": acc}

    val_pads = fixed_eval_pads(len(val_ids), args.seed + 99)
    val_images = [eval_sample(cache, i, p) for i, p in zip(val_ids, val_pads)]
    val_labels = np.array([crops[i].label for i in val_ids])

    def evaluate(model):
        logits = predict_logits(model, val_images, device=device)
        pred = logits.argmax(1)
        acc = float((pred == val_labels).mean())
        nll = float(F.cross_entropy(torch.from_numpy(logits), torch.from_numpy(val_labels)))
        return acc - 1e-4 * nll, {"val_top1": acc, "val_nll": nll, "val_n": len(val_labels)}

    prepare = common.freeze_batchnorm if config.get("warm_start") else None
    t0 = time.time()
    try:
        common.train_loop(model, cfg, ckpts, next_batch, loss_fn, evaluate, config, prepare, desc="classifier",
                          eval_at_start=bool(args.warm_start or args.init))
    finally:
        if pool:
            pool.close()
    print(f"training took {time.time() - t0:.0f} s", flush=True)
    if not args.no_calibrate:
        calibrate(ckpts, val_images, val_labels)
    return 0


def calibrate(ckpts: common.Checkpoints, images: list[np.ndarray], labels: np.ndarray) -> float:
    """Fit the temperature on the validation crops with best.pt and store it in best.pt (`temperature`) and
    `calibration.json` (left at 1.0 with fewer than MIN_CALIBRATION_CROPS crops)."""
    state = torch.load(ckpts.best, map_location="cpu", weights_only=False)
    model = build_model(state["config"])
    model.load_state_dict(state["model"])
    logits = predict_logits(model, images)
    if len(labels) < MIN_CALIBRATION_CROPS:
        print(f"warning: only {len(labels)} validation crops; temperature left at 1.0", file=sys.stderr)
        t = 1.0
    else:
        t = fit_temperature(logits, labels)
    ece_before = expected_calibration_error(softmax(logits), labels)
    ece_after = expected_calibration_error(softmax(logits / t), labels)
    state["temperature"] = t
    ckpts.save(state, ckpts.best)
    record = {"temperature": t, "val_n": int(len(labels)), "val_ece_before": ece_before, "val_ece_after": ece_after,
              "val_top1": float((logits.argmax(1) == labels).mean())}
    (ckpts.root / "calibration.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"temperature {t:.4f}: val ECE {ece_before:.4f} → {ece_after:.4f}", flush=True)
    return t


if __name__ == "__main__":
    sys.exit(main())
