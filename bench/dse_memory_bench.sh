#!/usr/bin/env bash
# DESCNet memory exploration benchmark: runs `capsgen dse memory` (default CapsNet-MNIST on
# capsacc-16x16) and prints one JSON object: configurations evaluated, Pareto size, threads, the
# wall-clock seconds of the exploration alone and of the whole command (compile and quantization
# included), and the best configuration of each memory option (area, on-chip energy per
# inference). DESCNet reports 1.5 minutes for its 15,233 CapsNet configurations (single thread,
# with CACTI-P in the loop). With --streamed, each size tuple's streamed program is compiled and
# evaluated (docs/dse-memory.md section 7). Numbers are reported, never asserted.
#
# usage: dse_memory_bench.sh [--capsgen BIN] [--config YAML] [--model YAML] [-j N] [--runs N] [--no-csv]
#                            [--streamed] [--size-steps N]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
capsgen="$root/build/capsgen" config="$root/configs/capsacc-16x16.yaml" model="$root/models/capsnet-mnist.yaml"
jobs=1 runs=3 csv="" extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    -j|--jobs) jobs="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --no-csv) csv="--no-csv"; shift ;;
    --streamed) extra+=(--streamed); shift ;;
    --size-steps) extra+=(--size-steps "$2"); shift 2 ;;
    *) echo "dse_memory_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
best_dse="" best_all=""
for ((r = 0; r < runs; r++)); do
  "$capsgen" dse memory --config "$config" --model "$model" --out "$work/out" -j "$jobs" --quiet $csv ${extra[@]+"${extra[@]}"}
  read -r dse all < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["dse_seconds"], j["seconds"])' "$work/out/summary.json")
  if [[ -z "$best_dse" ]] || awk -v a="$dse" -v b="$best_dse" 'BEGIN { exit !(a < b) }'; then best_dse="$dse"; fi
  if [[ -z "$best_all" ]] || awk -v a="$all" -v b="$best_all" 'BEGIN { exit !(a < b) }'; then best_all="$all"; fi
done
python3 - "$work/out/summary.json" "$best_dse" "$best_all" "$runs" "$csv" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps({
    "bench": "dse_memory", "network": j["network"], "preset": j["preset"], "threads": j["threads"],
    "evaluation": j["evaluation"], "size_steps": j["size_steps"],
    "configurations": j["configurations"], "evaluated": j["evaluated"], "skipped": j["skipped"],
    "pareto_size": j["pareto_size"],
    "dse_seconds_min": float(sys.argv[2]), "total_seconds_min": float(sys.argv[3]), "runs": int(sys.argv[4]),
    "csv_written": sys.argv[5] == "",
    "configurations_per_second": j["evaluated"] / float(sys.argv[2]) if float(sys.argv[2]) > 0 else None,
    "best": {b["option"]: {"id": b["id"], "area_mm2": round(b["area_mm2"], 4), "onchip_mj": round(b["energy_mj"], 4),
                           "offchip_mj": round(b["offchip_mj"], 4), "cycles": b["cycles"]} for b in j["best"]},
}, indent=2))
PY
