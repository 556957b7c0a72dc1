#!/usr/bin/env bash
# commfit-calibrate on simulated clusters whose figures are known exactly (docs/SMPI.md
# "Calibration"): builds runtime/calibrate.cpp with smpicxx (the MPI-free planner is the main
# build's libcommfit_planner.a and libcommfit_ir.a), runs it on each platform under both of
# SimGrid's network models with run.py's settings (the flow trials priced on the platform's
# topology, --topology), and prints what it fitted beside what the platform has: between nodes tau = 0.5 us + the route's latency + 0.5 us (smpi/os and or; 0.25 us
# per link), 12.5 GB/s, overhead 0.5 us (smpi/ois), eager limit 64 KiB (smpi/async-small-thresh);
# inside a node (KIND-PxN) no latency of its own and 7 GB/s; under IB the penalty factors
# 0.965;0.925;1.35; the link latency 0.25 us on every platform, and under IB (TCP-gamma 25000) a
# window of 25000 bytes, seen where a route is longer than 4 links (the torus: 12.5 GB/s at 1 us).
#
#   bench/smpi/calibrate.sh CORE_BUILD_DIR OUT_DIR [PLATFORM...]   (default: fattree-64 torus-64 fattree-16x16)
#
# Writes OUT_DIR/PLATFORM-MODEL.json (the machine files) and prints one row per run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
core=${1:?usage: calibrate.sh CORE_BUILD_DIR OUT_DIR [PLATFORM...]}
out=${2:?usage: calibrate.sh CORE_BUILD_DIR OUT_DIR [PLATFORM...]}
shift 2
platforms=("$@")
((${#platforms[@]})) || platforms=(fattree-64 torus-64 fattree-16x16)
if ! command -v smpicxx >/dev/null 2>&1; then
  echo "calibrate.sh: smpicxx not found (Debian package simgrid / libsimgrid-dev)" >&2
  exit 3
fi
for lib in libcommfit_planner.a libcommfit_ir.a; do
  [[ -f $core/$lib ]] || { echo "calibrate.sh: $core/$lib missing (build targets commfit_planner and commfit_ir first)" >&2; exit 2; }
done
mkdir -p "$out"
exe=$out/calibrate_smpi
if [[ ! -x $exe || $root/runtime/calibrate.cpp -nt $exe || $core/libcommfit_planner.a -nt $exe ]]; then
  echo "smpicxx calibrate.cpp" >&2
  smpicxx -std=c++20 -O2 -g0 -DNDEBUG -DCOMMFIT_VERSION=\"smpi\" -DOMPI_SKIP_MPICXX -I"$root" -I/usr/include/eigen3 \
    "$root/runtime/calibrate.cpp" "$core/libcommfit_planner.a" "$core/libcommfit_ir.a" -o "$exe"
fi
# run.py's SimGrid settings, and its two network models.
mapfile -t cfg < <(python3 -B -c "import sys; sys.path.insert(0, '$here'); import run; print('\n'.join(run.SMPI_CFG))")
ib_cfg=(--cfg=network/model:IB "--cfg=smpi/IB-penalty-factors:0.965;0.925;1.35" --cfg=network/TCP-gamma:25000)
printf '%-16s %-5s %10s %10s %9s %7s %8s %8s %10s %10s %-22s %8s %8s %s\n' platform model "tau us" "GB/s" "o us" eager "link us" window "intra us" "intra GB/s" "ib factors" "flow err" "ib err" chosen
for p in "${platforms[@]}"; do
  topology=$(python3 "$here/platforms.py" "$out" "$p" | awk '{print $2}')
  hosts=$(wc -l <"$out/$p.hosts")
  for model in flow ib; do
    extra=()
    [[ $model == ib ]] && extra=("${ib_cfg[@]}")
    file=$out/$p-$model.json
    smpirun -np "$hosts" -platform "$out/$p.xml" -hostfile "$out/$p.hosts" "${cfg[@]}" "${extra[@]}" "$exe" --blocks 5 --topology "$topology" -o "$file" \
      </dev/null >"$out/$p-$model.log" 2>&1 || { cat "$out/$p-$model.log"; exit 1; }
    python3 - "$file" "$p" "$model" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
c = m["calibration"]
flows = c.get("flows", {})
def num(key, scale, fmt="%.3f"):
    return fmt % (m[key] * scale) if key in m else "-"
print("%-16s %-5s %10s %10s %9s %7s %8s %8s %10s %10s %-22s %8s %8s %s" % (
    sys.argv[2], sys.argv[3], num("tau_s", 1e6), num("bandwidth_Bps", 1e-9), num("overhead_s", 1e6),
    str(m.get("eager_limit", "-")), num("link_latency_s", 1e6), num("window_bytes", 1, "%.0f"), num("intra_latency_s", 1e6), num("intra_bandwidth_Bps", 1e-9),
    flows.get("ib_factors", "-"), "%.3f" % flows["flow_model_largest_error"] if flows else "-",
    "%.3f" % flows["ib_model_largest_error"] if flows else "-", m["network"]))
EOF
  done
done
