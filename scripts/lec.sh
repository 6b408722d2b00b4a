#!/usr/bin/env bash
# Logic-equivalence check of generated modules against their OSU018 gate-level netlists, with Yosys
# alone (docs/flows.md "Equivalence"). For each module: the RTL (gold) and the netlist of
# `capsgen synth --target asic-osu018 --ram flops` (gate, its cells read with their Liberty functions)
# are flattened, memories mapped to flip-flops, the asynchronous reset modelled as synchronous on
# both sides; equiv_make pairs every port and every register bit by name (next-state nets `*_d` are
# hidden: they are combinational, and synthesis may keep one name for a net it has restructured);
# equiv_simple (5 cycles of sequential cone) then equiv_induct (temporal induction over all pairs)
# prove the pairs. A module passes when every pair is proven.
# Prints a Markdown table (module, pairs, proven, result, seconds) and writes it to --report; exits 1
# when a module is not proven (stderr names the unproven pairs: a pair induction cannot prove is
# reported, whether the designs differ or the proof needs a stronger invariant), 2 on bad usage.
#
# usage: scripts/lec.sh RTL_DIR NETLIST_DIR [--report FILE] [--timeout SECONDS] MODULE...
#   RTL_DIR      a `capsgen generate` output (files.f)
#   NETLIST_DIR  the asic-osu018 directory of `capsgen synth --rtl RTL_DIR --ram flops --top MODULE,..`
#                (<NETLIST_DIR>/<module>/flat.sim.v, and synth.ys for the Liberty file it was mapped to)
set -euo pipefail
rtl="" netlists="" report="" limit=600
modules=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --report) report="$2"; shift 2 ;;
    --timeout) limit="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "lec.sh: unknown option '$1'" >&2; exit 2 ;;
    *) if [[ -z "$rtl" ]]; then rtl="$1"; elif [[ -z "$netlists" ]]; then netlists="$1"; else modules+=("$1"); fi; shift ;;
  esac
done
[[ -n "$rtl" && -f "$rtl/files.f" ]] || { echo "lec.sh: RTL_DIR must hold a capsgen generate output (files.f)" >&2; exit 2; }
[[ -n "$netlists" && -d "$netlists" ]] || { echo "lec.sh: NETLIST_DIR '$netlists' is not a directory" >&2; exit 2; }
[[ ${#modules[@]} -gt 0 ]] || { echo "lec.sh: name at least one module" >&2; exit 2; }
[[ "$limit" =~ ^[1-9][0-9]*$ ]] || { echo "lec.sh: --timeout: expected a positive integer, got '$limit'" >&2; exit 2; }
rtl="$(cd "$rtl" && pwd)" netlists="$(cd "$netlists" && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/rtl_files.sh"

# One side of the check, stashed as `name`: flattened, memories as flip-flops, reset synchronous.
side() {
  local name="$1" module="$2"
  cat <<EOF
prep -top $module
flatten
memory_map
opt_clean
async2sync
rename -hide w:*_d
rename $module $name
design -stash $name
EOF
}

table="| module | pairs | proven | result | seconds |"$'\n'"|---|---:|---:|---|---:|"
status=0
for module in "${modules[@]}"; do
  [[ -f "$rtl/$module.v" ]] || { echo "lec.sh: no $module.v in $rtl" >&2; exit 2; }
  netlist="$netlists/$module/flat.sim.v"
  [[ -f "$netlist" ]] || { echo "lec.sh: no netlist $netlist (capsgen synth --top $module --ram flops)" >&2; exit 2; }
  # The Liberty file the netlist was mapped to, as its synthesis script read it.
  liberty="$(sed -n 's/^read_liberty -lib \(.*\)$/\1/p' "$netlists/$module/synth.ys" 2> /dev/null | sed -n 1p)"
  [[ -f "$liberty" ]] || { echo "lec.sh: no Liberty file in $netlists/$module/synth.ys" >&2; exit 2; }
  script="$work/$module.ys" log="$work/$module.log"
  {
    echo "read_verilog $(rtl_module_files "$rtl" "$module" | sed "s|^|$rtl/|" | tr '\n' ' ')"
    side gold "$module"
    echo "read_liberty $liberty"
    echo "read_verilog $netlist"
    side gate "$module"
    cat <<EOF
design -copy-from gold -as gold gold
design -copy-from gate -as gate gate
equiv_make gold gate equiv
hierarchy -top equiv
equiv_simple -seq 5
equiv_induct -seq 5
equiv_status
EOF
  } > "$script"
  start=$SECONDS
  set +e
  timeout "$limit" yosys -q -l "$log" "$script" > /dev/null 2>&1
  rc=$?
  set -e
  seconds=$((SECONDS - start))
  counts="$(sed -n 's/^  Of those cells \([0-9]*\) are proven and \([0-9]*\) are unproven.*/\1 \2/p' "$log" | tail -1)"
  total="$(sed -n 's/^Found \([0-9]*\) \$equiv cells in equiv:.*/\1/p' "$log" | tail -1)"
  proven="${counts%% *}" unproven="${counts##* }"
  if [[ $rc -eq 0 && -n "$counts" && "$unproven" == 0 && "${total:-0}" -gt 0 ]]; then
    result="equivalent"
  else
    status=1
    if [[ $rc -eq 124 ]]; then result="**timeout** (${limit} s)"
    elif [[ -n "$counts" ]]; then result="**NOT PROVEN** ($unproven pairs unproven)"
    else result="**error** (yosys exit $rc)"; fi
    echo "lec.sh: $module: $result" >&2
    grep -E 'Unproven \$equiv|ERROR' "$log" | sed -n '1,10p' >&2 || true
  fi
  table+=$'\n'"| \`$module\` | ${total:--} | ${proven:--} | $result | $seconds |"
done
printf '%s\n' "$table"
[[ -z "$report" ]] || printf '%s\n' "$table" > "$report"
exit "$status"
