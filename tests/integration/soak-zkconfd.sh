#!/usr/bin/env bash
# Soak test of examples/zkconfd (docs/examples.md), TAP output.  For each
# variant (ZKR_SOAK_VARIANTS: stock = linked to libzookeeper_mt, compat =
# built with <zkroute/compat.h>, run = the stock build under zkroute-run):
# 5 daemons mirror a tree of 200 znodes (10 groups) while one writer
# (tests/integration/zkconfd_soak, stock) sets random nodes, ZKR_SOAK_RATE a second for
# ZKR_SOAK_SECONDS, and the harness, one after the other:
#   10 %  kills the leader, restarts it 3 s after the new leader is elected;
#   25 %  delays a follower by 8 ms +- 2 ms on every link (to the end);
#   35 %  cuts daemon 5 from the leader (blackhole on its own proxy link to
#         the leader: it reaches the servers through links of its own) and,
#         in the same window, daemon 4 from every server (links of its own
#         too; its session timeout is 6 s, so its session expires), for
#         max(12 s, 8 %);
#   65 %  restarts the other follower.
# Then the writer's last burst (5 deletes, a new group of 5, a file that
# becomes a directory).  Pass:
#   - every daemon's directory equals the final tree within 2 s of the last
#     write (zkconfd_soak write);
#   - no daemon wrote a file content older than one it had written for that
#     node (each value carries the node's version counter), and none read a
#     value older than one it had applied (zkconfd's "stale" line);
#   - every daemon's registration node exists at the end, owned by its
#     current session;
#   - the lock was never held twice (acquired/released, CLOCK_MONOTONIC);
#   - SIGTERM: each daemon exits 0, having closed its handle (its
#     registration node is gone at once, not after the session timeout).
# It prints the time each daemon took to see each change, P50/P99.
#
# Against the ensemble of tests/integration/integration.sh (ZKR_TEST_HOSTS, ZKR_TEST_DIR;
# the short run in make check: 40 s, variant run, or compat with
# ZKR_IT_NO_PRELOAD=1), or alone, when it starts a proxied ensemble of its
# own on ZKR_TEST_NET (`make soak`: 300 s, all three variants).
# ZKR_SOAK_KEEP=1 keeps the logs (their directory is printed), and the
# servers' logs of an ensemble the test started itself.
set -uo pipefail
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
ensemble_sh=${ZKR_TEST_ENSEMBLE_SH:-$top_srcdir/tests/harness/ensemble.sh}
seconds=${ZKR_SOAK_SECONDS:-40}
rate=${ZKR_SOAK_RATE:-50}
nodes=200
if [ "${ZKR_IT_NO_PRELOAD:-0}" = 1 ]; then variants=${ZKR_SOAK_VARIANTS:-compat}; else variants=${ZKR_SOAK_VARIANTS:-run}; fi
soak=$top_builddir/tests/integration/zkconfd_soak
for v in $(env | sed -n 's/^\(ZKROUTE[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
ens() { bash "$ensemble_sh" "$@"; }
if [ -n "${ZKR_TEST_ENSEMBLE:-}" ]; then
	echo "1..0 # SKIP the soak test injects faults: not with ZKR_TEST_ENSEMBLE"
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/zkr-soak.XXXXXX")
own_dir=
daemons=()
links=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local p
	for p in "${daemons[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	if [ -n "${ZKR_TEST_DIR:-}" ] && [ -e "$ZKR_TEST_DIR/ensemble.env" ]; then
		for p in "${links[@]}"; do ens fault "$ZKR_TEST_DIR" del "$p" >/dev/null 2>&1 || true; done
		ens heal "$ZKR_TEST_DIR" all >/dev/null 2>&1 || true
	fi
	[ -z "$own_dir" ] || ens stop "$own_dir" >/dev/null 2>&1 || true
	if [ "${ZKR_SOAK_KEEP:-0}" = 1 ]; then echo "# logs kept in $work"; else rm -rf "$work"; fi
	[ -z "$own_dir" ] || [ "${ZKR_SOAK_KEEP:-0}" = 1 ] || rm -rf "$own_dir"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
if [ -z "${ZKR_TEST_HOSTS:-}" ]; then
	own_dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-soak-ens.XXXXXX")
	export FAULTPROXY=${FAULTPROXY:-$top_builddir/tests/harness/faultproxy}
	ZKR_TEST_HOSTS=$(ens start "$own_dir" --proxied) || exit 1
	ZKR_TEST_DIR=$own_dir
	echo "# ensemble $ZKR_TEST_HOSTS (dir $own_dir, proxied)"
fi
hosts=$ZKR_TEST_HOSTS
dir=$ZKR_TEST_DIR
net=$(sed -n 's/^net=//p' "$dir/ensemble.env")
port=$(sed -n 's/^port=//p' "$dir/ensemble.env")
if [ "$(sed -n 's/^mode=//p' "$dir/ensemble.env")" != proxied ]; then
	echo "1..0 # SKIP the soak test needs a proxied ensemble"
	exit 77
fi
# Daemons 4 and 5 reach member I through links of their own, z4cI and
# z5cI, so that they alone can be cut off.
hosts4='' hosts5=''
for i in 1 2 3; do
	for d in 4 5; do
		ens fault "$dir" add "z${d}c$i" "$net.$i:$((port + 296 + d))" "$net.$i:$((port + 10000))" >/dev/null || exit 1
		links+=("z${d}c$i")
	done
	hosts4+=${hosts4:+,}$net.$i:$((port + 300))
	hosts5+=${hosts5:+,}$net.$i:$((port + 301))
done

n=0 failed=0
result() { # result DESCRIPTION RC
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; failed=$((failed + 1)); fi
}
at() { # at SECOND: sleep until SECOND of the run (never back in time)
	local now
	now=$(($(date +%s%3N) - t_start))
	[ "$now" -ge $(($1 * 1000)) ] || sleep "$(((($1 * 1000) - now) / 1000)).$(printf '%03d' $(((($1 * 1000) - now) % 1000)))"
}
msg() { echo "# [$((($(date +%s%3N) - t_start) / 1000)) s] $*"; }
others() { # others EXCLUDED...: the members 1..3 not named
	local i x skip
	for i in 1 2 3; do
		skip=0
		for x in "$@"; do [ "$i" != "$x" ] || skip=1; done
		[ "$skip" = 1 ] || echo "$i"
	done
}

stop_daemons() { # after a failed start: TERM, then KILL after 20 s
	local p
	for p in "${daemons[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${daemons[@]}"; do
		for _ in $(seq 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	daemons=()
}

run_variant() {
	local variant=$1 cmd base w i p rc t_start
	case $variant in
	stock) cmd=("$top_builddir/examples/zkconfd") ;;
	compat) cmd=("$top_builddir/examples/zkconfd-compat") ;;
	run) cmd=("$top_builddir/zkroute-run" "$top_builddir/examples/zkconfd") ;;
	*) echo "# unknown variant $variant"; return 1 ;;
	esac
	base=/soak/zkconfd-$$-$variant
	w=$work/$variant
	mkdir -p "$w"
	"$soak" init "$hosts" "$base/tree" "$nodes" || { result "$variant: init" 1; return; }
	daemons=()
	for i in 1 2 3 4 5; do
		mkdir -p "$w/d$i"
		h=$hosts t=10000
		[ "$i" != 4 ] || h=$hosts4 t=6000
		[ "$i" != 5 ] || h=$hosts5
		# -d 3: ZooKeeper's INFO level, so d$i.err has zkroute's state
		# changes and each session's close ("Closing zookeeper sessionId").
		"${cmd[@]}" -d 3 -n "d$i" -r "$base/members" -l "$base/lock" -x "sleep 0.05" -i 250 -t "$t" \
			-L "$w/d$i.log" "$h" "$base/tree" "$w/d$i" 2>"$w/d$i.err" &
		daemons+=("$!")
	done
	for i in 1 2 3 4 5; do
		for _ in $(seq 300); do grep -q 'resync done' "$w/d$i.log" 2>/dev/null && break; sleep 0.1; done
		grep -q 'resync done' "$w/d$i.log" || {
			echo "# d$i did not sync in 30 s"
			stop_daemons
			result "$variant: start" 1
			return
		}
	done
	local load
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	t_start=$(date +%s%3N)
	"$soak" write "$hosts" "$base/tree" "$nodes" "$seconds" "$rate" "$w/writer.log" \
		"$w/d1" "$w/d2" "$w/d3" "$w/d4" "$w/d5" >"$w/writer.out" 2>&1 &
	local writer=$! leader slow other cut_s
	at $((seconds * 10 / 100))
	leader=$(ens wait-leader "$dir")
	ens kill "$dir" "$leader" >/dev/null
	msg "leader m$leader killed; new leader m$(ens wait-leader "$dir")"
	sleep 3
	ens restart "$dir" "$leader" >/dev/null
	msg "m$leader restarted"
	at $((seconds * 25 / 100))
	leader=$(ens wait-leader "$dir")
	slow=$(others "$leader" | head -n 1)
	ens slow "$dir" "$slow" 8 2
	msg "follower m$slow delayed 8 ms +- 2 ms (to the end)"
	at $((seconds * 35 / 100))
	cut_s=$((seconds * 8 / 100))
	[ "$cut_s" -ge 12 ] || cut_s=12
	leader=$(ens wait-leader "$dir")
	ens fault "$dir" blackhole "z5c$leader" on >/dev/null
	for i in 1 2 3; do ens fault "$dir" blackhole "z4c$i" on >/dev/null; done
	msg "d5 cut from the leader m$leader, d4 from every server, for $cut_s s"
	sleep "$cut_s"
	ens fault "$dir" blackhole "z5c$leader" off >/dev/null
	for i in 1 2 3; do ens fault "$dir" blackhole "z4c$i" off >/dev/null; done
	msg "d5 reaches m$leader again, d4 every server"
	at $((seconds * 65 / 100))
	leader=$(ens wait-leader "$dir")
	other=$(others "$leader" "$slow")
	ens kill "$dir" "$other" >/dev/null
	ens restart "$dir" "$other" >/dev/null
	msg "follower m$other restarted"
	wait "$writer"
	rc=$?
	grep -v ZOO_ "$w/writer.out" | sed 's/^/# /'
	echo "# writer: $(grep -c ZOO_ "$w/writer.out") lines of libzookeeper log (in writer.out)"
	result "$variant: every directory equals the final tree within 2 s of the last write" $rc
	"$soak" owners "$hosts" "$base/members" >"$w/owners.txt"
	# SIGTERM: each exits 0, having closed its handle.
	rc=0
	for i in 1 2 3 4 5; do kill -TERM "${daemons[i - 1]}"; done
	for i in 1 2 3 4 5; do
		p=${daemons[i - 1]}
		for _ in $(seq 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$p" 2>/dev/null; then
			echo "# d$i still running 20 s after SIGTERM"
			kill -KILL "$p"
			rc=1
		fi
		st=0
		wait "$p" || st=$?
		if [ "$st" -ne 0 ]; then
			# What the daemon said last (a sanitizer's report goes to its
			# stderr): the logs are removed after the run unless ZKR_SOAK_KEEP=1.
			echo "# d$i exit status $st; the end of d$i.err and d$i.log:"
			tail -n 60 "$w/d$i.err" 2>/dev/null | sed 's/^/#   err: /'
			tail -n 15 "$w/d$i.log" 2>/dev/null | sed 's/^/#   log: /'
			rc=1
		fi
		grep -q ' exit close=ZOK\| exit close=ok' "$w/d$i.log" || { echo "# d$i: no clean exit in its log"; rc=1; }
	done
	daemons=()
	local left=
	for _ in $(seq 20); do
		left=$("$soak" owners "$hosts" "$base/members")
		[ -n "$left" ] || break
		sleep 0.1
	done
	if [ -n "$left" ]; then
		echo "# registration nodes left 2 s after the daemons exited:"
		while IFS= read -r l; do echo "#   $l"; done <<<"$left"
		# The work dir goes with the test: what the daemon that left its
		# node said last (its states and its close), and the library's
		# state-change lines, for the one who reads this in a CI log.
		for i in 1 2 3 4 5; do
			grep -q " d$i\$" <<<"$left" || continue
			echo "# d$i.log, last lines:"
			grep -v ZOO_ "$w/d$i.log" | tail -n 15 | sed 's/^/#   /'
			echo "# d$i.err, the library's last state changes and its sessions' closes:"
			grep -a 'event=\|zookeeper_close@' "$w/d$i.err" | tail -n 15 | sed 's/^/#   /'
		done
		rc=1
	fi
	result "$variant: SIGTERM: every daemon closed its handle and exited 0" $rc
	"$soak" analyze "$w/writer.log" "$w/owners.txt" "$w"/d[1-5].log >"$w/analyze.out"
	rc=$?
	sed "s|$w/||g; s/^/# /" "$w/analyze.out"
	grep -h 'state \|handle re-created\|resync start' "$w"/d[1-5].log | cut -d' ' -f3- | sort | uniq -c | sed 's/^/#   /'
	echo "# load average at the start: $load"
	result "$variant: no older content, no stale read, registrations owned, lock never held twice" $rc
	ens heal "$dir" all >/dev/null
	for i in 1 2 3; do
		ens pid "$dir" "$i" >/dev/null 2>&1 || ens restart "$dir" "$i" >/dev/null
	done
	ens wait-leader "$dir" >/dev/null
}

for variant in $variants; do
	echo "# === $variant: 5 daemons, $nodes znodes, $seconds s at $rate sets/s"
	t0=$(date +%s)
	run_variant "$variant"
	echo "# === $variant took $(($(date +%s) - t0)) s"
done
echo "1..$n"
exit $((failed > 0))
