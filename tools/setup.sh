#!/usr/bin/env bash
# Installs what commfit needs from Debian's packages (run as root on Debian 12): the build and
# test dependencies, including what the tests drive (METIS and gmsh for `commfit extract`,
# Chromium for the report's rendering test, SimGrid SMPI and Boost.Graph for the simulated and
# planner-speed benchmarks and their smoke tests, mpi4py and numpy for the interposer's Python
# test). `--bench` is accepted for compatibility.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config python3
  libcli11-dev nlohmann-json3-dev libeigen3-dev doctest-dev libvalijson-dev libxxhash-dev
  libopenmpi-dev openmpi-bin python3-mpi4py python3-numpy
  clang libclang-rt-14-dev
  libmetis-dev gmsh chromium
  libsimgrid-dev simgrid libboost-graph-dev
)

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
