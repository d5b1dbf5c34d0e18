#!/usr/bin/env bash
# scripts/read-path.sh: which library source files one routed read runs code
# of, counted by running it (docs/architecture.md, "One read, file by file").
#
#   scripts/read-path.sh [REV]      (default HEAD; e.g. bf8636c, the tree
#                                    before the split)
#
# Needs what scripts/setup.sh installs, plus llvm-addr2line (Debian package
# llvm: `ZKR_EXTRA_PACKAGES=llvm scripts/setup.sh`); installs nothing itself.
#
# 1. `git worktree add --detach` of REV under ${TMPDIR:-/tmp}, built with
#    CFLAGS='-g -O0 -finstrument-functions' (autoreconf -fi, configure -q
#    [ZKR_CONFIGURE_FLAGS], make -j2 libzkroute.la: the library only).
# 2. scripts/read-path/readprog.c and instr.c (this tree's) compiled
#    against that build, without instrumentation.  instr.c's
#    __cyg_profile_func_enter records (thread, function address) while a
#    flag is set.
# 3. A real 3-node ensemble from this tree's tests/harness/ensemble.sh on
#    ${ZKR_TEST_NET:-127.0.34}.1-3 (port ${ZKR_TEST_PORT:-2181}), stopped by
#    its own `stop` in the EXIT trap.
# 4. The program: zkr_init, the leader known (zkr_stats), 3 s, zkr_create of
#    /zkr-read-path, one warm-up zkr_get; an idle 50 ms window recorded, then
#    ONE blocking zkr_get and the 50 ms after it.
# 5. The addresses turned into functions and source files with
#    llvm-addr2line (GNU addr2line 2.40 names the including .c file for
#    static inline functions of headers, which would hide internal.h and
#    base.h).  Kept: the caller's thread and every thread that ran library
#    code during the read but not during the idle window (libzookeeper_mt's
#    completion thread; the hedger); left out, with the functions it ran
#    during the read that it did not run in the idle window (normally
#    none): each thread that ran library code in the idle window too (the
#    monitor).  A table: per thread and in total, the library files (those
#    under zkroute/), functions and calls.  The hedger thread's row depends
#    on the read's latency (printed): under the hedge delay (at least
#    hedge_floor_ms, 5 by default) it only computes the deadline
#    (zkr__now_ns); over it, it runs the hedge decision too (policy.c,
#    member.c, op.c, hedge.c: more functions and calls; in the runs so far
#    no file the other two threads did not run too).
# 6. The worktree and every temporary file removed (EXIT trap).
#
# Environment: LLVM_ADDR2LINE (default llvm-addr2line), CC (default cc),
# ZKR_CONFIGURE_FLAGS (e.g. --with-zookeeper=DIR), ZKR_TEST_NET,
# ZKR_TEST_PORT, TMPDIR; READ_PATH_SAVE=DIR keeps the two dumps (read.txt,
# idle.txt: "SEQ TID OBJECT OFFSET"), the address map (map.txt) and the
# logs there.  Exit status: 0, or 1 with one line saying what
# failed (the build's or the program's log tail on stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
rev=${1:-HEAD}
addr2line=${LLVM_ADDR2LINE:-llvm-addr2line}
cflags='-g -O0 -finstrument-functions'

die() {
	echo "read-path: $*" >&2
	exit 1
}
command -v "$addr2line" >/dev/null || die "$addr2line not found (Debian package llvm)"
commit=$(git rev-parse --verify -q "$rev^{commit}") || die "$rev: not a revision"
short=$(git rev-parse --short "$commit")

work=$(mktemp -d "${TMPDIR:-/tmp}/read-path.XXXXXX")
tree=$work/tree ens=$work/ensemble
tree_added=0 ens_started=0
cleanup() {
	local rc=$?
	if [ "$ens_started" = 1 ]; then
		bash "$top/tests/harness/ensemble.sh" stop "$ens" >/dev/null 2>&1 ||
			echo "read-path: ensemble.sh stop $ens failed" >&2
	fi
	if [ "$tree_added" = 1 ]; then
		git -C "$top" worktree remove --force "$tree" 2>/dev/null || git -C "$top" worktree prune
	fi
	if [ -n "${READ_PATH_SAVE:-}" ]; then
		mkdir -p "$READ_PATH_SAVE"
		cp -f "$work"/*.txt "$work"/*.log "$READ_PATH_SAVE"/ 2>/dev/null || true
	fi
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export ZKR_TEST_NET=${ZKR_TEST_NET:-127.0.34}
unset ZKR_TEST_ENSEMBLE ZKR_TEST_CONTAINERS # always an ensemble of its own

# 1. The instrumented library of REV.
echo "read-path: $rev ($short): building it with CFLAGS='$cflags' in $tree" >&2
tree_added=1
git -C "$top" worktree add --detach -q "$tree" "$commit"
# shellcheck disable=SC2086 # ZKR_CONFIGURE_FLAGS is a word list on purpose
if ! (cd "$tree" && autoreconf -fi && ./configure -q CFLAGS="$cflags" ${ZKR_CONFIGURE_FLAGS:-} &&
	make -j2 libzkroute.la) >"$work/build.log" 2>&1; then
	tail -n 30 "$work/build.log" >&2
	die "building $rev failed"
fi
lib=$tree/.libs/libzkroute.so
[ -f "$lib" ] || die "no $lib after the build"

# 2. The program, against that build.
mkvar() { sed -n "s/^$1 = //p" "$tree/Makefile"; }
zk_cppflags=$(mkvar ZK_CPPFLAGS) zk_ldflags=$(mkvar ZK_LDFLAGS) zk_libs=$(mkvar ZK_LIBS)
# shellcheck disable=SC2086 # the ZK_ flags are word lists
"${CC:-cc}" -std=gnu11 -g -O0 -Wall -Wextra -DTHREADED -I"$tree/include" $zk_cppflags \
	-o "$work/readprog" "$top/scripts/read-path/readprog.c" "$top/scripts/read-path/instr.c" \
	-L"$tree/.libs" -Wl,-rpath,"$tree/.libs" -lzkroute $zk_ldflags ${zk_libs:--lzookeeper_mt} \
	-ldl -pthread || die "compiling scripts/read-path/readprog.c against $rev failed"

# 3.-4. The ensemble and the run.
echo "read-path: starting a 3-node ensemble on $ZKR_TEST_NET.1-3 (tests/harness/ensemble.sh)" >&2
ens_started=1
hosts=$(bash "$top/tests/harness/ensemble.sh" start "$ens" 2>"$work/ensemble.log") || {
	tail -n 20 "$work/ensemble.log" >&2
	die "ensemble.sh start failed"
}
echo "read-path: running one zkr_get against $hosts" >&2
if ! "$work/readprog" "$hosts" /zkr-read-path "$work/read.txt" "$work/idle.txt" \
	2>"$work/readprog.log"; then
	cat "$work/readprog.log" >&2
	die "the program failed"
fi
bash "$top/tests/harness/ensemble.sh" stop "$ens" >/dev/null 2>&1 && ens_started=0

# 5. Addresses -> function, source file (one llvm-addr2line run per object).
objs=$(awk '!/^#/ { print $3 }' "$work/read.txt" "$work/idle.txt" | sort -u)
: >"$work/map.txt"
for obj in $objs; do
	[ -f "$obj" ] || continue
	awk -v o="$obj" '!/^#/ && $3 == o { print $4 }' "$work/read.txt" "$work/idle.txt" |
		sort -u >"$work/offs.txt"
	# shellcheck disable=SC2046 # one argument per offset
	"$addr2line" -f -e "$obj" $(cat "$work/offs.txt") | paste - - >"$work/names.txt"
	[ "$(wc -l <"$work/names.txt")" = "$(wc -l <"$work/offs.txt")" ] ||
		die "$addr2line: not one function per address in $obj"
	paste "$work/offs.txt" "$work/names.txt" | awk -F'\t' -v o="$obj" -v OFS='\t' '{
		src = $3; sub(/ \(discriminator [0-9]+\)$/, "", src); sub(/:[0-9?]+$/, "", src)
		print o, $1, $2, src }' >>"$work/map.txt"
done

echo "read-path: $rev ($short), one zkr_get: $(sed -n '1s/^# main_tid [0-9]* read 1 //p' "$work/read.txt")"
awk -F'\t' -v tree="$tree/" -v libdir="$tree/zkroute/" '
function isort(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
function short(src) {
	if (index(src, libdir) == 1) return substr(src, length(libdir) + 1)
	if (index(src, tree) == 1) return substr(src, length(tree) + 1)
	return src
}
FILENAME == ARGV[1] { fn[$1 " " $2] = $3; file[$1 " " $2] = short($4); lib[$1 " " $2] = index($4, libdir) == 1; next }
FNR == 1 && /^#/ { if (FILENAME == ARGV[3]) { split($0, h, " "); main = h[3] }; next }
{
	split($0, f, " "); key = f[3] " " f[4]; t = f[2]
	if (!(key in fn)) { unknown++; next }
	if (FILENAME == ARGV[2]) { idle[t] = 1; idlefn[t, fn[key] "@" file[key]] = 1; next }
	if (!(t in seen)) { seen[t] = 1; order[++nt] = t }
	id = fn[key] "@" file[key]
	calls[t]++
	if (!((t, id) in tfn)) { tfn[t, id] = 1; nfn[t]++; tfns[t, nfn[t]] = id }
	if (!lib[key]) { outside[t, file[key]] = 1; next }
	if (!((t, file[key]) in tfile)) { tfile[t, file[key]] = 1; nfile[t]++; tfiles[t, nfile[t]] = file[key] }
}
function row(t, kept,   role, names, extra, j) {
	role = t == main ? "caller" : (kept ? "woken by the read" : "left out: ran in the idle window")
	names = ""
	for (j = 1; j <= nfile[t]; j++) names = names (j > 1 ? " " : "") tfiles[t, j]
	if (!kept) {
		extra = ""
		for (j = 1; j <= nfn[t]; j++) if (!((t, tfns[t, j]) in idlefn)) extra = extra " " tfns[t, j]
		names = names (names == "" ? "" : "  ") "(functions not in its idle window:" (extra == "" ? " none" : extra) ")"
	}
	printf "%-8s %-32s %5d %9d %5d  %s\n", t, role, nfile[t], nfn[t], calls[t], names
}
END {
	printf "%-8s %-32s %5s %9s %5s  %s\n", "thread", "role", "files", "functions", "calls", "library files (zkroute/), in the order of their first call"
	for (i = 1; i <= nt; i++) {
		t = order[i]
		if (t != main && (t in idle)) continue
		row(t, 1)
		totcalls += calls[t]
		for (j = 1; j <= nfn[t]; j++) if (!(tfns[t, j] in allfn)) { allfn[tfns[t, j]] = 1; totfn++ }
		for (j = 1; j <= nfile[t]; j++) if (!(tfiles[t, j] in allfile)) { allfile[tfiles[t, j]] = 1; all[++totfile] = tfiles[t, j] }
		for (key in outside) { split(key, p, SUBSEP); if (p[1] == t) out[p[2]] = 1 }
	}
	isort(all, totfile)
	names = ""
	for (j = 1; j <= totfile; j++) names = names (j > 1 ? " " : "") all[j]
	nc = 0
	for (j = 1; j <= totfile; j++) if (all[j] ~ /\.c$/) nc++
	printf "%-41s %5d %9d %5d  %s\n", "total (caller and woken threads)", totfile, totfn, totcalls, names
	printf "%-41s %5s  %d .c, %d other\n", "", "", nc, totfile - nc
	for (i = 1; i <= nt; i++) if (order[i] != main && (order[i] in idle)) row(order[i], 0)
	for (o in out) printf "outside zkroute/, not counted: %s\n", o
	if (unknown) printf "records of no known object, not counted: %d\n", unknown
}' "$work/map.txt" "$work/idle.txt" "$work/read.txt"
sed -n 's/^readprog: \(member .*\|hedges_sent .*\)$/\1/p' "$work/readprog.log" | paste -sd';' - |
	sed 's/;/; /g; s/^/counters after the read: /'
awk 'NR == 1 && $11 + 0 >= 5 { print "read-path: the read took " $11 " ms, not under hedge_floor_ms (5 by default): the hedger thread ran the hedge decision too (without it: only the delay)" }' "$work/read.txt"
