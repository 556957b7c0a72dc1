#!/usr/bin/env bash
# chromium_report.sh COMMFIT SOURCE_DIR WORK_DIR: plans two examples, writes their reports and opens
# each in headless Chromium with the network disabled. Fails when the page's self-check did not
# run or found a problem, when the console shows anything (errors, or a load the page's
# Content-Security-Policy refused), when the HTML names an external resource, or when the net log
# shows a request for anything but Chromium's own background services. Keeps WORK_DIR/report.png.
set -euo pipefail
commfit=$1 src=$2 work=$3
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "SKIPPED: chromium is not installed (Debian package chromium; tools/setup.sh installs it)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/home"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$commfit" plan "$src/examples/random_sparse_32.json" --topology torus:8x4 -o torus.plan -q
"$commfit" report torus.plan -o report.html
"$commfit" plan "$src/examples/random_sparse_32.json" --strategy auto -o auto.plan -q
"$commfit" report auto.plan -o auto.html
grep -q 'id="candidates"' auto.html || fail "auto.html has no candidate table"
grep -q 'id="links"' report.html || fail "report.html has no link loads"

# Chromium needs a writable HOME and profile; as root it needs --no-sandbox.
export HOME=$work/home
chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$work/profile-$1" --disable-background-networking --disable-component-update \
    --disable-sync --disable-default-apps --disable-extensions --host-resolver-rules="MAP * ~NOTFOUND" \
    --enable-logging=stderr --v=0 "${@:2}"
}
for page in report auto; do
  # The page itself: nothing external (http(s) URLs, src/href attributes, CSS url() or @import).
  if grep -Eio 'https?://|(src|href)=|url\(|@import' "$page.html" | head -3 | grep -q .; then
    fail "$page.html refers to something outside itself: $(grep -Eio '.{20}(https?://|(src|href)=|url\(|@import).{20}' "$page.html" | head -3)"
  fi
  chrome "$page-dom" --log-net-log="$work/$page-net.json" --dump-dom "file://$work/$page.html" >"$page-dom.html" 2>"$page-dom.log" ||
    fail "chromium --dump-dom exited with $? (log: $work/$page-dom.log)"
  chrome "$page-shot" --window-size=1200,2600 --screenshot="$work/$page.png" "file://$work/$page.html" >/dev/null 2>"$page-shot.log" ||
    fail "chromium --screenshot exited with $? (log: $work/$page-shot.log)"
  body=$(grep -o '<body[^>]*>' "$page-dom.html" || true)
  echo "$page: $body"
  [[ $body == *'data-validated="ok"'* ]] || fail "$page: the page's self-check did not pass: $body"
  cells=$(sed -n 's/.*data-heatmap-cells="\([0-9]*\)".*/\1/p' <<<"$body")
  bars=$(sed -n 's/.*data-gantt-bars="\([0-9]*\)".*/\1/p' <<<"$body")
  [[ ${cells:-0} -gt 0 && ${bars:-0} -gt 0 ]] || fail "$page: heatmap cells ${cells:-none}, Gantt bars ${bars:-none}"
  # Every message of the page's own scripts (errors, CSP refusals) is a console line.
  if grep -h 'CONSOLE' "$page-dom.log" "$page-shot.log"; then fail "$page: console output above"; fi
  # Requests in the net log, except Chromium's own background services.
  urls=$(grep -o '"url":"[a-z]*://[^"/]*' "$work/$page-net.json" | sed 's/"url":"//' | sort -u |
         grep -Ev '^https?://([a-z0-9-]+\.)*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)$' || true)
  [[ -z $urls ]] || fail "$page: requests left the page: $urls"
  [[ -s $page.png && $(stat -c %s "$page.png") -gt 20000 ]] || fail "$page: no screenshot"
done
echo "screenshots: $work/report.png $work/auto.png"
