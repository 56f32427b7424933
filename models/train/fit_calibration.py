"""Fits the scanner's confidence calibration (`core/src/calibrate.rs`, `CalibrationParams`) and reports it.

    python -m train.fit_calibration --fit GRAPHS TRUTH [--fit GRAPHS TRUTH ...] [--check GRAPHS TRUTH ...] [--json OUT]

`GRAPHS` holds the predictions of `netron-ocr eval --images TRUTH --truth TRUTH --no-calibration --graphs GRAPHS`
(`<image name>.pred.json`, the models' confidences as they are), `TRUTH` the schema-v1 truth files
(`X.photo.json`, `X.shot.json`); several `--fit` pairs are fitted as one set. Predictions are matched to the truth as `netron-ocr eval` does (per class, in
descending confidence, each takes the unmatched truth box of highest IoU, at least 0.5, boxes clipped to the
image). For each kind of confidence, one row per matched prediction:

- **op**: nodes with an `op`; right when it is the truth's op; height of the node's `title_box`;
- **label**: tensor labels; right when the shape (or, in names mode, the text) is exact; height of the box;
- **port**: inputs and outputs; right when the name is exact; height of the box.

Each kind gets a Platt fit with the height as a second feature and an interaction,
`logit(p') = (a + d ln(h / 16)) logit(p) + b ln(h / 16) + c` (maximum likelihood, Newton's method; parameters
printed and written in the order a, b, c, d; `HeightCalibration` in the core, whose factor of `logit(p)` is floored
at 0, as `apply` here: the fit ignores the floor, which acts only on titles under 2 px), printed with the expected calibration error (10 equal bins) and the log
loss before and after, on the fit set and on each check set, per image kind and per height band.
Never fit on the real-architecture renders: they are for evaluation only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from train import eval_detector
from train.common import clip_box
from train.eval_detector import IOU_MATCH

REFERENCE_HEIGHT = 16.0  # calibrate.rs REFERENCE_HEIGHT
KINDS = ("op", "label", "port")
BINS = 10
HEIGHT_BANDS = ((0, 10), (10, 14), (14, 18), (18, 24), (24, math.inf))


def match(pred: list[dict], truth: list[dict], w: float, h: float) -> list[tuple[dict, dict]]:
    """Greedy matching of one class (`eval_detector.match`, the rule of `netron-ocr eval`) on the boxes clipped to
    the image: the matched (prediction, truth) pairs."""
    def boxes(elements):
        return np.array([clip_box(e["box"], w, h) for e in elements], dtype=np.float64).reshape(-1, 4)

    scores = np.array([e["confidence"] for e in pred], dtype=np.float64)
    p2g, _ = eval_detector.match(boxes(pred), scores, boxes(truth), IOU_MATCH)
    return [(pred[p], truth[g]) for p in np.argsort(-scores, kind="stable") if (g := int(p2g[p])) >= 0]


def rows_of(pred: dict, truth: dict, image_kind: str) -> dict[str, list[tuple[float, bool, float, str]]]:
    """`{kind: [(confidence, right, height, image_kind)]}` of one image."""
    w, h = truth["image"]["width"], truth["image"]["height"]
    out: dict[str, list] = {k: [] for k in KINDS}
    for p, t in match(pred["nodes"], truth["nodes"], w, h):
        if p.get("op") is None:
            continue
        title = p.get("title_box") or p["box"]
        out["op"].append((p["op_confidence"], p["op"] == t.get("op"), title[3] - title[1], image_kind))
    for p, t in match(pred["tensors"], truth["tensors"], w, h):
        if t.get("shape") is not None:
            right = p.get("shape") == t["shape"]
        else:
            right = p.get("shape") is None and p["text"].strip() == t["text"].strip()
        out["label"].append((p["confidence"], right, p["box"][3] - p["box"][1], image_kind))
    for cls in ("inputs", "outputs"):
        for p, t in match(pred[cls], truth[cls], w, h):
            out["port"].append((p["confidence"], p["name"].strip() == t["name"].strip(), p["box"][3] - p["box"][1],
                                image_kind))
    return out


def collect(graphs: Path, truth_dir: Path) -> dict[str, list]:
    rows: dict[str, list] = {k: [] for k in KINDS}
    files = sorted(Path(graphs).glob("*.pred.json"))
    if not files:
        raise SystemExit(f"no *.pred.json in {graphs} (netron-ocr eval --no-calibration --graphs {graphs})")
    for gp in files:
        image = gp.name[: -len(".pred.json")]  # 001009.photo.jpg
        parts = image.split(".")
        key, image_kind = parts[0], parts[1]
        truth = json.loads((Path(truth_dir) / f"{key}.{image_kind}.json").read_text())
        for k, v in rows_of(json.loads(gp.read_text()), truth, image_kind).items():
            rows[k].extend(v)
    return rows


def arrays(rows):
    p = np.clip(np.array([r[0] for r in rows], dtype=np.float64), 1e-6, 1 - 1e-6)
    y = np.array([r[1] for r in rows], dtype=np.float64)
    h = np.maximum(np.array([r[2] for r in rows], dtype=np.float64), 1.0)
    photo = np.array([r[3] == "photo" for r in rows])
    return p, y, h, photo


def features(p, h):
    lp, lh = np.log(p / (1 - p)), np.log(h / REFERENCE_HEIGHT)
    return np.stack([lp, lh, np.ones_like(p), lp * lh], axis=1)


def apply(params, p, h):
    """Calibrated confidences; `params` (a, b, c, d), or (a, b, c) with d = 0 (fits before session 39)."""
    a, b, c, d = (list(params) + [0.0])[:4]
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    lh = np.log(np.maximum(np.asarray(h, dtype=np.float64), 1.0) / REFERENCE_HEIGHT)
    z = np.maximum(a + d * lh, 0.0) * np.log(p / (1 - p)) + b * lh + c
    return 1 / (1 + np.exp(-np.clip(z, -50, 50)))


def _loss(x, y, theta, ridge):
    z = x @ theta
    # log(1 + e^z) - y z, stable for large |z|
    return float(np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * ridge * theta @ theta)


def fit(p, y, h, iters: int = 100, ridge: float = 1e-6) -> list[float]:
    """Maximum-likelihood `(a, b, c, d)` of `logit(p') = (a + d ln(h / 16)) logit(p) + b ln(h / 16) + c`: Newton's
    method with step halving, from the identity."""
    x = features(p, h)
    n = len(y)
    theta = np.array([1.0, 0.0, 0.0, 0.0])
    loss = _loss(x, y, theta, ridge)
    for _ in range(iters):
        q = 1 / (1 + np.exp(-np.clip(x @ theta, -50, 50)))
        grad = x.T @ (q - y) / n + ridge * theta
        hess = (x * (q * (1 - q))[:, None]).T @ x / n + ridge * np.eye(len(theta))
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-6:
            cand = theta - t * step
            cand_loss = _loss(x, y, cand, ridge)
            if cand_loss <= loss:
                break
            t /= 2
        else:
            break
        done = loss - cand_loss < 1e-12
        theta, loss = cand, cand_loss
        if done:
            break
    return theta.tolist()


def ece(q, y, bins: int = BINS) -> float:
    """Expected calibration error over equal-width bins (`eval::Reliability::ece` in the core)."""
    if len(q) == 0:
        return 0.0
    k = np.minimum((q * bins).astype(int), bins - 1)
    return float(sum(abs(y[k == i].sum() - q[k == i].sum()) for i in range(bins)) / len(q))


def log_loss(q, y) -> float:
    q = np.clip(q, 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q))) if len(q) else 0.0


def report(name: str, rows, params) -> dict:
    p, y, h, photo = arrays(rows)
    q = apply(params, p, h)
    out = {}
    for label, m in (("photo", photo), ("shot", ~photo), ("all", np.ones_like(photo))):
        if not m.any():
            continue
        out[label] = {"n": int(m.sum()), "accuracy": float(y[m].mean()),
                      "confidence_before": float(p[m].mean()), "confidence_after": float(q[m].mean()),
                      "ece_before": ece(p[m], y[m]), "ece_after": ece(q[m], y[m]),
                      "log_loss_before": log_loss(p[m], y[m]), "log_loss_after": log_loss(q[m], y[m])}
        r = out[label]
        print(f"  {name:<24} {label:<5} n={r['n']:>5}  accuracy {r['accuracy']:.3f}"
              f"  mean conf {r['confidence_before']:.3f} -> {r['confidence_after']:.3f}"
              f"  ECE {r['ece_before']:.3f} -> {r['ece_after']:.3f}"
              f"  log loss {r['log_loss_before']:.3f} -> {r['log_loss_after']:.3f}")
    bands = []
    for lo, hi in HEIGHT_BANDS:
        m = (h >= lo) & (h < hi)
        if m.any():
            bands.append({"height": [lo, None if math.isinf(hi) else hi], "n": int(m.sum()),
                          "accuracy": float(y[m].mean()), "confidence_before": float(p[m].mean()),
                          "confidence_after": float(q[m].mean()), "under_half": int((q[m] < 0.5).sum()),
                          "under_half_right": int(y[m][q[m] < 0.5].sum())})
            b = bands[-1]
            print(f"  {'':<24} h {lo:>2}-{'' if math.isinf(hi) else hi:<3} n={b['n']:>5}  accuracy {b['accuracy']:.3f}"
                  f"  mean conf {b['confidence_before']:.3f} -> {b['confidence_after']:.3f}"
                  f"  under 0.5 after: {b['under_half']} ({b['under_half_right']} right)")
    out["height_bands"] = bands
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fit", nargs=2, metavar=("GRAPHS", "TRUTH"), type=Path, action="append", required=True)
    ap.add_argument("--check", nargs=2, metavar=("GRAPHS", "TRUTH"), type=Path, action="append", default=[])
    ap.add_argument("--json", type=Path, help="write the parameters and the tables here")
    args = ap.parse_args(argv)
    fit_rows: dict[str, list] = {k: [] for k in KINDS}
    for graphs, truth in args.fit:
        for k, v in collect(graphs, truth).items():
            fit_rows[k].extend(v)
    fit_name = "+".join(g.name for g, _ in args.fit)
    checks = [(f"{g.name}", collect(g, t)) for g, t in args.check]
    result = {}
    for kind in KINDS:
        if len(fit_rows[kind]) < 3:
            print(f"{kind}: too few rows to fit ({len(fit_rows[kind])})", file=sys.stderr)
            continue
        params = fit(*arrays(fit_rows[kind])[:3])
        print(f"{kind}: slope {params[0]:.4f}, per_log_height {params[1]:.4f}, bias {params[2]:.4f}, "
              f"slope_per_log_height {params[3]:.4f}")
        entry = {"params": params, "fit": report(f"fit {fit_name}", fit_rows[kind], params)}
        entry["checks"] = {name: report(f"check {name}", rows[kind], params) for name, rows in checks if rows[kind]}
        result[kind] = entry
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
