#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs CTest (unit tests,
# CLI tests, RTL block tests, synthesis flows, gate-level simulation).
#   scripts/test.sh             the default suite (what CI runs through .ci/run): every test except
#                               those labelled "nightly" (17 more random RTL configs, 3
#                               gate-level netlists; roughly two hours more on 2 cores, estimated)
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
scripts/bootstrap.sh
scripts/build.sh
cd build
exec ctest --output-on-failure -j "${CAPSGEN_JOBS:-$(nproc)}" "${select[@]}" "${args[@]}"
