# Sourced by the engine benchmarks (engine_cycles.sh, engine_rtl_accuracy.sh): generates a preset's
# RTL into WORK/rtl and builds the block testbenches (tb/, Verilator, no tracing) into WORK/build,
# reusing an earlier build in WORK. Needs $root.
# usage: engine_tb_build CAPSGEN CONFIG WORK
engine_tb_build() {
  local capsgen="$1" config="$2" work="$3"
  mkdir -p "$work"
  "$capsgen" generate --config "$config" --out "$work/rtl" > /dev/null
  if [[ ! -x "$work/build/tb_blocks" ]]; then
    cmake -S "$root/tb" -B "$work/build" -G Ninja -DCAPSGEN_RTL_DIR="$work/rtl" -DCMAKE_BUILD_TYPE=Release \
      -DCAPSGEN_TB_TRACE=OFF > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; return 1; }
  fi
  cmake --build "$work/build" -j "${CAPSGEN_RTL_JOBS:-2}" > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; return 1; }
}
