#!/usr/bin/env bash
# Writes the generated tables of two docs from the library itself:
# docs/options.md's option table is what `zkroute options` prints (the
# library's one option table), docs/stats.md's metric table what `zkroute
# metrics` prints (the statistics schema).  Each table is the block of
# table lines that starts with the header line the command prints; the
# prose around it is the doc's own.  A doc is rewritten only when its table
# differs, so a tree that is up to date (a release's, read-only in make
# distcheck) is never written.  make runs it (Makefile.am, doc-tables);
# tests/lint/options-doc.sh and stats-doc.sh compare.
#
#   scripts/doc-tables.sh ZKROUTE DOCS_DIR           rewrite what differs
#   scripts/doc-tables.sh ZKROUTE DOCS_DIR --check   only say what differs (exit 1)
#
# ZKROUTE is the built tools/zkroute; when it cannot run (a cross build),
# the docs are left as they are, with one line on stderr.
set -euo pipefail
zkroute=$1 docs=$2 mode=${3:-update}
if ! "$zkroute" options >/dev/null 2>&1; then
	echo "doc-tables: $zkroute does not run here; docs/options.md and docs/stats.md left as they are" >&2
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zkr-doc-tables.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
status=0
# table DOC COMMAND: DOC with its table replaced by COMMAND's.
table() {
	local doc=$docs/$1 new=$tmp/$1
	"$zkroute" "$2" | grep '^|' >"$tmp/table"
	awk -v header="$(head -1 "$tmp/table")" -v table="$tmp/table" '
		!done && $0 == header { while ((getline l < table) > 0) print l; skip = 1; done = 1; next }
		skip && /^\|/ { next }
		{ skip = 0; print }
		END { if (!done) exit 3 }
	' "$doc" >"$new" || { echo "doc-tables: $doc has no line '$(head -1 "$tmp/table")'" >&2; exit 2; }
	if cmp -s "$doc" "$new"; then return; fi
	if [ "$mode" = --check ]; then
		echo "doc-tables: $doc differs from \`zkroute $2\`:"
		diff "$doc" "$new" | sed 's/^/  /' || true
		status=1
	else
		cp "$new" "$doc"
		echo "doc-tables: $doc: table of \`zkroute $2\` written"
	fi
}
table options.md options
table stats.md metrics
exit $status
