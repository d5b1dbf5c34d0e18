#!/usr/bin/env bash
# scripts/server-cpu.sh — how much CPU each server really used during a
# benchmark, to check that a per-server quota (tests/harness/ensemble.sh start
# --cpu-quota) holds: a sampler and its summary.
#
# Usage:
#   server-cpu.sh sample OUT INTERVAL NAME=PID[@CGROUP]...
#       every INTERVAL seconds append one line per process to OUT:
#       "EPOCH NAME PID CPU_TICKS NR_PERIODS NR_THROTTLED THROTTLED_NS"
#       (CPU_TICKS: utime + stime of /proc/PID/stat, every thread, in
#       clock ticks; the last three from CGROUP/cpu.stat, "-" without a
#       cgroup).  Runs until SIGTERM, or until every process is gone.
#   server-cpu.sh summary OUT [QUOTA]
#       a Markdown table per process: the run's mean, the median and the
#       highest use over 1 s and over 5 s windows (in cores), and the share
#       of CFS periods in which the cgroup was throttled.  With QUOTA (cores)
#       it says whether the highest 5 s window stayed within the quota: CFS
#       gives at most QUOTA x period per period, so a 5 s window not aligned
#       to periods can hold QUOTA x (5 s + one 100 ms period) at most; 1 s
#       windows are shown but, with 10 ms ticks and one extra period each,
#       are judged only for information.
set -euo pipefail

die() {
	printf 'server-cpu.sh: %s\n' "$*" >&2
	exit 1
}

# cpu_ticks PID: utime + stime of PID, or nothing if it is gone.
cpu_ticks() {
	local stat
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	local -a f
	read -r -a f <<<"$stat"
	printf '%s\n' $((f[11] + f[12]))
}

# throttle CGROUP: "NR_PERIODS NR_THROTTLED THROTTLED_NS", or "- - -".
throttle() {
	local k v p='-' t='-' ns='-'
	if [[ -n $1 && -r $1/cpu.stat ]]; then
		while read -r k v; do
			case $k in
			nr_periods) p=$v ;;
			nr_throttled) t=$v ;;
			throttled_time) ns=$v ;;
			esac
		done <"$1/cpu.stat"
	fi
	printf '%s %s %s\n' "$p" "$t" "$ns"
}

cmd_sample() {
	local out=$1 interval=$2 spec name pid cg ticks alive
	shift 2
	[[ $interval =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "INTERVAL must be a number of seconds, got '$interval'"
	(($# > 0)) || die "sample needs NAME=PID[@CGROUP] arguments"
	local -a names=() pids=() cgs=()
	for spec in "$@"; do
		[[ $spec =~ ^([A-Za-z0-9_.-]+)=([0-9]+)(@(.+))?$ ]] || die "expected NAME=PID[@CGROUP], got '$spec'"
		names+=("${BASH_REMATCH[1]}") pids+=("${BASH_REMATCH[2]}") cgs+=("${BASH_REMATCH[4]}")
	done
	trap 'exit 0' TERM INT
	while :; do
		alive=0
		for i in "${!pids[@]}"; do
			name=${names[i]} pid=${pids[i]} cg=${cgs[i]}
			ticks=$(cpu_ticks "$pid") || continue
			alive=1
			printf '%s %s %s %s %s\n' "$EPOCHREALTIME" "$name" "$pid" "$ticks" "$(throttle "$cg")"
		done >>"$out"
		((alive)) || exit 0
		sleep "$interval"
	done
}

cmd_summary() {
	local out=$1 quota=${2:-}
	[[ -s $out ]] || die "no samples in $out"
	[[ -z $quota || $quota =~ ^[0-9]*\.?[0-9]+$ ]] || die "QUOTA must be a number of cores, got '$quota'"
	awk -v hz="$(getconf CLK_TCK)" -v quota="$quota" '
	{
		n = ++cnt[$2]; t[$2, n] = $1; c[$2, n] = $4
		per[$2, n] = $5; thr[$2, n] = $6
		if (!($2 in seen)) { seen[$2] = 1; order[++names] = $2 }
	}
	function rate(k, i, j) { return (c[k, i] - c[k, j]) / hz / (t[k, i] - t[k, j]) }
	# max over windows of at least w seconds ending at each sample; med: median (w = 1)
	function wmax(k, w,    i, j, m, r) {
		m = -1
		for (i = 2; i <= cnt[k]; i++) {
			for (j = i - 1; j > 1 && t[k, i] - t[k, j] < w; j--) ;
			if (t[k, i] - t[k, j] < w * 0.9) continue
			r = rate(k, i, j); if (r > m) m = r
		}
		return m
	}
	function wmed(k,    i, n, v, a, b, x) {
		n = 0
		for (i = 2; i <= cnt[k]; i++) v[++n] = rate(k, i, i - 1)
		for (a = 2; a <= n; a++) { x = v[a]; for (b = a - 1; b >= 1 && v[b] > x; b--) v[b + 1] = v[b]; v[b + 1] = x }
		return n ? (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) : -1
	}
	END {
		printf "| process | samples | seconds | mean cores | median 1 s | max 1 s | max 5 s | throttled periods |%s\n", quota != "" ? " within " quota " cores (5 s) |" : ""
		printf "| --- | --: | --: | --: | --: | --: | --: | --: |%s\n", quota != "" ? " --- |" : ""
		for (x = 1; x <= names; x++) {
			k = order[x]; n = cnt[k]
			if (n < 2) { printf "| %s | %d | - | - | - | - | - | - |%s\n", k, n, quota != "" ? " - |" : ""; continue }
			secs = t[k, n] - t[k, 1]
			m5 = wmax(k, 5)
			tp = "-"
			if (per[k, n] != "-" && per[k, n] - per[k, 1] > 0)
				tp = sprintf("%.0f %% of %d", 100 * (thr[k, n] - thr[k, 1]) / (per[k, n] - per[k, 1]), per[k, n] - per[k, 1])
			verdict = ""
			if (quota != "")
				verdict = m5 < 0 ? " - |" : (m5 <= quota * 5.1 / 5 + 0.01 ? " yes |" : " **no** |")
			printf "| %s | %d | %.0f | %.3f | %.3f | %.3f | %s | %s |%s\n", k, n, secs, rate(k, n, 1), wmed(k), wmax(k, 1), m5 < 0 ? "-" : sprintf("%.3f", m5), tp, verdict
		}
	}' "$out"
}

case ${1:-} in
sample)
	(($# >= 4)) || die "usage: server-cpu.sh sample OUT INTERVAL NAME=PID[@CGROUP]..."
	shift
	cmd_sample "$@"
	;;
summary)
	(($# == 2 || $# == 3)) || die "usage: server-cpu.sh summary OUT [QUOTA]"
	shift
	cmd_summary "$@"
	;;
*)
	sed -n '6,21s/^# \{0,1\}//p' "$0" >&2
	exit 2
	;;
esac
