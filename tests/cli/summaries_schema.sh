#!/usr/bin/env bash
# Checks every JSON summary `capsgen generate` writes beside the RTL (config.json, activation.json,
# scratchpad.json, pmu.json, dma.json, memsys.json, chip.json) against its schema in schemas/, with
# scripts/check_json.py, for:
#   - every accelerator preset under configs/ and its subdirectories (not the DRAM, NAS-space and
#     technology descriptions in configs/dram, configs/nas, configs/tech);
#   - tiny-2x2 without power gating (no pmu.json) and tiny-2x2-smp with 16-bit shared words (memsys.json
#     and chip.json of the "not generated" form);
#   - the random configs of seeds 1..3.
# Every directory must hold the summaries that are always written, and pmu.json exactly with power
# gating. Prints "summaries ok: F files of D RTL directories" and exits 0, or exits 1.
# usage: summaries_schema.sh CAPSGEN WORK
set -euo pipefail
capsgen="$1" work="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rm -rf "$work"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
always=(config activation scratchpad dma memsys chip)
dirs=()

generate() {  # generate NAME ARGS...: the RTL into $work/NAME
  local name="$1" status=0
  shift
  "$capsgen" generate "$@" --out "$work/$name" > "$work/$name.log" 2>&1 || status=$?
  [[ $status -eq 0 ]] || { cat "$work/$name.log"; echo "FAIL generate $name"; exit 1; }
  dirs+=("$work/$name")
}

cd "$root"
for cfg in $(find configs -name '*.yaml' -not -path 'configs/dram/*' -not -path 'configs/nas/*' \
                -not -path 'configs/tech/*' | sort); do
  generate "$(echo "${cfg#configs/}" | sed 's|/|-|g; s|\.yaml$||')" --config "$cfg"
done
sed 's/^\(  power_gating:\) true/\1 false/' configs/tiny-2x2.yaml > "$work/tiny-2x2-nopg.yaml"
generate variant-tiny-2x2-nopg --config "$work/tiny-2x2-nopg.yaml"
[[ ! -e "$work/variant-tiny-2x2-nopg/pmu.json" ]] || { echo "FAIL: pmu.json without power gating"; exit 1; }
sed 's/^\(  shared: {.*width_bits:\) 32}/\1 16}/' configs/tiny-2x2-smp.yaml > "$work/tiny-2x2-smp-w16.yaml"
generate variant-tiny-2x2-smp-w16 --config "$work/tiny-2x2-smp-w16.yaml"
grep -q '"supported": false' "$work/variant-tiny-2x2-smp-w16/memsys.json" \
  || { echo "FAIL: the 16-bit SMP variant still has capsgen_memsys"; exit 1; }
for seed in 1 2 3; do
  generate "random-$seed" --random-config "$seed" --config "$work/random-$seed.yaml"
done

# The files of each document, then one check_json.py run per schema.
declare -A files
for d in "${dirs[@]}"; do
  for doc in "${always[@]}"; do
    [[ -f "$d/$doc.json" ]] || { echo "FAIL: $d has no $doc.json"; exit 1; }
  done
  pg="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["power_gating"])' "$d/scratchpad.json")"
  has_pmu=False
  [[ -f "$d/pmu.json" ]] && has_pmu=True
  [[ "$pg" == "$has_pmu" ]] || { echo "FAIL: $d: power_gating $pg, but pmu.json present: $has_pmu"; exit 1; }
  for f in "$d"/*.json; do
    doc="$(basename "$f" .json)"
    [[ "$doc" == trace_groups ]] && continue
    [[ -f "schemas/$doc.schema.json" ]] || { echo "FAIL: $f has no schema (schemas/$doc.schema.json)"; exit 1; }
    files[$doc]+="$f "
  done
done
n=0
for doc in "${!files[@]}"; do
  # shellcheck disable=SC2086  # a list of paths without spaces
  python3 scripts/check_json.py "schemas/$doc.schema.json" ${files[$doc]} > "$work/check-$doc.log" \
    || { grep -v '^ok ' "$work/check-$doc.log"; echo "FAIL: $doc.json against schemas/$doc.schema.json"; exit 1; }
  n=$((n + $(grep -c '^ok ' "$work/check-$doc.log")))
done
echo "summaries ok: $n files of ${#dirs[@]} RTL directories"
