#!/usr/bin/env bash
# NASCaps' search end to end (docs/nas.md section 5): `capsgen dse nas` on a small corner of the
# search space (configs/nas/tiny-space.yaml: CapsNet-like; tiny-cells-space.yaml: DeepCaps' cells)
# with the accuracy proxy (real PyTorch training runs on MNIST subsets), then
#   - its outputs: every network in evaluated.csv, the front in front.csv, descriptions and weights;
#   - a rerun of the same command trains nothing (resume from OUT/train);
#   - a rerun with another proxy setting is refused (exit 2, naming the field);
#   - the front member with the fewest cycles, with the weights the proxy trained, on the RTL with an
#     ideal memory and on the whole chip with DRAM: bit-exact, and the cycles the search ranked it by
#     equal to the RTL's (ideal memory) and the streamed model's;
#   - the proxy's correlation with longer training (scripts/nas_proxy_correlation.py), resumable.
# usage: front_on_chip.sh CAPSGEN SPACE.yaml WORKDIR
set -euo pipefail
capsgen=$1
space=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
search=("$capsgen" dse nas --space "$space" --config configs/tiny-2x2.yaml --out "$work/search"
        --population 3 --offspring 2 --generations 1 --train-images 300 --test-images 200)
"${search[@]}" | tee "$work/search.log"
grep -q "^generation 1/1: 5 networks evaluated (" "$work/search.log"

python3 - "$work/search" <<'PY'
import csv, os, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "evaluated.csv"))))
front = list(csv.DictReader(open(os.path.join(out, "front.csv"))))
assert len(rows) == 5, len(rows)
assert front and all(r["in_front"] == "1" for r in front)
assert {r["hash"] for r in front} == {r["hash"] for r in rows if r["in_front"] == "1"}
feasible = [r for r in rows if r["feasible"] == "1"]
assert feasible and all(r["feasible"] == "1" for r in front)
for r in rows:
    assert os.path.getsize(os.path.join(out, r["network"])) > 0, r["network"]
    if r["feasible"] == "1":  # trained: an accuracy and its weights
        for a in (r["val_accuracy"], r["test_accuracy"]):
            assert 0 <= float(a) <= 1, r
        assert os.path.getsize(os.path.join(out, r["weights"])) > 0, r
    else:  # the preset cannot run it: not trained, and the reason given
        assert r["val_accuracy"] == r["test_accuracy"] == r["weights"] == "" and r["why"], r
# No front member is dominated by any evaluated network on (error, cycles, memory, energy).
key = lambda r: (1 - float(r["val_accuracy"]), int(r["cycles"]), int(r["onchip_bytes"]), float(r["energy_mj"]))
for f in front:
    for r in feasible:
        a, b = key(r), key(f)
        assert not (all(x <= y for x, y in zip(a, b)) and a != b), (r["hash"], f["hash"])
for svg in ("front-accuracy-latency.svg", "front-accuracy-energy.svg", "front-accuracy-memory.svg"):
    assert "<svg" in open(os.path.join(out, svg)).read()
pick = min(front, key=lambda r: int(r["cycles"]))
open(os.path.join(out, "..", "pick.txt"), "w").write(
    f'{pick["network"]} {pick["weights"]} {pick["cycles"]} {pick["streamed_cycles"]} {pick["chip_cycles"]} {len(feasible)}\n')
print("outputs ok; front", len(front), "of", len(rows), "; picked", pick["genome"])
PY

read -r network weights cycles streamed chip trained < "$work/pick.txt"
grep -q "^generation 1/1: 5 networks evaluated ($trained trained now, 0 trained before)" "$work/search.log"
"${search[@]}" > "$work/resume.log"
grep -q "^generation 1/1: 5 networks evaluated (0 trained now, $trained trained before)" "$work/resume.log"
set +e
"${search[@]}" --epochs 2 > "$work/other.log" 2>&1
rc=$?
set -e
[[ $rc == 2 ]] && grep -q "search.json: evaluation.proxy.epochs: the search in this directory was run with another value" "$work/other.log"
echo "resume ok"

for memory in ideal dram; do
  "$capsgen" sim --config configs/tiny-2x2.yaml --memory $memory --model "$work/search/$network" \
    --weights "$work/search/$weights" --dataset mnist --index 0 --work "$work/sim-$memory" > "$work/sim-$memory.log"
done
python3 - "$work" "$cycles" "$streamed" "$chip" <<'PY'
import json, sys
work, cycles, streamed, chip_model = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ideal = json.load(open(f"{work}/sim-ideal/report.json"))
chip = json.load(open(f"{work}/sim-dram/report.json"))
assert ideal["pass"] and chip["pass"], (ideal["pass"], chip["pass"])
assert ideal["total_cycles"] == cycles, (ideal["total_cycles"], cycles)
assert chip["ideal_memory_program_cycles"] == cycles and chip["stream_model_cycles"] == streamed, chip
# The search's chip estimate is the report's chip model, and within 1% of the chip's measured cycles.
assert chip["chip_model_cycles"] == chip_model, (chip["chip_model_cycles"], chip_model)
error = 100.0 * (chip_model - chip["total_cycles"]) / chip["total_cycles"]
assert abs(error) <= 1.0, (chip_model, chip["total_cycles"], error)
print(f"front member on the RTL: bit-exact; {cycles} cycles as ranked (ideal memory); chip with DRAM "
      f"{chip['total_cycles']} cycles (the search's chip estimate {chip_model}, {error:+.1f}%; streamed model {streamed})")
PY

# The proxy's rank correlation with longer training (scripts/nas_proxy_correlation.py), in the
# CapsNet-like space (its 5 networks all train; the cells space has 2 feasible): every network
# trained again (1 epoch on 300 images), the coefficients written; a rerun trains nothing; the
# coefficients themselves on hand-worked vectors.
[[ "$(basename "$space")" == tiny-space.yaml ]] || exit 0
corr=(python3 scripts/nas_proxy_correlation.py --out "$work/search" --networks all --epochs 1 --limit 300
      --test-limit 200)
"${corr[@]}" > "$work/corr.log"
stamp="$(find "$work/search/longer-1" -name '*.json' ! -name correlation.json -printf '%T@\n' | sort -n | tail -1)"
"${corr[@]}" > "$work/corr2.log"
python3 - "$work" "$stamp" <<'PY'
import glob, importlib.util, json, math, os, sys
work, stamp = sys.argv[1], float(sys.argv[2])
r = json.load(open(f"{work}/search/longer-1/correlation.json"))
assert r["networks"] == 5 and len(r["rows"]) == 5, r
assert all(0.0 <= row["longer_test_accuracy"] <= 1.0 for row in r["rows"]), r["rows"]
for k in ("pearson", "spearman"):
    assert math.isnan(r[k]) or -1.0 <= r[k] <= 1.0, (k, r[k])
logs = [p for p in glob.glob(f"{work}/search/longer-1/*.json") if not p.endswith("correlation.json")]
assert len(logs) == 5 and max(os.stat(p).st_mtime for p in logs) <= stamp + 1e-6, "the rerun trained again"
spec = importlib.util.spec_from_file_location("corr", "scripts/nas_proxy_correlation.py")
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
assert abs(m.pearson([1, 2, 3, 4], [2, 4, 6, 8]) - 1.0) < 1e-12
assert abs(m.pearson([1, 2, 3], [1, 3, 2]) - 0.5) < 1e-12
assert m.ranks([10, 30, 20, 20]) == [1.0, 4.0, 2.5, 2.5]
assert abs(m.spearman([1, 2, 3, 4], [1, 8, 27, 64]) - 1.0) < 1e-12  # monotone: rank correlation 1
print(f"proxy correlation: {r['networks']} networks, Pearson {r['pearson']:.3f}, Spearman {r['spearman']:.3f}")
PY
