#!/usr/bin/env bash
# RTL array benchmark: simulated cycles/s of the generated systolic array + accumulator bank
# (default preset capsacc-16x16) under Verilator without tracing, with FST tracing, and under
# Icarus Verilog, plus the array utilization (useful MACs / (rows*cols*cycles)) on a GEMM with
# back-to-back weight tiles. Writes one JSON object to --out. Wall-clock numbers are reported,
# never asserted.
#
# usage: rtl_array_bench.sh --capsgen BIN --out results.json [--config YAML] [--work DIR] [--scale X]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
capsgen="" out="" config="$root/configs/capsacc-16x16.yaml" work="" scale=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    *) echo "rtl_array_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$capsgen" && -n "$out" ]] || { echo "usage: rtl_array_bench.sh --capsgen BIN --out results.json [--config YAML] [--work DIR] [--scale X]" >&2; exit 2; }
# shellcheck source=bench/work_dir.sh
source "$here/work_dir.sh"
bench_work_dir
work="$(cd "$work" && pwd)"
rtl="$work/rtl"

"$capsgen" generate --config "$config" --out "$rtl" --quiet
if [[ ! -x "$work/build/tb_blocks" ]]; then
  cmake -S "$root/tb" -B "$work/build" -G Ninja -DCAPSGEN_RTL_DIR="$rtl" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log" 2>&1
fi
cmake --build "$work/build" -j 2 > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
tbx="$work/build/tb_blocks"

echo "verilator, no trace" >&2
"$tbx" array --rtl "$rtl" --mode bench --scale "$scale" --json "$work/verilator.json" > /dev/null
echo "verilator, FST trace" >&2
fst_scale="$(awk -v s="$scale" 'BEGIN { printf "%.3f", s / 25 }')"
"$tbx" array --rtl "$rtl" --mode bench --scale "$fst_scale" --trace "$work/bench.fst" --json "$work/verilator_fst.json" > /dev/null
fst_bytes="$(stat -c %s "$work/bench.fst")"
rm -f "$work/bench.fst"

echo "icarus" >&2
vec="$work/vectors"
rm -rf "$vec" && mkdir -p "$vec"
"$tbx" array --rtl "$rtl" --mode bench --scale 0.02 --vectors "$vec" --json "$work/icarus_ref.json" > /dev/null
srcs=()
while IFS= read -r f; do [[ -n "$f" && "$f" != //* ]] && srcs+=("$rtl/$f"); done < "$rtl/files.f"
# shellcheck disable=SC2046
iverilog -g2012 $(cat "$vec/params.txt") -Ptb_array.VectorDir=\""$vec"\" -o "$vec/tb.vvp" "$root/tb/icarus/tb_array.v" "${srcs[@]}"
icycles="$(sed -n 's/.*NumCycles=\([0-9]*\).*/\1/p' "$vec/params.txt")"
t0="$(date +%s.%N)"
ilog="$(vvp -n "$vec/tb.vvp")"
t1="$(date +%s.%N)"
grep -q '^PASS tb_array' <<< "$ilog" || { echo "$ilog" | tail -5; echo "icarus run failed" >&2; exit 1; }
icarus_cps="$(awk -v c="$icycles" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", c / (b - a) }')"

{
  printf '{\n  "benchmark": "rtl_array",\n'
  printf '  "verilator": %s,\n' "$(cat "$work/verilator.json")"
  printf '  "verilator_fst": %s,\n' "$(cat "$work/verilator_fst.json")"
  printf '  "fst_bytes_per_cycle": %s,\n' "$(awk -v b="$fst_bytes" -v f="$work/verilator_fst.json" 'BEGIN { getline l < f; match(l, /"cycles": [0-9]+/); c = substr(l, RSTART + 10, RLENGTH - 10); printf "%.1f", b / c }')"
  printf '  "icarus": {"cycles": %s, "cycles_per_second": %s, "note": "includes $readmemh of the vectors"}\n}\n' "$icycles" "$icarus_cps"
} > "$out"
cat "$out"
