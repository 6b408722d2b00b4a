#!/usr/bin/env bash
# A broken DMA must trip its own assertion (docs/rtl-assertions.md), not only the block test's
# comparison: tiny-2x2's capsgen_dma with every accepted burst request's length forced to 0
# (`req_len_o` zero while `req_ready_i` is high), run through the DMA block test (tb_blocks dma, one
# small model). The run must stop at a_burst_len and name it.
# usage: dma_assertion_mutant.sh CAPSGEN WORK
set -euo pipefail
capsgen="$1" work="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=tests/rtl/block_model.sh
source "$root/tests/rtl/block_model.sh"
work="$(case_work_dir "$work")"
rtl="$(fresh_rtl_dir "$work")"
"$capsgen" generate --config "$root/configs/tiny-2x2.yaml" --out "$rtl" > /dev/null
sed -i "s/^  assign req_len_o = rq_len;$/  assign req_len_o = req_ready_i ? 4'd0 : rq_len;/" "$rtl/capsgen_dma.v"
grep -q "assign req_len_o = req_ready_i ? 4'd0 : rq_len;" "$rtl/capsgen_dma.v" ||
  { echo "dma_assertion_mutant.sh: the mutation did not apply"; exit 1; }
run_block_test "$root" "$rtl" "$work" dma
grep -E 'Assertion failed|MISMATCH|FAIL|PASS' <<<"$block_out" | sed -n '1,4p'
[[ "$block_rc" -ne 0 ]] || { echo "expected the mutant's block test to fail"; exit 1; }
grep -Eq 'Assertion failed in [A-Za-z_.]*\.a_burst_len: ' <<<"$block_out" ||
  { echo "the failure does not name a_burst_len"; exit 1; }
echo "mutant caught by a_burst_len"
