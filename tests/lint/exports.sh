#!/usr/bin/env bash
# Checks what the shared libraries export (nm -D --defined-only): libzkroute
# only zkr_ names (STYLE.md: internal names are zkr__ and hidden), and the
# LD_PRELOAD interposer only the names of libzookeeper_mt it stands in for
# (zoo_*, zookeeper_*, zerror, is_unrecoverable), never a zkr_ one: a
# program linked with libzkroute itself must not see the interposer's copy.
# No server needed.  TAP output; 77 (skip) without shared libraries or nm.
set -u
top_builddir=${top_builddir:-.}
lib=$top_builddir/.libs/libzkroute.so
pl=$top_builddir/.libs/libzkroute_preload.so
command -v nm >/dev/null || { echo "1..0 # SKIP no nm"; exit 77; }
[ -f "$lib" ] && [ -f "$pl" ] || { echo "1..0 # SKIP no shared libraries"; exit 77; }
echo "1..4"
bad=0
check() { # check N TEXT LIBRARY REGEX
	local names others
	names=$(nm -D --defined-only "$3" | awk 'NF >= 3 { print $3 }')
	others=$(printf '%s\n' "$names" | grep -Ev "$4")
	if [ -n "$names" ] && [ -z "$others" ]; then
		echo "ok $1 - $2 ($(printf '%s\n' "$names" | wc -l) names)"
	else
		bad=1
		echo "not ok $1 - $2"
		printf '%s\n' "$others" | sed 's/^/# exported: /'
	fi
}
check 1 "libzkroute.so exports only zkr_ names" "$lib" '^zkr_[a-z0-9_]+$'
check 2 "libzkroute_preload.so exports only zoo_/zookeeper_/zerror/is_unrecoverable" "$pl" \
	'^(zoo_[a-z0-9_]+|zookeeper_[a-z0-9_]+|zerror|is_unrecoverable)$'
# Nothing internal leaks either way: no zkr__ name in libzkroute, the
# interposer's 79 entry points are all there.
if nm -D --defined-only "$lib" | grep -q ' zkr__'; then bad=1; echo "not ok 3 - no zkr__ name exported"; else echo "ok 3 - no zkr__ name exported"; fi
n=$(nm -D --defined-only "$pl" | awk 'NF >= 3' | wc -l)
if [ "$n" = 79 ]; then echo "ok 4 - the interposer exports its 79 functions"; else bad=1; echo "not ok 4 - the interposer exports its 79 functions (it exports $n)"; fi
exit $bad
