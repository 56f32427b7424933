"""Export a trained cropper or detector checkpoint to ONNX (opset 17) and check it against PyTorch.

    python -m train.export --model detector --ckpt CKPT_DIR/best.pt --out ../models/detector.onnx

The legacy TorchScript exporter (`dynamo=False`) is used: it folds BatchNorm into Conv and keeps opset 17 (the
dynamo exporter may silently stay at opset 18, see /work/shared/notes/rust-stack.md). The batch axis is dynamic
(`N`); the detector's height and width are declared dynamic too (`H`, `W`, outputs `H/4`, `W/4`: it is fully
convolutional and runs on any H, W multiple of 32, see `detector.input_size`); everything else is fixed. After export
the command checks: the opset that came out, the op types (against the list tract 0.23 is known to run), and
onnxruntime vs PyTorch on random inputs (max abs diff ≤ 1e-4; for the detector also at a non-square size). It
prints the file's SHA-256 for the MODEL.md card.

    python -m train.export --model detector --dynamic-hw ../models/detector.onnx

rewrites only the declared input/output shapes of an existing detector export to `[N, 3, H, W]` and
`[N, C, H/4, W/4]` (weights and nodes untouched), then checks it like an export.
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
TRACT_OPS = {"Conv", "ConvTranspose", "Relu", "Add", "Concat", "ReduceMean", "ReduceMax", "Resize", "Sigmoid", "Mul",
             "GlobalAveragePool", "Flatten", "Reshape", "MaxPool", "Clip", "Constant"}
PARITY_TOL = 1e-4
# Models whose spatial input dims are declared dynamic: name → output stride.
DYNAMIC_HW = {"detector": detector.STRIDE}


def declare_dynamic_hw(proto, stride: int) -> None:
    """Declare the spatial dims of the graph's inputs `H`, `W` and of its outputs `H/<stride>`, `W/<stride>` (ONNX
    `dim_param`; tract parses these as expressions). Only the declared shapes change, never a node or a weight;
    intermediate `value_info` is dropped so that no stale fixed shape remains."""
    for vi, (h, w) in [*((i, ("H", "W")) for i in proto.graph.input),
                       *((o, (f"H/{stride}", f"W/{stride}")) for o in proto.graph.output)]:
        dims = vi.type.tensor_type.shape.dim
        if len(dims) != 4:
            raise RuntimeError(f"{vi.name}: expected a 4-d NCHW shape, got {len(dims)} dims")
        for k, name in ((2, h), (3, w)):
            dims[k].ClearField("dim_value")
            dims[k].dim_param = name
    del proto.graph.value_info[:]


def rewrite_dynamic_hw(path: Path, stride: int) -> None:
    """`declare_dynamic_hw` on the ONNX file at `path`, in place (checked with the ONNX checker)."""
    import onnx

    proto = onnx.load(str(path))
    declare_dynamic_hw(proto, stride)
    onnx.checker.check_model(proto, full_check=True)
    tmp = path.with_name(f".{path.name}.tmp")
    onnx.save(proto, str(tmp))
    tmp.replace(path)


def check_export(name: str, model: torch.nn.Module | None, out: Path) -> dict:
    """Op types against TRACT_OPS and, with `model`, onnxruntime vs PyTorch on random inputs: batch 2 at the nominal
    size and, for DYNAMIC_HW models, batch 1 at a non-square size. Raises on failure; returns the report."""
    import onnx

    mod = MODELS[name]
    proto = onnx.load(str(out))
    ops = sorted({n.op_type for n in proto.graph.node})
    unknown = sorted(set(ops) - TRACT_OPS)
    if unknown:
        raise RuntimeError(f"{out}: op types not known to run in tract: {unknown}")
    got = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
    rep = {"opset": got, "ops": ops, "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
           "bytes": out.stat().st_size}
    if model is None:
        return rep
    g = torch.Generator().manual_seed(0)
    shapes = [(2, mod.SIZE, mod.SIZE)] + ([(1, mod.SIZE - 7 * 32, mod.SIZE - 12 * 32)] if name in DYNAMIC_HW else [])
    diffs: dict[str, float] = {}
    runner = OrtRunner(out)
    for n, h, w in shapes:
        x = torch.rand(n, 3, h, w, generator=g) * 4 - 2
        with torch.no_grad():
            ref = [o.numpy() for o in model(x)]
        ort_out = runner(x.numpy())
        for k, r in zip(mod.OUTPUT_NAMES, ref):
            if ort_out[k].shape != r.shape:
                raise RuntimeError(f"{out}: {k} has shape {ort_out[k].shape} in onnxruntime, {r.shape} in PyTorch")
            diffs[k] = max(diffs.get(k, 0.0), float(np.abs(ort_out[k] - r).max()))
    if max(diffs.values()) > PARITY_TOL:
        raise RuntimeError(f"{out}: onnxruntime differs from PyTorch: {diffs}")
    return {**rep, "params": count_params(model), "ort_vs_torch": diffs}


def export_model(name: str, model: torch.nn.Module, out: Path, opset: int = 17) -> dict:
    """Export `model` (a cropper or detector) to `out`, run the checks, return a report dict."""
    mod = MODELS[name]
    out = Path(out)
    model.eval()
    example = torch.zeros(1, 3, mod.SIZE, mod.SIZE)
    export_onnx(model, example, out, mod.INPUT_NAMES, mod.OUTPUT_NAMES, opset=opset)
    if name in DYNAMIC_HW:
        rewrite_dynamic_hw(out, DYNAMIC_HW[name])
    return check_export(name, model, out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.export", description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), required=True)
    p.add_argument("--ckpt", type=Path, help="a best.pt / last.pt checkpoint")
    p.add_argument("--out", type=Path)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--dynamic-hw", type=Path, metavar="ONNX",
                   help="only rewrite this existing export's declared H, W dims to dynamic (in place), then check it "
                        "(against --ckpt when given)")
    args = p.parse_args(argv)
    if args.dynamic_hw is not None:
        if args.model not in DYNAMIC_HW:
            p.error(f"--dynamic-hw: {args.model} has fixed spatial dims")
        rewrite_dynamic_hw(args.dynamic_hw, DYNAMIC_HW[args.model])
        model = None
        if args.ckpt is not None:
            state, config = load_model_state(args.ckpt)
            model = MODELS[args.model].build_model(config)
            model.load_state_dict(state)
            model.eval()
        rep = check_export(args.model, model, args.dynamic_hw)
        print(f"rewrote {args.dynamic_hw}: inputs [N, 3, H, W], outputs [N, C, H/{DYNAMIC_HW[args.model]}, "
              f"W/{DYNAMIC_HW[args.model]}], {rep['bytes']} bytes")
        if "ort_vs_torch" in rep:
            print("onnxruntime vs PyTorch max abs diff: "
                  + ", ".join(f"{k} {v:.2e}" for k, v in rep["ort_vs_torch"].items()))
        print(f"sha256 {rep['sha256']}")
        return 0
    if args.ckpt is None or args.out is None:
        p.error("--ckpt and --out are required (unless --dynamic-hw)")
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
