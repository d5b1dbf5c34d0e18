#!/usr/bin/env bash
# Parses every shell script of the tree with `bash -n`: a script that only
# runs on demand (scripts/bench.sh scenarios, the docker entry point) must
# not wait for its next run to show a syntax error.  TAP output.
set -u
top_srcdir=${top_srcdir:-.}
files=()
for f in "$top_srcdir"/scripts/*.sh "$top_srcdir"/tests/*/*.sh "$top_srcdir"/.ci/run \
  "$top_srcdir"/tools/zkroute-run.in "$top_srcdir"/docker/*.sh; do
  [ -f "$f" ] && files+=("$f")
done
echo "1..${#files[@]}"
n=0 bad=0
for f in "${files[@]}"; do
  n=$((n + 1))
  if err=$(bash -n "$f" 2>&1); then
    echo "ok $n - ${f#"$top_srcdir"/}"
  else
    bad=1
    echo "not ok $n - ${f#"$top_srcdir"/}"
    printf '%s\n' "$err" | sed 's/^/# /'
  fi
done
exit $bad
