"""Evaluate the detector: per-class precision / recall / F1 at IoU ≥ 0.5, photos and screenshots separately.

    python -m train.eval_detector --data DIR (--ckpt CKPT_DIR/best.pt | --onnx ../models/detector.onnx)
        [--split heldout|train|all] [--cropper-onnx ../models/cropper.onnx] [--limit N] [--json OUT.json] [--square]
    python -m train.eval_detector --eval-real [--data REAL_DIR] (--ckpt … | --onnx …)

Inputs are prepared exactly as at inference (full-resolution source image → crop → tiles (`detector.tiles_for_crop`)
→ `detector.letterbox` per tile, its input trimmed to ceil32(th) × ceil32(tw); detections merged by
`detector.merge_tiles`, then `detector.cross_class_nms` (`--no-cross-class-nms` skips it); `--no-tiles` letterboxes the whole crop; `--square` pads every tile to 512 × 512 as before
issue #6). Tiles run in batches of consecutive tiles with the same input shape. The crop is the truth canvas.box padded by 4% per edge, or, with `--cropper-onnx`, the cropper's decoded
crop (end to end).
Ground truth: element boxes clipped to the image and the crop, kept when ≥ 35% visible (`detector.gt_in_crop`).
Matching, per image and class: predictions in descending score order each take the unmatched ground-truth box
of the same class with the highest IoU, if that IoU ≥ 0.5. P = TP / predictions, R = TP / ground truth.
Tiny labels: tensor-label ground truth less than 10 px tall in the source image; tiny predictions are tensor
predictions matched to a tiny label, or unmatched and less than 10 px tall; tiny F1 from those.
`--eval-real` evaluates every image in the renders of onnx's `light_*` models (`python -m train.render_real`),
which are never used for training. Score used to pick the best checkpoint: mean over image kinds of mean F1.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from train.common import (
    OrtRunner,
    SceneImage,
    TorchRunner,
    list_scene_images,
    load_model_state,
    load_truth,
    set_threads,
    split_scene_images,
)
from train.detector import (
    CLASSES,
    OUTPUT_NAMES,
    Letterbox,
    Tile,
    build_model,
    gt_in_crop,
    letterbox,
    CROSS_CLASS_IOU,
    cross_class_nms,
    merge_tiles,
    padded_canvas,
    postprocess,
    tiles_for_crop,
    to_detector_tensor,
)

IOU_MATCH = 0.5
TINY_PX = 10.0
REAL_EVAL_DIR = Path("/root/.cache/netron-ocr/data/real-eval")


@dataclass
class EvalItem:
    key: str
    kind: str
    crop: tuple[float, float, float, float]
    tiles: list[Tile]
    images: list[np.ndarray]  # one uint8 H×W×3 letterboxed input per tile (H, W: `detector.input_size`)
    lbs: list[Letterbox]
    gt_boxes: np.ndarray  # [M,4] source px
    gt_classes: np.ndarray  # [M]
    gt_ids: np.ndarray  # [M]


class EvalSet:
    """Prepared evaluation inputs (kept in memory: ≤ 0.8 MB per tile)."""

    def __init__(self, items: list[EvalItem]):
        self.items = items

    def __len__(self):
        return len(self.items)

    @property
    def tiles(self) -> int:
        return sum(len(it.tiles) for it in self.items)

    @classmethod
    def from_images(cls, images: list[SceneImage], crop_fn=None, tiled: bool = True,
                    desc: str = "prepare", square: bool = False) -> "EvalSet":
        """`crop_fn(pil_image, truth) -> (x0, y0, x1, y1)`; default: truth canvas padded by 4%. With `tiled`, the
        crop is split by `detector.tiles_for_crop` (as the pipeline does); else it is letterboxed whole. With
        `square`, every tile is padded to 512 × 512 instead of trimmed to its content."""
        from tqdm import tqdm

        items = []
        for s in tqdm(images, desc=desc, dynamic_ncols=True):
            truth = load_truth(s.truth_path)
            with Image.open(s.image_path) as im:
                im = im.convert("RGB")
                crop = tuple(crop_fn(im, truth)) if crop_fn is not None else padded_canvas(truth)
                tiles = tiles_for_crop(crop) if tiled else [Tile(crop, crop)]
                prepared = [letterbox(im, t.box, square=square) for t in tiles]
            boxes, classes, ids = gt_in_crop(truth, crop)
            items.append(EvalItem(s.key, s.kind, crop, tiles, [p[0] for p in prepared], [p[1] for p in prepared],
                                  boxes, classes, ids))
        return cls(items)


def torch_predict(model):
    runner = TorchRunner(model, OUTPUT_NAMES)
    return lambda x: runner(x)


def onnx_predict(path: Path, threads: int = 1):
    runner = OrtRunner(path, threads)
    return lambda x: runner(x)


def cropper_crop_fn(cropper_onnx: Path, threads: int = 1):
    """Crop function running the exported cropper (onnxruntime) on the full image, as the pipeline does."""
    from train import cropper

    runner = OrtRunner(cropper_onnx, threads)

    def crop(im: Image.Image, _truth):
        from train.common import to_input_tensor

        x = to_input_tensor(cropper.preprocess(np.asarray(im)))
        out = runner(x)
        b = cropper.decode(out["proj_x"][0], out["proj_y"][0], out["margins"][0])
        w, h = im.size
        c = (b[0] * w, b[1] * h, b[2] * w, b[3] * h)
        return c if c[2] - c[0] >= 1 and c[3] - c[1] >= 1 else (0.0, 0.0, float(w), float(h))

    return crop


def _iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)))
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)


def match(pred_boxes, pred_scores, gt_boxes, iou_thr: float = IOU_MATCH) -> tuple[np.ndarray, np.ndarray]:
    """Greedy matching of one class in one image: (pred → gt index or -1, gt → pred index or -1)."""
    order = np.argsort(-pred_scores, kind="stable")
    ious = _iou_matrix(pred_boxes, gt_boxes)
    p2g = np.full(len(pred_boxes), -1)
    g2p = np.full(len(gt_boxes), -1)
    for p in order:
        if len(gt_boxes) == 0:
            break
        cand = np.where(g2p < 0, ious[p], -1.0)
        g = int(np.argmax(cand))
        if cand[g] >= iou_thr:
            p2g[p], g2p[g] = g, p
    return p2g, g2p


def shape_batches(shapes: list[tuple[int, ...]], batch: int) -> list[range]:
    """Split indices 0..len(shapes) into runs of at most `batch` consecutive indices with equal shapes."""
    out: list[range] = []
    start = 0
    for k in range(1, len(shapes) + 1):
        if k == len(shapes) or k - start == batch or shapes[k] != shapes[start]:
            out.append(range(start, k))
            start = k
    return out


def detect(predict, data: EvalSet, batch: int = 8, cross_class_iou: float = CROSS_CLASS_IOU):
    """Yield (item, boxes, scores, classes) per item: tiles run in order, in batches of consecutive tiles with the
    same input shape (`shape_batches`), merged with `merge_tiles`, then `cross_class_nms`."""
    flat = [(i, t) for i, it in enumerate(data.items) for t in range(len(it.tiles))]
    outputs: dict[int, list] = {}
    next_item = 0
    for run in shape_batches([data.items[i].images[t].shape for i, t in flat], batch):
        chunk = flat[run.start:run.stop]
        x = to_detector_tensor([data.items[i].images[t] for i, t in chunk], [data.items[i].lbs[t] for i, t in chunk])
        out = predict(x)
        for k, (i, t) in enumerate(chunk):
            it = data.items[i]
            outputs.setdefault(i, []).append(postprocess(out["heatmap"][k], out["size"][k], out["offset"][k],
                                                         it.lbs[t]))
        while next_item < len(data.items) and len(outputs.get(next_item, [])) == len(data.items[next_item].tiles):
            it = data.items[next_item]
            boxes, scores, classes = merge_tiles(outputs.pop(next_item), it.tiles, it.crop)
            keep = cross_class_nms(boxes, scores, classes, cross_class_iou)
            yield it, boxes[keep], scores[keep], classes[keep]
            next_item += 1


def evaluate(predict, data: EvalSet, batch: int = 8, cross_class_iou: float = CROSS_CLASS_IOU) -> list[dict]:
    """Per image and class: counts (tp, pred, gt) and tiny-label counts."""
    results = []
    for it, boxes, scores, classes in detect(predict, data, batch, cross_class_iou):
        r = {"key": it.key, "kind": it.kind, "tiles": len(it.tiles), "per_class": {},
             "tiny": {"tp": 0, "pred": 0, "gt": 0}}
        for c, name in enumerate(CLASSES):
            pm, gm = classes == c, it.gt_classes == c
            p2g, g2p = match(boxes[pm], scores[pm], it.gt_boxes[gm])
            r["per_class"][name] = {"tp": int((p2g >= 0).sum()), "pred": int(pm.sum()), "gt": int(gm.sum())}
            if name == "tensor":
                gt_h = it.gt_boxes[gm][:, 3] - it.gt_boxes[gm][:, 1]
                tiny_gt = gt_h < TINY_PX
                pb = boxes[pm]
                pred_h = pb[:, 3] - pb[:, 1]
                matched_tiny = np.array([g >= 0 and tiny_gt[g] for g in p2g], dtype=bool)
                tiny_pred = matched_tiny | ((p2g < 0) & (pred_h < TINY_PX))
                r["tiny"] = {"tp": int(matched_tiny.sum()), "pred": int(tiny_pred.sum()), "gt": int(tiny_gt.sum())}
        results.append(r)
    return results


def _prf(tp, pred, gt):
    p = tp / pred if pred else (1.0 if gt == 0 else 0.0)
    r = tp / gt if gt else (1.0 if pred == 0 else 0.0)
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f


def summary(results: list[dict]) -> dict:
    """Flat dict `<kind>/<class>/{precision,recall,f1,gt}`, `<kind>/mean_f1`, `<kind>/tiny_f1`, for kind in
    photo, screenshot, all. Classes with no ground truth and no predictions in a kind are left out of its mean."""
    out: dict = {}
    for kind in ("photo", "screenshot", "all"):
        rs = [r for r in results if kind == "all" or r["kind"] == kind]
        if not rs:
            continue
        out[f"{kind}/images"] = len(rs)
        f1s = []
        for name in CLASSES:
            tp = sum(r["per_class"][name]["tp"] for r in rs)
            pred = sum(r["per_class"][name]["pred"] for r in rs)
            gt = sum(r["per_class"][name]["gt"] for r in rs)
            p, rc, f = _prf(tp, pred, gt)
            out.update({f"{kind}/{name}/precision": p, f"{kind}/{name}/recall": rc, f"{kind}/{name}/f1": f,
                        f"{kind}/{name}/gt": gt})
            if gt or pred:
                f1s.append(f)
        out[f"{kind}/mean_f1"] = float(np.mean(f1s)) if f1s else 0.0
        tp = sum(r["tiny"]["tp"] for r in rs)
        pred = sum(r["tiny"]["pred"] for r in rs)
        gt = sum(r["tiny"]["gt"] for r in rs)
        p, rc, f = _prf(tp, pred, gt)
        out.update({f"{kind}/tiny/precision": p, f"{kind}/tiny/recall": rc, f"{kind}/tiny_f1": f,
                    f"{kind}/tiny/gt": gt})
    return out


def score(results: list[dict]) -> float:
    s = summary(results)
    kinds = [k for k in ("photo", "screenshot") if f"{k}/mean_f1" in s]
    return float(np.mean([s[f"{k}/mean_f1"] for k in kinds])) if kinds else 0.0


def load_predictor(ckpt: Path | None, onnx_path: Path | None, threads: int):
    if onnx_path is not None:
        return onnx_predict(onnx_path, threads)
    state, config = load_model_state(ckpt)
    model = build_model(config)
    model.load_state_dict(state)
    return torch_predict(model)


def print_summary(summ: dict) -> None:
    for kind in ("photo", "screenshot", "all"):
        if f"{kind}/images" not in summ:
            continue
        print(f"{kind} ({summ[f'{kind}/images']} images): mean F1 {summ[f'{kind}/mean_f1']:.4f}")
        for name in (*CLASSES, "tiny"):
            f1 = summ[f"{kind}/tiny_f1"] if name == "tiny" else summ[f"{kind}/{name}/f1"]
            print(f"  {name:7s} P {summ[f'{kind}/{name}/precision']:.4f}  R {summ[f'{kind}/{name}/recall']:.4f}  "
                  f"F1 {f1:.4f}  (gt {summ[f'{kind}/{name}/gt']})")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.eval_detector", description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=None)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--ckpt", type=Path)
    g.add_argument("--onnx", type=Path)
    p.add_argument("--split", choices=("heldout", "train", "all"), default="heldout")
    p.add_argument("--eval-real", action="store_true", help=f"evaluate all renders in --data (default {REAL_EVAL_DIR})")
    p.add_argument("--cropper-onnx", type=Path, default=None, help="crop with this cropper instead of the truth")
    p.add_argument("--no-tiles", action="store_true", help="letterbox the whole crop instead of tiling it")
    p.add_argument("--square", action="store_true",
                   help="pad every tile to 512×512 (the input before issue #6) instead of trimming it to its content")
    p.add_argument("--no-cross-class-nms", action="store_true",
                   help="keep overlapping boxes of different classes (measures what cross-class NMS adds)")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    set_threads(args.threads)
    data_dir = args.data or (REAL_EVAL_DIR if args.eval_real else None)
    if data_dir is None:
        p.error("--data is required unless --eval-real")
    images = list_scene_images(data_dir)
    train_imgs, held = split_scene_images(images)
    split = "all" if args.eval_real else args.split
    images = {"heldout": held, "train": train_imgs, "all": images}[split][: args.limit]
    if not images:
        print(f"no {split} images in {data_dir}", file=sys.stderr)
        return 2
    crop_fn = cropper_crop_fn(args.cropper_onnx, args.threads) if args.cropper_onnx else None
    data = EvalSet.from_images(images, crop_fn, tiled=not args.no_tiles, square=args.square)
    with torch.no_grad():
        results = evaluate(load_predictor(args.ckpt, args.onnx, args.threads), data,
                           cross_class_iou=float("inf") if args.no_cross_class_nms else CROSS_CLASS_IOU)
    summ = summary(results)
    print_summary(summ)
    print(f"score {score(results):.4f}")
    if args.eval_real:
        names_file = Path(data_dir) / "real_models.json"
        names = json.loads(names_file.read_text())["models"] if names_file.is_file() else {}
        for r in results:
            f1 = {n: round(_prf(c["tp"], c["pred"], c["gt"])[2], 3) if c["gt"] or c["pred"] else "-"
                  for n, c in r["per_class"].items()}
            model = names.get(str(int(r["key"].split(".")[0])), "?")
            print(f"{r['key']} ({model}): F1 {f1}")
    if args.json is not None:
        args.json.write_text(json.dumps({"summary": summ, "score": score(results), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
