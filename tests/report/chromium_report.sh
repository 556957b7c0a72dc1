#!/usr/bin/env bash
# chromium_report.sh COMMFIT SOURCE_DIR WORK_DIR [SHOTS_DIR]: plans four matrices (16, 32, 256 and
# 4096 ranks; a mesh, a torus, a fat tree with --strategy auto, a large torus), writes their reports
# and opens each in headless Chromium with the network disabled, at window widths 1280 and 1920.
# Fails when the page's self-check did not run or found a problem (among them: the page or one of
# its sections scrolls sideways), when the console shows anything (errors, or a load the page's
# Content-Security-Policy refused), when the HTML names an external resource, or when the net log
# shows a request for anything but Chromium's own background services. Keeps a whole-page
# screenshot of each at 1280 px in WORK_DIR (report-16.png, ...), and copies the 16, 256 and
# 4096-rank ones to SHOTS_DIR when given (tools/report_screenshots.sh: docs/REPORT.md's pictures).
set -euo pipefail
commfit=$1 src=$2 work=$3 shots=${4:-}
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "SKIPPED: chromium is not installed (Debian package chromium; tools/setup.sh installs it)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/home"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$commfit" plan "$src/examples/stencil2d_16.json" --topology mesh:4x4 -o r16.plan -q
"$commfit" plan "$src/examples/random_sparse_32.json" --topology torus:8x4 -o r32.plan -q
"$commfit" gen uniform -n 256 -d 16 --seed 7 -q -o m256.json
"$commfit" plan m256.json --strategy auto --topology fattree:2/16,16/1,16/1,1 -o r256.plan -q
"$commfit" gen stencil --grid 16x16x16 --points 27 --cells 32 -q -o m4096.json
"$commfit" plan m4096.json --topology torus:16x16x16 -o r4096.plan -q
pages=(report-16 report-32 report-256 report-4096)
for n in 16 32 256 4096; do "$commfit" report "r$n.plan" -o "report-$n.html"; done
grep -q 'id="candidates"' report-256.html || fail "report-256.html (--strategy auto) has no candidate table"
for page in "${pages[@]}"; do
  grep -q 'id="links"' "$page.html" || fail "$page.html has no link loads"
  grep -q 'id="topocost"' "$page.html" || fail "$page.html does not explain the topology's cost"
done

# Chromium needs a writable HOME and profile; as root it needs --no-sandbox.
export HOME=$work/home
chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$work/profile-$1" --disable-background-networking --disable-component-update \
    --disable-sync --disable-default-apps --disable-extensions --host-resolver-rules="MAP * ~NOTFOUND" \
    --enable-logging=stderr --v=0 "${@:2}"
}
for page in "${pages[@]}"; do
  # The page itself: nothing external (http(s) URLs, src/href attributes, CSS url() or @import).
  if grep -Eio 'https?://|(src|href)=|url\(|@import' "$page.html" | head -3 | grep -q .; then
    fail "$page.html refers to something outside itself: $(grep -Eio '.{20}(https?://|(src|href)=|url\(|@import).{20}' "$page.html" | head -3)"
  fi
  for width in 1280 1920; do
    run=$page-$width
    chrome "$run" --window-size=$width,1000 --log-net-log="$work/$run-net.json" --dump-dom "file://$work/$page.html" \
      >"$run-dom.html" 2>"$run-dom.log" || fail "chromium --dump-dom exited with $? (log: $work/$run-dom.log)"
    body=$(grep -o '<body[^>]*>' "$run-dom.html" || true)
    echo "$run: $body"
    [[ $body == *'data-validated="ok"'* ]] || fail "$run: the page's self-check did not pass: $body"
    [[ $body == *"data-window-width=\"$width\""* ]] || fail "$run: the window was not $width px wide: $body"
    cells=$(sed -n 's/.*data-heatmap-cells="\([0-9]*\)".*/\1/p' <<<"$body")
    bars=$(sed -n 's/.*data-gantt-bars="\([0-9]*\)".*/\1/p' <<<"$body")
    [[ ${cells:-0} -gt 0 && ${bars:-0} -gt 0 ]] || fail "$run: heatmap cells ${cells:-none}, Gantt bars ${bars:-none}"
    # Every message of the page's own scripts (errors, CSP refusals) is a console line.
    if grep -h 'CONSOLE' "$run-dom.log"; then fail "$run: console output above"; fi
    # Requests in the net log, except Chromium's own background services.
    urls=$(grep -o '"url":"[a-z]*://[^"/]*' "$work/$run-net.json" | sed 's/"url":"//' | sort -u |
           grep -Ev '^https?://([a-z0-9-]+\.)*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)$' || true)
    [[ -z $urls ]] || fail "$run: requests left the page: $urls"
  done
  # The whole page at 1280 px: the window as tall as the page (the self-check records its height).
  height=$(sed -n 's/.*data-page-height="\([0-9]*\)".*/\1/p' <<<"$body")
  [[ ${height:-0} -gt 0 ]] || fail "$page: no page height"
  chrome "$page-shot" --window-size=1280,$height --screenshot="$work/$page.png" "file://$work/$page.html" >/dev/null 2>"$page-shot.log" ||
    fail "chromium --screenshot exited with $? (log: $work/$page-shot.log)"
  if grep -h 'CONSOLE' "$page-shot.log"; then fail "$page: console output above"; fi
  [[ -s $page.png && $(stat -c %s "$page.png") -gt 20000 ]] || fail "$page: no screenshot"
done
if [[ -n $shots ]]; then
  mkdir -p "$shots"
  for n in 16 256 4096; do cp "report-$n.png" "$shots/report-$n.png"; done
  echo "screenshots copied to $shots"
fi
echo "screenshots: $work/report-{16,32,256,4096}.png"
