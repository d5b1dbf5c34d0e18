#!/usr/bin/env bash
# Checks that docs/stats.md documents the statistics the library writes
# (the schema of zkroute/model/stats_schema.h, through `zkroute status --json`
# and `--prometheus` on closed local ports: no server needed): every key
# of the JSON has a row in the doc, and every row names a key the JSON
# has; the metric table is the one `zkroute metrics` prints (make writes it
# into the doc: scripts/doc-tables.sh), and every metric family of the
# Prometheus text is in it.  TAP output.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
echo "1..5"
json=$("$top_builddir/tools/zkroute" --timeout 100 status 127.0.0.1:9,127.0.0.2:9 --json 2>/dev/null)
keys=$(printf '%s' "$json" | grep -o '"[a-z_]*":' | tr -d '":' | grep -vx ready | sort -u)
rows=$(grep -o '^| `[a-z_]*`' "$top_srcdir/docs/stats.md" | tr -d '|` ' | grep -v '^zkroute_' | sort -u)
if [ -n "$keys" ]; then echo "ok 1 - zkroute status --json prints the statistics"; else echo "not ok 1 - zkroute status --json prints the statistics"; fi
missing=$(comm -23 <(echo "$keys") <(echo "$rows"))
extra=$(comm -13 <(echo "$keys") <(echo "$rows"))
if [ -z "$missing" ]; then echo "ok 2 - every key of the JSON has a row in docs/stats.md"
else echo "not ok 2 - every key of the JSON has a row in docs/stats.md"; echo "$missing" | sed 's/^/# undocumented: /'; fi
if [ -z "$extra" ]; then echo "ok 3 - every row of docs/stats.md is a key of the JSON"
else echo "not ok 3 - every row of docs/stats.md is a key of the JSON"; echo "$extra" | sed 's/^/# not in the JSON: /'; fi
want=$("$top_builddir/tools/zkroute" metrics | grep '^| `')
have=$(grep '^| `zkroute_' "$top_srcdir/docs/stats.md")
if [ -n "$want" ] && [ "$want" = "$have" ]; then echo "ok 4 - docs/stats.md has the metric table of zkroute metrics"
else echo "not ok 4 - docs/stats.md has the metric table of zkroute metrics (regenerate: make)"; diff <(echo "$have") <(echo "$want") | sed 's/^/# /'; fi
families=$("$top_builddir/tools/zkroute" --timeout 100 status 127.0.0.1:9,127.0.0.2:9 --prometheus 2>/dev/null | sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' | sort -u)
listed=$(echo "$want" | grep -o '^| `[a-z_]*`' | tr -d '|` ' | sort -u)
if [ -n "$families" ] && [ "$families" = "$listed" ]; then echo "ok 5 - every metric family of zkroute status --prometheus is in the table, and no other"
else echo "not ok 5 - every metric family of zkroute status --prometheus is in the table, and no other"; diff <(echo "$listed") <(echo "$families") | sed 's/^/# /'; fi
[ -n "$keys" ] && [ -z "$missing" ] && [ -z "$extra" ] && [ -n "$want" ] && [ "$want" = "$have" ] &&
  [ -n "$families" ] && [ "$families" = "$listed" ]
