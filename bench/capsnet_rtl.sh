#!/usr/bin/env bash
# Whole CapsNet inference on the generated RTL: `capsgen sim` on a preset and
# network (default: the full Sabour CapsNet-MNIST, seeded random weights, on the CapsAcc 16x16
# preset), every operation bit-exact against the golden model. Prints one JSON line: total cycles
# (the program on capsgen_accel from start_i to done_o, and the cycle model's figure), the cycles in
# the descriptors and waiting for the sequencer's fetches,
# inferences/s at 250 MHz and at the preset's clock, array utilization (useful MACs / (rows x cols x
# cycles)), the cycles, MAC bound (useful MACs / PEs), cycles per bound and stall cycles per operation
# (where the cycles go, and which operation is furthest from its bound), the simulation's wall
# time and speed. Cycle counts are deterministic; the wall time depends on the machine and its load.
# usage: capsnet_rtl.sh [--capsgen BIN] [--config YAML] [--model YAML] [--work DIR] [-- more capsgen sim args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
capsgen="$root/build/capsgen" config="$root/configs/capsacc-16x16.yaml" model="$root/models/capsnet-mnist.yaml" work=""
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "capsnet_rtl.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="${work:-$root/build/bench/capsnet_rtl/$(basename "$config" .yaml)}"
mkdir -p "$work"
"$capsgen" sim --config "$config" --model "$model" --work "$work" "${extra[@]}" > "$work/sim.out" 2>&1 ||
  { tail -30 "$work/sim.out"; exit 1; }
python3 - "$work/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows, cols = r['array']['rows'], r['array']['cols']
cyc = r['total_cycles']
def mac_bound(o):  # cycles the operation needs with every PE doing a useful MAC in every cycle
    return -(-o['useful_macs'] // (rows * cols))
ops = [{'name': o['name'], 'cycles': o['cycles'], 'share': round(o['cycles'] / cyc, 4),
        'mac_bound': mac_bound(o),
        'cycles_per_bound': round(o['cycles'] / mac_bound(o), 2) if o['useful_macs'] else None,
        'stall_data': o['stall_cycles']['data'], 'stall_tile': o['stall_cycles']['tile'],
        'stall_output': o['stall_cycles']['output']} for o in r['operations']]
print(json.dumps({'bench': 'capsnet_rtl', 'network': r['network'], 'preset': r['preset'], 'pass': r['pass'],
                  'total_cycles': cyc, 'program_model_cycles': r['program_model_cycles'],
                  'descriptor_cycles': r['descriptor_cycles'], 'descriptor_model_cycles': r['model_cycles'],
                  'fetch_wait_cycles': r['fetch_wait_cycles'],
                  'inferences_per_second_250mhz': round(250e6 / cyc, 1),
                  'inferences_per_second_preset_clock': round(r['inferences_per_second'], 1),
                  'array_utilization': round(r['useful_macs'] / (rows * cols * cyc), 4),
                  'mac_bound_inferences_per_second_250mhz': round(250e6 * rows * cols / r['useful_macs'], 1),
                  'sim_seconds': round(r['sim_seconds'], 2),
                  'sim_cycles_per_second': round(r['simulated_cycles'] / r['sim_seconds']) if r['sim_seconds'] else None,
                  'operations': ops}))
PY
