#!/usr/bin/env bash
# Integration test of the metrics endpoint with a real Prometheus (Debian's
# prometheus 2.42; docs/operations.md), against the ensemble of
# tests/integration/integration.sh (TAP output).  A plain libzookeeper_mt
# program (tests/integration/metrics_load: paced reads and writes that it
# counts itself) runs unmodified under zkroute-run with ZKROUTE_METRICS;
# a Prometheus server on loopback scrapes it every second, and its HTTP
# API (through `promtool query instant`) must show:
#  1. the server scrapes the endpoint (up == 1);
#  2. the series: every member's reads, the latency histograms, the pool,
#     the virtual session connected, leader changes;
#  3. the scraped text passes `promtool check metrics`;
#  4. sum(rate(zkroute_reads_total[20s])) within 5 % of the program's own
#     count over the same 20 seconds;
#  5. `zkroute top --metrics URL` (not a terminal: one line a second) shows
#     the reads;
#  6. after the leader is killed, zkroute_leader_changes_total >= 1, and
#     the program's ZooKeeper log (stderr) has the event=leader_change line.
# The killed member is restarted before the end.  Skips (77) when
# Prometheus is not installed (scripts/setup.sh installs it) or when the
# interposer cannot be preloaded (ZKR_IT_NO_PRELOAD: sanitizer builds).
# Alone:
#   ZKR_TEST_HOSTS=... ZKR_TEST_DIR=... top_builddir=. tests/integration/it_prometheus.sh
set -uo pipefail
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
hosts=${ZKR_TEST_HOSTS:?ZKR_TEST_HOSTS is not set: run through tests/integration/integration.sh}
dir=${ZKR_TEST_DIR:?ZKR_TEST_DIR is not set}
ensemble_sh=${ZKR_TEST_ENSEMBLE_SH:-$top_srcdir/tests/harness/ensemble.sh}
for v in $(env | sed -n 's/^\(ZKROUTE[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
	echo "1..0 # SKIP prometheus/promtool not installed (Debian package prometheus)"
	exit 77
fi
if [ "${ZKR_IT_NO_PRELOAD:-0}" = 1 ]; then
	echo "1..0 # SKIP ZKR_IT_NO_PRELOAD: the interposer cannot be preloaded here"
	exit 77
fi
# Addresses of their own on the ensemble's loopback network: .200.
net=${ZKR_TEST_NET:-127.0.0}
addr=$net.200
metrics=$addr:${ZKR_IT_METRICS_PORT:-19464}
api=http://$addr:${ZKR_IT_PROMETHEUS_PORT:-19090}
seconds=${ZKR_IT_PROMETHEUS_SECONDS:-90} # at most: it is stopped after test 6
rate=200

echo "1..6"
failed=0
n=0
result() { # result DESCRIPTION RC [DETAIL]
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n - $1"; else
		echo "not ok $n - $1"
		failed=$((failed + 1))
	fi
	[ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/# /'
}
ens() { bash "$ensemble_sh" "$@"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/zkr-prom.XXXXXX")
prom_pid='' load_pid='' killed=''
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	[ -z "$load_pid" ] || kill "$load_pid" 2>/dev/null
	[ -z "$prom_pid" ] || kill "$prom_pid" 2>/dev/null
	wait 2>/dev/null
	[ -z "$killed" ] || ens restart "$dir" "$killed" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# query EXPR [UNIX_TIME]: the value of a one-sample result, empty if none.
query() {
	promtool query instant ${2:+--time="$2"} "$api" "$1" 2>/dev/null |
		sed -n 's/^.*=> \([^ ]*\) @.*$/\1/p' | head -n 1
}
# wait_for EXPR SECONDS: until EXPR has a value (0 when it came).
wait_for() {
	local end=$((SECONDS + $2))
	while [ $SECONDS -lt $end ]; do
		[ -n "$(query "$1")" ] && return 0
		sleep 0.5
	done
	return 1
}
# GET /metrics of the program, body only (bash's /dev/tcp: no curl needed).
scrape() {
	exec 3<>"/dev/tcp/${metrics%:*}/${metrics##*:}" || return 1
	printf 'GET /metrics HTTP/1.0\r\nHost: %s\r\n\r\n' "$metrics" >&3
	sed '1,/^\r$/d' <&3
	exec 3<&-
}

cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: zkroute
    static_configs:
      - targets: ['$metrics']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
	--web.listen-address="${api#http://}" --log.level=warn >"$work/prometheus.log" 2>&1 &
prom_pid=$!
ZKROUTE_METRICS=$metrics "$top_builddir/zkroute-run" "$top_builddir/tests/integration/metrics_load" \
	"$hosts" "$seconds" "$rate" >"$work/load.out" 2>"$work/load.err" &
load_pid=$!
t_start=$(date +%s)

wait_for 'up{job="zkroute"} == 1' 30
rc=$?
result "Prometheus scrapes the endpoint of a zkroute-run program ($metrics, every 1 s)" $rc \
	"$([ $rc = 0 ] || { tail -n 5 "$work/prometheus.log"; tail -n 5 "$work/load.err"; })"

sleep 3
missing=
for e in 'count(zkroute_reads_total) >= 3' 'count(zkroute_read_latency_seconds_bucket) >= 45' \
	'count(zkroute_write_latency_seconds_count) >= 3' 'count(zkroute_in_read_pool) >= 3' \
	'sum(zkroute_in_read_pool) >= 1' 'zkroute_session_state{state="connected"} == 1' \
	'count(zkroute_leader_changes_total) == 1' 'count(zkroute_latency_ewma_seconds) >= 1' \
	'count(zkroute_handle_info{policy="hybrid"}) == 1' 'sum(zkroute_write_session) == 1'; do
	[ -n "$(query "$e")" ] || missing+="$e"$'\n'
done
result "the series exist (reads per member, latency histograms, pool, session, leader changes)" \
	"$([ -z "$missing" ]; echo $?)" "${missing:+no sample for: }$missing"

scrape >"$work/scrape.prom" 2>/dev/null
out=$(promtool check metrics <"$work/scrape.prom" 2>&1)
rc=$?
[ -s "$work/scrape.prom" ] && [ -z "$out" ] || rc=1
result "promtool check metrics passes on the live scrape ($(grep -vc '^#' "$work/scrape.prom") samples)" \
	$rc "$out"

# The rate: Prometheus's over [T-20 s, T] against the program's own
# counter at those two instants (interpolated between its lines, written
# once a second).
sleep $((t_start + 30 - $(date +%s)))
t=$(($(date +%s) - 2))
got=$(query 'sum(rate(zkroute_reads_total[20s]))' "$t")
want=$(awk -v t1="$((t * 1000))" -v t0="$(((t - 20) * 1000))" '
	function at(t,   k) { for (k = 2; k <= n; k++) if (ms[k] >= t) return r[k-1] + (r[k] - r[k-1]) * (t - ms[k-1]) / (ms[k] - ms[k-1]); return -1 }
	{ n++; ms[n] = $1; sub("reads=", "", $2); r[n] = $2 }
	END { a = at(t0); b = at(t1); if (a >= 0 && b > a) printf "%.2f", (b - a) / ((t1 - t0) / 1000) }' "$work/load.out")
rc=$(awk -v g="${got:-0}" -v w="${want:-0}" 'BEGIN { print (w > 0 && g > 0 && (g - w) / w <= 0.05 && (w - g) / w <= 0.05) ? 0 : 1 }')
result "sum(rate(zkroute_reads_total[20s])) = $(printf '%.2f' "${got:-0}")/s against the program's ${want:-none}/s (within 5 %)" "$rc"

top=$("$top_builddir/tools/zkroute" top --metrics "http://$metrics/metrics" --count 3 2>&1)
rc=$?
lines=$(printf '%s\n' "$top" | grep -c 'reads/s=')
rs=$(printf '%s\n' "$top" | tail -n 1 | sed -n 's/.* reads\/s=\([0-9.]*\) .*/\1/p')
[ "$rc" = 0 ] && [ "$lines" = 3 ] && awk -v r="${rs:-0}" 'BEGIN { exit !(r > 100) }' || rc=1
result "zkroute top --metrics, not a terminal: 3 lines, the last with reads/s=${rs:-none}" $rc "$top"

# The leader's kill.  A scrape that fails (the machine too loaded to answer
# within the 1 s scrape timeout) makes Prometheus mark every series stale,
# so the counter is read over the last minute, not at one instant.
changes='sum(max_over_time(zkroute_leader_changes_total[1m]))'
before=$(query "$changes")
leader=$(ens leader "$dir")
ens kill "$dir" "$leader" >/dev/null
killed=$leader
ens wait-leader "$dir" >/dev/null
wait_for "$changes >= 1" 40
rc=$?
after=$(query "$changes")
grep -q 'event=leader_change handle=1 member=' "$work/load.err" || rc=1
result "leader m$leader killed: zkroute_leader_changes_total ${before:-none} -> ${after:-none}, and the log line" \
	$rc "$(grep -a 'event=' "$work/load.err" | head -n 5)
scrapes in the last 2 minutes: $(query 'count_over_time(up{job="zkroute"}[2m])'), up: $(query 'sum_over_time(up{job="zkroute"}[2m])')"
ens restart "$dir" "$leader" >/dev/null && killed=''

kill "$load_pid" 2>/dev/null
wait "$load_pid" 2>/dev/null
load_pid=''
echo "# metrics_load, its last counts: $(tail -n 1 "$work/load.out")"
exit $((failed > 0))
