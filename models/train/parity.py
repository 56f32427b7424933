"""Parity of an exported model across runtimes: PyTorch (optional), onnxruntime and tract.

    python -m train.parity --model detector --onnx ../models/detector.onnx --n 100 \
        [--ckpt CKPT_DIR/best.pt] [--data DIR] [--work DIR]

Builds `--n` inputs (from `--data` scene images prepared exactly as at inference, or else synthetic UI-like
images), runs onnxruntime in-process, tract through
`cargo run --release -p netron-ocr-core --example tract_run -- MODEL IN_DIR OUT_DIR` (one `input_<k>.npy` per
sample), and PyTorch when `--ckpt` is given. Prints the max abs diff per output for every pair of runtimes and
exits 1 when any exceeds `--tol` (default 1e-4).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np
import torch
from PIL import Image

from train import cropper, detector
from train.common import OrtRunner, list_scene_images, load_model_state, load_truth, to_input_tensor

MODELS = {"cropper": cropper, "detector": detector}
REPO = Path(__file__).resolve().parents[2]
DEFAULT_TARGET_DIR = "/root/.cache/netron-ocr/target"


def synthetic_image(rng: np.random.Generator, size: int) -> np.ndarray:
    """A uint8 RGB image that looks a little like Netron on a screen: background, cards, lines, noise."""
    bg = int(rng.choice([255, 30, 200]))
    img = np.full((size, size, 3), bg, np.uint8)
    for _ in range(int(rng.integers(3, 25))):
        x, y = rng.integers(0, size, 2)
        w, h = rng.integers(10, size // 4, 2)
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        cv2.rectangle(img, (int(x), int(y)), (int(x + w), int(y + h)), colour, -1)
        cv2.line(img, (int(x + w // 2), int(y + h)), (int(x + w // 2), int(min(size - 1, y + h + 40))), (0, 0, 0), 1)
    noise = rng.normal(0, 4, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def make_inputs(name: str, n: int, data: Path | None, seed: int) -> list[np.ndarray]:
    """`n` float32 [1,3,H,W] inputs prepared like the model sees them at inference: 512×512 for the cropper and
    for synthetic images; for the detector on scenes, the truth canvas letterboxed as one tile, trimmed to
    `detector.input_size` (so the sizes vary, and tract builds a plan per size)."""
    rng = np.random.default_rng(seed)
    images = list_scene_images(data) if data is not None else []
    out = []
    for k in range(n):
        if images:
            s = images[k % len(images)]
            if name == "cropper":
                x = to_input_tensor(cropper.preprocess(np.asarray(Image.open(s.image_path).convert("RGB"))))
            else:
                truth = load_truth(s.truth_path)
                with Image.open(s.image_path) as im:
                    arr, lb = detector.letterbox(im.convert("RGB"), detector.padded_canvas(truth))
                x = detector.to_detector_tensor([arr], [lb])
        else:
            x = to_input_tensor(synthetic_image(rng, MODELS[name].SIZE))
        out.append(x.numpy().astype(np.float32))
    return out


def run_tract(onnx_path: Path, in_dir: Path, out_dir: Path, binary: Path | None = None) -> None:
    """tract_run through `cargo run` (builds it if needed), or the given prebuilt binary."""
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_DIR", DEFAULT_TARGET_DIR)
    args = [str(onnx_path.resolve()), str(in_dir), str(out_dir)]
    if binary is not None:
        cmd = [str(binary), *args]
    else:
        cmd = ["cargo", "run", "--quiet", "--release", "-p", "netron-ocr-core", "--example", "tract_run", "--", *args]
    subprocess.run(cmd, cwd=REPO, env=env, check=True)


def max_diffs(a: dict[str, list[np.ndarray]], b: dict[str, list[np.ndarray]]) -> dict[str, float]:
    return {k: float(max(np.abs(x - y).max() for x, y in zip(a[k], b[k]))) for k in a}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.parity", description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), required=True)
    p.add_argument("--onnx", type=Path, required=True)
    p.add_argument("--ckpt", type=Path, default=None, help="also compare the PyTorch checkpoint")
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--data", type=Path, default=None, help="take inputs from these scenes (else synthetic)")
    p.add_argument("--work", type=Path, default=None, help="keep the .npy files here (default: a temp dir)")
    p.add_argument("--no-tract", action="store_true")
    p.add_argument("--tract-bin", type=Path, default=None,
                   help="prebuilt tract_run (e.g. $CARGO_TARGET_DIR/release/examples/tract_run) instead of cargo run")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    mod = MODELS[args.model]
    names = list(mod.OUTPUT_NAMES)
    inputs = make_inputs(args.model, args.n, args.data, args.seed)

    runs: dict[str, dict[str, list[np.ndarray]]] = {}
    ort = OrtRunner(args.onnx)
    runs["onnxruntime"] = {n: [] for n in names}
    for x in inputs:
        out = ort(x)
        for n in names:
            runs["onnxruntime"][n].append(out[n])
    if args.ckpt is not None:
        state, config = load_model_state(args.ckpt)
        model = mod.build_model(config)
        model.load_state_dict(state)
        model.eval()
        runs["pytorch"] = {n: [] for n in names}
        with torch.no_grad():
            for x in inputs:
                for n, o in zip(names, model(torch.from_numpy(x))):
                    runs["pytorch"][n].append(o.numpy())
    if not args.no_tract:
        work = args.work or Path(tempfile.mkdtemp(prefix="parity-"))
        in_dir, out_dir = work / "in", work / "out"
        for d in (in_dir, out_dir):
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
        for k, x in enumerate(inputs):
            np.save(in_dir / f"input_{k:04d}.npy", x)
        try:
            run_tract(args.onnx, in_dir, out_dir, args.tract_bin)
        except (subprocess.CalledProcessError, OSError) as e:
            print(f"tract_run failed ({e}); if the workspace does not build right now, pass --tract-bin with a "
                  "prebuilt $CARGO_TARGET_DIR/release/examples/tract_run", file=sys.stderr)
            return 2
        runs["tract"] = {n: [np.load(out_dir / f"output_{k:04d}_{n}.npy") for k in range(len(inputs))]
                         for n in names}
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    worst = 0.0
    keys = list(runs)
    print(f"{args.model}: {len(inputs)} inputs ({'scenes' if args.data else 'synthetic'}), runtimes {keys}")
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            d = max_diffs(runs[keys[i]], runs[keys[j]])
            worst = max(worst, *d.values())
            print(f"  {keys[i]} vs {keys[j]}: " + ", ".join(f"{n} {v:.2e}" for n, v in d.items()))
    ok = worst <= args.tol
    print(f"max abs diff {worst:.2e} ({'OK' if ok else 'FAIL'}, bar {args.tol:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
