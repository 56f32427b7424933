"""Model-only onnxruntime timing: the twin of `core/examples/op_profile.rs` for the tract/onnxruntime ratio,
model for model (BENCHMARKS.md, "Session 43").

    cd models && /root/.cache/netron-ocr/venv/bin/python -m train.bench_ort_models [--models DIR] [--repeat 30]

Each case runs one model on a fixed pseudo-random float32 input in [-1, 1) with one intra-op thread, after one
warm-up run, and prints the median over `--repeat` runs of the thread CPU time (`time.thread_time`; onnxruntime
with one thread runs in the calling thread). The cases are the shapes `op_profile` is run at in BENCHMARKS.md:
OCR 1×48×320, classifier 3×96×160, cropper 3×512×512, detector tiles 3×288×512 and 3×160×224.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

REPO = Path(__file__).resolve().parents[2]
CASES = [
    ("ocr", (1, 1, 48, 320)),
    ("classifier", (1, 3, 96, 160)),
    ("cropper", (1, 3, 512, 512)),
    ("detector", (1, 3, 288, 512)),
    ("detector", (1, 3, 160, 224)),
]


def time_model(path: Path, shape: tuple[int, ...], repeat: int, seed: int = 0) -> float:
    """Median thread CPU milliseconds of one run of `path` on a pseudo-random input of `shape`."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
    feed = {session.get_inputs()[0].name: x}
    session.run(None, feed)
    times = []
    for _ in range(repeat):
        t = time.thread_time()
        session.run(None, feed)
        times.append((time.thread_time() - t) * 1e3)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", type=Path, default=REPO / "models")
    p.add_argument("--repeat", type=int, default=30)
    args = p.parse_args(argv)
    for name, shape in CASES:
        ms = time_model(args.models / f"{name}.onnx", shape, args.repeat)
        print(f"{name} {'x'.join(map(str, shape[1:]))}: {ms:.2f} ms per run (median of {args.repeat}, thread CPU)")


if __name__ == "__main__":
    main()
