#!/usr/bin/env bash
# The operations demo of docs/operations.md, from which its figures, log
# lines, `zkroute top` frames and the dashboard's picture come: a proxied
# 3-node ensemble (tests/harness/ensemble.sh), a Prometheus server on
# loopback scraping every second, and tests/integration/metrics_load (a
# plain libzookeeper_mt program, 200 reads and 20 writes a second) under
# zkroute-run with ZKROUTE_METRICS; then the faults: a follower slowed by
# 8 ms +- 2 ms for 20 s (ejection, reinstatement), the leader killed (a
# leader change, the owner session rescued when it was there) and restarted,
# then each follower down for 12 s in turn (the carrier holding the
# program's watch re-created, the watch set again).
#
#   scripts/metrics-demo.sh [OUT]        (default OUT: metrics-demo)
#
# OUT gets: load.out and load.err (the program's counts and its ZooKeeper
# log: the zkroute lines are there), top.tty (`zkroute top --metrics` on a
# pseudo-terminal) and top.lines (not a terminal), scrape.prom (one
# scrape), events.txt (when each fault was), panel-*.dat (the dashboard's
# queries over the run, from `promtool query range`), dashboard.png (them,
# drawn by gnuplot like docs/grafana-zkroute.json's panels).  Needs the
# build tree (make, make check TESTS=), prometheus, gnuplot; takes about
# 2.5 minutes.  ZKR_TEST_NET (default 127.0.70) picks the loopback network.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# draw OUT: OUT/dashboard.png from OUT/panel-*.dat and OUT/events.txt
# (`scripts/metrics-demo.sh --draw OUT` draws again without a new run).
draw() {
	cd "$1"
	marks=$(awk '{ printf "set arrow from %s, graph 0 to %s, graph 1 nohead dt 2 lc rgb \"#888888\"; ", $1, $1 }' events.txt)
	gnuplot <<EOF
set terminal pngcairo noenhanced size 1400,1050 font "DejaVu Sans,10"
set output "dashboard.png"
set multiplot layout 3,2 title "zkroute (docs/grafana-zkroute.json), from a real scrape: metrics_load under zkroute-run, 200 reads/s; dashed: the faults of events.txt" font ",12"
set key top left font ",9" noautotitle
set grid lc rgb "#dddddd"
set xlabel "seconds"
$marks
set title "Reads per second, by member"
plot for [i=0:2] "panel-reads.dat" index i using 1:2 with lines lw 1.5 title columnheader(1)
set title "Read latency P99, by member (ms)"
set logscale y
plot for [i=0:2] "panel-read_p99.dat" index i using 1:(\$2*1000) with lines lw 1.5 title columnheader(1)
set title "Write latency P99, by member (ms)"
plot for [i=0:2] "panel-write_p99.dat" index i using 1:(\$2*1000) with lines lw 1.5 title columnheader(1)
set title "Read latency EWMA, by member (ms)"
plot for [i=0:2] "panel-ewma.dat" index i using 1:(\$2*1000) with lines lw 1.5 title columnheader(1)
unset logscale y
set title "Read pool, by member: one lane each, low = out, high = in"
set yrange [-0.3:5]
set ytics ("out" 0, "in" 1, "out" 2, "in" 3, "out" 4, "in" 5) font ",8"
plot for [i=0:2] "panel-pool.dat" index i using 1:(\$2+2*i) with steps lw 2 title columnheader(1)
unset yrange
set ytics auto font ",10"
set title "Leader changes, ejections, owner rescues (totals)"
plot "panel-changes.dat" skip 1 using 1:2 with steps lw 2 title "leader changes", \
     "panel-ejections.dat" skip 1 using 1:2 with steps lw 2 title "ejections", \
     "panel-rescues.dat" skip 1 using 1:2 with steps lw 2 title "owner rescues"
unset multiplot
EOF
}

top_builddir=${top_builddir:-$here}
if [ "${1:-}" = --draw ]; then
	draw "${2:?--draw OUT}"
	exit 0
fi
out=${1:-metrics-demo}
mkdir -p "$out"
out=$(cd "$out" && pwd)
net=${ZKR_TEST_NET:-127.0.70}
export ZKR_TEST_NET=$net FAULTPROXY=${FAULTPROXY:-$top_builddir/tests/harness/faultproxy}
ens() { bash "$here/tests/harness/ensemble.sh" "$@"; }
metrics=$net.200:19464
api=http://$net.200:19090
seconds=${ZKR_DEMO_SECONDS:-140}
dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-demo.XXXXXX")
prom_pid='' load_pid=''
cleanup() {
	[ -z "$load_pid" ] || kill "$load_pid" 2>/dev/null || true
	[ -z "$prom_pid" ] || kill "$prom_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	ens stop "$dir" >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT

hosts=$(ens start "$dir" --proxied)
cat >"$dir/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: zkroute
    static_configs: [{targets: ['$metrics']}]
EOF
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
	--web.listen-address="${api#http://}" --log.level=warn >"$out/prometheus.log" 2>&1 &
prom_pid=$!
ZKROUTE_METRICS=$metrics "$top_builddir/zkroute-run" "$top_builddir/tests/integration/metrics_load" \
	"$hosts" "$seconds" 200 >"$out/load.out" 2>"$out/load.err" &
load_pid=$!
t0=$(date +%s)
: >"$out/events.txt"
event() { echo "$(($(date +%s) - t0)) $*" | tee -a "$out/events.txt"; }

sleep 12
script -qec "$top_builddir/tools/zkroute top --metrics http://$metrics/metrics --count 2" /dev/null \
	>"$out/top.tty" </dev/null
"$top_builddir/tools/zkroute" top --metrics "http://$metrics/metrics" --count 3 >"$out/top.lines"
exec 3<>"/dev/tcp/${metrics%:*}/${metrics##*:}"
printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3
sed '1,/^\r$/d' <&3 >"$out/scrape.prom"
exec 3<&-

leader=$(ens leader "$dir")
slow=$((leader % 3 + 1))
sleep $((t0 + 25 - $(date +%s)))
event "follower m$slow slowed by 8 ms +- 2 ms"
ens slow "$dir" "$slow" 8 2 >/dev/null
sleep 20
event "follower m$slow healed"
ens heal "$dir" "$slow" >/dev/null
sleep $((t0 + 70 - $(date +%s)))
leader=$(ens leader "$dir")
event "leader m$leader killed"
ens kill "$dir" "$leader" >/dev/null
ens wait-leader "$dir" >/dev/null
event "new leader m$(ens leader "$dir")"
sleep 12
event "m$leader restarted"
ens restart "$dir" "$leader" >/dev/null
# Each follower down for 12 s in turn: the one whose session holds the
# program's watch has its carrier re-created and the watch set again.
sleep $((t0 + 92 - $(date +%s)))
leader=$(ens leader "$dir")
for f in $((leader % 3 + 1)) $(((leader + 1) % 3 + 1)); do
	event "follower m$f killed"
	ens kill "$dir" "$f" >/dev/null
	sleep 12
	event "m$f restarted"
	ens restart "$dir" "$f" >/dev/null
	sleep 4
done
wait "$load_pid" || true
load_pid=''
t1=$(date +%s)
sleep 2

# The dashboard's queries, without its variables, over the run.
range() { # range NAME EXPR
	promtool query range --start="$t0" --end="$t1" --step=1s "$api" "$2" |
		awk -v t0="$t0" '
			/=>$/ { if (n++) print "\n"; l = $0; sub(/ =>$/, "", l); gsub(/[{}"]/, "", l); sub(/^member=/, "", l); print (l == "" ? "total" : l), "value"; next }
			/@\[/ { v = $1; t = $2; gsub(/[@\[\]]/, "", t); printf "%.1f %s\n", t - t0, v }' >"$out/panel-$1.dat"
}
range reads 'sum by (member) (rate(zkroute_reads_total[5s]))'
range read_p99 'histogram_quantile(0.99, sum by (le, member) (rate(zkroute_read_latency_seconds_bucket[5s])))'
range write_p99 'histogram_quantile(0.99, sum by (le, member) (rate(zkroute_write_latency_seconds_bucket[5s])))'
range ewma 'max by (member) (zkroute_latency_ewma_seconds)'
range pool 'max by (member) (zkroute_in_read_pool)'
range changes 'sum(zkroute_leader_changes_total) or vector(0)'
range ejections 'sum(zkroute_ejections_total)'
range rescues 'sum(zkroute_owner_rescues_total)'

draw "$out"
echo "metrics-demo: $out/dashboard.png; events:"
cat "$out/events.txt"
