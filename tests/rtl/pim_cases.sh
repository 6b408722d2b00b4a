#!/usr/bin/env bash
# PIM-CapsNet's LUT-free units in the RTL (docs/pim-capsnet.md): tiny-2x2 with the shift exp (with
# the recovery multiply) and the sqrt through the inverse square root in place of the exp and sqrt
# ROMs, and the reciprocal divide in place of the softmax divider. The whole chip's RTL linted
# (verilator -Wall), the activation unit's block test (every ROM address through the exp and sqrt
# units, every (num, den) pair through the reciprocal divide, against gen/numerics; then the divider,
# unit and bank checks with them inside), then capsnet-tiny's whole inference on the generated
# accelerator, every operation bit-exact against the golden model with the same approximations. Then
# two mutants: the exp unit's log2(e) constant and the reciprocal's seed constant each off by one LSB
# must fail their sweeps.
# With --chip: only capsnet-tiny on the whole chip with the network in the DRAM model (capsgen sim
# --memory dram), every DRAM write and every operation's output bit-exact.
# usage: pim_cases.sh CAPSGEN WORK [--chip]
set -euo pipefail
capsgen="$1" work="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=tests/rtl/block_model.sh
source "$root/tests/rtl/block_model.sh"
work="$(case_work_dir "$work")"
config="$work/tiny-2x2-pim.yaml"
sed -e 's/^name: tiny-2x2$/name: tiny-2x2-pim/' \
    -e 's/^\(  sqrt_out_bits: .*\)$/\1\n  sqrt_kind: pim-rsqrt/' \
    -e 's/^\(  exp_out_bits: .*\)$/\1\n  exp_kind: pim-shift\n  exp_recovery: true\n  divide_kind: pim-reciprocal/' \
    "$root/configs/tiny-2x2.yaml" > "$config"
for key in 'sqrt_kind: pim-rsqrt' 'exp_kind: pim-shift' 'exp_recovery: true' 'divide_kind: pim-reciprocal'; do
  grep -q "^  $key" "$config" || { echo "pim_cases.sh: the variant lacks $key"; exit 1; }
done
if [[ "${3:-}" == --chip ]]; then
  "$capsgen" sim --memory dram --config "$config" --model "$root/models/capsnet-tiny.yaml" --seed 1 --work "$work/chip"
  exit
fi
rtl="$(fresh_rtl_dir "$work")"
"$capsgen" generate --config "$config" --out "$rtl" > /dev/null
for m in capsgen_act_pim_exp capsgen_act_pim_rsqrt capsgen_act_pim_recip; do
  grep -q "^module $m" "$rtl/$m.v" || { echo "pim_cases.sh: $m not generated"; exit 1; }
done
mapfile -t sources < <(grep -v '^//' "$rtl/files.f" | sed '/^$/d')
(cd "$rtl" && verilator --lint-only -Wall --top-module capsgen_chip "${sources[@]}") ||
  { echo "pim_cases.sh: the RTL with the PIM units is not lint-clean"; exit 1; }
build_block_model "$root" "$rtl" "$work/build" activation
"$work/build/tb_blocks" activation --rtl "$rtl" --seed 1 --mode all | tee "$work/activation.log" | grep -E 'PASS|FAIL|MISMATCH' | sed -n '1,20p'
grep -q 'pim' "$work/activation.log" || { echo "pim_cases.sh: the PIM sweep did not run"; exit 1; }
"$capsgen" sim --config "$config" --model "$root/models/capsnet-tiny.yaml" --seed 2 --work "$work/sim" > "$work/sim.log"
grep -q 'result: \*\*PASS, every operation bit-exact' "$work/sim/report.md" || { tail -30 "$work/sim.log"; echo "FAIL sim"; exit 1; }
# The mutants: the same testbench build on the generated RTL with one constant changed in each of two
# units, the exp unit's log2(e) and the reciprocal divide's seed constant; each unit's sweep must fail
# (the sweeps are separate models, so one build checks both).
sed -i "s/addr_i \* 16'd47274/addr_i * 16'd47275/" "$rtl/capsgen_act_pim_exp.v"
grep -q "16'd47275" "$rtl/capsgen_act_pim_exp.v" || { echo "pim_cases.sh: the exp mutation did not apply"; exit 1; }
sed -i "s/= 17'd95951 - /= 17'd95952 - /" "$rtl/capsgen_act_pim_recip.v"
grep -q "17'd95952" "$rtl/capsgen_act_pim_recip.v" || { echo "pim_cases.sh: the reciprocal mutation did not apply"; exit 1; }
cmake --build "$work/build" -j "${CAPSGEN_RTL_JOBS:-2}" > "$work/build-mutant.log" 2>&1 || { tail -50 "$work/build-mutant.log"; echo "FAIL build"; exit 1; }
set +e
"$work/build/tb_blocks" activation --rtl "$rtl" --seed 1 --mode pim > "$work/mutant.log" 2>&1
rc=$?
set -e
for unit in act_pim_exp act_pim_recip; do
  [[ $rc -ne 0 ]] && grep -q "^FAIL $unit:" "$work/mutant.log" || { cat "$work/mutant.log"; echo "FAIL: the $unit mutant passed"; exit 1; }
done
echo "pim units: block test and whole inference PASS; mutants caught: $(grep -m1 -E 'MISMATCH block=act_pim_exp' "$work/mutant.log");" \
     "$(grep -m1 -E 'MISMATCH block=act_pim_recip' "$work/mutant.log")"
