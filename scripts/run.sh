#!/usr/bin/env bash
# The main job on the bundled default: installs what is missing, builds capsgen, and runs one
# CapsNet-MNIST inference on the CapsAcc 16x16 preset through the bit-exact golden model and the
# float reference, printing the per-layer report and the prediction. Extra arguments are passed to
# `capsgen golden` (see `build/capsgen golden --help`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/bootstrap.sh
scripts/build.sh --target capsgen
mkdir -p build/reports
exec build/capsgen golden --config configs/capsacc-16x16.yaml --model models/capsnet-mnist.yaml \
  --report build/reports/golden.md --json build/reports/golden.json "$@"
