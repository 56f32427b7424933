"""`python -m train.zoom_set`: truths scaled with their images, shapes and metadata left alone."""

import json
from pathlib import Path

from PIL import Image

from train import zoom_set


def test_coordinates_scale_and_nothing_else():
    truth = {"image": {"width": 200, "height": 100},
             "canvas": {"box": [10, 20, 110, 80], "confidence": 1.0},
             "nodes": [{"id": "n0", "op": "Conv", "box": [0, 0, 40, 20], "title_box": [0, 0, 40, 8],
                        "quad": [[0, 0], [40, 0], [40, 20], [0, 20]],
                        "weights": [{"name": "W", "shape": [64, 3, 7, 7], "box": [2, 10, 38, 16]}]}],
             "tensors": [{"id": "t0", "shape": [1, 64], "box": [50, 50, 90, 60]}],
             "edges": [{"from": "n0", "to": "t0", "points": [[20, 20], [70, 50]]}],
             "scene": {"label_font_px": 11, "viewport": [200, 100]}}
    out = zoom_set.scale_truth(truth, 0.5)
    assert out["canvas"]["box"] == [5, 10, 55, 40] and out["canvas"]["confidence"] == 1.0
    node = out["nodes"][0]
    assert node["box"] == [0, 0, 20, 10] and node["title_box"] == [0, 0, 20, 4]
    assert node["quad"][2] == [20, 10]
    assert node["weights"][0]["shape"] == [64, 3, 7, 7] and node["weights"][0]["box"] == [1, 5, 19, 8]
    assert out["tensors"][0]["shape"] == [1, 64]
    assert out["edges"][0]["points"] == [[10, 10], [35, 25]]
    assert out["scene"] == truth["scene"]
    assert truth["nodes"][0]["box"] == [0, 0, 40, 20]  # the input is not modified


def test_each_scale_gets_a_folder_of_images_and_truths(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    Image.new("RGB", (200, 100), (255, 255, 255)).save(src / "000001.shot.png")
    Image.new("RGB", (200, 100), (200, 200, 200)).save(src / "000001.photo.jpg")
    for kind in ("shot", "photo"):
        (src / f"000001.{kind}.json").write_text(json.dumps(
            {"image": {"width": 200, "height": 100}, "nodes": [{"id": "n0", "box": [20, 10, 60, 30]}]}))
    (src / "000002.shot.png").write_bytes(b"")  # no truth: skipped
    assert zoom_set.main(["--src", str(src), "--out", str(tmp_path / "out"), "--scales", "1,0.25"]) == 0
    full, small = tmp_path / "out" / "s100", tmp_path / "out" / "s025"
    assert (full / "000001.shot.png").read_bytes() == (src / "000001.shot.png").read_bytes()
    assert sorted(p.name for p in small.iterdir()) == ["000001.photo.jpg", "000001.photo.json", "000001.shot.json",
                                                        "000001.shot.png"]
    with Image.open(small / "000001.photo.jpg") as im:
        assert im.size == (50, 25)
    truth = json.loads((small / "000001.shot.json").read_text())
    assert truth["image"] == {"width": 50, "height": 25}
    assert truth["nodes"][0]["box"] == [5, 2.5, 15, 7.5]
