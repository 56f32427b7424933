"""Dataset builder end to end: 3 scenes through graphgen -> Netron in Chromium -> camera, derived sets, manifest,
schema validity, geometry, resumability and determinism across builds with different worker counts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = Path("/usr/bin/chromium")
SCHEMA = Path(__file__).resolve().parents[3] / "schema" / "graph-v1.schema.json"
SEED = 5
N = 3

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Chromium at /usr/bin/chromium (apt-get install chromium fonts-wqy-microhei)")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("needs Chromium at /usr/bin/chromium (apt-get install chromium fonts-wqy-microhei)")
    from datagen.build import build

    a = tmp_path_factory.mktemp("build_a")
    b = tmp_path_factory.mktemp("build_b")
    ma = build(SEED, N, a, workers=1, progress=False)
    mb = build(SEED, N, b, workers=2, progress=False)
    return a, b, ma, mb


def _truths(out: Path):
    for p in sorted((out / "scenes").glob("*.json")):
        if not p.name.endswith(".onnx.json"):
            yield p, json.loads(p.read_text("utf-8"))


def _boxes(t):
    yield "canvas", t["canvas"]["box"]
    for k in ("nodes", "inputs", "outputs", "tensors"):
        for el in t[k]:
            yield el["id"], el["box"]
            if el.get("title_box"):
                yield el["id"] + ".title", el["title_box"]
            for row in el.get("weights", []) + el.get("attributes", []):
                if row.get("box"):
                    yield el["id"] + ".row", row["box"]


@needs_chromium
def test_manifest_files_and_derived_sets(built):
    a, _, ma, _ = built
    assert ma["failures"] == []
    assert ma["scenes"]["complete"] == N and ma["scenes"]["built_this_run"] == N
    assert ma["seed"] == SEED and ma["generator_version"]
    assert ma["seconds"] > 0 and ma["scenes_per_second"] > 0
    for k in range(N):
        for suffix in ("onnx.json", "shot.png", "shot.json", "photo.jpg", "photo.json"):
            assert (a / "scenes" / f"{k:06d}.{suffix}").is_file()
    assert not list((a / "scenes").glob(".*.tmp"))

    from PIL import Image

    sizes = {}
    n_nodes = sum(len(t["nodes"]) for p, t in _truths(a) if p.name.endswith(".shot.json"))
    assert n_nodes > 0 and ma["counts"]["elements"]["nodes"] == n_nodes
    assert sum(ma["counts"]["per_op"].values()) == n_nodes
    cls = [json.loads(line) for line in (a / "classifier" / "index.jsonl").read_text("utf-8").splitlines()]
    ocr = [json.loads(line) for line in (a / "ocr" / "index.jsonl").read_text("utf-8").splitlines()]
    assert len(cls) == ma["counts"]["classifier_crops"] > 0
    assert len(ocr) == sum(ma["counts"]["ocr_crops"].values()) > 0
    assert {"shape", "name"} <= {e["kind"] for e in ocr}
    from datagen import vocab

    ops = vocab.load_vocab()
    for e in cls + ocr:
        path = a / e["image"]
        assert path.is_file()
        if path not in sizes:
            sizes[path] = Image.open(path).size
        w, h = sizes[path]
        x0, y0, x1, y1 = e["box"]
        assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h
    for e in cls:
        assert e["theme"] in ("light", "dark") and e["split"] == "train"
        assert e["op"] in ops
    for e in ocr:
        assert e["text"]


@needs_chromium
def test_boxes_inside_image(built):
    a = built[0]
    for p, t in _truths(a):
        w, h = t["image"]["width"], t["image"]["height"]
        for name, (x0, y0, x1, y1) in _boxes(t):
            assert 0 <= x0 <= x1 <= w and 0 <= y0 <= y1 <= h, (p.name, name)


def _dist_to_box(p, b):
    dx = max(b[0] - p[0], 0.0, p[0] - b[2])
    dy = max(b[1] - p[1], 0.0, p[1] - b[3])
    return (dx * dx + dy * dy) ** 0.5


@needs_chromium
def test_edge_endpoints_on_element_boxes(built):
    a = built[0]
    checked = 0
    for p, t in _truths(a):
        boxes = {el["id"]: el for k in ("nodes", "inputs", "outputs") for el in t[k]}
        for e in t["edges"]:
            src, dst = boxes[e["from"]], boxes[e["to"]]
            pts = e["points"]
            assert len(pts) >= 2
            if not src.get("truncated"):
                assert _dist_to_box(pts[0], src["box"]) <= 1.0, (p.name, e)
            if not dst.get("truncated"):
                assert _dist_to_box(pts[-1], dst["box"]) <= 1.0, (p.name, e)
            checked += 1
    assert checked > 0


@needs_chromium
def test_truth_validates_against_schema(built):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text("utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    for p, t in _truths(built[0]):
        errors = sorted(validator.iter_errors(t), key=lambda e: list(e.path))
        assert not errors, (p.name, [f"{list(e.path)}: {e.message}" for e in errors[:5]])
        assert t["scene"]["kind"] == ("photo" if ".photo." in p.name else "screenshot")
        # Cross-references the schema cannot express (docs/graph-json.md).
        ids = [e["id"] for k in ("nodes", "inputs", "outputs", "tensors") for e in t[k]]
        assert len(ids) == len(set(ids))
        sources = {e["id"] for e in t["nodes"] + t["inputs"]}
        targets = {e["id"] for e in t["nodes"] + t["outputs"]}
        tensors = {e["id"] for e in t["tensors"]}
        for e in t["edges"]:
            assert e["from"] in sources and e["to"] in targets and (e["tensor"] is None or e["tensor"] in tensors)


@needs_chromium
def test_photo_truth_is_shot_truth_through_homography(built):
    from datagen import camera

    a = built[0]
    for k in range(N):
        shot = json.loads((a / "scenes" / f"{k:06d}.shot.json").read_text("utf-8"))
        photo = json.loads((a / "scenes" / f"{k:06d}.photo.json").read_text("utf-8"))
        hm = np.asarray(photo["scene"]["camera"]["homography"])
        assert photo["scene"]["index"] == shot["scene"]["index"] == k
        assert photo["scene"]["seed"] == SEED
        for key in ("nodes", "inputs", "outputs", "tensors"):
            assert [e["id"] for e in shot[key]] == [e["id"] for e in photo[key]]
            for s, q in zip(shot[key], photo[key]):
                assert np.allclose(camera.map_points(hm, s["quad"]), q["quad"], atol=0.02)
        for s, q in zip(shot["edges"], photo["edges"]):
            assert (s["from"], s["to"], s["tensor"]) == (q["from"], q["to"], q["tensor"])


@needs_chromium
def test_rebuild_is_byte_identical(built):
    a, b, _, mb = built
    assert mb["failures"] == [] and mb["scenes"]["complete"] == N
    names = sorted(p.name for p in (a / "scenes").iterdir())
    assert names == sorted(p.name for p in (b / "scenes").iterdir())
    for name in names:  # JSON truth and summaries, and the PNG / JPEG images too
        assert (a / "scenes" / name).read_bytes() == (b / "scenes" / name).read_bytes(), name
    for sub in ("classifier/index.jsonl", "ocr/index.jsonl"):
        assert (a / sub).read_bytes() == (b / sub).read_bytes()


@needs_chromium
def test_resume_skips_complete_scenes(built):
    from datagen.build import build

    a = built[0]
    before = {p.name: p.stat().st_mtime_ns for p in (a / "scenes").iterdir()}
    m = build(SEED, N, a, workers=2, progress=False)
    assert m["scenes"]["built_this_run"] == 0 and m["scenes"]["skipped_existing"] == N
    assert {p.name: p.stat().st_mtime_ns for p in (a / "scenes").iterdir()} == before


@needs_chromium
def test_contact_sheet(built, tmp_path):
    from PIL import Image

    from datagen.__main__ import main

    out = tmp_path / "sheet.png"
    assert main(["sheet", "--data", str(built[0]), "--out", str(out), "--n", "4"]) == 0
    img = Image.open(out)
    assert img.size == (4 * 640, 480)
    # Not blank: the tiles hold the scenes.
    assert np.asarray(img.convert("L")).std() > 10


# ---------------------------------------------------------------------------------------------------------------
# Derived-set rules on a synthetic truth (no browser needed)


def _synthetic_truth(names: bool = False, kind: str = "photo") -> dict:
    quad = [[0, 0], [1, 0], [1, 1], [0, 1]]
    return {
        "image": {"width": 100, "height": 100},
        "scene": {"theme": "dark", "names": names, "kind": kind},
        "nodes": [
            {"id": "n0", "op": "Conv", "title_text": "Conv", "title_box": [10, 10, 50, 20], "title_quad": quad,
             "title_truncated": False, "box": [10, 10, 50, 40],
             "weights": [{"name": "W", "text": "8×3×3×3", "shape": [8, 3, 3, 3], "box": [12, 22, 48, 28],
                          "quad": quad, "truncated": False},
                         {"name": "B", "text": "0.5", "shape": None, "box": [12, 30, 30, 36],
                          "truncated": False},
                         {"name": "C", "text": "4", "shape": [4], "box": [12, 36, 30, 40], "truncated": True}]},
            {"id": "n1", "op": "Relu", "title_text": "Relu", "title_box": [10, 60, 50, 70],
             "title_truncated": True, "box": [10, 60, 50, 70], "weights": []},
            {"id": "n2", "op": "Add", "title_text": "add_1", "title_box": [60, 60, 90, 70], "box": [60, 60, 90, 70],
             "weights": []},
        ],
        "inputs": [{"id": "i0", "name": "x", "box": [20, 0, 40, 8], "truncated": False}],
        "outputs": [{"id": "o0", "name": "y", "box": [20, 92, 40, 100], "truncated": True}],
        "tensors": [{"id": "t0", "text": "1×3×8×8", "shape": [1, 3, 8, 8], "box": [40, 50, 60, 56]},
                    {"id": "t1", "text": "hidden", "shape": None, "box": [40, 80, 60, 86]}],
    }


def test_classifier_entries_keep_only_readable_operator_titles():
    from datagen.build import classifier_entries

    entries = classifier_entries(_synthetic_truth(), "scenes/000019.photo.jpg", 19)
    # n1's title is cut by the viewport, n2's title shows a node name, not its operator.
    assert [(e["op"], e["box"]) for e in entries] == [("Conv", [10, 10, 50, 20])]
    e = entries[0]
    assert e["theme"] == "dark" and e["split"] == "eval" and e["kind"] == "photo" and e["scene"] == 19
    assert e["quad"] == [[0, 0], [1, 0], [1, 1], [0, 1]]
    assert classifier_entries(_synthetic_truth(names=True), "x.png", 0) == []


def test_ocr_entries_kinds_and_texts():
    from datagen.build import ocr_entries

    entries = ocr_entries(_synthetic_truth(kind="screenshot"), "scenes/000003.shot.png", 3)
    got = sorted((e["kind"], e["text"]) for e in entries)
    assert got == [("name", "hidden"), ("name", "x"), ("shape", "1×3×8×8"), ("weight", "B = 0.5"),
                   ("weight", "W\u30088×3×3×3\u3009")]
    assert all(e["split"] == "train" and e["photo"] is False for e in entries)


def test_ocr_title_entries_read_titles_as_drawn():
    from datagen.build import ocr_title_entries

    entries = ocr_title_entries(_synthetic_truth(), "scenes/000019.photo.jpg", 19)
    # n1's title is cut by the viewport; n2 shows its node name.
    assert [(e["kind"], e["text"], e["box"]) for e in entries] == [
        ("title", "Conv", [10, 10, 50, 20]), ("title", "add_1", [60, 60, 90, 70])]
    assert entries[0]["quad"] == [[0, 0], [1, 0], [1, 1], [0, 1]] and "quad" not in entries[1]
    assert all(e["split"] == "eval" and e["photo"] is True and e["scene"] == 19 for e in entries)


def test_train_node_counts_cover_the_training_graphs_only_and_round_trip_through_the_vocabulary(tmp_path):
    from datagen import graphgen, vocab
    from datagen.build import GRAPH_SEED_STRIDE, train_node_counts

    counts = train_node_counts(SEED, 12)  # scenes 0..11: 9 and only 9 is held out
    assert set(counts) == set(vocab.load_vocab().ops)
    want = {op: 0 for op in counts}
    for k in [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11]:
        for node in graphgen.random_model(SEED * GRAPH_SEED_STRIDE + k).graph.node:
            want[node.op_type] += 1
    assert counts == want
    path = tmp_path / "vocab.json"
    path.write_text(vocab.VOCAB_PATH.read_text("utf-8"), "utf-8")
    vocab.write_train_nodes(counts, path)
    written = vocab.load_vocab(path)
    assert [o.train_nodes for o in written.operators] == [counts[o.op] for o in written.operators]
    assert written.ops == vocab.load_vocab().ops
    with pytest.raises(vocab.VocabError):
        vocab.write_train_nodes({"Conv": 1}, path)


def test_the_shipped_vocabulary_counts_every_operator_in_the_training_graphs():
    from datagen import vocab

    shipped = vocab.load_vocab()
    assert all(o.train_nodes is not None and o.train_nodes > 0 for o in shipped.operators)


@needs_chromium
def test_held_out_only_builds_the_held_out_scenes_alone(tmp_path):
    from datagen.build import build

    # Scenes 8 and 9 of 0..9: only 9 is held out; it is the same bytes as built among all scenes.
    c = tmp_path / "held"
    m = build(SEED, 10, c, workers=1, start=8, progress=False, held_out_only=True)
    assert m["failures"] == [] and m["scenes"]["built_this_run"] == 1
    names = sorted(p.name for p in (c / "scenes").iterdir())
    assert names and all(n.startswith("000009.") for n in names), names
    full = tmp_path / "full"
    build(SEED, 10, full, workers=1, start=9, progress=False)
    for name in names:
        assert (c / "scenes" / name).read_bytes() == (full / "scenes" / name).read_bytes(), name
