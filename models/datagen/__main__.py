"""Command line of the data generator (run from `models/`):

    python -m datagen build --seed 1 --scenes 20000 --out DIR [--workers 2] [--start 0] [--held-out-only]
    python -m datagen sheet --data DIR --out sheet.png [--n 16] [--seed 0] [--full]
    python -m datagen priors --seed 1 --scenes 4000 [--write]
    python -m datagen op-rows [--write]

`build` writes DIR/scenes/, DIR/classifier/index.jsonl, DIR/ocr/index.jsonl and DIR/manifest.json (docs/dataset.md);
it resumes a stopped build. `sheet` draws a contact sheet of random scenes with their annotations. `priors` counts
the nodes of each operator in the random graphs of the training split of scenes 0..N-1 (graphs only, nothing is
rendered) and, with `--write`, stores the counts in `models/vocab.json` as `train_nodes`. `op-rows` prints the
ONNX input and attribute names of each operator (`datagen/op_rows.py`) and, with `--write`, stores them in
`models/op_rows.json`.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m datagen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="render scenes and write the dataset")
    b.add_argument("--seed", type=int, required=True)
    b.add_argument("--scenes", type=int, required=True, help="build scenes 0..N-1")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--workers", type=int, default=2, help="worker processes, each with its own browser")
    b.add_argument("--start", type=int, default=0, help="first scene index to build (derived sets cover 0..N-1)")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.add_argument("--held-out-only", action="store_true",
                   help="only the held-out scenes (k %% 10 == 9): the evaluation sets, a tenth of the time")
    s = sub.add_parser("sheet", help="contact sheet of random scenes with annotations")
    s.add_argument("--data", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--n", type=int, default=16)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--full", action="store_true", help="whole images instead of crops around the graph")
    p = sub.add_parser("priors", help="operator node counts of the training split's graphs")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--scenes", type=int, required=True, help="scenes 0..N-1 (the held-out ones are left out)")
    p.add_argument("--write", action="store_true", help="store the counts in models/vocab.json")
    r = sub.add_parser("op-rows", help="ONNX input and attribute names of each operator (models/op_rows.json)")
    r.add_argument("--write", action="store_true", help="store them in models/op_rows.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    if args.command == "build":
        if args.scenes < 0 or args.start < 0 or args.workers < 1:
            parser.error("--scenes and --start must be >= 0, --workers >= 1")
        from .build import build

        manifest = build(args.seed, args.scenes, args.out, workers=args.workers, start=args.start,
                         progress=not args.quiet, held_out_only=args.held_out_only)
        summary = {k: manifest[k] for k in ("scenes", "seconds", "scenes_per_second")}
        print(json.dumps(summary, indent=1))
        return 0 if manifest["scenes"]["complete"] > 0 or args.scenes == 0 else 1
    if args.command == "priors":
        from .build import train_node_counts
        from .vocab import VOCAB_PATH, write_train_nodes

        counts = train_node_counts(args.seed, args.scenes)
        print(json.dumps(counts, indent=1))
        if args.write:
            write_train_nodes(counts)
            print(f"wrote train_nodes to {VOCAB_PATH}", file=sys.stderr)
        return 0
    if args.command == "op-rows":
        from .op_rows import OP_ROWS_PATH, op_rows, render, write

        if args.write:
            write()
            print(f"wrote {OP_ROWS_PATH}", file=sys.stderr)
        else:
            print(render(op_rows()), end="")
        return 0
    from .contact_sheet import make_sheet

    n = make_sheet(args.data, args.out, n=args.n, seed=args.seed, full=args.full)
    print(f"wrote {args.out} ({n} tiles)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
