#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer and UndefinedBehaviorSanitizer (the system compiler,
# -O1 -g) in their own build directory (default build-asan/) and runs them there. Exit status 0 only
# if every unit test passes and no sanitizer reports: a report ends its test with a failure (ASan
# and LeakSanitizer stop the process, -fno-sanitize-recover=undefined makes UBSan do the same).
#   scripts/sanitize.sh [BUILD_DIR]     JOBS=N sets the build's and ctest's parallelism (default 2)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-asan}"
jobs="${JOBS:-2}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
start=$SECONDS
cmake -S "$root" -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCAPSGEN_BUILD_BENCH=OFF > /dev/null
cmake --build "$build" -j "$jobs" --target capsgen_unit_tests
built=$((SECONDS - start))
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
set +e
ctest -L unit -j "$jobs" --output-on-failure --no-tests=error
rc=$?
set -e
echo "scripts/sanitize.sh: build $((built / 60)) min $((built % 60)) s, tests $(((SECONDS - start - built) / 60)) min $(((SECONDS - start - built) % 60)) s, exit status $rc"
exit $rc
