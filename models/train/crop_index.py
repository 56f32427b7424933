"""The derived crop sets of docs/dataset.md (`DIR/classifier/index.jsonl`, `DIR/ocr/index.jsonl`) as Python records.

`index_records(data_dir, "classifier" | "ocr" | "ocr-titles")` returns `(SceneImage, record)` pairs. `ocr-titles`
(node titles as drawn, kind `title`) has no index file and is always derived from the truth files. When the index
file is absent
(a bare folder of fixture scenes) the records are derived from the truth files with the dataset builder's own
functions (`datagen.build.classifier_entries` / `ocr_entries`), so both paths select the same crops: classifier
titles fully visible and showing the op name (not names mode); OCR tensor labels (kind `shape`, or `name` in names
mode), graph input/output pills (`name`) and weight rows as drawn (`weight`: `W〈64×3×7×7〉`, `B = 0.5`), truncated
elements left out.

`RegionCache` keeps the source pixels around those crops on disk so that training never decodes a 2 MP image twice.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from train import common

TAG_KIND = {"shot": "screenshot", "photo": "photo"}


def scene_image(data_dir: Path, image: str) -> common.SceneImage:
    """SceneImage for an index record's `image` (`scenes/000123.photo.jpg`, relative to the dataset dir)."""
    path = Path(data_dir) / image
    if not path.is_file():
        path = common.scenes_dir(data_dir) / Path(image).name
    parts = path.name.split(".")
    if len(parts) < 3 or not parts[0].isdigit() or parts[1] not in TAG_KIND:
        raise common.DatasetError(f"{image}: not a scene image name (k.shot.png / k.photo.jpg)")
    return common.SceneImage(int(parts[0]), TAG_KIND[parts[1]], path, path.with_name(f"{parts[0]}.{parts[1]}.json"))


def index_records(data_dir: Path, subset: str) -> list[tuple[common.SceneImage, dict]]:
    if subset not in ("classifier", "ocr", "ocr-titles"):
        raise ValueError(subset)
    index = Path(data_dir) / subset / "index.jsonl"
    out: list[tuple[common.SceneImage, dict]] = []
    if index.is_file():
        cache: dict[str, common.SceneImage] = {}
        for n, line in enumerate(index.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise common.DatasetError(f"{index}:{n}: {e}") from e
            img = cache.get(rec["image"])
            if img is None:
                img = cache[rec["image"]] = scene_image(data_dir, rec["image"])
            out.append((img, rec))
        return out
    from datagen.build import classifier_entries, ocr_entries, ocr_title_entries

    derive = {"classifier": classifier_entries, "ocr": ocr_entries, "ocr-titles": ocr_title_entries}[subset]
    for img in common.list_scene_images(data_dir):
        for rec in derive(common.load_truth(img.truth_path), f"scenes/{img.image_path.name}", img.index):
            out.append((img, rec))
    return out


class RegionCache:
    """Source-image regions around crop boxes, decoded once per scene image and kept on disk.

    For every scene image, the regions `region_fn(box, width, height)` (integer pixel rectangles, clipped to the
    image) of its crops are cut at native resolution — scaled down (area filter) only when larger than
    `max_h × max_w`, never up — and packed into one flat uint8 `.npy` per image (`common.DiskCache`, memory-mapped)
    with offsets and shapes in its JSON. `get(i)` → (region pixels h×w[×3], region rectangle in source pixels,
    (image width, image height)) for the i-th (image, box) given to the constructor.
    """

    def __init__(self, items: list[tuple[common.SceneImage, tuple]], region_fn, cache_dir: Path, tag: str,
                 grey: bool, max_h: int, max_w: int, progress: bool = True, desc: str = "crop cache"):
        import cv2
        from tqdm import tqdm

        self.disk = common.DiskCache(cache_dir)
        self.entries: list = [None] * len(items)
        by_image: dict[Path, list[int]] = {}
        for i, (img, _) in enumerate(items):
            by_image.setdefault(img.image_path, []).append(i)

        def build(path: Path, boxes: list[list[float]]):
            rgb = common.load_rgb(path)
            pixels = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY) if grey else rgb
            h, w = pixels.shape[:2]
            parts, regions, shapes, offsets = [], [], [], [0]
            for box in boxes:
                r = region_fn(box, w, h)
                part = pixels[r[1]:r[3], r[0]:r[2]]
                s = min(1.0, max_h / max(1, part.shape[0]), max_w / max(1, part.shape[1]))
                if s < 1.0:
                    size = (max(1, round(part.shape[1] * s)), max(1, round(part.shape[0] * s)))
                    part = cv2.resize(part, size, interpolation=cv2.INTER_AREA)
                parts.append(np.ascontiguousarray(part).reshape(-1))
                regions.append(list(r))
                shapes.append(list(part.shape))
                offsets.append(offsets[-1] + part.size)
            flat = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
            return flat, {"boxes": boxes, "regions": regions, "shapes": shapes, "offsets": offsets, "size": [w, h]}

        for path, ids in tqdm(by_image.items(), desc=desc, disable=not progress, dynamic_ncols=True):
            img = items[ids[0]][0]
            boxes = [[float(v) for v in items[i][1]] for i in ids]
            key = f"{img.key}.{tag}"
            arr = self.disk.get(key, path, lambda: build(path, boxes))
            meta = self.disk.meta(key)
            if meta["boxes"] != boxes:  # the index changed under the same image: rebuild
                (self.disk.root / f"{key}.npy").unlink()
                arr = self.disk.get(key, path, lambda: build(path, boxes))
                meta = self.disk.meta(key)
            for j, i in enumerate(ids):
                self.entries[i] = (arr, meta["offsets"][j], tuple(meta["shapes"][j]), tuple(meta["regions"][j]),
                                   tuple(meta["size"]))

    def get(self, i: int):
        arr, offset, shape, region, size = self.entries[i]
        return arr[offset:offset + int(np.prod(shape))].reshape(shape), region, size
