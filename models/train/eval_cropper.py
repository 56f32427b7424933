"""Evaluate the cropper on held-out scenes: containment, IoU and crop area, separately for photos and screenshots.

    python -m train.eval_cropper --data DIR (--ckpt CKPT_DIR/best.pt | --onnx ../models/cropper.onnx)
        [--split heldout|train|all] [--limit N] [--json OUT.json]

Metrics per image kind (photo / screenshot):
- containment: share of ground-truth element boxes (nodes, inputs, outputs, tensors; each clipped to the image)
  that lie fully inside the predicted crop (which already includes the 4% padding), with a 0.5 px tolerance.
  Target 100%; every miss is listed (scene, element, box, crop).
- mean IoU between the predicted crop and the true content box (canvas.box);
- crop area / true content area (mean and median).
Score used to pick the best checkpoint during training: mean IoU − 5 × (1 − containment), over all images.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from train.common import (
    DiskCache,
    OrtRunner,
    TorchRunner,
    box_iou,
    clip_box,
    default_cache_dir,
    list_scene_images,
    load_model_state,
    load_truth,
    set_threads,
    split_scene_images,
    to_input_tensor,
    truth_elements,
)
from train.cropper import OUTPUT_NAMES, SIZE, CropperData, build_model, decode, decode_mirrored

TOLERANCE_PX = 0.5
MISS_PENALTY = 5.0
# Held-out scenes of the development split (docs/dataset.md, DEVALL); the other held-out scenes are the test part.
DEV_SCENES = range(1009, 2330)


def torch_predict(model):
    runner = TorchRunner(model, OUTPUT_NAMES)
    return lambda x: runner(x)


def onnx_predict(path: Path, threads: int = 1):
    runner = OrtRunner(path, threads)
    return lambda x: runner(x)


def evaluate(predict, data: CropperData, batch: int = 16, mirror: bool = False) -> list[dict]:
    """Run `predict` (float32 [N,3,512,512] → dict of outputs) over `data`; one result dict per image. With
    `mirror`, also on the mirrored inputs, keeping the union of the two crops (`cropper.decode_mirrored`)."""
    results = []
    for start in range(0, len(data), batch):
        idx = range(start, min(len(data), start + batch))
        x = to_input_tensor([np.asarray(data.input(i)) for i in idx])
        out = predict(x)
        flipped = predict(torch.flip(x, [-1])) if mirror else None
        for k, i in enumerate(idx):
            s = data.images[i]
            truth = load_truth(s.truth_path)
            w, h = truth["image"]["width"], truth["image"]["height"]
            reading = (out["proj_x"][k], out["proj_y"][k], out["margins"][k])
            if flipped is None:
                crop_n = decode(*reading)
            else:
                crop_n = decode_mirrored(reading, (flipped["proj_x"][k], flipped["proj_y"][k], flipped["margins"][k]))
            crop = [crop_n[0] * w, crop_n[1] * h, crop_n[2] * w, crop_n[3] * h]
            true_box = clip_box(truth["canvas"]["box"], w, h)
            misses, n = [], 0
            for kind, eid, box in truth_elements(truth):
                b = clip_box(box, w, h)
                if b[2] <= b[0] or b[3] <= b[1]:
                    continue
                n += 1
                inside = (b[0] >= crop[0] - TOLERANCE_PX and b[1] >= crop[1] - TOLERANCE_PX
                          and b[2] <= crop[2] + TOLERANCE_PX and b[3] <= crop[3] + TOLERANCE_PX)
                if not inside:
                    misses.append({"element": eid, "kind": kind, "box": [round(v, 1) for v in b]})
            true_area = max(1e-9, (true_box[2] - true_box[0]) * (true_box[3] - true_box[1]))
            results.append({
                "key": s.key, "kind": s.kind, "crop": [round(v, 1) for v in crop],
                "true_box": [round(v, 1) for v in true_box], "iou": box_iou(crop, true_box),
                "area_ratio": (crop[2] - crop[0]) * (crop[3] - crop[1]) / true_area,
                "boxes": n, "misses": misses,
            })
    return results


def summary(results: list[dict]) -> dict:
    """Flat metrics dict: `<kind>/containment`, `<kind>/mean_iou`, … for kind in photo, screenshot, all."""
    out: dict = {}
    for kind in ("photo", "screenshot", "all"):
        rs = [r for r in results if kind == "all" or r["kind"] == kind]
        if not rs:
            continue
        boxes = sum(r["boxes"] for r in rs)
        missed = sum(len(r["misses"]) for r in rs)
        ratios = np.array([r["area_ratio"] for r in rs])
        out[f"{kind}/images"] = len(rs)
        out[f"{kind}/boxes"] = boxes
        out[f"{kind}/missed"] = missed
        out[f"{kind}/images_with_miss"] = sum(1 for r in rs if r["misses"])
        out[f"{kind}/containment"] = 1.0 - missed / boxes if boxes else 1.0
        out[f"{kind}/mean_iou"] = float(np.mean([r["iou"] for r in rs]))
        out[f"{kind}/area_ratio_mean"] = float(ratios.mean())
        out[f"{kind}/area_ratio_median"] = float(np.median(ratios))
    return out


def score(results: list[dict]) -> float:
    s = summary(results)
    return s.get("all/mean_iou", 0.0) - MISS_PENALTY * (1.0 - s.get("all/containment", 1.0))


def load_predictor(ckpt: Path | None, onnx_path: Path | None, threads: int):
    if onnx_path is not None:
        return onnx_predict(onnx_path, threads)
    state, config = load_model_state(ckpt)
    model = build_model(config)
    model.load_state_dict(state)
    return torch_predict(model)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.eval_cropper", description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--ckpt", type=Path)
    g.add_argument("--onnx", type=Path)
    p.add_argument("--split", choices=("heldout", "train", "all"), default="heldout")
    p.add_argument("--part", choices=("dev", "test", "all"), default="all",
                   help="of the held-out scenes: the development split (1009 ≤ k < 2330, DEVALL), the others, or all")
    p.add_argument("--mirror", action="store_true", help="union with the mirrored input's crop (CropParams::mirror)")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cache", type=Path, default=None)
    p.add_argument("--cache-format", choices=DiskCache.FORMATS, default="png", help="as for train.cropper")
    p.add_argument("--json", type=Path, default=None, help="write summary and per-image results here")
    args = p.parse_args(argv)
    set_threads(args.threads)
    images = list_scene_images(args.data)
    train_imgs, held = split_scene_images(images)
    images = {"heldout": held, "train": train_imgs, "all": images}[args.split]
    if args.part != "all":
        images = [s for s in images if (s.index in DEV_SCENES) == (args.part == "dev")]
    images = images[: args.limit]
    if not images:
        print(f"no {args.split} images in {args.data}", file=sys.stderr)
        return 2
    data = CropperData(images, DiskCache(args.cache or default_cache_dir(args.data, f"cropper-{SIZE}"),
                                               args.cache_format))
    data.warm()
    with torch.no_grad():
        results = evaluate(load_predictor(args.ckpt, args.onnx, args.threads), data, mirror=args.mirror)
    summ = summary(results)
    for kind in ("photo", "screenshot", "all"):
        if f"{kind}/images" not in summ:
            continue
        print(f"{kind:10s} images {summ[f'{kind}/images']:5d}  containment {100 * summ[f'{kind}/containment']:.3f}% "
              f"({summ[f'{kind}/missed']} of {summ[f'{kind}/boxes']} boxes missed, "
              f"{summ[f'{kind}/images_with_miss']} images)  mean IoU {summ[f'{kind}/mean_iou']:.4f}  "
              f"area ratio mean {summ[f'{kind}/area_ratio_mean']:.3f} median {summ[f'{kind}/area_ratio_median']:.3f}")
    print(f"score {score(results):.4f}")
    for r in results:
        for m in r["misses"]:
            print(f"MISS {r['key']} {m['kind']} {m['element']} box {m['box']} crop {r['crop']}")
    if args.json is not None:
        args.json.write_text(json.dumps({"summary": summ, "score": score(results), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
