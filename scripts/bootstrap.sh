#!/usr/bin/env bash
# Installs every Debian package capsgen needs that is missing. Idempotent and non-interactive:
# a second run on a set-up machine only runs `dpkg -s` and returns.
set -euo pipefail

PACKAGES=(
  # build
  g++ cmake ninja-build pkg-config
  # libraries
  libfmt-dev libyaml-cpp-dev libgtest-dev zlib1g-dev nlohmann-json3-dev
  # simulation and waveforms
  verilator iverilog gtkwave
  # synthesis, timing, FPGA place-and-route
  yosys opensta qflow-tech-osu018 nextpnr-ice40 fpga-icestorm
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
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
echo "bootstrap: done"
