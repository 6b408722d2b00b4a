#!/usr/bin/env bash
# A deliberately broken RTL must fail `capsgen sim` with a report that names the operation, the
# tensor and index, both values and the cycle: bit 6 of the bias of column 1 is flipped in the
# generated engine (small-4x4: 25-bit partial sums), so conv1's channel 1 comes out wrong.
# usage: sim_mutant.sh CAPSGEN WORK
set -euo pipefail
capsgen="$1" work="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
mkdir -p "$work"
rm -rf "$work/mutant-rtl"
"$capsgen" generate --config configs/small-4x4.yaml --out "$work/mutant-rtl" > /dev/null
sed -i "s/? brd_data_i\[49:25\] :/? brd_data_i[49:25] ^ 25'd64 :/" "$work/mutant-rtl/capsgen_engine.v"
grep -q "25'd64" "$work/mutant-rtl/capsgen_engine.v" || { echo "sim_mutant.sh: the mutation did not apply"; exit 1; }
set +e
out="$("$capsgen" sim --config configs/small-4x4.yaml --model models/capsnet-tiny.yaml --work "$work" \
       --rtl "$work/mutant-rtl" 2>&1)"
rc=$?
set -e
grep -E 'MISMATCH|FAIL|result' <<<"$out" | sed -n '1,5p'
[ "$rc" -eq 1 ] || { echo "expected exit status 1 from capsgen sim, got $rc"; exit 1; }
grep -Eq 'MISMATCH block=accel conv1 \(i00\) write [0-9]+ \(tensor conv1\.out\[1,[0-9]+,[0-9]+\] .*expected=-?[0-9]+ actual=-?[0-9]+ cycle=[0-9]+' <<<"$out" ||
  { echo "the mismatch report does not name operation, tensor index, values and cycle"; exit 1; }
grep -q '| i00 | conv1 | gemm | FAIL |' <<<"$out" || { echo "the report's table does not mark conv1 FAIL"; exit 1; }
echo "mutant caught"
