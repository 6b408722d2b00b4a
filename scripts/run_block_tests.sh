#!/usr/bin/env bash
# Block tests of the generated datapath RTL for one accelerator config:
#   1. capsgen generate (a preset, or a seeded random config written to YAML first)
#   2. verilator --lint-only -Wall on every generated module (must be clean)
#   3. configure + build the Verilator testbench project tb/ against that RTL
#   4. run the PE, accumulator, array, activation, scratchpad, DMA, PMU, memory-system, gather, staging, engine and
#      frame-sequencer block tests, whole compiled networks on the engine (capsgen compile --dump-engine,
#      tb_blocks engine --program) and capsnet-tiny's frame program on the frame sequencer
#   5. optionally (--icarus) replay the array and activation tests under Icarus Verilog and compare
#
# usage: run_block_tests.sh --capsgen BIN --work DIR (--config YAML | --random SEED)
#                           [--seed N] [--scale X] [--icarus | --icarus-only] [--jobs N] [--no-trace]
#                           [--same-as REF.yaml] [--lint-only] [--run-only]
# --icarus-only reuses the RTL and build of an earlier run in DIR (CTest fixture); --jobs defaults
# to $CAPSGEN_RTL_JOBS or 2; --no-trace builds the models without FST support (faster builds).
# --same-as REF.yaml: a block whose RTL, parameter files and engine programs equal those of preset
# REF (scripts/rtl_same_blocks.py) is neither built nor run here: with the same seed it would be
# the same test as REF's own block test. The others are built and run as usual.
# --lint-only: steps 1 and 2 only (generate, Verilator lint, Yosys read), no testbench build.
# --run-only reuses the RTL, engine programs and build of an earlier run in DIR (CTest fixture) and
# runs step 4 again, e.g. with other initial register values (CAPSGEN_RAND_RESET, tb/common/sim.hpp).
# Exit status 0 only if every step passed. Nothing outside DIR is written.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
capsgen="" work="" config="" random="" seed=1 scale=1 icarus=0 icarus_only=0 lint_only=0 run_only=0 jobs="${CAPSGEN_RTL_JOBS:-2}" trace=ON same_as=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --random) random="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --icarus) icarus=1; shift ;;
    --icarus-only) icarus=1; icarus_only=1; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --no-trace) trace=OFF; shift ;;
    --same-as) same_as="$2"; shift 2 ;;
    --lint-only) lint_only=1; shift ;;
    --run-only) run_only=1; shift ;;
    *) echo "run_block_tests.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ -z "$capsgen" || -z "$work" || ( -z "$config" && -z "$random" ) ]]; then
  echo "usage: run_block_tests.sh --capsgen BIN --work DIR (--config YAML | --random SEED) [--seed N] [--scale X] [--icarus] [--jobs N]" >&2
  exit 2
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
rtl="$work/rtl"
step() { printf '== %s\n' "$*"; }
t0=$SECONDS

# The engine programs of step 4 (capsgen compile --dump-engine): capsnet-tiny with seeded weights and a
# synthetic image everywhere; the presets also run capsnet-small with its trained weights on MNIST
# test image 0.
nets=("capsnet-tiny:")
[[ -z "$random" ]] && nets+=("capsnet-small:--weights $root/models/weights/capsnet-small-mnist.npz --dataset mnist --index 0")

# 4. run the block tests of $blocks with tb_blocks $tbx, then the engine programs
run_blocks() {
  # The frame sequencer's test also runs capsnet-tiny's frame program, when the preset has the chip.
  local frames=()
  [[ -d "$work/frames-capsnet-tiny" ]] && frames=(--program "$work/frames-capsnet-tiny")
  for block in "${blocks[@]}"; do
    step "$block (seed $seed)"
    if [[ "$block" == frame_seq ]]; then
      "$tbx" "$block" --rtl "$rtl" --seed "$seed" --scale "$scale" "${frames[@]}"
    else
      "$tbx" "$block" --rtl "$rtl" --seed "$seed" --scale "$scale"
    fi
  done
  # The compute engine on compiled networks (the programs dumped above): the whole program, every
  # descriptor in order on one memory that the engine's own writes update (the RTL computes the
  # inference), each descriptor's writes compared with the functional executor's and the RTL's class
  # prediction with the golden model's.
  if [[ " ${blocks[*]} " == *" engine "* ]]; then
    for entry in "${nets[@]}"; do
      net="${entry%%:*}" opts="${entry#*:}"
      step "engine program $net${opts:+ ($opts)}"
      "$tbx" engine --rtl "$rtl" --program "$work/engine-$net"
    done
  fi
}

if [[ "$icarus_only" == 1 || "$run_only" == 1 ]]; then
  # Reuse the RTL and testbench build of an earlier run in the same --work directory.
  [[ -x "$work/build/tb_blocks" && -f "$rtl/files.f" ]] || { echo "FAIL: no earlier build in $work"; exit 1; }
  mapfile -t sources < <(grep -v '^//' "$rtl/files.f" | sed '/^$/d')
  tbx="$work/build/tb_blocks"
  if [[ "$run_only" == 1 ]]; then
    # The blocks that run: those the earlier run built (the list it gave tb/'s CMake).
    IFS=';' read -r -a blocks <<< "$(sed -n 's/^CAPSGEN_TB_BLOCKS:[A-Z]*=//p' "$work/build/CMakeCache.txt")"
    [[ ${#blocks[@]} -gt 0 ]] || { echo "FAIL: no block list in $work/build/CMakeCache.txt"; exit 1; }
    run_blocks
  fi
else
# 1. generate
if [[ -n "$random" ]]; then
  config="$work/random-$random.yaml"
  step "generate random config $random -> $config"
  "$capsgen" generate --random-config "$random" --config "$config" --out "$rtl"
else
  step "generate $config"
  "$capsgen" generate --config "$config" --out "$rtl"
fi
python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))
print(" ".join(f"{k} {str(c[k]).lower()}" for k in ("rows", "cols", "pe_pipeline", "data_bits", "weight_bits", "psum_bits", "acc_depth")))' "$rtl/config.json"

# 2. lint every module on its own (-Wall, no waivers beyond the commented ones in the RTL), $jobs at
# a time; a module's messages are in $work/lint/<module>.log.
step "lint"
mapfile -t sources < <(grep -v '^//' "$rtl/files.f" | sed '/^$/d')
mkdir -p "$work/lint"
lint_one() {  # lint_one MODULE: exit status 255 stops xargs at the first module that fails
  (cd "$rtl" && verilator --lint-only -Wall -F files.f --top-module "$1") > "$work/lint/$1.log" 2>&1 \
    || { cat "$work/lint/$1.log"; echo "FAIL lint $1"; exit 255; }
}
export -f lint_one
export rtl work
printf '%s\n' "${sources[@]%.v}" | xargs -P "$jobs" -I{} bash -c 'lint_one "$1"' _ {} || exit 1
echo "verilator lint clean: ${#sources[@]} modules"
# Yosys 0.23 must accept the same files (read, hierarchy check, processes).
if command -v yosys > /dev/null; then
  srcs=()
  for f in "${sources[@]}"; do srcs+=("$rtl/$f"); done
  yosys -q -p "read_verilog ${srcs[*]}; hierarchy -check; proc" > "$work/yosys.log" 2>&1 \
    || { cat "$work/yosys.log"; echo "FAIL yosys"; exit 1; }
  echo "yosys read/hierarchy/proc clean"
fi
if [[ "$lint_only" == 1 ]]; then
  echo "ALL PASS (lint only, $((SECONDS - t0)) s)"
  exit 0
fi

dump_programs() {  # dump_programs CONFIG DIR_PREFIX
  local entry net opts
  for entry in "${nets[@]}"; do
    net="${entry%%:*}" opts="${entry#*:}"
    # shellcheck disable=SC2086  # opts is a list of options
    "$capsgen" compile --config "$1" --model "$root/models/$net.yaml" $opts --seed "$seed" \
      --dump-engine "$2-$net" > "$2-$net.log" || { cat "$2-$net.log"; echo "FAIL compile"; exit 1; }
  done
}
dump_programs "$config" "$work/engine"
# capsnet-tiny's frame program (capsgen compile --stream --frames) for the frame sequencer's test, where
# the preset has the chip.
rm -rf "$work/frames-capsnet-tiny"
if python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["supported"] is not True)' "$rtl/chip.json"; then
  "$capsgen" compile --config "$config" --model "$root/models/capsnet-tiny.yaml" --seed "$seed" --stream \
    --frames "$work/frames-capsnet-tiny" > "$work/frames-capsnet-tiny.log" || { cat "$work/frames-capsnet-tiny.log"; echo "FAIL compile"; exit 1; }
fi

# 2b. with --same-as: leave out the blocks that would repeat REF's tests.
blocks=(pe accumulator array activation scratchpad dma pmu memsys gather staging engine frame_seq)
if [[ -n "$same_as" ]]; then
  step "compare with $same_as"
  "$capsgen" generate --config "$same_as" --out "$work/ref-rtl" > /dev/null
  dump_programs "$same_as" "$work/ref-engine"
  kept=()
  while read -r verdict block why; do
    if [[ "$verdict" == same && "$block" == engine ]]; then
      for entry in "${nets[@]}"; do  # the programs, less the comment lines that name the preset
        net="${entry%%:*}"
        if ! diff -r -q -I '^#' -I '^//' "$work/engine-$net" "$work/ref-engine-$net" > /dev/null; then
          verdict=differs why="the $net engine program"
        fi
      done
    fi
    if [[ "$verdict" == same ]]; then
      echo "SKIP $block: its RTL, parameter files and programs equal $same_as's (the same test runs there)"
    else
      echo "run $block: $why differs from $same_as's"
      kept+=("$block")
    fi
  done < <(python3 "$root/scripts/rtl_same_blocks.py" "$rtl" "$work/ref-rtl" "${blocks[@]}")
  blocks=("${kept[@]}")
fi
block_list="$(IFS=';'; echo "${blocks[*]}")"

# 3. build the testbenches
step "build testbenches (${blocks[*]})"
cmake -S "$root/tb" -B "$work/build" -G Ninja -DCAPSGEN_RTL_DIR="$rtl" -DCMAKE_BUILD_TYPE=Release -DCAPSGEN_TB_TRACE="$trace" \
  -DCAPSGEN_TB_BLOCKS="$block_list" > "$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; echo "FAIL configure"; exit 1; }
cmake --build "$work/build" -j "$jobs" > "$work/build.log" 2>&1 || { tail -50 "$work/build.log"; echo "FAIL build"; exit 1; }
echo "built in $((SECONDS - t0)) s"

# 4. run
tbx="$work/build/tb_blocks"
run_blocks
fi

# 5. Icarus cross-check of the array and activation tests
if [[ "$icarus" == 1 ]]; then
  step "icarus array cross-check"
  vec="$work/vectors"
  rm -rf "$vec" && mkdir -p "$vec"
  "$tbx" array --rtl "$rtl" --seed "$seed" --mode icarus --vectors "$vec" | tail -1
  srcs=()
  for f in "${sources[@]}"; do srcs+=("$rtl/$f"); done
  # shellcheck disable=SC2046
  iverilog -g2012 $(cat "$vec/params.txt") -Ptb_array.VectorDir=\""$vec"\" -o "$vec/tb_array.vvp" \
    "$root/tb/icarus/tb_array.v" "${srcs[@]}"
  out="$(vvp -n "$vec/tb_array.vvp")" || true
  echo "$out" | tail -12
  grep -q '^PASS tb_array' <<< "$out" || { echo "FAIL icarus"; exit 1; }
  step "icarus activation cross-check"
  vec="$work/vectors_activation"
  rm -rf "$vec" && mkdir -p "$vec"
  "$tbx" activation --rtl "$rtl" --seed "$seed" --mode icarus --vectors "$vec" | tail -1
  # shellcheck disable=SC2046
  iverilog -g2012 -s tb_activation $(cat "$vec/params.txt") -Ptb_activation.VectorDir=\""$vec"\" \
    -o "$vec/tb_activation.vvp" "$root/tb/icarus/tb_activation.v" "${srcs[@]}"
  out="$(vvp -n "$vec/tb_activation.vvp")" || true
  echo "$out" | tail -12
  grep -q '^PASS tb_activation' <<< "$out" || { echo "FAIL icarus activation"; exit 1; }
fi
echo "ALL PASS ($((SECONDS - t0)) s)"
