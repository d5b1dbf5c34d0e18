#!/usr/bin/env bash
# tests/ensemble-selftest.sh — check that tests/ensemble.sh works here:
# start a 3-node ensemble in a temporary directory, check there is exactly one
# leader, SIGKILL it, wait for a new leader, restart the old one, check that
# all 3 members serve again (and that a paused follower stops answering and
# answers again after resume).  Everything started is stopped on any exit.
#
# Exit status: 0 pass, 1 fail, 77 skip (ZKR_TEST_ENSEMBLE set: an external
# ensemble cannot be killed, so only the leader check runs).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ens=$here/ensemble.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-selftest.XXXXXX")

cleanup() {
	local rc=$?
	"$ens" stop "$dir" || rc=1
	if ((rc != 0 && rc != 77)); then
		for f in "$dir"/zk*/server.log; do
			[[ -s $f ]] || continue
			echo "--- tail of $f" >&2
			tail -n 20 "$f" >&2
		done
	fi
	rm -rf "$dir"
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

"$ens" stop "$dir"
step "stopped"
for i in 1 2 3; do
	if "$ens" pid "$dir" "$i" >/dev/null 2>&1; then
		fail "member $i still running after stop"
	fi
done
echo "PASS"
