"""Render the onnx package's real `light_*` models into a separate evaluation set (never used for training).

    python -m train.render_real --out /root/.cache/netron-ocr/data/real-eval [--per-model 4] [--seed 0]

Each of onnx's `backend/test/data/light/light_*.onnx` models (AlexNet, DenseNet-121, Inception v1/v2, ResNet-50,
ShuffleNet, SqueezeNet, VGG-19, ZFNet-512; shape inference is run first so Netron draws shape labels) is rendered
`--per-model` times with the data generator's own renderer, option sampler and camera simulator, and written in
the docs/dataset.md scene layout: scene k = model_index × per_model + r. `DIR/real_models.json` maps scene index
to model name and lists failures.

Views: these "light" models replace every weight by an unnamed ConstantOfShape node, so Netron draws hundreds of
ConstantOfShape cards beside the main chain and the layout becomes huge (ResNet-50 ≈ 12000 × 12500 CSS px) with
the chain running diagonally through mostly empty space; the sampler's pan fractions (e.g. top centre) then show
nothing. So each scene centres the view on a graph element instead of using the sampled pan (the renderer's
`focus`): the graph input (Netron's own opening view centres on it) 25% of the time, else a uniformly drawn named
node (the real operators; the ConstantOfShape nodes have no names), displaced by up to ±0.3 of the view in x and y.
All other options (theme, zoom, viewport, device scale, weights/attributes/names, direction) come from the data
generator's sampler. A scene that fails to render is retried with new draws (the last try is Netron's opening view:
zoom 1, centred on the graph input); one that still fails is reported and skipped. `scene.focus` in the truth
names the focused element. Resumes: complete scenes are kept.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import sys
from pathlib import Path

import numpy as np

DEFAULT_OUT = Path("/root/.cache/netron-ocr/data/real-eval")
# Render attempts per scene (fresh option draws; the last one uses Netron's opening view).
ATTEMPTS = 3
# Probability that a scene is centred on the graph input rather than on a random named node.
INPUT_FOCUS = 0.25
# Largest displacement of the focused element from the view centre, as a fraction of the view size.
FOCUS_SHIFT = 0.3


def light_models() -> list[Path]:
    import onnx

    root = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    return sorted(root.glob("light_*.onnx"))


def focus_targets(model) -> tuple[str, list[str]]:
    """(graph input Netron draws as a pill, named nodes) of `model`: focus candidates for the view."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    named = [n.name for n in model.graph.node if n.name]
    if not inputs or not named:
        raise ValueError(f"model {model.graph.name!r} has no graph input or no named node to focus on")
    return inputs[0], named


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def render_views(models, out: Path, per_model: int, seed: int, tag: str, scene_prefix: str,
                 timeout: float) -> tuple[dict, list]:
    """Renders `per_model` focused views (module doc) of each `(name, model)` into `out/scenes`: scene
    k = model_index × per_model + r; complete scenes are kept. `tag` keys the option draws and `scene_prefix` the
    renderer's scene ids. Returns (scene index → model name, failures)."""
    from datagen import build, camera, render

    (out / "scenes").mkdir(parents=True, exist_ok=True)
    index_map, failures = {}, []
    with render.Renderer(out / ".work", timeout_s=timeout, max_nodes=5000) as renderer:
        for mi, (name, model) in enumerate(models):
            graph_input, named = focus_targets(model)
            for r in range(per_model):
                k = mi * per_model + r
                index_map[k] = name
                paths = build.scene_paths(out, k)
                if all(q.exists() for q in paths.values()):
                    continue
                image = truth = None
                errors = []
                for attempt in range(ATTEMPTS):
                    rng = random.Random(f"{tag}:{seed}:{k}:{attempt}")
                    options = render.sample_options(rng)
                    focus = graph_input if rng.random() < INPUT_FOCUS else rng.choice(named)
                    shift = (rng.uniform(-FOCUS_SHIFT, FOCUS_SHIFT), rng.uniform(-FOCUS_SHIFT, FOCUS_SHIFT))
                    if attempt == ATTEMPTS - 1:  # last try: Netron's own opening view (centred on the input)
                        options = dataclasses.replace(options, zoom=1.0)
                        focus, shift = graph_input, (0.0, 0.0)
                    try:
                        image, truth = renderer.render(model, options, scene_id=f"{scene_prefix}-{name}-{r}",
                                                       focus=focus, focus_shift=shift)
                        break
                    except render.RenderError as e:
                        errors.append(str(e)[:200])
                if truth is None:
                    failures.append({"index": k, "model": name, "errors": errors})
                    print(f"scene {k} ({name}) failed: {errors}", file=sys.stderr)
                    continue
                truth.setdefault("scene", {}).update({"seed": int(seed), "index": int(k), "real_model": name})
                shot_truth = camera.screenshot_truth(truth)
                photo, photo_truth = camera.simulate(image, shot_truth, np.random.default_rng([seed, 7919, k]))
                _write(paths["onnx.json"], build.dumps({"real_model": name, "nodes": len(model.graph.node)}).encode())
                _write(paths["shot.png"], build._png_bytes(image))
                _write(paths["photo.jpg"], build._jpeg_bytes(photo))
                _write(paths["shot.json"], build.dumps(shot_truth).encode())
                _write(paths["photo.json"], build.dumps(photo_truth).encode())
                print(f"scene {k}: {name} ({len(truth.get('nodes', []))} nodes visible)")
    return index_map, failures


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.render_real", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--per-model", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=60.0, help="per-scene layout limit in seconds")
    args = p.parse_args(argv)

    import onnx

    paths = light_models()
    if not paths:
        print("no light_*.onnx models in the onnx package", file=sys.stderr)
        return 2
    models = [(path.stem.removeprefix("light_"), onnx.shape_inference.infer_shapes(onnx.load(str(path))))
              for path in paths]
    index_map, failures = render_views(models, args.out, args.per_model, args.seed, "real-eval", "real",
                                       args.timeout)
    (args.out / "real_models.json").write_text(json.dumps({"models": index_map, "failures": failures}, indent=1))
    print(f"{len(index_map) - len(failures)} scenes in {args.out}, {len(failures)} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
