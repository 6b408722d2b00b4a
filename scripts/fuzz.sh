#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz, clang with AddressSanitizer + UndefinedBehaviorSanitizer)
# in build-fuzz/ and runs each for SECONDS (default 60) on a seed corpus of the repository's own
# files. Exit status 0 only if no harness found anything; a finding is saved as
# build-fuzz/findings/<harness>/crash-* (rerun it with build-fuzz/tests/fuzz/<harness> FILE).
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     harnesses: preset network npz cacti regress_list idx
#                                              mnist_json dse_csv
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
secs="${1:-60}"
shift || true
harnesses=("$@")
[[ ${#harnesses[@]} -gt 0 ]] || harnesses=(preset network npz cacti regress_list idx mnist_json dse_csv)
build="$root/build-fuzz"

CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCAPSGEN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "${JOBS:-1}" --target $(printf 'fuzz_%s ' "${harnesses[@]}")

seeds() {  # the repository's files of each input kind
  case "$1" in
    preset) ls "$root"/configs/*.yaml ;;
    network) ls "$root"/models/*.yaml ;;
    npz) ls "$root"/tests/data/npy/*.np[yz] "$root"/models/weights/*.npz 2>/dev/null | while read -r f; do
           [[ $(stat -c %s "$f") -le 1048576 ]] && echo "$f"; done ;;
    cacti) ls "$root"/tests/data/cacti/* ;;
    regress_list) ls "$root"/tests/regress/*.yaml "$root"/tests/data/regress/*.yaml ;;
    idx) ls "$root"/tests/data/datasets/*-ubyte ;;  # plain IDX: the harness reads bytes after gunzip
    mnist_json) ls "$root"/tests/data/fuzz/*.json ;;
    dse_csv) ls "$root"/tests/data/fuzz/*.csv ;;
  esac
}

status=0
for h in "${harnesses[@]}"; do
  corpus="$build/corpus/$h" findings="$build/findings/$h"
  mkdir -p "$corpus" "$findings"
  seeds "$h" | while read -r f; do cp -f "$f" "$corpus/"; done
  echo "== fuzz_$h: ${secs} s, $(ls "$corpus" | wc -l) corpus files"
  # -rss_limit_mb: a reader that allocates beyond its caps is a finding too.
  if ASAN_OPTIONS=detect_leaks=1 "$build/tests/fuzz/fuzz_$h" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
       -max_len=65536 -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" > "$build/fuzz_$h.log" 2>&1; then
    echo "   no finding: $(grep -E '^stat::number_of_executed_units' "$build/fuzz_$h.log" | awk '{print $2}') runs"
  else
    status=1
    echo "   FINDING (log: $build/fuzz_$h.log):"
    grep -E 'ERROR|SUMMARY|==[0-9]+==' "$build/fuzz_$h.log" | sed -n '1,5p'
  fi
done
exit $status
