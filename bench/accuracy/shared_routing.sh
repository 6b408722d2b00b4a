#!/usr/bin/env bash
# PIM-CapsNet's batch-shared routing (docs/pim-capsnet.md, "Batch-shared routing"): the trained
# capsnet-small weights through capsacc-16x16 with the class-capsule routing of K test images sharing
# one set of logits, for each K of --batches (1 = per image). Prints one JSON record per line: the
# `capsgen accuracy --json` result with "bench" and the data set's "limit"; logs go to stderr.
#
# usage: bench/accuracy/shared_routing.sh [--capsgen BIN] [--batches "1 2 4 10 32 100"]
#          [--datasets "mnist fashion"] [--fashion-limit N] [-j N]
#   --fashion-limit: the first N Fashion-MNIST test images (default 2000, as bench/accuracy/pim.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
capsgen="$root/build/capsgen" batches="1 2 4 10 32 100" datasets="mnist fashion" fashion_limit=2000 jobs=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --datasets) datasets="$2"; shift 2 ;;
    --fashion-limit) fashion_limit="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    *) echo "bench/accuracy/shared_routing.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
for ds in $datasets; do
  limit=0
  [[ $ds == fashion ]] && limit="$fashion_limit"
  for k in $batches; do
    echo "bench/accuracy/shared_routing.sh: $ds, routing batch $k" >&2
    "$capsgen" accuracy --config "$root/configs/capsacc-16x16.yaml" --weights "$root/models/weights/capsnet-small-$ds.npz" \
      --dataset "$ds" --limit "$limit" -j "$jobs" --routing-batch "$k" --json "$work/r.json" >&2
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
r["bench"] = "shared_routing"
r["limit"] = int(sys.argv[2])
print(json.dumps(r, sort_keys=True))' "$work/r.json" "$limit"
  done
done
