#!/usr/bin/env bash
# The compiler's model of a network on a preset, without simulation: `capsgen compile --check`
# (the program run in the functional executor against the golden model) with its statistics
# (stats.json) and, with --stream, the streamed program's totals (stream.json). Prints one JSON
# line: the program's cycles on the accelerator with an ideal memory and its inferences/s, and with
# --stream the parts, DMA moves, DRAM bytes and the modelled cycles with double buffering.
# Deterministic; nothing is asserted.
# usage: compile_stats.sh [--capsgen BIN] [--config YAML] [--model YAML] [--stream]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
capsgen="$root/build/capsgen" config="$root/configs/capsacc-16x16.yaml" model="$root/models/capsnet-mnist.yaml"
stream=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --stream) stream=(--stream); shift ;;
    *) echo "compile_stats.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root" && "$capsgen" compile --config "$config" --model "$model" "${stream[@]}" --check --out "$work") \
  > "$work/compile.log" 2>&1 || { tail -20 "$work/compile.log" >&2; exit 1; }
python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
stats = json.load(open(f'{work}/stats.json'))
record = {'bench': 'compile_stats', 'network': stats['network'], 'preset': stats['preset'], 'check': 'pass',
          'clock_mhz': stats['clock_mhz'], 'program_cycles': stats['program_cycles'],
          'program_inferences_per_second': round(stats['program_inferences_per_second'], 1),
          'useful_macs': stats['useful_macs']}
if os.path.exists(f'{work}/stream.json'):
    s = json.load(open(f'{work}/stream.json'))
    record['stream'] = {k: v for k, v in s.items() if k not in ('schema', 'network', 'preset')}
    record['stream']['dram_read_megabytes'] = round(s['dram_read_bytes'] / 1e6, 2)
    record['stream']['dram_write_megabytes'] = round(s['dram_write_bytes'] / 1e6, 2)
    record['stream']['inferences_per_second'] = round(s['inferences_per_second'], 1)
print(json.dumps(record))
PY
