#!/usr/bin/env bash
# PIM-CapsNet's batch-shared routing compiled for the accelerator (docs/pim-capsnet.md, "In the
# compiler and on the RTL"): for each routing batch K, `capsgen sim --routing-batch K` runs one
# program of K inputs (seeded synthetic inputs, seeded random weights) on the RTL, every operation
# bit-exact against the executor and every input's class norms against the golden shared routing.
# Prints one JSON record per K: the RTL's cycles from start_i to done_o and the compiler's model of
# them, inferences/s at the preset's clock (K per program), and the cycles of the per-input layers
# (everything before the class-capsule layer) and of the class-capsule layer (predictions, routing,
# norms). Cycle counts are deterministic; nothing is asserted.
# usage: routing_batch.sh [--capsgen BIN] [--config YAML] [--model YAML] [--batches "1 2 4 8 16"] [--work DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
capsgen="$root/build/capsgen" config="$root/configs/capsacc-16x16.yaml" model="$root/models/capsnet-mnist.yaml"
batches="1 2 4 8 16" work=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "routing_batch.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="${work:-$root/build/bench/routing_batch/$(basename "$config" .yaml)}"
mkdir -p "$work"
for k in $batches; do
  echo "routing_batch.sh: routing batch $k" >&2
  (cd "$root" && "$capsgen" sim --config "$config" --model "$model" --routing-batch "$k" --work "$work") \
    > "$work/sim-$k.out" 2>&1 || { tail -30 "$work/sim-$k.out" >&2; exit 1; }
  python3 - "$work/report.json" "$k" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
k = int(sys.argv[2])
ops = r['operations']
# The class-capsule layer: the network's last, whose operations are named <layer>/...; the per-input
# layers of a batch are named <layer>.k<N>/... or <layer>.k<N>.
last = ops[-1]['name'].split('/')[0]
caps = sum(o['cycles'] for o in ops if o['name'].split('/')[0] == last)
print(json.dumps({'bench': 'routing_batch', 'network': r['network'], 'preset': r['preset'], 'routing_batch': k,
                  'pass': r['pass'], 'rtl_cycles': r['total_cycles'], 'model_cycles': r['program_model_cycles'],
                  'clock_mhz': r['clock_mhz'], 'inferences_per_second': round(r['inferences_per_second'], 1),
                  'per_input_layer_cycles': sum(o['cycles'] for o in ops) - caps, 'class_caps_cycles': caps,
                  'sim_seconds': round(r['sim_seconds'], 1)}))
PY
done
