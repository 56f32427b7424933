"""Compares two `netron-ocr eval` runs over the same images (ffi/arm64-check.sh: the host build against the arm64
build under emulation).

    python3 ffi/arm64_compare.py HOST.json OTHER.json HOST_GRAPHS OTHER_GRAPHS

Per image (matched by file name): the eval figures' counts must be equal, and the predicted graphs must say the same
things: the same operators, names, texts, shapes, weight rows, edges and direction, and boxes within a pixel.
Confidences may differ a little (the two builds' kernels sum in other orders); the largest difference is printed,
with the number of images where one crossed a bin edge of the eval's reliability tables. Exits 1 if any image differs.
"""

import json
import os
import sys

BOX_TOLERANCE_PX = 1.0


def by_name(report):
    return {os.path.basename(i["image"]): i for i in report["images"]}


def split(value, path, facts, numbers):
    """Flattens a graph into exact facts (strings, ints, structure) and float leaves (box coordinates, edge
    points, confidences), each under its JSON path."""
    if isinstance(value, dict):
        for k, v in value.items():
            split(v, f"{path}.{k}", facts, numbers)
    elif isinstance(value, list):
        facts[path + ".len"] = len(value)
        for i, v in enumerate(value):
            split(v, f"{path}[{i}]", facts, numbers)
    elif isinstance(value, float):
        numbers[path] = value
    else:
        facts[path] = value


def compare_graphs(a, b):
    """Returns (differences, largest confidence difference) between two graph JSON objects."""
    fa, na, fb, nb = {}, {}, {}, {}
    split(a, "", fa, na)
    split(b, "", fb, nb)
    diffs = [k for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]
    conf = 0.0
    for k in sorted(set(na) | set(nb)):
        if k not in na or k not in nb:
            diffs.append(k)
            continue
        d = abs(na[k] - nb[k])
        if k.endswith("confidence"):
            conf = max(conf, d)
        elif d > BOX_TOLERANCE_PX:
            diffs.append(f"{k} {na[k]:.2f} vs {nb[k]:.2f}")
    return diffs, conf


def main():
    host_json, other_json, host_graphs, other_graphs = sys.argv[1:5]
    host, other = by_name(json.load(open(host_json))), by_name(json.load(open(other_json)))
    if set(host) != set(other):
        print("different image sets:", sorted(set(host) ^ set(other)))
        return 1
    differ, binned, worst_conf = 0, 0, 0.0
    for name in sorted(host):
        problems = []
        # The figures' counts must be equal, except the reliability tables', which count confidences in bins of
        # 0.1 (a confidence near a bin edge may cross it); their floats are sums of confidences.
        fa, fb = {}, {}
        split(host[name]["metrics"], "metrics", fa, {})
        split(other[name]["metrics"], "metrics", fb, {})
        moved = [k for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]
        problems += [k for k in moved if "_reliability" not in k]
        binned += any("_reliability" in k for k in moved)
        ga = json.load(open(os.path.join(host_graphs, name + ".pred.json")))
        gb = json.load(open(os.path.join(other_graphs, name + ".pred.json")))
        diffs, conf = compare_graphs(ga, gb)
        worst_conf = max(worst_conf, conf)
        problems += diffs[:5]
        if problems:
            differ += 1
            print(f"{name}: {'; '.join(problems)}")
    print(
        f"{differ} of {len(host)} images differ; largest confidence difference {worst_conf:.2e}; "
        f"{binned} images with a confidence in another reliability bin"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
