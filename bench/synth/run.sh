#!/usr/bin/env bash
# The synthesis table of docs/figures.md and docs/flows.md: for every preset and both PE variants
# (pe_pipeline off/on), capsgen synth on every datapath block:
#   asic-osu018      area (um^2, kGE), flip-flops, RAM macro bits, critical path, Fmax
#   xilinx-estimate  LUT, FF, DSP, BRAM
#   ice40            place and route on UP5K/HX8K (presets with a 4x4 or smaller array: the
#                    16x16 array needs 256 multipliers, far beyond an iCE40)
# then bench/synth_table collects the reports into a Markdown table and one JSON file.
#
# usage: bench/synth/run.sh [--build DIR] [--out DIR] [--presets "tiny-2x2 small-4x4 capsacc-16x16"]
#                           [--update FILE]...
#   --build   build directory with capsgen and bench/synth_table (default: build)
#   --out     results (default: <build>/bench/synth); one capsgen synth --out directory per run
#   --update  also replace the table between <!-- synth-table:begin/end --> markers in FILE
# Run time: about 2 minutes for tiny-2x2, 5 for small-4x4, 30-60 for capsacc-16x16 (Yosys on the
# flattened 16x16 array dominates) on 2 cores. Runs are sequential; an existing run directory with
# complete reports is reused (delete it to redo it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build" out="" presets="tiny-2x2 small-4x4 capsacc-16x16"
updates=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --presets) presets="$2"; shift 2 ;;
    --update) updates+=("$2"); shift 2 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
out="${out:-$build/bench/synth}"
capsgen="$build/capsgen"
table="$build/bench/synth_table"
[[ -x "$capsgen" && -x "$table" ]] || { echo "run.sh: build capsgen and synth_table first (scripts/build.sh)" >&2; exit 2; }
mkdir -p "$out"
cd "$root"
dirs=()
for p in $presets; do
  # The datapath blocks the table covers: array, accumulator bank, activation bank and the memories
  # of the scratchpad organization (not the DMA engine, docs/rtl-dma.md, nor the blocks' submodules).
  "$capsgen" generate --config "configs/$p.yaml" --out "$out/$p-rtl" --quiet
  tops="capsgen_systolic_array,capsgen_accumulator_bank,capsgen_activation_bank"
  for m in $(grep -o '^capsgen_spm_[a-z]*\.v' "$out/$p-rtl/files.f" | grep -v '^capsgen_spm_ram' | sed 's/\.v$//'); do
    tops="$tops,$m"
  done
  for v in off on; do
    d="$out/$p-pipe-$v"
    targets="asic-osu018 xilinx-estimate"
    [[ "$p" != "capsacc-16x16" ]] && targets="$targets ice40"
    for t in $targets; do
      if [[ -f "$d/$t/report.json" ]]; then
        echo "== $p pe_pipeline=$v $t: reusing $d/$t/report.json"
        continue
      fi
      echo "== $p pe_pipeline=$v $t ($(date +%H:%M:%S))"
      if [[ "$t" == ice40 ]]; then
        # iCE40: the array only (the activation unit alone does not fit an iCE40 of this size)
        "$capsgen" synth --config "configs/$p.yaml" --pe-pipeline "$v" --target ice40 --top capsgen_systolic_array \
          --out "$d" --quiet || echo "   (ice40 run failed, see $d/ice40)"
      else
        "$capsgen" synth --config "configs/$p.yaml" --pe-pipeline "$v" --target "$t" --top "$tops" --out "$d" --quiet
      fi
    done
    dirs+=("$d")
  done
done
args=(--md "$out/synth_table.md" --json "$out/synth_table.json")
for f in "${updates[@]}"; do args+=(--update "$f"); done
"$table" "${args[@]}" "${dirs[@]}"
echo "table: $out/synth_table.md, data: $out/synth_table.json"
