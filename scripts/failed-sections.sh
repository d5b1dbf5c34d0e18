#!/usr/bin/env bash
# Prints, for each integration test that failed in a tests/integration/integration.sh
# log, that test's own section of the log (from "=== NAME" to "=== NAME
# FAILED"), without ZooKeeper's client log lines and the history checker's
# per-mark lines, at most the last MAX (120) lines of each: CI shows the
# end of its output only, and the tail of the whole log is usually another
# test's.
#   scripts/failed-sections.sh LOG [MAX]
set -euo pipefail
log=${1:?usage: scripts/failed-sections.sh LOG [MAX]}
max=${2:-120}
[ -f "$log" ] || exit 0
grep -a -o '^=== [^ ]* FAILED$' "$log" | awk '{ print $2 }' | sort -u | while IFS= read -r t; do
	echo "---- $t (its section of $log)"
	awk -v t="$t" '$0 == "=== " t { on = 1; next } $0 == "=== " t " FAILED" { on = 0 } on' "$log" |
		grep -a -v -E 'ZOO_(INFO|WARN|ERROR|DEBUG)|^ +[0-9.]+ s  handle:' | tail -n "$max"
done
