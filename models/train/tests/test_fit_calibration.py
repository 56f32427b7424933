"""`python -m train.fit_calibration`: matching, the Platt fit with height, and the report (synthetic inputs)."""

import json
from pathlib import Path

import numpy as np

from train import fit_calibration as fc


def test_matching_takes_the_best_unmatched_box_in_confidence_order():
    truth = [{"box": [0, 0, 10, 10], "id": "a"}, {"box": [20, 0, 30, 10], "id": "b"}]
    pred = [{"box": [1, 0, 11, 10], "confidence": 0.2, "id": "p0"},
            {"box": [0, 0, 10, 10], "confidence": 0.9, "id": "p1"},
            {"box": [40, 0, 50, 10], "confidence": 0.8, "id": "p2"}]
    pairs = fc.match(pred, truth, 100, 100)
    # p1 (more confident) takes a; p0 then finds only b, at IoU 0, so it stays unmatched; p2 overlaps nothing.
    assert [(p["id"], t["id"]) for p, t in pairs] == [("p1", "a")]


def test_the_fit_recovers_a_known_calibration():
    rng = np.random.default_rng(0)
    n = 40_000
    p = rng.uniform(0.05, 0.999, n)
    h = rng.uniform(5, 40, n)
    true = (0.7, 1.8, 1.2, 0.4)
    y = (rng.uniform(size=n) < fc.apply(true, p, h)).astype(float)
    got = fc.fit(p, y, h)
    assert np.allclose(got, true, atol=0.12), got
    # Without the interaction (fits before session 39) the same form applies with d = 0.
    assert np.allclose(fc.apply((0.7, 1.8, 1.2), p, h), fc.apply((0.7, 1.8, 1.2, 0.0), p, h))
    # Calibrated, the confidences match the outcomes; the raw ones do not.
    assert fc.ece(fc.apply(got, p, h), y) < 0.02 < fc.ece(p, y)


def test_the_report_fits_each_kind_and_checks_it(tmp_path: Path):
    rng = np.random.default_rng(1)
    truth_dir, graphs = tmp_path / "truth", tmp_path / "graphs"
    truth_dir.mkdir()
    graphs.mkdir()
    for k in range(30):
        nodes_t, nodes_p, tensors_t, tensors_p = [], [], [], []
        for j in range(6):
            box = [10.0, 40.0 * j, 90.0, 40.0 * j + 30]
            title_h = float(rng.uniform(6, 30))
            right = rng.uniform() < 0.5 + title_h / 60
            nodes_t.append({"id": f"n{j}", "op": "Conv", "box": box})
            nodes_p.append({"id": f"n{j}", "op": "Conv" if right else "Relu", "op_confidence": 0.97,
                            "box": box, "confidence": 0.99,
                            "title_box": [10.0, box[1], 90.0, box[1] + title_h]})
            lbox = [100.0, 40.0 * j, 150.0, 40.0 * j + title_h / 2]
            ok = rng.uniform() < 0.8
            tensors_t.append({"id": f"t{j}", "text": "1×3", "shape": [1, 3], "box": lbox})
            tensors_p.append({"id": f"t{j}", "text": "1×3" if ok else "1×8", "shape": [1, 3] if ok else [1, 8],
                              "box": lbox, "confidence": 0.3})
        image = {"width": 400, "height": 400}
        (truth_dir / f"{k:06d}.photo.json").write_text(json.dumps(
            {"image": image, "nodes": nodes_t, "tensors": tensors_t, "inputs": [], "outputs": []}))
        (graphs / f"{k:06d}.photo.jpg.pred.json").write_text(json.dumps(
            {"image": image, "nodes": nodes_p, "tensors": tensors_p, "inputs": [], "outputs": []}))
    out = tmp_path / "cal.json"
    assert fc.main(["--fit", str(graphs), str(truth_dir), "--check", str(graphs), str(truth_dir),
                    "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert set(result) == {"op", "label"}  # no ports in these images
    op = result["op"]
    assert op["params"][1] > 0  # taller titles, more often right
    assert op["fit"]["all"]["ece_after"] < op["fit"]["all"]["ece_before"]
    assert result["label"]["fit"]["all"]["confidence_after"] > 0.6  # labels at 0.3 are right 80% of the time
    assert op["checks"]["graphs"]["all"]["n"] == 180
