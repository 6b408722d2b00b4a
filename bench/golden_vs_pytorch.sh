#!/usr/bin/env bash
# Fixed-point golden model against PyTorch's float CapsNet, same network, same run: ROUNDS rounds,
# each running golden_bench (batch 1 with 1 and 2 threads) then PyTorch with torch.set_num_threads(1)
# and (2), so that a change of machine load hits both alike. With --baseline BIN, an older
# golden_bench (e.g. one built from the commit before the fast kernel) runs in each round too.
# PyTorch at 2 threads also runs with OMP_WAIT_POLICY=PASSIVE. Writes one JSON (--out) with the
# per-round numbers, medians, ratios golden/PyTorch at equal thread counts (against PyTorch's
# better setting) and the load average; nothing is asserted.
#
# usage: golden_vs_pytorch.sh [--bench BIN] [--baseline BIN] [--rounds N] [--runs N] [--out FILE]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bench="$root/build/bench/golden_bench" baseline="" rounds=3 runs=20 out="$root/build/golden_vs_pytorch.json"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bench) bench="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "golden_vs_pytorch.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
config="$root/configs/capsacc-16x16.yaml" model="$root/models/capsnet-mnist.yaml"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for ((r = 1; r <= rounds; ++r)); do
  echo "round $r/$rounds (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  "$bench" --config "$config" --model "$model" --runs "$runs" --threads 1,2 --no-float --json "$work/golden.$r.json" >/dev/null
  for t in 1 2; do
    /usr/bin/python3 "$here/pytorch_capsnet_bench.py" --model "$model" --runs "$runs" --threads "$t" >"$work/torch.$r.$t.json"
  done
  # libgomp's default spin-waiting collapses on a busy machine; passive waiting is PyTorch's best then.
  OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 "$here/pytorch_capsnet_bench.py" --model "$model" --runs "$runs" \
    --threads 2 >"$work/torch.$r.2p.json"
  if [[ -n "$baseline" ]]; then
    "$baseline" --config "$config" --model "$model" --runs "$((runs / 2 > 0 ? runs / 2 : 1))" --json "$work/baseline.$r.json" >/dev/null
  fi
done
/usr/bin/python3 - "$work" "$rounds" "$out" <<'PY'
import glob, json, os, statistics, sys
work, rounds, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(p):
    with open(p) as f:
        return json.load(f)
rows = []
for r in range(1, rounds + 1):
    g = load(f"{work}/golden.{r}.json")
    row = {"round": r, "load_average": g["load_average_before"]}
    for f in g["fixed"]:
        row[f"golden_threads{f['threads']}"] = f["batch1_images_per_second"]
    for t in (1, 2):
        row[f"pytorch_threads{t}"] = load(f"{work}/torch.{r}.{t}.json")["images_per_second"]
    row["pytorch_threads2_omp_passive"] = load(f"{work}/torch.{r}.2p.json")["images_per_second"]
    if os.path.exists(f"{work}/baseline.{r}.json"):
        row["baseline_threads1"] = load(f"{work}/baseline.{r}.json")["fixed_inferences_per_second"]
    rows.append(row)
keys = [k for k in rows[0] if k not in ("round", "load_average")]
median = {k: statistics.median(row[k] for row in rows) for k in keys}
result = {
    "benchmark": "golden_vs_pytorch",
    "network": "capsnet-mnist", "preset": "capsacc-16x16", "batch": 1,
    "unit": "images per second (median of rounds)",
    "cpu_count": os.cpu_count(),
    "load_average_end": open("/proc/loadavg").read().split()[:3],
    "median": median,
    # against PyTorch's best setting at that thread count
    "ratio_golden_over_pytorch": {
        "threads1": median["golden_threads1"] / median["pytorch_threads1"],
        "threads2": median["golden_threads2"] / max(median["pytorch_threads2"], median["pytorch_threads2_omp_passive"]),
    },
    "rounds": rows,
}
if "baseline_threads1" in median:
    result["speedup_over_baseline_threads1"] = median["golden_threads1"] / median["baseline_threads1"]
text = json.dumps(result, indent=2) + "\n"
sys.stdout.write(text)
with open(out, "w") as f:
    f.write(text)
PY
