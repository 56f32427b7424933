"""Machinery shared by every netron-ocr training script.

What is here (all generic, no model-specific knowledge):
- dataset reading per `docs/dataset.md`: `list_scene_images`, `load_truth`, `truth_elements`, `is_held_out`,
  `load_rgb`;
- reproducibility and CPU use: `seed_everything`, `set_threads`;
- `DiskCache`: pre-decoded, pre-resized uint8 arrays (`.npy`, memory-mapped on read) keyed by scene image, so that
  2 MP JPEG decoding happens once per dataset instead of once per epoch;
- photometric augmentation on uint8 HWC images (`augment_photometric`) and normalisation (`to_input_tensor`);
- building blocks (`ConvBNAct`, `DepthwiseSeparable`) whose BatchNorm folds cleanly into Conv on export;
- `Checkpoints` (atomic `last.pt` / `best.pt` in a directory outside the repo) and `train_loop`: resumable,
  seeded, tqdm with loss and ETA, periodic held-out evaluation, best-checkpoint keeping, `--max-minutes`;
- ONNX: `export_onnx` (legacy TorchScript exporter, checks the opset that actually came out), `OrtRunner`,
  `TorchRunner`, and `warm_start_from_onnx` (loads BatchNorm-folded ONNX initializers back into the model).

Pixel conventions: images are uint8 RGB `H×W×3` (C order); model inputs are float32 `N×3×H×W`, computed as
`(pixel / 255 - MEAN[c]) / STD[c]` with the fixed ImageNet `MEAN`/`STD` below.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import math
import os
import random
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import cv2
import numpy as np
import torch
from PIL import Image
from torch import nn

# Fixed input normalisation for every model (ImageNet statistics), per RGB channel, applied to values in [0, 1].
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)

ELEMENT_KINDS = ("nodes", "inputs", "outputs", "tensors")
KIND_SUFFIX = {"photo": ("photo", (".jpg", ".jpeg", ".png")), "screenshot": ("shot", (".png", ".jpg"))}
DEFAULT_CACHE_ROOT = Path("/root/.cache/netron-ocr/cache")


class DatasetError(Exception):
    """A dataset directory or truth file does not follow docs/dataset.md / docs/graph-json.md."""


# ----------------------------------------------------------------------------------------------------------------
# Dataset reading


def is_held_out(index: int) -> bool:
    """Scene split of docs/dataset.md: index k with k % 10 == 9 is held out for evaluation."""
    return index % 10 == 9


@dataclass(frozen=True)
class SceneImage:
    """One image of one scene: `kind` is "photo" or "screenshot"; paths point into `DIR/scenes/`."""

    index: int
    kind: str
    image_path: Path
    truth_path: Path

    @property
    def held_out(self) -> bool:
        return is_held_out(self.index)

    @property
    def key(self) -> str:
        """Stable name, e.g. `000019.photo`, used for cache files and reports."""
        return f"{self.index:06d}.{KIND_SUFFIX[self.kind][0]}"


def scenes_dir(data_dir: Path) -> Path:
    """`DIR/scenes` for a dataset built by `datagen build`; a bare scenes folder (fixtures) is accepted too."""
    data_dir = Path(data_dir)
    sub = data_dir / "scenes"
    if sub.is_dir():
        return sub
    if data_dir.is_dir():
        return data_dir
    raise DatasetError(f"no dataset at {data_dir}")


def list_scene_images(data_dir: Path, kinds: Sequence[str] = ("photo", "screenshot")) -> list[SceneImage]:
    """Every `k.photo.*` / `k.shot.*` image with its truth JSON, sorted by (index, kind)."""
    root = scenes_dir(data_dir)
    out: list[SceneImage] = []
    for kind in kinds:
        if kind not in KIND_SUFFIX:
            raise DatasetError(f"unknown image kind {kind!r}")
        tag, exts = KIND_SUFFIX[kind]
        for truth in sorted(root.glob(f"*.{tag}.json")):
            stem = truth.name[: -len(f".{tag}.json")]
            if not stem.isdigit():
                continue
            image = next((root / f"{stem}.{tag}{e}" for e in exts if (root / f"{stem}.{tag}{e}").is_file()), None)
            if image is None:
                continue
            out.append(SceneImage(int(stem), kind, image, truth))
    out.sort(key=lambda s: (s.index, s.kind))
    return out


def split_scene_images(images: Iterable[SceneImage]) -> tuple[list[SceneImage], list[SceneImage]]:
    """(training, held-out) by the k % 10 == 9 rule."""
    train, held = [], []
    for s in images:
        (held if s.held_out else train).append(s)
    return train, held


def load_truth(path: Path) -> dict:
    """A schema-v1 graph JSON file; raises DatasetError on another format or major version."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DatasetError(f"{path}: {e}") from e
    if doc.get("format") != "netron-ocr.graph" or doc.get("version") != 1:
        raise DatasetError(f"{path}: not a netron-ocr.graph v1 file")
    return doc


def truth_elements(truth: dict, kinds: Sequence[str] = ELEMENT_KINDS) -> list[tuple[str, str, list[float]]]:
    """(kind, id, box) for every element of the given kinds; box is [x0, y0, x1, y1] in source-image pixels."""
    out = []
    for kind in kinds:
        for el in truth.get(kind, []):
            out.append((kind, el["id"], [float(v) for v in el["box"]]))
    return out


def clip_box(box: Sequence[float], width: float, height: float) -> list[float]:
    x0, y0, x1, y1 = box
    return [min(max(x0, 0.0), width), min(max(y0, 0.0), height), min(max(x1, 0.0), width), min(max(y1, 0.0), height)]


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def load_rgb(path: Path) -> np.ndarray:
    """Decode an image file to uint8 RGB H×W×3 (C order)."""
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


# ----------------------------------------------------------------------------------------------------------------
# Reproducibility and CPU use


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def set_threads(threads: int) -> None:
    """Intra-op threads for torch; OpenCV is kept single-threaded so data work does not fight the model."""
    torch.set_num_threads(max(1, threads))
    cv2.setNumThreads(1)


# ----------------------------------------------------------------------------------------------------------------
# Disk cache of pre-decoded inputs


def default_cache_dir(data_dir: Path, name: str) -> Path:
    """`/root/.cache/netron-ocr/cache/<dataset folder>-<hash of its absolute path>/<name>` (never in the repo)."""
    data_dir = Path(data_dir).resolve()
    tag = hashlib.sha1(str(data_dir).encode()).hexdigest()[:8]
    return DEFAULT_CACHE_ROOT / f"{data_dir.name}-{tag}" / name


class DiskCache:
    """uint8 arrays derived from scene images, one file per key, rebuilt when the source file is newer.

    `get(key, source, build)` returns the cached array or calls `build()` (which must return a uint8 array, or
    `(array, meta)` with a JSON-able meta dict), stores it atomically and returns it; `meta(key)` reads the meta
    back. `fmt`: "npy" (memory-mapped on read, any uint8 array), "png" (lossless, cv2 compression 1, about 5×
    smaller, H×W×3 RGB only) or "jpg" (quality 95, about 25× smaller, lossy; H×W×3 RGB only).
    """

    FORMATS = ("npy", "png", "jpg")

    def __init__(self, root: Path, fmt: str = "npy"):
        if fmt not in self.FORMATS:
            raise ValueError(f"cache format must be one of {self.FORMATS}, got {fmt!r}")
        self.root = Path(root)
        self.fmt = fmt
        self.root.mkdir(parents=True, exist_ok=True)

    def _fresh(self, path: Path, source: Path) -> bool:
        return path.is_file() and path.stat().st_mtime >= Path(source).stat().st_mtime

    def _encode(self, arr: np.ndarray) -> bytes:
        if self.fmt == "npy":
            buf = io.BytesIO()
            np.save(buf, np.ascontiguousarray(arr))
            return buf.getvalue()
        return encode_image(arr, self.fmt, 1 if self.fmt == "png" else 95)

    def _decode(self, path: Path) -> np.ndarray:
        if self.fmt == "npy":
            return np.load(path, mmap_mode="r")
        return decode_image(np.fromfile(path, np.uint8), f"cache file {path}")

    def get(self, key: str, source: Path, build: Callable[[], np.ndarray | tuple[np.ndarray, dict]]) -> np.ndarray:
        path = self.root / f"{key}.{self.fmt}"
        if not self._fresh(path, source):
            built = build()
            arr, meta = built if isinstance(built, tuple) else (built, None)
            if meta is not None:
                _atomic_write_bytes(self.root / f"{key}.json", json.dumps(meta).encode())
            _atomic_write_bytes(path, self._encode(arr))
        return self._decode(path)

    def meta(self, key: str) -> dict:
        return json.loads((self.root / f"{key}.json").read_text())


_POOL_DRAW = None  # the `draw` of the newest BatchPool, inherited by its forked workers


def _pool_batch(seed: int, size: int):
    return _POOL_DRAW(size, np.random.default_rng(seed))


class BatchPool:
    """Training batches drawn by `workers` forked processes, `depth` batches ahead.

    `draw(size, rng)` returns a tuple of per-sample fields (numpy arrays, concatenated along axis 0, or lists,
    joined). Each batch is cut into chunks of at most `chunk` samples, chunk j drawn with `default_rng(seed_j)`,
    the seeds taken from the training loop's generator when the batch is queued: a run is deterministic for a given
    `depth` and `chunk` (its batches are not the serial path's). Create it before CUDA is initialised (fork)."""

    def __init__(self, draw: Callable, batch: int, workers: int, depth: int = 8, chunk: int = 64):
        import collections
        import multiprocessing

        global _POOL_DRAW
        _POOL_DRAW = draw
        self.sizes = [min(chunk, batch - s) for s in range(0, batch, chunk)]
        self.depth = depth
        # OpenCV goes single-threaded in the parent, before the fork, and the workers set nothing up: a forked
        # child that reconfigures a thread pool inherited from its parent can wait forever for threads that were
        # not copied.
        cv2.setNumThreads(1)
        self.pool = multiprocessing.get_context("fork").Pool(workers)
        self.queue = collections.deque()

    def next(self, rng: np.random.Generator) -> tuple:
        while len(self.queue) <= self.depth:
            seeds = rng.integers(0, 2**63 - 1, size=len(self.sizes))
            self.queue.append([self.pool.apply_async(_pool_batch, (int(s), n)) for s, n in zip(seeds, self.sizes)])
        parts = [r.get() for r in self.queue.popleft()]
        return tuple(np.concatenate(field) if isinstance(field[0], np.ndarray) else [v for f in field for v in f]
                     for field in zip(*parts))

    def close(self) -> None:
        # Let the queued batches finish, then stop the workers cleanly: `Pool.terminate` with tasks still queued
        # can leave its task thread waiting forever on a lock held by a killed worker.
        for results in self.queue:
            for r in results:
                r.wait()
        self.queue.clear()
        self.pool.close()
        self.pool.join()


_WARM_FN = None


def _warm_one(i: int) -> int:
    _WARM_FN(i)
    return i


def warm_cache(fn: Callable[[int], object], n: int, workers: int = 1, desc: str = "cache") -> None:
    """Call `fn(i)` for i in range(n) (filling a DiskCache), in `workers` forked processes when > 1, with tqdm."""
    global _WARM_FN
    from tqdm import tqdm

    if workers <= 1 or n < 2:
        for i in tqdm(range(n), desc=desc, dynamic_ncols=True):
            fn(i)
        return
    import multiprocessing as mp

    _WARM_FN = fn
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            for _ in tqdm(pool.imap_unordered(_warm_one, range(n), chunksize=8), total=n, desc=desc,
                          dynamic_ncols=True):
                pass
    finally:
        _WARM_FN = None


def encode_image(arr: np.ndarray, fmt: str, level: int) -> bytes:
    """uint8 H×W×3 RGB or H×W grey → `fmt` ("png": lossless, `level` = compression 0–9; "jpg": `level` = quality)
    bytes."""
    grey = arr.ndim == 2
    if arr.dtype != np.uint8 or not (grey or (arr.ndim == 3 and arr.shape[2] == 3)):
        raise ValueError(f"{fmt} holds uint8 H×W×3 or H×W images, got {arr.dtype} {arr.shape}")
    params = [cv2.IMWRITE_PNG_COMPRESSION, level] if fmt == "png" else [cv2.IMWRITE_JPEG_QUALITY, level]
    ok, enc = cv2.imencode(f".{fmt}", np.ascontiguousarray(arr if grey else arr[:, :, ::-1]), params)
    if not ok:
        raise ValueError(f"could not encode a {arr.shape} image as {fmt}")
    return enc.tobytes()


def decode_image(data: np.ndarray, what: str, grey: bool = False) -> np.ndarray:
    """PNG or JPEG bytes (a uint8 array) → uint8 H×W×3 RGB (or H×W with `grey`); `DatasetError` naming `what` when
    unreadable."""
    img = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE if grey else cv2.IMREAD_COLOR)
    if img is None:
        raise DatasetError(f"unreadable {what}")
    return img if grey else np.ascontiguousarray(img[:, :, ::-1])


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# ----------------------------------------------------------------------------------------------------------------
# Augmentation and normalisation


def augment_photometric(img: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """Cheap camera/screen variation on a uint8 RGB image; returns a new uint8 array of the same shape.

    Applied, each with its own probability: per-channel gain and offset (white balance, brightness), contrast,
    gamma, saturation, Gaussian blur (sigma up to 1.2 px), JPEG re-compression (quality 35–90), Gaussian noise
    (sigma up to 6 grey levels). Geometry is never changed, so targets stay valid.
    """
    s = strength
    # Gain/offset, contrast and gamma act per channel: compose them into one 256-entry lookup table per channel.
    lut = np.tile(np.arange(256, dtype=np.float32)[:, None], (1, 3))
    means = img[::4, ::4].reshape(-1, 3).mean(axis=0).astype(np.float32)
    if rng.random() < 0.8:
        gain = 1.0 + rng.uniform(-0.25, 0.25, size=3) * s
        offset = rng.uniform(-25, 25) * s + rng.uniform(-8, 8, size=3) * s
        lut = lut * gain + offset
        means = means * gain + offset
    if rng.random() < 0.5:
        c = 1.0 + rng.uniform(-0.35, 0.35) * s
        m = float(means.mean())
        lut = (lut - m) * c + m
    if rng.random() < 0.3:
        g = math.exp(rng.uniform(-0.4, 0.4) * s)
        lut = 255.0 * np.power(np.clip(lut, 0, 255) / 255.0, g)
    lut = np.clip(np.rint(lut), 0, 255).astype(np.uint8)
    out = np.ascontiguousarray(img)
    out = np.dstack([cv2.LUT(out[:, :, k], lut[:, k]) for k in range(3)])
    if rng.random() < 0.3:
        f = 1.0 + rng.uniform(-0.6, 0.4) * s
        grey = out.mean(axis=2, dtype=np.float32, keepdims=True)
        out = np.clip(grey + (out - grey) * f, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        out = cv2.GaussianBlur(out, (0, 0), sigmaX=float(rng.uniform(0.3, 1.2) * s) + 1e-3)
    if rng.random() < 0.2:
        q = int(rng.integers(35, 91))
        ok, enc = cv2.imencode(".jpg", np.ascontiguousarray(out[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, q])
        if ok:
            out = np.ascontiguousarray(cv2.imdecode(enc, cv2.IMREAD_COLOR)[:, :, ::-1])
    if rng.random() < 0.4:
        noise = rng.standard_normal(size=out.shape, dtype=np.float32) * np.float32(rng.uniform(1.0, 6.0) * s)
        out = np.clip(out + noise, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(out)


def to_input_tensor(images: np.ndarray | Sequence[np.ndarray], device: str | torch.device | None = None
                    ) -> torch.Tensor:
    """uint8 RGB N×H×W×3 (or a list of H×W×3) → float32 N×3×H×W, `(v/255 - MEAN) / STD` per channel, on `device`
    (default CPU; the uint8 batch is moved first, so the arithmetic runs there)."""
    batch = np.stack(images) if not isinstance(images, np.ndarray) else images
    if batch.ndim == 3:
        batch = batch[None]
    x = torch.from_numpy(np.ascontiguousarray(batch))
    if device is not None:
        x = x.to(device, non_blocking=True)
    x = x.permute(0, 3, 1, 2).float().div_(255.0)
    mean = torch.tensor(MEAN, device=x.device).view(1, 3, 1, 1)
    std = torch.tensor(STD, device=x.device).view(1, 3, 1, 1)
    return ((x - mean) / std).contiguous()


# ----------------------------------------------------------------------------------------------------------------
# Building blocks


class ConvBNAct(nn.Module):
    """Conv2d (no bias) → BatchNorm2d → ReLU (or no activation). Exports as one Conv (+Relu) after BN folding."""

    def __init__(self, cin, cout, k=3, stride=1, groups=1, dilation=1, act=True):
        super().__init__()
        if isinstance(k, int):
            pad = dilation * (k // 2)
        else:
            pad = tuple(dilation * (kk // 2) for kk in k)
        self.conv = nn.Conv2d(cin, cout, k, stride, pad, dilation=dilation, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.ReLU(inplace=True) if act else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class DepthwiseSeparable(nn.Module):
    """3×3 depthwise ConvBNAct → 1×1 pointwise ConvBNAct; residual add when shape is unchanged."""

    def __init__(self, cin, cout, stride=1, dilation=1):
        super().__init__()
        self.dw = ConvBNAct(cin, cin, 3, stride, groups=cin, dilation=dilation)
        self.pw = ConvBNAct(cin, cout, 1, act=stride != 1 or cin != cout)
        self.residual = stride == 1 and cin == cout
        self.out_act = nn.ReLU(inplace=True) if self.residual else nn.Identity()

    def forward(self, x):
        y = self.pw(self.dw(x))
        return self.out_act(x + y) if self.residual else y


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# ----------------------------------------------------------------------------------------------------------------
# Checkpoints and the training loop


class Checkpoints:
    """`DIR/last.pt` (written every `save_every` steps, at every evaluation and on exit) and `DIR/best.pt` (the
    state with the best held-out score). Each is a dict saved with torch.save; writes are atomic. `DIR/log.jsonl`
    gets one JSON line per evaluation."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.last = self.root / "last.pt"
        self.best = self.root / "best.pt"
        self.log = self.root / "log.jsonl"

    def save(self, state: dict, path: Path) -> None:
        tmp = path.with_name(f".{path.name}.tmp")
        torch.save(state, tmp)
        os.replace(tmp, path)

    def load_latest(self) -> dict | None:
        if self.last.is_file():
            return torch.load(self.last, map_location="cpu", weights_only=False)
        return None

    def append_log(self, record: dict) -> None:
        with self.log.open("a") as f:
            f.write(json.dumps(record) + "\n")


def load_model_state(ckpt_path: Path) -> tuple[dict, dict]:
    """(model state_dict, config dict) from a `last.pt`/`best.pt` checkpoint."""
    state = torch.load(ckpt_path, map_location="cpu", weights_only=False)
    return state["model"], state.get("config", {})


def run_start(previous: dict | None, init: Path | None, new_config: Callable[[], dict]) -> tuple[dict, dict | None]:
    """Where a training run starts (the classifier's and OCR's `--init CKPT.pt`): returns (model config, model
    state_dict to load into the model built from that config, or None).

    - resuming (`previous`, the `--out` dir's last.pt, is not None): its config and None; `init` is ignored
      (`train_loop` restores the weights with the optimizer, schedule and RNG);
    - a new run with `init` (a last.pt/best.pt): a copy of that checkpoint's config and its model weights; the
      optimizer and LR schedule start afresh (`train_loop` finds no last.pt in `--out`);
    - otherwise: `new_config()` and None."""
    if previous is not None:
        return previous["config"], None
    if init is not None:
        state = torch.load(init, map_location="cpu", weights_only=False)
        return dict(state["config"]), state["model"]
    return new_config(), None


@dataclass
class LoopConfig:
    total_steps: int
    lr: float = 2e-3
    weight_decay: float = 1e-4
    warmup_steps: int = 200
    eval_every: int = 500
    save_every: int = 100
    max_minutes: float | None = None
    budget_minutes: float | None = None
    seed: int = 0
    grad_clip: float = 5.0
    # Exponential moving average of the weights, evaluated and saved instead of the raw weights (0: off). See
    # `train_loop`.
    weight_ema: float = 0.0


def epoch_loop_config(args) -> LoopConfig:
    """The LoopConfig of the classifier and OCR trainers from their shared flags: `--steps`, or `--epochs` of
    `--epoch-samples // --batch` steps; `--warmup` (at most a tenth of the steps), `--eval-every` (default once per
    epoch), `--lr`, `--weight-decay`, `--max-minutes`, `--budget-minutes`, `--seed`, `--weight-ema`; a checkpoint
    every 100 steps."""
    steps_per_epoch = max(1, args.epoch_samples // args.batch)
    total = args.steps or max(1, int(round(args.epochs * steps_per_epoch)))
    return LoopConfig(total_steps=total, lr=args.lr, weight_decay=args.weight_decay,
                      warmup_steps=min(args.warmup, max(1, total // 10)),
                      eval_every=args.eval_every or steps_per_epoch, save_every=100,
                      max_minutes=args.max_minutes, budget_minutes=args.budget_minutes, seed=args.seed,
                      weight_ema=args.weight_ema)


def progress(step: int, elapsed_s: float, cfg: LoopConfig) -> float:
    """Training progress in [0, 1]: the step fraction, or the fraction of `budget_minutes` of training time spent
    (summed over resumed runs), whichever is further along."""
    t = step / max(1, cfg.total_steps)
    if cfg.budget_minutes:
        t = max(t, elapsed_s / (60.0 * cfg.budget_minutes))
    return min(1.0, t)


def lr_at(step: int, cfg: LoopConfig, elapsed_s: float = 0.0) -> float:
    """Linear warm-up over `warmup_steps`, then cosine decay from `lr` to 5% of it as `progress` goes to 1."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    t = progress(step, elapsed_s, cfg)
    return cfg.lr * (0.05 + 0.95 * 0.5 * (1.0 + math.cos(math.pi * t)))


def train_loop(
    model: nn.Module,
    cfg: LoopConfig,
    ckpts: Checkpoints,
    next_batch: Callable[[np.random.Generator], object],
    loss_fn: Callable[[nn.Module, object], tuple[torch.Tensor, dict]],
    evaluate: Callable[[nn.Module], tuple[float, dict]] | None,
    config: dict,
    prepare_train_mode: Callable[[nn.Module], None] | None = None,
    desc: str = "train",
    eval_at_start: bool = False,
) -> dict:
    """Run (or resume) training until `cfg.total_steps` steps or `cfg.budget_minutes` of training time (both
    counted over resumed runs), or until this invocation has run `cfg.max_minutes`; returns the final state dict.

    - `next_batch(rng)` draws one batch with the loop's numpy Generator (saved in checkpoints, so a resumed run
      draws the same batches as an uninterrupted one would).
    - `loss_fn(model, batch)` returns (scalar loss, dict of floats to show/log).
    - `evaluate(model)` (model in eval mode, no grad) returns (score, metrics); higher score is better. It runs
      every `eval_every` steps and at the end; the best score's state goes to `best.pt`.
    - `prepare_train_mode(model)` is called after every `model.train()` (e.g. to freeze BatchNorm after a warm
      start).
    - `config` is stored in every checkpoint (the export command rebuilds the model from it).
    - `eval_at_start`: a fresh run (no checkpoint to resume) is evaluated once before its first step, as step 0.
      For a run that starts from trained weights (a warm start, `--init`) that is the start's score, so the log
      shows whether training beats it, and `best.pt` stays the start unless it does.
    - `cfg.weight_ema` = d > 0: the loop also keeps `avg ← d·avg + (1 − d)·w` of every floating-point entry of the
      state dict after each step (other entries copied), starting from the weights the run starts with (a warm
      start's file: so the average leaves it only as fast as `1 − d` allows). Evaluation scores the average, and
      checkpoints store it as `model` (what export and evaluation load) with the raw weights as `train_model`
      (what a resumed run trains on). Averaging the iterates damps the optimiser's step noise, which at small CPU
      batches otherwise costs a warm-started model more than its first hundreds of steps teach (session 37).
    AdamW with `lr_at` schedule and gradient clipping.
    """
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    rng = np.random.default_rng(cfg.seed)
    step, best_score, best_metrics, elapsed = 0, -math.inf, None, 0.0
    state = ckpts.load_latest()
    if state is not None:
        model.load_state_dict(state.get("train_model", state["model"]))
        opt.load_state_dict(state["optimizer"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        step, best_score, best_metrics = state["step"], state["best_score"], state.get("best_metrics")
        elapsed = state.get("elapsed_s", 0.0)
        print(f"resumed from {ckpts.last} at step {step}, {elapsed / 60:.1f} min trained "
              f"(best score {best_score:.4f})", flush=True)

    averaged = None  # with cfg.weight_ema: a copy of the model holding the average, always in eval mode
    if cfg.weight_ema > 0:
        averaged = copy.deepcopy(model)
        if state is not None:
            averaged.load_state_dict(state["model"])
        averaged.eval()

    def update_average():
        with torch.no_grad():
            for a, w in zip(averaged.state_dict().values(), model.state_dict().values()):
                if a.dtype.is_floating_point:
                    a.mul_(cfg.weight_ema).add_(w, alpha=1.0 - cfg.weight_ema)
                else:
                    a.copy_(w)

    def snapshot() -> dict:
        weights = {"model": model.state_dict()} if averaged is None else {
            "model": averaged.state_dict(), "train_model": model.state_dict()}
        return {
            **weights,
            "optimizer": opt.state_dict(),
            "rng": rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "step": step,
            "best_score": best_score,
            "best_metrics": best_metrics,
            "elapsed_s": elapsed + (time.time() - t_start),
            "config": config,
        }

    def set_train():
        model.train()
        if prepare_train_mode is not None:
            prepare_train_mode(model)

    def run_eval():
        nonlocal best_score, best_metrics
        if evaluate is None:
            return
        t0 = time.time()
        scored = model if averaged is None else averaged
        scored.eval()
        with torch.no_grad():
            score, metrics = evaluate(scored)
        set_train()
        is_best = score > best_score
        if is_best:
            best_score, best_metrics = score, metrics
        ckpts.append_log({"step": step, "score": score, "best": is_best, "seconds": round(time.time() - t0, 1),
                          "metrics": metrics})
        snap = snapshot()
        if is_best:
            ckpts.save(snap, ckpts.best)
        ckpts.save(snap, ckpts.last)
        from tqdm import tqdm as _tqdm

        _tqdm.write(f"[eval step {step}] score {score:.4f} (best {best_score:.4f}) {_short(metrics)}")

    from tqdm import tqdm

    t_start = time.time()
    deadline = None if cfg.max_minutes is None else t_start + 60.0 * cfg.max_minutes
    set_train()
    ema = None
    bar = tqdm(total=cfg.total_steps, initial=step, desc=desc, dynamic_ncols=True, smoothing=0.05)
    last_evaluated = step if state is not None else -1
    if eval_at_start and state is None:
        run_eval()
        last_evaluated = step
    try:
        while step < cfg.total_steps:
            now = time.time()
            if deadline is not None and now > deadline:
                tqdm.write(f"--max-minutes reached at step {step}")
                break
            if cfg.budget_minutes and progress(step, elapsed + now - t_start, cfg) >= 1.0:
                tqdm.write(f"training-time budget of {cfg.budget_minutes} min spent at step {step}")
                break
            batch = next_batch(rng)
            lr = lr_at(step, cfg, elapsed + now - t_start)
            for g in opt.param_groups:
                g["lr"] = lr
            loss, parts = loss_fn(model, batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            if averaged is not None:
                update_average()
            step += 1
            value = float(loss.detach())
            ema = value if ema is None else 0.95 * ema + 0.05 * value
            bar.update(1)
            post = {"loss": f"{ema:.4f}", "lr": f"{lr:.2e}", **{k: f"{v:.3f}" for k, v in parts.items()}}
            if cfg.budget_minutes:
                post["min_left"] = f"{cfg.budget_minutes - (elapsed + time.time() - t_start) / 60:.0f}"
            bar.set_postfix(post)
            if step % cfg.eval_every == 0:
                run_eval()
                last_evaluated = step
            elif step % cfg.save_every == 0:
                ckpts.save(snapshot(), ckpts.last)
    finally:
        bar.close()
    if last_evaluated != step:
        run_eval()
    final = snapshot()
    ckpts.save(final, ckpts.last)
    if not ckpts.best.is_file():
        ckpts.save(final, ckpts.best)
    return final


def _short(metrics: dict) -> str:
    flat = {k: v for k, v in metrics.items() if isinstance(v, (int, float))}
    return " ".join(f"{k}={v:.4g}" for k, v in list(flat.items())[:10])


# ----------------------------------------------------------------------------------------------------------------
# ONNX export, runners and warm start


def export_onnx(
    model: nn.Module,
    example: torch.Tensor,
    path: Path,
    input_names: Sequence[str],
    output_names: Sequence[str],
    opset: int = 17,
    dynamic_batch: bool = True,
) -> int:
    """Export with the legacy (TorchScript) exporter (`dynamo=False`), which folds BatchNorm into Conv and keeps the
    requested opset; then check the model and return the default-domain opset that actually came out (raises if
    it differs from `opset`). Axis 0 of every input and output is named `N` when `dynamic_batch`."""
    import onnx

    model.eval()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dyn = {n: {0: "N"} for n in [*input_names, *output_names]} if dynamic_batch else None
    tmp = path.with_name(f".{path.name}.tmp")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model, (example,), str(tmp), input_names=list(input_names), output_names=list(output_names),
            opset_version=opset, dynamic_axes=dyn, do_constant_folding=True, dynamo=False,
        )
    proto = onnx.load(str(tmp))
    onnx.checker.check_model(proto, full_check=True)
    got = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
    if got != opset:
        tmp.unlink()
        raise RuntimeError(f"exporter produced opset {got}, asked for {opset}")
    os.replace(tmp, path)
    return got


class OrtRunner:
    """onnxruntime CPU session: `runner(x)` with float32 N×3×H×W → dict output name → float32 array."""

    def __init__(self, path: Path, threads: int = 1):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name
        self.output_names = [o.name for o in self.session.get_outputs()]

    def __call__(self, x) -> dict[str, np.ndarray]:
        x = x.numpy() if isinstance(x, torch.Tensor) else x
        outs = self.session.run(self.output_names, {self.input_name: np.ascontiguousarray(x, dtype=np.float32)})
        return dict(zip(self.output_names, outs))


class TorchRunner:
    """A PyTorch model in eval mode, called like OrtRunner. `output_names` name the model's tuple outputs."""

    def __init__(self, model: nn.Module, output_names: Sequence[str]):
        self.model = model.eval()
        self.output_names = list(output_names)

    def __call__(self, x) -> dict[str, np.ndarray]:
        x = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)) if isinstance(x, np.ndarray) else x
        with torch.no_grad():
            outs = self.model(x)
        return {n: o.numpy() for n, o in zip(self.output_names, outs)}


class WarmStartError(Exception):
    """The ONNX file's convolutions do not line up with the PyTorch model's."""


def _conv_modules_in_execution_order(model: nn.Module, example: torch.Tensor) -> list[nn.Conv2d]:
    order: list[nn.Conv2d] = []
    hooks = [m.register_forward_hook(lambda mod, _i, _o: order.append(mod))
             for m in model.modules() if isinstance(m, nn.Conv2d)]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            model(example)
    finally:
        for h in hooks:
            h.remove()
        model.train(was_training)
    return order


def warm_start_from_onnx(model: nn.Module, onnx_path: Path, example: torch.Tensor) -> int:
    """Load the weights of an exported (BatchNorm-folded) ONNX model back into `model`; returns the number of
    convolutions loaded.

    The ONNX Conv nodes, in graph order, are matched one to one with the model's Conv2d modules in execution
    order (found with forward hooks), with shape checks. A conv followed by a BatchNorm2d (the `ConvBNAct`
    pattern) receives the folded weight, and its BatchNorm is set to identity-plus-bias (gamma 1, beta = folded
    bias, running mean 0, running variance 1 - eps), which in eval mode is the same function as the ONNX graph.
    Train such a model with its BatchNorm layers frozen (`freeze_batchnorm`), or batch statistics will replace
    the folded ones. Raises WarmStartError on any mismatch; the model is left unchanged in that case.
    """
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(str(onnx_path))
    inits = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    consts = {}
    for node in proto.graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    consts[node.output[0]] = numpy_helper.to_array(a.t)
    tensors = {**consts, **inits}
    onnx_convs = [n for n in proto.graph.node if n.op_type == "Conv"]
    convs = _conv_modules_in_execution_order(model, example)
    if len(onnx_convs) != len(convs):
        raise WarmStartError(f"{onnx_path}: {len(onnx_convs)} Conv nodes, model has {len(convs)} convolutions")
    bn_after = {}
    for m in model.modules():
        if isinstance(m, ConvBNAct):
            bn_after[id(m.conv)] = m.bn
    plan = []
    for i, (node, conv) in enumerate(zip(onnx_convs, convs)):
        if node.input[1] not in tensors:
            raise WarmStartError(f"Conv #{i} ({node.name}): weight is not an initializer")
        w = tensors[node.input[1]]
        b = tensors.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        if tuple(w.shape) != tuple(conv.weight.shape):
            raise WarmStartError(f"Conv #{i} ({node.name}): ONNX weight {w.shape} vs model {tuple(conv.weight.shape)}")
        if b is not None and b.shape != (conv.out_channels,):
            raise WarmStartError(f"Conv #{i} ({node.name}): bias shape {b.shape}")
        bn = bn_after.get(id(conv))
        if bn is None and conv.bias is None and b is not None and np.any(b != 0):
            raise WarmStartError(f"Conv #{i} ({node.name}): ONNX has a bias, model conv has none and no BatchNorm")
        plan.append((conv, bn, w, b))
    with torch.no_grad():
        for conv, bn, w, b in plan:
            conv.weight.copy_(torch.from_numpy(np.array(w, dtype=np.float32)))
            bias = torch.from_numpy(np.array(b, dtype=np.float32)) if b is not None else torch.zeros(conv.out_channels)
            if bn is not None:
                bn.weight.fill_(1.0)
                bn.bias.copy_(bias)
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
            elif conv.bias is not None:
                conv.bias.copy_(bias)
    return len(plan)


def freeze_batchnorm(model: nn.Module) -> None:
    """Put every BatchNorm in eval mode (running statistics are used and not updated); parameters still train."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.eval()
