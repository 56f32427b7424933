"""Time the four models plus their Python reference preprocessing with onnxruntime, single-threaded, on the same
scenes and the same work as the Rust benchmark `core/benches/pipeline.rs` (group `stage`), and report the ratio
Rust / onnxruntime when the Rust criterion results are available.

    cd models && nice -n 10 /root/.cache/netron-ocr/venv/bin/python -m train.bench_ort \
        [--scenes DIR] [--models DIR] [--criterion $CARGO_TARGET_DIR/criterion] [--repeat 10] [--json out.json]

Scene rule (identical to the Rust bench): photos of scene index < 1000 with short side 1080 in
`--scenes` (default /root/.cache/netron-ocr/data/v1-s1/scenes; the committed fixtures, any size, when absent);
the one whose truth node count is closest to 20 (ties: first by name). Stages timed (median of `--repeat` runs):
- crop: `cropper.preprocess` + `to_input_tensor` + run + `cropper.decode`;
- detect: tiles of the truth canvas padded by 4% (`detector.tiles_for_crop`), `letterbox` (input trimmed to
  `detector.input_size`) + `to_detector_tensor` + run + `postprocess` per tile, `merge_tiles`, `cross_class_nms`;
- detect_square: the same with every tile padded to 512 × 512 (the input before issue #6; Rust
  `stage/detect_square`);
- classify: `classifier.preprocess_title` on every truth title box, normalisation, one batched run, softmax;
- skew: `ocr.estimate_skew` on the truth canvas padded by 4% (Rust `stage/skew`, `TextReader::estimate_skew`);
- read: `ocr.preprocess_text` at that skew on every truth tensor / input / output box, `to_ocr_tensor`, one batched
  run, greedy CTC.
Image decoding is excluded on both sides.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

from train import classifier, cropper, detector, ocr
from train.common import OrtRunner, load_rgb, load_truth, to_input_tensor

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SCENES = Path("/root/.cache/netron-ocr/data/v1-s1/scenes")


def pick_scene(scenes: Path, target: int = 20) -> Path:
    dataset = scenes != REPO / "tests" / "fixtures" / "scenes"
    best = None
    for p in sorted(scenes.glob("*.photo.json")):
        if dataset and int(p.name.split(".")[0]) >= 1000:
            continue
        g = load_truth(p)
        if dataset and min(g["image"]["width"], g["image"]["height"]) != 1080:
            continue
        d = abs(len(g["nodes"]) - target)
        if best is None or d < best[0]:
            best = (d, p)
    if best is None:
        raise SystemExit(f"no candidate scene in {scenes}")
    return best[1]


def median_ms(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000.0)
    return statistics.median(times)


def criterion_ms(root: Path, group: str, name: str) -> float | None:
    f = root / group / name / "new" / "estimates.json"
    if not f.is_file():
        return None
    return json.loads(f.read_text())["median"]["point_estimate"] / 1e6


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.bench_ort", description=__doc__.split("\n")[0])
    p.add_argument("--scenes", type=Path, default=DEFAULT_SCENES)
    p.add_argument("--models", type=Path, default=REPO / "models")
    p.add_argument("--criterion", type=Path, default=Path("/root/.cache/netron-ocr/target/criterion"))
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    scenes = args.scenes if args.scenes.is_dir() else REPO / "tests" / "fixtures" / "scenes"
    truth_path = pick_scene(scenes)
    image_path = truth_path.with_name(truth_path.name.replace(".photo.json", ".photo.jpg"))
    truth = load_truth(truth_path)
    rgb = load_rgb(image_path)
    pil = Image.fromarray(rgb)
    grey = pil.convert("L")
    titles = [n["title_box"] for n in truth["nodes"] if n.get("title_box")]
    texts = [t["box"] for t in truth["tensors"]] + [q["box"] for q in truth["inputs"] + truth["outputs"]]
    print(f"scene {image_path} ({pil.width}x{pil.height}, {len(truth['nodes'])} nodes): "
          f"{len(titles)} title boxes, {len(texts)} text boxes")

    runners = {name: OrtRunner(args.models / f"{name}.onnx", threads=1)
               for name in ("cropper", "detector", "classifier", "ocr")}

    def crop():
        out = runners["cropper"](to_input_tensor(cropper.preprocess(rgb)))
        return cropper.decode(out["proj_x"][0], out["proj_y"][0], out["margins"][0])

    canvas = detector.padded_canvas(truth)

    def detect(square: bool = False):
        tiles = detector.tiles_for_crop(canvas)
        per_tile = []
        for t in tiles:
            arr, lb = detector.letterbox(pil, t.box, square=square)
            out = runners["detector"](detector.to_detector_tensor([arr], [lb]))
            per_tile.append(detector.postprocess(out["heatmap"][0], out["size"][0], out["offset"][0], lb))
        boxes, scores, classes = detector.merge_tiles(per_tile, tiles, canvas)
        keep = detector.cross_class_nms(boxes, scores, classes)
        return boxes[keep], scores[keep], classes[keep]

    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)

    def classify():
        crops = np.stack([classifier.preprocess_title(pil, b) for b in titles])
        x = (crops.transpose(0, 3, 1, 2).astype(np.float32) / 255.0 - mean) / std
        return classifier.softmax(runners["classifier"](x)["logits"])

    grey_array = np.asarray(grey)
    skew = ocr.estimate_skew(grey_array, canvas)

    def read():
        x = ocr.to_ocr_tensor([ocr.preprocess_text(grey, b, skew_deg=skew) for b in texts])
        return ocr.ctc_greedy_ids(runners["ocr"](x)["logits"])

    stages = {"crop": crop, "detect": detect, "detect_square": lambda: detect(square=True), "classify": classify,
              "skew": lambda: ocr.estimate_skew(grey_array, canvas), "read": read}
    report = {"scene": str(image_path), "stages": {}}
    print(f"{'stage':<10} {'ort ms':>8} {'tract ms':>9} {'ratio':>6}")
    for name, fn in stages.items():
        ort_ms = median_ms(fn, args.repeat)
        rust_ms = criterion_ms(args.criterion, "stage", name)
        ratio = rust_ms / ort_ms if rust_ms else None
        report["stages"][name] = {"onnxruntime_ms": ort_ms, "rust_ms": rust_ms, "ratio": ratio}
        print(f"{name:<10} {ort_ms:>8.1f} {rust_ms if rust_ms is not None else float('nan'):>9.1f} "
              f"{ratio if ratio is not None else float('nan'):>6.2f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
