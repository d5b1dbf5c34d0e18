#!/usr/bin/env bash
# Integration test of a lock recipe in the style of ZooKeeper's C lock
# recipe (tests/integration/lock_prog.c: node named after the session id, blocking calls
# from its watcher, an application mutex held across blocking calls) against
# the real ensemble of tests/integration/integration.sh (TAP output):
#  1. stock libzookeeper_mt, 4 handles, 10 s: the baseline;
#  2. built with <zkroute/compat.h>, 4 handles, 10 s, no fault;
#  3. unmodified under zkroute-run, 8 handles contending for 60 s
#     (ZKR_LOCK_SECONDS) while the harness kills the leader and restarts a
#     follower in the middle: the lock is never held twice, no waiter waits
#     more than 5 s outside the fault windows, no node is left behind.
#     With ZKR_IT_NO_PRELOAD=1 (the sanitizer builds: their runtime cannot
#     be preloaded into a program built without it) run 3 uses the compat
#     build instead, and says so.
# Each run prints lock_prog's summary line.  Alone:
#   ZKR_TEST_HOSTS=... ZKR_TEST_DIR=... top_builddir=. tests/integration/it_lock.sh
set -uo pipefail
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
hosts=${ZKR_TEST_HOSTS:?ZKR_TEST_HOSTS is not set: run through tests/integration/integration.sh}
dir=${ZKR_TEST_DIR:?ZKR_TEST_DIR is not set}
ensemble_sh=${ZKR_TEST_ENSEMBLE_SH:-$top_srcdir/tests/harness/ensemble.sh}
seconds=${ZKR_LOCK_SECONDS:-60}
for v in $(env | sed -n 's/^\(ZKROUTE[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
failed=0
n=0
result() { # result DESCRIPTION RC
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n - $1"; else echo "not ok $n - $1 (exit $2)"; failed=$((failed + 1)); fi
}
ens() { bash "$ensemble_sh" "$@"; }
base=/it/lock-$$

out=$("$top_builddir/tests/integration/lock_plain" "$hosts" 10 4 "$base-stock")
rc=$?
echo "# stock: $out"
result "lock recipe, stock libzookeeper_mt, 4 handles" $rc

out=$("$top_builddir/tests/integration/lock_compat" "$hosts" 10 4 "$base-compat")
rc=$?
echo "# compat: $out"
result "lock recipe, <zkroute/compat.h>, 4 handles" $rc

log=$(mktemp "${TMPDIR:-/tmp}/zkr-lock.XXXXXX")
how="under zkroute-run"
if [ "${ZKR_IT_NO_PRELOAD:-0}" = 1 ]; then
	how="built with <zkroute/compat.h> (ZKR_IT_NO_PRELOAD)"
	"$top_builddir/tests/integration/lock_compat" "$hosts" "$seconds" 8 "$base-run" >"$log" 2>&1 &
else
	"$top_builddir/zkroute-run" "$top_builddir/tests/integration/lock_plain" "$hosts" "$seconds" 8 "$base-run" >"$log" 2>&1 &
fi
pid=$!
fault() { kill -"$1" "$pid" 2>/dev/null || true; }
sleep $((seconds / 4))
leader=$(ens leader "$dir")
fault USR1
t0=$(date +%s%3N)
ens kill "$dir" "$leader" >/dev/null
ens wait-leader "$dir" >/dev/null
fault USR2
echo "# leader m$leader killed; new leader after $(($(date +%s%3N) - t0)) ms"
sleep 3
fault USR1
ens restart "$dir" "$leader" >/dev/null
fault USR2
echo "# m$leader restarted"
sleep $((seconds / 4))
leader=$(ens leader "$dir")
follower=$((leader % 3 + 1))
fault USR1
ens kill "$dir" "$follower" >/dev/null
ens restart "$dir" "$follower" >/dev/null
ens wait-leader "$dir" >/dev/null
fault USR2
echo "# follower m$follower restarted"
wait "$pid"
rc=$?
sed 's/^/# /' "$log" | grep -v ZOO_
rm -f "$log"
result "lock recipe $how, 8 handles, ${seconds} s, leader kill and follower restart" $rc
echo "1..$n"
exit $((failed > 0))
