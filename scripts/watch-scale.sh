#!/usr/bin/env bash
# scripts/watch-scale.sh: client CPU and wall time per watch set and per
# watched re-read, for handles that hold N watches (docs/benchmarks.md,
# "Many watches").  scripts/watch-scale/wscale.c (a plain libzookeeper_mt
# program) runs stock, and routed under each TREE's zkroute-run, the
# variants interleaved in each of ROUNDS rounds:
#
#   scripts/watch-scale.sh ROUNDS "N1 N2 ..." M NAME=TREE...
#
# Each TREE is a built tree (autoreconf -fi && ./configure -q && make).
# The ensemble: a 3-node one from tests/harness/ensemble.sh on
# ${ZKR_TEST_NET:-127.0.94}, stopped on exit.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if (($# < 4)); then
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
fi
rounds=$1 sizes=$2 m=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/zkr-wscale.XXXXXX")
cleanup() {
	bash "$here/tests/harness/ensemble.sh" stop "$work/ens" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
cc -O2 -DTHREADED -o "$work/wscale" "$here/scripts/watch-scale/wscale.c" -lzookeeper_mt -lpthread
export ZKR_TEST_NET=${ZKR_TEST_NET:-127.0.94}
hosts=$(bash "$here/tests/harness/ensemble.sh" start "$work/ens")
for r in $(seq 1 "$rounds"); do
	for n in $sizes; do
		echo "round $r: $("$work/wscale" "$hosts" "$n" "$m" stock)"
		for v in "$@"; do
			name=${v%%=*} tree=${v#*=}
			echo "round $r: $("$tree/zkroute-run" "$work/wscale" "$hosts" "$n" "$m" "$name" 2>&1 | grep -v 'ZOO_')"
		done
	done
done
