#!/usr/bin/env bash
# Checks the Grafana dashboard docs/grafana-zkroute.json (docs/operations.md).
# Debian 12 has no grafana package, so it cannot be loaded into a Grafana
# server here; it is checked instead: it is valid JSON (jq), it has a
# Grafana dashboard's shape (title, uid, schemaVersion, the Prometheus
# datasource input, panels with a position and queries), and every metric
# its queries name is one the library writes (`zkroute metrics`, the
# schema of zkroute/model/stats_schema.h; histograms by their _bucket series).
# No server needed.  TAP output; skips (77) only where jq is not installed
# (scripts/setup.sh installs it, so CI never skips).
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
dash=$top_srcdir/docs/grafana-zkroute.json
if ! command -v jq >/dev/null; then
  echo "1..0 # SKIP jq is not installed"
  exit 77
fi
echo "1..4"
bad=0
ok() { # ok N TEXT RESULT [DETAIL]
  if [ "$3" = 0 ]; then echo "ok $1 - $2"; else
    bad=1
    echo "not ok $1 - $2"
    [ -z "${4:-}" ] || printf '%s\n' "$4" | sed 's/^/# /'
  fi
}
err=$(jq empty "$dash" 2>&1)
ok 1 "docs/grafana-zkroute.json is valid JSON" $? "$err"
shape=$(jq -r '
  [ (if (.title | type) == "string" and (.uid | type) == "string" then empty else "title or uid" end),
    (if .schemaVersion >= 30 then empty else "schemaVersion" end),
    (if any(.__inputs[]; .pluginId == "prometheus") then empty else "no Prometheus input" end),
    (if (.panels | length) > 0 then empty else "no panels" end),
    (.panels[] | select((.gridPos.w // 0) == 0 or (.targets | length) == 0
      or any(.targets[]; (.expr // "") == "")) | "panel \(.id): no position or query") ] | .[]' "$dash" 2>&1)
ok 2 "a Grafana dashboard: title, uid, schemaVersion, Prometheus input, $(jq '.panels | length' "$dash") panels with queries" \
  "$([ -z "$shape" ]; echo $?)" "$shape"
used=$(jq -r '.panels[].targets[].expr, .templating.list[].definition' "$dash" |
  grep -o 'zkroute_[a-z_]*' | sed -E 's/_(bucket|sum|count)$//' | sort -u)
known=$("$top_builddir/tools/zkroute" metrics | grep -o '^| `zkroute_[a-z_]*`' | tr -d '|` ' | sort -u)
unknown=$(comm -23 <(echo "$used") <(echo "$known"))
ok 3 "every metric the dashboard queries is one the library writes ($(echo "$used" | wc -l) names)" \
  "$([ -n "$used" ] && [ -z "$unknown" ]; echo $?)" "${unknown:+unknown: }$unknown"
if command -v grafana-server >/dev/null; then
  echo "ok 4 - loaded into Grafana # SKIP grafana-server is installed, but this check does not start it"
else
  echo "ok 4 - loaded into Grafana # SKIP Debian 12 has no grafana package"
fi
exit $bad
