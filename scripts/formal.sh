#!/usr/bin/env bash
# Formal proof of the generated modules' assertions (docs/rtl-assertions.md) with Yosys alone: for
# every module of a `capsgen generate` directory that has an assertion block, each assertion is
# proven on its own by temporal induction (`sat -tempinduct -prove-asserts -set-assumes`) over the
# module with its assumptions, every other assertion left out, so a failure names the assertion.
# Prints a Markdown table (module, assertion, result, induction length) and writes it to --report;
# exits 1 when an assertion fails or cannot be proven within --max-length steps, 2 on bad usage.
# Memories of up to 16 words are modelled (FIFOs); larger ones are left out, their read data free.
# --bounded MODULES (comma-separated): for these modules an assertion whose induction does not close
# within --bounded-length steps (default 6) but has no counterexample that long from reset counts as
# "bounded" (reported, not a failure): modules whose invariants k-induction cannot find alone.
# --simulation-only MODULES (default capsgen_chip): listed as checked by simulation, not proven. The
# chip's assertion holds for the compiler's frame programs, not for every input the chip can be given
# (a program may address a sleeping sector; the chip flags it on error_o).
#
# usage: scripts/formal.sh RTL_DIR [--report FILE] [--max-length N] [--module NAME] [--bounded MODULES]
#                          [--bounded-length N] [--simulation-only MODULES]
set -euo pipefail
rtl="" report="" max_len=20 only="" bounded_modules="" bounded_len=6 sim_only=",capsgen_chip,"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --report) report="$2"; shift 2 ;;
    --max-length) max_len="$2"; shift 2 ;;
    --module) only="$2"; shift 2 ;;
    --bounded) bounded_modules=",$2,"; shift 2 ;;
    --bounded-length) bounded_len="$2"; shift 2 ;;
    --simulation-only) sim_only=",$2,"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "formal.sh: unknown option '$1'" >&2; exit 2 ;;
    *) [[ -z "$rtl" ]] || { echo "formal.sh: one RTL directory only ('$1')" >&2; exit 2; }; rtl="$1"; shift ;;
  esac
done
[[ -n "$rtl" && -f "$rtl/files.f" ]] || { echo "formal.sh: RTL_DIR must hold a capsgen generate output (files.f)" >&2; exit 2; }
[[ "$max_len" =~ ^[1-9][0-9]*$ ]] || { echo "formal.sh: --max-length: expected a positive integer, got '$max_len'" >&2; exit 2; }
[[ "$bounded_len" =~ ^[1-9][0-9]*$ ]] || { echo "formal.sh: --bounded-length: expected a positive integer, got '$bounded_len'" >&2; exit 2; }
rtl="$(cd "$rtl" && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mapfile -t files < <(grep -v '^//' "$rtl/files.f" | grep -v '^$')

source "$(dirname "${BASH_SOURCE[0]}")/rtl_files.sh"

table="| module | assertion | result | induction length |"$'\n'"|---|---|---|---:|"
status=0 proven=0 bounded=0 failed=0 simulated=0
for f in "${files[@]}"; do
  grep -q '^`ifdef CAPSGEN_ASSERTIONS' "$rtl/$f" || continue
  module="$(basename "$f" .v)"
  [[ -z "$only" || "$only" == "$module" ]] || continue
  mapfile -t labels < <(sed -n 's/^ *\(a_[a-z0-9_]*\): assert (.*/\1/p' "$rtl/$f")
  steps_max="$max_len" is_bounded=0
  [[ "$bounded_modules" == *",$module,"* ]] && { steps_max="$bounded_len"; is_bounded=1; }
  if [[ "$sim_only" == *",$module,"* ]]; then
    for a in "${labels[@]}"; do
      table+=$'\n'"| $module | $a | simulation only (--simulation-only) | - |"
      simulated=$((simulated + 1))
    done
    continue
  fi
  for a in "${labels[@]}"; do
    # The module's file with every other assertion commented out (its assumptions stay).
    mkdir -p "$work/$a"
    sed -E "/^ *a_[a-z0-9_]*: assert \(/{/^ *$a: /!s|^|//|}" "$rtl/$f" > "$work/$a/$f"
    reads=""
    for g in $(rtl_module_files "$rtl" "$module"); do
      src="$rtl/$g"; [[ "$g" == "$f" ]] && src="$work/$a/$f"
      reads+="read_verilog -sv -formal -DCAPSGEN_ASSERTIONS $src; "
    done
    log="$work/$a/yosys.log"
    (cd "$rtl" && yosys -q -l "$log" -p "$reads prep -top $module; memory_map r:SIZE<=16; opt_clean; async2sync; dffunmap; \
      sat -tempinduct -prove-asserts -set-assumes -set-init-zero -ignore_unknown_cells -maxsteps $steps_max" > /dev/null 2>&1) || true
    if grep -q "Induction step proven: SUCCESS" "$log"; then
      steps="$(grep -c "Induction step failed" "$log" || true)"
      table+=$'\n'"| $module | $a | proven | $((steps + 1)) |"
      proven=$((proven + 1))
    elif grep -q "model found for base case: FAIL" "$log"; then
      steps="$(grep -c "Base case for induction length [0-9]* proven" "$log" || true)"
      table+=$'\n'"| $module | $a | **FAILS**: counterexample of $((steps + 1)) steps | - |"
      failed=$((failed + 1)); status=1
    elif [[ "$is_bounded" == 1 ]] && grep -q "Base case for induction length $steps_max proven" "$log"; then
      table+=$'\n'"| $module | $a | bounded: no counterexample within $steps_max steps of reset (induction does not close) | - |"
      bounded=$((bounded + 1))
    else
      table+=$'\n'"| $module | $a | **not proven** within $steps_max steps (log: yosys -l) | - |"
      failed=$((failed + 1)); status=1
    fi
  done
done
out="# Formal proof of the assertions: $rtl"$'\n\n'"$table"$'\n\n'"$proven proven, $bounded bounded, $simulated checked by simulation only, $failed failed or not proven (Yosys $(yosys -V | awk '{print $2}'), sat -tempinduct)."
echo "$out"
[[ -z "$report" ]] || printf '%s\n' "$out" > "$report"
exit "$status"
