"""Parity of the Rust crop preprocessing (core/src/classify.rs, core/src/read.rs) with the Python inference
reference used in training (`classifier.preprocess_title` + `common.to_input_tensor`, `ocr.preprocess_text` +
`ocr.to_ocr_tensor`).

Run from models/: `python -m pytest train/tests/test_rust_crop_parity.py`. It needs the example binary
`crop_dump` (`cargo build --release -p netron-ocr-core --example crop_dump`): taken from `$NETRON_OCR_CROP_DUMP`,
else `$CARGO_TARGET_DIR/release/examples/crop_dump` (default target dir /root/.cache/netron-ocr/target), built
with cargo when missing; skipped when there is neither a binary nor cargo.

Inputs: every classifier title box and OCR text box that training selects (`train.crop_index`) in the fixture
scenes (`tests/fixtures/scenes`, 4 screenshots as PNG, 4 photos as JPEG). Differences are reported in 8-bit grey
levels (the normalised difference times `255 · std` for the classifier, `127.5` for the OCR).

Tolerances:
- same decoded pixels (PNG screenshots, and each photo's Pillow decoding re-saved as PNG) and the same
  f32-representable boxes (the Rust `BBox` is f32): the resampler is Pillow's algorithm re-implemented bit for
  bit and the float normalisation follows the PyTorch reference operation by operation, so the tensors must
  be identical up to float rounding (1e-3 grey levels; measured: identical);
- the photos' JPEG files as decoded by each side (Pillow's libjpeg-turbo vs the `image` crate's decoder):
  max 6 grey levels, mean under 0.35 (measured on the 4 fixture photos: max 4, mean ≤ 0.24 for the classifier
  input, max 1, mean ≤ 0.05 for the OCR input) — the decoders' own IDCT/upsampling differences, not
  preprocessing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from train import classifier, common, crop_index, ocr

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "scenes"
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", "/root/.cache/netron-ocr/target"))

EXACT_MAX_LEVELS = 1e-3
SKEW_MAX_DEG_DIFF = 1e-9
JPEG_MAX_LEVELS = 6.0
JPEG_MEAN_LEVELS = 0.35
JPEG_SKEW_DEG_DIFF = 0.1

CLS_LEVEL = 255.0 * np.array(common.STD, np.float64).reshape(1, 3, 1, 1)  # normalised diff → grey levels
OCR_LEVEL = 127.5


@pytest.fixture(scope="module")
def crop_dump() -> Path:
    override = os.environ.get("NETRON_OCR_CROP_DUMP")
    exe = Path(override) if override else TARGET / "release" / "examples" / "crop_dump"
    if not exe.is_file():
        cargo = shutil.which("cargo")
        if cargo is None:
            pytest.skip(f"no {exe} and no cargo to build it")
        subprocess.run([cargo, "build", "--release", "-p", "netron-ocr-core", "--example", "crop_dump"], cwd=REPO,
                       check=True, env={**os.environ, "CARGO_TARGET_DIR": str(TARGET)})
    assert exe.is_file(), exe
    return exe


@pytest.fixture(scope="module")
def boxes_by_image() -> dict[Path, dict[str, list]]:
    """image path → {"titles": [...], "texts": [...], "skew_region": [...]} of the crops training uses; the skew
    region is the truth canvas grown by 4% (`ocr.canvas_region`, f32-rounded like every box here)."""
    out: dict[Path, dict[str, list]] = defaultdict(lambda: {"titles": [], "texts": []})
    for subset, key in (("classifier", "titles"), ("ocr", "texts")):
        for img, rec in crop_index.index_records(FIXTURES, subset):
            # The Rust API takes f32 boxes: give both sides the same (f32-representable) coordinates.
            x0, y0, x1, y1 = (float(np.float32(v)) for v in rec["box"])
            if subset == "classifier" and (x1 - x0 < classifier.MIN_TITLE_PX or y1 - y0 < classifier.MIN_TITLE_PX):
                continue
            if subset == "ocr" and y1 - y0 < ocr.MIN_TEXT_PX:
                continue
            out[img.image_path][key].append([x0, y0, x1, y1])
    assert len(out) == 8, sorted(out)
    for path, boxes in out.items():
        truth = common.load_truth(path.with_suffix(".json"))
        boxes["skew_region"] = [float(np.float32(v)) for v in ocr.canvas_region(truth)]
    return dict(out)


def python_tensors(image: Image.Image, boxes: dict[str, list]) -> dict[str, np.ndarray]:
    rgb = image.convert("RGB")
    grey = rgb.convert("L")
    skew = ocr.estimate_skew(np.asarray(grey), boxes["skew_region"])
    cls = common.to_input_tensor([classifier.preprocess_title(rgb, b) for b in boxes["titles"]]).numpy()
    txt = ocr.to_ocr_tensor([ocr.preprocess_text(grey, b, skew_deg=skew) for b in boxes["texts"]]).numpy()
    return {"classifier": cls, "ocr": txt, "skew": np.float64(skew)}


def rust_tensors(exe: Path, image_path: Path, boxes: dict[str, list], tmp: Path) -> dict[str, np.ndarray]:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "boxes.json").write_text(json.dumps(boxes))
    subprocess.run([str(exe), str(image_path), str(tmp / "boxes.json"), str(tmp / "out")], check=True)
    out = {name: np.load(tmp / "out" / f"{name}.npy") for name in ("classifier", "ocr")}
    out["skew"] = np.float64(json.loads((tmp / "out" / "skew.json").read_text())["skew"])
    return out


def level_diffs(py: dict[str, np.ndarray], rs: dict[str, np.ndarray],
                skew_tolerance: float = SKEW_MAX_DEG_DIFF) -> dict[str, np.ndarray]:
    assert py["classifier"].shape == rs["classifier"].shape and rs["classifier"].dtype == np.float32
    assert py["ocr"].shape == rs["ocr"].shape and rs["ocr"].dtype == np.float32
    assert abs(py["skew"] - rs["skew"]) <= skew_tolerance, (float(py["skew"]), float(rs["skew"]))
    return {"classifier": np.abs(py["classifier"].astype(np.float64) - rs["classifier"]) * CLS_LEVEL,
            "ocr": np.abs(py["ocr"].astype(np.float64) - rs["ocr"]) * OCR_LEVEL}


def test_same_pixels_give_the_same_tensors(crop_dump, boxes_by_image, tmp_path):
    """PNG screenshots as they are, and the photos as Pillow decodes them (re-saved losslessly). One fixture
    photo (000003, skew ≈ 7°) takes the rotated-crop path: at least one must."""
    worst = {"classifier": 0.0, "ocr": 0.0}
    rotated = 0
    for path, boxes in sorted(boxes_by_image.items()):
        with Image.open(path) as im:
            image = im.convert("RGB")
        src = path
        if path.suffix.lower() != ".png":
            src = tmp_path / f"{path.stem}.png"
            image.save(src)
        py = python_tensors(image, boxes)
        rotated += abs(float(py["skew"])) >= ocr.SKEW_MIN_DEG
        diffs = level_diffs(py, rust_tensors(crop_dump, src, boxes, tmp_path / path.stem))
        for name, d in diffs.items():
            print(f"{path.name} {name}: {d.shape[0]} crops, max {d.max():.2e} levels (skew {float(py['skew']):.3f}°)")
            assert d.max() <= EXACT_MAX_LEVELS, (path.name, name, float(d.max()), float((d > 1e-3).mean()))
            worst[name] = max(worst[name], float(d.max()))
    print("worst:", worst)
    assert rotated >= 1


def test_jpeg_photos_within_decoder_tolerance(crop_dump, boxes_by_image, tmp_path):
    """The photo JPEGs decoded by each side: only the JPEG decoders differ. Their skew estimates must agree within
    JPEG_SKEW_DEG_DIFF; the OCR crops are then compared at the Python skew (a 0.05° turn alone moves stroke edges
    of a rotated crop by tens of grey levels here and there)."""
    photos = {p: b for p, b in boxes_by_image.items() if p.suffix.lower() in (".jpg", ".jpeg")}
    assert len(photos) == 4
    for path, boxes in sorted(photos.items()):
        with Image.open(path) as im:
            image = im.convert("RGB")
        py = python_tensors(image, boxes)
        # The skew estimates may differ a little (checked); the crops are compared at the same skew.
        at_python_skew = dict(boxes, skew=float(py["skew"]))
        diffs = level_diffs(py, rust_tensors(crop_dump, path, at_python_skew, tmp_path / path.stem),
                            JPEG_SKEW_DEG_DIFF)
        for name, d in diffs.items():
            print(f"{path.name} {name}: max {d.max():.3f} levels, mean {d.mean():.4f}")
            assert d.max() <= JPEG_MAX_LEVELS, (path.name, name, float(d.max()))
            assert d.mean() <= JPEG_MEAN_LEVELS, (path.name, name, float(d.mean()))


def test_python_reference_is_sensitive_to_the_classic_mistakes(boxes_by_image):
    """The comparison above can fail: BGR order or a non-antialiased resize move the tensors far beyond the
    tolerances (guards against a parity test that compares a thing with itself)."""
    path, boxes = next((p, b) for p, b in sorted(boxes_by_image.items()) if p.suffix == ".png")
    with Image.open(path) as im:
        rgb = im.convert("RGB")
    ref = python_tensors(rgb, boxes)["classifier"]
    bgr = Image.fromarray(np.asarray(rgb)[:, :, ::-1].copy())
    swapped = python_tensors(bgr, boxes)["classifier"]
    assert (np.abs(ref - swapped) * CLS_LEVEL).max() > 10

    def nearest(image, box, pad=classifier.INFER_PAD):
        b = classifier.padded_box(box, (pad,) * 4, image.width, image.height)
        return np.asarray(image.resize((classifier.INPUT_W, classifier.INPUT_H), Image.NEAREST, box=b))

    other = common.to_input_tensor([nearest(rgb, b) for b in boxes["titles"]]).numpy()
    assert (np.abs(ref - other) * CLS_LEVEL).max() > 10
