"""Merge several scene folders into one training set of symbolic links, keeping the held-out rule k % 10 == 9.

    python -m train.merge_scenes --out DIR [--seed 31] [--held-fraction 0.1] --dataset D1 --views V1 --views V2 ...

A `--dataset` (built by `python -m datagen build`) keeps its own split: its scenes with k % 10 == 9 stay held out,
so the figures reported on that dataset's held-out scenes remain held out. A `--views` folder (rendered by
`python -m train.render_dense`; it has no split of its own) gives each scene to the held-out part with probability
`--held-fraction`, drawn from `random.Random(f"s{seed}:{folder name}")`. The training and held-out scenes are each
shuffled with `random.Random(seed)` and renumbered: the i-th training scene becomes index `(i // 9)·10 + i % 9`, the
j-th held-out one `10·j + 9`, so that `train.common.split_scene_images` finds the same split and the held-out
images that a training run evaluates first mix every source. Every file of a scene (`k.photo.jpg`, `k.shot.json`,
…) is linked under its new index in `DIR/scenes/`, which is emptied first. Deterministic in its arguments and in the
sources' contents.

The views must not come from the evaluation sets' seeds (`docs/dataset.md`: 101, 202, 303) nor from seed 1.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from train.common import is_held_out, list_scene_images, scenes_dir


def split_sources(datasets: list[Path], views: list[Path], seed: int,
                  held_fraction: float) -> tuple[list[tuple[Path, int]], list[tuple[Path, int]]]:
    """(training, held-out) lists of (scenes folder, index), in source order, before shuffling."""
    train: list[tuple[Path, int]] = []
    held: list[tuple[Path, int]] = []
    for folder, keeps_split in [*((d, True) for d in datasets), *((v, False) for v in views)]:
        rng = random.Random(f"s{seed}:{Path(folder).name}")
        root = scenes_dir(folder)
        for k in sorted({im.index for im in list_scene_images(root)}):
            out = is_held_out(k) if keeps_split else rng.random() < held_fraction
            (held if out else train).append((root, k))
    return train, held


def merge(out: Path, datasets: list[Path], views: list[Path], seed: int = 31,
          held_fraction: float = 0.1) -> tuple[int, int]:
    """Writes the merged scenes folder `out/scenes`; returns (training scenes, held-out scenes)."""
    train, held = split_sources(datasets, views, seed, held_fraction)
    rng = random.Random(seed)
    rng.shuffle(train)
    rng.shuffle(held)
    dest = Path(out) / "scenes"
    dest.mkdir(parents=True, exist_ok=True)
    for f in dest.iterdir():
        f.unlink()
    numbered = [*((src, i // 9 * 10 + i % 9) for i, src in enumerate(train)),
                *((src, 10 * j + 9) for j, src in enumerate(held))]
    for (root, k), n in numbered:
        for f in sorted(root.glob(f"{k:06d}.*")):
            (dest / (f"{n:06d}" + f.name[6:])).symlink_to(f.resolve())
    return len(train), len(held)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.merge_scenes", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--dataset", type=Path, action="append", default=[], help="a datagen dataset (keeps its split)")
    p.add_argument("--views", type=Path, action="append", default=[], help="a render_dense folder")
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--held-fraction", type=float, default=0.1)
    args = p.parse_args(argv)
    if not args.dataset and not args.views:
        p.error("give at least one --dataset or --views")
    n_train, n_held = merge(args.out, args.dataset, args.views, args.seed, args.held_fraction)
    print(f"{n_train} training scenes, {n_held} held out in {args.out / 'scenes'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
