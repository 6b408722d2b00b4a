#!/usr/bin/env python3
"""How well a NAS search's accuracy proxy ranks networks: NASCaps' check (its section 4.2, Table 2).

Trains the networks of a `capsgen dse nas` output directory for longer than the proxy did
(scripts/train_capsnet.py on the whole training split, --epochs E, seed 1), measures their test
accuracy on the whole test split, and correlates it with the proxy's validation accuracy
(evaluated.csv's val_accuracy): Pearson's r and Spearman's rank coefficient. Each training is kept
in OUT/longer-E/<hash>.{npz,json}, so a rerun trains only what is missing.

    scripts/nas_proxy_correlation.py --out OUT [--epochs 2] [--networks front|all] [--jobs 2]
                                     [--limit N] [--test-limit N] [--json FILE]

Prints a Markdown table (genome, proxy validation, longer-trained test accuracy) and the two
coefficients, and writes them as JSON (default OUT/longer-E/correlation.json). --limit / --test-limit
train and test on fixed subsets (for tests). Exit 2 on bad usage or a directory that is not a
search's output, 1 when a training run fails.
"""
import argparse
import concurrent.futures
import csv
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAINER_PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch (as `capsgen dse nas --python`)


def fail(msg, code=2):
    print(f"nas_proxy_correlation.py: {msg}", file=sys.stderr)
    sys.exit(code)


def pearson(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sx = math.sqrt(sum((a - mx) ** 2 for a in x))
    sy = math.sqrt(sum((b - my) ** 2 for b in y))
    return sxy / (sx * sy) if sx > 0 and sy > 0 else float("nan")


def ranks(v):
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    return pearson(ranks(x), ranks(y))


def train(net, dataset, epochs, limit, test_limit, npz, log):
    """Trains one network unless its log of the same setting exists; returns its test accuracy."""
    if os.path.exists(log):
        with open(log) as f:
            done = json.load(f)
        if done.get("epochs_done") == epochs and done.get("limit") == limit and done.get("test_limit") == test_limit:
            return done["test_acc"]
    cmd = [TRAINER_PYTHON, os.path.join(ROOT, "scripts", "train_capsnet.py"), "--model", net, "--dataset", dataset,
           "--epochs", str(epochs), "--seed", "1", "--out", npz, "--log", log]
    if limit:
        cmd += ["--limit", str(limit)]
    if test_limit:
        cmd += ["--test-limit", str(test_limit)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        fail(f"{net}: training failed (exit {proc.returncode}):\n{proc.stdout}", 1)
    with open(log) as f:
        return json.load(f)["test_acc"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="a `capsgen dse nas` output directory")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--networks", choices=["front", "all"], default="front")
    ap.add_argument("--jobs", type=int, default=2, help="training runs at once (one thread each)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--test-limit", type=int, default=0)
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.epochs < 1 or a.jobs < 1:
        fail("--epochs and --jobs must be at least 1")
    search_json = os.path.join(a.out, "search.json")
    table = os.path.join(a.out, "front.csv" if a.networks == "front" else "evaluated.csv")
    if not os.path.exists(search_json) or not os.path.exists(table):
        fail(f"{a.out}: not a `capsgen dse nas` output (no search.json or {os.path.basename(table)})")
    with open(search_json) as f:
        search = json.load(f)
    dataset = search.get("evaluation", {}).get("proxy", {}).get("dataset")
    if dataset not in ("mnist", "fashion"):
        fail(f"{search_json}: no proxy data set (mnist or fashion): the search ran without the accuracy proxy")
    rows = [r for r in csv.DictReader(open(table)) if r.get("feasible", "1") == "1"]
    if len(rows) < 3:
        fail(f"{table}: {len(rows)} networks, at least 3 are needed")
    work = os.path.join(a.out, f"longer-{a.epochs}")
    os.makedirs(work, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [pool.submit(train, os.path.join(a.out, "networks", r["hash"] + ".yaml"), dataset, a.epochs, a.limit,
                               a.test_limit, os.path.join(work, r["hash"] + ".npz"), os.path.join(work, r["hash"] + ".json"))
                   for r in rows]
        longer = [f.result() for f in futures]
    proxy = [float(r["val_accuracy"]) for r in rows]
    result = {
        "out": a.out, "dataset": dataset, "epochs": a.epochs, "limit": a.limit, "test_limit": a.test_limit,
        "networks": len(rows), "pearson": pearson(proxy, longer), "spearman": spearman(proxy, longer),
        "rows": [{"hash": r["hash"], "genome": r["genome"], "proxy_val_accuracy": p, "longer_test_accuracy": t}
                 for r, p, t in zip(rows, proxy, longer)],
    }
    print(f"| genome | proxy validation | test after {a.epochs} epochs |\n|---|---:|---:|")
    for row in sorted(result["rows"], key=lambda x: -x["proxy_val_accuracy"]):
        print(f"| `{row['genome']}` | {row['proxy_val_accuracy']:.1%} | {row['longer_test_accuracy']:.2%} |")
    print(f"\n{len(rows)} networks: Pearson {result['pearson']:.3f}, Spearman {result['spearman']:.3f}")
    path = a.json or os.path.join(work, "correlation.json")
    with open(path + ".tmp", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
