"""Dataset builder: random ONNX graph -> Netron screenshot -> camera photo, for scenes 0..N-1, plus derived sets.

Layout and file contracts: docs/dataset.md. Every output of scene `k` depends only on `(seed, k)`:
- graph: `graphgen.random_model(seed * 1_000_003 + k)`;
- render options: `render.sample_options(random.Random(f"datagen:{seed}:{k}"))`;
- camera: `camera.simulate(..., numpy.random.default_rng([seed, k]))`;
so scenes can be built in any order, by any worker, and a stopped build resumes where it left off (a scene whose
five files all exist is skipped). Files are written atomically (temp file + rename).
"""

from __future__ import annotations

import json
import logging
import multiprocessing as mp
import os
import queue
import random
import shutil
import time
import traceback
from collections import Counter
from pathlib import Path

import numpy as np

log = logging.getLogger("datagen.build")

SCENE_SUFFIXES = ("onnx.json", "shot.png", "shot.json", "photo.jpg", "photo.json")
GRAPH_SEED_STRIDE = 1_000_003
EVAL_MODULUS = 10  # scene k with k % 10 == 9 is held out for evaluation
PNG_COMPRESS_LEVEL = 3


def scene_name(k: int) -> str:
    return f"{k:06d}"


def scene_paths(out: Path, k: int) -> dict[str, Path]:
    """The five files of scene `k` under `out/scenes/`, keyed by suffix."""
    base = Path(out) / "scenes"
    return {s: base / f"{scene_name(k)}.{s}" for s in SCENE_SUFFIXES}


def split_of(k: int) -> str:
    return "eval" if k % EVAL_MODULUS == EVAL_MODULUS - 1 else "train"


def train_node_counts(seed: int, scenes: int) -> dict[str, int]:
    """Nodes of each vocabulary operator in the graphs of the training scenes among 0..scenes-1 (the graphs
    `build` renders for them; nothing is rendered here), every operator listed, zeros included."""
    from . import graphgen

    stats = graphgen.op_stats([seed * GRAPH_SEED_STRIDE + k for k in range(scenes) if split_of(k) == "train"])
    return dict(stats["nodes_per_op"])


def dumps(obj) -> str:
    """Canonical JSON (sorted keys, UTF-8 text), the same serialisation as `render.truth_json`."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _png_bytes(image) -> bytes:
    import io

    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buf.getvalue()


def _jpeg_bytes(image) -> bytes:
    data = image.info.get("jpeg_bytes")
    if data:
        return data
    import io

    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def make_scene(renderer, seed: int, k: int, out: Path) -> dict:
    """Builds scene `k` and writes its five files. Returns a small record `{index, seconds, kind: "built"}`.
    Raises on failure (the caller records it)."""
    from . import camera, graphgen, render

    t0 = time.perf_counter()
    paths = scene_paths(out, k)
    model = graphgen.random_model(seed * GRAPH_SEED_STRIDE + k)
    options = render.sample_options(random.Random(f"datagen:{seed}:{k}"))
    image, truth = renderer.render(model, options, scene_id=f"{seed}-{scene_name(k)}")
    truth.setdefault("scene", {}).update({"seed": int(seed), "index": int(k)})
    shot_truth = camera.screenshot_truth(truth)
    photo, photo_truth = camera.simulate(image, shot_truth, np.random.default_rng([int(seed), int(k)]))
    summary = graphgen.summarize(model)
    _write_atomic(paths["onnx.json"], dumps(summary).encode("utf-8"))
    _write_atomic(paths["shot.png"], _png_bytes(image))
    _write_atomic(paths["photo.jpg"], _jpeg_bytes(photo))
    _write_atomic(paths["shot.json"], dumps(shot_truth).encode("utf-8"))
    _write_atomic(paths["photo.json"], dumps(photo_truth).encode("utf-8"))  # last: marks the scene complete
    return {"index": k, "seconds": time.perf_counter() - t0, "kind": "built"}


def scene_done(out: Path, k: int) -> bool:
    return all(p.exists() for p in scene_paths(out, k).values())


# ---------------------------------------------------------------------------------------------------------------
# Workers


def _worker(wid: int, seed: int, out: str, tasks, results) -> None:
    """Worker process: one Renderer, scenes from `tasks` until a None sentinel; one result per scene."""
    import cv2

    cv2.setNumThreads(1)
    logging.basicConfig(level=logging.WARNING)
    from . import render

    out_p = Path(out)
    workdir = out_p / ".work" / f"worker{wid}"
    try:
        renderer = render.Renderer(workdir)
    except Exception as e:  # noqa: BLE001 - reported to the parent, which stops the build
        results.put({"worker": wid, "fatal": f"{type(e).__name__}: {e}"})
        return
    try:
        while True:
            k = tasks.get()
            if k is None:
                break
            try:
                rec = make_scene(renderer, seed, k, out_p)
            except Exception as e:  # noqa: BLE001 - one scene's failure must not stop the build
                rec = {"index": k, "kind": "failed", "error": f"{type(e).__name__}: {e}"[:500],
                       "trace": traceback.format_exc(limit=3)[-1500:]}
            results.put(rec)
    finally:
        renderer.close()
        results.put({"worker": wid, "done": True})


def build(seed: int, scenes: int, out: Path, workers: int = 2, start: int = 0, progress: bool = True,
          held_out_only: bool = False) -> dict:
    """Builds scenes `start .. scenes-1` into `out/scenes/` (skipping complete ones), then the derived sets and
    `out/manifest.json`. Returns the manifest. With `held_out_only`, only the held-out scenes (`split_of(k) ==
    "eval"`) are built, in a tenth of the time: what the test splits of the OCR and the classifier and the
    development split DEVALL need (not their validation splits, k % 10 == 8). Each scene is the same bytes as in
    a full build."""
    from tqdm import tqdm

    out = Path(out)
    (out / "scenes").mkdir(parents=True, exist_ok=True)
    wanted = [k for k in range(start, scenes) if not held_out_only or split_of(k) == "eval"]
    todo = [k for k in wanted if not scene_done(out, k)]
    skipped = len(wanted) - len(todo)
    failures: list[dict] = []
    built = 0
    t0 = time.perf_counter()
    if todo:
        n_workers = max(1, min(int(workers), len(todo)))
        ctx = mp.get_context("spawn")
        tasks = ctx.Queue()
        results = ctx.Queue()
        for k in todo:
            tasks.put(k)
        for _ in range(n_workers):
            tasks.put(None)
        procs = [ctx.Process(target=_worker, args=(w, seed, str(out), tasks, results), daemon=False)
                 for w in range(n_workers)]
        for p in procs:
            p.start()
        seen: set[int] = set()
        done_workers = 0
        fatal = None
        bar = tqdm(total=len(todo), desc=f"build seed={seed}", unit="scene", disable=not progress)
        try:
            while done_workers < n_workers:
                try:
                    rec = results.get(timeout=5.0)
                except queue.Empty:
                    if not any(p.is_alive() for p in procs):
                        break  # every worker is gone without saying so (crash)
                    continue
                if "worker" in rec:
                    if "fatal" in rec:
                        fatal = f"worker {rec['worker']} could not start: {rec['fatal']}"
                        break
                    done_workers += 1
                    continue
                seen.add(rec["index"])
                bar.update(1)
                if rec["kind"] == "failed":
                    log.warning("scene %d failed: %s", rec["index"], rec["error"])
                    failures.append({"index": rec["index"], "error": rec["error"]})
                else:
                    built += 1
        finally:
            bar.close()
            for p in procs:
                if fatal is None:
                    p.join(timeout=60)
                if p.is_alive():
                    p.terminate()
                    p.join(timeout=10)
        if fatal is not None:
            raise RuntimeError(fatal)
        shutil.rmtree(out / ".work", ignore_errors=True)
        for k in todo:
            if k not in seen:
                failures.append({"index": k, "error": "worker exited before finishing this scene"})
    seconds = time.perf_counter() - t0
    failures.sort(key=lambda f: f["index"])
    manifest = write_derived(out, seed, scenes)
    manifest.update({
        "workers": int(workers),
        "seconds": round(seconds, 2),
        "scenes_per_second": round(built / seconds, 4) if seconds > 0 and built else 0.0,
    })
    manifest["scenes"].update({"built_this_run": built, "skipped_existing": skipped, "failed": len(failures)})
    manifest["failures"] = failures
    _write_atomic(out / "manifest.json", (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    return manifest


# ---------------------------------------------------------------------------------------------------------------
# Derived sets


def _weight_row_text(w: dict) -> str | None:
    """The weight row as Netron draws it (`W〈64×3×7×7〉`, `B = 0.5`); None when its value is not known."""
    text = w.get("text")
    if text is None:
        return None
    if w.get("shape") is not None:
        return f"{w['name']}\u3008{text}\u3009"
    return f"{w['name']} = {text}"


def classifier_entries(truth: dict, image: str, k: int) -> list[dict]:
    """Node-title crops: only titles fully visible that show the operator name (not names mode)."""
    out = []
    scene = truth.get("scene", {})
    for n in truth.get("nodes", []):
        tb = n.get("title_box")
        if not tb or n.get("title_truncated") or not n.get("op"):
            continue
        if scene.get("names") or ("title_text" in n and n["title_text"] != n["op"]):
            continue
        e = {"image": image, "box": tb, "op": n["op"], "theme": scene.get("theme"), "scene": k,
             "kind": scene.get("kind"), "split": split_of(k)}
        if n.get("title_quad"):
            e["quad"] = n["title_quad"]
        out.append(e)
    return out


def _text_entry(scene: dict, image: str, k: int, box, quad, text, kind: str) -> dict | None:
    """One OCR record, or None for an empty text or a box under 1 px."""
    if not text or box[2] - box[0] < 1 or box[3] - box[1] < 1:
        return None
    e = {"box": box, "text": text, "kind": kind, "image": image, "scene": k, "photo": scene.get("kind") == "photo",
         "split": split_of(k), "theme": scene.get("theme")}
    if quad:
        e["quad"] = quad
    return e


def ocr_entries(truth: dict, image: str, k: int) -> list[dict]:
    """Text crops: tensor labels (kind `shape`, or `name` in names mode), input/output pills (`name`), weight rows
    (`weight`, text as drawn). Truncated elements are left out (their text is cut)."""
    out = []
    scene = truth.get("scene", {})

    def add(box, quad, text, kind):
        e = _text_entry(scene, image, k, box, quad, text, kind)
        if e is not None:
            out.append(e)

    for t in truth.get("tensors", []):
        if t.get("truncated"):
            continue
        add(t["box"], t.get("quad"), t["text"], "shape" if t.get("shape") is not None else "name")
    for p in truth.get("inputs", []) + truth.get("outputs", []):
        if p.get("truncated"):
            continue
        add(p["box"], p.get("quad"), p.get("name"), "name")
    for n in truth.get("nodes", []):
        for w in n.get("weights", []):
            if w.get("truncated") or not w.get("box"):
                continue
            add(w["box"], w.get("quad"), _weight_row_text(w), "weight")
    return out


def ocr_title_entries(truth: dict, image: str, k: int) -> list[dict]:
    """Node titles as text crops (kind `title`): the text Netron draws in the title (`title_text`: the operator, or
    the node name in names mode; the operator when the field is absent). Titles cut by the viewport are left out.
    Not part of `ocr/index.jsonl`; `train.ocr --titles` derives them from the truth files."""
    scene = truth.get("scene", {})
    out = []
    for n in truth.get("nodes", []):
        if not n.get("title_box") or n.get("title_truncated"):
            continue
        e = _text_entry(scene, image, k, n["title_box"], n.get("title_quad"), n.get("title_text") or n.get("op"),
                        "title")
        if e is not None:
            out.append(e)
    return out


def write_derived(out: Path, seed: int, scenes: int) -> dict:
    """Writes classifier/index.jsonl and ocr/index.jsonl from the complete scenes 0..scenes-1 (sorted by scene,
    screenshot before photo) and returns the manifest's counts part."""
    from . import render

    out = Path(out)
    (out / "classifier").mkdir(exist_ok=True)
    (out / "ocr").mkdir(exist_ok=True)
    per_op: Counter = Counter()
    per_cat: Counter = Counter()
    themes: Counter = Counter()
    elements: Counter = Counter()
    ocr_kinds: Counter = Counter()
    complete = 0
    cls_lines: list[str] = []
    ocr_lines: list[str] = []
    for k in range(scenes):
        paths = scene_paths(out, k)
        if not all(p.exists() for p in paths.values()):
            continue
        complete += 1
        for suffix, img_suffix in (("shot.json", "shot.png"), ("photo.json", "photo.jpg")):
            truth = json.loads(paths[suffix].read_text("utf-8"))
            image = f"scenes/{scene_name(k)}.{img_suffix}"
            for e in classifier_entries(truth, image, k):
                cls_lines.append(dumps(e))
            for e in ocr_entries(truth, image, k):
                ocr_lines.append(dumps(e))
                ocr_kinds[e["kind"]] += 1
            if suffix == "shot.json":
                themes[truth.get("scene", {}).get("theme")] += 1
                for key in ("nodes", "inputs", "outputs", "tensors", "edges"):
                    elements[key] += len(truth.get(key, []))
                for n in truth.get("nodes", []):
                    per_op[n.get("op")] += 1
                    per_cat[n.get("category", "?")] += 1
    _write_atomic(out / "classifier" / "index.jsonl", "".join(line + "\n" for line in cls_lines).encode("utf-8"))
    _write_atomic(out / "ocr" / "index.jsonl", "".join(line + "\n" for line in ocr_lines).encode("utf-8"))
    return {
        "generator_version": render.GENERATOR_VERSION,
        "seed": int(seed),
        "scenes": {"requested": int(scenes), "complete": complete,
                   "eval": sum(1 for k in range(scenes) if split_of(k) == "eval" and scene_done(out, k))},
        "counts": {
            "elements": dict(sorted(elements.items())),
            "per_op": dict(sorted((str(k), v) for k, v in per_op.items())),
            "per_category": dict(sorted(per_cat.items())),
            "themes": dict(sorted((str(k), v) for k, v in themes.items())),
            "classifier_crops": len(cls_lines),
            "ocr_crops": dict(sorted(ocr_kinds.items())),
            "images": {"screenshots": complete, "photos": complete},
        },
    }
