# Sourced by the RTL case scripts of tests/rtl: their work directories, and tb_blocks with only the
# named block tests (CAPSGEN_TB_BLOCKS, ;-separated) built on one RTL directory.

# The case's work directory, created; prints its absolute path.
# usage: work="$(case_work_dir WORK)"
case_work_dir() {
  mkdir -p "$1" && (cd "$1" && pwd)
}

# An empty place for generated RTL under WORK; prints its path.
# usage: rtl="$(fresh_rtl_dir WORK)"
fresh_rtl_dir() {
  rm -rf "$1/rtl" && echo "$1/rtl"
}

# Builds tb_blocks; prints the tail of the log and exits 1 when configuring or building fails.
# usage: build_block_model ROOT RTL_DIR BUILD_DIR BLOCKS
build_block_model() {
  local root="$1" rtl="$2" build="$3" blocks="$4"
  cmake -S "$root/tb" -B "$build" -G Ninja -DCAPSGEN_RTL_DIR="$rtl" -DCMAKE_BUILD_TYPE=Release -DCAPSGEN_TB_TRACE=OFF \
    -DCAPSGEN_TB_BLOCKS="$blocks" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; echo "FAIL configure"; exit 1; }
  cmake --build "$build" -j "${CAPSGEN_RTL_JOBS:-2}" > "$build.build.log" 2>&1 ||
    { tail -50 "$build.build.log"; echo "FAIL build"; exit 1; }
}

# Builds tb_blocks with BLOCK only and runs its test on RTL_DIR with seed 1: sets block_out (what it
# printed) and block_rc (its exit status).
# usage: run_block_test ROOT RTL_DIR WORK BLOCK
run_block_test() {
  local root="$1" rtl="$2" work="$3" block="$4"
  build_block_model "$root" "$rtl" "$work/build" "$block"
  set +e
  block_out="$("$work/build/tb_blocks" "$block" --rtl "$rtl" --seed 1 2>&1)"
  block_rc=$?
  set -e
}
