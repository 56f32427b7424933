"""Render large random graphs, seen through focused views, into a synthetic evaluation set of dense views.

    python -m train.render_dense --out /root/.cache/netron-ocr/eval/DENSE [--graphs 40] [--per-graph 2]
        [--seed 101] [--min-nodes 60] [--max-nodes 200] [--lift-weights P]

The training scenes (`python -m datagen build`) draw graphs of 1–60 nodes, mostly 5–30, and a pan over the whole
layout, so their canvas is usually smaller than the viewport and the detector sees it at scale ≥ 1 (median title
height ≈ 23 px in the detector's input). A large graph seen in a window fills the viewport instead: the same text
sizes on screen, but the canvas is the whole window and the detector's tiles shrink it by about half (what the
renders of real architectures look like, and where they lose most; `models/METRICS.md`, session 23). This set
holds such views made only from the data generator, so that scanner rules for them can be chosen without looking at
real architectures: graph `k` is `graphgen.random_model(seed × 1,000,003 + k, min_nodes, max_nodes)` (seed 1 is the
training set's, so the default 101 shares no graph with it), each shown `--per-graph` times with the views of
`train.render_real` (the data generator's option sampler, centred on the graph input or a random named node).
Scene k = graph × per_graph + r, in the docs/dataset.md layout; `DIR/dense_graphs.json` maps scenes to graphs.

`--lift-weights P` (default 0: off) turns each graph into the form of the onnx package's "light" models first
(`graphgen.lift_weights`, drawn from `random.Random(f"lift:{seed}:{k}")`): each weight becomes, with probability P,
a `ConstantOfShape` card wired into its consumer, which gives the wide fan-ins of those models (a
`BatchNormalization` fed by four constants) from generator graphs alone.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from train.render_real import render_views

DEFAULT_OUT = Path("/root/.cache/netron-ocr/eval/DENSE")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.render_dense", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--graphs", type=int, default=40)
    p.add_argument("--per-graph", type=int, default=2)
    p.add_argument("--seed", type=int, default=101)
    p.add_argument("--min-nodes", type=int, default=60)
    p.add_argument("--max-nodes", type=int, default=200)
    p.add_argument("--timeout", type=float, default=60.0, help="per-scene layout limit in seconds")
    p.add_argument("--lift-weights", type=float, default=0.0, metavar="P",
                   help="probability that a weight becomes a ConstantOfShape node (graphgen.lift_weights)")
    args = p.parse_args(argv)
    if args.seed == 1:
        print("seed 1 draws the training set's graphs; choose another", file=sys.stderr)
        return 2

    from datagen import build, graphgen

    models = [(f"g{k:04d}", graphgen.random_model(args.seed * build.GRAPH_SEED_STRIDE + k,
                                                  min_nodes=args.min_nodes, max_nodes=args.max_nodes))
              for k in range(args.graphs)]
    if args.lift_weights > 0:
        models = [(name, graphgen.lift_weights(m, random.Random(f"lift:{args.seed}:{k}"), args.lift_weights))
                  for k, (name, m) in enumerate(models)]
    index_map, failures = render_views(models, args.out, args.per_graph, args.seed, "dense-eval", "dense",
                                       args.timeout)
    (args.out / "dense_graphs.json").write_text(json.dumps({"graphs": index_map, "failures": failures}, indent=1))
    print(f"{len(index_map) - len(failures)} scenes in {args.out}, {len(failures)} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
