#!/usr/bin/env bash
# scripts/cpu-ops.sh: the client's instructions per operation, counted by
# callgrind - a figure the shared host's load does not move, where client
# CPU time per operation (scripts/bench.sh ab) moves by several per cent
# from run to run (docs/architecture-log.md, "Client CPU per operation").
#
#   scripts/cpu-ops.sh THREADS OPS WARMUP REPS NAME=TREE... [-- KEY=VALUE...]
#
# Each NAME=TREE is a built tree (autoreconf -fi && ./configure -q && make):
# scripts/cpu-ops/ops.c is compiled against its include/ and
# .libs/libzkroute.so; NAME `stock` (TREE any build) runs a plain
# libzookeeper_mt session instead (STOCK=1, see ops.c), and NAME
# `stock-resolved` one that resolves its host list once, as zkroute's
# member sessions do (STOCK_RESOLVE_DELAY=-1).  REPS rounds, the
# variants in the order given in each; a round runs `valgrind
# --tool=callgrind` on ops.c with THREADS closed-loop threads, WARMUP and
# then OPS operations each (80/20 get/set), and prints the instructions
# (Ir) of the measured window per operation.  The last line per variant:
# the median over the rounds.  KEY=VALUE after `--` go to the routed
# handles as options.  Keeps the callgrind files under OUT
# (${CPU_OPS_OUT:-${TMPDIR:-/tmp}/cpu-ops}) for callgrind_annotate.
# PACE_US=N in the environment paces the load (each thread starts an
# operation every N µs, ops.c): the equal paced load, where the closed
# loop is the default.
#
# The ensemble: HOSTS if set, else a 3-node one from
# tests/harness/ensemble.sh on ${ZKR_TEST_NET:-127.0.36}, stopped on exit.
# Needs valgrind and its headers (valgrind/callgrind.h).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if (($# < 5)); then
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
fi
threads=$1 ops=$2 warm=$3 reps=$4
shift 4
variants=() opts=()
while (($#)); do
	if [[ $1 == -- ]]; then
		shift
		opts=("$@")
		break
	fi
	variants+=("$1")
	shift
done
out=${CPU_OPS_OUT:-${TMPDIR:-/tmp}/cpu-ops}
mkdir -p "$out"
export ZKR_TEST_NET=${ZKR_TEST_NET:-127.0.36}
ens=''
cleanup() { [[ -n $ens ]] && bash "$here/tests/harness/ensemble.sh" stop "$ens" >/dev/null 2>&1 && rm -rf "$ens"; }
trap cleanup EXIT
hosts=${HOSTS:-}
if [[ -z $hosts ]]; then
	ens=$(mktemp -d "${TMPDIR:-/tmp}/cpu-ops-ens.XXXXXX")
	hosts=$(bash "$here/tests/harness/ensemble.sh" start "$ens")
fi
for v in "${variants[@]}"; do
	name=${v%%=*} tree=${v#*=}
	"${CC:-cc}" -O2 -g -DTHREADED -I"$tree/include" -o "$out/ops-$name" "$here/scripts/cpu-ops/ops.c" \
		"$tree/.libs/libzkroute.so" -Wl,-rpath,"$tree/.libs" -lzookeeper_mt -lpthread
done
declare -A irs
for ((r = 1; r <= reps; r++)); do
	for v in "${variants[@]}"; do
		name=${v%%=*}
		d=$out/$name-t$threads-$r
		rm -rf "$d" && mkdir -p "$d"
		env=()
		[[ $name == stock ]] && env=(STOCK=1)
		[[ $name == stock-resolved ]] && env=(STOCK=1 STOCK_RESOLVE_DELAY=-1)
		(cd "$d" && env "${env[@]}" valgrind --tool=callgrind --callgrind-out-file=cg.out \
			"$out/ops-$name" "$hosts" "$threads" "$ops" "$warm" "${opts[@]}" >ops.txt 2>vg.txt) || true
		ir=$(sed -n 's/^summary: //p' "$d/cg.out.1" 2>/dev/null || true)
		if [[ -z $ir ]]; then
			echo "$name threads $threads round $r: failed (see $d/vg.txt)"
			continue
		fi
		per=$((ir / (threads * ops)))
		irs[$name]+="$per "
		echo "$name threads $threads round $r: $per Ir/op ($(cat "$d/ops.txt"))"
	done
done
for v in "${variants[@]}"; do
	name=${v%%=*}
	# shellcheck disable=SC2086 # one number a word
	med=$(printf '%s\n' ${irs[$name]:-} | sort -n | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : "-"}')
	echo "median $name threads $threads: $med Ir/op over $(wc -w <<<"${irs[$name]:-}") rounds"
done
