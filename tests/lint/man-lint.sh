#!/usr/bin/env bash
# Lints the man pages (man/*.[13]): `mandoc -T lint -W style` must print
# nothing (cross-references between the pages are resolved in a private
# manual tree made of them), and `man --warnings -l` (man-db and groff)
# must render each without a warning.  Each half skips when its program is
# not installed; CI installs mandoc (scripts/test.sh), so it never skips
# there.  No server needed.  TAP output.
set -u
top_srcdir=${top_srcdir:-.}
pages=("$top_srcdir"/man/*.[13])
have_mandoc=0 have_man=0
command -v mandoc >/dev/null && have_mandoc=1
command -v man >/dev/null && command -v groff >/dev/null && have_man=1
if [ $have_mandoc = 0 ] && [ $have_man = 0 ]; then
	echo "1..0 # SKIP neither mandoc nor man is installed"
	exit 77
fi
tree=$(mktemp -d "${TMPDIR:-/tmp}/zkr-man.XXXXXX")
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/man1" "$tree/man3"
for p in "${pages[@]}"; do cp "$p" "$tree/man${p##*.}/"; done
if [ $have_mandoc = 1 ] && command -v makewhatis >/dev/null; then
	makewhatis "$tree" 2>/dev/null
fi
echo "1..$((2 * ${#pages[@]}))"
n=0 bad=0
report() { # report TEXT OUTPUT STATUS
	n=$((n + 1))
	if [ "$3" = 0 ] && [ -z "$2" ]; then
		echo "ok $n - $1"
	else
		bad=1
		echo "not ok $n - $1"
		printf '%s\n' "$2" | sed 's/^/# /'
	fi
}
for p in "${pages[@]}"; do
	name=${p##*/}
	if [ $have_mandoc = 1 ]; then
		out=$(mandoc -T lint -W style -M "$tree" "$p" 2>&1)
		report "mandoc -T lint $name" "$out" $?
	else
		n=$((n + 1))
		echo "ok $n - mandoc -T lint $name # SKIP mandoc is not installed"
	fi
	if [ $have_man = 1 ]; then
		out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
		report "man --warnings -l $name" "$out" $?
	else
		n=$((n + 1))
		echo "ok $n - man --warnings -l $name # SKIP man or groff is not installed"
	fi
done
exit $bad
