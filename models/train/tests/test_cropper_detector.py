"""Smoke and unit tests for the cropper and detector training code (runs in well under a minute on 2 cores).

    cd models && python -m pytest -q train/tests/test_cropper_detector.py

A tiny synthetic dataset in the docs/dataset.md layout is written to a temp dir: coloured cards, pills and small
labels on a plain background, with schema-v1 truth JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw

from train import common, cropper, detector, eval_cropper, eval_detector
from train.export import export_model


# ----------------------------------------------------------------------------------------------------------------
# Synthetic dataset


def _scene(rng: np.random.Generator, w: int, h: int, kind: str, index: int) -> tuple[Image.Image, dict]:
    bg = (255, 255, 255) if rng.random() < 0.7 else (40, 40, 40)
    im = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(im)
    ox, oy = rng.uniform(0.1, 0.4) * w, rng.uniform(0.05, 0.3) * h
    els = {"nodes": [], "inputs": [], "outputs": [], "tensors": []}
    y = oy
    box = [ox, y, ox + 70, y + 16]
    d.rounded_rectangle(box, 6, fill=(238, 238, 238), outline=(120, 120, 120))
    els["inputs"].append({"id": "i0", "name": "x", "box": box, "confidence": 1.0})
    y += 30
    for k in range(int(rng.integers(2, 5))):
        nb = [ox - 10, y, ox + 80, y + 22]
        d.rectangle(nb, fill=(51, 85, 136))
        els["nodes"].append({"id": f"n{k}", "op": "Conv", "op_confidence": 1.0, "box": nb, "confidence": 1.0,
                             "weights": []})
        tb = [ox + 40, y + 26, ox + 75, y + 33]
        d.rectangle(tb, fill=(90, 90, 90))
        els["tensors"].append({"id": f"t{k}", "text": "1×3", "shape": [1, 3], "box": tb, "confidence": 1.0})
        y += 40
    ob = [ox, y, ox + 70, y + 16]
    d.rounded_rectangle(ob, 6, fill=(238, 238, 238), outline=(120, 120, 120))
    els["outputs"].append({"id": "o0", "name": "y", "box": ob, "confidence": 1.0})
    allb = np.array([e["box"] for v in els.values() for e in v])
    canvas = [float(allb[:, 0].min()), float(allb[:, 1].min()), float(allb[:, 2].max()), float(allb[:, 3].max())]
    truth = {"format": "netron-ocr.graph", "version": 1, "image": {"width": w, "height": h},
             "canvas": {"box": canvas, "confidence": 1.0}, **els, "edges": [],
             "scene": {"seed": 0, "index": index, "kind": kind}}
    return im, truth


def write_dataset(root: Path, scenes: int = 12) -> Path:
    sd = root / "scenes"
    sd.mkdir(parents=True)
    rng = np.random.default_rng(1)
    for k in range(scenes):
        for kind, tag, ext, size in (("screenshot", "shot", "png", (400, 300)), ("photo", "photo", "jpg", (480, 360))):
            im, truth = _scene(rng, *size, kind, k)
            im.save(sd / f"{k:06d}.{tag}.{ext}")
            (sd / f"{k:06d}.{tag}.json").write_text(json.dumps(truth))
    return root


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


# ----------------------------------------------------------------------------------------------------------------
# Dataset reading


def test_dataset_listing_and_split(dataset):
    images = common.list_scene_images(dataset)
    assert len(images) == 24
    train, held = common.split_scene_images(images)
    assert {s.index for s in held} == {9}
    assert all(s.index % 10 != 9 for s in train)
    assert images[0].key == "000000.photo" and images[1].key == "000000.shot"


def test_load_truth_rejects_other_versions(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"format": "netron-ocr.graph", "version": 2}))
    with pytest.raises(common.DatasetError):
        common.load_truth(p)


# ----------------------------------------------------------------------------------------------------------------
# Param budgets


def test_param_budgets():
    assert common.count_params(cropper.build_model()) <= cropper.PARAM_BUDGET
    assert common.count_params(detector.build_model()) <= detector.PARAM_BUDGET


# ----------------------------------------------------------------------------------------------------------------
# Cropper targets and decoding


def test_cropper_targets_decode_contain_truth():
    box = np.array([0.2031, 0.1, 0.77, 0.9], np.float32)
    tx, ty = cropper.projection_targets(box)
    # Perfect logits: +8 for on bins, -8 for off bins; no margins.
    dec = cropper.decode(np.where(tx > 0, 8.0, -8.0), np.where(ty > 0, 8.0, -8.0), np.zeros(4))
    assert dec[0] <= box[0] and dec[1] <= box[1] and dec[2] >= box[2] and dec[3] >= box[3]
    # Quantisation to 1/128 plus 4% padding is all the slack.
    assert dec[0] > box[0] - (1 / 128 + 0.05) and dec[2] < box[2] + (1 / 128 + 0.05)
    # Margins push edges out by a fraction of the box size.
    dec_m = cropper.decode(np.where(tx > 0, 8.0, -8.0), np.where(ty > 0, 8.0, -8.0), np.array([0.1, 0, 0, 0]))
    b = cropper.projection_box(np.where(tx > 0, 8.0, -8.0), np.where(ty > 0, 8.0, -8.0))
    w = b[2] - b[0]
    w_m = 1.1 * w  # after the left margin, before padding
    assert dec_m[0] == pytest.approx(b[0] - 0.1 * w - 0.04 * w_m)
    assert dec_m[2] == pytest.approx(b[2] + 0.04 * w_m)
    # No bin above threshold: whole axis.
    full = cropper.decode(np.full(128, -5.0), np.full(128, -5.0), np.zeros(4))
    assert list(full) == [0.0, 0.0, 1.0, 1.0]


def test_mirrored_decode_is_the_union_mapped_back():
    on = lambda lo, hi: np.where((np.arange(128) >= lo) & (np.arange(128) <= hi), 8.0, -8.0)
    plain = (on(40, 100), on(10, 60), np.zeros(4))
    # The mirrored reading sees the content's left edge on its right: bins 20..99 mirrored are 28..107.
    mirrored = (on(20, 99), on(12, 70), np.array([0.0, 0.0, 0.1, 0.0]))
    a = cropper.decode(*plain)
    b = cropper.decode(*mirrored)
    got = cropper.decode_mirrored(plain, mirrored)
    assert got[0] == pytest.approx(min(a[0], 1 - b[2])) and got[0] < a[0]
    assert got[2] == pytest.approx(max(a[2], 1 - b[0]))
    assert got[1] == pytest.approx(min(a[1], b[1])) and got[3] == pytest.approx(max(a[3], b[3])) and got[3] > a[3]
    # A symmetric reading mirrored changes nothing.
    sym = (on(30, 97), on(10, 60), np.zeros(4))
    np.testing.assert_allclose(cropper.decode_mirrored(sym, sym), cropper.decode(*sym), atol=1e-12)


def test_required_margins():
    pred = np.array([[0.3, 0.3, 0.7, 0.7]])
    true = np.array([[0.2, 0.35, 0.7, 0.8]])
    need = cropper.required_margins(pred, true)
    np.testing.assert_allclose(need[0], [0.25, 0.0, 0.0, 0.25], atol=1e-6)


def test_cropper_eval_counts_misses(dataset, cache_root):
    images = common.list_scene_images(dataset)[:4]
    data = cropper.CropperData(images, common.DiskCache(cache_root / "cropper"))

    def perfect(x):
        n = x.shape[0]
        out = {"proj_x": np.zeros((n, 128)), "proj_y": np.zeros((n, 128)), "margins": np.zeros((n, 4))}
        for k in range(n):
            tx, ty = cropper.projection_targets(data.boxes[k])
            out["proj_x"][k], out["proj_y"][k] = np.where(tx > 0, 5.0, -5.0), np.where(ty > 0, 5.0, -5.0)
        return out

    res = eval_cropper.evaluate(perfect, data, batch=4)
    s = eval_cropper.summary(res)
    assert s["all/containment"] == 1.0 and s["all/missed"] == 0
    assert 0.7 < s["all/mean_iou"] <= 1.0

    def clipped(x):
        out = perfect(x)
        out["proj_y"][:, 64:] = -5.0  # drop the lower half of the content
        return out

    s2 = eval_cropper.summary(eval_cropper.evaluate(clipped, data, batch=4))
    assert s2["all/missed"] > 0 and s2["all/containment"] < 1.0


# ----------------------------------------------------------------------------------------------------------------
# Detector targets, post-processing, metrics


@pytest.mark.parametrize("grid", [(128, 128), (112, 72), (8, 128)])
def test_detector_targets_postprocess_round_trip(grid):
    rows, cols = grid
    # Boxes inside a cols·4 × rows·4 input; the last one touches the bottom-right corner of the grid.
    boxes = np.array([[10.0, 4.0, 110.0, 28.0], [200.0, 8.0, 236.0, 14.0], [50.5, 12.0, 130.0, 30.0],
                      [cols * 4 - 30.0, rows * 4 - 10.0, cols * 4 - 2.0, rows * 4 - 2.0]])
    boxes = boxes[boxes[:, 2] <= cols * 4]
    classes = np.array([0, 1, 2, 3])[:len(boxes)]
    t = detector.build_targets(boxes, classes, grid=grid)
    assert t["heat"].shape == (4, rows, cols) and t["size"].shape == (2, rows, cols)
    assert t["mask"].sum() == len(boxes) and t["heat"].max() == 1.0
    heat = np.where(t["heat"] >= 1.0, 6.0, -6.0) + t["heat"]  # peaks only at centre cells
    got, scores, cls = detector.postprocess(heat, t["size"], t["offset"])
    assert len(got) == len(boxes)
    for b, c in zip(boxes, classes):
        k = int(np.flatnonzero(cls == c)[0])
        assert common.box_iou(got[k], b) > 0.99


def test_trimmed_and_square_grids_decode_alike():
    """The same outputs on the top-left of a 128×128 grid and on a trimmed 80×128 grid give the same detections
    (row-major indexing on the real width; the padding only adds cells below)."""
    rng = np.random.default_rng(0)
    rows, cols = 80, 128
    heat = rng.normal(-4, 2, (4, rows, cols)).astype(np.float32)
    size = rng.normal(3, 1, (2, rows, cols)).astype(np.float32)
    offset = rng.uniform(0, 1, (2, rows, cols)).astype(np.float32)
    sq = [np.full((c, 128, 128), v, np.float32) for c, v in ((4, -9.0), (2, 0.0), (2, 0.5))]
    for full, part in zip(sq, (heat, size, offset)):
        full[:, :rows] = part
    lb = detector.Letterbox((0.0, 0.0, 900.0, 500.0), *detector.letterbox_size(900.0, 500.0))
    assert detector.input_size(lb.tw, lb.th) == (cols * 4, rows * 4)
    a = detector.postprocess(heat, size, offset, lb)
    b = detector.postprocess(*sq, lb)
    assert len(a[0]) > 10
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_nms_is_classwise():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 10, 10], [0, 0, 10, 10.0]])
    keep = detector.nms(boxes, np.array([0.9, 0.8, 0.7]), np.array([0, 0, 1]), 0.5)
    assert list(keep) == [0, 2]


def test_cross_class_nms_drops_the_weaker_of_two_classes_in_one_place():
    # node, same-class neighbour, an output on the node, an output apart (as the Rust test)
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [1, 0, 11, 10], [6, 0, 16, 10.0]])
    scores, classes = np.array([0.9, 0.85, 0.8, 0.7]), np.array([0, 0, 3, 3])
    assert list(detector.cross_class_nms(boxes, scores, classes, 0.5)) == [0, 1, 3]
    assert list(detector.cross_class_nms(boxes, scores, classes, 1.5)) == [0, 1, 2, 3]


def test_letterbox_mapping():
    im = Image.fromarray(np.zeros((300, 1000, 3), np.uint8))
    arr, lb = detector.letterbox(im, (100.0, 50.0, 900.0, 250.0))
    assert (lb.tw, lb.th) == (512, 128) and arr.shape == (160, 512, 3)  # trimmed: 128 + 32
    src = np.array([[100.0, 50.0, 900.0, 250.0]])
    np.testing.assert_allclose(lb.to_source(lb.to_input(src)), src)
    np.testing.assert_allclose(lb.to_input(src), [[0, 0, 512, 128]])
    sq, lb_sq = detector.letterbox(im, (100.0, 50.0, 900.0, 250.0), square=True)
    assert lb_sq == lb and sq.shape == (512, 512, 3)
    x = detector.to_detector_tensor([sq + 200], [lb])
    assert float(x[0, :, 128:].abs().max()) == 0.0 and float(x[0, :, :128].abs().min()) > 0


def test_trimmed_input_is_the_top_left_of_the_square_one():
    rng = np.random.default_rng(0)
    im = Image.fromarray(rng.integers(0, 256, (170, 300, 3), dtype=np.uint8))
    crop = (10.5, 4.25, 290.0, 160.0)
    arr, lb = detector.letterbox(im, crop)
    sq, _ = detector.letterbox(im, crop, square=True)
    assert (lb.tw, lb.th) == (512, 285) and arr.shape == (320, 512, 3)
    x = detector.to_detector_tensor([arr + 1], [lb])
    xs = detector.to_detector_tensor([sq + 1], [lb])
    assert x.shape == (1, 3, 320, 512)
    assert torch.equal(x, xs[:, :, :320])
    assert float(xs[0, :, 285:].abs().max()) == 0.0 and float(x[0, :, :285].abs().min()) > 0


def test_input_size():
    # content + 32, rounded up to a multiple of 32, at most 512
    assert [detector.input_size(512, t) for t in (1, 31, 32, 33, 288, 479, 480, 511, 512)] == [
        (512, 64), (512, 64), (512, 64), (512, 96), (512, 320), (512, 512), (512, 512), (512, 512), (512, 512)]
    assert detector.input_size(341, 512) == (384, 512)
    assert detector.input_size(341, 20, square=True) == (512, 512)


def test_shape_batches():
    shapes = [(1,), (1,), (2,), (2,), (2,), (1,), (3,)]
    runs = eval_detector.shape_batches(shapes, batch=2)
    assert [list(r) for r in runs] == [[0, 1], [2, 3], [4], [5], [6]]
    assert eval_detector.shape_batches([], 4) == []


@pytest.mark.parametrize("crop", [(10.0, 20.0, 1010.0, 1020.0), (5.0, 0.0, 205.0, 2000.0), (0.0, 3.0, 2500.0, 403.0),
                                  (0.0, 0.0, 100.0, 20000.0), (0.0, 0.0, 300.0, 600.0)])
def test_tiles_cover_crop_and_cores_partition_it(crop):
    tiles = detector.tiles_for_crop(crop)
    vertical = crop[3] - crop[1] >= crop[2] - crop[0]
    lo, hi = (1, 3) if vertical else (0, 2)
    assert 1 <= len(tiles) <= detector.TILE_MAX
    assert tiles[0].box[lo] == pytest.approx(crop[lo]) and tiles[-1].box[hi] == pytest.approx(crop[hi])
    assert tiles[0].core[lo] == pytest.approx(crop[lo]) and tiles[-1].core[hi] == pytest.approx(crop[hi])
    for a, b in zip(tiles, tiles[1:]):
        assert a.core[hi] == pytest.approx(b.core[lo])  # cores are contiguous
        assert b.box[lo] < a.box[hi]  # tiles overlap
    for t in tiles:
        assert t.box[lo] <= t.core[lo] and t.core[hi] <= t.box[hi]
        across = 0 if vertical else 1  # the short axis is never split
        assert t.box[across] == pytest.approx(crop[across]) and t.box[across + 2] == pytest.approx(crop[across + 2])
    short = min(crop[2] - crop[0], crop[3] - crop[1])
    long_ = max(crop[2] - crop[0], crop[3] - crop[1])
    if long_ <= max(detector.TILE_MIN, detector.TILE_ASPECT * short):
        assert len(tiles) == 1


def test_merge_tiles_reports_an_element_once():
    crop = (0.0, 0.0, 200.0, 2000.0)
    tiles = detector.tiles_for_crop(crop)
    assert len(tiles) > 1
    seam = tiles[0].core[3]
    element = np.array([[50.0, seam - 10, 150.0, seam + 10]])  # straddles the seam: in both tiles' boxes
    per_tile = [(element.copy(), np.array([0.9]), np.array([0])) if t.box[1] <= seam <= t.box[3]
                else (np.zeros((0, 4)), np.zeros(0), np.zeros(0, np.int64)) for t in tiles]
    boxes, scores, classes = detector.merge_tiles(per_tile, tiles, crop)
    assert len(boxes) == 1


def test_disk_cache_formats(tmp_path):
    src = tmp_path / "src.png"
    src.write_bytes(b"x")
    img = (np.arange(12 * 10 * 3) % 251).astype(np.uint8).reshape(12, 10, 3)
    for fmt in ("npy", "png"):
        c = common.DiskCache(tmp_path / fmt, fmt)
        got = c.get("k", src, lambda: (img, {"a": 1}))
        np.testing.assert_array_equal(np.asarray(got), img)
        assert c.meta("k") == {"a": 1}
        # A second call reads the cache (build is not called).
        np.testing.assert_array_equal(np.asarray(c.get("k", src, lambda: 1 / 0)), img)
    jpg = common.DiskCache(tmp_path / "jpg", "jpg").get("k", src, lambda: img)
    assert jpg.shape == img.shape


def test_detector_metrics():
    p2g, g2p = eval_detector.match(np.array([[0, 0, 10, 10], [50, 50, 60, 60.0]]), np.array([0.9, 0.8]),
                                   np.array([[1, 1, 10, 10.0]]))
    assert list(p2g) == [0, -1] and list(g2p) == [0]
    res = [{"key": "a", "kind": "photo", "per_class": {n: {"tp": 1, "pred": 2, "gt": 1} for n in detector.CLASSES},
            "tiny": {"tp": 0, "pred": 0, "gt": 1}}]
    s = eval_detector.summary(res)
    assert s["photo/node/precision"] == 0.5 and s["photo/node/recall"] == 1.0
    assert s["photo/mean_f1"] == pytest.approx(2 / 3)
    assert s["photo/tiny_f1"] == 0.0


# ----------------------------------------------------------------------------------------------------------------
# One training step, export, onnxruntime forward, warm start


def _randomize_batchnorm(model, seed=0):
    """Non-trivial BatchNorm statistics, so folding them into Conv on export is really exercised."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.2)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                m.weight.copy_(torch.rand(n, generator=g) + 0.5)
                m.bias.copy_(torch.randn(n, generator=g) * 0.2)


def _train_step(model, batch, loss_fn):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    loss, parts = loss_fn(model, batch)
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.isfinite(loss)
    return float(loss.detach())


def test_cropper_train_step_export_and_warm_start(dataset, cache_root, tmp_path):
    torch.manual_seed(0)
    images, _ = common.split_scene_images(common.list_scene_images(dataset))
    data = cropper.CropperData(images[:2], common.DiskCache(cache_root / "cropper"))
    rng = np.random.default_rng(0)
    batch = cropper.make_batch(data, np.array([0, 1]), rng, augment=True)
    assert batch["image"].shape == (2, 3, 512, 512) and batch["tx"].shape == (2, 128)
    model = cropper.build_model()
    _train_step(model, batch, cropper.cropper_loss)
    _randomize_batchnorm(model)
    out = tmp_path / "cropper.onnx"
    rep = export_model("cropper", model, out)
    assert rep["opset"] == 17 and max(rep["ort_vs_torch"].values()) <= 1e-4

    ort = common.OrtRunner(out)
    x = batch["image"][:1].numpy()
    ref = ort(x)
    assert ref["proj_x"].shape == (1, 128) and ref["margins"].shape == (1, 4)
    fresh = cropper.build_model()
    n = common.warm_start_from_onnx(fresh, out, torch.zeros(1, 3, 64, 64))
    assert n > 10
    got = common.TorchRunner(fresh, cropper.OUTPUT_NAMES)(x)
    for k in cropper.OUTPUT_NAMES:
        assert np.abs(got[k] - ref[k]).max() <= 1e-4, k


def test_detector_train_step_export_and_warm_start(dataset, cache_root, tmp_path):
    torch.manual_seed(0)
    images, _ = common.split_scene_images(common.list_scene_images(dataset))
    data = detector.DetectorData(images[:2], common.DiskCache(cache_root / "detector"))
    rng = np.random.default_rng(0)
    batch = detector.make_batch(data, np.array([0, 1]), rng, augment=True)
    assert batch["heat"].shape == (2, 4, 128, 128) and batch["mask"].sum() > 0
    model = detector.build_model()
    _train_step(model, batch, detector.detector_loss)
    _randomize_batchnorm(model)
    out = tmp_path / "detector.onnx"
    rep = export_model("detector", model, out)
    assert rep["opset"] == 17 and max(rep["ort_vs_torch"].values()) <= 1e-4

    ort = common.OrtRunner(out)
    x = batch["image"][:1].numpy()
    ref = ort(x)
    assert ref["heatmap"].shape == (1, 4, 128, 128) and ref["size"].shape == (1, 2, 128, 128)
    # Height and width are dynamic: a trimmed input runs, with outputs at H/4 × W/4.
    trimmed = ort(np.ascontiguousarray(x[:, :, :224, :352]))
    assert trimmed["heatmap"].shape == (1, 4, 56, 88) and trimmed["offset"].shape == (1, 2, 56, 88)
    fresh = detector.build_model()
    common.warm_start_from_onnx(fresh, out, torch.zeros(1, 3, 64, 64))
    got = common.TorchRunner(fresh, detector.OUTPUT_NAMES)(x)
    for k in detector.OUTPUT_NAMES:
        assert np.abs(got[k] - ref[k]).max() <= 1e-4, k
    # A mismatched model is refused.
    with pytest.raises(common.WarmStartError):
        common.warm_start_from_onnx(cropper.build_model(), out, torch.zeros(1, 3, 64, 64))


def test_window_batches_are_slices_of_the_whole_input(dataset, cache_root):
    images, _ = common.split_scene_images(common.list_scene_images(dataset))
    data = detector.DetectorData(images[:2], common.DiskCache(cache_root / "detector"))
    idx = np.array([0, 1])
    whole = detector.make_batch(data, idx, np.random.default_rng(5), augment=False)
    part = detector.make_batch(data, idx, np.random.default_rng(5), augment=False, window=128)
    assert part["image"].shape == (2, 3, 128, 128) and part["heat"].shape == (2, 4, 32, 32)
    for n in range(2):
        # Find the window's offset in the whole input: the image and every target must be the same slice of it.
        hits = [(j, i) for j in range(0, 512 - 127, 4) for i in range(0, 512 - 127, 4)
                if torch.equal(whole["image"][n, :, j:j + 128, i:i + 128], part["image"][n])]
        assert hits, "the window is not a stride-aligned slice of the whole input"
        j, i = hits[0]
        for k in ("heat", "size", "offset", "mask"):
            assert torch.equal(whole[k][n, ..., j // 4:j // 4 + 32, i // 4:i // 4 + 32], part[k][n]), k


def test_context_crops_reach_beyond_the_jitter(dataset, cache_root):
    images, _ = common.split_scene_images(common.list_scene_images(dataset))
    data = detector.DetectorData(images[:2], common.DiskCache(cache_root / "detector-ctx"), context_prob=1.0)
    rng = np.random.default_rng(3)
    beyond = 0
    for n in range(2):
        t = data.truths[n]
        _, meta = data.cached(n)
        assert list(meta["region"]) == pytest.approx(list(detector.padded_canvas(t, detector.CONTEXT_MAX)))
        jx0, jy0, jx1, jy1 = detector.padded_canvas(t, detector.JITTER_MAX)
        for _ in range(12):
            img, lb, boxes, classes = data.sample(n, rng, augment=True)
            x0, y0, x1, y1 = lb.crop
            beyond += x0 < jx0 - 1 or y0 < jy0 - 1 or x1 > jx1 + 1 or y1 > jy1 + 1
            # Targets stay inside the letterboxed content.
            if len(boxes):
                assert boxes[:, 0].min() >= -1 and boxes[:, 2].max() <= lb.tw + 1
    assert beyond > 0, "no context crop went beyond the ordinary jitter"


def test_init_starts_a_new_run_from_a_checkpoint(dataset, cache_root, tmp_path):
    first = tmp_path / "a"
    args = ["--data", str(dataset), "--out", str(first), "--epochs", "1", "--batch", "2", "--max-steps", "1",
            "--cache", str(cache_root / "detector"), "--eval-limit", "1", "--window", "128"]
    assert detector.main(args) == 0
    second = tmp_path / "b"
    args[args.index("--out") + 1] = str(second)
    assert detector.main(args + ["--init", str(first / "last.pt"), "--max-steps", "0"]) == 0
    a = torch.load(first / "last.pt", weights_only=False)
    b = torch.load(second / "last.pt", weights_only=False)
    assert b["step"] == 0
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k


# ----------------------------------------------------------------------------------------------------------------
# The training command: two steps, evaluation, checkpoints, resume


def test_cropper_command_runs_and_resumes(dataset, cache_root, tmp_path):
    ckpt = tmp_path / "ck"
    args = ["--data", str(dataset), "--out", str(ckpt), "--epochs", "1", "--batch", "2", "--max-steps", "1",
            "--cache", str(cache_root / "cropper"), "--eval-limit", "2"]
    assert cropper.main(args) == 0
    state = torch.load(ckpt / "last.pt", weights_only=False)
    assert state["step"] == 1 and (ckpt / "best.pt").is_file() and (ckpt / "log.jsonl").is_file()
    args[args.index("--max-steps") + 1] = "2"
    assert cropper.main(args) == 0
    assert torch.load(ckpt / "last.pt", weights_only=False)["step"] == 2


def test_detector_command_runs(dataset, cache_root, tmp_path):
    ckpt = tmp_path / "ck"
    args = ["--data", str(dataset), "--out", str(ckpt), "--epochs", "1", "--batch", "2", "--max-steps", "1",
            "--cache", str(cache_root / "detector"), "--eval-limit", "1"]
    assert detector.main(args) == 0
    log = [json.loads(line) for line in (ckpt / "log.jsonl").read_text().splitlines()]
    assert "photo/mean_f1" in log[-1]["metrics"] or "screenshot/mean_f1" in log[-1]["metrics"]


def _oracle(data: eval_detector.EvalSet):
    """A `predict` that returns perfect detector outputs built from each tile's ground truth on that tile's grid
    (same order as `eval_detector.detect` feeds tiles)."""
    queue = []
    for it in data.items:
        for tile, lb, img in zip(it.tiles, it.lbs, it.images):
            boxes, classes = [], []
            for box, cls in zip(it.gt_boxes, it.gt_classes):
                v = [max(box[0], tile.box[0]), max(box[1], tile.box[1]), min(box[2], tile.box[2]),
                     min(box[3], tile.box[3])]
                if v[2] > v[0] and v[3] > v[1] and (v[2] - v[0]) * (v[3] - v[1]) >= 0.35 * (
                        (box[2] - box[0]) * (box[3] - box[1])):
                    boxes.append(v)
                    classes.append(cls)
            t = detector.build_targets(lb.to_input(np.array(boxes).reshape(-1, 4)), np.array(classes, np.int64),
                                       grid=(img.shape[0] // detector.STRIDE, img.shape[1] // detector.STRIDE))
            queue.append({"heatmap": np.where(t["heat"] >= 1.0, 6.0, -6.0) + t["heat"], "size": t["size"],
                          "offset": t["offset"]})

    def predict(x):
        n = x.shape[0]
        out = queue[:n]
        del queue[:n]
        assert all(o["heatmap"].shape[1:] == (x.shape[2] // 4, x.shape[3] // 4) for o in out)
        return {k: np.stack([o[k] for o in out]) for k in ("heatmap", "size", "offset")}

    return predict


@pytest.mark.parametrize("square", [False, True])
def test_detector_eval_with_oracle_outputs_is_perfect(dataset, square):
    images = common.list_scene_images(dataset)[:6]
    data = eval_detector.EvalSet.from_images(images, square=square)
    shapes = {img.shape for it in data.items for img in it.images}
    assert (shapes == {(512, 512, 3)}) if square else all(h <= 512 and w <= 512 and h % 32 == 0 and w % 32 == 0
                                                          for h, w, _ in shapes)
    s = eval_detector.summary(eval_detector.evaluate(_oracle(data), data, batch=4))
    assert s["all/mean_f1"] > 0.95, s


def test_margin_quantile_outside_0_1_is_refused(tmp_path):
    for q in ("0", "1", "1.5"):
        assert cropper.main(["--data", str(tmp_path), "--out", str(tmp_path / "ckpt"), "--margin-quantile", q]) == 2
    assert not (tmp_path / "ckpt").exists()


def test_higher_margin_quantile_punishes_undershoot_more():
    torch.manual_seed(0)
    model = cropper.build_model().eval()
    batch = {"image": torch.zeros(2, 3, cropper.SIZE, cropper.SIZE), "tx": torch.ones(2, 128), "ty": torch.ones(2, 128),
             "box": np.array([[-0.5, -0.5, 1.5, 1.5]] * 2)}  # content beyond the image: every margin undershoots
    _, low = cropper.cropper_loss(model, batch, under_weight=1.0)
    _, high = cropper.cropper_loss(model, batch, under_weight=99.0)
    assert high["margin"] > 50 * low["margin"] > 0
