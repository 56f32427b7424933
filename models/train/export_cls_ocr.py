"""Export the operator classifier or the OCR to ONNX, and load an exported file back (warm start).

    python -m train.export_cls_ocr --model classifier --ckpt CKPT_DIR/best.pt --out classifier.onnx
    python -m train.export_cls_ocr --model ocr --ckpt CKPT_DIR/best.pt --out ocr.onnx [--parity 64 --parity-data DIR]
        [--blend-onnx BASE.onnx --blend T]

Both graphs: input `image` (classifier float32 [N, 3, 96, 160], OCR float32 [N, 1, 48, 160]), output `logits`
(classifier [N, 72], OCR [N, 40, C]), dynamic batch axis `N`, default-domain opset 17 (checked after export), legacy
TorchScript exporter (BatchNorm folded into Conv), ops limited to `TRACT_OPS`. The classifier's calibration
temperature T is folded into its last Linear (weights and bias divided by T) and recorded in the metadata
(`temperature`), so `softmax(logits)` is already calibrated. Metadata also names the model kind, parameter count,
checkpoint step and the preprocessing in words. The command prints a summary with the file's SHA-256; `--parity N`
then compares tract with onnxruntime on N inputs (real crops with `--parity-data`).

`warm_start(model, onnx_path, kind)` is the inverse: Conv weights via `common.warm_start_from_onnx` (BatchNorm
set to identity-plus-bias), Gemm/MatMul(+Add) weights onto the model's Linear layers in execution order, ONNX GRU
W/R/B (gate order z, r, h) onto PyTorch GRU layers (gate order r, z, n), and the temperature un-folded.

`--blend-onnx BASE.onnx --blend T` exports the weight average `(1 − T) · BASE + T · checkpoint` instead of the
checkpoint (`blend_weights`): for a checkpoint warm-started from BASE, a point on the straight path between the two
(the session-22 OCR, `METRICS.md`).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

from train import common

OPSET = 17
# Ops tract 0.23.9 was measured to run (shared/notes/rust-stack.md) plus the plain tensor plumbing it implements.
TRACT_OPS = frozenset({
    "Conv", "BatchNormalization", "Relu", "HardSwish", "HardSigmoid", "Clip", "GlobalAveragePool", "ReduceMean",
    "Gemm", "Resize", "ConvTranspose", "Concat", "Sigmoid", "MatMul", "Softmax", "LayerNormalization", "GRU",
    "Split", "MaxPool", "Pad", "TopK", "ArgMax", "Add", "Mul", "Transpose", "Reshape", "Squeeze", "Unsqueeze",
    "Flatten", "Shape", "Gather", "Constant", "Slice", "Identity", "Cast", "Expand", "ConstantOfShape",
    "Sub", "Tanh",  # the attention OCR's decoder step (`train.ocr_attn`), checked with tract_run
})


def example_input(kind: str, batch: int = 2) -> torch.Tensor:
    from train import classifier, ocr

    if kind == "classifier":
        return torch.randn(batch, 3, classifier.INPUT_H, classifier.INPUT_W)
    return torch.randn(batch, 1, ocr.OCR_H, ocr.OCR_W)


def build(kind: str, config: dict) -> nn.Module:
    from train import classifier, ocr

    if kind == "classifier":
        return classifier.build_model(config)
    if kind == "ocr":
        return ocr.build_model(config)
    raise ValueError(f"unknown model kind {kind!r}")


def _last_linear(model: nn.Module) -> nn.Linear:
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    return linears[-1]


def fold_temperature(model: nn.Module, temperature: float) -> nn.Module:
    """A copy of `model` whose output is divided by `temperature` (folded into the last Linear)."""
    out = copy.deepcopy(model).eval()
    last = _last_linear(out)
    with torch.no_grad():
        last.weight.div_(temperature)
        last.bias.div_(temperature)
    return out


PREPROCESSING = {
    "classifier": "title box + 7 px per side, clipped; PIL BILINEAR (antialiased) stretch to 160x96 RGB; "
                  "(v/255 - mean)/std, ImageNet mean (0.485,0.456,0.406) std (0.229,0.224,0.225); NCHW",
    "ocr": "PIL convert('L') luma; text box + 0.15*height per side, clipped; PIL BILINEAR to height 48, "
           "width clamp(round(w*48/h),1,160); right pad with border mean; (v/255-0.5)/0.5; [N,1,48,160]; "
           "logits [N,40,C], greedy CTC, blank 0",
}


def blend_weights(kind: str, config: dict, weights: dict, base_onnx: Path, t: float) -> dict:
    """`(1 − t) · base + t · weights` for every floating-point tensor of a model state dict (integers from
    `weights`), `base` being `base_onnx` loaded into the model built from `config` (`warm_start`)."""
    base = build(kind, config)
    warm_start(base, base_onnx, kind)
    b = base.state_dict()
    if set(b) != set(weights):
        raise common.WarmStartError(f"{base_onnx} and the checkpoint hold different tensors")
    return {k: (1.0 - t) * b[k] + t * w if w.is_floating_point() else w for k, w in weights.items()}


def export(kind: str, ckpt: Path, out: Path, opset: int = OPSET, check_batch: int = 3,
           blend_onnx: Path | None = None, blend: float = 1.0) -> dict:
    """Export checkpoint `ckpt` (with `blend_onnx`, its `blend_weights` with that file) to `out`; returns a
    summary (opset, ops, params, max |ORT − torch|)."""
    import onnx

    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    config = state["config"]
    model = build(kind, config)
    weights = state["model"]
    if blend_onnx is not None:
        weights = blend_weights(kind, config, weights, blend_onnx, blend)
    model.load_state_dict(weights)
    model.eval()
    temperature = float(state.get("temperature", 1.0)) if kind == "classifier" else 1.0
    to_export = fold_temperature(model, temperature) if temperature != 1.0 else model
    got = common.export_onnx(to_export, example_input(kind, 1), out, ["image"], ["logits"], opset=opset)
    proto = onnx.load(str(out))
    ops = sorted({n.op_type for n in proto.graph.node})
    foreign = [op for op in ops if op not in TRACT_OPS]
    if foreign:
        raise RuntimeError(f"{out}: ops outside the tract allow-list: {foreign}")
    meta = {"netron_ocr_model": kind, "temperature": repr(temperature), "params": str(common.count_params(model)),
            "step": str(state.get("step", "")), "preprocessing": PREPROCESSING[kind]}
    if blend_onnx is not None:
        meta["blend"] = f"{blend!r} × checkpoint + {1.0 - blend!r} × {Path(blend_onnx).name}"
    if kind == "classifier":
        meta["classes"] = ",".join(config["vocab_ops"])
    else:
        meta["symbols"] = "".join(config["symbols"])
    del proto.metadata_props[:]
    for k, v in meta.items():
        proto.metadata_props.add(key=k, value=v)
    onnx.save(proto, str(out))
    x = example_input(kind, check_batch)
    with torch.no_grad():
        want = to_export(x).numpy()
    have = common.OrtRunner(out)(x)["logits"]
    diff = float(np.abs(have - want).max())
    if diff > 1e-4:
        raise RuntimeError(f"{out}: onnxruntime differs from PyTorch by {diff}")
    return {"path": str(out), "opset": got, "ops": ops, "params": common.count_params(model),
            "temperature": temperature, "max_abs_diff_ort_torch": diff, "bytes": out.stat().st_size,
            "sha256": hashlib.sha256(out.read_bytes()).hexdigest()}


# ----------------------------------------------------------------------------------------------------------------
# Warm start


def _tensors(proto) -> dict[str, np.ndarray]:
    from onnx import numpy_helper

    out = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    for node in proto.graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    out[node.output[0]] = numpy_helper.to_array(a.t)
    return out


def _modules_in_execution_order(model: nn.Module, example: torch.Tensor, types) -> list[nn.Module]:
    order: list[nn.Module] = []
    hooks = [m.register_forward_hook(lambda mod, _i, _o: order.append(mod))
             for m in model.modules() if isinstance(m, types)]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            model(example)
    finally:
        for h in hooks:
            h.remove()
        model.train(was_training)
    return order


def _onnx_linears(proto, tensors) -> list[tuple[np.ndarray, np.ndarray | None, str]]:
    """(weight [out, in], bias or None, node name) for every Gemm / MatMul with an initializer weight, in graph
    order; a MatMul's bias is the initializer of the Add that consumes its output."""
    consumers: dict[str, list] = {}
    for node in proto.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    out = []
    for node in proto.graph.node:
        if node.op_type == "Gemm" and node.input[1] in tensors:
            attrs = {a.name: a for a in node.attribute}
            if "transA" in attrs and attrs["transA"].i:
                raise common.WarmStartError(f"Gemm {node.name}: transA is not supported")
            w = tensors[node.input[1]]
            if not ("transB" in attrs and attrs["transB"].i):
                w = w.T
            alpha = attrs["alpha"].f if "alpha" in attrs else 1.0
            beta = attrs["beta"].f if "beta" in attrs else 1.0
            b = tensors.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
            out.append((w * alpha, None if b is None else b * beta, node.name))
        elif node.op_type == "MatMul" and node.input[1] in tensors:
            b = None
            for c in consumers.get(node.output[0], []):
                if c.op_type == "Add":
                    other = c.input[1] if c.input[0] == node.output[0] else c.input[0]
                    if other in tensors:
                        b = tensors[other]
            out.append((tensors[node.input[1]].T, b, node.name))
    return out


def _gru_layers(model: nn.Module) -> list[tuple[nn.GRU, int]]:
    return [(m, layer) for m in model.modules() if isinstance(m, nn.GRU) for layer in range(m.num_layers)]


def onnx_gru_hidden(onnx_path: Path) -> int:
    """Hidden units per direction of the first GRU node of an exported OCR (its recurrent weight R is
    [directions, 3 × hidden, hidden])."""
    import onnx

    proto = onnx.load(str(onnx_path))
    tensors = _tensors(proto)
    for node in proto.graph.node:
        if node.op_type == "GRU":
            return int(tensors[node.input[2]].shape[-1])
    raise common.WarmStartError(f"{onnx_path} has no GRU node")


def warm_start(model: nn.Module, onnx_path: Path, kind: str) -> dict:
    """Load an exported classifier/OCR ONNX file into `model` (built with the same config). Raises
    common.WarmStartError on any structural or shape mismatch. Returns counts of loaded layers."""
    import onnx

    proto = onnx.load(str(onnx_path))
    meta = {p.key: p.value for p in proto.metadata_props}
    if meta.get("netron_ocr_model", kind) != kind:
        raise common.WarmStartError(f"{onnx_path} is a {meta['netron_ocr_model']} model, not {kind}")
    tensors = _tensors(proto)
    example = example_input(kind, 1)

    linears = _modules_in_execution_order(model, example, nn.Linear)
    onnx_linears = _onnx_linears(proto, tensors)
    if len(linears) != len(onnx_linears):
        raise common.WarmStartError(f"{len(onnx_linears)} Gemm/MatMul layers in ONNX, {len(linears)} in the model")
    for lin, (w, b, name) in zip(linears, onnx_linears):
        if tuple(w.shape) != tuple(lin.weight.shape) or (b is not None and b.shape != (lin.out_features,)):
            raise common.WarmStartError(f"{name}: ONNX {w.shape} vs Linear {tuple(lin.weight.shape)}")
        if b is None and lin.bias is not None:
            raise common.WarmStartError(f"{name}: no bias found in ONNX")

    grus = _gru_layers(model)
    onnx_grus = [n for n in proto.graph.node if n.op_type == "GRU"]
    if len(grus) != len(onnx_grus):
        raise common.WarmStartError(f"{len(onnx_grus)} GRU nodes in ONNX, {len(grus)} GRU layers in the model")
    gru_plan = []
    for (gru, layer), node in zip(grus, onnx_grus):
        attrs = {a.name: a for a in node.attribute}
        if not ("linear_before_reset" in attrs and attrs["linear_before_reset"].i == 1):
            raise common.WarmStartError(f"GRU {node.name}: linear_before_reset must be 1 (PyTorch semantics)")
        w, r = tensors.get(node.input[1]), tensors.get(node.input[2])
        b = tensors.get(node.input[3]) if len(node.input) > 3 and node.input[3] else None
        if w is None or r is None or b is None:
            raise common.WarmStartError(f"GRU {node.name}: W/R/B are not initializers")
        dirs, h = (2 if gru.bidirectional else 1), gru.hidden_size
        in_size = gru.input_size if layer == 0 else h * dirs
        if w.shape != (dirs, 3 * h, in_size) or r.shape != (dirs, 3 * h, h) or b.shape != (dirs, 6 * h):
            raise common.WarmStartError(f"GRU {node.name}: W{w.shape} R{r.shape} B{b.shape} do not fit layer {layer}")
        gru_plan.append((gru, layer, w, r, b, h))

    n_convs = common.warm_start_from_onnx(model, onnx_path, example)

    def zrh_to_rzn(a: np.ndarray, h: int) -> torch.Tensor:
        return torch.from_numpy(np.concatenate([a[h:2 * h], a[:h], a[2 * h:3 * h]]).astype(np.float32))

    with torch.no_grad():
        for lin, (w, b, _) in zip(linears, onnx_linears):
            lin.weight.copy_(torch.from_numpy(np.array(w, np.float32)))
            if b is not None:
                lin.bias.copy_(torch.from_numpy(np.array(b, np.float32)))
        for gru, layer, w, r, b, h in gru_plan:
            for d, suffix in enumerate(["", "_reverse"][: 2 if gru.bidirectional else 1]):
                getattr(gru, f"weight_ih_l{layer}{suffix}").copy_(zrh_to_rzn(w[d], h))
                getattr(gru, f"weight_hh_l{layer}{suffix}").copy_(zrh_to_rzn(r[d], h))
                getattr(gru, f"bias_ih_l{layer}{suffix}").copy_(zrh_to_rzn(b[d][: 3 * h], h))
                getattr(gru, f"bias_hh_l{layer}{suffix}").copy_(zrh_to_rzn(b[d][3 * h:], h))
        temperature = float(meta.get("temperature", "1.0"))
        if temperature != 1.0:
            last = _last_linear(model)
            last.weight.mul_(temperature)
            last.bias.mul_(temperature)
    return {"convs": n_convs, "linears": len(linears), "gru_layers": len(gru_plan), "temperature": temperature}


def parity_inputs(kind: str, data: Path | None, n: int, seed: int = 0) -> list[np.ndarray]:
    """float32 batches for a parity run: crops of `data`'s scenes prepared exactly as at inference (test split
    first), else random normal inputs; batch sizes alternate 1 and 8 to exercise the dynamic batch axis."""
    from train import classifier, eval_classifier, eval_ocr, ocr

    rng = np.random.default_rng(seed)
    x: np.ndarray | None = None
    if data is not None:
        if kind == "classifier":
            from datagen.vocab import load_vocab

            crops = classifier.collect_title_crops(data, load_vocab())
            crops = sorted(crops, key=lambda c: classifier.split_of(c.image.index) != "test")[:n]
            x = common.to_input_tensor(eval_classifier.cut_crops(crops, [classifier.INFER_PAD] * len(crops))).numpy()
        else:
            crops, _ = ocr.collect_text_crops(data, ocr.load_alphabet())
            crops = sorted(crops, key=lambda c: ocr.split_of(c.image.index) != "test")[:n]
            x = ocr.to_ocr_tensor(eval_ocr.cut_crops(crops)).numpy()
    if x is None or len(x) == 0:
        x = rng.standard_normal((n, *example_input(kind, 1).shape[1:])).astype(np.float32)
    out, k = [], 0
    while k < len(x):
        size = 1 if len(out) % 2 == 0 else 8
        out.append(np.ascontiguousarray(x[k:k + size], np.float32))
        k += size
    return out


def tract_parity(onnx_path: Path, inputs: list[np.ndarray], tract_bin: Path | None = None) -> dict:
    """Run `inputs` through onnxruntime and tract (`core/examples/tract_run.rs` via `train.parity.run_tract`:
    `cargo run`, or the prebuilt `tract_bin`); returns the max abs difference of `logits` and the sample count."""
    import shutil
    import tempfile

    from train.parity import run_tract

    ort = common.OrtRunner(onnx_path)
    work = Path(tempfile.mkdtemp(prefix="parity-cls-ocr-"))
    try:
        (work / "in").mkdir()
        (work / "out").mkdir()
        for k, x in enumerate(inputs):
            np.save(work / "in" / f"input_{k:04d}.npy", x)
        if tract_bin is None:
            run_tract(onnx_path, work / "in", work / "out")
        else:
            run_tract(onnx_path, work / "in", work / "out", tract_bin)
        diff = 0.0
        for k, x in enumerate(inputs):
            got = np.load(work / "out" / f"output_{k:04d}_logits.npy")
            want = ort(x)["logits"]
            if got.shape != want.shape:
                raise RuntimeError(f"tract output {got.shape} vs onnxruntime {want.shape}")
            diff = max(diff, float(np.abs(got - want).max()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"tract_vs_ort_max_abs_diff": diff, "samples": int(sum(len(x) for x in inputs))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.export_cls_ocr", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=["classifier", "ocr"], required=True)
    p.add_argument("--ckpt", type=Path, required=True, help="best.pt (or last.pt) of a training run")
    p.add_argument("--out", type=Path, required=True, help="e.g. classifier.onnx / ocr.onnx in models/")
    p.add_argument("--opset", type=int, default=OPSET)
    p.add_argument("--parity", type=int, default=0, metavar="N",
                   help="after export, compare tract with onnxruntime on N inputs (needs cargo)")
    p.add_argument("--parity-data", type=Path, default=None, help="take the parity inputs from these scenes")
    p.add_argument("--tract-bin", type=Path, default=None,
                   help="prebuilt tract_run ($CARGO_TARGET_DIR/release/examples/tract_run) instead of cargo run")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--blend-onnx", type=Path, default=None,
                   help="export (1 − T) × this file's weights + T × the checkpoint's (same architecture)")
    p.add_argument("--blend", type=float, default=1.0, metavar="T", help="the checkpoint's share with --blend-onnx")
    args = p.parse_args(argv)
    summary = export(args.model, args.ckpt, args.out, args.opset, blend_onnx=args.blend_onnx, blend=args.blend)
    if args.parity:
        inputs = parity_inputs(args.model, args.parity_data, args.parity)
        summary.update(tract_parity(args.out, inputs, args.tract_bin))
    for k, v in summary.items():
        print(f"{k}: {v}")
    if args.parity and summary["tract_vs_ort_max_abs_diff"] > args.tol:
        print(f"FAIL: tract differs from onnxruntime by more than {args.tol}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
