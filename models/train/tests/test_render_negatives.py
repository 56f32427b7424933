"""`python -m train.render_negatives`: screens without a Netron graph, with empty truths the trainers can read."""

from pathlib import Path

import numpy as np

from train import detector, render_negatives
from train.common import DiskCache, list_scene_images, load_truth


def test_scenes_have_empty_valid_truths_and_are_deterministic(tmp_path: Path):
    assert render_negatives.main(["--out", str(tmp_path / "a"), "--scenes", "2", "--seed", "5"]) == 0
    images = list_scene_images(tmp_path / "a")
    assert [(s.index, s.kind) for s in images] == [(0, "photo"), (0, "screenshot"), (1, "photo"), (1, "screenshot")]
    for s in images:
        t = load_truth(s.truth_path)
        assert all(t[k] == [] for k in ("nodes", "inputs", "outputs", "tensors", "edges"))
        w, h = t["image"]["width"], t["image"]["height"]
        assert t["canvas"]["box"] == [0.0, 0.0, float(w), float(h)]
        assert t["scene"]["negative"] is True
    render_negatives.make_negative_scene(5, 1, tmp_path / "b")
    shot = "scenes/000001.shot.png"
    assert (tmp_path / "a" / shot).read_bytes() == (tmp_path / "b" / shot).read_bytes()
    assert (tmp_path / "a" / "scenes/000000.shot.png").read_bytes() != (tmp_path / "b" / shot).read_bytes()


def test_a_negative_batch_has_no_positive_target(tmp_path: Path):
    render_negatives.main(["--out", str(tmp_path / "n"), "--scenes", "1"])
    data = detector.DetectorData(list_scene_images(tmp_path / "n"), DiskCache(tmp_path / "cache", "png"), 0.3)
    batch = detector.make_batch(data, np.array([0, 1]), np.random.default_rng(0), augment=True, window=128)
    assert float(batch["heat"].max()) == 0.0 and float(batch["mask"].sum()) == 0.0
    loss, parts = detector.detector_loss(detector.build_model(), batch)
    assert np.isfinite(loss.item()) and loss.item() > 0 and parts["size"] == 0.0
