"""Evaluate the operator classifier on held-out scenes with the exact inference preprocessing.

    python -m train.eval_classifier --data DIR --ckpt CKPT_DIR/best.pt [--onnx ../models/classifier.onnx]
        [--variants fp32,int8,fp16] [--split test] [--json report.json]

Crops are cut from the full-resolution source images with `classifier.preprocess_title` (title box + 7 px, PIL
bilinear) and also with detector-like random padding (0–14 px per side, fixed seed). Reports top-1 / top-5, the most
frequent confusions, the worst ops, per-category, per-theme, per-image-kind and title-height breakdowns, NLL and ECE
before/after the checkpoint's temperature. With `--onnx`, the same crops go through onnxruntime for each variant:
`fp32` (the file), `int8` (onnxruntime.quantization.quantize_dynamic, QInt8 weights) and `fp16`
(onnxruntime.transformers.float16, I/O kept fp32), measured, not assumed. Rust runs the fp32 file.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from datagen.vocab import VOCAB_PATH, load_vocab
from train import classifier, common
from train.classifier import expected_calibration_error, softmax

HEIGHT_BUCKETS = ((0, 10, "<10px"), (10, 16, "10-16px"), (16, 24, "16-24px"), (24, 1e9, ">=24px"))
# ORT 1.32 CPU runs these in fp16; anything else stays fp32 in the fp16 variant (GRU and shape plumbing in fp16 crash
# session creation with a segfault).
FP16_OPS = {"Conv", "Relu", "MatMul", "Gemm", "Add", "GlobalAveragePool", "Flatten"}


def cut_crops(crops: list[classifier.TitleCrop], pads_per_crop) -> list[np.ndarray]:
    """Exact inference crops (PIL, from the source image) for every crop; `pads_per_crop[i]` = 4 pads or a float."""
    out: list[np.ndarray | None] = [None] * len(crops)
    by_image: dict[Path, list[int]] = {}
    for i, c in enumerate(crops):
        by_image.setdefault(c.image.image_path, []).append(i)
    for path, ids in by_image.items():
        with Image.open(path) as im:
            rgb = im.convert("RGB")
            for i in ids:
                p = pads_per_crop[i]
                pads = (p, p, p, p) if isinstance(p, (int, float)) else p
                box = classifier.padded_box(crops[i].box, pads, rgb.width, rgb.height)
                out[i] = np.asarray(rgb.resize((classifier.INPUT_W, classifier.INPUT_H), Image.BILINEAR, box=box))
    return out


def make_variant(onnx_path: Path, variant: str, work: Path) -> Path:
    import onnx

    if variant == "fp32":
        return onnx_path
    out = work / f"{onnx_path.stem}.{variant}.onnx"
    if variant == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(onnx_path), str(out), weight_type=QuantType.QInt8)
    elif variant == "fp16":
        from onnxruntime.transformers.float16 import convert_float_to_float16

        proto = onnx.load(str(onnx_path))
        block = sorted({n.op_type for n in proto.graph.node} - FP16_OPS)
        onnx.save(convert_float_to_float16(proto, keep_io_types=True, op_block_list=block), str(out))
    else:
        raise ValueError(f"unknown variant {variant!r}")
    return out


def ort_logits(path: Path, images: list[np.ndarray], batch: int = 128) -> np.ndarray:
    run = common.OrtRunner(path)
    return np.concatenate([run(common.to_input_tensor(images[s:s + batch]))["logits"]
                           for s in range(0, len(images), batch)])


def metrics(logits: np.ndarray, labels: np.ndarray, crops: list[classifier.TitleCrop], ops: list[str],
            categories: list[str], top: int = 20) -> dict:
    probs = softmax(logits)
    pred = probs.argmax(1)
    correct = pred == labels
    top5 = (np.argsort(-logits, 1)[:, :5] == labels[:, None]).any(1)
    nll = float(-np.log(np.maximum(probs[np.arange(len(labels)), labels], 1e-12)).mean()) + 0.0

    def acc(mask) -> dict:
        mask = np.asarray(mask, bool)
        return {"n": int(mask.sum()), "top1": float(correct[mask].mean()) if mask.any() else None}

    conf = Counter((ops[t], ops[p]) for t, p in zip(labels, pred) if t != p)
    out = {
        "n": int(len(labels)), "top1": float(correct.mean()), "top5": float(top5.mean()), "nll": nll,
        "ece": expected_calibration_error(probs, labels),
        "confusions": [{"true": t, "pred": p, "count": c} for (t, p), c in conf.most_common(top)],
        "per_category": {cat: acc([categories[l] == cat for l in labels]) for cat in sorted(set(categories))},
        "per_theme": {th: acc([c.theme == th for c in crops]) for th in sorted({c.theme for c in crops})},
        "per_image_kind": {k: acc([c.image.kind == k for c in crops]) for k in sorted({c.image.kind for c in crops})},
        "per_title_height": {name: acc([lo <= c.box[3] - c.box[1] < hi for c in crops])
                             for lo, hi, name in HEIGHT_BUCKETS},
    }
    out["per_category"] = {k: v for k, v in out["per_category"].items() if v["n"]}
    per_op = {ops[k]: acc(labels == k) for k in sorted(set(labels.tolist()))}
    out["worst_ops"] = sorted(({"op": k, **v} for k, v in per_op.items()), key=lambda d: d["top1"])[:10]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.eval_classifier", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--ckpt", type=Path, default=None, help="best.pt (PyTorch, raw logits + its temperature)")
    p.add_argument("--onnx", type=Path, default=None, help="exported classifier.onnx (temperature folded in)")
    p.add_argument("--variants", type=str, default="fp32", help="comma list of fp32,int8,fp16 (with --onnx)")
    p.add_argument("--vocab", type=Path, default=VOCAB_PATH)
    p.add_argument("--split", choices=["test", "val", "train", "all"], default="test")
    p.add_argument("--max", type=int, default=None, help="evaluate at most this many crops (random, fixed seed)")
    p.add_argument("--min-scene", type=int, default=0, help="only scenes with index ≥ this (e.g. those added to "
                   "the dataset after an older model chose its checkpoint on the validation split)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", type=Path, default=None, help="write the full report here")
    args = p.parse_args(argv)
    if args.ckpt is None and args.onnx is None:
        p.error("give --ckpt and/or --onnx")
    common.set_threads(args.threads)
    vocab = load_vocab(args.vocab)
    ops = list(vocab.ops)
    categories = [o.category for o in vocab.operators]
    crops = [c for c in classifier.collect_title_crops(args.data, vocab)
             if (args.split == "all" or classifier.split_of(c.image.index) == args.split)
             and c.image.index >= args.min_scene]
    if args.max and len(crops) > args.max:
        keep = sorted(np.random.default_rng(0).choice(len(crops), args.max, replace=False).tolist())
        crops = [crops[i] for i in keep]
    if not crops:
        raise SystemExit(f"no {args.split} title crops under {args.data}")
    labels = np.array([c.label for c in crops])
    t0 = time.time()
    inputs = {"pad7": cut_crops(crops, [classifier.INFER_PAD] * len(crops)),
              "random_pad": cut_crops(crops, classifier.fixed_eval_pads(len(crops), 4321))}
    report: dict = {"data": str(args.data), "split": args.split, "n": len(crops),
                    "crop_seconds": round(time.time() - t0, 1)}

    if args.ckpt is not None:
        state = torch.load(args.ckpt, map_location="cpu", weights_only=False)
        model = classifier.build_model(state["config"])
        model.load_state_dict(state["model"])
        t = float(state.get("temperature", 1.0))
        report["temperature"] = t
        for name, images in inputs.items():
            raw = classifier.predict_logits(model, images)
            m = metrics(raw / t, labels, crops, ops, categories)
            m["ece_before_temperature"] = expected_calibration_error(softmax(raw), labels)
            report[f"pytorch_{name}"] = m
    if args.onnx is not None:
        with tempfile.TemporaryDirectory() as work:
            for variant in args.variants.split(","):
                path = make_variant(args.onnx, variant, Path(work))
                for name, images in inputs.items():
                    t1 = time.time()
                    m = metrics(ort_logits(path, images), labels, crops, ops, categories)
                    m["seconds"] = round(time.time() - t1, 2)
                    m["bytes"] = path.stat().st_size
                    report[f"onnx_{variant}_{name}"] = m
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


def print_report(report: dict) -> None:
    print(f"{report['n']} title crops ({report['split']} split of {report['data']})")
    if "temperature" in report:
        print(f"temperature {report['temperature']:.4f}")
    for key, m in report.items():
        if not isinstance(m, dict) or "top1" not in m:
            continue
        line = f"{key:28s} top1 {m['top1']:.4f} top5 {m['top5']:.4f} nll {m['nll']:.4f} ece {m['ece']:.4f}"
        if "ece_before_temperature" in m:
            line += f" (before T {m['ece_before_temperature']:.4f})"
        print(line)
    first = next((m for m in report.values() if isinstance(m, dict) and "top1" in m), None)
    if first:
        def table(name: str, key: str) -> None:
            cells = (f"{k} {'-' if v['top1'] is None else format(v['top1'], '.4f')} (n={v['n']})"
                     for k, v in first[key].items())
            print(f"{name}: " + ", ".join(cells))

        table("per category", "per_category")
        table("per title height", "per_title_height")
        table("per image kind", "per_image_kind")
        table("per theme", "per_theme")
        print("top confusions: " + ", ".join(f"{c['true']}→{c['pred']} ×{c['count']}"
                                            for c in first["confusions"][:10]))

if __name__ == "__main__":
    sys.exit(main())
