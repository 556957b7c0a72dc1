#!/usr/bin/env bash
# Installs what commfit needs from Debian's packages (run as root on Debian 12).
#   bash tools/setup.sh          build and test dependencies
#   bash tools/setup.sh --bench  also what the benchmarks use (SimGrid SMPI, Boost.Graph)
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config python3
  libcli11-dev nlohmann-json3-dev libeigen3-dev doctest-dev libssl-dev libvalijson-dev
  libopenmpi-dev openmpi-bin
  clang libclang-rt-14-dev
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(libsimgrid-dev simgrid libboost-graph-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "tools/setup.sh: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
