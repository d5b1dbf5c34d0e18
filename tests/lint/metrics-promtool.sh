#!/usr/bin/env bash
# Checks the library's Prometheus text with Prometheus's own checker,
# `promtool check metrics` (exposition format, names, units, histogram
# buckets): the text of a snapshot made by hand with every kind of value
# (tests/unit/test_metrics --sample: two handles, histograms filled, a
# label to escape) and what `zkroute status --prometheus` prints for a
# handle on closed local ports.  No server needed.  TAP output; skips (77)
# only where promtool is not installed (scripts/setup.sh installs
# prometheus, so CI never skips).
set -u
top_builddir=${top_builddir:-.}
promtool=${PROMTOOL:-promtool}
if ! command -v "$promtool" >/dev/null; then
  echo "1..0 # SKIP $promtool is not installed (Debian package prometheus)"
  exit 77
fi
echo "1..2"
bad=0
check() { # check N TEXT-FILE WHAT
  local out=
  if [ -s "$2" ] && out=$("$promtool" check metrics <"$2" 2>&1) && [ -z "$out" ]; then
    echo "ok $1 - promtool check metrics: $3"
  else
    bad=1
    echo "not ok $1 - promtool check metrics: $3"
    printf '%s\n' "$out" | sed 's/^/# /'
  fi
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zkr-promtool.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$top_builddir/tests/unit/test_metrics" --sample >"$tmp/sample.prom"
check 1 "$tmp/sample.prom" "a hand-made snapshot of two handles ($(grep -c '^# TYPE' "$tmp/sample.prom") families, $(grep -vc '^#' "$tmp/sample.prom") samples)"
"$top_builddir/tools/zkroute" --timeout 100 status 127.0.0.1:9,127.0.0.2:9 --prometheus \
  >"$tmp/status.prom" 2>/dev/null
check 2 "$tmp/status.prom" "zkroute status --prometheus"
exit $bad
