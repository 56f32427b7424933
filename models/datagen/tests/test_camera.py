"""Camera simulator: geometry of the transformed truth, marker pixels following the homography, caps, determinism.

Runs on a small synthetic screenshot and truth (no browser needed)."""

from __future__ import annotations

import io

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw

from datagen import camera

W, H = 1200, 800
MARKER = (230, 20, 20)


def _box_quad(b):
    x0, y0, x1, y1 = b
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def synthetic_scene(marker_at=None):
    """A white 1200x800 'Netron' screenshot with 3 nodes, an input, an output, 2 labels and 4 edges, and its truth.
    `marker_at` (x, y): centre of a 7x7 pure-red square drawn on top (the only red in the screenshot)."""
    img = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(img)
    nodes = [
        {"id": "n0", "op": "Conv", "box": [500.0, 150.0, 680.0, 230.0], "title_box": [500.0, 150.0, 680.0, 176.0],
         "weights": [{"name": "W", "shape": [8, 3, 3, 3], "text": "8×3×3×3", "box": [506.0, 180.0, 640.0, 198.0]}]},
        {"id": "n1", "op": "Relu", "box": [550.0, 320.0, 630.0, 346.0], "title_box": [550.0, 320.0, 630.0, 346.0],
         "weights": []},
        {"id": "n2", "op": "Add", "box": [550.0, 480.0, 630.0, 506.0], "title_box": [550.0, 480.0, 630.0, 506.0],
         "weights": []},
    ]
    for n in nodes:
        d.rectangle(n["box"], fill=(235, 235, 235), outline=(60, 60, 60))
        d.rectangle(n["title_box"], fill=(51, 85, 136))
        n.update({"op_confidence": 1.0, "confidence": 1.0, "quad": _box_quad(n["box"]), "truncated": False})
    inputs = [{"id": "i0", "name": "x", "box": [560.0, 40.0, 620.0, 70.0], "confidence": 1.0}]
    outputs = [{"id": "o0", "name": "y", "box": [560.0, 640.0, 620.0, 670.0], "confidence": 1.0}]
    for p in inputs + outputs:
        d.rectangle(p["box"], fill=(238, 238, 238), outline=(0, 0, 0))
    tensors = [
        {"id": "t0", "text": "1×3×32×32", "shape": [1, 3, 32, 32], "box": [600.0, 100.0, 672.0, 114.0],
         "confidence": 1.0, "name": "x"},
        {"id": "t1", "text": "1×8×32×32", "shape": [1, 8, 32, 32], "box": [600.0, 270.0, 672.0, 284.0],
         "confidence": 1.0, "name": "c"},
    ]
    for t in tensors:
        d.rectangle(t["box"], fill=(120, 120, 120))
    edges = [
        {"from": "i0", "to": "n0", "tensor": "t0", "confidence": 1.0, "points": [[590.0, 70.0], [590.0, 150.0]]},
        {"from": "n0", "to": "n1", "tensor": "t1", "confidence": 1.0,
         "points": [[590.0, 230.0], [592.0, 275.0], [590.0, 320.0]]},
        {"from": "n1", "to": "n2", "tensor": None, "confidence": 1.0, "points": [[590.0, 346.0], [590.0, 480.0]]},
        {"from": "n2", "to": "o0", "tensor": None, "confidence": 1.0, "points": [[590.0, 506.0], [590.0, 640.0]]},
    ]
    for e in edges:
        d.line([tuple(p) for p in e["points"]], fill=(0, 0, 0), width=1)
    if marker_at is not None:
        mx, my = marker_at
        a = np.asarray(img).copy()
        a[my - 3:my + 4, mx - 3:mx + 4] = MARKER  # pixels mx-3..mx+3: centre at mx + 0.5 in pixel-edge coordinates
        img = Image.fromarray(a)
    truth = {
        "format": "netron-ocr.graph", "version": 1, "image": {"width": W, "height": H},
        "canvas": {"box": [500.0, 40.0, 680.0, 670.0], "confidence": 1.0}, "direction": "vertical",
        "nodes": nodes, "inputs": inputs, "outputs": outputs, "tensors": tensors, "edges": edges,
        "scene": {"theme": "light", "device_scale": 1.0, "kind": "screenshot"},
    }
    return img, truth


def _homography(t):
    return np.asarray(t["scene"]["camera"]["homography"], dtype=np.float64)


def _all_boxes(t):
    for k in ("nodes", "inputs", "outputs", "tensors"):
        for el in t[k]:
            yield el["box"]
            if el.get("title_box"):
                yield el["title_box"]
            for w in el.get("weights", []):
                if w.get("box"):
                    yield w["box"]
    yield t["canvas"]["box"]


SEEDS = [0, 1, 2, 3, 4, 5, 6, 7]


@pytest.fixture(scope="module")
def scene():
    return synthetic_scene()


@pytest.mark.parametrize("seed", SEEDS)
def test_boxes_inside_image_and_quads_follow_homography(scene, seed):
    img, truth = scene
    photo, t = camera.simulate(img, truth, np.random.default_rng(seed))
    pw, ph = photo.size
    assert (t["image"]["width"], t["image"]["height"]) == (pw, ph)
    assert t["scene"]["kind"] == "photo"
    for b in _all_boxes(t):
        assert 0 <= b[0] <= b[2] <= pw and 0 <= b[1] <= b[3] <= ph, b
    hm = _homography(t)
    for k in ("nodes", "inputs", "outputs", "tensors"):
        for src, el in zip(truth[k], t[k]):
            expected = camera.map_points(hm, _box_quad(src["box"]))
            assert np.allclose(np.asarray(el["quad"]), expected, atol=0.02), (k, el["id"])
            # The box encloses the quad (clipped to the image).
            q = np.asarray(el["quad"])
            x0, y0, x1, y1 = el["box"]
            clip = np.clip(q, [0, 0], [pw, ph])
            assert (clip[:, 0] >= x0 - 0.01).all() and (clip[:, 0] <= x1 + 0.01).all()
            assert (clip[:, 1] >= y0 - 0.01).all() and (clip[:, 1] <= y1 + 0.01).all()
            # Quads keep their orientation: clockwise from the top-left (positive area in image coordinates).
            area = 0.5 * sum(q[i, 0] * q[(i + 1) % 4, 1] - q[(i + 1) % 4, 0] * q[i, 1] for i in range(4))
            assert area > 0
        # The content stays in the photo: nothing becomes truncated that was not.
        for el in t[k]:
            assert not el.get("truncated")
    for src, e in zip(truth["edges"], t["edges"]):
        assert np.allclose(np.asarray(e["points"]), camera.map_points(hm, src["points"]), atol=0.02)
    # canvas.box is the union of the element boxes and edge points.
    cx0, cy0, cx1, cy1 = t["canvas"]["box"]
    for k in ("nodes", "inputs", "outputs", "tensors"):
        for el in t[k]:
            b = el["box"]
            assert cx0 <= b[0] and cy0 <= b[1] and b[2] <= cx1 and b[3] <= cy1
    wq = np.asarray(t["scene"]["window_quad"])
    assert np.allclose(wq, camera.map_points(hm, _box_quad([0, 0, W, H])), atol=0.02)


@pytest.mark.parametrize("seed,strength,tol", [(10, 0.0, 0.75), (11, 0.0, 0.75), (12, 0.5, 0.75), (13, 0.5, 0.75),
                                                (14, 1.0, 1.2), (16, 0.0, 0.75)])
def test_marker_pixel_lands_at_transformed_corner(seed, strength, tol):
    # A red marker at the top-left corner of node n1's box.
    corner = (550, 320)
    img, truth = synthetic_scene(marker_at=corner)
    photo, t = camera.simulate(img, truth, np.random.default_rng(seed), strength=strength)
    rgb = np.asarray(photo.convert("RGB")).astype(np.int32)
    # Only look inside the screenshot's area in the photo (the desktop around it has random colours).
    mask = np.zeros(rgb.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(np.asarray(t["scene"]["window_quad"])).astype(np.int32)], 1)
    redness = rgb[..., 0] - np.maximum(rgb[..., 1], rgb[..., 2])
    sel = (redness > 60) & (mask > 0)
    assert sel.sum() >= 4, "marker not found in the photo"
    ys, xs = np.nonzero(sel)
    wts = redness[ys, xs].astype(np.float64)
    found = np.array([(xs * wts).sum() / wts.sum() + 0.5, (ys * wts).sum() / wts.sum() + 0.5])  # pixel centres
    expected = camera.map_points(_homography(t), [[corner[0] + 0.5, corner[1] + 0.5]])[0]
    assert np.linalg.norm(found - expected) < tol, (found, expected)
    # The truth's node box corner is where the marker is, too (the marker centre is half a screenshot pixel in).
    n1 = next(n for n in t["nodes"] if n["id"] == "n1")
    half_px = 0.75 * camera._local_scale(_homography(t), corner)
    assert np.linalg.norm(np.asarray(n1["quad"][0]) - found) < tol + half_px


def test_deterministic_for_same_rng_state(scene):
    img, truth = scene
    p1, t1 = camera.simulate(img, truth, np.random.default_rng(42))
    p2, t2 = camera.simulate(img, truth, np.random.default_rng(42))
    assert p1.info["jpeg_bytes"] == p2.info["jpeg_bytes"]
    assert t1 == t2
    p3, _ = camera.simulate(img, truth, np.random.default_rng(43))
    assert p3.info["jpeg_bytes"] != p1.info["jpeg_bytes"]


def test_photo_is_the_encoded_jpeg_and_input_untouched(scene):
    img, truth = scene
    before = repr(truth)
    photo, _ = camera.simulate(img, truth, np.random.default_rng(5))
    assert repr(truth) == before
    decoded = Image.open(io.BytesIO(photo.info["jpeg_bytes"])).convert("RGB")
    assert photo.mode == "RGB" and photo.size == decoded.size
    assert np.array_equal(np.asarray(photo.convert("RGB")), np.asarray(decoded))


@pytest.mark.parametrize("seed", range(20, 32))
def test_blur_capped_by_text_height_and_sizes_plausible(scene, seed):
    img, truth = scene
    photo, t = camera.simulate(img, truth, np.random.default_rng(seed), strength=1.0)
    cam = t["scene"]["camera"]
    assert cam["defocus_sigma"] <= camera.BLUR_SIGMA_PER_TEXT_PX * cam["text_height_px"] + 1e-6
    assert cam["motion_length"] <= camera.MOTION_LEN_PER_TEXT_PX * cam["text_height_px"] + 1e-6
    assert 50 <= cam["jpeg_quality"] <= 95
    assert tuple(photo.size) in {sz for sz, _ in camera.PHOTO_SIZES} | {sz[::-1] for sz, _ in camera.PHOTO_SIZES}
    assert abs(cam["roll_deg"]) <= 15.0 + 1e-6
    # Label height in the photo matches the homography's local scale (12..14 px boxes here).
    hm = _homography(t)
    s = camera._local_scale(hm, (636, 277))
    assert 0.5 * 14 * s < cam["text_height_px"] < 1.5 * 14 * s


def test_strength_zero_is_mild(scene):
    img, truth = scene
    _, t = camera.simulate(img, truth, np.random.default_rng(3), strength=0.0)
    cam = t["scene"]["camera"]
    assert cam["strength"] == 0.0
    assert cam["defocus_sigma"] == 0.0 and cam["motion_length"] == 0.0 and cam["glare"] == 0.0
    assert cam["jpeg_quality"] >= 90


def test_size_mismatch_is_an_error(scene):
    img, truth = scene
    with pytest.raises(ValueError):
        camera.simulate(img.resize((W // 2, H // 2)), truth, np.random.default_rng(0))


def test_screenshot_truth_marks_kind_and_keeps_boxes(scene):
    _, truth = scene
    t = camera.screenshot_truth(truth)
    assert t["scene"]["kind"] == "screenshot"
    assert t["scene"]["window_quad"] == _box_quad([0.0, 0.0, float(W), float(H)])
    for k in ("nodes", "inputs", "outputs", "tensors"):
        for a, b in zip(truth[k], t[k]):
            assert a["box"] == b["box"]
            assert b["quad"] == _box_quad(a["box"])
    assert t["nodes"][0]["title_quad"] == _box_quad(truth["nodes"][0]["title_box"])
    assert t["nodes"][0]["weights"][0]["quad"] == _box_quad(truth["nodes"][0]["weights"][0]["box"])
    assert t["edges"] == truth["edges"]
    assert t["canvas"]["box"] == [500.0, 40.0, 680.0, 670.0]
