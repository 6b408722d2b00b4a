#!/usr/bin/env bash
# The whole chip (capsgen_chip: frame sequencer, engine, scratchpads, DMA, PMUs, memory system) on
# OSU018, one preset at a time: capsgen synth --target asic-osu018 --top capsgen_chip --no-breakdown
# (flattened; RAMs kept as macros and counted apart, ROMs as logic). Prints one JSON record per
# preset: logic area (um2, kGE), cells, flip-flops, RAM macro bits, critical path and Fmax; logs go
# to stderr. An existing run directory with a complete report is reused (delete it to redo it).
#
# usage: bench/synth/chip.sh [--presets "tiny-2x2 small-4x4"] [--out DIR] [--capsgen BIN]
#   --out: one capsgen synth --out directory per preset (default: build/bench/synth-chip)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
capsgen="$root/build/capsgen" presets="tiny-2x2 small-4x4" out="$root/build/bench/synth-chip"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --presets) presets="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --capsgen) capsgen="$2"; shift 2 ;;
    *) echo "bench/synth/chip.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for p in $presets; do
  dir="$out/$p"
  report="$dir/asic-osu018/report.json"
  if ! python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("ok") else 1)' "$report" 2> /dev/null; then
    echo "bench/synth/chip.sh: $p" >&2
    "$capsgen" synth --config "$root/configs/$p.yaml" --target asic-osu018 --top capsgen_chip --no-breakdown \
      --quiet --out "$dir" >&2
  fi
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = next(t for t in d["tops"] if t["top"] == "capsgen_chip")
a, tm, m = t["area"], t["timing"], t["memories"]
print(json.dumps({"bench": "synth_chip", "preset": d["preset"], "top": "capsgen_chip",
                  "logic_area_um2": a["logic_area_um2"], "logic_kge": a["logic_kge"], "cells": a["cells"],
                  "flip_flops": a["flip_flops"], "ram_macro_bits": m["macro_bits"], "rams": m["count"],
                  "min_period_ns": tm["min_period_ns"], "fmax_mhz": tm["fmax_mhz"],
                  "target_mhz": tm["target_mhz"], "meets_target": tm["meets_target"],
                  "yosys_seconds": t["yosys_seconds"]}, sort_keys=True))' "$report"
done
