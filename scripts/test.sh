#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs CTest (unit tests,
# CLI tests, RTL block tests, synthesis flows, gate-level simulation).
#   scripts/test.sh             the default suite (what CI runs through .ci/run): every test except
#                               those labelled "nightly" (19 more random RTL configs, the 16x16
#                               and 4x4 block tests, the tiny accelerator's ASIC and Xilinx flows,
#                               3 gate-level block netlists and the tiny chip at gate level,
#                               random chip configs, the DESCNet-to-chip
#                               run, the full DeepCaps on the RTL, the single-node Slurm run,
#                               the readers' fuzzing and the unit tests under ASan and UBSan)
#   scripts/test.sh --nightly   everything, nightly-labelled tests included
# Other arguments are passed to ctest (e.g. -L unit, -R golden).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
select=(-LE nightly)
args=()
for a in "$@"; do
  if [[ "$a" == --nightly ]]; then select=(); else args+=("$a"); fi
done
start=$SECONDS
scripts/bootstrap.sh
# Compiler cache for the Verilator model builds (tb/CMakeLists.txt uses ccache when it is installed):
# the Verilator runtime and identical models of different presets compile once per suite. The cache
# lives in build/, so a fresh clone starts cold and its duration is what CI sees.
export CCACHE_DIR="${CCACHE_DIR:-$root/build/ccache}" CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
scripts/build.sh
cd build
set +e
ctest --output-on-failure -j "${CAPSGEN_JOBS:-$(nproc)}" "${select[@]}" "${args[@]}"
rc=$?
set -e
elapsed=$((SECONDS - start))
printf 'scripts/test.sh: %d min %02d s from bootstrap to the last test, %s cores\n' $((elapsed / 60)) $((elapsed % 60)) "$(nproc)"
exit $rc
