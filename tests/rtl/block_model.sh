# Sourced by the RTL case scripts of tests/rtl: builds tb_blocks with only the named block tests
# (CAPSGEN_TB_BLOCKS, ;-separated) on one RTL directory. Prints the tail of the log and exits 1 when
# configuring or building fails.
# usage: build_block_model ROOT RTL_DIR BUILD_DIR BLOCKS
build_block_model() {
  local root="$1" rtl="$2" build="$3" blocks="$4"
  cmake -S "$root/tb" -B "$build" -G Ninja -DCAPSGEN_RTL_DIR="$rtl" -DCMAKE_BUILD_TYPE=Release -DCAPSGEN_TB_TRACE=OFF \
    -DCAPSGEN_TB_BLOCKS="$blocks" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; echo "FAIL configure"; exit 1; }
  cmake --build "$build" -j "${CAPSGEN_RTL_JOBS:-2}" > "$build.build.log" 2>&1 ||
    { tail -50 "$build.build.log"; echo "FAIL build"; exit 1; }
}
