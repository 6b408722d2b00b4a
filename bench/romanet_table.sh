#!/usr/bin/env bash
# ROMANet against the baseline on the DRAM model (docs/romanet.md): runs `capsgen dse dram --table`
# (AlexNet, VGG-16, MobileNet, CapsNet-MNIST) and prints one JSON line per network: ROMANet's
# savings over the baseline in percent (DRAM accesses, row conflicts + misses and energy in burst
# mode, energy in non-burst mode), its throughput gain in burst mode, and the paper's savings where
# it reports them. Deterministic apart from the search and simulation seconds.
# usage: romanet_table.sh [--capsgen BIN] [-- more capsgen dse dram args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
capsgen="$root/build/capsgen"
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "romanet_table.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root" && "$capsgen" dse dram --table --report "$work/romanet.md" --json "$work/romanet.json" "${extra[@]}") \
  > "$work/out.txt" 2>&1 || { tail -20 "$work/out.txt" >&2; exit 1; }
python3 - "$work/romanet.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))

def saving(base, new):
    return round(100 * (1 - new / base), 1) if base else 0.0

for n in doc['networks']:
    base, rom = n['totals']['baseline'], n['totals']['romanet']
    b, r = base['burst'], rom['burst']
    print(json.dumps({
        'bench': 'romanet_table', 'network': n['name'],
        'accesses_saving_pct': saving(base['accesses_elements']['total'], rom['accesses_elements']['total']),
        'conflicts_misses_saving_pct': saving(b['row_conflicts'] + b['row_misses'], r['row_conflicts'] + r['row_misses']),
        'energy_saving_burst_pct': saving(b['energy_uj']['total'], r['energy_uj']['total']),
        'energy_saving_nonburst_pct': saving(base['nonburst']['energy_uj']['total'], rom['nonburst']['energy_uj']['total']),
        'throughput_gain_burst_pct': round(100 * (r['throughput_gbps'] / b['throughput_gbps'] - 1), 1),
        'paper_savings_pct': n.get('paper_savings_percent'),
        'search_seconds': n['search_seconds'], 'simulate_seconds': round(n['simulate_seconds'], 2)}))
PY
