#!/usr/bin/env bash
# A scratchpad whose sectors report themselves usable while still waking must trip the chip's
# a_memory_error_free assertion (docs/rtl-assertions.md), not only the final comparison: tiny-2x2-hy
# (sectors wake in 300 cycles, so PMU barriers wait) with every scratchpad's sleep_ack_o dropping
# once fewer than 200 wake-up cycles are left. The PMUs then pass their barriers early, and the frames
# after them access sectors that still refuse accesses. The run must stop at the assertion.
# usage: wake_mutant.sh CAPSGEN WORK
set -euo pipefail
capsgen="$1" work="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rm -rf "$work"
mkdir -p "$work"
rtl="$work/rtl"
"$capsgen" generate --config "$root/configs/tiny-2x2-hy.yaml" --out "$rtl" --quiet
for f in "$rtl"/capsgen_spm_data.v "$rtl"/capsgen_spm_weight.v "$rtl"/capsgen_spm_acc.v "$rtl"/capsgen_spm_shared.v; do
  sectors=$(grep -c 'reg \[8:0\] wake_s[0-9]*_q;' "$f")
  early=""
  for ((s = sectors - 1; s >= 0; s--)); do early="$early${early:+, }wake_s${s}_q < 9'd200"; done
  sed -i "s/^  assign sleep_ack_o = sleep_ack_q;\$/  assign sleep_ack_o = sleep_ack_q \& ~{$early};/" "$f"
  grep -q "assign sleep_ack_o = sleep_ack_q & ~{" "$f" || { echo "wake_mutant.sh: the mutation did not apply to $f"; exit 1; }
done
rc=0
out="$(cd "$root" && "$capsgen" sim --memory dram --config configs/tiny-2x2-hy.yaml --model models/capsnet-tiny.yaml \
  --seed 1 --rtl "$rtl" --work "$work/sim" 2>&1)" || rc=$?
grep -E 'Assertion failed|result:' <<<"$out" | sed -n '1,3p'
[[ "$rc" -ne 0 ]] || { echo "expected the mutant's chip run to fail"; exit 1; }
grep -Eq 'Assertion failed in TOP\.capsgen_chip\.a_memory_error_free' <<<"$out" ||
  { echo "the failure does not name a_memory_error_free"; exit 1; }
echo "mutant caught by a_memory_error_free"
