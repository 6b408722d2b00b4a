#!/usr/bin/env bash
# From the DESCNet exploration to a simulated chip (docs/dse-memory.md section 6): runs
# `capsgen dse memory` for a preset and a network, takes the lowest-energy configuration of each
# requested option (best.md; default SEP-PG, HY-PG and SMP-PG), builds its RTL with `capsgen generate --dse ... --dse-id N` and, with
# --sim, runs the whole chip on it from DRAM (`capsgen sim --memory dram`): bit-exact against the
# golden model, every memory counter against the compiler's access model. With --sim it prints one
# JSON line per option: the configuration, its modelled area, energy and cycles, and the chip's
# verdict, cycles and access-model figures.
#
# The exploration uses DESCNet's Table III calibration (--tech configs/tech/sram-32nm.yaml, the
# calibration the chip runs in docs/dse-memory.md sections 6-7 were chosen with) unless --tech is given.
#
# With --streamed the exploration evaluates the streamed program of each size tuple (its modelled
# cycles are printed beside the chip's).
#
# usage: scripts/dse_chip.sh --config PRESET.yaml --model NET.yaml [--option SEP-PG] [--option HY-PG] [--option SMP-PG]
#                            [--max-sectors N] [--streamed] [--size-steps N] [--sep-range] [--objective onchip|total]
#                            [--tech FILE] [--jobs N] [--out DIR] [--sim]
#                            [--seed N] [--capsgen BIN]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
capsgen="$root/build/capsgen" config="" model="" out="build/dse-chip" max_sectors=32 sim="" seed=1 jobs=1
options=() dse_args=() tech=configs/tech/sram-32nm.yaml
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config) config="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --option) options+=("$2"); shift 2 ;;
    --max-sectors) max_sectors="$2"; shift 2 ;;
    --streamed) dse_args+=(--streamed); shift ;;
    --tech) tech="$2"; shift 2 ;;
    --size-steps) dse_args+=(--size-steps "$2"); shift 2 ;;
    --sep-range) dse_args+=(--sep-range); shift ;;
    --objective) dse_args+=(--objective "$2"); shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --sim) sim=1; shift ;;
    --seed) seed="$2"; shift 2 ;;
    --capsgen) capsgen="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "dse_chip.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$config" && -n "$model" ]] || { echo "dse_chip.sh: --config and --model are required" >&2; exit 2; }
[[ ${#options[@]} -gt 0 ]] || options=(SEP-PG HY-PG SMP-PG)
mkdir -p "$out"
"$capsgen" dse memory --config "$config" --model "$model" --tech "$tech" --max-sectors "$max_sectors" --out "$out/dse" --quiet \
  -j "$jobs" ${dse_args[@]+"${dse_args[@]}"}
status=0
for opt in "${options[@]}"; do
  id="$(sed -n "s/^| $opt | \([0-9]*\) |.*/\1/p" "$out/dse/best.md" | sed -n 1p)"
  if [[ -z "$id" ]]; then
    echo "dse_chip.sh: $opt: no configuration of this option in $out/dse/best.md" >&2
    status=1
    continue
  fi
  echo "== $opt: configuration $id of $out/dse/configs.csv.gz"
  grep "^| $opt | $id |" "$out/dse/best.md"
  "$capsgen" generate --config "$config" --dse "$out/dse/configs.csv.gz" --dse-id "$id" --out "$out/$opt"
  if [[ -n "$sim" ]]; then
    "$capsgen" sim --memory dram --config "$out/$opt/preset.yaml" --model "$model" --seed "$seed" --work "$out/$opt-sim" \
      --report "$out/$opt-sim.md" || status=1
    modelled="$(sed -n "s/^| $opt | $id | \([0-9]*\) |.*/\1/p" "$out/dse/best.md" | tail -1)"
    if [[ -n "$modelled" && -f "$out/$opt-sim/report.json" ]]; then
      chip="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total_cycles"])' "$out/$opt-sim/report.json")"
      echo "== $opt: cycles, the exploration's streamed model $modelled, the chip $chip" \
           "($(awk -v m="$modelled" -v c="$chip" 'BEGIN { printf "%+.1f%%", 100 * (m - c) / c }'))"
    fi
    if [[ -f "$out/$opt-sim/report.json" ]]; then
      python3 - "$out/dse/summary.json" "$out/$opt-sim/report.json" "$opt" "$id" <<'PY'
import json, sys
summary, report, opt, cid = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], int(sys.argv[4])
best = next(b for b in summary['best'] if b['id'] == cid)
memories = {m: {'kib': best[m]['kib'], 'sectors': best[m]['sectors']}
            for m in ('shared', 'data', 'weight', 'acc') if isinstance(best.get(m), dict)}
print(json.dumps({'bench': 'dse_chip', 'preset': summary['preset'], 'network': summary['network'],
                  'evaluation': summary['evaluation'], 'option': opt, 'id': cid, 'memories': memories,
                  'area_mm2': round(best['area_mm2'], 4), 'onchip_mj': round(best['energy_mj'], 4),
                  'modelled_cycles': best['cycles'], 'pass': report['pass'], 'chip_cycles': report['total_cycles'],
                  'model_error_pct': round(100 * (best['cycles'] - report['total_cycles']) / report['total_cycles'], 1),
                  'chip_inferences_per_second': round(report['inferences_per_second'], 1),
                  'access_model_figures': report['access_model_figures']}))
PY
    fi
  fi
done
exit "$status"
