#!/usr/bin/env bash
# Gate-level simulation of the whole chip: capsgen_chip of a preset synthesized to OSU018 cells
# (capsgen synth --top capsgen_chip, flattened, RAMs as behavioural memories), then a whole network
# on that netlist with capsgen sim --memory dram --rtl <netlist dir> (the chip testbench, the DRAM
# model, every DRAM write and every operation's outputs checked against the golden model; the model
# is verilated with -fno-gate, docs/flows.md). The same run on the RTL must take exactly as many
# cycles. Prints "gate-level chip: PASS" or the reason it failed.
#
# usage: gate_chip.sh --capsgen BIN --work DIR [--config YAML] [--model YAML] [--seed N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
capsgen="" work="" config="configs/tiny-2x2.yaml" model="models/capsnet-tiny.yaml" seed=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    *) echo "gate_chip.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$capsgen" && -n "$work" ]] || { echo "usage: gate_chip.sh --capsgen BIN --work DIR [--config YAML] [--model YAML] [--seed N]" >&2; exit 2; }
cd "$root"
mkdir -p "$work"
"$capsgen" synth --config "$config" --target asic-osu018 --top capsgen_chip --no-breakdown --quiet --out "$work/synth"
cycles() {  # the report's "N cycles from start_i to done_o"
  sed -n 's/^\*\*\([0-9]*\) cycles from start_i to done_o.*/\1/p' "$1"
}
for kind in rtl gate; do
  rtl_opt=()
  [[ "$kind" == gate ]] && rtl_opt=(--rtl "$work/synth/asic-osu018/netlist")
  "$capsgen" sim --memory dram --config "$config" --model "$model" --seed "$seed" "${rtl_opt[@]}" \
    --work "$work/sim-$kind" > "$work/sim-$kind.log" 2>&1 || true
  grep -q "result: \*\*PASS" "$work/sim-$kind/report.md" 2> /dev/null ||
    { tail -20 "$work/sim-$kind.log"; echo "gate-level chip: FAIL ($kind run not bit-exact, $work/sim-$kind.log)"; exit 1; }
done
rtl_cycles="$(cycles "$work/sim-rtl/report.md")" gate_cycles="$(cycles "$work/sim-gate/report.md")"
[[ -n "$rtl_cycles" && "$rtl_cycles" == "$gate_cycles" ]] ||
  { echo "gate-level chip: FAIL (cycles: RTL '$rtl_cycles', netlist '$gate_cycles')"; exit 1; }
grep -h "^- flattened" "$work/synth/asic-osu018/report.md" | head -1 || true
echo "gate-level chip: PASS ($config, $model: every operation bit-exact on the netlist, $gate_cycles cycles as on the RTL)"
