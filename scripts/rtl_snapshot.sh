#!/usr/bin/env bash
# Writes the RTL that `capsgen generate` emits for every preset in configs/*.yaml and for the
# random configs of seeds 1..N into one directory, so that two builds can be compared with
#   diff -r SNAPSHOT_A SNAPSHOT_B
# (an empty diff means a refactor of the emitters left the generated RTL byte-identical).
#
# usage: rtl_snapshot.sh --capsgen BIN --out DIR [--seeds N]    (N defaults to 5)
# DIR must not exist yet. Presets are named by their repository-relative path and the random
# configs by a path relative to DIR, so the headers of the generated files do not depend on
# where the repository or DIR lives.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
capsgen="" out="" seeds=5

while [[ $# -gt 0 ]]; do
  case "$1" in
    --capsgen) capsgen="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    *) echo "rtl_snapshot.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z "$capsgen" || -z "$out" ]]; then
  echo "usage: rtl_snapshot.sh --capsgen BIN --out DIR [--seeds N]" >&2
  exit 2
fi
if [[ ! -x "$capsgen" ]]; then
  echo "rtl_snapshot.sh: $capsgen is not an executable" >&2
  exit 2
fi
if [[ -e "$out" ]]; then
  echo "rtl_snapshot.sh: $out exists; give a new directory" >&2
  exit 2
fi
capsgen="$(cd "$(dirname "$capsgen")" && pwd)/$(basename "$capsgen")"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

cd "$root"
for cfg in configs/*.yaml; do
  name="$(basename "$cfg" .yaml)"
  "$capsgen" generate --config "$cfg" --out "$out/preset-$name" >/dev/null
done
cd "$out"
for seed in $(seq 1 "$seeds"); do
  "$capsgen" generate --random-config "$seed" --config "random-$seed.yaml" --out "random-$seed" >/dev/null
done
echo "rtl_snapshot.sh: $(find "$out" -type f | wc -l) files in $out"
