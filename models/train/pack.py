"""Title packs: the classifier's training crops in a few self-contained files, for a machine without the dataset.

A GPU machine lent for a few minutes (METRICS.md, session 21) is reached through a copy of at most ~64 MiB per
call, far less than the dataset (1.3 GB) or its title cache (~1.6 GB of raw regions). A pack holds the same cached
regions as `classifier.TitleCache` (title box plus a 16 px margin, native resolution, RGB), each encoded on its own:
screenshots as PNG (lossless), photos as JPEG (lossy, quality `--photo-quality`; the photos already went through
JPEG once and training re-compresses 20% of samples at quality 35–90 anyway). Shards are cut at scene boundaries
so that each is usable alone.

    python -m train.pack --data DATA --out PACK [--splits train,val] [--photo-quality 90] [--shot-fraction 1]
        [--shard-mb 48]

`PackedTitles(PACK)` reads every `titles-*.npz` under PACK back and offers what training takes from a
`TitleCache`: `.crops` (`classifier.TitleCrop`s whose images point nowhere) and `.get(i)` → (region pixels
h×w×3 RGB, region rectangle in source pixels, (image width, image height)).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from train import classifier, common

PACK_GLOB = "titles-*.npz"


def encode_region(part: np.ndarray, kind: str, photo_quality: int) -> tuple[bytes, str]:
    """RGB region → (encoded bytes, "png" | "jpg"): PNG for screenshots, JPEG at `photo_quality` for photos."""
    if kind == "photo":
        return common.encode_rgb(part, "jpg", int(photo_quality)), "jpg"
    return common.encode_rgb(part, "png", 9), "png"


def decode_region(data: np.ndarray) -> np.ndarray:
    return common.decode_rgb(data, "region in a title pack")


def write_shard(path: Path, blobs: list[bytes], records: list[dict]) -> int:
    offsets = np.zeros(len(blobs) + 1, np.int64)
    offsets[1:] = np.cumsum([len(b) for b in blobs])
    blob = np.frombuffer(b"".join(blobs), np.uint8)
    meta = np.frombuffer(json.dumps(records).encode(), np.uint8)
    tmp = path.with_name(f".{path.name}.tmp.npz")
    np.savez(tmp, blob=blob, offsets=offsets, meta=meta)
    tmp.replace(path)
    return path.stat().st_size


def build_pack(data_dir: Path, out: Path, splits: set[str], photo_quality: int = 90, shot_fraction: float = 1.0,
               shard_mb: float = 48.0, seed: int = 0, cache_dir: Path | None = None,
               progress: bool = True) -> list[tuple[Path, int, int]]:
    """Write the title pack of `data_dir` (the crops of `classifier.collect_title_crops` in `splits`; screenshots of
    a scene kept with probability `shot_fraction`, drawn per scene with `seed`) to `out/titles-NN.npz`, cutting the
    regions through the title cache `cache_dir` (default: the one training uses). Returns (path, crops, bytes) per
    shard."""
    vocab = classifier.load_vocab(classifier.VOCAB_PATH)
    crops = [c for c in classifier.collect_title_crops(data_dir, vocab) if classifier.split_of(c.image.index) in splits]
    rng = np.random.default_rng(seed)
    keep_shots = {k: bool(rng.random() < shot_fraction) for k in sorted({c.image.index for c in crops})}
    crops = [c for c in crops if c.image.kind == "photo" or keep_shots[c.image.index]]
    if not crops:
        raise SystemExit(f"no title crops of splits {sorted(splits)} under {data_dir}")
    cache = classifier.TitleCache(crops, cache_dir or common.default_cache_dir(data_dir, "classifier"),
                                  progress=progress)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(PACK_GLOB):
        old.unlink()
    shards, blobs, records, size = [], [], [], 0

    def flush():
        nonlocal blobs, records, size
        path = out / f"titles-{len(shards):02d}.npz"
        shards.append((path, len(records), write_shard(path, blobs, records)))
        blobs, records, size = [], [], 0

    for i, crop in enumerate(crops):
        if size >= shard_mb * 1e6 and crop.image.index != crops[i - 1].image.index:
            flush()
        part, region, (w, h) = cache.get(i)
        data, fmt = encode_region(np.asarray(part), crop.image.kind, photo_quality)
        blobs.append(data)
        size += len(data)
        records.append({"k": crop.image.index, "kind": crop.image.kind, "box": list(crop.box), "label": crop.label,
                        "theme": crop.theme, "region": list(region), "size": [w, h], "fmt": fmt})
    flush()
    return shards


class PackedTitles:
    """The crops of every `titles-*.npz` under `pack_dir`, in shard order; `get(i)` decodes region i."""

    def __init__(self, pack_dir: Path):
        self.crops: list[classifier.TitleCrop] = []
        self.entries: list[tuple[np.ndarray, int, int, tuple, tuple]] = []
        paths = sorted(Path(pack_dir).glob(PACK_GLOB))
        if not paths:
            raise common.DatasetError(f"no {PACK_GLOB} under {pack_dir}")
        for path in paths:
            with np.load(path) as z:
                blob, offsets = z["blob"], z["offsets"]
                records = json.loads(z["meta"].tobytes().decode())
            if len(offsets) != len(records) + 1 or offsets[-1] != len(blob):
                raise common.DatasetError(f"{path}: offsets do not match its records")
            for j, r in enumerate(records):
                fake = Path(pack_dir) / f"{r['k']:06d}.{r['kind']}"
                image = common.SceneImage(int(r["k"]), r["kind"], fake, fake)
                self.crops.append(classifier.TitleCrop(image, tuple(r["box"]), int(r["label"]), r["theme"]))
                self.entries.append((blob, int(offsets[j]), int(offsets[j + 1]), tuple(r["region"]),
                                     tuple(r["size"])))

    def __len__(self) -> int:
        return len(self.crops)

    def get(self, i: int):
        blob, start, end, region, size = self.entries[i]
        return decode_region(blob[start:end]), region, size


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m train.pack", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="dataset dir (docs/dataset.md)")
    p.add_argument("--out", type=Path, required=True, help="pack dir (outside the repo, or an ignored folder)")
    p.add_argument("--splits", type=str, default="train,val", help="comma list of train, val, test")
    p.add_argument("--photo-quality", type=int, default=90, help="JPEG quality of photo regions")
    p.add_argument("--shot-fraction", type=float, default=1.0, help="share of scenes whose screenshot is packed")
    p.add_argument("--shard-mb", type=float, default=48.0, help="start a new shard beyond this many MB")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    splits = {s.strip() for s in args.splits.split(",") if s.strip()}
    if not splits <= {"train", "val", "test"}:
        raise SystemExit(f"--splits takes train, val, test; got {args.splits}")
    shards = build_pack(args.data, args.out, splits, args.photo_quality, args.shot_fraction, args.shard_mb, args.seed)
    for path, n, size in shards:
        print(f"{path}: {n} crops, {size / 1e6:.1f} MB")
    print(f"{sum(n for _, n, _ in shards)} crops, {sum(s for _, _, s in shards) / 1e6:.1f} MB in {len(shards)} shards")
    return 0


if __name__ == "__main__":
    sys.exit(main())
