"""Export a trained cropper or detector checkpoint to ONNX (opset 17) and check it against PyTorch.

    python -m train.export --model detector --ckpt CKPT_DIR/best.pt --out ../models/detector.onnx

The legacy TorchScript exporter (`dynamo=False`) is used: it folds BatchNorm into Conv and keeps opset 17 (the
dynamo exporter may silently stay at opset 18, see /work/shared/notes/rust-stack.md). The batch axis is dynamic
(`N`); everything else is fixed. After export the command checks: the opset that came out, the op types (against
the list tract 0.23 is known to run), and onnxruntime vs PyTorch on a random input (max abs diff ≤ 1e-4). It
prints the file's SHA-256 for the MODEL.md card.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np
import torch

from train import cropper, detector
from train.common import OrtRunner, count_params, export_onnx, load_model_state

MODELS = {"cropper": cropper, "detector": detector}
# Op types measured to run in tract 0.23 with results matching onnxruntime (rust-stack.md, plus this project's
# parity runs). An exported model using anything else fails the export check.
TRACT_OPS = {"Conv", "Relu", "Add", "Concat", "ReduceMean", "ReduceMax", "Resize", "Sigmoid", "Mul",
             "GlobalAveragePool", "Flatten", "Reshape", "MaxPool", "Clip", "Constant"}
PARITY_TOL = 1e-4


def export_model(name: str, model: torch.nn.Module, out: Path, opset: int = 17) -> dict:
    """Export `model` (a cropper or detector) to `out`, run the checks, return a report dict."""
    import onnx

    mod = MODELS[name]
    out = Path(out)
    model.eval()
    example = torch.zeros(1, 3, mod.SIZE, mod.SIZE)
    got = export_onnx(model, example, out, mod.INPUT_NAMES, mod.OUTPUT_NAMES, opset=opset)
    proto = onnx.load(str(out))
    ops = sorted({n.op_type for n in proto.graph.node})
    unknown = sorted(set(ops) - TRACT_OPS)
    if unknown:
        raise RuntimeError(f"{out}: op types not known to run in tract: {unknown}")
    g = torch.Generator().manual_seed(0)
    x = torch.rand(2, 3, mod.SIZE, mod.SIZE, generator=g) * 4 - 2
    with torch.no_grad():
        ref = [o.numpy() for o in model(x)]
    ort_out = OrtRunner(out)(x.numpy())
    diffs = {n: float(np.abs(ort_out[n] - r).max()) for n, r in zip(mod.OUTPUT_NAMES, ref)}
    if max(diffs.values()) > PARITY_TOL:
        raise RuntimeError(f"{out}: onnxruntime differs from PyTorch: {diffs}")
    return {"opset": got, "ops": ops, "params": count_params(model), "ort_vs_torch": diffs,
            "sha256": hashlib.sha256(out.read_bytes()).hexdigest(), "bytes": out.stat().st_size}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.export", description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), required=True)
    p.add_argument("--ckpt", type=Path, required=True, help="a best.pt / last.pt checkpoint")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--opset", type=int, default=17)
    args = p.parse_args(argv)
    state, config = load_model_state(args.ckpt)
    if config.get("model") not in (None, args.model):
        print(f"{args.ckpt} is a {config['model']} checkpoint, not {args.model}", file=sys.stderr)
        return 2
    model = MODELS[args.model].build_model(config)
    model.load_state_dict(state)
    rep = export_model(args.model, model, args.out, args.opset)
    print(f"wrote {args.out}: opset {rep['opset']}, {rep['params']} parameters, {rep['bytes']} bytes")
    print(f"ops: {' '.join(rep['ops'])}")
    print("onnxruntime vs PyTorch max abs diff: " + ", ".join(f"{k} {v:.2e}" for k, v in rep["ort_vs_torch"].items()))
    print(f"sha256 {rep['sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
