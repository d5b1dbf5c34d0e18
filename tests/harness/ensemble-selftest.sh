#!/usr/bin/env bash
# tests/harness/ensemble-selftest.sh — check that tests/harness/ensemble.sh works here:
# start a 3-node ensemble in a temporary directory, check there is exactly one
# leader, SIGKILL it, wait for a new leader, restart the old one, check that
# all 3 members serve again (and that a paused follower stops answering and
# answers again after resume).  Then the same with --proxied: every link
# crosses the fault proxy, a delay on a member's links shows in its round
# trip and heals, a leader is elected again through the proxy, and stop
# stops the proxy too.  Then --cpu-quota: bad values and a missing cpu
# controller fail at once with nothing started; on a --reconfig ensemble
# each member's JVM, every thread of it, is in a cgroup of its own with
# the quota, and has not used more CPU than the quota allows since it
# started; restart and join put the new process in its cgroup again, and
# stop removes the cgroups.  Everything started is stopped on any exit.
#
# Exit status: 0 pass, 1 fail, 77 skip (ZKR_TEST_ENSEMBLE set: an external
# ensemble cannot be killed, so only the leader check runs).  Where
# `ensemble.sh cpu-quota-check` fails (no writable cgroup v1 cpu
# controller), the live quota checks are skipped with a message, unless
# ZKR_TEST_REQUIRE_CPU_QUOTA=1 makes that a failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ens=$here/ensemble.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-selftest.XXXXXX")
pdir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-selftest-proxied.XXXXXX")
qdir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-selftest-quota.XXXXXX")

cleanup() {
	local rc=$?
	"$ens" stop "$dir" || rc=1
	"$ens" stop "$pdir" || rc=1
	"$ens" stop "$qdir" || rc=1
	if ((rc != 0 && rc != 77)); then
		for f in "$dir"/zk*/server.log "$pdir"/zk*/server.log "$pdir"/faultproxy.log "$qdir"/zk*/server.log; do
			[[ -s $f ]] || continue
			echo "--- tail of $f" >&2
			tail -n 20 "$f" >&2
		done
	fi
	rm -rf "$dir" "$pdir" "$qdir"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
step() {
	local ds=$((($(date +%s%N) - t0) / 100000000))
	printf '[%3d.%ds] %s\n' $((ds / 10)) $((ds % 10)) "$*"
}
t0=$(date +%s%N)

# mode_of HOST:PORT -> leader/follower/... or empty
mode_of() {
	local r
	r=$("$ens" srvr "${1%:*}" "${1##*:}" 2>/dev/null) || return 0
	sed -n 's/^Mode: //p' <<<"$r"
}

# check_modes HOSTS: every member answers srvr, exactly one is leader.
check_modes() {
	local -a hs
	local h m leaders=0 n=0 summary=''
	IFS=, read -r -a hs <<<"$1"
	for h in "${hs[@]}"; do
		m=$(mode_of "$h")
		summary+=" $h=${m:-down}"
		[[ -n $m ]] || fail "$h does not answer srvr (modes:$summary)"
		n=$((n + 1))
		[[ $m != leader ]] || leaders=$((leaders + 1))
	done
	((n == 3)) || fail "expected 3 members, got $n: $1"
	((leaders == 1)) || fail "expected exactly one leader, got $leaders (modes:$summary)"
	step "modes:$summary"
}

hosts=$("$ens" start "$dir")
step "started: $hosts"
[[ $hosts == "$("$ens" hosts "$dir")" ]] || fail "hosts disagrees with start"
check_modes "$hosts"

leader=$("$ens" leader "$dir")
[[ $leader =~ ^[1-3]$ ]] || fail "leader printed '$leader'"
step "leader is member $leader"

if [[ -n ${ZKR_TEST_ENSEMBLE:-} ]]; then
	echo "SKIP: fault injection needs a local ensemble (ZKR_TEST_ENSEMBLE is set)"
	exit 77
fi

for i in 1 2 3; do
	pid=$("$ens" pid "$dir" "$i")
	[[ -d /proc/$pid ]] || fail "pid $pid of member $i is not running"
done

"$ens" kill "$dir" "$leader"
step "killed member $leader"
if "$ens" pid "$dir" "$leader" >/dev/null 2>&1; then
	fail "member $leader still running after kill"
fi
new=$("$ens" wait-leader "$dir")
[[ $new != "$leader" ]] || fail "old leader $leader still reported as leader"
step "new leader is member $new"

"$ens" restart "$dir" "$leader"
step "restarted member $leader"
check_modes "$hosts"
[[ $("$ens" leader "$dir") == "$new" ]] || fail "leadership moved after the restart"

# pause/resume a follower: it stops answering, the rest keeps a leader.
f=1
while [[ $f == "$new" ]]; do f=$((f + 1)); done
"$ens" pause "$dir" "$f"
[[ -z $(ZKR_TEST_SRVR_TIMEOUT=1 mode_of "$(cut -d, -f"$f" <<<"$hosts")") ]] ||
	fail "paused member $f still answers srvr"
[[ $("$ens" wait-leader "$dir") == "$new" ]] || fail "leader changed while a follower was paused"
"$ens" resume "$dir" "$f"
step "paused and resumed member $f"
end=$((SECONDS + 30))
until [[ -n $(mode_of "$(cut -d, -f"$f" <<<"$hosts")") ]]; do
	((SECONDS < end)) || fail "member $f does not serve after resume"
	sleep 0.1
done
check_modes "$hosts"

if "$ens" fault "$dir" list >/dev/null 2>&1; then
	fail "fault worked on an ensemble started without --proxied"
fi
"$ens" stop "$dir"
step "stopped"
for i in 1 2 3; do
	if "$ens" pid "$dir" "$i" >/dev/null 2>&1; then
		fail "member $i still running after stop"
	fi
done

# ---- proxied mode
# srvr_ms HOST:PORT: print how long one srvr takes, in ms (fails if none).
srvr_ms() {
	local t0=$EPOCHREALTIME
	"$ens" srvr "${1%:*}" "${1##*:}" >/dev/null || return 1
	local t1=$EPOCHREALTIME
	echo $(((${t1/./} - ${t0/./}) / 1000))
}
member_hp() { cut -d, -f"$2" <<<"$1"; }

phosts=$("$ens" start "$pdir" --proxied)
step "started proxied: $phosts"
[[ $phosts == "$hosts" ]] || fail "proxied connect string '$phosts' differs from '$hosts'"
check_modes "$phosts"
links=$("$ens" fault "$pdir" list)
[[ $links == "ok 15 "* ]] || fail "expected 15 links, got: $links"
pl=$("$ens" leader "$pdir")
pf=1
while [[ $pf == "$pl" ]]; do pf=$((pf + 1)); done
# The follower's quorum connection to the leader crosses the proxy.
"$ens" fault "$pdir" stats "q$pf$pl" | grep -q ' active=1 ' ||
	fail "no quorum connection from member $pf to leader $pl through link q$pf$pl"
[[ $("$ens" fault "$pdir" stats "m$pf" | grep -c '^ok ') == 9 ]] ||
	fail "group m$pf is not 9 links"
base=$(srvr_ms "$(member_hp "$phosts" "$pf")")
"$ens" slow "$pdir" "$pf" 150 0
slow=$(srvr_ms "$(member_hp "$phosts" "$pf")")
lead=$(srvr_ms "$(member_hp "$phosts" "$pl")")
"$ens" fault "$pdir" stats "c$pf" | grep -q 'delay_up_ms=150.000 .*delay_down_ms=150.000' ||
	fail "c$pf does not show the delay"
((slow >= 300)) || fail "srvr of member $pf took $slow ms at 150 ms each way"
((lead < 300)) || fail "srvr of the leader took $lead ms with only member $pf slow"
"$ens" heal "$pdir" "$pf"
healed=$(srvr_ms "$(member_hp "$phosts" "$pf")")
((healed < 300)) || fail "srvr of member $pf took $healed ms after heal"
step "srvr of member $pf: $base ms, $slow ms at 150 ms each way, $healed ms healed (leader: $lead ms)"
"$ens" delay-all "$pdir" 5 1
[[ $("$ens" fault "$pdir" stats all | grep -c 'delay_up_ms=5.000 jitter_up_ms=1.000') == 15 ]] ||
	fail "delay-all did not reach every link"
"$ens" heal "$pdir" all
[[ $("$ens" fault "$pdir" stats all | grep -c 'delay_up_ms=0.000 ') == 15 ]] ||
	fail "heal all left a delay"
"$ens" kill "$pdir" "$pl"
pnew=$("$ens" wait-leader "$pdir")
step "proxied: killed leader $pl, new leader $pnew"
"$ens" restart "$pdir" "$pl"
check_modes "$phosts"
fp_pid=$(<"$pdir/faultproxy.pid")
"$ens" stop "$pdir"
step "stopped proxied"
for i in 1 2 3; do
	if "$ens" pid "$pdir" "$i" >/dev/null 2>&1; then
		fail "proxied member $i still running after stop"
	fi
done
if read -r st 2>/dev/null <"/proc/$fp_pid/stat" && [[ ${st##*) } != [ZX]* ]]; then
	fail "faultproxy (pid $fp_pid) still running after stop"
fi

# ---- --cpu-quota
# Bad input: a clear error at once, nothing started.
expect_refused() { # expect_refused WHAT PATTERN CMD...: CMD fails, says PATTERN
	local what=$1 pat=$2 err
	shift 2
	if err=$("$@" 2>&1 >/dev/null); then
		fail "$what: start succeeded"
	fi
	[[ $err == *"$pat"* ]] || fail "$what: expected an error with '$pat', got: $err"
	for i in 1 2 3; do
		if "$ens" pid "$qdir" "$i" >/dev/null 2>&1; then
			fail "$what: member $i was started"
		fi
	done
}
expect_refused "--cpu-quota abc" "needs a number of cores" "$ens" start "$qdir" --cpu-quota abc
expect_refused "--cpu-quota 0" "needs a number of cores" "$ens" start "$qdir" --cpu-quota 0
expect_refused "--cpu-quota 0.001" "too small" "$ens" start "$qdir" --cpu-quota 0.001
expect_refused "no cpu controller" "not a cgroup v1 cpu controller" \
	env ZKR_TEST_CPU_CGROUP=/nonexistent "$ens" start "$qdir" --cpu-quota 0.5
if ZKR_TEST_CPU_CGROUP=/nonexistent "$ens" cpu-quota-check 2>/dev/null; then
	fail "cpu-quota-check passed without a cpu controller"
fi
step "--cpu-quota: bad values and a missing controller refused"

if ! why=$("$ens" cpu-quota-check 2>&1); then
	if [[ ${ZKR_TEST_REQUIRE_CPU_QUOTA:-0} == 1 ]]; then
		fail "cpu quota unavailable here: $why"
	fi
	echo "SKIP (cpu quota, live part): $why"
	echo "PASS"
	exit 0
fi

readonly QUOTA=0.5
clk_tck=$(getconf CLK_TCK)
# check_quota_member I: member I runs in its own cgroup with QUOTA x period
# as quota, every thread of it, and has used no more CPU since it started
# than the quota allows (plus one period's worth for the window's edges).
check_quota_member() {
	local i=$1 cg pid want period quota t n=0 got stat cpu_s up_s
	cg=$("$ens" cgroup "$qdir" "$i") || fail "no cgroup for member $i"
	[[ -d $cg ]] || fail "cgroup $cg of member $i does not exist"
	period=$(<"$cg/cpu.cfs_period_us")
	quota=$(<"$cg/cpu.cfs_quota_us")
	((quota == period * 5 / 10)) || fail "member $i: cpu.cfs_quota_us $quota, want $QUOTA x $period"
	pid=$("$ens" pid "$qdir" "$i")
	grep -qx "$pid" "$cg/cgroup.procs" || fail "member $i (pid $pid) is not in $cg/cgroup.procs"
	want=$(sed -n 's/^cgroup_proc=//p' "$qdir/ensemble.env")/zk$i
	for t in /proc/"$pid"/task/*; do
		got=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}cpu\(,[^:]*\)\{0,1\}://p' "$t/cgroup" 2>/dev/null) || continue
		[[ -n $got ]] || continue
		[[ $got == "$want" ]] || fail "member $i: thread ${t##*/} is in cpu cgroup '$got', want '$want'"
		n=$((n + 1))
	done
	((n >= 10)) || fail "member $i: only $n threads checked (a JVM has dozens)"
	read -r stat <"/proc/$pid/stat"
	stat=${stat##*) }
	read -r -a f <<<"$stat"
	# After "pid (comm) ": f[11] utime, f[12] stime, f[19] starttime (ticks).
	cpu_s=$(awk -v u="${f[11]}" -v s="${f[12]}" -v h="$clk_tck" 'BEGIN { print (u + s) / h }')
	read -r up_s _ </proc/uptime
	up_s=$(awk -v up="$up_s" -v st="${f[19]}" -v h="$clk_tck" 'BEGIN { print up - st / h }')
	awk -v c="$cpu_s" -v e="$up_s" -v q="$QUOTA" -v p="$period" \
		'BEGIN { exit !(c <= q * e + q * p / 1e6 + 0.02) }' ||
		fail "member $i used $cpu_s s of CPU in its first $up_s s: more than $QUOTA cores"
	step "member $i: pid $pid, $n threads in $want, quota $quota/$period us, $cpu_s s CPU in $up_s s ($(tr '\n' ' ' <"$cg/cpu.stat" | cut -d' ' -f1-6))"
}

qhosts=$("$ens" start "$qdir" --reconfig --cpu-quota "$QUOTA")
step "started with --cpu-quota $QUOTA: $qhosts"
grep -qx "cpu_quota=$QUOTA" "$qdir/ensemble.env" || fail "ensemble.env does not keep cpu_quota=$QUOTA"
cgroup=$(sed -n 's/^cgroup=//p' "$qdir/ensemble.env")
[[ -n $cgroup && -d $cgroup ]] || fail "ensemble.env names no existing cgroup: '$cgroup'"
for i in 1 2 3; do check_quota_member "$i"; done
qf=1
old=$("$ens" pid "$qdir" "$qf")
"$ens" kill "$qdir" "$qf"
"$ens" restart "$qdir" "$qf"
[[ $("$ens" pid "$qdir" "$qf") != "$old" ]] || fail "member $qf has its old pid after restart"
check_quota_member "$qf"
step "restart: member $qf back in its cgroup"
"$ens" join "$qdir" 4
check_quota_member 4
step "join: member 4 in its own cgroup"
"$ens" stop "$qdir"
[[ ! -e $cgroup ]] || fail "stop left the cgroup $cgroup"
step "stopped; cgroups removed"
echo "PASS"
