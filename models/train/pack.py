"""Packs: the classifier's or the OCR's training crops in a few self-contained files, for a machine without the
dataset.

A GPU machine lent for a few minutes (METRICS.md, session 21) is reached through a copy of at most ~64 MiB per
call, far less than the dataset (1.3 GB) or its crop caches (~1.6 GB of title regions, ~0.8 GB of text regions).
A pack holds the same cached regions as `classifier.TitleCache` (title box plus a 16 px margin, RGB) or
`ocr.TextCache` (text box plus 0.5 × its height, grey), native resolution, each encoded on its own: screenshots as
PNG (lossless), photos as JPEG (lossy, quality `--photo-quality`; the photos already went through JPEG once and
training re-compresses a share of samples anyway). Shards are cut at scene boundaries so that each is usable
alone.

    python -m train.pack --data DATA --out PACK [--model classifier|ocr] [--splits train,val]
        [--photo-quality 90] [--shot-fraction 1] [--max-val N] [--shard-mb 48]

`PackedTitles(PACK)` reads every `titles-*.npz` under PACK back and offers what training takes from a
`TitleCache`: `.crops` (`classifier.TitleCrop`s whose images point nowhere) and `.get(i)` → (region pixels
h×w×3 RGB, region rectangle in source pixels, (image width, image height)). `PackedTexts(PACK)` does the same for
`texts-*.npz` and a `TextCache` (`.crops` are `ocr.TextCrop`s, regions grey h×w), and adds `.skews`, each crop's
image skew (`ocr.image_skews`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from train import classifier, common, ocr

TITLE_GLOB, TEXT_GLOB = "titles-*.npz", "texts-*.npz"


def encode_region(part: np.ndarray, kind: str, photo_quality: int) -> tuple[bytes, str]:
    """RGB or grey region → (encoded bytes, "png" | "jpg"): PNG for screenshots, JPEG at `photo_quality` for
    photos."""
    if kind == "photo":
        return common.encode_image(part, "jpg", int(photo_quality)), "jpg"
    return common.encode_image(part, "png", 9), "png"


def decode_region(data: np.ndarray, grey: bool = False) -> np.ndarray:
    return common.decode_image(data, "region in a pack", grey)


def write_shard(path: Path, blobs: list[bytes], records: list[dict]) -> int:
    offsets = np.zeros(len(blobs) + 1, np.int64)
    offsets[1:] = np.cumsum([len(b) for b in blobs])
    blob = np.frombuffer(b"".join(blobs), np.uint8)
    meta = np.frombuffer(json.dumps(records).encode(), np.uint8)
    tmp = path.with_name(f".{path.name}.tmp.npz")
    np.savez_compressed(tmp, blob=blob, offsets=offsets, meta=meta)
    tmp.replace(path)
    return path.stat().st_size


def keep_scenes(crops, splits: set[str], shot_fraction: float, max_val: int | None, seed: int) -> list[int]:
    """Indices of the `crops` (anything with `.image`) that a pack keeps: those of `splits`; of the screenshots,
    those of scenes drawn with probability `shot_fraction`; of the validation crops, at most `max_val` drawn at
    random. Drawn with `seed`."""
    rng = np.random.default_rng(seed)
    ids = [i for i, c in enumerate(crops) if classifier.split_of(c.image.index) in splits]
    keep_shots = {k: bool(rng.random() < shot_fraction) for k in sorted({crops[i].image.index for i in ids})}
    ids = [i for i in ids if crops[i].image.kind == "photo" or keep_shots[crops[i].image.index]]
    val = [i for i in ids if classifier.split_of(crops[i].image.index) == "val"]
    if max_val is not None and len(val) > max_val:
        drop = set(val) - set(rng.choice(val, max_val, replace=False).tolist())
        ids = [i for i in ids if i not in drop]
    return ids


def write_shards(out: Path, prefix: str, crops, cache, records: list[dict], shard_mb: float,
                 photo_quality: int) -> list[tuple[Path, int, int]]:
    """Encode `cache.get(i)` of every crop i into `out/{prefix}-NN.npz`, with `records[i]` plus the region, the
    image size and the format; a new shard starts at the first scene once `shard_mb` MB of encoded regions are
    written (before the shard is deflated, which shrinks it further)."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(f"{prefix}-*.npz"):
        old.unlink()
    shards, blobs, meta, size = [], [], [], 0

    def flush():
        nonlocal blobs, meta, size
        path = out / f"{prefix}-{len(shards):02d}.npz"
        shards.append((path, len(meta), write_shard(path, blobs, meta)))
        blobs, meta, size = [], [], 0

    for i, crop in enumerate(crops):
        if size >= shard_mb * 1e6 and crop.image.index != crops[i - 1].image.index:
            flush()
        part, region, (w, h) = cache.get(i)
        data, fmt = encode_region(np.asarray(part), crop.image.kind, photo_quality)
        blobs.append(data)
        size += len(data)
        meta.append(dict(records[i], region=list(region), size=[w, h], fmt=fmt))
    flush()
    return shards


def build_pack(data_dir: Path, out: Path, splits: set[str], photo_quality: int = 90, shot_fraction: float = 1.0,
               shard_mb: float = 48.0, seed: int = 0, cache_dir: Path | None = None, progress: bool = True,
               max_val: int | None = None) -> list[tuple[Path, int, int]]:
    """Write the title pack of `data_dir` (the crops of `classifier.collect_title_crops` kept by `keep_scenes`) to
    `out/titles-NN.npz`, cutting the regions through the title cache `cache_dir` (default: the one training
    uses). Returns (path, crops, bytes) per shard."""
    vocab = classifier.load_vocab(classifier.VOCAB_PATH)
    crops = classifier.collect_title_crops(data_dir, vocab)
    crops = [crops[i] for i in keep_scenes(crops, splits, shot_fraction, max_val, seed)]
    if not crops:
        raise SystemExit(f"no title crops of splits {sorted(splits)} under {data_dir}")
    cache = classifier.TitleCache(crops, cache_dir or common.default_cache_dir(data_dir, "classifier"),
                                  progress=progress)
    records = [{"k": c.image.index, "kind": c.image.kind, "box": list(c.box), "label": c.label, "theme": c.theme}
               for c in crops]
    return write_shards(out, "titles", crops, cache, records, shard_mb, photo_quality)


def build_text_pack(data_dir: Path, out: Path, splits: set[str], photo_quality: int = 90,
                    shot_fraction: float = 1.0, shard_mb: float = 48.0, seed: int = 0,
                    cache_dir: Path | None = None, progress: bool = True,
                    max_val: int | None = None) -> list[tuple[Path, int, int]]:
    """Write the OCR pack of `data_dir` (the crops of `ocr.collect_text_crops` with titles, kept by `keep_scenes`)
    to `out/texts-NN.npz`, cutting the regions through the text cache `cache_dir` (default: the one
    `train.ocr --titles` uses) and storing each image's skew. Returns (path, crops, bytes) per shard."""
    alphabet = ocr.load_alphabet()
    crops, _ = ocr.collect_text_crops(data_dir, alphabet, titles=True)
    crops = [crops[i] for i in keep_scenes(crops, splits, shot_fraction, max_val, seed)]
    if not crops:
        raise SystemExit(f"no text crops of splits {sorted(splits)} under {data_dir}")
    cache_dir = cache_dir or common.default_cache_dir(data_dir, "ocr-titles")
    cache = ocr.TextCache(crops, cache_dir, progress=progress)
    skews = ocr.image_skews([c.image for c in crops], cache_dir, progress=progress)
    records = [{"k": c.image.index, "kind": c.image.kind, "box": list(c.box), "text": c.text, "tkind": c.kind,
                "skew": skews[c.image.key]} for c in crops]
    return write_shards(out, "texts", crops, cache, records, shard_mb, photo_quality)


class PackReader:
    """The records and encoded regions of every `glob` shard under `pack_dir`, in shard order."""

    def __init__(self, pack_dir: Path, glob: str, grey: bool):
        self.grey = grey
        self.records: list[dict] = []
        self.entries: list[tuple[np.ndarray, int, int]] = []
        paths = sorted(Path(pack_dir).glob(glob))
        if not paths:
            raise common.DatasetError(f"no {glob} under {pack_dir}")
        for path in paths:
            with np.load(path) as z:
                blob, offsets = z["blob"], z["offsets"]
                records = json.loads(z["meta"].tobytes().decode())
            if len(offsets) != len(records) + 1 or offsets[-1] != len(blob):
                raise common.DatasetError(f"{path}: offsets do not match its records")
            for j, r in enumerate(records):
                self.records.append(r)
                self.entries.append((blob, int(offsets[j]), int(offsets[j + 1])))

    @staticmethod
    def image_of(pack_dir: Path, r: dict) -> common.SceneImage:
        fake = Path(pack_dir) / f"{r['k']:06d}.{r['kind']}"
        return common.SceneImage(int(r["k"]), r["kind"], fake, fake)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, i: int):
        blob, start, end = self.entries[i]
        r = self.records[i]
        return decode_region(blob[start:end], self.grey), tuple(r["region"]), tuple(r["size"])


class PackedTitles(PackReader):
    """The title crops of every `titles-*.npz` under `pack_dir`, in shard order; `get(i)` decodes region i."""

    def __init__(self, pack_dir: Path):
        super().__init__(pack_dir, TITLE_GLOB, grey=False)
        self.crops = [classifier.TitleCrop(self.image_of(pack_dir, r), tuple(r["box"]), int(r["label"]), r["theme"])
                      for r in self.records]


class PackedTexts(PackReader):
    """The text crops of every `texts-*.npz` under `pack_dir`, in shard order, and their images' skews; `get(i)`
    decodes region i."""

    def __init__(self, pack_dir: Path):
        super().__init__(pack_dir, TEXT_GLOB, grey=True)
        self.crops = [ocr.TextCrop(self.image_of(pack_dir, r), tuple(r["box"]), r["text"], r["tkind"])
                      for r in self.records]
        self.skews = [float(r["skew"]) for r in self.records]


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m train.pack", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="dataset dir (docs/dataset.md)")
    p.add_argument("--model", choices=["classifier", "ocr"], default="classifier", help="whose crops to pack")
    p.add_argument("--out", type=Path, required=True, help="pack dir (outside the repo, or an ignored folder)")
    p.add_argument("--splits", type=str, default="train,val", help="comma list of train, val, test")
    p.add_argument("--photo-quality", type=int, default=90, help="JPEG quality of photo regions")
    p.add_argument("--shot-fraction", type=float, default=1.0, help="share of scenes whose screenshot is packed")
    p.add_argument("--max-val", type=int, default=None, help="keep at most this many validation crops")
    p.add_argument("--shard-mb", type=float, default=48.0, help="start a new shard once this many MB of encoded regions are written (before deflate)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    splits = {s.strip() for s in args.splits.split(",") if s.strip()}
    if not splits <= {"train", "val", "test"}:
        raise SystemExit(f"--splits takes train, val, test; got {args.splits}")
    build = build_text_pack if args.model == "ocr" else build_pack
    shards = build(args.data, args.out, splits, args.photo_quality, args.shot_fraction, args.shard_mb, args.seed,
                   max_val=args.max_val)
    for path, n, size in shards:
        print(f"{path}: {n} crops, {size / 1e6:.1f} MB")
    print(f"{sum(n for _, n, _ in shards)} crops, {sum(s for _, _, s in shards) / 1e6:.1f} MB in {len(shards)} shards")
    return 0


if __name__ == "__main__":
    sys.exit(main())
