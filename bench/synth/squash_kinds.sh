#!/usr/bin/env bash
# What the squash kind costs in hardware (docs/accuracy.md, "Which choices matter"): one activation
# unit of capsacc-16x16 synthesized to OSU018 (Yosys + OpenSTA, `capsgen synth --target asic-osu018
# --top capsgen_activation`, LUT ROMs as logic) with the preset's gain squash (256 x 8-bit gain ROM
# and an 8 x 9-bit multiplier) and with CapsAcc's squash table (2,048 x 8-bit ROM) in its place.
# Prints one JSON line per kind: area, cells' GE, flip-flops and Fmax as `capsgen synth` parsed them
# from the tools' reports. A few minutes on 2 cores.
#
# usage: bench/synth/squash_kinds.sh [--capsgen BIN] [--work DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
capsgen="$root/build/capsgen" work=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "squash_kinds.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/work_dir.sh
source "$root/bench/work_dir.sh"
bench_work_dir
base="$root/configs/capsacc-16x16.yaml"
# The same preset with CapsAcc's table (as bench/accuracy/run.sh derives it).
sed -e "/^  kind: gain/,/^  norm_bits:/c\\  elem_bits: 6\n  norm_bits: 5" \
    -e "s/^name: capsacc-16x16/name: capsacc-16x16-table/" "$base" > "$work/table.yaml"
for kind in gain table; do
  cfg="$base"; [[ "$kind" == table ]] && cfg="$work/table.yaml"
  "$capsgen" synth --config "$cfg" --target asic-osu018 --top capsgen_activation --no-breakdown \
    --out "$work/$kind" >&2
  python3 - "$kind" "$work/$kind/asic-osu018/report.json" <<'EOF'
import json, sys
kind, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
t = next(t for t in r["tops"] if t["top"] == "capsgen_activation")
a, m, tm = t["area"], t["memories"], t["timing"]["reg2reg"]
print(json.dumps({"bench": "squash_kinds", "squash": kind, "preset": r["preset"], "top": t["top"],
                  "logic_area_um2": a["logic_area_um2"], "logic_kge": a["logic_kge"], "cells": a["cells"],
                  "flip_flops": a["flip_flops"], "rom_bits": m["rom_bits"],
                  "fmax_mhz": tm["fmax_mhz"], "critical_path_ns": tm["min_period_ns"], "critical_path": tm["start_register"] + " -> " + tm["end_register"]}))
EOF
done
