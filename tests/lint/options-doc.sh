#!/usr/bin/env bash
# Checks that the option table in docs/options.md is the one the library
# has: `tools/zkroute options` prints it from the library's option table,
# make writes it into the doc (scripts/doc-tables.sh), and the doc keeps
# that table (plus prose around it).  A new option, a changed default or a
# changed line of meaning must reach the doc.  TAP output.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
echo "1..2"
want=$("$top_builddir/tools/zkroute" options | grep '^| `')
have=$(grep '^| `' "$top_srcdir/docs/options.md")
if [ -n "$want" ]; then echo "ok 1 - zkroute options prints a table"; else echo "not ok 1 - zkroute options prints a table"; fi
if [ "$want" = "$have" ]; then
  echo "ok 2 - docs/options.md has the library's option table"
else
  echo "not ok 2 - docs/options.md has the library's option table (regenerate: make)"
  diff <(echo "$have") <(echo "$want") | sed 's/^/# /'
fi
[ -n "$want" ] && [ "$want" = "$have" ]
