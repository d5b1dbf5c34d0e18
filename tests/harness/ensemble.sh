#!/usr/bin/env bash
# tests/harness/ensemble.sh — run a real 3-node ZooKeeper ensemble on loopback for tests.
#
# Usage:
#   ensemble.sh start DIR [--proxied] [--members N] [--observers LIST] [--reconfig]
#                     [--cpu-quota CPUS]
#                                  create DIR/zk{1,2,3}, start 3 servers, wait until
#                                  all serve and exactly one is leader, print the
#                                  connect string (only that goes to stdout);
#                                  --proxied: behind one faultproxy (see below);
#                                  --members N: N servers (1..9, default 3);
#                                  --observers LIST: these members (e.g. "4" or
#                                  "4,5") are observers, the rest voters;
#                                  --reconfig: dynamic reconfiguration on
#                                  (reconfigEnabled, superDigest of
#                                  super:zkroute-test, dynamic config file;
#                                  not with --proxied);
#                                  --cpu-quota CPUS: each server in a cpu cgroup
#                                  of its own capped at CPUS cores (e.g. 0.35),
#                                  as on a machine of its own (see "CPU quota")
#   ensemble.sh join DIR N         reconfig ensembles: start a new server N (its
#                                  dynamic config: the current one plus itself
#                                  as participant) and wait until it serves; a
#                                  `reconfig -add` makes it a voter
#   ensemble.sh stop DIR           SIGTERM (then SIGKILL) every member and the proxy,
#                                  wait until gone
#   ensemble.sh hosts DIR          print the connect string
#   ensemble.sh leader DIR         print the 1-based index of the leader (fails
#                                  unless exactly one member says Mode: leader)
#   ensemble.sh wait-leader DIR    wait until exactly one leader, print its index
#   ensemble.sh kill DIR N         SIGKILL member N and wait until it is gone
#   ensemble.sh restart DIR N [--no-wait]
#                                  start member N again (same config and data) and,
#                                  unless --no-wait, wait until it serves again
#   ensemble.sh pause DIR N        SIGSTOP member N
#   ensemble.sh resume DIR N       SIGCONT member N
#   ensemble.sh pid DIR N          print the pid of member N (fails if not running)
#   ensemble.sh ps DIR             one line per member: "zkI process pid PID", or
#                                  with the container backend "zkI container NAME
#                                  ID STATE pid PID" as the engine lists it
#   ensemble.sh srvr HOST PORT     print a server's reply to the `srvr` 4lw command
#   ensemble.sh cgroup DIR N       print member N's cpu cgroup directory (ensembles
#                                  started with --cpu-quota)
#   ensemble.sh cpu-quota-check    exit 0 when --cpu-quota can work here; else print
#                                  why on stderr and exit 1 (callers that want to
#                                  fall back to a shared host ask this first)
# Proxied ensembles only:
#   ensemble.sh fault DIR COMMAND...
#                                  send one faultproxy control command, print
#                                  the reply (one line per link of a group)
#   ensemble.sh slow DIR N MS JITTER
#                                  delay every link touching member N, both
#                                  directions, by MS +- JITTER ms
#   ensemble.sh heal DIR N|all     clear every fault of member N's links (all links)
#   ensemble.sh delay-all DIR MS JITTER
#                                  delay every link, both directions
#
# Member i (1..3, or 1..N) binds only 127.0.0.i: client port
# ${ZKR_TEST_PORT:-2181}, quorum 2888, election 3888.  Linux routes all of
# 127.0.0.0/8 to lo, so no interface setup is needed.  Each server line of
# the configs names the member's client address too ("server.i=
# 127.0.0.i:2888:3888[:observer];127.0.0.i:PORT"), so /zookeeper/config
# carries it (docs/membership.md); proxied, that is the real port PORT+10000.
#
# Proxied mode (start --proxied).  One faultproxy process ($FAULTPROXY,
# default ./tests/harness/faultproxy, else the faultproxy next to this script) carries
# all traffic, so a delay on a link emulates a slow member or a slow path
# between two members.  Its links:
#   cI   clients (and srvr) -> member I: listens on the usual 127.0.0.I:PORT,
#        forwards to the server's real client port 127.0.0.I:PORT+10000
#   qIJ  member I -> member J's quorum port: 127.0.0.J:2888+10*I -> :2888
#   eIJ  member I -> member J's election port: 127.0.0.J:3888+10*I -> :3888
# Member I's zoo.cfg names each peer J by its qIJ/eIJ address and itself by
# its real address (ZooKeeper 3.8 binds to its own line and connects to the
# others).  Followers connect to the leader's quorum port, so leader <->
# follower traffic crosses qFL.  Election connections that ZooKeeper turns
# around (a lower id connecting to a higher one is dropped and the higher
# one connects back to the address the lower one announced, its real one)
# bypass the proxy; they carry only votes.
# Group names, accepted wherever a command takes a link name (fault, and so
# slow/heal/delay-all): mI (every link touching member I), pIJ (qIJ qJI eIJ
# eJI), clients, peers, all.  The control socket's address is in
# DIR/ensemble.env (control=...), the proxy's pid in DIR/faultproxy.pid and
# its log in DIR/faultproxy.log.
#
# CPU quota (start --cpu-quota CPUS).  On one host every server shares
# every core; in production each has a machine of its own.  With
# --cpu-quota, member I's JVM runs in a cgroup of its own, CGROUP/zkI, under
# the cgroup v1 cpu controller, with cpu.cfs_quota_us = CPUS x
# cpu.cfs_period_us: it gets at most CPUS cores' worth of time per period,
# whatever the others do.  CGROUP is MOUNT/zkroute.NAME.SUM (MOUNT: the cpu
# controller's mount point from /proc/self/mountinfo, or
# ZKR_TEST_CPU_CGROUP; NAME, SUM: DIR's base name and checksum).  The shell
# that launches a member writes its own pid to cgroup.procs right before it
# execs java, so every JVM thread is born inside; launch then checks every
# thread (/proc/PID/task/*/cgroup) and fails if one is elsewhere.
# DIR/ensemble.env keeps cpu_quota= and cgroup=, so restart and join put the
# new process in the same cgroup (made again if it is gone, quota written
# again); stop removes the cgroups.  No writable v1 cpu controller (cgroup
# v2 alone is not supported): start fails with one line before it starts
# anything; `cpu-quota-check` says the same without starting.  Java 17
# sees the quota (container support): it sizes its pools for ceil(CPUS)
# processors.
#
# Container backend (ZKR_TEST_BACKEND=containers at start; kept in
# DIR/ensemble.env as backend=, engine=, image=, which later commands
# follow).  Wherever a member's server process would start, the same server
# starts as a container of the ZooKeeper image (docker/zookeeper.Dockerfile,
# built by docker/build-image.sh server): `ENGINE run -d --network host`,
# DIR bind-mounted at its own path and the member's directory as working
# directory, running `sh -c 'exec java ... QuorumPeerMain DIR/zkI/zoo.cfg'`
# with the image's Java and jars and the JVM options above, its output
# appended to DIR/zkI/server.log.  So zoo.cfg, the data and the logs are
# the ones this script writes, on the host, and with the host's network
# the proxied mode works unchanged: the fault proxy runs on the host and
# the members' zoo.cfg name its addresses.  The container id is kept in
# DIR/zkI/cid, the pid of its main process (as the host sees it) in
# DIR/zkI/pid, so `pid` and the running checks are the same as for
# processes; names are zkr-DIRNAME-CKSUM-zkI, labels zkroute.ensemble=DIR
# and ZKR_TEST_CONTAINER_LABEL.  kill = `ENGINE kill -s KILL` (a paused
# member is thawed after it, and dies without running), then wait until
# the pid is gone and the engine says so; restart = `ENGINE start` of the
# same container; pause/resume = `ENGINE pause/unpause` (cgroup freezer;
# resume also sends SIGCONT through the engine when a test stopped the
# process itself); stop = `ENGINE rm -f -t 2` of the recorded ids; join
# creates the new member's container.  Containers are only ever addressed
# by the ids recorded in DIR.  Not with --cpu-quota.  Measured here at
# load average 6-7: start --proxied 5.6 s, kill 0.3-0.7 s, restart until
# serving 2.5-3 s, pause 1.4 s, resume 0.2 s (1 s after a SIGSTOP), stop
# 0.9 s.
#
# Environment:
#   ZKR_TEST_BACKEND    processes (default) or containers: how `start` runs
#                       the members (see "Container backend")
#   ZKR_TEST_IMAGE      container backend: the server image (default
#                       ${ZKR_IMAGE_PREFIX:-zkroute}-zookeeper)
#   ZKR_TEST_CONTAINER_LABEL  container backend: one more label KEY=VALUE
#                       for every member container (scripts/container-tests.sh
#                       counts and cleans up its own by it)
#   ZKR_TEST_ENSEMBLE   connect string of an existing ensemble (e.g. docker):
#                       start prints it (after waiting for a leader) and starts
#                       nothing, stop does nothing; kill/restart/pause/resume/pid
#                       exit 77 (automake "skip") unless ZKR_TEST_CONTAINERS
#                       is set; join, cgroup and the proxy's commands always
#                       do.  hosts, leader, wait-leader and srvr work against it.
#   ZKR_TEST_CONTAINERS with ZKR_TEST_ENSEMBLE: the ids (or names) of the
#                       members' containers, comma separated, in the order of
#                       the connect string (docker/containers.sh).  Container
#                       mode: kill, restart, pause, resume and pid act on
#                       them through the container engine (see "Containers")
#   ZKR_TEST_ENGINE     container mode and backend: the engine's command
#                       (default podman, with docker/containers.conf unless
#                       CONTAINERS_CONF is set; docker works the same)
#   ZKR_TEST_ENGINE_SOCKET  container mode: a Docker-compatible API socket
#                       (dockerd's, or `podman system service`'s) used with
#                       curl instead of ZKR_TEST_ENGINE: from inside a container
#   ZKR_TEST_PORT       client port (default 2181)
#   ZKR_TEST_NET        first three octets of the member addresses (default
#                       127.0.0) — e.g. 127.0.1 to run a second ensemble at once
#   ZKR_TEST_TIMEOUT    deadline in seconds for start/restart/wait-leader (60)
#   ZKR_TEST_SRVR_TIMEOUT  per-srvr-query timeout in seconds (2)
#   ZKR_TEST_JAVA       java binary (default: java)
#   ZKR_TEST_JAVA_OPTS  extra JVM options (word-split)
#   ZKR_TEST_ZOO_CFG    extra zoo.cfg lines, ';'-separated, written at start
#                       (e.g. localSessionsEnabled=true, which a server in
#                       readonlymode needs to take read-only clients: 3.8.0
#                       closes their connections otherwise, "ZooKeeperServer
#                       not running")
#   ZKR_TEST_JARDIR     where the jars live (default /usr/share/java)
#   ZKR_TEST_CLASSPATH  full classpath, overrides the jar list below
#   FAULTPROXY          the faultproxy binary of --proxied (default
#                       ./tests/harness/faultproxy, else next to this script)
#   ZKR_TEST_CPU_CGROUP mount point of the cgroup v1 cpu controller for
#                       --cpu-quota (default: found in /proc/self/mountinfo)
#
# Measured here (2 vCPU, 24 GB, Debian 12, OpenJDK 17.0.15, ZooKeeper 3.8.0;
# 6 timed runs plus 20+ selftest runs): `start` from a fresh DIR to the connect
# string on stdout takes 1.0-1.2 s (1.4 s on the very first, cold run);
# `kill` of the leader then `wait-leader` 0.3-0.45 s; `restart` of a killed
# member until it serves 0.3-0.4 s; `stop` about 0.4 s.  A DIR uses ~150 KB
# (the 1 MB preallocated txn log is sparse).  `start --proxied` takes
# 1.2-1.7 s.  tests/harness/ensemble-selftest.sh, which runs both modes, takes
# about 10 s, and 25-30 s with its --cpu-quota part (JVMs capped at half a
# core start in 2-3.5 s).
#
# ZooKeeper notes:
# - maxClientCnxns=0: all test sessions come from 127.0.0.1 and zkroute opens
#   one session per member per handle; the default per-IP limit (60) is easy
#   to hit and shows up as connections closed right after accept.
# - A SIGSTOPped server still completes TCP handshakes (the kernel does), so
#   srvr/connect do not fail fast against it: every query here has a timeout.
# - srvr only has a "Mode:" line once the server serves (in a quorum, synced);
#   otherwise it answers "This ZooKeeper instance is not currently serving
#   requests".  start/restart/wait-leader rely on that.
# - At WARN, the servers still log "Connection broken ... EOFException" stack
#   traces during every election (duplicate election connections being
#   dropped): harmless.
#
# Containers of an external ensemble (ZKR_TEST_ENSEMBLE +
# ZKR_TEST_CONTAINERS, docker/containers.sh; not the container backend
# above, whose ensembles this script starts itself).  Member N is the
# Nth container: kill = `ENGINE kill -s KILL` (POST /containers/ID/kill
# ?signal=KILL), then wait until it is no longer running; restart = `ENGINE
# start` of the killed container (same config, same data in its writable
# layer), then wait until it serves; pause/resume = `ENGINE pause/unpause`
# (the cgroup freezer: every thread is frozen when the engine returns, and as
# with SIGSTOP the kernel still completes TCP handshakes); pid = the
# container's main pid while it runs or is paused.  Containers are only ever
# addressed by the ids given, never by name patterns.
#
# Servers are tracked by pid files and only ever signalled by pid, after
# checking that the pid is still a java process started with that member's
# zoo.cfg (guards against pid reuse); with the container backend, through
# the engine by the container ids recorded.  Nothing is ever killed by name.
set -euo pipefail

N_MEMBERS=3    # --members; kept in DIR/ensemble.env
OBSERVERS=''   # --observers, space separated
RECONFIG=0     # --reconfig
CPU_QUOTA=''   # --cpu-quota CPUS; kept in DIR/ensemble.env
CGROUP=''      # with --cpu-quota: the ensemble's cgroup directory (ensemble.env)
CGROUP_PROC='' # ... and that cgroup as /proc/PID/cgroup names it
# The backend (see "Container backend"); `start` keeps all three in
# DIR/ensemble.env, which later commands follow.
BACKEND=${ZKR_TEST_BACKEND:-processes}
ENGINE=${ZKR_TEST_ENGINE:-podman}
IMAGE=${ZKR_TEST_IMAGE:-${ZKR_IMAGE_PREFIX:-zkroute}-zookeeper}
readonly SUPER_DIGEST='super:16OKu1uo6VC26GknztQhHbpbUcA=' # super:zkroute-test
readonly QUORUM_PORT=2888
readonly ELECTION_PORT=3888
readonly REAL_CLIENT_OFFSET=10000 # proxied: server's client port = PORT + this
readonly PEER_PORT_STEP=10        # proxied: qIJ/eIJ listen on port + this * I
PROG=${0##*/}
TIMEOUT=${ZKR_TEST_TIMEOUT:-60}
SRVR_TIMEOUT=${ZKR_TEST_SRVR_TIMEOUT:-2}
STOP_GRACE=5 # seconds between SIGTERM and SIGKILL

die() {
	printf '%s: %s\n' "$PROG" "$*" >&2
	exit 1
}

# The usage text: the header from "Usage:" to the first empty comment line.
usage() {
	awk 'NR > 3 && /^#$/ { exit } NR >= 3 { sub(/^# ?/, ""); print }' "$0" >&2
	exit 2
}

need_fault_injection() {
	if [[ -n ${ZKR_TEST_ENSEMBLE:-} ]]; then
		case $1 in
		kill | restart | pause | resume | pid) [[ -z ${ZKR_TEST_CONTAINERS:-} ]] || return 0 ;;
		esac
		printf '%s: %s is not available with ZKR_TEST_ENSEMBLE=%s (external ensemble)\n' \
			"$PROG" "$1" "$ZKR_TEST_ENSEMBLE" >&2
		exit 77
	fi
}

# ---------------------------------------------------------------------------
# srvr

# srvr_query HOST PORT: print the server's srvr reply (capped at 64 KiB).
# Fails when the connection is refused, nothing comes back, or the server
# does not answer within SRVR_TIMEOUT (a SIGSTOPped server still accepts the
# TCP connection in the kernel but never replies).
srvr_query() {
	local out
	# shellcheck disable=SC2016 # $1/$2 expand in the inner bash
	out=$(timeout "$SRVR_TIMEOUT" "$BASH" -c '
		exec 3<>"/dev/tcp/$1/$2" || exit 1
		printf srvr >&3
		head -c 65536 <&3' _ "$1" "$2" 2>/dev/null) || true
	[[ -n $out ]] || return 1
	printf '%s\n' "$out"
}

# mode_of HOST PORT: print leader/follower/observer/standalone, or nothing.
mode_of() {
	local reply line
	reply=$(srvr_query "$1" "$2") || return 0
	while IFS= read -r line; do
		line=${line%$'\r'}
		if [[ $line == Mode:* ]]; then
			line=${line#Mode:}
			printf '%s\n' "${line# }"
			return 0
		fi
	done <<<"$reply"
}

# ---------------------------------------------------------------------------
# member addressing

# Fills the global arrays M_HOST / M_PORT (index 1..n) for the ensemble in
# DIR, or for ZKR_TEST_ENSEMBLE.
load_members() {
	local dir=$1 net port i hp k v
	M_HOST=() M_PORT=()
	if [[ -n ${ZKR_TEST_ENSEMBLE:-} ]]; then
		local list=${ZKR_TEST_ENSEMBLE%%/*} # drop a chroot
		local -a parts
		IFS=, read -r -a parts <<<"$list"
		i=0
		for hp in "${parts[@]}"; do
			[[ -n $hp ]] || continue
			i=$((i + 1))
			if [[ $hp == \[*\]:* ]]; then # [v6]:port
				M_HOST[i]=${hp%%]*}
				M_HOST[i]=${M_HOST[i]#[}
				M_PORT[i]=${hp##*]:}
			elif [[ $hp == \[*\] ]]; then
				M_HOST[i]=${hp:1:${#hp}-2}
				M_PORT[i]=2181
			elif [[ $hp == *:* ]]; then
				M_HOST[i]=${hp%:*}
				M_PORT[i]=${hp##*:}
			else
				M_HOST[i]=$hp
				M_PORT[i]=2181
			fi
		done
		((i > 0)) || die "ZKR_TEST_ENSEMBLE has no hosts: '$ZKR_TEST_ENSEMBLE'"
		return 0
	fi
	net=${ZKR_TEST_NET:-127.0.0}
	port=${ZKR_TEST_PORT:-2181}
	# The values used by `start` win over the environment of later calls.
	MODE=plain FP_CONTROL=''
	if [[ -r $dir/ensemble.env ]]; then
		while IFS='=' read -r k v; do
			case $k in
			net) net=$v ;;
			port) port=$v ;;
			mode) MODE=$v ;;
			control) FP_CONTROL=$v ;;
			members) N_MEMBERS=$v ;;
			observers) OBSERVERS=$v ;;
			reconfig) RECONFIG=$v ;;
			cpu_quota) CPU_QUOTA=$v ;;
			backend) BACKEND=$v ;;
			engine) ENGINE=$v ;;
			image) IMAGE=$v ;;
			cgroup) CGROUP=$v ;;
			cgroup_proc) CGROUP_PROC=$v ;;
			esac
		done <"$dir/ensemble.env"
	fi
	for ((i = 1; i <= N_MEMBERS; i++)); do
		M_HOST[i]=$net.$i
		M_PORT[i]=$port
	done
}

connect_string() {
	local i out=''
	for i in "${!M_HOST[@]}"; do
		if [[ ${M_HOST[i]} == *:* ]]; then
			out+=${out:+,}[${M_HOST[i]}]:${M_PORT[i]}
		else
			out+=${out:+,}${M_HOST[i]}:${M_PORT[i]}
		fi
	done
	printf '%s\n' "$out"
}

# Poll all members once, in parallel (a paused member costs SRVR_TIMEOUT once,
# not once per member).  Sets LEADERS (count), LEADER (index of the last
# leader seen), SERVING (members that report any Mode) and MODES (summary).
poll_members() {
	local i m tmp
	local -a jobs=()
	if [[ -z $POLL_TMP ]]; then
		POLL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/zkr-ens-poll.XXXXXX")
	fi
	tmp=$POLL_TMP
	for i in "${!M_HOST[@]}"; do
		mode_of "${M_HOST[i]}" "${M_PORT[i]}" >"$tmp/$i" &
		jobs+=("$!")
	done
	# Wait for these jobs only: in `start` the servers are children too.
	wait "${jobs[@]}" || true
	LEADERS=0 LEADER=0 SERVING=0 MODES=''
	for i in "${!M_HOST[@]}"; do
		m=$(<"$tmp/$i")
		MODES+="${MODES:+ }$i=${m:-down}"
		[[ -n $m ]] || continue
		SERVING=$((SERVING + 1))
		if [[ $m == leader ]]; then
			LEADERS=$((LEADERS + 1))
			LEADER=$i
		fi
	done
}

# ---------------------------------------------------------------------------
# processes

# pid_alive PID: the process exists and is not a zombie (a killed server
# whose parent does not reap it stays a zombie; it is gone for our purposes).
pid_alive() {
	local stat
	[[ $1 =~ ^[0-9]+$ ]] || return 1
	# Not stat=$(<file): with set -e, bash 5.2 exits the whole script when
	# that redirection fails, even in a `|| return` context.
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != [ZX] ]]
}

# is_member_proc PID CFG: PID is alive and was started with CFG as argument.
is_member_proc() {
	local arg
	pid_alive "$1" || return 1
	while IFS= read -r -d '' arg; do
		[[ $arg == "$2" ]] && return 0
	done 2>/dev/null <"/proc/$1/cmdline"
	return 1
}

member_dir() { printf '%s/zk%s\n' "$1" "$2"; }

# member_pid DIR I: print the pid of running member I, fail if not running.
member_pid() {
	local mdir pid
	mdir=$(member_dir "$1" "$2")
	[[ -s $mdir/pid ]] || return 1
	pid=$(<"$mdir/pid")
	is_member_proc "$pid" "$mdir/zoo.cfg" || return 1
	printf '%s\n' "$pid"
}

# wait_gone PID SECONDS: wait until PID is gone; fail on timeout.
wait_gone() {
	local pid=$1 end=$((SECONDS + $2))
	while pid_alive "$pid"; do
		((SECONDS < end)) || return 1
		sleep 0.05
	done
}

# classpath [nocheck]: the server's classpath; nocheck: the jars are not
# looked for here (they are in the image, container backend).
classpath() {
	if [[ -n ${ZKR_TEST_CLASSPATH:-} ]]; then
		printf '%s\n' "$ZKR_TEST_CLASSPATH"
		return
	fi
	local jd=${ZKR_TEST_JARDIR:-/usr/share/java} j cp=''
	[[ ${1:-} != nocheck ]] || jd=/usr/share/java # the image's
	# zookeeper.jar's manifest also names jetty/jackson (admin server, off
	# here) and jline (CLI only); the server needs the jars below.  The
	# Debian manifest lacks netty-resolver/codec/unix-common, which netty's
	# epoll transport needs at run time, hence the explicit list.
	for j in zookeeper zookeeper-jute slf4j-api slf4j-simple \
		netty-handler netty-transport netty-common netty-buffer \
		netty-resolver netty-codec netty-transport-native-epoll \
		netty-transport-native-unix-common commons-cli metrics-core \
		snappy-java; do
		[[ ${1:-} == nocheck || -r $jd/$j.jar ]] || die "missing $jd/$j.jar (apt-get install zookeeper libslf4j-java; or set ZKR_TEST_CLASSPATH)"
		cp+=${cp:+:}$jd/$j.jar
	done
	printf '%s\n' "$cp"
}

# Do not leak the caller's descriptors (make's jobserver pipe, a $(...)
# capture pipe, a test driver's log) into a server or the proxy: a leaked
# pipe would keep `x=$(ensemble.sh start d)` waiting forever.  Run in the
# subshell that is about to exec.
close_fds() {
	local fd
	for fd in /proc/"$BASHPID"/fd/*; do
		fd=${fd##*/}
		if ((fd > 2)); then
			eval "exec $fd>&-" 2>/dev/null || true
		fi
	done
}

# launch_member DIR I: start member I in the background, write its pid file.
launch_member() {
	[[ $BACKEND != containers ]] || {
		ctr_launch_member "$@"
		return
	}
	local dir=$1 i=$2 mdir cp java=${ZKR_TEST_JAVA:-java} cg='' bad
	local -a extra=()
	mdir=$(member_dir "$dir" "$i")
	cp=$(classpath)
	[[ -z $CPU_QUOTA ]] || cg=$(cgroup_member_setup "$i")
	command -v "$java" >/dev/null || die "java not found (apt-get install default-jre-headless)"
	# shellcheck disable=SC2206 # word splitting of extra options is intended
	[[ -z ${ZKR_TEST_JAVA_OPTS:-} ]] || extra=($ZKR_TEST_JAVA_OPTS)
	printf '=== %s: starting member %s\n' "$(date '+%F %T')" "$i" >>"$mdir/server.log"
	(
		# Into the member's cgroup before exec: every JVM thread is born there.
		if [[ -n $cg ]] && ! { printf '%s\n' "$BASHPID" >"$cg/cgroup.procs"; } 2>/dev/null; then
			printf 'cannot join cgroup %s\n' "$cg" >&2
			exit 1
		fi
		close_fds
		cd "$mdir"
		# A session of its own: a test runner that kills its process group
		# (Check does, after each forked test) must not take the server along.
		exec setsid "$java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
			-XX:-UsePerfData -Xss512k \
			-Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
			-Dorg.slf4j.simpleLogger.showDateTime=true \
			-Dorg.slf4j.simpleLogger.dateTimeFormat='HH:mm:ss.SSS' \
			-Dzookeeper.admin.enableServer=false \
			"${extra[@]}" \
			-cp "$cp" org.apache.zookeeper.server.quorum.QuorumPeerMain "$mdir/zoo.cfg"
	) </dev/null >>"$mdir/server.log" 2>&1 &
	local pid=$! end=$((SECONDS + 5))
	printf '%s\n' "$pid" >"$mdir/pid"
	# Return once the subshell has exec'd java, so that the pid checks of
	# later calls (pid, kill, stop) recognise the process at once.
	while pid_alive "$pid" && ! is_member_proc "$pid" "$mdir/zoo.cfg"; do
		((SECONDS < end)) || break
		sleep 0.01
	done
	if [[ -n $cg ]] && is_member_proc "$pid" "$mdir/zoo.cfg"; then
		bad=$(cgroup_check_threads "$pid" "$CGROUP_PROC/zk$i") ||
			die "member $i (pid $pid) is not in its cgroup $cg: $bad"
	fi
}

# is_observer I: member I was started as an observer (--observers).
is_observer() {
	[[ " $OBSERVERS " == *" $1 "* ]]
}

# server_line J NET PORT MODE I: the "server.J=..." line of member I's
# config.  Proxied: member I names each peer J by the proxy address of link
# qIJ/eIJ.  The client address after ';' is where J's server listens.
server_line() {
	local j=$1 net=$2 port=$3 mode=$4 i=$5 q=$QUORUM_PORT e=$ELECTION_PORT role=''
	if [[ $mode == proxied ]]; then
		port=$((port + REAL_CLIENT_OFFSET))
		if [[ $j != "$i" ]]; then
			q=$((QUORUM_PORT + PEER_PORT_STEP * i)) e=$((ELECTION_PORT + PEER_PORT_STEP * i))
		fi
	fi
	if is_observer "$j"; then
		role=:observer
	elif ((RECONFIG)); then
		role=:participant
	fi
	printf 'server.%d=%s.%d:%d:%d%s;%s.%d:%d\n' "$j" "$net" "$j" "$q" "$e" "$role" "$net" "$j" "$port"
}

# write_config DIR I NET PORT MODE [JOIN]: member I's zoo.cfg.  Proxied: the
# server listens for clients on PORT + REAL_CLIENT_OFFSET.  Reconfig
# ensembles keep the server lines in zoo.cfg.dynamic (ZooKeeper rewrites it
# on every reconfiguration); with JOIN, that file is the current ensemble's
# (read from member 1's latest dynamic file) plus member I as participant.
write_config() {
	local dir=$1 i=$2 net=$3 port=$4 mode=$5 join=${6:-} mdir j real=$4 f
	mdir=$(member_dir "$dir" "$i")
	[[ $mode != proxied ]] || real=$((port + REAL_CLIENT_OFFSET))
	mkdir -p "$mdir/data"
	printf '%s\n' "$i" >"$mdir/data/myid"
	{
		printf '%s\n' \
			'# generated by tests/harness/ensemble.sh' \
			'tickTime=200' \
			'initLimit=10' \
			'syncLimit=5' \
			"dataDir=$mdir/data"
		if ((RECONFIG)); then
			printf '%s\n' \
				'reconfigEnabled=true' \
				'standaloneEnabled=false' \
				"DigestAuthenticationProvider.superDigest=$SUPER_DIGEST" \
				"dynamicConfigFile=$mdir/zoo.cfg.dynamic"
		else
			printf '%s\n' \
				"clientPort=$real" \
				"clientPortAddress=$net.$i" \
				'reconfigEnabled=false'
		fi
		! is_observer "$i" || printf 'peerType=observer\n'
		printf '%s\n' \
			'quorumListenOnAllIPs=false' \
			'minSessionTimeout=400' \
			'maxSessionTimeout=60000' \
			'maxClientCnxns=0' \
			'4lw.commands.whitelist=*' \
			'admin.enableServer=false' \
			'preAllocSize=1000' \
			'snapCount=10000' \
			'autopurge.snapRetainCount=3' \
			'autopurge.purgeInterval=0'
		[[ -z ${ZKR_TEST_ZOO_CFG:-} ]] || tr ';' '\n' <<<"$ZKR_TEST_ZOO_CFG"
		if ! ((RECONFIG)); then
			for ((j = 1; j <= N_MEMBERS; j++)); do
				server_line "$j" "$net" "$port" "$mode" "$i"
			done
		fi
	} >"$mdir/zoo.cfg"
	((RECONFIG)) || return 0
	if [[ -n $join ]]; then
		# The newest dynamic file of member 1 holds the current config.
		# shellcheck disable=SC2012 # newest first; the names are zoo.cfg.dynamic[.HEX]
		f=$(ls -t "$(member_dir "$dir" 1)"/zoo.cfg.dynamic* 2>/dev/null | head -n 1)
		[[ -n $f ]] || die "no dynamic config in $(member_dir "$dir" 1)"
		{
			grep '^server\.' "$f" | grep -v "^server\.$i="
			server_line "$i" "$net" "$port" "$mode" "$i"
		} >"$mdir/zoo.cfg.dynamic"
	else
		for ((j = 1; j <= N_MEMBERS; j++)); do
			server_line "$j" "$net" "$port" "$mode" "$i"
		done >"$mdir/zoo.cfg.dynamic"
	fi
}

# port_open HOST PORT: something accepts TCP connections there.
port_open() {
	# shellcheck disable=SC2016 # $1/$2 expand in the inner bash
	timeout 1 "$BASH" -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

log_tails() {
	local dir=$1 mdir
	for mdir in "$dir"/zk[0-9]*; do
		[[ -s $mdir/server.log ]] || continue
		printf -- '--- tail of %s/server.log\n' "$mdir" >&2
		tail -n 15 "$mdir/server.log" >&2
	done
	if [[ -s $dir/faultproxy.log ]]; then
		printf -- '--- tail of %s/faultproxy.log\n' "$dir" >&2
		tail -n 15 "$dir/faultproxy.log" >&2
	fi
}

# stop_members DIR: SIGTERM all, SIGKILL survivors after STOP_GRACE, wait.
stop_members() {
	[[ $BACKEND != containers ]] || {
		ctr_stop_members "$@"
		return
	}
	local dir=$1 i pid mdir rc=0
	local -a pids=() ids=()
	# Every member directory, joined ones too.
	for mdir in "$dir"/zk[0-9]*; do
		[[ -d $mdir ]] && ids+=("${mdir##*/zk}")
	done
	for i in "${ids[@]}"; do
		mdir=$(member_dir "$dir" "$i")
		if pid=$(member_pid "$dir" "$i"); then
			kill -TERM "$pid" 2>/dev/null || true
			kill -CONT "$pid" 2>/dev/null || true # a paused server must run to exit
			pids+=("$pid")
		fi
	done
	local end=$((SECONDS + STOP_GRACE))
	for pid in "${pids[@]}"; do
		wait_gone "$pid" $((end - SECONDS > 0 ? end - SECONDS : 0)) && continue
		kill -KILL "$pid" 2>/dev/null || true
		wait_gone "$pid" 10 || {
			printf '%s: pid %s did not exit after SIGKILL\n' "$PROG" "$pid" >&2
			rc=1
		}
	done
	for i in "${ids[@]}"; do
		rm -f "$(member_dir "$dir" "$i")/pid"
	done
	return "$rc"
}

# ---------------------------------------------------------------------------
# CPU quota: one cpu cgroup per member (see "CPU quota" in the header)

# cpu_cgroup_mount: set CG_MOUNT to the mount point of the cgroup v1 cpu
# controller and CG_ROOT to the hierarchy path mounted there (what
# /proc/PID/cgroup paths start with), or print why there is none on stderr
# and fail.
cpu_cgroup_mount() {
	local line rest opts o mp root
	local -a f os
	CG_MOUNT='' CG_ROOT=''
	if [[ -n ${ZKR_TEST_CPU_CGROUP:-} ]]; then
		if [[ ! -e $ZKR_TEST_CPU_CGROUP/cpu.cfs_quota_us ]]; then
			printf '%s: --cpu-quota: %s is not a cgroup v1 cpu controller (no cpu.cfs_quota_us; from ZKR_TEST_CPU_CGROUP)\n' \
				"$PROG" "$ZKR_TEST_CPU_CGROUP" >&2
			return 1
		fi
		CG_MOUNT=$ZKR_TEST_CPU_CGROUP
		return 0
	fi
	# mountinfo: ID PARENT DEV ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SOURCE SUPEROPTS
	while IFS= read -r line; do
		rest=${line#* - }
		[[ $rest == "cgroup "* ]] || continue
		opts=${rest##* }
		IFS=, read -r -a os <<<"$opts"
		for o in "${os[@]}"; do
			[[ $o == cpu ]] || continue
			read -r -a f <<<"$line"
			root=${f[3]} mp=${f[4]}
			[[ $root != / ]] || root=''
			CG_MOUNT=$mp CG_ROOT=$root
			break 2
		done
	done </proc/self/mountinfo
	if [[ -z $CG_MOUNT ]]; then
		printf '%s: --cpu-quota: no cgroup v1 cpu controller is mounted here (none in /proc/self/mountinfo; cgroup v2 alone is not supported)\n' \
			"$PROG" >&2
		return 1
	fi
	if [[ ! -e $CG_MOUNT/cpu.cfs_quota_us ]]; then
		printf '%s: --cpu-quota: %s has no cpu.cfs_quota_us (CFS bandwidth control is not in this kernel)\n' \
			"$PROG" "$CG_MOUNT" >&2
		return 1
	fi
}

# cpu_quota_check: the cpu controller is there and a cgroup with a quota
# can be made in it (a probe cgroup, removed at once); else say why.
cpu_quota_check() {
	local probe
	cpu_cgroup_mount || return 1
	probe=$CG_MOUNT/zkroute.probe.$$
	if ! mkdir "$probe" 2>/dev/null; then
		printf '%s: --cpu-quota: cannot create a cgroup in %s (not writable: run as root, or delegate it)\n' \
			"$PROG" "$CG_MOUNT" >&2
		return 1
	fi
	if ! { printf '%s\n' 100000 >"$probe/cpu.cfs_quota_us"; } 2>/dev/null; then
		rmdir "$probe" 2>/dev/null || true
		printf '%s: --cpu-quota: cannot set cpu.cfs_quota_us in %s\n' "$PROG" "$CG_MOUNT" >&2
		return 1
	fi
	rmdir "$probe" 2>/dev/null || true
}

# check_cpus CPUS: CPUS is a number of cores, 0 < CPUS <= 1024.
check_cpus() {
	if ! [[ $1 =~ ^([0-9]+(\.[0-9]*)?|\.[0-9]+)$ ]] ||
		! awk -v c="$1" 'BEGIN { exit !(c > 0 && c <= 1024) }'; then
		die "--cpu-quota needs a number of cores, 0 < CPUS <= 1024 (e.g. 0.35), got '$1'"
	fi
}

# quota_us CG: print cpu.cfs_quota_us for CPU_QUOTA cores in cgroup CG
# (CPU_QUOTA x its cpu.cfs_period_us); die if below the kernel's 1 ms.
quota_us() {
	local period quota
	period=$(<"$1/cpu.cfs_period_us") || die "--cpu-quota: cannot read $1/cpu.cfs_period_us"
	quota=$(awk -v c="$CPU_QUOTA" -v p="$period" 'BEGIN { printf "%d", c * p + 0.5 }')
	((quota >= 1000)) ||
		die "--cpu-quota $CPU_QUOTA is too small: $quota us per $period us period (the kernel's minimum is 1000 us)"
	printf '%s\n' "$quota"
}

# cgroup_member_setup I: make member I's cgroup (if gone) and write its
# quota.  Prints the cgroup directory.
cgroup_member_setup() {
	local cg=$CGROUP/zk$1 quota
	[[ -d $cg ]] || mkdir -p "$cg" || die "--cpu-quota: cannot create cgroup $cg"
	quota=$(quota_us "$cg")
	{ printf '%s\n' "$quota" >"$cg/cpu.cfs_quota_us"; } 2>/dev/null ||
		die "--cpu-quota: cannot write $quota to $cg/cpu.cfs_quota_us"
	printf '%s\n' "$cg"
}

# cpu_cgroup_of FILE: print the cpu controller's cgroup path in FILE (a
# /proc/.../cgroup file); fail if FILE cannot be read or has none.
cpu_cgroup_of() {
	local ctl path c
	local -a cs
	while IFS=: read -r _ ctl path; do
		IFS=, read -r -a cs <<<"$ctl"
		for c in "${cs[@]}"; do
			if [[ $c == cpu ]]; then
				printf '%s\n' "$path"
				return 0
			fi
		done
	done 2>/dev/null <"$1"
	return 1
}

# cgroup_check_threads PID WANT: every thread of PID is in cpu cgroup WANT
# (as /proc names it).  Threads that exit meanwhile are skipped.  On
# failure prints the first thread found elsewhere.
cgroup_check_threads() {
	local t got n=0
	for t in /proc/"$1"/task/*; do
		got=$(cpu_cgroup_of "$t/cgroup") || continue
		n=$((n + 1))
		if [[ $got != "$2" ]]; then
			printf 'thread %s is in cpu cgroup %s' "${t##*/}" "$got"
			return 1
		fi
	done
	((n > 0)) || { printf 'no thread of pid %s could be read' "$1"; return 1; }
}

# cgroup_remove: remove the ensemble's cgroups (after its members exited;
# a cgroup with a task left cannot be removed, so wait up to 5 s for the
# kernel to let go of exiting tasks).
cgroup_remove() {
	local d end rc=0
	[[ -n $CGROUP && -d $CGROUP ]] || return 0
	for d in "$CGROUP"/zk[0-9]* "$CGROUP"; do
		[[ -d $d ]] || continue
		end=$((SECONDS + 5))
		until rmdir "$d" 2>/dev/null; do
			if ((SECONDS >= end)); then
				printf '%s: cannot remove cgroup %s (tasks: %s)\n' "$PROG" "$d" \
					"$(tr '\n' ' ' <"$d/cgroup.procs" 2>/dev/null)" >&2
				rc=1
				break
			fi
			sleep 0.05
		done
	done
	return "$rc"
}

# ---------------------------------------------------------------------------
# the fault proxy of a proxied ensemble

# fp_bin: print the faultproxy binary to use.
fp_bin() {
	local b=${FAULTPROXY:-}
	if [[ -z $b ]]; then
		b=./tests/harness/faultproxy
		[[ -x $b ]] || b=$(dirname "$0")/faultproxy
	fi
	[[ -x $b ]] || die "faultproxy not found at '$b' (make tests/harness/faultproxy, or set FAULTPROXY)"
	printf '%s\n' "$b"
}

# proxy_layout NET PORT: fills LINK_ARGS (the --link arguments) and
# PROXY_PORTS ("host port" of every proxy listener).
proxy_layout() {
	local net=$1 port=$2 i j
	LINK_ARGS=() PROXY_PORTS=()
	for ((i = 1; i <= N_MEMBERS; i++)); do
		LINK_ARGS+=(--link "c$i=$net.$i:$port=$net.$i:$((port + REAL_CLIENT_OFFSET))")
		PROXY_PORTS+=("$net.$i $port")
	done
	for ((i = 1; i <= N_MEMBERS; i++)); do
		for ((j = 1; j <= N_MEMBERS; j++)); do
			((i != j)) || continue
			LINK_ARGS+=(--link "q$i$j=$net.$j:$((QUORUM_PORT + PEER_PORT_STEP * i))=$net.$j:$QUORUM_PORT")
			LINK_ARGS+=(--link "e$i$j=$net.$j:$((ELECTION_PORT + PEER_PORT_STEP * i))=$net.$j:$ELECTION_PORT")
			PROXY_PORTS+=("$net.$j $((QUORUM_PORT + PEER_PORT_STEP * i))")
			PROXY_PORTS+=("$net.$j $((ELECTION_PORT + PEER_PORT_STEP * i))")
		done
	done
}

# launch_proxy DIR NET PORT: start the proxy, wait for its "ready", record
# its control address in DIR/ensemble.env.  The control socket takes a free
# port on NET.1, so that concurrent ensembles never clash on it.
launch_proxy() {
	local dir=$1 net=$2 port=$3 bin line control='' end
	bin=$(fp_bin)
	proxy_layout "$net" "$port"
	printf '=== %s: starting faultproxy\n' "$(date '+%F %T')" >>"$dir/faultproxy.log"
	(
		close_fds
		exec setsid "$bin" --control "$net.1:0" "${LINK_ARGS[@]}" --pidfile "$dir/faultproxy.pid"
	) </dev/null >"$dir/faultproxy.out" 2>>"$dir/faultproxy.log" &
	FP_PID=$!
	end=$((SECONDS + 10))
	while :; do
		if [[ -s $dir/faultproxy.out ]]; then
			while IFS= read -r line; do
				case $line in
				"control "*) control=${line#control } ;;
				ready)
					[[ -n $control ]] || die "faultproxy printed no control address"
					printf 'control=%s\n' "$control" >>"$dir/ensemble.env"
					return 0
					;;
				esac
			done <"$dir/faultproxy.out"
		fi
		if ! pid_alive "$FP_PID"; then
			tail -n 15 "$dir/faultproxy.log" >&2
			die "faultproxy exited during startup (log: $dir/faultproxy.log)"
		fi
		((SECONDS < end)) || die "faultproxy not ready after 10 s (log: $dir/faultproxy.log)"
		sleep 0.02
	done
}

# stop_proxy DIR: SIGTERM the proxy (it exits cleanly), SIGKILL after
# STOP_GRACE.  Only a process started with DIR's pid file is signalled.
stop_proxy() {
	local dir=$1 pid=${FP_PID:-}
	[[ ! -s $dir/faultproxy.pid ]] || pid=$(<"$dir/faultproxy.pid")
	if [[ -n $pid ]] && is_member_proc "$pid" "$dir/faultproxy.pid"; then
		kill -TERM "$pid" 2>/dev/null || true
		if ! wait_gone "$pid" "$STOP_GRACE"; then
			kill -KILL "$pid" 2>/dev/null || true
			wait_gone "$pid" 10 || {
				printf '%s: faultproxy pid %s did not exit after SIGKILL\n' "$PROG" "$pid" >&2
				return 1
			}
		fi
	fi
	rm -f "$dir/faultproxy.pid"
	FP_PID=''
}

# expand_links NAME: print the links a group name stands for, one a line
# (any other name is printed as it is: the proxy judges it).
expand_links() {
	local name=$1 i j
	case $name in
	all)
		expand_links clients
		expand_links peers
		;;
	clients)
		for ((i = 1; i <= N_MEMBERS; i++)); do printf 'c%d\n' "$i"; done
		;;
	peers)
		for ((i = 1; i <= N_MEMBERS; i++)); do
			for ((j = 1; j <= N_MEMBERS; j++)); do
				((i == j)) || printf 'q%d%d\ne%d%d\n' "$i" "$j" "$i" "$j"
			done
		done
		;;
	m[0-9])
		i=${name#m}
		((i >= 1 && i <= N_MEMBERS)) || die "no member $i in group name '$name'"
		printf 'c%d\n' "$i"
		for ((j = 1; j <= N_MEMBERS; j++)); do
			((i == j)) || printf 'q%d%d\nq%d%d\ne%d%d\ne%d%d\n' "$i" "$j" "$j" "$i" "$i" "$j" "$j" "$i"
		done
		;;
	p[0-9][0-9])
		i=${name:1:1} j=${name:2:1}
		((i != j && i >= 1 && i <= N_MEMBERS && j >= 1 && j <= N_MEMBERS)) ||
			die "group '$name' needs two different members 1..$N_MEMBERS"
		printf 'q%d%d\nq%d%d\ne%d%d\ne%d%d\n' "$i" "$j" "$j" "$i" "$i" "$j" "$j" "$i"
		;;
	*) printf '%s\n' "$name" ;;
	esac
}

# fp_session LINE...: send each line on fd 3, print each reply; fails when
# a reply is not "ok ..." or does not come within 5 s.
fp_session() {
	local line reply rc=0
	for line in "$@"; do
		printf '%s\n' "$line" >&3
		if ! IFS= read -r -t 5 reply <&3; then
			printf '%s: faultproxy: no reply to: %s\n' "$PROG" "$line" >&2
			return 1
		fi
		printf '%s\n' "$reply"
		[[ $reply == ok* ]] || rc=1
	done
	return "$rc"
}

# fault_control DIR: sets FP_CONTROL of a running proxied ensemble, or dies.
fault_control() {
	[[ -d $1 ]] || die "no such ensemble directory: $1"
	load_members "$1"
	[[ $MODE == proxied && -n $FP_CONTROL ]] ||
		die "the ensemble in $1 is not proxied (start it with: $PROG start DIR --proxied)"
}

# send_fault COMMAND ARGS...: one control command; a group name in the link
# position is expanded to one command per link.  Prints every reply.
send_fault() {
	local cmd=$1 l line names rc=0
	local -a lines=()
	case $cmd in
	delay | blackhole | hold | reset | refuse | clear | stats | del)
		if (($# >= 2)); then
			names=$(expand_links "$2") || exit 1
			while IFS= read -r l; do
				line="$cmd $l"
				(($# <= 2)) || line+=" ${*:3}"
				lines+=("$line")
			done <<<"$names"
		else
			lines=("$*")
		fi
		;;
	*) lines=("$*") ;;
	esac
	if ! { exec 3<>"/dev/tcp/${FP_CONTROL%:*}/${FP_CONTROL##*:}"; } 2>/dev/null; then
		die "cannot reach the faultproxy control socket at $FP_CONTROL (is the ensemble running?)"
	fi
	fp_session "${lines[@]}" || rc=$?
	exec 3>&-
	return "$rc"
}

cmd_fault() {
	fault_control "$1"
	shift
	send_fault "$@"
}

# quiet_fault COMMAND ARGS...: send_fault, printing the replies only on
# failure (on stderr).
quiet_fault() {
	local out
	if ! out=$(send_fault "$@" 2>&1); then
		printf '%s\n' "$out" >&2
		die "fault command failed: $*"
	fi
}

# ms_arg VALUE WHAT: VALUE is a non-negative decimal number.
ms_arg() {
	[[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$2 must be a number of milliseconds, got '$1'"
}

# ---------------------------------------------------------------------------
# subcommands

START_DIR=''  # set while `start` may have to undo what it started
POLL_TMP=''   # scratch dir of poll_members
FP_PID=''     # the proxy `start` launched
on_exit() {
	local rc=$?
	if [[ -n $START_DIR ]]; then
		stop_members "$START_DIR" || true
		stop_proxy "$START_DIR" || true
		cgroup_remove || true
	fi
	[[ -z $POLL_TMP ]] || rm -rf "$POLL_TMP"
	exit "$rc"
}

cmd_start() {
	local dir=$1 mode=${2:-plain} net=${ZKR_TEST_NET:-127.0.0} port=${ZKR_TEST_PORT:-2181} i end pid
	((N_MEMBERS >= 1 && N_MEMBERS <= 9)) || die "--members must be 1..9, got '$N_MEMBERS'"
	for i in $OBSERVERS; do
		if ! [[ $i =~ ^[1-9]$ ]] || ((i > N_MEMBERS)); then
			die "--observers: no member '$i' (1..$N_MEMBERS)"
		fi
	done
	((!RECONFIG)) || [[ $mode != proxied ]] || die "--reconfig does not go with --proxied"
	if [[ -n $CPU_QUOTA ]]; then
		check_cpus "$CPU_QUOTA"
		[[ -z ${ZKR_TEST_ENSEMBLE:-} ]] ||
			die "--cpu-quota needs a local ensemble (ZKR_TEST_ENSEMBLE is set)"
		cpu_cgroup_mount || exit 1
		quota_us "$CG_MOUNT" >/dev/null
	fi
	case $BACKEND in
	processes) ;;
	containers)
		[[ -z ${ZKR_TEST_ENSEMBLE:-} ]] || die "ZKR_TEST_BACKEND=containers starts an ensemble: not with ZKR_TEST_ENSEMBLE"
		[[ -z $CPU_QUOTA ]] || die "--cpu-quota needs ZKR_TEST_BACKEND=processes"
		ctr_backend_check
		;;
	*) die "ZKR_TEST_BACKEND must be processes or containers, got '$BACKEND'" ;;
	esac
	if [[ -n ${ZKR_TEST_ENSEMBLE:-} ]]; then
		load_members "$dir"
		cmd_wait_leader_external
		printf '%s\n' "$ZKR_TEST_ENSEMBLE"
		return 0
	fi
	[[ $port =~ ^[0-9]+$ ]] || die "ZKR_TEST_PORT is not a number: '$port'"
	[[ $net =~ ^127\.[0-9]+\.[0-9]+$ ]] || die "ZKR_TEST_NET must look like 127.0.0: '$net'"
	if [[ $mode == proxied ]] && ((port + REAL_CLIENT_OFFSET > 65535)); then
		die "ZKR_TEST_PORT must be at most $((65535 - REAL_CLIENT_OFFSET)) with --proxied: '$port'"
	fi
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd -P)
	for ((i = 1; i <= N_MEMBERS; i++)); do
		if pid=$(member_pid "$dir" "$i"); then
			die "member $i in $dir is already running (pid $pid); run: $PROG stop $dir"
		fi
	done
	# Refuse to start over a running ensemble: its srvr answers would make
	# this one look ready.
	local -a busy=()
	for ((i = 1; i <= N_MEMBERS; i++)); do
		busy+=("$net.$i $port" "$net.$i $QUORUM_PORT" "$net.$i $ELECTION_PORT")
		[[ $mode != proxied ]] || busy+=("$net.$i $((port + REAL_CLIENT_OFFSET))")
	done
	if [[ $mode == proxied ]]; then
		proxy_layout "$net" "$port"
		busy+=("${PROXY_PORTS[@]:N_MEMBERS}") # client listeners are in already
	fi
	local hp
	for hp in "${busy[@]}"; do
		if port_open "${hp% *}" "${hp#* }"; then
			die "${hp% *}:${hp#* } is already in use (another ensemble? see ZKR_TEST_NET / ZKR_TEST_PORT)"
		fi
	done
	CGROUP='' CGROUP_PROC=''
	if [[ -n $CPU_QUOTA ]]; then
		local name=${dir##*/} sum
		sum=$(printf '%s' "$dir" | cksum)
		CGROUP=$CG_MOUNT/zkroute.${name//[^A-Za-z0-9._-]/_}.${sum%% *}
		CGROUP_PROC=$CG_ROOT${CGROUP#"$CG_MOUNT"}
		if ! mkdir -p "$CGROUP" 2>/dev/null; then
			die "--cpu-quota: cannot create a cgroup in $CG_MOUNT (not writable: run as root, or delegate it)"
		fi
	fi
	printf 'net=%s\nport=%s\nmode=%s\nmembers=%s\nobservers=%s\nreconfig=%s\ncpu_quota=%s\ncgroup=%s\ncgroup_proc=%s\nbackend=%s\nengine=%s\nimage=%s\n' \
		"$net" "$port" "$mode" "$N_MEMBERS" "$OBSERVERS" "$RECONFIG" \
		"$CPU_QUOTA" "$CGROUP" "$CGROUP_PROC" "$BACKEND" "$ENGINE" "$IMAGE" >"$dir/ensemble.env"
	for ((i = 1; i <= N_MEMBERS; i++)); do
		write_config "$dir" "$i" "$net" "$port" "$mode"
	done

	START_DIR=$dir
	[[ $mode != proxied ]] || launch_proxy "$dir" "$net" "$port"
	load_members "$dir"
	for ((i = 1; i <= N_MEMBERS; i++)); do
		launch_member "$dir" "$i"
	done

	end=$((SECONDS + TIMEOUT))
	while :; do
		poll_members
		((SERVING == N_MEMBERS && LEADERS == 1)) && break
		for ((i = 1; i <= N_MEMBERS; i++)); do
			if ! pid_alive "$(<"$(member_dir "$dir" "$i")/pid")"; then
				log_tails "$dir"
				die "member $i exited during startup (log: $(member_dir "$dir" "$i")/server.log)"
			fi
		done
		if ((SECONDS >= end)); then
			log_tails "$dir"
			die "ensemble in $dir not ready after ${TIMEOUT}s (modes: $MODES); stopped it"
		fi
		sleep 0.1
	done
	START_DIR=''
	connect_string
}

cmd_stop() {
	local dir=$1
	[[ -z ${ZKR_TEST_ENSEMBLE:-} ]] || return 0
	[[ -d $dir ]] || return 0
	dir=$(cd "$dir" && pwd -P)
	local rc=0
	load_members "$dir"
	stop_members "$dir" || rc=1
	stop_proxy "$dir" || rc=1
	((rc)) || cgroup_remove || rc=1
	return "$rc"
}

cmd_cgroup() {
	[[ -n $CGROUP ]] || die "the ensemble in $DIR was not started with --cpu-quota"
	printf '%s/zk%s\n' "$CGROUP" "$N"
}

cmd_hosts() {
	if [[ -n ${ZKR_TEST_ENSEMBLE:-} ]]; then
		printf '%s\n' "$ZKR_TEST_ENSEMBLE"
		return 0
	fi
	load_members "$1"
	connect_string
}

cmd_leader() {
	load_members "$1"
	poll_members
	((LEADERS == 1)) || die "expected exactly one leader, found $LEADERS (modes: $MODES)"
	printf '%s\n' "$LEADER"
}

cmd_wait_leader_external() {
	local end=$((SECONDS + TIMEOUT))
	while :; do
		poll_members
		((SERVING == ${#M_HOST[@]} && LEADERS == 1)) && return 0
		((SECONDS < end)) || die "$(connect_string): no single leader with all members serving after ${TIMEOUT}s (modes: $MODES; is srvr in 4lw.commands.whitelist?)"
		sleep 0.2
	done
}

# Exactly one member says leader.  Members that are down or paused do not
# answer and are not counted, so this works after kill/pause of the leader.
cmd_wait_leader() {
	local end=$((SECONDS + TIMEOUT))
	load_members "$1"
	while :; do
		poll_members
		if ((LEADERS == 1)); then
			printf '%s\n' "$LEADER"
			return 0
		fi
		((SECONDS < end)) || die "no single leader after ${TIMEOUT}s (modes: $MODES)"
		sleep 0.1
	done
}

# Resolve DIR and check N for the per-member subcommands.
member_args() {
	[[ ! -d $1 ]] || load_members "$1"
	if ! [[ $2 =~ ^[1-9][0-9]*$ ]] || (($2 > N_MEMBERS)); then
		die "member index must be 1..$N_MEMBERS, got '$2'"
	fi
	[[ -d $1 ]] || die "no such ensemble directory: $1"
	DIR=$(cd "$1" && pwd -P)
	N=$2
}

cmd_kill() {
	local pid
	[[ $BACKEND != containers ]] || {
		ctr_kill_member
		return
	}
	member_pid "$DIR" "$N" >/dev/null || die "member $N is not running"
	pid=$(member_pid "$DIR" "$N")
	kill -KILL "$pid"
	wait_gone "$pid" 10 || die "member $N (pid $pid) still alive after SIGKILL"
}

cmd_restart() {
	local wait=1 pid mdir
	[[ ${1:-} != --no-wait ]] || wait=0
	mdir=$(member_dir "$DIR" "$N")
	[[ -r $mdir/zoo.cfg ]] || die "member $N has no config in $mdir (run start first)"
	if pid=$(member_pid "$DIR" "$N"); then
		die "member $N is still running (pid $pid); kill it first"
	fi
	load_members "$DIR"
	launch_member "$DIR" "$N"
	((wait)) || return 0
	wait_serving "$mdir" "$N" "${M_HOST[N]}" "${M_PORT[N]}" restart \
		" (it needs a quorum: are the others up?)"
}

# wait_serving MDIR N HOST PORT WHAT [HINT]: wait until member N (started
# for WHAT: restart, join) answers srvr with a Mode; die if its process
# exits or TIMEOUT passes.
wait_serving() {
	local mdir=$1 n=$2 host=$3 port=$4 what=$5 hint=${6:-} pid end m
	pid=$(<"$mdir/pid")
	end=$((SECONDS + TIMEOUT))
	while :; do
		m=$(mode_of "$host" "$port")
		[[ -z $m ]] || return 0
		if ! pid_alive "$pid"; then
			tail -n 15 "$mdir/server.log" >&2
			die "member $n exited after $what (log: $mdir/server.log)"
		fi
		((SECONDS < end)) || die "member $n not serving ${TIMEOUT}s after $what$hint"
		sleep 0.1
	done
}

# cmd_join DIR N: start new server N of a reconfig ensemble; it serves (as a
# non-voting learner) once it synced with the leader.  Later commands count
# it as a member (members= in ensemble.env grows to N).
cmd_join() {
	local dir=$1 n=$2 mdir pid
	[[ $n =~ ^[1-9]$ ]] || die "member index must be 1..9, got '$n'"
	[[ -d $dir ]] || die "no such ensemble directory: $dir"
	dir=$(cd "$dir" && pwd -P)
	load_members "$dir"
	((RECONFIG)) || die "join needs an ensemble started with --reconfig"
	local net=${M_HOST[1]%.*} port=${M_PORT[1]}
	if pid=$(member_pid "$dir" "$n"); then
		die "member $n is already running (pid $pid)"
	fi
	write_config "$dir" "$n" "$net" "$port" plain join
	if ((n > N_MEMBERS)); then
		sed -i "s/^members=.*/members=$n/" "$dir/ensemble.env"
	fi
	launch_member "$dir" "$n"
	mdir=$(member_dir "$dir" "$n")
	wait_serving "$mdir" "$n" "$net.$n" "$port" join
}

# thread_states PID: print the state letter of every thread of PID.
thread_states() {
	local t st
	for t in /proc/"$1"/task/*/stat; do
		read -r st 2>/dev/null <"$t" || continue
		st=${st##*) }
		printf '%s\n' "${st%% *}"
	done
}

# kill(2) only queues SIGSTOP: each thread stops when it next runs, and on a
# loaded machine the JVM's selector thread can still answer a request or two
# after `kill -STOP` returned.  So pause waits until every thread is stopped
# (state T), and resume until none is.
cmd_signal() {
	local sig=$1 pid end=$((SECONDS + 10)) states
	[[ $BACKEND != containers ]] || {
		ctr_signal_member "$sig"
		return
	}
	pid=$(member_pid "$DIR" "$N") || die "member $N is not running"
	kill "-$sig" "$pid"
	while :; do
		states=$(thread_states "$pid")
		case $sig in
		STOP) [[ -n $states && $(grep -cv '^[tT]$' <<<"$states") == 0 ]] && return 0 ;;
		CONT) ! grep -q '^T$' <<<"$states" && return 0 ;;
		esac
		pid_alive "$pid" || die "member $N (pid $pid) exited"
		((SECONDS < end)) || die "member $N (pid $pid) did not $sig within 10 s (thread states: $(sort <<<"$states" | uniq -c | tr -s ' \n' ' '))"
		sleep 0.01
	done
}

cmd_pid() {
	member_pid "$DIR" "$N" || die "member $N is not running"
}

cmd_srvr() {
	[[ $2 =~ ^[0-9]+$ ]] || die "port must be a number, got '$2'"
	srvr_query "$1" "$2" || die "no srvr reply from $1:$2 (refused, closed, or silent for ${SRVR_TIMEOUT}s)"
}

# ---------------------------------------------------------------------------
# container backend (ZKR_TEST_BACKEND=containers; see "Container backend")

# ctr_engine ARGS...: the engine's command, stdin closed; podman gets
# docker/containers.conf (runc, explicit ulimits) unless CONTAINERS_CONF
# is set.
ctr_engine() {
	local conf
	if [[ $ENGINE == podman && -z ${CONTAINERS_CONF:-} ]]; then
		conf=$(dirname "$0")/../../docker/containers.conf
		[[ ! -r $conf ]] || export CONTAINERS_CONF=$conf
	fi
	"$ENGINE" "$@" </dev/null
}

# ctr_name DIR I: member I's container name.  DIR's base name and checksum
# make it unique on the machine: a second ensemble never meets (or
# removes) this one's containers.
ctr_name() {
	local name=${1##*/} sum
	sum=$(printf '%s' "$1" | cksum)
	name=${name#zkr-}
	printf 'zkr-%s-%s-zk%s\n' "${name//[^A-Za-z0-9_.-]/_}" "${sum%% *}" "$2"
}

# ctr_backend_check: at start, the engine and the server image are there.
ctr_backend_check() {
	command -v "$ENGINE" >/dev/null ||
		die "ZKR_TEST_BACKEND=containers: no '$ENGINE' command (ZKR_TEST_ENGINE)"
	ctr_engine image inspect "$IMAGE" >/dev/null 2>&1 ||
		die "ZKR_TEST_BACKEND=containers: no image $IMAGE (docker/build-image.sh server; or set ZKR_TEST_IMAGE)"
}

# ctr_launch_member DIR I: create and start member I's container, or start
# it again when it exists (restart: same container, same bind-mounted
# config and data); record its id (zkI/cid) and its main process's pid as
# the host sees it (zkI/pid).  The container runs `sh -c 'exec java ...'`
# with zoo.cfg's path among the arguments, so is_member_proc knows it.
ctr_launch_member() {
	local dir=$1 i=$2 mdir id cp pid
	local -a extra=() run
	mdir=$(member_dir "$dir" "$i")
	printf '=== %s: starting member %s (container)\n' "$(date '+%F %T')" "$i" >>"$mdir/server.log"
	if [[ -s $mdir/cid ]]; then
		id=$(<"$mdir/cid")
		(
			close_fds
			ctr_engine start "$id"
		) >/dev/null 2>>"$mdir/server.log" || die "member $i: $ENGINE start $id failed (log: $mdir/server.log)"
	else
		cp=$(classpath nocheck)
		# shellcheck disable=SC2206 # word splitting of extra options is intended
		[[ -z ${ZKR_TEST_JAVA_OPTS:-} ]] || extra=($ZKR_TEST_JAVA_OPTS)
		run=(run -d --network host --name "$(ctr_name "$dir" "$i")"
			--label "zkroute.ensemble=$dir")
		[[ -z ${ZKR_TEST_CONTAINER_LABEL:-} ]] || run+=(--label "$ZKR_TEST_CONTAINER_LABEL")
		[[ $ENGINE != podman ]] || run+=(--pull=never)
		# shellcheck disable=SC2016 # $0 and $@ expand in the container's sh
		run+=(--ulimit nofile=10000:10000 --ulimit nproc=4096:4096
			-v "$dir:$dir" -w "$mdir" --entrypoint /bin/sh "$IMAGE"
			-c 'exec "$@" >>"$0" 2>&1' "$mdir/server.log"
			java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
			-XX:-UsePerfData -Xss512k
			-Dorg.slf4j.simpleLogger.defaultLogLevel=warn
			-Dorg.slf4j.simpleLogger.showDateTime=true
			-Dorg.slf4j.simpleLogger.dateTimeFormat='HH:mm:ss.SSS'
			-Dzookeeper.admin.enableServer=false
			"${extra[@]}"
			-cp "$cp" org.apache.zookeeper.server.quorum.QuorumPeerMain "$mdir/zoo.cfg")
		# Its id goes to a file, not through a pipe that conmon could keep.
		if ! (
			close_fds
			ctr_engine "${run[@]}"
		) >"$mdir/cid.new" 2>>"$mdir/server.log"; then
			rm -f "$mdir/cid.new"
			tail -n 5 "$mdir/server.log" >&2
			die "member $i: $ENGINE run failed (log: $mdir/server.log)"
		fi
		id=$(tail -n 1 "$mdir/cid.new")
		rm -f "$mdir/cid.new"
		[[ $id =~ ^[0-9a-f]+$ ]] || die "member $i: $ENGINE run printed no container id: '$id'"
		printf '%s\n' "$id" >"$mdir/cid"
	fi
	pid=$(ctr_engine inspect -f '{{.State.Pid}}' "$id") || die "member $i: $ENGINE inspect $id failed"
	[[ $pid =~ ^[1-9][0-9]*$ ]] || die "member $i (container $id) has no process (pid '$pid'; log: $mdir/server.log)"
	printf '%s\n' "$pid" >"$mdir/pid"
}

# ctr_stop_members DIR: remove every member container DIR recorded (joined
# ones too): SIGTERM, SIGKILL after 2 s; a paused one is removed as well.
ctr_stop_members() {
	local dir=$1 mdir rc=0
	local -a ids=() rm=(rm -f)
	for mdir in "$dir"/zk[0-9]*; do
		[[ -s $mdir/cid ]] && ids+=("$(<"$mdir/cid")")
	done
	((${#ids[@]} > 0)) || return 0
	[[ $ENGINE != podman ]] || rm+=(-i -t 2)
	if ctr_engine "${rm[@]}" "${ids[@]}" >/dev/null; then
		rm -f "$dir"/zk[0-9]*/cid "$dir"/zk[0-9]*/pid
	else
		printf '%s: %s rm of %s failed (ids kept in %s/zk*/cid)\n' "$PROG" "$ENGINE" "${ids[*]}" "$dir" >&2
		rc=1
	fi
	return "$rc"
}

# ctr_kill_member: SIGKILL member N's container through the engine; wait
# until its process is gone and the engine says it is down (so that a
# restart right after finds it stopped).  A paused member is thawed after
# the kill: it dies without running again.
ctr_kill_member() {
	local pid id
	pid=$(member_pid "$DIR" "$N") || die "member $N is not running"
	id=$(<"$(member_dir "$DIR" "$N")/cid")
	ctr_op kill "$id"
	[[ $(ctr_state "$id") != paused* ]] || ctr_op unpause "$id"
	wait_gone "$pid" 10 || die "member $N (container $id, pid $pid) still alive after SIGKILL"
	ctr_wait_state "$id" dead 10
}

# ctr_signal_member STOP|CONT: pause or resume member N with the engine
# (the cgroup freezer: every thread is frozen when it returns).  CONT also
# continues a member that a test stopped itself (kill -STOP of `pid`, as
# it_health's starved follower): SIGCONT through the engine.
ctr_signal_member() {
	local pid id st end=$((SECONDS + 10))
	pid=$(member_pid "$DIR" "$N") || die "member $N is not running"
	id=$(<"$(member_dir "$DIR" "$N")/cid")
	st=$(ctr_state "$id")
	if [[ $1 == STOP ]]; then
		[[ ${st%% *} == paused ]] || ctr_op pause "$id"
		ctr_wait_state "$id" paused 10
		return
	fi
	[[ ${st%% *} != paused ]] || ctr_op unpause "$id"
	ctr_wait_state "$id" running 10
	grep -q '^T$' <<<"$(thread_states "$pid")" || return 0
	ctr_engine kill -s CONT "$id" >/dev/null || die "$ENGINE kill -s CONT $id (member $N) failed"
	while grep -q '^T$' <<<"$(thread_states "$pid")"; do
		((SECONDS < end)) || die "member $N (container $id) still stopped 10 s after SIGCONT"
		sleep 0.01
	done
}

# cmd_ps DIR: one line per member: "zkI container NAME ID STATE pid PID"
# as the engine lists the containers labelled with DIR, or "zkI process
# pid PID"; PID is "down" when the member does not run.
cmd_ps() {
	local dir=$1 mdir i pid line id
	[[ -d $dir ]] || die "no such ensemble directory: $dir"
	dir=$(cd "$dir" && pwd -P)
	load_members "$dir"
	local -A seen=()
	local -a ids=()
	if [[ $BACKEND == containers ]]; then
		# The containers `ps` lists with DIR's label; their states from inspect.
		mapfile -t ids < <(ctr_engine ps -a -q --no-trunc --filter "label=zkroute.ensemble=$dir")
		((${#ids[@]} == 0)) ||
			while read -r line; do
				[[ -n $line ]] && seen[${line%% *}]=${line#* }
			done < <(ctr_engine inspect -f '{{.Id}} {{.Name}} {{.State.Status}}' "${ids[@]}")
	fi
	for mdir in "$dir"/zk[0-9]*; do
		[[ -d $mdir ]] || continue
		i=${mdir##*/zk}
		pid=$(member_pid "$dir" "$i") || pid=down
		if [[ $BACKEND != containers ]]; then
			printf 'zk%s process pid %s\n' "$i" "$pid"
			continue
		fi
		id=''
		[[ ! -s $mdir/cid ]] || id=$(<"$mdir/cid")
		if [[ -n $id && -n ${seen[$id]:-} ]]; then
			printf 'zk%s container %s %s %s pid %s\n' "$i" "${seen[$id]% *}" "${id:0:12}" "${seen[$id]##* }" "$pid"
		else
			printf 'zk%s container none pid %s\n' "$i" "$pid"
		fi
	done
}

# ---------------------------------------------------------------------------
# container mode (ZKR_TEST_ENSEMBLE + ZKR_TEST_CONTAINERS)

# ctr_setup: CTR_IDS (1..n) from ZKR_TEST_CONTAINERS, as many as the connect
# string has members; N_MEMBERS follows.
ctr_setup() {
	local -a ids
	local id i=0
	IFS=, read -r -a ids <<<"$ZKR_TEST_CONTAINERS"
	CTR_IDS=()
	for id in "${ids[@]}"; do
		[[ -n $id ]] || continue
		[[ $id =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || die "ZKR_TEST_CONTAINERS: not a container id or name: '$id'"
		i=$((i + 1))
		CTR_IDS[i]=$id
	done
	load_members ''
	((i == ${#M_HOST[@]})) ||
		die "ZKR_TEST_CONTAINERS names $i containers, ZKR_TEST_ENSEMBLE ${#M_HOST[@]} members"
	N_MEMBERS=$i
}

# ctr_api METHOD PATH: one request to ZKR_TEST_ENGINE_SOCKET; prints the
# body, then the HTTP status on a line of its own.
ctr_api() {
	curl -sS --max-time 30 --unix-socket "$ZKR_TEST_ENGINE_SOCKET" -X "$1" \
		-w '\n%{http_code}\n' "http://engine$2"
}

# ctr_state ID: print "STATUS PID" (running/paused/exited/...; 0 when none).
ctr_state() {
	local out code st pid
	if [[ -n ${ZKR_TEST_ENGINE_SOCKET:-} ]]; then
		out=$(ctr_api GET "/containers/$1/json") || die "engine API: cannot inspect container $1"
		code=${out##*$'\n'}
		[[ $code == 200 ]] || die "engine API: inspect $1: HTTP $code: ${out%$'\n'*}"
		out=${out#*\"State\":\{}
		out=${out%%\"Health\"*} # its own "Status"
		out=${out%%\}*}
		st=$(grep -o '"Status":"[a-z]*"' <<<"$out") || die "engine API: no State.Status for $1"
		pid=$(grep -o '"Pid":[0-9]*' <<<"$out") || die "engine API: no State.Pid for $1"
		st=${st#*:\"}
		printf '%s %s\n' "${st%\"}" "${pid#*:}"
	else
		ctr_engine inspect -f '{{.State.Status}} {{.State.Pid}}' "$1" ||
			die "$ENGINE inspect $1 failed"
	fi
}

# ctr_op OP ID: kill (SIGKILL), pause, unpause or start the container.
ctr_op() {
	local op=$1 id=$2 out code path
	if [[ -n ${ZKR_TEST_ENGINE_SOCKET:-} ]]; then
		path=/containers/$id/$op
		[[ $op != kill ]] || path+='?signal=KILL'
		out=$(ctr_api POST "$path") || die "engine API: $op $id failed"
		code=${out##*$'\n'}
		[[ $code == 204 ]] || die "engine API: $op $id: HTTP $code: ${out%$'\n'*}"
	else
		local -a args=("$op")
		[[ $op != kill ]] || args+=(-s KILL)
		ctr_engine "${args[@]}" "$id" >/dev/null ||
			die "$ENGINE $op $id failed"
	fi
}

# ctr_alive STATE: the container's process exists (running or paused).
ctr_alive() {
	case ${1%% *} in running | paused) return 0 ;; esac
	return 1
}

ctr_wait_state() { # ctr_wait_state ID WANT SECONDS: until STATUS is WANT (or "dead": not alive)
	local st end=$((SECONDS + $3))
	while :; do
		st=$(ctr_state "$1")
		if [[ $2 == dead ]]; then ctr_alive "$st" || return 0; else [[ ${st%% *} != "$2" ]] || return 0; fi
		((SECONDS < end)) || die "member $N (container $1) not $2 after $3 s (state: $st)"
		sleep 0.05
	done
}

cmd_ctr() {
	local cmd=$1 id=${CTR_IDS[N]} st end m
	st=$(ctr_state "$id")
	case $cmd in
	pid)
		ctr_alive "$st" || die "member $N is not running (container $id: ${st%% *})"
		printf '%s\n' "${st#* }"
		;;
	kill)
		ctr_alive "$st" || die "member $N is not running (container $id: ${st%% *})"
		ctr_op kill "$id"
		ctr_wait_state "$id" dead 10
		;;
	pause)
		ctr_alive "$st" || die "member $N is not running (container $id: ${st%% *})"
		[[ ${st%% *} == paused ]] || ctr_op pause "$id"
		ctr_wait_state "$id" paused 10
		;;
	resume)
		ctr_alive "$st" || die "member $N is not running (container $id: ${st%% *})"
		[[ ${st%% *} != paused ]] || ctr_op unpause "$id"
		ctr_wait_state "$id" running 10
		;;
	restart)
		! ctr_alive "$st" || die "member $N is still running (container $id); kill it first"
		ctr_op start "$id"
		[[ ${2:-} != --no-wait ]] || return 0
		end=$((SECONDS + TIMEOUT))
		while :; do
			m=$(mode_of "${M_HOST[N]}" "${M_PORT[N]}")
			[[ -z $m ]] || return 0
			st=$(ctr_state "$id")
			ctr_alive "$st" || die "member $N (container $id) exited after restart (state: $st)"
			((SECONDS < end)) || die "member $N not serving ${TIMEOUT}s after restart (it needs a quorum: are the others up?)"
			sleep 0.1
		done
		;;
	esac
}

main() {
	trap on_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	(($# >= 1)) || usage
	local cmd=$1
	shift
	case $cmd in
	start)
		(($# >= 1)) || usage
		local sdir=$1 smode=plain
		shift
		while (($# > 0)); do
			case $1 in
			--proxied) smode=proxied ;;
			--reconfig) RECONFIG=1 ;;
			--members)
				(($# >= 2)) || usage
				[[ $2 =~ ^[0-9]+$ ]] || die "--members needs a number, got '$2'"
				N_MEMBERS=$2
				shift
				;;
			--observers)
				(($# >= 2)) || usage
				OBSERVERS=${2//,/ }
				shift
				;;
			--cpu-quota)
				(($# >= 2)) || usage
				CPU_QUOTA=$2
				check_cpus "$CPU_QUOTA"
				shift
				;;
			*) usage ;;
			esac
			shift
		done
		cmd_start "$sdir" "$smode"
		;;
	join)
		(($# == 2)) || usage
		need_fault_injection "$cmd"
		cmd_join "$1" "$2"
		;;
	stop | hosts | leader | wait-leader | ps)
		(($# == 1)) || usage
		case $cmd in
		stop) cmd_stop "$1" ;;
		ps) cmd_ps "$1" ;;
		hosts) cmd_hosts "$1" ;;
		leader) cmd_leader "$1" ;;
		wait-leader) cmd_wait_leader "$1" ;;
		esac
		;;
	kill | restart | pause | resume | pid | cgroup)
		(($# == 2)) || [[ $cmd == restart && $# == 3 && $3 == --no-wait ]] || usage
		need_fault_injection "$cmd"
		if [[ -n ${ZKR_TEST_ENSEMBLE:-} ]]; then # container mode
			ctr_setup
			member_args "$1" "$2"
			cmd_ctr "$cmd" "${3:-}"
			return
		fi
		member_args "$1" "$2"
		case $cmd in
		cgroup) cmd_cgroup ;;
		kill) cmd_kill ;;
		restart) cmd_restart "${3:-}" ;;
		pause) cmd_signal STOP ;;
		resume) cmd_signal CONT ;;
		pid) cmd_pid ;;
		esac
		;;
	srvr)
		(($# == 2)) || usage
		cmd_srvr "$1" "$2"
		;;
	cpu-quota-check)
		(($# == 0)) || usage
		cpu_quota_check || exit 1
		;;
	fault)
		(($# >= 2)) || usage
		need_fault_injection "$cmd"
		cmd_fault "$@"
		;;
	slow)
		(($# == 4)) || usage
		need_fault_injection "$cmd"
		member_args "$1" "$2"
		ms_arg "$3" MS
		ms_arg "$4" JITTER
		fault_control "$DIR"
		quiet_fault delay "m$N" "$3" "$4"
		;;
	heal)
		(($# == 2)) || usage
		need_fault_injection "$cmd"
		if [[ $2 == all ]]; then
			fault_control "$1"
			quiet_fault clear all
		else
			member_args "$1" "$2"
			fault_control "$DIR"
			quiet_fault clear "m$N"
		fi
		;;
	delay-all)
		(($# == 3)) || usage
		need_fault_injection "$cmd"
		ms_arg "$2" MS
		ms_arg "$3" JITTER
		fault_control "$1"
		quiet_fault delay all "$2" "$3"
		;;
	-h | --help | help) usage ;;
	*) usage ;;
	esac
}

main "$@"
