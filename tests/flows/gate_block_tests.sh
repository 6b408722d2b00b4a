#!/usr/bin/env bash
# Gate-level simulation of the datapath blocks: the RTL block testbenches of tb/ (the same C++
# testbenches and cycle models the RTL tests use, checked against capsgen::fx) run on the Yosys
# netlists mapped to the OSU018 cells, with the cell models capsgen writes from the Liberty
# functions. Bit-exact or fail.
#   1. capsgen synth --target asic-osu018 --top all: one flattened netlist per module, plus
#      files.f / config.json / osu018_cells.v in <work>/asic-osu018/netlist (an RTL-directory look-alike)
#   2. configure + build tb/ with CAPSGEN_RTL_DIR = that netlist directory
#   3. run every block testbench tb_blocks knows (pe, accumulator, array, ...)
#   4. the iCE40 and Xilinx netlists of the array (capsgen synth --target ice40,xilinx-estimate), with
#      Yosys' cell simulation models, through the array test's Icarus replay
#
# usage: gate_block_tests.sh --capsgen BIN --work DIR --config YAML [--pe-pipeline on|off] [--seed N]
#                            [--scale X] [--jobs N]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
capsgen="" work="" config="" pipe="" seed=1 scale=0.25 jobs="${CAPSGEN_RTL_JOBS:-2}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --pe-pipeline) pipe="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    *) echo "gate_block_tests.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$capsgen" && -n "$work" && -n "$config" ]] || {
  echo "usage: gate_block_tests.sh --capsgen BIN --work DIR --config YAML [--pe-pipeline on|off] [--seed N] [--scale X]" >&2
  exit 2
}
mkdir -p "$work"
work="$(cd "$work" && pwd)"
step() { printf '== %s\n' "$*"; }
t0=$SECONDS

# Every module the block testbenches verilate (blocks and parts of blocks: tb/CMakeLists.txt,
# tb/*.cmake), i.e. all but the top levels capsgen_accel and capsgen_chip: they are the engine (synthesized and simulated
# here) plus the small sequencer, and a second flattened copy of the engine would cost CI minutes.
step "synthesize every module but capsgen_accel and capsgen_chip to OSU018 cells ($config${pipe:+, pe_pipeline $pipe})"
"$capsgen" generate --config "$config" --out "$work/rtl-modules" --quiet
tops="$(grep -v '^//' "$work/rtl-modules/files.f" | grep '\.v$' | sed 's/\.v$//' | grep -vx -e capsgen_accel -e capsgen_chip | paste -sd, -)"
"$capsgen" synth --config "$config" ${pipe:+--pe-pipeline "$pipe"} --target asic-osu018 --top "$tops" \
  --no-breakdown --quiet --out "$work"
net="$work/asic-osu018/netlist"
[[ -f "$net/files.f" && -f "$net/config.json" ]] || { echo "FAIL: no netlist directory $net"; exit 1; }
echo "netlists in $net ($((SECONDS - t0)) s)"

step "build the block testbenches on the netlists"
cmake -S "$root/tb" -B "$work/tb-build" -G Ninja -DCAPSGEN_RTL_DIR="$net" -DCMAKE_BUILD_TYPE=Release \
  -DCAPSGEN_TB_TRACE=OFF -DCAPSGEN_VERILATOR_EXTRA_ARGS=-fno-gate > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; echo "FAIL configure"; exit 1; }
cmake --build "$work/tb-build" -j "$jobs" > "$work/build.log" 2>&1 || { tail -50 "$work/build.log"; echo "FAIL build"; exit 1; }
echo "built in $((SECONDS - t0)) s"

tbx="$work/tb-build/tb_blocks"
# The testbenches tb_blocks offers ("usage: tb_blocks pe|accumulator|array --rtl DIR ...").
blocks="$("$tbx" 2>&1 | sed -n 's/^usage: [^ ]* \([a-z_|]*\) .*/\1/p' | tr '|' ' ')" || true
[[ -n "$blocks" ]] || { echo "FAIL: cannot read the testbench list from $tbx"; exit 1; }
for block in $blocks; do
  step "gate-level $block (seed $seed, scale $scale)"
  "$tbx" "$block" --rtl "$net" --seed "$seed" --scale "$scale"
done
# 4. The FPGA netlists of the array (iCE40 with SB_MAC16 or LUTs, Xilinx 7 with DSP48E1), with Yosys'
#    own cell simulation models, under Icarus: the array test's Icarus replay (tb/icarus/tb_array.v
#    with the vectors of the Verilator run). Skipped when iverilog is missing.
if command -v iverilog > /dev/null && [[ -f "$root/tb/icarus/tb_array.v" ]]; then
  step "FPGA netlists of the array under Icarus"
  datdir="$(cd "$(dirname "$(command -v yosys)")/../share/yosys" && pwd)"  # Yosys data (cells_sim.v)
  targets=xilinx-estimate
  command -v nextpnr-ice40 > /dev/null && targets="ice40,$targets"
  "$capsgen" synth --config "$config" --rtl "$work/rtl" --target "$targets" --top capsgen_systolic_array --quiet \
    --out "$work" > "$work/fpga.log" 2>&1 || { cat "$work/fpga.log"; echo "FAIL fpga synthesis"; exit 1; }
  vec="$work/vectors"
  rm -rf "$vec" && mkdir -p "$vec"
  "$tbx" array --rtl "$net" --seed "$seed" --scale "$scale" --mode icarus --vectors "$vec" | tail -1
  nets=()
  for f in "$work"/ice40/capsgen_systolic_array/*.dut.v; do [[ -f "$f" ]] && nets+=("ice40:$f"); done
  nets+=("xilinx:$work/xilinx-estimate/capsgen_systolic_array/xilinx.v")
  for entry in "${nets[@]}"; do
    fam="${entry%%:*}" file="${entry#*:}"
    defs=()
    [[ "$fam" == ice40 ]] && defs=(-DNO_ICE40_DEFAULT_ASSIGNMENTS)
    # shellcheck disable=SC2046
    iverilog -g2012 "${defs[@]}" $(cat "$vec/params.txt") -Ptb_array.VectorDir=\""$vec"\" -o "$vec/$fam.vvp" \
      "$root/tb/icarus/tb_array.v" "$file" "$work/rtl/capsgen_accumulator.v" "$work/rtl/capsgen_accumulator_bank.v" \
      "$datdir/$fam/cells_sim.v" > "$vec/$fam.iverilog.log" 2>&1 || { cat "$vec/$fam.iverilog.log"; echo "FAIL iverilog $fam"; exit 1; }
    out="$(vvp -n "$vec/$fam.vvp")" || true
    echo "$(basename "$file"): $(echo "$out" | tail -1)"
    grep -q '^PASS tb_array' <<< "$out" || { echo "$out" | tail -8; echo "FAIL $fam netlist of the array"; exit 1; }
  done
fi
echo "ALL PASS gate-level ($((SECONDS - t0)) s)"
