#!/usr/bin/env bash
# capsgen dse nas --energy full: the energy objective is the whole inference's (SRAM + DRAM from the
# chip's timing model + datapath per MAC; docs/nas.md). A short hardware-only search on tiny-2x2; every
# feasible network's total must be the sum of its parts with a DRAM share, the SVG's energy axis the
# total, and search.json must record the mode (a resume with --energy onchip is refused).
#   tests/nas/full_energy.sh CAPSGEN WORKDIR
set -euo pipefail
capsgen=$1
work=$2
rm -rf "$work"
search=("$capsgen" dse nas --accuracy none --config configs/tiny-2x2.yaml --space configs/nas/tiny-space.yaml
        --out "$work" --population 4 --offspring 2 --generations 1)
"${search[@]}" --energy full > "$work.log"
grep -q 'SRAM + DRAM + datapath' "$work/front-energy-latency.svg"
grep -q '"energy": "full"' "$work/search.json"
python3 - "$work/evaluated.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["feasible"] == "1"]
assert rows, "no feasible network"
for r in rows:
    parts = float(r["energy_mj"]) + float(r["dram_energy_mj"]) + float(r["datapath_energy_mj"])
    assert abs(float(r["total_energy_mj"]) - parts) <= 1e-5, r
    assert float(r["dram_energy_mj"]) > 0 and float(r["datapath_energy_mj"]) > 0, r
print(f"{len(rows)} networks: total = SRAM + DRAM + datapath")
PY
set +e
"${search[@]}" --energy onchip > "$work-resume.log" 2>&1
rc=$?
set -e
if [[ $rc != 2 ]] || ! grep -q "search.json: evaluation.energy: the search in this directory was run with another value" "$work-resume.log"; then
  echo "a resume with another --energy was not refused (exit $rc):" >&2
  cat "$work-resume.log" >&2
  exit 1
fi
echo "nas full energy ok"
