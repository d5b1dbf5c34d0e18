#!/usr/bin/env bash
# Integration test of the drop-in layers (docs/dropin.md) against the real
# ensemble of tests/integration/integration.sh (ZKR_TEST_HOSTS):
#  1. the interposer exports every function of libzookeeper_mt's API and
#     nothing else (no zkr_ symbol); zkroute-run's own behaviour (usage,
#     exit codes);
#  2. tests/integration/dropin_prog.c (plain zookeeper.h: sync and async calls,
#     watches, multi, ACLs, TTL creates, /zookeeper/config, watch removal,
#     the server-list calls) prints the same thing built plain, built with
#     <zkroute/compat.h>, under zkroute-run, under zkroute-run with
#     ZKROUTE=off, and with bad ZKROUTE_* values (each warned about once,
#     defaults used); ZKROUTE_STATS shows the writes on the leader's session
#     and the reads on the followers'; zoo_lock_auth/zoo_unlock_auth behave
#     as stock's (compat header and zkroute-run);
#  3. a scripted cli_mt session (zookeeper-bin) prints the same results with
#     and without zkroute, once timestamps, zxids and session ids are
#     normalised and watch events compared as a set;
#  4. load_gen (zookeeper-bin) under zkroute-run runs several
#     create/write/read/delete cycles without an "Invalid read", and the
#     servers' own srvr counters show the leader received the writes and
#     the followers the reads; with ZKROUTE=off everything goes to the one
#     server the stock client picked;
#  5. programs that run the event loop themselves (a stand-in importing
#     zookeeper_interest/process; a real libzookeeper_st client when
#     installed) are passed through, said in one line;
#  6. a program forking while its threads use the handle: no child hangs,
#     ZKROUTE_STATS's exit record comes from the parent alone;
#  7. one host name for the ensemble, its addresses changed under a
#     running handle (private /etc/hosts in a mount namespace);
#  8. zkroute-run: relative and spaced library paths, nested runs, static,
#     set-ID and capability programs refused in one line.
# Run by tests/integration/integration.sh; alone:
#   ZKR_TEST_HOSTS=h1:p,h2:p,h3:p top_builddir=. top_srcdir=. tests/integration/it_dropin.sh
set -uo pipefail
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
hosts=${ZKR_TEST_HOSTS:?ZKR_TEST_HOSTS is not set: run through tests/integration/integration.sh}
ensemble_sh=${ZKR_TEST_ENSEMBLE_SH:-$top_srcdir/tests/harness/ensemble.sh}
run=$top_builddir/zkroute-run
preload=$top_builddir/.libs/libzkroute_preload.so
zkbin=${ZKR_ZOOKEEPER_BIN:-/usr/lib/zookeeper/bin}
find_zk_prog() {
	if [ -x "$zkbin/$1" ]; then echo "$zkbin/$1"; else command -v "$1" || true; fi
}
cli=$(find_zk_prog cli_mt)
load_gen=$(find_zk_prog load_gen)
work=$(mktemp -d "${TMPDIR:-/tmp}/zkr-dropin.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Only our own variables: the caller's ZKROUTE_* would change the runs.
for v in $(env | sed -n 's/^\(ZKROUTE[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

failed=0
ok() { echo "ok - $*"; }
not_ok() {
	echo "not ok - $*"
	failed=$((failed + 1))
}
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}
show() { # show FILE: indented, for a failure's context
	sed -n '1,60s/^/    | /p' "$1" >&2
}

IFS=, read -r -a members <<<"${hosts%%/*}"
srvr() { # srvr I FIELD: a field of member I's (0-based) srvr reply
	local hp=${members[$1]}
	bash "$ensemble_sh" srvr "${hp%:*}" "${hp##*:}" 2>/dev/null |
		awk -v f="$2:" '$1 == f { print $2 }'
}
received() { srvr "$1" Received; }
leader_index() {
	for i in "${!members[@]}"; do
		[ "$(srvr "$i" Mode)" = leader ] && { echo "$i"; return; }
	done
	echo -1
}

# ---- 1. the interposer's symbols; the launcher ----

api_functions() {
	nm -D --defined-only "$1" | awk '$2 == "T" { print $3 }' |
		grep -E '^(zoo_|zookeeper_|is_unrecoverable$|zerror$)' | sort
}
zklib=$(ldd "$top_builddir/tests/integration/dropin_plain" | awk '/libzookeeper_mt/ { print $3 }')
if [ -r "$preload" ] && [ -n "$zklib" ]; then
	api_functions "$zklib" >"$work/zk.syms"
	api_functions "$preload" >"$work/pl.syms"
	check "interposer defines every zoo_*/zookeeper_* function of $(basename "$zklib") ($(wc -l <"$work/zk.syms"))" \
		diff "$work/zk.syms" "$work/pl.syms"
	check "interposer exports no zkr_ symbol" \
		bash -c "! nm -D --defined-only '$preload' | grep -q ' zkr_'"
	# Nothing else either: the other functions zookeeper.h declares (the
	# jute serializers, recordio, zoo_*_op_init's neighbours outside the
	# API list) are libzookeeper_mt's own.
	nm -D --defined-only "$preload" | awk '$2 == "T" { print $3 }' | sort >"$work/pl.all"
	check "interposer defines no other function ($(wc -l <"$work/pl.all") in all)" \
		diff "$work/pl.syms" "$work/pl.all"
else
	not_ok "interposer $preload or libzookeeper_mt not found"
fi
check "zkroute-run --help exits 0" bash -c "'$run' --help >/dev/null"
check "zkroute-run without a command exits 2" bash -c "'$run' 2>/dev/null; [ \$? -eq 2 ]"
check "zkroute-run passes the exit code on" bash -c "'$run' sh -c 'exit 7'; [ \$? -eq 7 ]"
check "zkroute-run preloads the interposer" bash -c "'$run' sh -c 'echo \$LD_PRELOAD' | grep -q libzkroute_preload.so"

# ---- 2. one program, five ways ----

prog() { # prog NAME ENV... -- COMMAND...: runs dropin_prog, stdout to NAME.out
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	timeout 120 env "${envs[@]}" "$@" "$hosts" "/zkr-dropin-$$-$name" ${prog_mode:-} \
		>"$work/$name.out" 2>"$work/$name.err"
	local rc=$?
	[ $rc -eq 0 ] || { echo "    $name exited with $rc" >&2; show "$work/$name.err"; }
	return $rc
}
plain=$top_builddir/tests/integration/dropin_plain
compat=$top_builddir/tests/integration/dropin_compat

check "dropin_prog plain runs" prog plain -- "$plain"
check "dropin_prog compat header runs" prog compat ZKROUTE_STATS="$work/compat.stats" ZKROUTE_VERBOSE=1 -- "$compat"
check "dropin_prog under zkroute-run runs" prog preload ZKROUTE_STATS="$work/preload.stats" ZKROUTE_VERBOSE=1 -- "$run" "$plain"
check "dropin_prog under zkroute-run, ZKROUTE=off, runs" prog off ZKROUTE=off ZKROUTE_STATS="$work/off.stats" ZKROUTE_VERBOSE=1 -- "$run" "$plain"
check "dropin_prog compat header, ZKROUTE=off, runs" prog compat-off ZKROUTE=off ZKROUTE_STATS="$work/compat-off.stats" ZKROUTE_VERBOSE=1 -- "$compat"
check "dropin_prog under zkroute-run with bad values runs" prog bad ZKROUTE_POLICY=bogus ZKROUTE_LEADER_POLL_MS=fast ZKROUTE_POLICEY=hybrid ZKROUTE_VERBOSE=1 -- "$run" "$plain"
for way in compat preload off compat-off bad; do
	check "dropin_prog output: $way identical to plain" diff -u "$work/plain.out" "$work/$way.out"
done
check "plain output has the expected shape (68+ lines, all watch events)" \
	bash -c "[ \$(wc -l <'$work/plain.out') -ge 68 ] && ! grep -q TIMEOUT '$work/plain.out'"

zkr_lines() { grep '^zkroute: ' "$1" || true; }
check "compat: routed, said once" bash -c "[ \"\$(grep -c '^zkroute: routing .*policy hybrid' '$work/compat.err')\" = 1 ]"
check "interposer: routed, said once" bash -c "[ \"\$(grep -c '^zkroute: routing .*policy hybrid' '$work/preload.err')\" = 1 ]"
check "ZKROUTE=off: passed through, said once, no stats" \
	bash -c "[ \"\$(grep -c '^zkroute: ' '$work/off.err')\" = 1 ] && grep -q 'not routing .*ZKROUTE=off' '$work/off.err' && [ ! -e '$work/off.stats' ]"
check "compat, ZKROUTE=off: passed through, said once, no stats" \
	bash -c "[ \"\$(grep -c '^zkroute: ' '$work/compat-off.err')\" = 1 ] && grep -q 'not routing .*ZKROUTE=off' '$work/compat-off.err' && [ ! -e '$work/compat-off.stats' ]"
# Only a real libzookeeper_mt handle gives back the log callback it was
# made with: compat with ZKROUTE=off answers as stock, compat routed does not.
prog_mode=identity
prog id-plain -- "$plain" && prog id-off ZKROUTE=off -- "$compat" && prog id-on -- "$compat" &&
	prog id-preload -- "$run" "$plain"
prog_mode=
check "compat, ZKROUTE=off: a real handle (gives its log callback back, as stock)" \
	bash -c "grep -q '^zoo_get_log_callback gives ours: yes' '$work/id-plain.out' && diff -u '$work/id-plain.out' '$work/id-off.out'"
check "compat, routed: not a real handle (the identity check tells the two apart)" \
	grep -q '^zoo_get_log_callback gives ours: no' "$work/id-on.out"
check "zkroute-run: the log callback of zookeeper_init2 is honoured (given back, as stock)" \
	diff -u "$work/id-plain.out" "$work/id-preload.out"
zkr_lines "$work/bad.err" >"$work/bad.zkr"
check "bad ZKROUTE_POLICY: one warning, default used" \
	bash -c "[ \"\$(grep -c 'ignoring ZKROUTE_POLICY=bogus.*using the default, hybrid' '$work/bad.zkr')\" = 1 ]"
check "bad ZKROUTE_LEADER_POLL_MS: one warning, default used" \
	bash -c "[ \"\$(grep -c 'ignoring ZKROUTE_LEADER_POLL_MS=fast.*using the default, 500' '$work/bad.zkr')\" = 1 ]"
check "misspelt ZKROUTE_POLICEY: one warning" \
	bash -c "[ \"\$(grep -c 'unknown variable ZKROUTE_POLICEY' '$work/bad.zkr')\" = 1 ]"
check "bad values: still routed with policy hybrid, nothing else said" \
	bash -c "grep -q 'routing .*policy hybrid' '$work/bad.zkr' && [ \$(wc -l <'$work/bad.zkr') = 4 ]"

# Where a routed handle once differed from a stock session: a
# watcher/context pair set N times (through exists and get) must fire once
# per change, and the callbacks of one handle must run one at a time.
prog_mode=quirks
prog quirks-plain -- "$plain" && prog quirks-preload -- "$run" "$plain"
prog_mode=
if diff -u "$work/quirks-plain.out" "$work/quirks-preload.out" >"$work/quirks.diff"; then
	ok "watch merging and serial callbacks as with the stock client"
else
	not_ok "watch merging and serial callbacks as with the stock client"
	sed -n 's/^+\([a-z].*\)/    | zkroute: \1/p; s/^-\([a-z].*\)/    | stock:   \1/p' "$work/quirks.diff"
fi

# zoo_lock_auth/zoo_unlock_auth (exported, declared in zk_adaptor.h only):
# the credential lock, held while another thread's zoo_add_auth waits for
# it, then released - the same lines stock prints, built with compat.h and
# under zkroute-run.
prog_mode=lockauth
prog lock-plain -- "$plain" && prog lock-compat -- "$compat" && prog lock-preload -- "$run" "$plain"
prog_mode=
check "zoo_lock_auth holds zoo_add_auth until zoo_unlock_auth (stock)" \
	grep -q '^zoo_add_auth from another thread, 0.5 s into the lock: waiting' "$work/lock-plain.out"
for way in compat preload; do
	check "zoo_lock_auth/zoo_unlock_auth: $way as stock" diff -u "$work/lock-plain.out" "$work/lock-$way.out"
done

# ZKROUTE_STATS: one JSON line per handle; per member: role, reads, writes.
stats_roles() { # FILE -> "role reads writes" per member
	sed -e 's/.*"members":\[//' -e 's/},{/\n/g' "$1" |
		sed -n 's/.*"role":"\([a-z-]*\)".*"reads":\([0-9]*\),"writes":\([0-9]*\),.*/\1 \2 \3/p'
}
# dropin_prog waits a second after connecting, so that every member session
# is up: the leader's session then holds the writes (all but the few that
# may go before the leader's session joined, DESIGN.md 2: the server
# forwards them), the followers' the reads.
stats_ok() { # FILE: one record, closed; writes on the leader, reads on followers
	[ -s "$1" ] && [ "$(wc -l <"$1")" = 1 ] && grep -q '"reason":"close"' "$1" || return 1
	stats_roles "$1" >"$1.roles"
	[ "$(wc -l <"$1.roles")" = "${#members[@]}" ] || return 1
	awk '$1 == "leader" { l++; if ($3 < 40) bad = 1 }
	     $1 == "follower" { f++; fr += $2; if ($3 > 5) bad = 1 }
	     END { exit !(l == 1 && f >= 2 && fr >= 30 && !bad) }' "$1.roles"
}
for way in compat preload; do
	if stats_ok "$work/$way.stats"; then
		ok "ZKROUTE_STATS ($way): writes on the leader's session, reads on the followers' ($(tr '\n' ';' <"$work/$way.stats.roles"))"
	else
		not_ok "ZKROUTE_STATS ($way): writes on the leader's session, reads on the followers'"
		show "$work/$way.stats"
	fi
done

# ---- 3. cli_mt, scripted ----

count() { grep -c -- "$1" "$2" 2>/dev/null || true; }
wait_count() { # wait_count PATTERN FILE N: until FILE has N lines matching
	local deadline=$((SECONDS + 15))
	while [ "$(count "$1" "$2")" -lt "$3" ]; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.05
	done
}
cli_session() { # cli_session OUT [ENV...]: the same commands, one at a time
	local out=$1
	shift
	local fifo=$work/cli.fifo p=/zkr-dropin-cli-$$
	rm -f "$fifo"
	mkfifo "$fifo"
	timeout 90 env "$@" "$cli" -h "$hosts" <"$fifo" >"$out" 2>&1 &
	local pid=$!
	exec 3>"$fifo"
	local good=1
	wait_count 'SESSION_EVENT state = CONNECTED_STATE' "$out" 1 || good=0
	# command, completions it prints (": rc = " or "Error "), watch events
	# it receives; "ext ..." runs in a second, stock cli_mt.  Each step
	# waits for all of them.  Watches are fired by the other client only,
	# and each by itself: a routed handle runs its callbacks on several
	# threads (docs/dropin.md, "known differences"), so an event and a
	# completion arriving together could print interleaved.
	local steps=(
		"create $p|1|0" "create $p/k|1|0" "get $p/k|1|0" "ext set $p/k v2|0|1"
		"set $p/k hello|1|0" "get $p/k|1|0" "ls $p|1|0" "create $p/k|1|0"
		"ext create $p/j|0|1" "ext delete $p/k|0|1" "ls2 $p|1|0"
		"ext create $p/x|0|1" "exists $p/k|1|0" "ext create $p/k|0|1"
		"sync $p|1|0" "get $p/k|1|0" "set $p/x x|1|0" "delete $p/x|1|0"
		"delete $p/j|1|0" "ext set $p/k v3|0|1" "delete $p/k|1|0"
		"delete $p|1|0" "get $p|1|0" "create2 $p|1|0" "delete $p|1|0"
	)
	local step cmd n w rc0 w0
	for step in "${steps[@]}"; do
		IFS='|' read -r cmd n w <<<"$step"
		rc0=$(count ': rc = \|^Error ' "$out")
		w0=$(count '^Watcher [A-Z]*_EVENT .* for path' "$out")
		if [ "${cmd#ext }" != "$cmd" ]; then
			timeout 30 "$cli" -h "$hosts" -c "${cmd#ext }" </dev/null >/dev/null 2>&1 ||
				{ good=0; echo "    external command failed: $cmd" >&2; }
		else
			echo "$cmd" >&3
		fi
		wait_count ': rc = \|^Error ' "$out" $((rc0 + n)) || { good=0; echo "    timeout after: $cmd" >&2; }
		wait_count '^Watcher [A-Z]*_EVENT .* for path' "$out" $((w0 + w)) ||
			{ good=0; echo "    no watch event after: $cmd" >&2; }
	done
	echo quit >&3
	exec 3>&-
	wait "$pid" || good=0
	rm -f "$fifo"
	[ $good = 1 ]
}
normalise() { # what must match: cli's lines, watch events apart and sorted
	sed -E -e '/ZOO_(DEBUG|INFO|WARN|ERROR)@/d' -e '/^zkroute: /d' \
		-e 's/time = -?[0-9]+ msec/time = N msec/' \
		-e 's/(ctime|mtime) ?= ?.*/\1 = T/' \
		-e 's/(czxid|mzxid)=[0-9a-f]+/\1=Z/' \
		-e 's/(ephemeralOwner = )[0-9a-f]+/\1E/' \
		-e 's/(session id: 0x)[0-9a-f]+/\1S/' "$1" >"$1.n"
	grep -v '^Watcher ' "$1.n" >"$1.main"
	grep '^Watcher ' "$1.n" | sort >"$1.events"
}
if [ -z "$cli" ]; then
	not_ok "cli_mt not found (install zookeeper-bin, or set ZKR_ZOOKEEPER_BIN)"
else
	check "cli_mt session, stock" cli_session "$work/cli-stock.out"
	check "cli_mt session, zkroute-run" cli_session "$work/cli-zkr.out" LD_PRELOAD="$preload" ZKROUTE_VERBOSE=1
	check "cli_mt under zkroute-run was routed" grep -q '^zkroute: routing' "$work/cli-zkr.out"
	normalise "$work/cli-stock.out"
	normalise "$work/cli-zkr.out"
	check "cli_mt prints the same results with and without zkroute ($(grep -c 'rc = ' "$work/cli-stock.out.main") completions)" \
		diff -u "$work/cli-stock.out.main" "$work/cli-zkr.out.main"
	check "cli_mt sees the same watch events with and without zkroute ($(wc -l <"$work/cli-stock.out.events"))" \
		diff -u "$work/cli-stock.out.events" "$work/cli-zkr.out.events"
	check "cli_mt got a real session id under zkroute" bash -c "! grep -q 'session id: 0x0\$' '$work/cli-zkr.out'"
fi

# ---- 4. load_gen ----

cycles() { count "Starting the delete cycle" "$1"; }
load_run() { # load_run NAME SECONDS [ENV...]: Received deltas in NAME.delta
	local name=$1 secs=$2
	shift 2
	local before=() i p=/zkr-dropin-load-$$-$name
	for i in "${!members[@]}"; do before[i]=$(received "$i"); done
	timeout "$secs" env "$@" "$load_gen" "$hosts" "$p" 200 >"$work/$name.out" 2>&1
	local rc=$?
	: >"$work/$name.delta"
	for i in "${!members[@]}"; do echo $(($(received "$i") - before[i])) >>"$work/$name.delta"; done
	"$load_gen" "$hosts" "$p" clean >/dev/null 2>&1
	[ $rc -eq 124 ] || { echo "    load_gen ($name) exited with $rc" >&2; show "$work/$name.out"; return 1; }
}
if [ -z "$load_gen" ]; then
	not_ok "load_gen not found (install zookeeper-bin, or set ZKR_ZOOKEEPER_BIN)"
else
	leader=$(leader_index)
	# One sync per read, so that the servers' counters below account for
	# every request exactly: with sync coalescing (on by default) reads
	# share syncs, and the followers receive fewer than two requests per
	# read (the check failed so on main at d6cac61).
	check "load_gen under zkroute-run runs until stopped" load_run zkr 10 LD_PRELOAD="$preload" ZKROUTE_VERBOSE=1 ZKROUTE_SYNC_COALESCE=off
	d=$(cycles "$work/zkr.out")
	c=$(count "Creating children" "$work/zkr.out")
	check "load_gen under zkroute-run was routed" grep -q '^zkroute: routing' "$work/zkr.out"
	check "load_gen under zkroute-run: $d complete cycles (>= 3)" test "$d" -ge 3
	check "load_gen under zkroute-run: no invalid or failed read" \
		bash -c "! grep -E 'Invalid read|Failed to' '$work/zkr.out'"
	# Per cycle of 200 nodes: 600 writes (create, set, delete) for the
	# leader, 200 reads = 400 requests (sync + get) for the followers.
	mapfile -t delta <"$work/zkr.delta"
	verdict=$(awk -v L="$leader" -v d="$d" -v c="$c" -v N=200 '
		{ v[NR - 1] = $1; if (NR - 1 != L) f += $1 }
		END {
			ok = L >= 0
			# The leader got the writes, and no reads: 3N per cycle started.
			# (The last delete cycle counted may not have finished.)
			if (v[L] < (3 * d - 1) * N || v[L] > 3 * N * c + N) ok = 0
			# The followers got the reads (sync + get), both of them.
			if (f < 2 * N * d * 0.95) ok = 0
			for (i in v) if (i != L && v[i] < 0.4 * 2 * N * d / (NR - 1)) ok = 0
			print ok ? "ok" : "bad"
		}' "$work/zkr.delta")
	check "srvr Received: leader (member $leader) got the writes, followers the reads ($(tr '\n' '/' <"$work/zkr.delta") for $d cycles)" \
		test "$verdict" = ok
	check "load_gen with ZKROUTE=off runs until stopped" load_run off 6 LD_PRELOAD="$preload" ZKROUTE=off
	d=$(cycles "$work/off.out")
	check "load_gen with ZKROUTE=off: $d cycles, no invalid read" \
		bash -c "[ '$d' -ge 3 ] && ! grep -E 'Invalid read|Failed to' '$work/off.out'"
	# The stock client, deterministic order: the first server gets it all.
	verdict=$(awk -v d="$d" '{ v[NR] = $1 } END {
		ok = v[1] >= 4 * 200 * (d - 1); for (i = 2; i <= NR; i++) if (v[i] > 200) ok = 0
		print ok ? "ok" : "bad" }' "$work/off.delta")
	check "srvr Received with ZKROUTE=off: everything on the first server, as stock ($(tr '\n' '/' <"$work/off.delta"))" \
		test "$verdict" = ok
fi

# ---- 5. programs that run the event loop themselves ----

# A routed handle's member sessions need libzookeeper_mt's I/O threads.  A
# program linked to libzookeeper_st, or one calling zookeeper_interest /
# zookeeper_process itself, is passed through whole, said in one line.
loop_prog() { # loop_prog NAME PROGRAM: plain and under zkroute-run
	local name=$1 bin=$2
	check "$name runs plain" prog "$name-plain" -- "$bin"
	check "$name runs under zkroute-run" prog "$name-zkr" ZKROUTE_STATS="$work/$name.stats" -- "$run" "$bin"
	check "$name: the same output under zkroute-run" diff -u "$work/$name-plain.out" "$work/$name-zkr.out"
	check "$name: exactly one zkroute line, saying why it is not routed" \
		bash -c "[ \"\$(grep -c '^zkroute: ' '$work/$name-zkr.err')\" = 1 ] && grep -q '^zkroute: not routing .*$3' '$work/$name-zkr.err'"
	check "$name: no handle was routed (no ZKROUTE_STATS record)" test ! -e "$work/$name.stats"
}
loop_prog evloop_standin "$top_builddir/tests/integration/evloop_standin" "calls zookeeper_interest/zookeeper_process"
check "evloop_standin: two handles, both passed through" grep -q "^handle 2: close ok" "$work/evloop_standin-zkr.out"
if [ -x "$top_builddir/tests/integration/st_prog" ]; then
	loop_prog st_prog "$top_builddir/tests/integration/st_prog" "libzookeeper_st"
	check "st_prog: its event loop ran the calls" grep -q "^adelete: ok" "$work/st_prog-zkr.out"
else
	echo "ok - # SKIP st_prog: libzookeeper_st is not installed (Debian: libzookeeper-st2); the stand-in covers the detection by imports"
fi

# ---- 6. fork ----

# fork_prog forks 10 children while two threads call zoo_state() on its
# handle; each child opens, uses and closes a handle of its own and
# exit()s; the parent exit()s with its handle open.  Under zkroute-run no
# child may hang (the interposer's locks are taken around fork), and
# ZKROUTE_STATS gets one close record per child and exactly one exit
# record, the parent's (a child's exit handler writes only its own
# handles).  The stock run is shown, not checked: a child forked while
# libzookeeper_mt's I/O thread is inside getaddrinfo() (it re-resolves on
# every turn of its loop) waits for ever on glibc's AI_ADDRCONFIG lock
# (docs/dropin.md, "fork").
fork_run() { # fork_run NAME ENV... -- COMMAND...
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	timeout 600 env "${envs[@]}" "$@" "$hosts" "/zkr-dropin-fork-$$-$name" 10 \
		>"$work/$name.out" 2>"$work/$name.err"
}
fork_run fork-plain -- "$top_builddir/tests/integration/fork_prog"
echo "# fork_prog, stock: $(sed -n 's/^children: //p' "$work/fork-plain.out") children finished"
check "fork_prog under zkroute-run: every child finished" \
	fork_run fork-zkr ZKROUTE_STATS="$work/fork.stats" -- "$run" "$top_builddir/tests/integration/fork_prog"
check "fork_prog under zkroute-run: children ran and the parent cleaned up" \
	bash -c "grep -q '^children: 10 of 10 ok' '$work/fork-zkr.out' && grep -q '^parent: children left ok 0' '$work/fork-zkr.out' && grep -q '^parent: delete base ok' '$work/fork-zkr.out'"
parent_pid=$(sed -n 's/^parent pid //p' "$work/fork-zkr.out")
fork_records() { # REASON: the pids of the records with that reason
	sed -n "s/.*\"pid\":\([0-9]*\),.*\"reason\":\"$1\".*/\1/p" "$work/fork.stats" 2>/dev/null
}
closers=$(fork_records close | sort -u)
check "ZKROUTE_STATS: one close record per child, none from the parent" \
	test "$(echo "$closers" | grep -c .)/$(echo "$closers" | grep -c -x "$parent_pid")" = 10/0
check "ZKROUTE_STATS: exactly one exit record, from the parent ($parent_pid)" \
	test "$(fork_records exit | tr '\n' ' ')" = "$parent_pid "

# ---- 7. one host name for the ensemble (docs/dropin.md, "Host names") ----

# The name is made to resolve to two, then three, then two other members'
# addresses by a private /etc/hosts: each run is in a mount namespace of
# its own with a test file bound over /etc/hosts (the machine's file is
# never touched).  Needs the members on one port; and root, or user
# namespaces for `unshare -r`.
dns_name=zkr-dropin-ensemble
dns_hosts=$work/etc-hosts
in_ns=
if unshare -m true 2>/dev/null; then in_ns="unshare -m"
elif unshare -r -m true 2>/dev/null; then in_ns="unshare -r -m"; fi
member_ip() { # member_ip I: the IPv4 address of member I
	local h=${members[$1]%:*}
	case $h in
	*[!0-9.]*) getent ahostsv4 "$h" | awk 'NR == 1 { print $1 }' ;;
	*) echo "$h" ;;
	esac
}
dns_port=${members[0]##*:}
same_port=1
for m in "${members[@]}"; do [ "${m##*:}" = "$dns_port" ] || same_port=0; done
set_name() { # set_name I...: the name resolves to members I... (0-based)
	local line="127.0.0.1 localhost" i
	for i in "$@"; do line="$line
$(member_ip "$i") $dns_name"; done
	printf '%s\n' "$line" >"$dns_hosts" # in place: the bind mount keeps the inode
}
# $work/ns_run COMMAND...: COMMAND with $dns_hosts as its /etc/hosts.
{
	echo '#!/bin/sh'
	echo "in_ns='$in_ns' hosts_file='$dns_hosts'"
	cat <<'EOF'
exec $in_ns sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$hosts_file" "$@"
EOF
} >"$work/ns_run"
chmod +x "$work/ns_run"
if [ -z "$in_ns" ] || [ $same_port = 0 ] || [ ${#members[@]} -lt 3 ]; then
	echo "ok - # SKIP host-name checks: $([ -z "$in_ns" ] && echo "no private mount namespace (unshare -m refused)" || echo "the members are not on one port")"
else
	ips=()
	for i in 0 1 2; do ips[i]=$(member_ip "$i"):$dns_port; done
	sorted() { printf '%s\n' "$@" | sort | paste -sd, -; }
	set_name 0 1
	fifo=$work/dns.fifo
	mkfifo "$fifo"
	timeout 120 "$work/ns_run" "$top_builddir/tests/integration/resolve_prog" "$dns_name:$dns_port" \
		<"$fifo" >"$work/dns.out" 2>"$work/dns.err" &
	dns_pid=$!
	exec 3>"$fifo"
	dns_step() { # dns_step COMMAND [EXPECTED]: the program's answer to COMMAND
		local n0
		n0=$(wc -l <"$work/dns.out")
		echo "$1" >&3
		local deadline=$((SECONDS + 30))
		while [ "$(wc -l <"$work/dns.out")" -le "$n0" ] && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
		local got
		got=$(sed -n "$((n0 + 1))p" "$work/dns.out")
		[ -z "$2" ] || [ "$got" = "$2" ] || { echo "    $1: got '$got', expected '$2'" >&2; show "$work/dns.err"; return 1; }
	}
	check "a name resolving to 2 members' addresses is 2 members" dns_step "members 2" "members: $(sorted "${ips[0]}" "${ips[1]}")"
	check "... and routes a write and a read" dns_step "rw /zkr-dropin-dns-$$" "rw: ok"
	set_name 0 1 2
	check "the name gains a 3rd address: a 3rd member within resolve_ms" dns_step "members 3" "members: $(sorted "${ips[@]}")"
	# Drop an address other than the one holding the handle's session.
	dns_step owner ""
	own=$(sed -n 's/^owner: //p' "$work/dns.out" | tail -n 1)
	drop=0
	[ "${ips[0]}" != "$own" ] || drop=1
	keep=()
	for i in 0 1 2; do [ $i = $drop ] || keep+=("$i"); done
	set_name "${keep[@]}"
	check "the name loses an address: that member is retired" dns_step "members 2" "members: $(sorted "${ips[keep[0]]}" "${ips[keep[1]]}")"
	check "... and the handle still routes a write and a read" dns_step "rw /zkr-dropin-dns-$$" "rw: ok"
	set_name 0 1 2
	check "the dropped address comes back: its member is live again" \
		dns_step "members 3" "members: $(sorted "${ips[@]}")"
	# The address holding the handle's session: its member is retired (no
	# reads, no leader writes) but keeps the session, and with it the
	# session-scoped writes, while its server serves it (docs/dropin.md).
	others=()
	for i in 0 1 2; do [ "${ips[i]}" = "$own" ] || others+=("$i"); done
	set_name "${others[@]}"
	check "the name loses the session's address: that member is retired" \
		dns_step "members 2" "members: $(sorted "${ips[others[0]]}" "${ips[others[1]]}")"
	check "... and the session is where it was" dns_step owner "owner: $own"
	check "... and the handle still routes a write and a read" dns_step "rw /zkr-dropin-dns-$$" "rw: ok"
	echo quit >&3
	exec 3>&-
	wait "$dns_pid"
	check "resolve_prog ended cleanly" test $? -eq 0
	# The interposer: a one-name connect string is routed to every address
	# (stock connects to one of them).
	set_name 0 1 2
	hosts_saved=$hosts
	hosts=$dns_name:$dns_port
	check "dropin_prog on the name, stock" prog dnsplain -- "$work/ns_run" "$plain"
	check "dropin_prog on the name, under zkroute-run" prog dnszkr ZKROUTE_VERBOSE=1 -- "$work/ns_run" "$run" "$plain"
	hosts=$hosts_saved
	check "... routed to the name's 3 addresses" grep -q "^zkroute: routing $dns_name:$dns_port: 3 members" "$work/dnszkr.err"
	check "... with the same output as stock" diff -u "$work/dnsplain.out" "$work/dnszkr.out"
fi

# ---- 8. zkroute-run: library paths, nesting, programs it cannot preload into ----

# tests/integration/preload_probe prints which library its zookeeper_init comes from
# and how many entries LD_PRELOAD has: the interposer was loaded, or not.
probe=$(cd "$top_builddir" && pwd)/tests/integration/preload_probe
routed_probe() { # routed_probe OUT ENTRIES: OUT shows the interposer, ENTRIES preloads
	grep -q '^zookeeper_init: libzkroute_preload.so$' "$1" && grep -q "^LD_PRELOAD entries: $2\$" "$1"
}
(cd "$top_builddir" && ZKROUTE_PRELOAD=.libs/libzkroute_preload.so ./zkroute-run sh -c "cd / && exec '$probe'") >"$work/rel.out" 2>&1
check "a relative ZKROUTE_PRELOAD still loads after the program changes directory" routed_probe "$work/rel.out" 1
odd="$work/dir with space:and colon"
mkdir -p "$odd" && cp "$preload" "$odd/"
# The link goes to a directory under $work, removed with it.
env -u XDG_RUNTIME_DIR TMPDIR="$work" ZKROUTE_PRELOAD="$odd/libzkroute_preload.so" "$run" "$probe" >"$work/odd.out" 2>&1
check "a ZKROUTE_PRELOAD with a space and a ':' loads (through a link)" routed_probe "$work/odd.out" 1
"$run" "$run" "$probe" >"$work/nested-probe.out" 2>&1
check "nested zkroute-run: the interposer once in LD_PRELOAD" routed_probe "$work/nested-probe.out" 1
LD_PRELOAD="$zklib" "$run" "$run" "$probe" >"$work/nested2.out" 2>&1
check "nested zkroute-run: a preload the caller had is kept, after it" routed_probe "$work/nested2.out" 2
check "nested zkroute-run: dropin_prog runs" prog nested ZKROUTE_VERBOSE=1 -- "$run" "$run" "$plain"
check "nested zkroute-run: same output as plain, routed once" \
	bash -c "diff -u '$work/plain.out' '$work/nested.out' >&2 && [ \"\$(grep -c '^zkroute: routing' '$work/nested.err')\" = 1 ]"

refused() { # refused REASON COMMAND...: exit 126 and one line with REASON
	local why=$1
	shift
	"$@" >"$work/refused.out" 2>"$work/refused.err"
	local rc=$?
	[ $rc = 126 ] && [ "$(wc -l <"$work/refused.err")" = 1 ] && grep -q "^zkroute-run: not running .*$why" "$work/refused.err" ||
		{ echo "    exit $rc" >&2; show "$work/refused.err"; return 1; }
}
check "zkroute-run refuses a static program, in one line" refused "statically linked" "$run" "$top_builddir/tests/integration/static_prog"
check "... and runs it with ZKROUTE=off" env ZKROUTE=off "$run" "$top_builddir/tests/integration/static_prog"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	# Copies of the probe in a directory the user nobody can read.
	sx=$(mktemp -d "${TMPDIR:-/tmp}/zkr-dropin-sx.XXXXXX")
	chmod 755 "$sx"
	cp "$probe" "$sx/suid" && chown nobody "$sx/suid" && chmod u+s "$sx/suid"
	cp "$probe" "$sx/sgid" && chgrp "$(id -gn nobody)" "$sx/sgid" && chmod g+s "$sx/sgid"
	for f in suid sgid; do
		LD_PRELOAD="$preload" "$sx/$f" >"$work/$f.out" 2>&1
		check "$f probe: the loader ignores LD_PRELOAD for it (what zkroute-run guards against)" \
			bash -c "! grep -q libzkroute_preload '$work/$f.out'"
	done
	check "zkroute-run refuses a set-user-ID program, in one line" refused "set-user-ID" "$run" "$sx/suid"
	check "zkroute-run refuses a set-group-ID program, in one line" refused "set-group-ID" "$run" "$sx/sgid"
	if command -v setcap >/dev/null && command -v setpriv >/dev/null &&
		cp "$probe" "$sx/cap" && setcap cap_net_bind_service+ep "$sx/cap" 2>/dev/null; then
		as_nobody() { setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups "$@"; }
		as_nobody env LD_PRELOAD="$preload" "$sx/cap" >"$work/cap.out" 2>&1
		check "capability probe: the loader ignores LD_PRELOAD for it (user nobody)" \
			bash -c "! grep -q libzkroute_preload '$work/cap.out'"
		check "zkroute-run refuses a program with file capabilities, in one line (user nobody)" \
			refused "file capabilities" as_nobody "$run" "$sx/cap"
	else
		echo "ok - # SKIP file capabilities: setcap or setpriv missing, or setcap refused"
	fi
	rm -rf "$sx"
else
	echo "ok - # SKIP set-ID and capability programs: needs root (to make them) and the user nobody"
fi

if [ $failed -gt 0 ]; then
	echo "it_dropin: $failed check(s) failed (work files kept in $work.kept)"
	cp -r "$work" "$work.kept" 2>/dev/null
	exit 1
fi
echo "it_dropin: all checks passed"
