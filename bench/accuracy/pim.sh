#!/usr/bin/env bash
# PIM-CapsNet approximations (docs/pim-capsnet.md): the trained capsnet-small weights on MNIST and
# Fashion-MNIST through capsacc-16x16 with the LUT units and with each approximation preset of
# configs/pim-capsnet/ (shift exp without / with recovery, reciprocal, rsqrt, all without / with
# recovery). Prints one JSON list of `capsgen accuracy --json` results on stdout (each with its
# preset and data set); logs go to stderr.
#
# usage: bench/accuracy/pim.sh [--capsgen BIN] [--datasets "mnist fashion"] [--limit N] [-j N] [--mnist-dir DIR]
#   --mnist-dir: capsgen accuracy --data-dir for MNIST (default: where bootstrap installs it)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
capsgen="$root/build/capsgen" datasets="mnist fashion" limit=0 jobs=1 mnist_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --datasets) datasets="$2"; shift 2 ;;
    --limit) limit="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    --mnist-dir) mnist_dir="$2"; shift 2 ;;
    *) echo "bench/accuracy/pim.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
presets="$root/configs/capsacc-16x16.yaml"
for v in exp exp-rec recip rsqrt all all-rec; do presets="$presets $root/configs/pim-capsnet/capsacc-16x16-$v.yaml"; done
n=0
for ds in $datasets; do
  for p in $presets; do
    n=$((n + 1))
    extra=()
    [[ $ds == mnist && -n $mnist_dir ]] && extra=(--data-dir "$mnist_dir")
    echo "bench/accuracy/pim.sh: $ds $(basename "$p" .yaml)" >&2
    "$capsgen" accuracy --config "$p" --weights "$root/models/weights/capsnet-small-$ds.npz" --dataset "$ds" \
      --limit "$limit" -j "$jobs" ${extra[@]+"${extra[@]}"} --json "$work/$n.json" >&2
  done
done
echo "["
for i in $(seq 1 "$n"); do
  cat "$work/$i.json"
  [[ $i -lt $n ]] && echo ","
done
echo "]"
