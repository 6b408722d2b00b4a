#!/usr/bin/env bash
# Compute-engine cycles on a compiled network (docs/rtl-engine.md): generates the RTL of a preset,
# builds the block testbenches (tb/, Verilator), dumps the network's program with
# `capsgen compile --dump-engine` and runs it on the engine (`tb_blocks engine --program`: the whole
# inference, chained), which writes its results document (schemas/accel-results.schema.json). Prints
# one JSON line per descriptor: the measured cycles and stall cycles by cause (from the engine's
# counters), the compiler's cycle model for it (isa::engine_timing, as stats.json uses it;
# docs/compiler.md) and the model's error in percent; then a total line with the worst descriptor's
# error. Cycle counts of RTL simulation are deterministic; the engine's block test
# asserts the model per descriptor, nothing is asserted here.
#
# usage: engine_cycles.sh [--capsgen BIN] [--config YAML] [--model YAML] [--weights NPZ] [--work DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
capsgen="$root/build/capsgen" config="$root/configs/tiny-2x2.yaml" model="$root/models/capsnet-small.yaml"
weights="$root/models/weights/capsnet-small-mnist.npz" work=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --weights) weights="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "engine_cycles.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/work_dir.sh
source "$here/work_dir.sh"
bench_work_dir
# shellcheck source=bench/engine_tb_build.sh
source "$here/engine_tb_build.sh"
engine_tb_build "$capsgen" "$config" "$work"
"$capsgen" compile --config "$config" --model "$model" ${weights:+--weights "$weights"} --dump-engine "$work/gemms" > /dev/null
"$work/build/tb_blocks" engine --rtl "$work/rtl" --program "$work/gemms" --results "$work/results.json" > "$work/run.log" ||
  { cat "$work/run.log"; exit 1; }
python3 - "$work/gemms" "$work/results.json" "$work/rtl/config.json" "$(basename "$model" .yaml)" <<'PY'
import json, sys
gemms, results, cfgfile, net = sys.argv[1:5]
cfg = json.load(open(cfgfile))  # schemas/config.schema.json
doc = json.load(open(results))  # schemas/accel-results.schema.json
if doc.get('schema') != 'capsgen.accel-results/1':
    sys.exit(f"engine_cycles.sh: {results}: schema is {doc.get('schema')!r}, expected 'capsgen.accel-results/1'")
stats = {d['id']: d for d in doc['descriptors']}
total = {'measured': 0, 'model': 0}
worst = 0.0
for line in open(gemms + '/index.txt'):
    if line.startswith('#') or line.startswith('skip') or not line.strip():
        continue
    stem, name = line.split()[:2]
    kind = int(dict(l.split() for l in open(f'{gemms}/{stem}.desc') if l.strip() and not l.startswith('#'))['kind'])
    s = stats[stem]
    measured, model = s['cycles'], s['model']
    err = (model - measured) / measured
    worst = max(worst, abs(err))
    total['measured'] += measured
    total['model'] += model
    print(json.dumps({'bench': 'engine_cycles', 'preset': cfg['name'], 'network': net, 'descriptor': name,
                      'kind': ['gemm', 'activate', 'fill'][kind], 'cycles': measured, 'model': model,
                      'model_error_pct': round(100 * err, 3), 'vectors': s['vectors'],
                      'stall_data': s['stall_data'], 'stall_tile': s['stall_tile'],
                      'stall_out': s['stall_out']}))
print(json.dumps({'bench': 'engine_cycles', 'preset': cfg['name'], 'network': net, 'descriptor': 'total',
                  'cycles': total['measured'], 'model': total['model'],
                  'model_error_pct': round(100 * (total['model'] - total['measured']) / total['measured'], 3),
                  'worst_descriptor_error_pct': round(100 * worst, 3)}))
PY
