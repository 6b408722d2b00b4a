#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs CTest (unit tests,
# RTL block tests, CLI tests). Extra arguments are passed to ctest (e.g. -L unit, -R golden).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/bootstrap.sh
scripts/build.sh
cd build
exec ctest --output-on-failure -j "${CAPSGEN_JOBS:-$(nproc)}" "$@"
