#!/usr/bin/env bash
# The frame sequencer's block test (tb_blocks frame_seq, docs/rtl-chip.md) on two generated RTLs
# that the presets' block tests do not cover:
#   nopg:   tiny-2x2 without power gating (every preset has it): a PMU frame must be refused
#           (error_o, the program stops there); every other check of the test passes as well.
#   mutant: tiny-2x2's frame sequencer with the error on a DMA done_i without an outstanding frame
#           removed: the test must fail, and the message must name error_o and that cause.
# Each builds one small model (tb_blocks with the frame_seq block only).
# usage: frame_seq_cases.sh CAPSGEN WORK nopg|mutant
set -euo pipefail
capsgen="$1" work="$2" mode="$3"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=tests/rtl/block_model.sh
source "$root/tests/rtl/block_model.sh"
work="$(case_work_dir "$work")"
rtl="$(fresh_rtl_dir "$work")"
case "$mode" in
  nopg)
    sed 's/^\(  power_gating:\) true/\1 false/' "$root/configs/tiny-2x2.yaml" > "$work/tiny-2x2-nopg.yaml"
    grep -q '^  power_gating: false' "$work/tiny-2x2-nopg.yaml" || { echo "frame_seq_cases.sh: the variant did not apply"; exit 1; }
    "$capsgen" generate --config "$work/tiny-2x2-nopg.yaml" --out "$rtl" > /dev/null
    python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["power_gating"] is not False)' "$rtl/chip.json" \
      || { echo "frame_seq_cases.sh: the variant still has power gating"; exit 1; }
    ;;
  mutant)
    "$capsgen" generate --config "$root/configs/tiny-2x2.yaml" --out "$rtl" > /dev/null
    sed -i "s/assign unexpected_dma_done = dma_done_i & /assign unexpected_dma_done = 1'b0 \& dma_done_i \& /" \
      "$rtl/capsgen_frame_seq.v"
    grep -q "unexpected_dma_done = 1'b0 & dma_done_i" "$rtl/capsgen_frame_seq.v" || { echo "frame_seq_cases.sh: the mutation did not apply"; exit 1; }
    ;;
  *) echo "usage: frame_seq_cases.sh CAPSGEN WORK nopg|mutant" >&2; exit 2 ;;
esac
run_block_test "$root" "$rtl" "$work" frame_seq
out="$block_out" rc="$block_rc"
grep -E 'MISMATCH|FAIL|PASS' <<<"$out" | sed -n '1,4p'
if [[ "$mode" == nopg ]]; then
  [[ "$rc" -eq 0 ]] || { echo "expected the block test to pass, exit status $rc"; exit 1; }
  grep -q 'PMU frame without power gating' <<<"$out" || { echo "the refused PMU frame case did not run"; exit 1; }
  echo "frame_seq without power gating: PASS"
else
  [[ "$rc" -eq 1 ]] || { echo "expected exit status 1 from the mutant's block test, got $rc"; exit 1; }
  grep -Eq '^MISMATCH block=frame_seq DMA done without an outstanding frame .* error_o \(a DMA done_i with no DMA frame outstanding at cycle [0-9]+\) expected=1 actual=0' <<<"$out" ||
    { echo "the failure does not name error_o and the DMA done without an outstanding frame"; exit 1; }
  echo "mutant caught"
fi
