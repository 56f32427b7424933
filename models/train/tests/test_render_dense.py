"""`python -m train.render_dense`: dense synthetic views for the scanner's rules (one view, rendered for real)."""

import json
from pathlib import Path

import pytest

from datagen.render import CHROMIUM
from train import render_dense

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium fonts-wqy-microhei)")


def test_the_training_seed_is_refused(tmp_path: Path):
    assert render_dense.main(["--out", str(tmp_path), "--seed", "1", "--graphs", "1"]) == 2
    assert not (tmp_path / "scenes").exists()


@needs_chromium
def test_a_dense_view_is_written_as_a_scene(tmp_path: Path):
    args = ["--out", str(tmp_path), "--graphs", "1", "--per-graph", "1", "--min-nodes", "60", "--max-nodes", "70"]
    assert render_dense.main(args) == 0
    scenes = tmp_path / "scenes"
    names = sorted(p.name for p in scenes.iterdir())
    assert names == [f"000000.{s}" for s in ("onnx.json", "photo.jpg", "photo.json", "shot.json", "shot.png")]
    summary = json.loads((scenes / "000000.onnx.json").read_text())
    assert 60 <= summary["nodes"] <= 70
    truth = json.loads((scenes / "000000.shot.json").read_text())
    assert truth["nodes"] and truth["scene"]["real_model"] == "g0000"
    assert json.loads((tmp_path / "dense_graphs.json").read_text()) == {"graphs": {"0": "g0000"}, "failures": []}
    # Complete scenes are kept: a second run renders nothing and writes the same files.
    before = {p.name: p.read_bytes() for p in scenes.iterdir()}
    assert render_dense.main(args) == 0
    assert {p.name: p.read_bytes() for p in scenes.iterdir()} == before
