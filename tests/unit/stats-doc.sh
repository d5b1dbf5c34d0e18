#!/usr/bin/env bash
# Checks that docs/stats.md documents the statistics JSON the library
# writes (zkroute/stats_json.c, through `zkroute status --json` on closed
# local ports: no server needed): every key of the JSON has a row in the
# doc, and every row names a key the JSON has.  TAP output.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
echo "1..3"
json=$("$top_builddir/tools/zkroute" --timeout 100 status 127.0.0.1:9,127.0.0.2:9 --json 2>/dev/null)
keys=$(printf '%s' "$json" | grep -o '"[a-z_]*":' | tr -d '":' | grep -vx ready | sort -u)
rows=$(grep -o '^| `[a-z_]*`' "$top_srcdir/docs/stats.md" | tr -d '|` ' | sort -u)
if [ -n "$keys" ]; then echo "ok 1 - zkroute status --json prints the statistics"; else echo "not ok 1 - zkroute status --json prints the statistics"; fi
missing=$(comm -23 <(echo "$keys") <(echo "$rows"))
extra=$(comm -13 <(echo "$keys") <(echo "$rows"))
if [ -z "$missing" ]; then echo "ok 2 - every key of the JSON has a row in docs/stats.md"
else echo "not ok 2 - every key of the JSON has a row in docs/stats.md"; echo "$missing" | sed 's/^/# undocumented: /'; fi
if [ -z "$extra" ]; then echo "ok 3 - every row of docs/stats.md is a key of the JSON"
else echo "not ok 3 - every row of docs/stats.md is a key of the JSON"; echo "$extra" | sed 's/^/# not in the JSON: /'; fi
[ -n "$keys" ] && [ -z "$missing" ] && [ -z "$extra" ]
