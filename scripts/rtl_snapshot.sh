#!/usr/bin/env bash
# Writes the RTL that `capsgen generate` emits for every accelerator preset under configs/ (all
# but the DRAM, NAS-space and technology descriptions in configs/dram, configs/nas, configs/tech) and for the
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
for cfg in $(find configs -name '*.yaml' -not -path 'configs/dram/*' -not -path 'configs/nas/*' \
                -not -path 'configs/tech/*' | sort); do
  name="$(echo "${cfg#configs/}" | sed 's|/|-|g; s|\.yaml$||')"
  # A preset that generate refuses (exit 2) leaves its message, which the comparison then covers.
  status=0
  "$capsgen" generate --config "$cfg" --out "$out/preset-$name" >/dev/null 2>"$out/preset-$name.err" || status=$?
  if [[ $status -eq 0 ]]; then
    rm "$out/preset-$name.err"
  elif [[ $status -ne 2 ]]; then
    cat "$out/preset-$name.err" >&2
    exit 1
  fi
done
cd "$out"
for seed in $(seq 1 "$seeds"); do
  "$capsgen" generate --random-config "$seed" --config "random-$seed.yaml" --out "random-$seed" >/dev/null
done
echo "rtl_snapshot.sh: $(find "$out" -type f | wc -l) files in $out"
