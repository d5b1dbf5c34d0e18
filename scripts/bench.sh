#!/usr/bin/env bash
# scripts/bench.sh — run zkroute-bench on a local 3-node ensemble behind the
# fault proxy, with 1 ms one-way delay on every link (client -> member and
# member <-> member), as docs/benchmarks.md describes.  Starts the ensemble
# (tests/harness/ensemble.sh start --proxied), applies the faults, runs the bench,
# and always stops the ensemble.
#
# Usage:
#   scripts/bench.sh quick [OUT]      1-2 minutes: the main comparison, short
#                                     trials (what `make bench-quick` runs)
#   scripts/bench.sh steady [OUT]     steady state, published settings scaled
#                                     to this machine (about 9 minutes)
#   scripts/bench.sh degraded [OUT]   one follower degraded by 8 ms +- 2 ms on
#                                     every link touching it (about 6 minutes)
#   scripts/bench.sh mix50 [OUT]      steady state, 50/50 reads/writes
#   scripts/bench.sh cpu [OUT]        client CPU per operation: hybrid vs the
#                                     plain client, same calls, same paced load
#                                     (BENCH_RATE ops/s, default 1000)
#   scripts/bench.sh sweep [OUT]      steady state at 8, 16 and 64 workers
#   scripts/bench.sh boltzmann [OUT]  steady and degraded, hybrid vs boltzmann
#   scripts/bench.sh five [OUT]       5 members (BENCH_MEMBERS): steady state,
#                                     then 100 % reads of 128 and 4096 bytes,
#                                     hybrid vs leader_only
#   scripts/bench.sh readmit [OUT]    degraded: hybrid (readmit_ratio 2) vs
#                                     hybrid with readmit_ratio=3 (one bar
#                                     for ejection and readmission) vs
#                                     round_robin (docs/benchmarks.md)
#   scripts/bench.sh hedge [OUT]      hybrid with and without hedged reads,
#                                     interleaved; a follower is degraded at
#                                     the start of each window and healed after
#                                     it, so the window is the first
#                                     BENCH_WINDOW_S (2) seconds of the fault
#                                     (docs/hedging.md); BENCH_HEDGE_OPTS adds
#                                     options to the hedging variant
#                                     (key=value+key=value), a second one
#                                     has hedge_max_pct=BENCH_HEDGE_RAISED_PCT
#                                     (50); BENCH_WORKERS (32)
#   scripts/bench.sh selectors [OUT]  steady state, 80/20 then 100 % reads:
#                                     hybrid vs leader_read_weight=0.33 vs p2c
#                                     (docs/selectors.md; about 11 minutes)
#   scripts/bench.sh ab [OUT]         two builds of the library, interleaved:
#                                     this tree's zkroute-bench (A) and
#                                     BENCH_B (B, another tree's
#                                     tools/zkroute-bench, which runs with
#                                     that tree's library), hybrid only, one
#                                     trial per process, A and B in turn,
#                                     BENCH_TRIALS (6) each: closed loop
#                                     (latency, throughput), then paced at
#                                     BENCH_RATE (1000) ops/s (client CPU
#                                     per operation); --api BENCH_API
#                                     (async); medians and B/A ratios in
#                                     OUT/ab.md (scripts/ab-summary.py);
#                                     BENCH_A_ARGS: arguments for A only
#                                     (e.g. '-o sync_coalesce=off');
#                                     BENCH_AB_MODES ("loop paced"): which
#                                     of the two to run; syncs per read too
#   scripts/bench.sh policies [OUT]   steady state, BENCH_READS (80) % reads:
#                                     BENCH_POLICIES (hybrid,round_robin,
#                                     leader_only; stock_unsynced is stock
#                                     with plain reads), BENCH_WORKERS (32),
#                                     BENCH_TRIALS (3) x BENCH_SECONDS (15) s;
#                                     run it with and without BENCH_CPU_QUOTA
#                                     to compare a shared host with a machine
#                                     per server
#   scripts/bench.sh coalesce [OUT]   hybrid with sync coalescing on (depth
#                                     4, the default), on at depth 1, and off,
#                                     interleaved, at 1, 2, 4 and 32 workers
#                                     (BENCH_COALESCE_WORKERS, BENCH_COALESCE_MIXES; the policy
#                                     list BENCH_COALESCE_POLICIES), 80/20 and
#                                     100 % reads, BENCH_TRIALS (3) x
#                                     BENCH_SECONDS (10) s: what the default
#                                     `sync_coalesce=on` rests on
#   scripts/bench.sh pure-reads [OUT] 100 % reads, 128 bytes: hybrid vs
#                                     leader_only (and round_robin), 32
#                                     workers, BENCH_TRIALS (3) x
#                                     BENCH_SECONDS (15) s; BENCH_MEMBERS (3)
#   scripts/bench.sh fleet [OUT]      tools/zkroute-fleet: BENCH_HANDLES (100)
#                                     idle handles with 3 watches each, variants
#                                     BENCH_FLEET_VARIANTS (stock,routed),
#                                     BENCH_ROUNDS (1); OUT/fleet.md
# OUT defaults to bench-out/SCENARIO.  Extra zkroute-bench arguments go in
# BENCH_ARGS (word-split), e.g. BENCH_ARGS='--trials 7 -w 48'.
#
# Environment: ZKR_BENCH (the zkroute-bench binary; default
# tools/zkroute-bench), FAULTPROXY (default tests/harness/faultproxy), ZKR_TEST_NET
# (default 127.0.8, so it does not collide with the test ensemble),
# BENCH_DELAY_MS (1), BENCH_SLOW_MS / BENCH_SLOW_JITTER_MS (8 / 2),
# BENCH_TICK_MS (ZooKeeper tickTime, 2000; empty: the harness's 200),
# BENCH_MEMBERS (ensemble size: 3, or 5 for `five`), ZKR_FLEET (the
# zkroute-fleet binary; default tools/zkroute-fleet).
#
# A machine per server, emulated: BENCH_CPU_QUOTA=CPUS (e.g. 0.35) starts
# the ensemble with `ensemble.sh start --cpu-quota CPUS`, so each server
# has CPUS cores of its own whatever the others use, as on separate
# machines; any scenario runs either way, and its label says which.
# Without a writable cgroup v1 cpu controller that fails at once, unless
# BENCH_CPU_QUOTA_FALLBACK=1, which runs on the shared host and says so.
# In both modes the servers' CPU is sampled every second
# (scripts/server-cpu.sh): OUT/server-cpu.tsv, and its summary (mean,
# highest 1 s and 5 s use, throttled periods; against the quota when there
# is one, or BENCH_QUOTA_REF=CPUS on a shared host) in OUT/server-cpu.md
# and on stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
scenario=${1:-}
out=${2:-bench-out/$scenario}
bench=${ZKR_BENCH:-$here/tools/zkroute-bench}
ens=$here/tests/harness/ensemble.sh
export FAULTPROXY=${FAULTPROXY:-$here/tests/harness/faultproxy}
export ZKR_TEST_NET=${ZKR_TEST_NET:-127.0.8}
delay=${BENCH_DELAY_MS:-1}
slow=${BENCH_SLOW_MS:-8}
slow_jitter=${BENCH_SLOW_JITTER_MS:-2}
# shellcheck disable=SC2206 # word splitting is the point
extra=(${BENCH_ARGS:-})

case $scenario in
quick | steady | degraded | mix50 | cpu | sweep | boltzmann | hedge | selectors | readmit | five | ab | policies | fleet | coalesce | pure-reads) ;;
*)
	awk 'NR >= 6 && /^set -euo/ { exit } NR >= 6 { sub(/^# ?/, ""); print }' "$0" >&2
	exit 2
	;;
esac
[[ -x $bench ]] || { echo "bench: $bench not built (make tools/zkroute-bench)" >&2; exit 1; }
[[ -x $FAULTPROXY ]] || { echo "bench: $FAULTPROXY not built (make tests/harness/faultproxy)" >&2; exit 1; }
if ! command -v java >/dev/null || [[ ! -e /usr/share/java/zookeeper.jar ]]; then
	echo "bench: Java or the ZooKeeper server is not installed (scripts/setup.sh)" >&2
	exit 1
fi
fleet=${ZKR_FLEET:-$here/tools/zkroute-fleet}
if [[ $scenario == fleet && ! -x $fleet ]]; then
	echo "bench: $fleet not built (make tools/zkroute-fleet)" >&2
	exit 1
fi

# Shared host, or a machine per server (BENCH_CPU_QUOTA).
quota=${BENCH_CPU_QUOTA:-}
[[ $quota != off ]] || quota=''
if [[ -n $quota ]] && ! why=$(bash "$ens" cpu-quota-check 2>&1); then
	if [[ ${BENCH_CPU_QUOTA_FALLBACK:-0} != 1 ]]; then
		echo "bench: BENCH_CPU_QUOTA=$quota: $why (BENCH_CPU_QUOTA_FALLBACK=1 runs on the shared host instead)" >&2
		exit 1
	fi
	echo "bench: BENCH_CPU_QUOTA=$quota: $why; BENCH_CPU_QUOTA_FALLBACK=1: running on the shared host" >&2
	quota=''
fi
quota_args=()
hostmode='shared host'
if [[ -n $quota ]]; then
	quota_args=(--cpu-quota "$quota")
	hostmode="$quota cores per server"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-bench.XXXXXX")
sampler=''
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	[[ -z $sampler ]] || kill "$sampler" 2>/dev/null || true
	bash "$ens" stop "$dir" >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$out"
members=${BENCH_MEMBERS:-3}
[[ $scenario != five ]] || members=${BENCH_MEMBERS:-5}
hosts=$(bash "$ens" start "$dir" --proxied --members "$members" "${quota_args[@]}")
# The harness's tickTime of 200 ms (fast failover tests) gives a follower
# 1 s (syncLimit 5 ticks) before it is dropped; on this 2-core machine,
# loaded by the bench itself and by other jobs, that ended measurements with
# leader elections.  The members are restarted with ZooKeeper's sample
# tickTime, 2000 ms (syncLimit 10 s), as a production ensemble would have.
tick=${BENCH_TICK_MS:-2000}
if [[ -n $tick ]]; then
	for ((i = 1; i <= members; i++)); do bash "$ens" kill "$dir" "$i"; done
	sed -i "s/^tickTime=.*/tickTime=$tick/" "$dir"/zk*/zoo.cfg
	for ((i = 1; i < members; i++)); do bash "$ens" restart "$dir" "$i" --no-wait; done
	bash "$ens" restart "$dir" "$members" >/dev/null
	for ((i = 1; i <= members; i++)); do
		for _ in $(seq 300); do
			bash "$ens" srvr "${ZKR_TEST_NET}.$i" "${ZKR_TEST_PORT:-2181}" 2>/dev/null | grep -q '^Mode:' && break
			sleep 0.1
		done
	done
	bash "$ens" wait-leader "$dir" >/dev/null
fi
echo "bench: ensemble $hosts (proxied, tickTime ${tick:-harness}, $hostmode, dir $dir), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
bash "$ens" delay-all "$dir" "$delay" 0 >/dev/null
leader=$(bash "$ens" leader "$dir")
follower=1
while ((follower == leader)); do follower=$((follower + 1)); done

# degrade: the first follower's every link (client and member-to-member)
# gets SLOW +- JITTER ms each way instead of the base delay.
degrade() {
	bash "$ens" slow "$dir" "$follower" "$slow" "$slow_jitter" >/dev/null
	echo "bench: member $follower (a follower; leader is $leader) degraded by ${slow} ms +- ${slow_jitter} ms" >&2
}

# The servers' and the proxy's CPU per operation are reported next to the
# client's: this machine is CPU-bound, so they explain throughput.
pids='' server_pids='' samples=()
for ((i = 1; i <= members; i++)); do
	p=$(bash "$ens" pid "$dir" "$i")
	pids+="zk$i=$p,"
	server_pids+="${server_pids:+,}zk$i=$p"
	cg=''
	[[ -z $quota ]] || cg=@$(bash "$ens" cgroup "$dir" "$i")
	samples+=("zk$i=$p$cg")
done
pids+="faultproxy=$(cat "$dir/faultproxy.pid")"
bash "$here/scripts/server-cpu.sh" sample "$out/server-cpu.tsv" 1 "${samples[@]}" &
sampler=$!

run() { # run OUTDIR ARGS...: the bench, with the scenario's common arguments
	local o=$1 a
	local -a args=()
	shift
	# Every label says whether the servers shared the host.
	while (($# > 0)); do
		a=$1
		shift
		if [[ $a == --label && $# -gt 0 ]]; then
			args+=(--label "$1 ($hostmode)")
			shift
		else
			args+=("$a")
		fi
	done
	"$bench" "${args[@]}" "${extra[@]}" --watch-pids "$pids" --out "$o" "$hosts"
}

rc=0
case $scenario in
quick)
	run "$out" --label "quick: steady state, 1 ms links" \
		-p hybrid,round_robin,oracle,stock -w 32 -t 2 -d 6 --warmup 2 --prewarm 4 \
		--pause 0.5 --targets steady || rc=$?
	;;
steady)
	run "$out" --label "steady state, 1 ms links, 80/20" \
		-p hybrid,round_robin,oracle,sticky,stock -w 32 -t 5 -d 20 --warmup 5 \
		--sticky-member "$follower" --targets steady || rc=$?
	;;
mix50)
	run "$out" --label "steady state, 1 ms links, 50/50" -r 50 \
		-p hybrid,round_robin,oracle,stock -w 32 -t 5 -d 20 --warmup 5 --targets steady || rc=$?
	;;
degraded)
	degrade
	run "$out" --label "one follower degraded by ${slow} ms ± ${slow_jitter} ms, 1 ms links, 80/20" \
		-p hybrid,round_robin,oracle,sticky,stock -w 32 -t 5 -d 20 --warmup 5 \
		--sticky-member "$follower" --degraded-member "$follower" --targets degraded || rc=$?
	;;
five)
	# 5 members: the steady comparison, then pure reads (distributed
	# linearizable reads vs all reads on the leader) at two value sizes.
	run "$out/steady" --label "5 members, steady state, 1 ms links, 80/20" \
		-p hybrid,round_robin,oracle -w 32 -t "${BENCH_TRIALS:-3}" -d 15 --warmup 5 || rc=$?
	for size in 128 4096; do
		run "$out/reads-$size" --label "5 members, 100 % reads of $size bytes, 1 ms links" -r 100 -s "$size" \
			-p hybrid,leader_only -w 32 -t "${BENCH_TRIALS:-3}" -d 15 --warmup 5 --prewarm 3 || rc=$?
	done
	;;
readmit)
	degrade
	run "$out" --label "one follower degraded by ${slow} ms ± ${slow_jitter} ms: readmission hysteresis" \
		-p hybrid,hybrid+readmit_ratio=3,round_robin -w 32 -t "${BENCH_TRIALS:-5}" -d 20 --warmup 5 \
		--degraded-member "$follower" --pool-trace "$out/pool-trace.txt" || rc=$?
	;;
cpu)
	run "$out" --label "client CPU per operation at an equal paced load, 1 ms links" \
		-p hybrid,oracle,stock -w 32 --rate "${BENCH_RATE:-1000}" -t 5 -d 20 --warmup 5 \
		--targets steady || rc=$?
	;;
sweep)
	for w in 8 16 64; do
		run "$out/w$w" --label "steady state, 1 ms links, 80/20, $w workers" \
			-p hybrid,round_robin,oracle -w "$w" -t 3 -d 15 --warmup 5 --targets steady || rc=$?
	done
	;;
boltzmann)
	run "$out/steady" --label "boltzmann, steady state, 1 ms links" \
		-p hybrid,boltzmann,round_robin -w 32 -t 3 -d 20 --warmup 5 || rc=$?
	degrade
	run "$out/degraded" --label "boltzmann, one follower degraded by ${slow} ms ± ${slow_jitter} ms" \
		-p hybrid,boltzmann,round_robin -w 32 -t 3 -d 20 --warmup 5 \
		--degraded-member "$follower" || rc=$?
	;;
hedge)
	# The fault starts with each measured window and is healed right after
	# it (back to the base delay), so every trial measures the first
	# seconds of a fresh fault, before and while ejection acts.
	# Three entries: the default cap (5 %), a raised one (so that the
	# share of slow reads a fault makes, about half before ejection, can
	# be hedged), and no hedging.
	hopts=hybrid+hedge=on
	[[ -n ${BENCH_HEDGE_OPTS:-} ]] && hopts+=+${BENCH_HEDGE_OPTS}
	run "$out" --label "first ${BENCH_WINDOW_S:-2} s after one follower degrades by ${slow} ms ± ${slow_jitter} ms: hedging on vs off" \
		-p "$hopts,hybrid+hedge=on+hedge_max_pct=${BENCH_HEDGE_RAISED_PCT:-50},hybrid+hedge=off" -w "${BENCH_WORKERS:-32}" -t "${BENCH_TRIALS:-7}" -d "${BENCH_WINDOW_S:-2}" --warmup 3 \
		--prewarm 3 --pause 1 --degraded-member "$follower" \
		--fault-cmd "bash '$ens' slow '$dir' $follower $slow $slow_jitter >/dev/null" \
		--heal-cmd "bash '$ens' slow '$dir' $follower $delay 0 >/dev/null" || rc=$?
	;;
policies)
	reads=${BENCH_READS:-80}
	run "$out" --label "steady state, 1 ms links, $reads % reads" -r "$reads" \
		-p "${BENCH_POLICIES:-hybrid,round_robin,leader_only}" -w "${BENCH_WORKERS:-32}" \
		-t "${BENCH_TRIALS:-3}" -d "${BENCH_SECONDS:-15}" --warmup 5 || rc=$?
	;;
coalesce)
	for mix in ${BENCH_COALESCE_MIXES:-80 100}; do
		for w in ${BENCH_COALESCE_WORKERS:-1 2 4 32}; do
			run "$out/r$mix-w$w" --label "sync coalescing on vs off, $mix % reads, $w workers, 1 ms links" \
				-r "$mix" -p "${BENCH_COALESCE_POLICIES:-hybrid,hybrid+sync_coalesce_depth=1,hybrid+sync_coalesce=off}" -w "$w" -t "${BENCH_TRIALS:-3}" \
				-d "${BENCH_SECONDS:-10}" --warmup 3 --prewarm 3 --pause 0.5 || rc=$?
		done
	done
	;;
pure-reads)
	run "$out" --label "$members members, 100 % reads of 128 bytes, 1 ms links" -r 100 \
		-p hybrid,leader_only,round_robin -w 32 -t "${BENCH_TRIALS:-3}" -d "${BENCH_SECONDS:-15}" \
		--warmup 5 --prewarm 3 || rc=$?
	;;
fleet)
	"$fleet" -n "${BENCH_HANDLES:-100}" -m "${BENCH_FLEET_VARIANTS:-stock,routed}" \
		-r "${BENCH_ROUNDS:-1}" --server-pids "$server_pids" --label "fleet: idle handles ($hostmode)" \
		--out "$out/fleet.md" "${extra[@]}" "$hosts" || rc=$?
	;;
selectors)
	for mix in 80 100; do
		run "$out/r$mix" --label "read selection, steady state, 1 ms links, $mix % reads" -r "$mix" \
			-p hybrid,hybrid+leader_read_weight=0.33,p2c -w 32 -t "${BENCH_TRIALS:-5}" \
			-d "${BENCH_SECONDS:-15}" --warmup 3 --prewarm 5 || rc=$?
	done
	;;
ab)
	[[ -x ${BENCH_B:-} ]] || { echo "bench: ab needs BENCH_B, the other build's tools/zkroute-bench" >&2; exit 2; }
	api=${BENCH_API:-async}
	for mode in ${BENCH_AB_MODES:-loop paced}; do
		pace=()
		[[ $mode == paced ]] && pace=(--rate "${BENCH_RATE:-1000}")
		for ((t = 1; t <= ${BENCH_TRIALS:-6}; t++)); do
			for side in A B; do
				b=$bench
				# shellcheck disable=SC2206 # word splitting is the point
				own=(${BENCH_A_ARGS:-})
				[[ $side == B ]] && b=$BENCH_B && own=()
				"$b" -p hybrid -w 32 -t 1 -d "${BENCH_SECONDS:-15}" --warmup 3 --prewarm 0 \
					--api "$api" "${pace[@]}" "${extra[@]}" "${own[@]}" --watch-pids "$pids" -q \
					--label "ab $mode $side trial $t" --out "$out/$mode-$side-$t" "$hosts" >/dev/null || rc=$?
			done
		done
	done
	python3 "$here/scripts/ab-summary.py" "$out" "${BENCH_AB_MODES:-loop paced}" >"$out/ab.md" || rc=$?
	cat "$out/ab.md"
	;;
esac
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
sampler=''
if bash "$here/scripts/server-cpu.sh" summary "$out/server-cpu.tsv" "${quota:-${BENCH_QUOTA_REF:-}}" >"$out/server-cpu.md"; then
	echo "bench: servers' CPU ($hostmode; scripts/server-cpu.sh, /proc/PID/stat every second):" >&2
	cat "$out/server-cpu.md" >&2
fi
# 3: a target was missed; the report says which and by how much.
if ((rc == 3)); then
	echo "bench: some targets missed (see $out/results.md)" >&2
	rc=0
fi
echo "bench: results in $out (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
exit "$rc"
