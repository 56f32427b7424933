"""Evaluate the OCR on held-out scenes with the exact inference preprocessing.

    python -m train.eval_ocr --data DIR --ckpt CKPT_DIR/best.pt [--onnx ../models/ocr.onnx]
        [--variants fp32,int8,fp16] [--split test] [--json report.json]

Crops are cut from the full-resolution grey source images with `ocr.preprocess_text` (box + 0.15 × height, PIL
bilinear to height 48) and decoded greedily (`ocr.ctc_greedy_decode`). Reports exact-match rate, character
accuracy, the most frequent character confusions, and breakdowns per kind (shape / name / weight) and per text-box
height (labels under 6 px high come from Netron zoomed far out and are mostly unreadable). With `--onnx`, the same
crops go through onnxruntime for each variant (fp32 file, int8 dynamic quantization, fp16 with I/O kept fp32).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torch.nn import functional as F

from train import common, ocr
from train.eval_classifier import make_variant


def cut_crops(crops: list[ocr.TextCrop], skew: bool = True, pad_frac: float = ocr.INFER_PAD_FRAC) -> list[np.ndarray]:
    """Inference crops of the truth boxes, padded by `pad_frac` × box height; with `skew`, each image's crops are
    cut at its `estimate_skew` (on `ocr.canvas_region`, the truth canvas grown by 4%, standing in for the cropper's
    padded crop)."""
    out: list[np.ndarray | None] = [None] * len(crops)
    by_image: dict[Path, list[int]] = {}
    for i, c in enumerate(crops):
        by_image.setdefault(c.image.image_path, []).append(i)
    for path, ids in by_image.items():
        img = crops[ids[0]].image
        with Image.open(path) as im:
            grey = im.convert("RGB").convert("L")
            angle = 0.0
            if skew:
                angle = ocr.estimate_skew(np.asarray(grey), ocr.canvas_region(common.load_truth(img.truth_path)))
            for i in ids:
                out[i] = ocr.preprocess_text(grey, crops[i].box, pad_frac=pad_frac, skew_deg=angle)
    return out


def ort_logits(path: Path, images: list[np.ndarray], batch: int = 128, width_margin: int | None = None) -> np.ndarray:
    """Logits [N, 80, C] of the crops at the full 320 columns, or with `width_margin` each crop at
    `ocr.run_width` as the Rust reader runs it (a copy of the model with a free input width). A narrower crop
    has `W / 4` steps; its rows are followed by certain-blank rows up to 80 (blank logit 0, the others −1e4), which
    leave the greedy reading, its path probability and every CTC likelihood as they are."""
    if width_margin is None:
        run = common.OrtRunner(path)
        return np.concatenate([run(ocr.to_ocr_tensor(images[s:s + batch]))["logits"]
                               for s in range(0, len(images), batch)])
    import onnx

    model = onnx.load(path)
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_param = "W"
    model.graph.output[0].type.tensor_type.shape.dim[1].dim_param = "T"
    with tempfile.TemporaryDirectory() as work:
        free = Path(work) / "ocr_free_width.onnx"
        onnx.save(model, free)
        run = common.OrtRunner(free)
        groups: dict[int, list[int]] = {}
        for i, im in enumerate(images):
            groups.setdefault(ocr.run_width(im.shape[1], width_margin), []).append(i)
        out = None
        for width, ids in groups.items():
            for s in range(0, len(ids), batch):
                part = ids[s:s + batch]
                lg = run(ocr.to_ocr_tensor([images[i] for i in part]).numpy()[..., :width])["logits"]
                if out is None:
                    out = np.full((len(images), ocr.TIME_STEPS, lg.shape[2]), -1e4, np.float32)
                    out[:, :, 0] = 0.0
                out[part, :lg.shape[1]] = lg
    return out


def log_likelihoods(log_probs: torch.Tensor, candidates: list[list[int]]) -> torch.Tensor:
    """CTC log P(candidate | crop) for each candidate, `log_probs` [T, C] log-softmax (`read::ctc_log_likelihood`)."""
    n, steps = len(candidates), log_probs.shape[0]
    targets = torch.tensor([c for cand in candidates for c in cand], dtype=torch.long)
    lengths = torch.tensor([len(c) for c in candidates], dtype=torch.long)
    loss = F.ctc_loss(log_probs.unsqueeze(1).expand(steps, n, log_probs.shape[1]), targets,
                      torch.full((n,), steps, dtype=torch.long), lengths, blank=0, reduction="none")
    return -loss


def reread_decode(first: np.ndarray, extra: list[np.ndarray], alphabet: ocr.Alphabet, below: float,
                  beam: int = 1) -> list[str]:
    """The Rust reader's choice of text (`read::TextReader::read`): crops whose greedy path probability (product
    over steps of the top softmax probability) is under `below` are also read from `extra` (`ReadParams::
    reread_below`). A box's candidates are the greedy readings of its crops and, with `beam` > 1, the `beam` best
    labelings of each crop's prefix beam search (`ocr.ctc_beam_ids`, `ReadParams::beam_width`); the text is the
    candidate with the highest mean CTC log-likelihood over the box's crops (ties: the first crop's greedy
    reading). `first` [N, T, C] and each of `extra` are the logits of the same boxes with other paddings."""
    lps = [torch.log_softmax(torch.from_numpy(np.asarray(x, np.float64)), dim=-1) for x in [first, *extra]]
    greedy = [ocr.ctc_greedy_ids(x) for x in [first, *extra]]
    confidence = torch.exp(lps[0].max(dim=-1).values.sum(dim=-1))
    out = []
    for i in range(first.shape[0]):
        used = lps[:1]
        if extra and confidence[i] < below:
            used = lps
        cands: list[list[int]] = []
        for k, lp in enumerate(used):
            found = [greedy[k][i]]
            if beam > 1:
                found += [ids for ids, _ in ocr.ctc_beam_ids(lp[i].numpy(), beam)]
            for ids in found:
                if ids not in cands:
                    cands.append(ids)
        best = cands[0]
        if len(cands) > 1:
            mean = sum(log_likelihoods(lp[i], cands) for lp in used) / len(used)
            best = cands[int(torch.argmax(mean))]
        out.append(alphabet.decode(best))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.eval_ocr", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--ckpt", type=Path, default=None)
    p.add_argument("--onnx", type=Path, default=None)
    p.add_argument("--variants", type=str, default="fp32", help="comma list of fp32,int8,fp16 (with --onnx)")
    p.add_argument("--alphabet", type=Path, default=ocr.ALPHABET_PATH)
    p.add_argument("--split", choices=["test", "val", "train", "all"], default="test")
    p.add_argument("--max", type=int, default=None)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--titles", action="store_true", help="also node titles as drawn (kind `title`)")
    p.add_argument("--no-skew", action="store_true", help="axis-aligned crops only (pre-session-7 preprocessing)")
    p.add_argument("--reread-below", type=float, default=None,
                   help="also report the Rust reader's re-reading (with --onnx, fp32): boxes whose greedy path "
                        "probability is under this are read again with --reread-pads (core default 0.5)")
    p.add_argument("--reread-pads", type=str, default="0.3", help="comma list of paddings × box height")
    p.add_argument("--beam", type=int, default=None,
                   help="also report prefix beam search with this width (with --onnx, fp32; `ReadParams::beam_width`): "
                        "each crop's text is the likeliest of its greedy reading and its beam's labelings")
    p.add_argument("--width-margin", type=int, default=None,
                   help="onnxruntime runs each crop at the Rust reader's width (`ocr.run_width` with this margin, "
                        "`ReadParams::width_margin`, off in the core by default) instead of 320 columns")
    args = p.parse_args(argv)
    if args.ckpt is None and args.onnx is None:
        p.error("give --ckpt and/or --onnx")
    common.set_threads(args.threads)
    alphabet = ocr.load_alphabet(args.alphabet)
    crops, skipped = ocr.collect_text_crops(args.data, alphabet, titles=args.titles)
    crops = [c for c in crops if args.split == "all" or ocr.split_of(c.image.index) == args.split]
    if args.max and len(crops) > args.max:
        keep = sorted(np.random.default_rng(0).choice(len(crops), args.max, replace=False).tolist())
        crops = [crops[i] for i in keep]
    if not crops:
        raise SystemExit(f"no {args.split} text crops under {args.data}")
    t0 = time.time()
    images = cut_crops(crops, skew=not args.no_skew)
    refs = [c.text for c in crops]
    kinds = [c.kind for c in crops]
    heights = [c.height for c in crops]
    sources = [c.image.kind for c in crops]
    report: dict = {"data": str(args.data), "split": args.split, "n": len(crops), "skipped_in_dataset": dict(skipped),
                    "crop_seconds": round(time.time() - t0, 1)}
    if args.ckpt is not None:
        state = torch.load(args.ckpt, map_location="cpu", weights_only=False)
        model = ocr.build_model(state["config"])
        model.load_state_dict(state["model"])
        hyps = ocr.predict(model, images, alphabet)
        report["pytorch"] = ocr.text_metrics(refs, hyps, kinds, heights, sources=sources)
        report["pytorch"]["examples_wrong"] = [{"true": r, "pred": h} for r, h in zip(refs, hyps) if r != h][:20]
    if args.onnx is not None:
        with tempfile.TemporaryDirectory() as work:
            fp32_logits = None
            for variant in args.variants.split(","):
                path = make_variant(args.onnx, variant, Path(work))
                t1 = time.time()
                logits = ort_logits(path, images, width_margin=args.width_margin)
                if variant == "fp32":
                    fp32_logits = logits
                m = ocr.text_metrics(refs, ocr.ctc_greedy_decode(logits, alphabet), kinds, heights,
                                     sources=sources)
                m["seconds"] = round(time.time() - t1, 2)
                m["bytes"] = path.stat().st_size
                report[f"onnx_{variant}"] = m
        first = None
        if args.reread_below is not None or args.beam:
            first = (fp32_logits if fp32_logits is not None
                     else ort_logits(args.onnx, images, width_margin=args.width_margin))
        if args.beam:
            t1 = time.time()
            hyps = reread_decode(first, [], alphabet, 0.0, beam=args.beam)
            m = ocr.text_metrics(refs, hyps, kinds, heights, sources=sources)
            m["seconds"] = round(time.time() - t1, 2)
            report[f"onnx_beam{args.beam}"] = m
        if args.reread_below is not None:
            t1 = time.time()
            extra = [ort_logits(args.onnx, cut_crops(crops, skew=not args.no_skew, pad_frac=float(pad)),
                                width_margin=args.width_margin)
                     for pad in args.reread_pads.split(",")]
            for beam in sorted({1, args.beam or 1}):
                hyps = reread_decode(first, extra, alphabet, args.reread_below, beam=beam)
                m = ocr.text_metrics(refs, hyps, kinds, heights, sources=sources)
                m["seconds"] = round(time.time() - t1, 2)
                suffix = f"_beam{beam}" if beam > 1 else ""
                report[f"onnx_reread_{args.reread_below}_{args.reread_pads}{suffix}"] = m
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    return 0


def height_line(per_height: dict) -> str:
    return ", ".join(f"{k} {v['exact']:.4f} (n={v['n']})" if v["n"] else f"{k} - (n=0)" for k, v in per_height.items())


def print_report(report: dict) -> None:
    print(f"{report['n']} text crops ({report['split']} split of {report['data']}); "
          f"skipped in dataset: {report['skipped_in_dataset']}")
    for key, m in report.items():
        if not isinstance(m, dict) or "exact" not in m:
            continue
        print(f"{key:12s} exact {m['exact']:.4f} char_acc {m['char_acc']:.4f} (n={m['n']})")
        print("  per kind: " + ", ".join(f"{k} {v.get('exact', float('nan')):.4f} (n={v['n']})"
                                         for k, v in m.get("per_kind", {}).items()))
        print("  per height: " + height_line(m.get("per_height", {})))
        for src, v in m.get("per_source", {}).items():
            print(f"  {src}: exact {v['exact']:.4f} (n={v['n']}); per height: " + height_line(v.get("per_height", {})))
        print("  confusions: " + ", ".join(f"{c['true']}→{c['pred']} ×{c['count']}" for c in m["confusions"][:10]))


if __name__ == "__main__":
    sys.exit(main())
