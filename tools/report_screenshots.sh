#!/usr/bin/env bash
# tools/report_screenshots.sh [COMMFIT]: regenerates docs/images/report-{16,256,4096}.png, the
# report screenshots of docs/REPORT.md, with the browser test itself (tests/report/chromium_report.sh
# plans the matrices, checks each page at 1280 and 1920 px and takes the whole-page screenshots).
# COMMFIT defaults to build/commfit. Needs Debian's chromium (tools/setup.sh installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
commfit=$(realpath "${1:-$root/build/commfit}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash "$root/tests/report/chromium_report.sh" "$commfit" "$root" "$work/run" "$root/docs/images"
