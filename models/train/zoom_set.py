"""Scaled-down copies of an evaluation set, to measure the scanner on views whose text is smaller than the set's.

    python -m train.zoom_set --src DIR --out DIR [--scales 0.7,0.5,0.35,0.25,0.15] [--limit N]

For each scale `s`, writes `OUT/s<100·s>/` (e.g. `OUT/s035/`) with every image of `--src` (`X.photo.jpg`,
`X.shot.png`) resized by `s` (Pillow bilinear, antialiased: what a camera further away sees; photos saved as JPEG
quality 92, screenshots as PNG; at scale 1 the files are copied) and its truth (`X.photo.json`, `X.shot.json`) with
every coordinate multiplied by the factor of the rounded width, `round(w·s) / w`: boxes (`box`, `title_box`, `value_box`), point lists (`quad`, `title_quad`,
`points`) and the image size. The generator's `scene` metadata is copied as it is. Each directory is a set that
`netron-ocr eval --images D --truth D` scores. Deterministic: the same source gives the same files.

What it is for: confidences must follow the answers down as text shrinks (`models/METRICS.md`, session 39).
Scale the development split to fit on it; never scale and fit on the real-architecture renders.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from PIL import Image

BOX_KEYS = ("box", "title_box", "value_box")
POINT_KEYS = ("quad", "title_quad", "points")


def scale_truth(value, s: float):
    """A copy of a graph JSON value with every coordinate multiplied by `s` (the image size excepted)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "scene":
                out[k] = v
            elif k in BOX_KEYS and isinstance(v, list):
                out[k] = [x * s for x in v]
            elif k in POINT_KEYS and isinstance(v, list):
                out[k] = [[x * s for x in p] for p in v]
            else:
                out[k] = scale_truth(v, s)
        return out
    if isinstance(value, list):
        return [scale_truth(v, s) for v in value]
    return value


def pairs(src: Path) -> list[tuple[Path, Path]]:
    out = []
    for p in sorted(src.iterdir()):
        for suffix in (".photo.jpg", ".shot.png"):
            if p.name.endswith(suffix):
                truth = src / (p.name[: -len(suffix.split(".")[-1]) - 1] + ".json")
                if truth.exists():
                    out.append((p, truth))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train.zoom_set", description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--scales", type=str, default="0.7,0.5,0.35,0.25,0.15")
    ap.add_argument("--limit", type=int, default=None, help="first N images in name order")
    args = ap.parse_args(argv)
    scales = [float(x) for x in args.scales.split(",")]
    if any(not 0 < s <= 1 for s in scales):
        ap.error("scales must be in (0, 1]")
    items = pairs(args.src)[: args.limit]
    if not items:
        raise SystemExit(f"no image with its truth in {args.src}")
    for s in scales:
        out = args.out / f"s{round(s * 100):03d}"
        out.mkdir(parents=True, exist_ok=True)
        for image_path, truth_path in items:
            truth = json.loads(truth_path.read_text())
            if s == 1.0:
                (out / image_path.name).write_bytes(image_path.read_bytes())
                (out / truth_path.name).write_text(json.dumps(truth) + "\n")
                continue
            with Image.open(image_path) as im:
                im = im.convert("RGB")
                w, h = im.size
                size = (max(1, round(w * s)), max(1, round(h * s)))
                small = im.resize(size, Image.BILINEAR)
            if image_path.name.endswith(".jpg"):
                small.save(out / image_path.name, quality=92)
            else:
                small.save(out / image_path.name)
            scaled = scale_truth(truth, size[0] / w)
            scaled["image"] = {"width": size[0], "height": size[1]}
            (out / truth_path.name).write_text(json.dumps(scaled) + "\n")
        print(f"{out}: {len(items)} images at {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
