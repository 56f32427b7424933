"""Cropper: where on the photo is the graph? Model, preprocessing, targets, decoding and the training command.

Contract (mirrored in models/cropper.MODEL.md; the Rust side re-implements `preprocess` and `decode`):
- input `image`: float32 [N, 3, 512, 512], RGB. The whole source image is stretched (aspect ratio NOT kept) to
  512×512 with bilinear interpolation *without* antialiasing, half-pixel centres (OpenCV `INTER_LINEAR` on uint8;
  fast_image_resize `ResizeAlg::Interpolation(FilterType::Bilinear)`), then `(v/255 - MEAN) / STD` per channel.
- outputs: `proj_x` [N, 128] and `proj_y` [N, 128], logits (apply sigmoid): bin i covers [i/128, (i+1)/128) of the
  image width (height); it is 1 when the content box overlaps it. `margins` [N, 4], already in [0, 0.25]:
  fractions of the decoded box width/height by which to push the left, top, right, bottom edges outward.
- decoding (`decode`): bins with sigmoid ≥ 0.5 (logit ≥ 0); outermost such bins give the box
  [first/128, (last+1)/128] per axis (no bin: the whole axis); expand each edge by its margin × box size; then by
  PAD (4%) × box size; clip to [0, 1]; multiply by image width/height.

Training command: `python -m train.cropper --data DIR --out CKPT_DIR --epochs E` (see `--help`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from train.common import (
    Checkpoints,
    ConvBNAct,
    DepthwiseSeparable,
    DiskCache,
    LoopConfig,
    SceneImage,
    augment_photometric,
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
    warm_cache,
    warm_start_from_onnx,
)

SIZE = 512
BINS = 128
MARGIN_MAX = 0.25
PAD = 0.04
THRESHOLD = 0.5
PARAM_BUDGET = 405_000
INPUT_NAMES = ("image",)
OUTPUT_NAMES = ("proj_x", "proj_y", "margins")


# ----------------------------------------------------------------------------------------------------------------
# Model


class AxisHead(nn.Module):
    """1-D dilated conv stack over the 128 bins of one axis. `axis` is 3 for x (tensor [N, C, 1, 128]) or 2 for y
    ([N, C, 128, 1]); kernels are (1, k) or (k, 1) accordingly, so no transposes are exported."""

    def __init__(self, cin: int, width: int, axis: int):
        super().__init__()

        def k(n):
            return (1, n) if axis == 3 else (n, 1)

        layers = [ConvBNAct(cin, width, k(5))]
        for d in (2, 4, 8):
            layers.append(ConvBNAct(width, width, k(5), dilation=d))
        self.body = nn.Sequential(*layers)
        self.out = nn.Conv2d(width, 1, 1)

    def forward(self, x):
        return self.out(self.body(x))


class CropperNet(nn.Module):
    """Depthwise-separable encoder (stride 32) with axis-projection heads; ~0.3 M parameters.

    forward(image [N,3,512,512]) → (proj_x [N,128] logits, proj_y [N,128] logits, margins [N,4] in [0, 0.25]).
    Projections combine stride-4 features (mean and max over the other axis) with stride-32 features (mean and max
    over the other axis, upsampled ×8 nearest), then a dilated 1-D conv stack per axis.
    """

    def __init__(self):
        super().__init__()
        self.stem = ConvBNAct(3, 16, 3, stride=2)  # 256
        self.s4 = nn.Sequential(DepthwiseSeparable(16, 24, 2), DepthwiseSeparable(24, 24))  # 128
        self.s8 = nn.Sequential(DepthwiseSeparable(24, 48, 2), DepthwiseSeparable(48, 48))  # 64
        self.s16 = nn.Sequential(DepthwiseSeparable(48, 96, 2), DepthwiseSeparable(96, 96),
                                 DepthwiseSeparable(96, 96))  # 32
        self.s32 = nn.Sequential(DepthwiseSeparable(96, 160, 2), DepthwiseSeparable(160, 160),
                                 DepthwiseSeparable(160, 160, dilation=2))  # 16
        self.fine = ConvBNAct(24, 16, 1)
        self.coarse = ConvBNAct(160, 32, 1)
        self.up = nn.Upsample(scale_factor=8, mode="nearest")
        cin = 2 * 16 + 2 * 32
        self.head_x = AxisHead(cin, 48, axis=3)
        self.head_y = AxisHead(cin, 48, axis=2)
        self.margin = nn.Sequential(nn.AdaptiveAvgPool2d(1), ConvBNAct(160, 64, 1), nn.Conv2d(64, 4, 1))

    def forward(self, image):
        f4 = self.s4(self.stem(image))
        f32 = self.s32(self.s16(self.s8(f4)))
        fine = self.fine(f4)  # [N,16,128,128]
        coarse = self.coarse(f32)  # [N,32,16,16]
        # x axis: reduce over height (dim 2); y axis: reduce over width (dim 3).
        fx = torch.cat([fine.mean(2, keepdim=True), fine.amax(2, keepdim=True)], 1)
        cx = torch.cat([coarse.mean(2, keepdim=True), coarse.amax(2, keepdim=True)], 1)
        fy = torch.cat([fine.mean(3, keepdim=True), fine.amax(3, keepdim=True)], 1)
        cy = torch.cat([coarse.mean(3, keepdim=True), coarse.amax(3, keepdim=True)], 1)
        cx = F.interpolate(cx, scale_factor=(1, 8), mode="nearest")
        cy = F.interpolate(cy, scale_factor=(8, 1), mode="nearest")
        proj_x = self.head_x(torch.cat([fx, cx], 1)).flatten(1)
        proj_y = self.head_y(torch.cat([fy, cy], 1)).flatten(1)
        margins = torch.sigmoid(self.margin(f32).flatten(1)) * MARGIN_MAX
        return proj_x, proj_y, margins


def build_model(config: dict | None = None) -> CropperNet:
    return CropperNet()


# ----------------------------------------------------------------------------------------------------------------
# Preprocessing, targets, decoding


def preprocess(image_rgb: np.ndarray) -> np.ndarray:
    """Source uint8 RGB H×W×3 → uint8 512×512×3, stretched, bilinear without antialiasing (OpenCV INTER_LINEAR)."""
    return cv2.resize(image_rgb, (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)


def content_box_normalised(truth: dict) -> np.ndarray:
    """Truth `canvas.box` as fractions [x0, y0, x1, y1] of the image width/height."""
    w, h = truth["image"]["width"], truth["image"]["height"]
    x0, y0, x1, y1 = truth["canvas"]["box"]
    return np.clip(np.array([x0 / w, y0 / h, x1 / w, y1 / h], dtype=np.float32), 0.0, 1.0)


def projection_targets(box: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bin i (covering [i/128, (i+1)/128)) is 1 when the normalised box overlaps it: i/128 < x1 and (i+1)/128 > x0.
    A degenerate (zero-width) box still marks the bin that contains it."""
    edges = np.arange(BINS, dtype=np.float32) / BINS

    def axis(a0, a1):
        t = ((edges < a1) & (edges + 1.0 / BINS > a0)).astype(np.float32)
        if not t.any():
            t[min(BINS - 1, int(a0 * BINS))] = 1.0
        return t

    return axis(box[0], box[2]), axis(box[1], box[3])


def projection_box(proj_x: np.ndarray, proj_y: np.ndarray, threshold: float = THRESHOLD) -> np.ndarray:
    """Outermost bins with sigmoid(logit) ≥ threshold → normalised [x0, y0, x1, y1]; an empty axis → [0, 1]."""
    logit_t = np.log(threshold / (1.0 - threshold))

    def axis(p):
        on = np.flatnonzero(p >= logit_t)
        if on.size == 0:
            return 0.0, 1.0
        return on[0] / BINS, (on[-1] + 1) / BINS

    ax0, ax1 = axis(proj_x)
    ay0, ay1 = axis(proj_y)
    return np.array([ax0, ay0, ax1, ay1], dtype=np.float64)


def decode(proj_x: np.ndarray, proj_y: np.ndarray, margins: np.ndarray, threshold: float = THRESHOLD,
           pad: float = PAD) -> np.ndarray:
    """One image's outputs → the padded crop as normalised [x0, y0, x1, y1] (multiply by width/height)."""
    b = projection_box(proj_x, proj_y, threshold)
    w, h = b[2] - b[0], b[3] - b[1]
    m = np.asarray(margins, dtype=np.float64)
    b = b + np.array([-m[0] * w, -m[1] * h, m[2] * w, m[3] * h])
    w, h = b[2] - b[0], b[3] - b[1]
    b = b + np.array([-pad * w, -pad * h, pad * w, pad * h])
    return np.clip(b, 0.0, 1.0)


def decode_mirrored(plain, mirrored, threshold: float = THRESHOLD, pad: float = PAD) -> np.ndarray:
    """The union of the crops decoded from the plain and the left-right mirrored input (the mirrored one mapped
    back): `plain` and `mirrored` are each (proj_x, proj_y, margins) of one image. Rust: `CropParams::mirror`."""
    a = decode(*plain, threshold=threshold, pad=pad)
    b = decode(*mirrored, threshold=threshold, pad=pad)
    back = np.array([1.0 - b[2], b[1], 1.0 - b[0], b[3]])
    return np.concatenate([np.minimum(a[:2], back[:2]), np.maximum(a[2:], back[2:])])


def required_margins(pred_box: np.ndarray, true_box: np.ndarray) -> np.ndarray:
    """Per-edge expansion (fraction of the predicted box size, ≥ 0) that makes `pred_box` contain `true_box`.
    Both are [N, 4] normalised; returns [N, 4] (left, top, right, bottom)."""
    w = np.maximum(pred_box[:, 2] - pred_box[:, 0], 1.0 / BINS)
    h = np.maximum(pred_box[:, 3] - pred_box[:, 1], 1.0 / BINS)
    need = np.stack([
        (pred_box[:, 0] - true_box[:, 0]) / w,
        (pred_box[:, 1] - true_box[:, 1]) / h,
        (true_box[:, 2] - pred_box[:, 2]) / w,
        (true_box[:, 3] - pred_box[:, 3]) / h,
    ], 1)
    return np.clip(need, 0.0, MARGIN_MAX).astype(np.float32)


# ----------------------------------------------------------------------------------------------------------------
# Data


class CropperData:
    """Scene images with their 512×512 model inputs cached on disk (uint8, exactly `preprocess` of the source)
    and normalised content boxes."""

    def __init__(self, images: list[SceneImage], cache: DiskCache):
        self.images = images
        self.cache = cache
        self.boxes = np.stack([content_box_normalised(load_truth(s.truth_path)) for s in images]) if images else \
            np.zeros((0, 4), np.float32)

    def __len__(self):
        return len(self.images)

    def input(self, i: int) -> np.ndarray:
        s = self.images[i]
        return self.cache.get(s.key, s.image_path, lambda: preprocess(load_rgb(s.image_path)))

    def warm(self, desc: str = "cache", workers: int = 1) -> None:
        warm_cache(self.input, len(self), workers, desc)

    def sample(self, i: int, rng: np.random.Generator, augment: bool) -> tuple[np.ndarray, np.ndarray]:
        """(uint8 512×512×3, normalised box). Augmentation: photometric, horizontal and vertical flips."""
        img = np.array(self.input(i))
        box = self.boxes[i].copy()
        if augment:
            img = augment_photometric(img, rng)
            if rng.random() < 0.5:
                img = img[:, ::-1]
                box = np.array([1 - box[2], box[1], 1 - box[0], box[3]], np.float32)
            if rng.random() < 0.2:
                img = img[::-1]
                box = np.array([box[0], 1 - box[3], box[2], 1 - box[1]], np.float32)
        return np.ascontiguousarray(img), box


def make_batch(data: CropperData, idx: np.ndarray, rng: np.random.Generator, augment: bool):
    imgs, boxes = zip(*(data.sample(int(i), rng, augment) for i in idx))
    boxes = np.stack(boxes)
    tx, ty = zip(*(projection_targets(b) for b in boxes))
    return {"image": to_input_tensor(list(imgs)), "box": boxes,
            "tx": torch.from_numpy(np.stack(tx)), "ty": torch.from_numpy(np.stack(ty))}


# ----------------------------------------------------------------------------------------------------------------
# Loss


def cropper_loss(model: nn.Module, batch: dict, pos_weight: float = 8.0, under_weight: float = 10.0):
    """Asymmetric BCE on the projections (a missed content bin costs `pos_weight`× a kept background bin) plus a
    pinball (quantile) loss on the margins: margin below the needed expansion costs `under_weight`× more than
    margin above it, so the margins learn the quantile `under_weight / (1 + under_weight)` (~0.91 at the default) of
    the decoding error. The needed expansion
    is measured on the current (detached) decoded projections against the truth box."""
    px, py, m = model(batch["image"])
    pw = torch.tensor(pos_weight)
    bce = F.binary_cross_entropy_with_logits(px, batch["tx"], pos_weight=pw) + \
        F.binary_cross_entropy_with_logits(py, batch["ty"], pos_weight=pw)
    pxn, pyn = px.detach().numpy(), py.detach().numpy()
    pred = np.stack([projection_box(pxn[i], pyn[i]) for i in range(len(pxn))])
    need = torch.from_numpy(required_margins(pred, batch["box"]))
    diff = need - m
    margin = torch.where(diff > 0, under_weight * diff, -diff).mean() * 10.0
    return bce + margin, {"bce": float(bce.detach()), "margin": float(margin.detach())}


# ----------------------------------------------------------------------------------------------------------------
# Command line


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m train.cropper", description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, required=True, help="dataset directory (with scenes/) or a scenes folder")
    p.add_argument("--out", type=Path, required=True, help="checkpoint directory (outside the repo); resumes")
    p.add_argument("--epochs", type=float, default=30)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup-steps", type=int, default=None, help="linear LR warm-up (default: min(200|300, 10%%))")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-minutes", type=float, default=None, help="stop this invocation after M minutes")
    p.add_argument("--budget-minutes", type=float, default=None,
                   help="total training time (over resumes); the LR schedule follows it when it runs out first")
    p.add_argument("--eval-every", type=int, default=0,
                   help="steps between held-out evals (0: every epoch or every 500 steps, whichever is sooner)")
    p.add_argument("--eval-limit", type=int, default=400, help="at most this many held-out images per eval")
    p.add_argument("--warm-start", type=Path, default=None, help="an exported cropper .onnx to start from")
    p.add_argument("--init", type=Path, default=None,
                   help="a checkpoint (.pt) whose model weights start a new run (fresh optimizer and schedule)")
    p.add_argument("--cache", type=Path, default=None, help="input cache dir (default under ~/.cache)")
    p.add_argument("--cache-workers", type=int, default=1, help="processes that pre-decode images into the cache")
    p.add_argument("--cache-format", choices=DiskCache.FORMATS, default="png",
                   help="png: lossless (default); jpg: quality 95, ~5x smaller on disk")
    p.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke runs)")
    p.add_argument("--margin-quantile", type=float, default=10.0 / 11.0,
                   help="quantile of the needed expansion the margins learn (pinball loss; default 10/11 ≈ 0.91, "
                        "what sessions 1–4 trained with)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not 0.0 < args.margin_quantile < 1.0:
        print(f"--margin-quantile must lie in (0, 1), got {args.margin_quantile}", file=sys.stderr)
        return 2
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
    cache = DiskCache(args.cache or default_cache_dir(args.data, f"cropper-{SIZE}"), args.cache_format)
    train_data, held_data = CropperData(train_imgs, cache), CropperData(held[: args.eval_limit], cache)
    train_data.warm("cache train", args.cache_workers)
    held_data.warm("cache held-out", args.cache_workers)

    model = build_model()
    print(f"cropper: {count_params(model)} parameters, {len(train_data)} training / {len(held_data)} held-out images")
    prepare = None
    if args.warm_start is not None:
        n = warm_start_from_onnx(model, args.warm_start, torch.zeros(1, 3, SIZE, SIZE))
        print(f"warm start: {n} convolutions from {args.warm_start}; BatchNorm frozen")
        prepare = freeze_batchnorm
    if args.init is not None:
        model.load_state_dict(torch.load(args.init, map_location="cpu", weights_only=False)["model"])
        print(f"initialised from {args.init}")

    steps_per_epoch = max(1, len(train_data) // args.batch)
    total = int(round(args.epochs * steps_per_epoch))
    if args.max_steps is not None:
        total = min(total, args.max_steps)
    cfg = LoopConfig(total_steps=total, lr=args.lr, eval_every=args.eval_every or min(500, steps_per_epoch),
                     warmup_steps=args.warmup_steps or min(200, max(1, total // 10)), max_minutes=args.max_minutes,
                     budget_minutes=args.budget_minutes, seed=args.seed)

    def next_batch(rng):
        return make_batch(train_data, rng.integers(0, len(train_data), size=args.batch), rng, augment=True)

    from train import eval_cropper

    def evaluate(m):
        res = eval_cropper.evaluate(eval_cropper.torch_predict(m), held_data)
        return eval_cropper.score(res), eval_cropper.summary(res)

    config = {"model": "cropper", "size": SIZE, "bins": BINS, "args": {k: str(v) for k, v in vars(args).items()}}
    under_weight = args.margin_quantile / (1.0 - args.margin_quantile)

    def loss(m, batch):
        return cropper_loss(m, batch, under_weight=under_weight)

    train_loop(model, cfg, Checkpoints(args.out), next_batch, loss, evaluate, config, prepare, "cropper")
    return 0


if __name__ == "__main__":
    sys.exit(main())
