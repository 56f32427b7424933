"""Where the detector's time goes, in tract and in onnxruntime, segment by segment and op by op (issue #6).

    python -m train.profile_detector --onnx ../models/detector.onnx --out /tmp/prof \
        --tract-bin $CARGO_TARGET_DIR/release/examples/batch_timing [--size 512] [--reps 7]

Writes prefixes of the detector graph (input → the output of each backbone stage / FPN level / trunk) and a few
single-convolution models with the detector's shapes to `--out`, then times each one on a zero `[1, 3, S, S]`
input: onnxruntime with one intra-op thread (`time.thread_time`, best of `--reps`) and, with `--tract-bin`,
tract through `batch_timing --model FILE C,H,W REPS` (thread CPU time, best of REPS). A segment's cost is the
difference between consecutive prefixes. Thread CPU time does not count waiting for a shared core, but caches
are shared, so compare the two engines within one run.
"""

from __future__ import annotations

import argparse
import copy
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

# Prefix ends: the last node whose output name starts with one of these (in graph order).
SEGMENTS = (("stem", "/stem/"), ("s4", "/s4/"), ("s8", "/s8/"), ("s16", "/s16/"), ("s32", "/s32/"),
            ("fpn16", "/smooth16/"), ("fpn8", "/smooth8/"), ("fpn4", "/smooth4/"), ("trunk", "/trunk/"))
FEATURE_MAP = ["N", "C", "H", "W"]  # every cut is after a convolution, ReLU or addition: NCHW
# (name, channels, side, group = channels for depthwise, kernel, stride) at a 512² input.
SINGLE_OPS = (("depthwise 3x3, 64 ch, 128²", 64, 128, 64, 3, 1),
              ("pointwise 1x1, 64→64, 128²", 64, 128, 1, 1, 1),
              ("depthwise 3x3, 128 ch, 64²", 128, 64, 128, 3, 1),
              ("depthwise 3x3 stride 2, 16 ch, 256²", 16, 256, 16, 3, 2))


def prefix_model(model: onnx.ModelProto, last_prefix: str) -> onnx.ModelProto:
    """The graph cut after the last node whose output starts with `last_prefix`; that output (a feature map) is the
    only one, and only the initializers the kept nodes use remain."""
    nodes = list(model.graph.node)
    end = max(i for i, n in enumerate(nodes) if n.output[0].startswith(last_prefix))
    m = copy.deepcopy(model)
    keep = nodes[: end + 1]
    del m.graph.node[:]
    m.graph.node.extend(keep)
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info(keep[-1].output[0], TensorProto.FLOAT, FEATURE_MAP))
    used = {x for n in keep for x in n.input}
    inits = [t for t in m.graph.initializer if t.name in used]
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    return m


def single_conv(channels: int, side: int, group: int, kernel: int, stride: int) -> onnx.ModelProto:
    """Conv + Relu on `[1, channels, side, side]` (random weights, 'same' padding)."""
    rng = np.random.default_rng(0)
    w = rng.random((channels, channels // group, kernel, kernel), dtype=np.float32)
    conv = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=group, kernel_shape=[kernel] * 2,
                            pads=[kernel // 2] * 4, strides=[stride] * 2)
    relu = helper.make_node("Relu", ["y"], ["z"])
    graph = helper.make_graph(
        [conv, relu], "single_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, side, side])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, FEATURE_MAP)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.zeros(channels, np.float32), "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def ort_ms(path: Path, shape: tuple[int, ...], reps: int) -> float:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    feed = {sess.get_inputs()[0].name: np.zeros(shape, np.float32)}
    sess.run(None, feed)
    best = float("inf")
    for _ in range(reps):
        t = time.thread_time()
        sess.run(None, feed)
        best = min(best, time.thread_time() - t)
    return best * 1e3


def tract_ms(tract_bin: Path, path: Path, shape: tuple[int, ...], reps: int) -> float:
    chw = ",".join(str(d) for d in shape[1:])
    out = subprocess.run([str(tract_bin), "--model", str(path), chw, str(reps)], capture_output=True, text=True,
                         check=True).stdout
    found = re.search(r"run cpu ([0-9.]+) ms", out)
    if not found:
        raise RuntimeError(f"unexpected batch_timing output: {out!r}")
    return float(found.group(1))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.profile_detector", description=__doc__.split("\n\n")[0])
    p.add_argument("--onnx", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True, help="where the cut and single-op models are written")
    p.add_argument("--tract-bin", type=Path, default=None, help="the batch_timing example binary")
    p.add_argument("--size", type=int, default=512, help="square input side")
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    model = onnx.load(args.onnx)
    shape = (1, 3, args.size, args.size)
    rows: list[tuple[str, Path, tuple[int, ...]]] = []
    for name, prefix in SEGMENTS:
        path = args.out / f"prefix_{name}.onnx"
        onnx.save(prefix_model(model, prefix), path)
        rows.append((f"input → {name}", path, shape))
    rows.append(("whole model", args.onnx, shape))
    scale = args.size / 512
    for k, (name, c, side, group, kernel, stride) in enumerate(SINGLE_OPS):
        path = args.out / f"single_{k}.onnx"
        s = max(1, round(side * scale))
        onnx.save(single_conv(c, s, group, kernel, stride), path)
        rows.append((name, path, (1, c, s, s)))

    print(f"{'model':40s} {'ORT ms':>8s} {'tract ms':>9s} {'tract/ORT':>9s}   (segment: ORT, tract)")
    prev = None
    for name, path, shp in rows:
        o = ort_ms(path, shp, args.reps)
        t = tract_ms(args.tract_bin, path, shp, args.reps) if args.tract_bin else float("nan")
        seg = ""
        if name.startswith("input → ") or name == "whole model":
            if prev is not None:
                seg = f"   (+{o - prev[0]:.1f}, +{t - prev[1]:.1f})"
            prev = (o, t)
        print(f"{name:40s} {o:8.2f} {t:9.2f} {t / o:9.2f}{seg}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
