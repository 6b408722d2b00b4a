#!/usr/bin/env bash
# Whole inferences on the chip (capsgen_chip: frame sequencer, engine, SEP scratchpads, DMA, PMUs)
# with the network in the off-chip DDR3 model: `capsgen sim --memory dram` per preset/network pair,
# every DRAM write and every operation bit-exact against the golden model. Prints one JSON line per
# run: cycles from start_i to done_o, inferences/s at the preset's clock, the streamed program's
# model (stream_timing, with its error against the chip in percent) and the ideal-memory program
# (capsgen_accel) for comparison, engine cycles against their model, the frame sequencer's cycle
# classes (where the cycles go), the memory counter figures found equal to the compiler's access
# model, DRAM traffic, row-buffer outcomes and the row-hit rate, energy (also per byte) and
# bandwidth, sector sleep, simulation wall time. Cycle counts are deterministic; wall times depend
# on the machine.
# usage: chip_rtl.sh [--capsgen BIN] [--work DIR] [--run PRESET:NETWORK ...] [-- more capsgen sim args]
# default runs: tiny-2x2, small-4x4 and capsacc-16x16 with capsnet-tiny, small-4x4 and capsacc-16x16 with
# capsnet-small (CapsNet-MNIST: --run capsacc-16x16:capsnet-mnist)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
source "$here/work_dir.sh"
capsgen="$root/build/capsgen" work=""
runs=()
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --run) runs+=("$2"); shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "chip_rtl.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ ${#runs[@]} -gt 0 ]] || runs=(tiny-2x2:capsnet-tiny small-4x4:capsnet-tiny capsacc-16x16:capsnet-tiny small-4x4:capsnet-small
                               capsacc-16x16:capsnet-small)
bench_work_dir
rc=0
for r in "${runs[@]}"; do
  preset="${r%%:*}" net="${r#*:}"
  w="$work/$preset"  # one model build per preset, shared by its networks
  mkdir -p "$w"
  if ! "$capsgen" sim --memory dram --config "$root/configs/$preset.yaml" --model "$root/models/$net.yaml" --work "$w" \
      --report "$w/$net.md" --json "$w/$net.json" "${extra[@]}" > "$w/$net.out" 2>&1; then
    tail -30 "$w/$net.out" >&2
    rc=1
  fi
  [[ -f "$w/$net.json" ]] || continue
  python3 - "$w/$net.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cyc = r['total_cycles']
seq = r['sequencer_cycles']
d = r['offchip']
accesses = d.get('row_hits', 0) + d.get('misses', 0) + d.get('conflicts', 0)
print(json.dumps({'bench': 'chip_rtl', 'network': r['network'], 'preset': r['preset'], 'pass': r['pass'],
                  'prediction': r['prediction'], 'total_cycles': cyc, 'clock_mhz': r['clock_mhz'],
                  'inferences_per_second': round(r['inferences_per_second'], 1),
                  'array_utilization': round(r['array_utilization'], 4),
                  'stream_model_cycles': r['stream_model_cycles'],
                  'stream_model_error_pct': round(r['stream_model_error_pct'], 1),
                  'chip_model_cycles': r['chip_model_cycles'],
                  'chip_model_error_pct': round(r['chip_model_error_pct'], 1),
                  'ideal_memory_cycles': r['ideal_memory_program_cycles'],
                  'engine_cycles': r['engine_cycles'], 'engine_model_cycles': r['engine_model_cycles'],
                  'frames': r['frames'], 'access_model_figures': r['access_model_figures'], 'sequencer_cycles': seq,
                  'sequencer_shares': {k: round(v / cyc, 4) for k, v in seq.items()} if cyc else {},
                  'dram': {'read_beats': d.get('read_beats'), 'write_beats': d.get('write_beats'), 'bytes': d.get('bytes'),
                           'megabytes': round(d.get('bytes', 0) / 1e6, 2),
                           'row_hit_rate': round(d['row_hits'] / accesses, 4) if accesses else None,
                           'energy_pj_per_byte': round(d['energy_pj'] / d['bytes'], 1) if d.get('bytes') else None,
                           'row_hits': d.get('row_hits'), 'misses': d.get('misses'), 'conflicts': d.get('conflicts'),
                           'energy_uj': round(d.get('energy_pj', 0) * 1e-6, 3),
                           'gbps_program': d.get('program_gbps_x1000', 0) / 1000},
                  'sectors': r['sectors'], 'sim_seconds': round(r['sim_seconds'], 2)}))
PY
done
exit $rc
