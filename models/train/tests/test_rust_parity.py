"""Rust vs Python: cropper/detector preprocessing and post-processing on the committed fixture scenes.

The Rust side is `core/examples/preprocess_dump.rs`; build it first:

    CARGO_TARGET_DIR=/root/.cache/netron-ocr/target cargo build --release -p netron-ocr-core --example preprocess_dump

(or point NETRON_OCR_PREPROCESS_DUMP at the binary). Without the binary the tests are skipped.

What is compared, per fixture image (tests/fixtures/scenes/*.photo.jpg and *.shot.png):
- decoding: PNG pixels must be identical; JPEG decoders differ (the image crate vs Pillow's libjpeg-turbo), the
  difference is measured and bounded (mean ≤ JPEG_MEAN_LEVELS grey levels);
- cropper input (`cropper.preprocess` + `to_input_tensor`) from the same decoded pixels: Rust reproduces OpenCV
  INTER_LINEAR bit for bit (`crop::resize_linear_cv`), so max abs diff ≤ 1e-5 after normalisation (the loose
  bound the issue asked for, one grey level max and 0.002 mean, would also let fast_image_resize's
  Interpolation(Bilinear) pass: it measured max 1 level, mean 0.0037, on 000001.photo.jpg);
- detector input (`letterbox` + `to_detector_tensor`) from the same decoded pixels and crop: the same trimmed
  shape [1, 3, H, W] (H, W = `detector.input_size(tw, th)`, not 512 × 512) and, Rust being Pillow-exact, max abs
  diff ≤ 1e-5;
- cropper decoding (`cropper.decode`) and detector post-processing (`detector.postprocess`) on the very outputs
  the Rust model run produced (the detector's on its H/4 × W/4 grid): same crop within 1e-9, same detections
  (count, classes, order), boxes within 1e-3 px, scores within 1e-5.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from train import cropper, detector
from train.common import load_rgb, load_truth, to_input_tensor

REPO = Path(__file__).resolve().parents[3]
SCENES = REPO / "tests" / "fixtures" / "scenes"
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", "/root/.cache/netron-ocr/target"))
BINARY = Path(os.environ.get("NETRON_OCR_PREPROCESS_DUMP", TARGET / "release" / "examples" / "preprocess_dump"))

CROP_MAX = 1e-5
JPEG_MEAN_LEVELS = 1.0
DET_MAX = 1e-5

IMAGES = sorted(list(SCENES.glob("0*.photo.jpg")) + list(SCENES.glob("0*.shot.png")))


def truth_of(image: Path) -> dict:
    return load_truth(image.with_name(image.name.rsplit(".", 1)[0] + ".json"))


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    if not BINARY.is_file():
        pytest.skip(f"{BINARY} not built (cargo build --release -p netron-ocr-core --example preprocess_dump)")
    out = {}
    for image in IMAGES:
        d = tmp_path_factory.mktemp(image.name.replace(".", "_"))
        crop = detector.padded_canvas(truth_of(image))
        subprocess.run([str(BINARY), str(image), str(d), *(repr(float(v)) for v in crop)], check=True)
        out[image.name] = (d, crop)
    return out


@pytest.mark.parametrize("image", IMAGES, ids=lambda p: p.name)
def test_decoding(image, dumps):
    d, _ = dumps[image.name]
    rust = np.load(d / "decoded.npy")
    py = load_rgb(image)
    assert rust.shape == py.shape
    diff = np.abs(rust.astype(np.int16) - py.astype(np.int16))
    if image.suffix == ".png":
        assert diff.max() == 0
    else:
        print(f"{image.name}: JPEG decoders differ by {diff.mean():.3f} levels on average, max {diff.max()}")
        assert diff.mean() <= JPEG_MEAN_LEVELS, f"JPEG decoders differ by {diff.mean():.3f} levels on average"


@pytest.mark.parametrize("image", IMAGES, ids=lambda p: p.name)
def test_cropper_input(image, dumps):
    d, _ = dumps[image.name]
    decoded = np.load(d / "decoded.npy")
    py = to_input_tensor(cropper.preprocess(decoded)).numpy()
    rust = np.load(d / "cropper_input.npy")
    assert rust.shape == py.shape == (1, 3, 512, 512)
    diff = np.abs(rust - py)
    assert diff.max() <= CROP_MAX, f"max {diff.max():.4f}, mean {diff.mean():.5f}"


@pytest.mark.parametrize("image", IMAGES, ids=lambda p: p.name)
def test_detector_input(image, dumps):
    d, crop = dumps[image.name]
    decoded = np.load(d / "decoded.npy")
    arr, lb = detector.letterbox(Image.fromarray(decoded), crop)
    py = detector.to_detector_tensor([arr], [lb]).numpy()
    rust = np.load(d / "detector_input.npy")
    res = json.loads((d / "result.json").read_text())
    assert (res["letterbox"]["tw"], res["letterbox"]["th"]) == (lb.tw, lb.th)
    w, h = detector.input_size(lb.tw, lb.th)
    assert (res["letterbox"]["input_w"], res["letterbox"]["input_h"]) == (w, h)
    assert rust.shape == py.shape == (1, 3, h, w)
    assert h < 512 or w < 512, "the fixture crops are not square: the input must be trimmed"
    diff = np.abs(rust - py)
    assert diff.max() <= DET_MAX, f"max {diff.max():.4f}, mean {diff.mean():.6f}"


@pytest.mark.parametrize("image", IMAGES, ids=lambda p: p.name)
def test_cropper_decode(image, dumps):
    d, _ = dumps[image.name]
    px, py_, m = (np.load(d / f"cropper_{n}.npy")[0] for n in ("proj_x", "proj_y", "margins"))
    want = cropper.decode(px, py_, m)
    got = np.array(json.loads((d / "result.json").read_text())["crop_normalised"])
    np.testing.assert_allclose(got, want, atol=1e-9)


@pytest.mark.parametrize("image", IMAGES, ids=lambda p: p.name)
def test_detector_postprocess(image, dumps):
    d, crop = dumps[image.name]
    res = json.loads((d / "result.json").read_text())
    lb = detector.Letterbox(tuple(crop), res["letterbox"]["tw"], res["letterbox"]["th"])
    h, s, o = (np.load(d / f"detector_{n}.npy")[0] for n in ("heatmap", "size", "offset"))
    w_in, h_in = detector.input_size(lb.tw, lb.th)
    assert h.shape == (4, h_in // 4, w_in // 4) and s.shape == o.shape == (2, h_in // 4, w_in // 4)
    boxes, scores, classes = detector.postprocess(h, s, o, lb)
    got = res["detections"]
    assert len(got) == len(boxes)
    assert [g["class"] for g in got] == classes.tolist()
    if got:
        np.testing.assert_allclose(np.array([g["box"] for g in got]), boxes, atol=1e-3)
        np.testing.assert_allclose(np.array([g["score"] for g in got]), scores, atol=1e-5)
