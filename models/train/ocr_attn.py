"""The issue's attention OCR, trained to answer whether the shipped CTC OCR is "as good": 8×8 patches, a 2-layer
Transformer encoder and a 2-layer GRU decoder with cross-attention, exported as two graphs so that the greedy
loop runs outside the graph.

Same input as the CTC OCR (`ocr.to_ocr_tensor`): float32 `image` [N, 1, 48, 320] in [−1, 1].

Classes: 0 is both the start token fed at the first step and the end token the decoder emits after the text;
class i ≥ 1 is `symbols[i − 1]` of `models/ocr_alphabet.json` (the CTC classes, with the blank as start/end).

Graphs (`python -m train.ocr_attn export`):
- encoder: `image` [N, 1, 48, 320] → `memory` [N, 240, D]: the 6 × 40 patches in row-major order;
- decoder step: `memory` [N, 240, D], `prev` [N, C] (one-hot float32 of the previous class), `hidden` [2, N, H]
  (zeros at the first step) → `logits` [N, C], `hidden_out` [2, N, H].

Greedy decoding (`greedy_ids`, run over PyTorch by `AttnOcrNet.greedy` and over the two graphs by
`OrtAttnReader`): start from class 0 and zero hidden state, feed back the argmax, stop at class 0 or after
`ocr.MAX_LEN` symbols.

Training: `python -m train.ocr --arch attention …` (teacher forcing, cross-entropy over the symbols and the end
token); everything else (data, sampling, augmentation, validation) is the CTC trainer's.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from train import common, ocr

PATCH = 8
GRID_H, GRID_W = ocr.OCR_H // PATCH, ocr.OCR_W // PATCH
TOKENS = GRID_H * GRID_W
DEFAULT_CONFIG = {"arch": "attention", "dim": 128, "heads": 4, "ff": 256, "enc_layers": 2, "hidden": 128,
                  "embed": 64, "dec_layers": 2}
ENCODER_INPUTS, ENCODER_OUTPUTS = ("image",), ("memory",)
DECODER_INPUTS, DECODER_OUTPUTS = ("memory", "prev", "hidden"), ("logits", "hidden_out")


class EncoderLayer(nn.Module):
    """Pre-norm Transformer layer written with Linear, MatMul, Softmax and LayerNormalization only (ops tract runs;
    PyTorch's fused encoder layer exports differently in eval mode)."""

    def __init__(self, dim: int, heads: int, ff: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ff1, self.ff2 = nn.Linear(dim, ff), nn.Linear(ff, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, t = x.shape[0], x.shape[1]
        qkv = self.qkv(self.norm1(x)).reshape(n, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = torch.softmax(q @ k.transpose(-1, -2) * (1.0 / math.sqrt(self.head_dim)), dim=-1)
        x = x + self.proj((a @ v).transpose(1, 2).reshape(n, t, self.heads * self.head_dim))
        return x + self.ff2(F.relu(self.ff1(self.norm2(x))))


class GruCell(nn.Module):
    """One GRU layer step, PyTorch's gate equations (r, z, n), as plain matrix products."""

    def __init__(self, inputs: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.ih = nn.Linear(inputs, 3 * hidden)
        self.hh = nn.Linear(hidden, 3 * hidden)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        k = self.hidden
        gx, gh = self.ih(x), self.hh(h)
        xr, xz, xn = gx[:, :k], gx[:, k:2 * k], gx[:, 2 * k:]
        hr, hz, hn = gh[:, :k], gh[:, k:2 * k], gh[:, 2 * k:]
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1.0 - z) * n + z * h


class AttnOcrNet(nn.Module):
    """Encoder [N, 1, 48, 320] → memory [N, 240, dim]; `step` runs one decoder step (see the module doc)."""

    def __init__(self, num_classes: int, dim: int = 128, heads: int = 4, ff: int = 256, enc_layers: int = 2,
                 hidden: int = 128, embed: int = 64, dec_layers: int = 2):
        super().__init__()
        if dec_layers != 2:
            raise ValueError("the decoder step graph carries two GRU layers")
        self.num_classes, self.hidden = num_classes, hidden
        self.patch = nn.Conv2d(1, dim, PATCH, stride=PATCH)
        self.pos = nn.Parameter(torch.randn(1, TOKENS, dim) * 0.02)
        self.layers = nn.ModuleList([EncoderLayer(dim, heads, ff) for _ in range(enc_layers)])
        self.norm = nn.LayerNorm(dim)
        self.embed = nn.Linear(num_classes, embed, bias=False)  # applied to one-hot rows: an embedding table
        self.query = nn.Linear(hidden, dim)
        self.scale = 1.0 / math.sqrt(dim)
        self.gru1 = GruCell(embed + dim, hidden)
        self.gru2 = GruCell(hidden, hidden)
        self.out = nn.Linear(hidden + dim, num_classes)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        m = self.patch(x).flatten(2).transpose(1, 2) + self.pos
        for layer in self.layers:
            m = layer(m)
        return self.norm(m)

    def step(self, memory: torch.Tensor, prev: torch.Tensor, hidden: torch.Tensor):
        """(memory [N, T, dim], prev one-hot [N, C], hidden [2, N, H]) → (logits [N, C], hidden [2, N, H])."""
        q = self.query(hidden[1]).unsqueeze(1)  # N×1×dim, from the top layer's previous state
        a = torch.softmax((q @ memory.transpose(1, 2)) * self.scale, dim=-1)
        ctx = (a @ memory).squeeze(1)
        h1 = self.gru1(torch.cat([self.embed(prev), ctx], dim=-1), hidden[0])
        h2 = self.gru2(h1, hidden[1])
        return self.out(torch.cat([h2, ctx], dim=-1)), torch.stack([h1, h2])

    def teacher_forced(self, x: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        """Logits [N, L, C] for input classes [N, L] (class 0 first, then the text)."""
        memory = self.encode(x)
        hidden = memory.new_zeros(2, x.shape[0], self.hidden)
        onehot = F.one_hot(inputs, self.num_classes).to(memory.dtype)
        out = []
        for t in range(inputs.shape[1]):
            logits, hidden = self.step(memory, onehot[:, t], hidden)
            out.append(logits)
        return torch.stack(out, dim=1)

    def greedy(self, x: torch.Tensor, max_len: int = ocr.MAX_LEN) -> list[list[int]]:
        """Greedy class ids per row (end token excluded), `greedy_ids` over this model."""
        def step(memory, prev, hidden):
            logits, hidden = self.step(*(torch.from_numpy(a) for a in (memory, prev, hidden)))
            return logits.numpy(), hidden.numpy()

        with torch.no_grad():
            return greedy_ids(self.encode(x).numpy(), step, self.num_classes, self.hidden, max_len)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The encoder: what the encoder graph exports."""
        return self.encode(x)


def greedy_ids(memory: np.ndarray, step, num_classes: int, hidden_size: int,
               max_len: int = ocr.MAX_LEN) -> list[list[int]]:
    """The greedy loop outside the graphs, as the Rust reader would run it: `step(memory, prev, hidden)` maps
    float32 arrays (memory [N, T, D], one-hot prev [N, C], hidden [2, N, H]) to (logits [N, C], hidden). From
    class 0 and a zero hidden state, each row takes the argmax until class 0 or `max_len` symbols; finished rows
    leave the batch. Returns the class ids per row, end token excluded."""
    n = len(memory)
    hidden = np.zeros((2, n, hidden_size), np.float32)
    prev = np.zeros(n, np.int64)
    ids: list[list[int]] = [[] for _ in range(n)]
    live = np.arange(n)
    for _ in range(max_len + 1):
        logits, hidden = step(memory, np.eye(num_classes, dtype=np.float32)[prev], hidden)
        prev = logits.argmax(-1)
        keep = prev != 0
        for j, k in zip(live[keep], prev[keep]):
            ids[j].append(int(k))
        if not keep.any():
            break
        live, prev, memory, hidden = live[keep], prev[keep], memory[keep], hidden[:, keep]
    return [row[:max_len] for row in ids]


def build_model(config: dict) -> AttnOcrNet:
    return AttnOcrNet(config["num_classes"], config["dim"], config["heads"], config["ff"], config["enc_layers"],
                      config["hidden"], config["embed"], config["dec_layers"])


def teacher_targets(targets: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Concatenated CTC-style targets and their lengths → (decoder inputs [N, L+1]: 0 then the text, padded with 0;
    labels [N, L+1]: the text then 0, padded with −100 = ignored)."""
    n, longest = len(lengths), int(lengths.max()) if len(lengths) else 0
    inputs = torch.zeros(n, longest + 1, dtype=torch.long)
    labels = torch.full((n, longest + 1), -100, dtype=torch.long)
    start = 0
    for i, length in enumerate(lengths.tolist()):
        text = targets[start:start + length]
        inputs[i, 1:length + 1] = text
        labels[i, :length] = text
        labels[i, length] = 0
        start += length
    return inputs.to(targets.device), labels.to(targets.device)


def loss(model: AttnOcrNet, x: torch.Tensor, targets: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy per predicted class (symbols and the end token), teacher forced."""
    inputs, labels = teacher_targets(targets, lengths)
    logits = model.teacher_forced(x, inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)


def predict(model: AttnOcrNet, crops: list[np.ndarray], alphabet: ocr.Alphabet, batch: int = 128) -> list[str]:
    model.eval()
    out = []
    with torch.no_grad():
        for s in range(0, len(crops), batch):
            out += [alphabet.decode(ids) for ids in model.greedy(ocr.to_ocr_tensor(crops[s:s + batch]))]
    return out


# ----------------------------------------------------------------------------------------------------------------
# Export and the onnxruntime reader


class _Step(nn.Module):
    def __init__(self, model: AttnOcrNet):
        super().__init__()
        self.model = model

    def forward(self, memory, prev, hidden):
        return self.model.step(memory, prev, hidden)


def export(model: AttnOcrNet, out_dir: Path, opset: int = 17) -> tuple[Path, Path]:
    """Write `ocr_attn_encoder.onnx` and `ocr_attn_decoder.onnx` to `out_dir` (dynamic batch); raises if an op is
    outside `export_cls_ocr.TRACT_OPS`."""
    import onnx

    from train.export_cls_ocr import TRACT_OPS

    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    enc, dec = out_dir / "ocr_attn_encoder.onnx", out_dir / "ocr_attn_decoder.onnx"
    common.export_onnx(model, torch.zeros(2, 1, ocr.OCR_H, ocr.OCR_W), enc, ENCODER_INPUTS,
                       ENCODER_OUTPUTS, opset=opset)
    dim = model.norm.normalized_shape[0]
    example = (torch.randn(2, TOKENS, dim), F.one_hot(torch.tensor([0, 3]), model.num_classes).float(),
               torch.zeros(2, 2, model.hidden))
    dyn = {"memory": {0: "N"}, "prev": {0: "N"}, "hidden": {1: "N"}, "logits": {0: "N"}, "hidden_out": {1: "N"}}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(_Step(model), example, str(dec), input_names=list(DECODER_INPUTS),
                          output_names=list(DECODER_OUTPUTS), opset_version=opset, dynamic_axes=dyn,
                          do_constant_folding=True, dynamo=False)
    for path in (enc, dec):
        proto = onnx.load(str(path))
        onnx.checker.check_model(proto, full_check=True)
        foreign = sorted({n.op_type for n in proto.graph.node} - TRACT_OPS)
        if foreign:
            raise RuntimeError(f"{path}: ops outside the tract allow-list: {foreign}")
    return enc, dec


class OrtAttnReader:
    """The two exported graphs in onnxruntime (one thread each), decoded greedily in Python as the Rust loop
    would: `read(x)` with float32 [N, 1, 48, 320] → class ids per row."""

    def __init__(self, encoder: Path, decoder: Path, threads: int = 1):
        self.enc = common.OrtRunner(encoder, threads).session
        self.dec = common.OrtRunner(decoder, threads).session
        self.num_classes = self.dec.get_inputs()[1].shape[1]
        self.hidden = self.dec.get_inputs()[2].shape[2]

    def read(self, x: np.ndarray, max_len: int = ocr.MAX_LEN) -> list[list[int]]:
        def step(memory, prev, hidden):
            return tuple(self.dec.run(None, {"memory": memory, "prev": prev, "hidden": hidden}))

        memory = self.enc.run(None, {"image": x})[0]
        return greedy_ids(memory, step, self.num_classes, self.hidden, max_len)


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m train.ocr_attn", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export", help="export a trained checkpoint as the two graphs and check their parity")
    e.add_argument("--ckpt", type=Path, required=True)
    e.add_argument("--out-dir", type=Path, required=True)
    e.add_argument("--parity-data", type=Path, default=None, help="dataset whose test crops check the parity")
    e.add_argument("--parity", type=int, default=64, help="crops for the parity check")
    e.add_argument("--tract-bin", type=Path, default=None, help="prebuilt tract_run for the tract parity")
    e.add_argument("--ctc-onnx", type=Path, default=None, help="also time this CTC OCR per crop in the same run")
    e.add_argument("--json", type=Path, default=None)
    return p.parse_args(argv)


def parity_crops(data: Path | None, n: int, alphabet: ocr.Alphabet) -> torch.Tensor:
    if data is None:
        return torch.rand(n, 1, ocr.OCR_H, ocr.OCR_W) * 2 - 1
    from train.eval_ocr import cut_crops

    crops, _ = ocr.collect_text_crops(data, alphabet)
    crops = [c for c in crops if ocr.split_of(c.image.index) == "test"]
    keep = sorted(np.random.default_rng(0).choice(len(crops), min(n, len(crops)), replace=False).tolist())
    return ocr.to_ocr_tensor(cut_crops([crops[i] for i in keep]))


def export_main(args) -> int:
    alphabet = ocr.load_alphabet()
    state = torch.load(args.ckpt, map_location="cpu", weights_only=False)
    model = build_model(state["config"])
    model.load_state_dict(state["model"])
    model.eval()
    enc, dec = export(model, args.out_dir)
    x = parity_crops(args.parity_data, args.parity, alphabet)
    with torch.no_grad():
        memory = model.encode(x)
        want_ids = model.greedy(x)
        hidden = torch.randn(2, len(x), model.hidden) * 0.5
        prev = F.one_hot(torch.randint(0, model.num_classes, (len(x),)), model.num_classes).float()
        want_logits, want_hidden = model.step(memory, prev, hidden)
    reader = OrtAttnReader(enc, dec)
    ort_memory = reader.enc.run(None, {"image": x.numpy()})[0]
    ort_logits, ort_hidden = reader.dec.run(None, {"memory": memory.numpy(), "prev": prev.numpy(),
                                                   "hidden": hidden.numpy()})
    got_ids = reader.read(x.numpy())
    summary = {
        "params": common.count_params(model),
        "encoder_bytes": enc.stat().st_size, "decoder_bytes": dec.stat().st_size,
        "torch_vs_ort_memory": float(np.abs(ort_memory - memory.numpy()).max()),
        "torch_vs_ort_step": float(max(np.abs(ort_logits - want_logits.numpy()).max(),
                                       np.abs(ort_hidden - want_hidden.numpy()).max())),
        "greedy_texts_equal": sum(a == b for a, b in zip(want_ids, got_ids)), "samples": len(x),
    }
    from train.parity import run_tract

    with tempfile.TemporaryDirectory() as work:
        w = Path(work)
        for sub in ("enc_in", "enc_out", "dec_in", "dec_out"):
            (w / sub).mkdir()
        np.save(w / "enc_in" / "input_image.npy", x.numpy())
        np.save(w / "dec_in" / "input_memory.npy", memory.numpy())
        np.save(w / "dec_in" / "input_prev.npy", prev.numpy())
        np.save(w / "dec_in" / "input_hidden.npy", hidden.numpy())
        run_tract(enc, w / "enc_in", w / "enc_out", args.tract_bin)
        run_tract(dec, w / "dec_in", w / "dec_out", args.tract_bin)
        t_memory = np.load(w / "enc_out" / "output_memory.npy")
        t_logits = np.load(w / "dec_out" / "output_logits.npy")
        t_hidden = np.load(w / "dec_out" / "output_hidden_out.npy")
    summary["tract_vs_ort_memory"] = float(np.abs(t_memory - ort_memory).max())
    summary["tract_vs_ort_step"] = float(max(np.abs(t_logits - ort_logits).max(), np.abs(t_hidden - ort_hidden).max()))

    def ms_per_crop(run) -> float:
        """Thread CPU time of `run` on each crop alone (batch 1), after one warm-up call."""
        run(x[:1].numpy())
        t0 = time.thread_time()
        for i in range(len(x)):
            run(x[i:i + 1].numpy())
        return round(1000 * (time.thread_time() - t0) / len(x), 2)

    summary["ort_ms_per_crop"] = ms_per_crop(reader.read)
    if args.ctc_onnx is not None:
        summary["ctc_ort_ms_per_crop"] = ms_per_crop(common.OrtRunner(args.ctc_onnx))
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    common.set_threads(1)
    if args.command == "export":
        return export_main(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
