#!/usr/bin/env bash
# The activation ROMs written two ways, mapped by Yosys to OSU018 cells: the generated `case` ROM
# (capsgen_act_<rom>_rom.v) and the same table as a memory read from the generated .hex image with
# $readmemh. Prints one JSON record per ROM and style: cells and area (um2). Yosys turns both into
# the same ROM logic (proc_rom, memory_map): equal cells and area, so the choice is about the source
# text; the generator writes the case ROM, one entry per line.
#
# usage: bench/synth/rom_styles.sh [--preset NAME] [--capsgen BIN]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
capsgen="$root/build/capsgen" preset="capsacc-16x16"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --preset) preset="$2"; shift 2 ;;
    --capsgen) capsgen="$2"; shift 2 ;;
    *) echo "bench/synth/rom_styles.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
lib=/usr/share/qflow/tech/osu018/osu018_stdcells.lib
[[ -f "$lib" ]] || { echo "bench/synth/rom_styles.sh: no $lib (Debian package qflow-tech-osu018)" >&2; exit 2; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
"$capsgen" generate --config "$root/configs/$preset.yaml" --out "$work/rtl" --quiet
for rom in sqrt squash exp; do
  module="capsgen_act_${rom}_rom"
  [[ -f "$work/rtl/$module.v" && -f "$work/rtl/$module.hex" ]] || continue
  # The ports and the registered output of the case ROM, its table from the .hex image.
  addr_bits="$(sed -n 's/.*input  wire \[\([0-9]*\):0\] addr_i.*/\1/p' "$work/rtl/$module.v")"
  data_bits="$(sed -n 's/.*output wire \[\([0-9]*\):0\] data_o.*/\1/p' "$work/rtl/$module.v")"
  cat > "$work/$module.readmemh.v" <<VERILOG
module $module (
  input  wire clk_i,
  input  wire [$addr_bits:0] addr_i,
  output wire [$data_bits:0] data_o
);
  reg [$data_bits:0] rom [0:$(( (1 << (addr_bits + 1)) - 1 ))];
  reg [$data_bits:0] data_q;
  initial \$readmemh("$work/rtl/$module.hex", rom);
  always @(posedge clk_i) data_q <= rom[addr_i];
  assign data_o = data_q;
endmodule
VERILOG
  for style in case readmemh; do
    src="$work/rtl/$module.v"; [[ "$style" == readmemh ]] && src="$work/$module.readmemh.v"
    yosys -q -l "$work/$rom.$style.log" -p "read_verilog $src; synth -top $module; dfflibmap -liberty $lib; \
      abc -liberty $lib; opt_clean; stat -liberty $lib" > /dev/null
    area="$(sed -n 's/.*Chip area for module .*: \([0-9.]*\)$/\1/p' "$work/$rom.$style.log" | tail -1)"
    cells="$(sed -n 's/^ *Number of cells: *\([0-9]*\)$/\1/p' "$work/$rom.$style.log" | tail -1)"
    echo "{\"preset\": \"$preset\", \"rom\": \"$rom\", \"style\": \"$style\", \"cells\": $cells, \"area_um2\": $area}"
  done
done
