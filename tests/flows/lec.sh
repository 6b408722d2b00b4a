#!/usr/bin/env bash
# Logic equivalence of a preset's control blocks against their OSU018 netlists (scripts/lec.sh),
# then a netlist mutant that the check must reject: the data PMU's netlist with one cell's function
# changed (its first NAND2X1 made a NOR2X1) must come out NOT PROVEN, naming the pairs it breaks.
# usage: lec.sh CAPSGEN WORK CONFIG MODULE...
set -euo pipefail
capsgen="$1" work="$2" config="$3"
shift 3
modules=("$@")
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
rm -rf "$work"
mkdir -p "$work"
"$capsgen" generate --config "$config" --out "$work/rtl" --quiet
tops="$(IFS=,; echo "${modules[*]}")"
"$capsgen" synth --config "$config" --rtl "$work/rtl" --target asic-osu018 --top "$tops" --ram flops --no-breakdown \
  --quiet --out "$work/synth" > "$work/synth.log"
scripts/lec.sh "$work/rtl" "$work/synth/asic-osu018" --report "$work/lec.md" "${modules[@]}"

# The mutant: a copy of the PMU's netlist directory with one cell's function changed.
pmu=capsgen_pmu_data
if [[ " ${modules[*]} " == *" $pmu "* ]]; then
  mkdir -p "$work/mutant/$pmu"
  cp "$work/synth/asic-osu018/$pmu/synth.ys" "$work/mutant/$pmu/"
  sed '0,/^  NAND2X1 /s//  NOR2X1 /' "$work/synth/asic-osu018/$pmu/flat.sim.v" > "$work/mutant/$pmu/flat.sim.v"
  cmp -s "$work/synth/asic-osu018/$pmu/flat.sim.v" "$work/mutant/$pmu/flat.sim.v" &&
    { echo "lec.sh: the mutation did not apply (no NAND2X1 in the netlist)"; exit 1; }
  set +e
  scripts/lec.sh "$work/rtl" "$work/mutant" "$pmu" > "$work/mutant.log" 2>&1
  rc=$?
  set -e
  cat "$work/mutant.log"
  [[ $rc -eq 1 ]] || { echo "lec.sh: expected exit status 1 for the mutant netlist, got $rc"; exit 1; }
  grep -q "NOT PROVEN" "$work/mutant.log" || { echo "lec.sh: the mutant was not reported NOT PROVEN"; exit 1; }
  echo "mutant netlist rejected"
fi
