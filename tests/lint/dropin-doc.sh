#!/usr/bin/env bash
# Checks that docs/dropin.md's function tables have one row per function
# that <zookeeper/zookeeper.h> and the headers it includes (recordio.h,
# zookeeper.jute.h) declare - found by the compiler, with ZK_CPPFLAGS - and
# no row for a function they do not declare, except the four
# libzookeeper_mt exports without declaring them there.  A row is a table
# line of the section "Every function of zookeeper.h" or of the appendix
# whose first cell is `name`.  TAP output; exit 77 (skip) when the
# headers cannot be found.
set -u
top_srcdir=${top_srcdir:-.}
doc=$top_srcdir/docs/dropin.md
# shellcheck disable=SC2086 # ZK_CPPFLAGS is a list of flags
deps=$(echo '#include <zookeeper/zookeeper.h>' |
	${CC:-cc} -DTHREADED ${ZK_CPPFLAGS:-} -M -x c - 2>/dev/null | tr -d '\\' | tr ' ' '\n')
zk=$(echo "$deps" | grep '/zookeeper/zookeeper\.h$' | head -1)
if [ -z "$zk" ]; then
	echo "1..0 # SKIP zookeeper/zookeeper.h not found"
	exit 77
fi
dir=$(dirname "$zk")

# Function names declared in a header: comments and preprocessor lines
# out, one declaration per ';', no typedefs or function pointers.
declared() {
	sed -e 's://.*$::' -e '/^[[:space:]]*#/d' "$1" | tr '\n' ' ' |
		sed -e 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/::g' | tr ';' '\n' |
		grep -v '^[[:space:]]*typedef' | grep -v '([[:space:]]*\*' |
		sed -nE 's/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\(.*$/\1/p'
}
extra="zoo_lock_auth zoo_unlock_auth zoo_get_log_stream zoo_create2_op_init"
want=$( (for h in zookeeper.h recordio.h zookeeper.jute.h; do declared "$dir/$h"; done
	for e in $extra; do echo "$e"; done) | sort -u)
# The rows of the section "Every function of zookeeper.h" and of the
# appendix.
rows=$(awk '/^### Every function of/ || /^## Appendix/ { on = 1; next }
	/^##/ { on = 0 } on' "$doc" | sed -n 's/^| `\([A-Za-z_][A-Za-z0-9_]*\)` |.*/\1/p' | sort)
echo "1..3"
n=$(echo "$want" | wc -l)
if [ "$n" -gt 300 ]; then
	echo "ok 1 - $((n - 4)) functions declared in $dir (zookeeper.h, recordio.h, zookeeper.jute.h), 4 exported besides"
else
	echo "not ok 1 - only $n functions found in $dir"
fi
dups=$(echo "$rows" | uniq -d)
if [ -z "$dups" ]; then echo "ok 2 - no function has two rows"; else echo "not ok 2 - functions with two rows: $(echo $dups)"; fi
if [ "$want" = "$(echo "$rows" | sort -u)" ]; then
	echo "ok 3 - docs/dropin.md has a row for each, and no other"
else
	echo "not ok 3 - docs/dropin.md's rows differ from the headers (< no row, > not declared)"
	diff <(echo "$want") <(echo "$rows" | sort -u) | sed -n 's/^\([<>]\)/# \1/p'
fi
[ "$n" -gt 300 ] && [ -z "$dups" ] && [ "$want" = "$(echo "$rows" | sort -u)" ]
