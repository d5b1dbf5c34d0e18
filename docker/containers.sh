#!/usr/bin/env bash
# docker/containers.sh — the 3-node ZooKeeper ensemble in containers, and
# zkroute's integration tests against it, with podman (here) or Docker.
#
# Usage:
#   containers.sh check          exit 0 when the engine can run, pause,
#                                unpause and kill a container here (host
#                                network, no image needed); else print why in
#                                one line and exit 1
#   containers.sh up DIR         start members 1..3 from ${prefix}-zookeeper
#                                with host networking, member i on NET.i,
#                                wait until each is healthy (srvr "Mode:")
#                                and exactly one leads; keep their ids in
#                                DIR/ids, print the connect string
#   containers.sh down DIR       remove the containers whose ids DIR/ids
#                                holds (and the API service, if running)
#   containers.sh env DIR        print the variables that point tests run on
#                                the host at the ensemble (export them; see
#                                docker/README.md)
#   containers.sh test DIR [CMD...]
#                                run CMD (default: make check
#                                TESTS=tests/integration/integration.sh VERBOSE=1) in a
#                                ${prefix}-test container: host network,
#                                ZKR_TEST_ENSEMBLE and ZKR_TEST_CONTAINERS
#                                set, the engine's API socket mounted as
#                                /run/engine.sock (podman: a `podman system
#                                service` started for the run and stopped
#                                after it, by pid); exits with CMD's status
#
# Environment:
#   ZKR_ENGINE            podman (default) or docker
#   ZKR_IMAGE_PREFIX      image names (default zkroute: zkroute-zookeeper,
#                         zkroute-test; docker/build-image.sh makes them)
#   ZKR_CONTAINER_NET     first three octets of the members' addresses
#                         (default 127.0.50: apart from tests/harness/ensemble.sh's
#                         127.0.0 and the other ensembles of this machine)
#   ZKR_CONTAINER_PORT    client port (default 2181)
#   ZKR_CONTAINER_TIMEOUT seconds for `up` to see every member healthy (90)
#   ZKR_DOCKER_SOCKET     Docker's API socket for `test` (/var/run/docker.sock)
#   CONTAINERS_CONF       podman's settings (default docker/containers.conf)
# `test` passes the caller's ZKR_IT_*, ZKR_LOCK_SECONDS, ZKR_HISTORY_* and
# CK_* variables into the container.
#
# Containers are created with names ${prefix}-NET-zkI (NET with dashes), so
# a second `up` on the same NET fails instead of joining the first; they are
# only ever stopped and removed by the ids that `up` recorded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
PROG=containers.sh
engine=${ZKR_ENGINE:-podman}
prefix=${ZKR_IMAGE_PREFIX:-zkroute}
net=${ZKR_CONTAINER_NET:-127.0.50}
port=${ZKR_CONTAINER_PORT:-2181}
timeout=${ZKR_CONTAINER_TIMEOUT:-90}
members=3
case $engine in
podman) export CONTAINERS_CONF=${CONTAINERS_CONF:-$top/docker/containers.conf} ;;
docker) ;;
*) echo "$PROG: ZKR_ENGINE must be podman or docker, got '$engine'" >&2; exit 2 ;;
esac

die() {
	printf '%s: %s\n' "$PROG" "$*" >&2
	exit 1
}
usage() {
	awk 'NR > 3 && /^#$/ { exit } NR >= 3 { sub(/^# ?/, ""); print }' "$0" >&2
	exit 2
}

check_net() {
	[[ $net =~ ^127\.[0-9]+\.[0-9]+$ ]] || die "ZKR_CONTAINER_NET must look like 127.0.50 (loopback only): '$net'"
	[[ $port =~ ^[0-9]+$ ]] || die "ZKR_CONTAINER_PORT is not a number: '$port'"
}

hosts() {
	local i out=''
	for ((i = 1; i <= members; i++)); do out+=${out:+,}$net.$i:$port; done
	printf '%s\n' "$out"
}

ids_of() { # ids_of DIR: the recorded ids, comma separated
	[[ -s $1/ids ]] || die "no containers recorded in $1/ids (run: $PROG up $1)"
	paste -sd, "$1/ids"
}

# shellcheck disable=SC2016 # $1/$2 expand in the inner bash
port_open() { timeout 1 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null; }

# ---- check ----

# A root filesystem of two host programs (sleep, true) and their libraries:
# enough to see the engine run, pause, unpause and kill a container with
# host networking and this machine's ulimits, before any image is built.
cmd_check() {
	local dir id out f lib
	command -v "$engine" >/dev/null || { echo "$engine is not installed"; return 1; }
	dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-probe.XXXXXX")
	for f in /bin/true /bin/sleep; do
		mkdir -p "$dir$(dirname "$f")"
		cp "$f" "$dir$f"
		for lib in $(ldd "$f" | grep -o '/[^ ]*'); do
			mkdir -p "$dir$(dirname "$lib")"
			cp -L "$lib" "$dir$lib"
		done
	done
	local -a run=(run --rm --network host)
	if [ "$engine" = podman ]; then
		run+=(--rootfs "$dir")
	else # Docker has no --rootfs: the directory as a throwaway image
		tar -C "$dir" -c . | docker import - zkroute-probe:check >/dev/null 2>&1 || true
		run+=(zkroute-probe:check)
	fi
	if ! out=$("$engine" "${run[@]}" /bin/true 2>&1); then
		echo "$engine cannot start a container here: $(tail -n 1 <<<"$out")"
		rm -rf "$dir"
		return 1
	fi
	run=("${run[@]/--rm/-d}")
	if ! id=$("$engine" "${run[@]}" /bin/sleep 60 2>&1); then
		echo "$engine cannot start a container in the background here: $(tail -n 1 <<<"$id")"
		rm -rf "$dir"
		return 1
	fi
	id=$(tail -n 1 <<<"$id")
	local rc=0
	if ! out=$("$engine" pause "$id" 2>&1); then
		echo "$engine cannot pause a container here (cgroup freezer): $(tail -n 1 <<<"$out")"
		rc=1
	elif ! out=$("$engine" unpause "$id" 2>&1); then
		echo "$engine cannot unpause a container here: $(tail -n 1 <<<"$out")"
		rc=1
	elif ! out=$("$engine" kill -s KILL "$id" 2>&1); then
		echo "$engine cannot kill a container here: $(tail -n 1 <<<"$out")"
		rc=1
	fi
	"$engine" rm -f "$id" >/dev/null 2>&1 || true
	[ "$engine" != docker ] || docker rmi zkroute-probe:check >/dev/null 2>&1 || true
	rm -rf "$dir"
	return $rc
}

# ---- up / down ----

healthy() { # healthy ID
	if [ "$engine" = podman ]; then
		podman healthcheck run "$1" >/dev/null 2>&1
	else
		[ "$(docker inspect -f '{{.State.Health.Status}}' "$1" 2>/dev/null)" = healthy ]
	fi
}

running() { [ "$("$engine" inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = true ]; }

cmd_up() {
	local dir=$1 i id t0=$SECONDS end ok name hp
	check_net
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd -P)
	[[ ! -s $dir/ids ]] || die "$dir/ids already lists containers (run: $PROG down $dir)"
	"$engine" image inspect "$prefix-zookeeper" >/dev/null 2>&1 ||
		die "no image $prefix-zookeeper (run: docker/build-image.sh)"
	for ((i = 1; i <= members; i++)); do
		for hp in "$port" 2888 3888; do
			! port_open "$net.$i" "$hp" || die "$net.$i:$hp is already in use (another ensemble? set ZKR_CONTAINER_NET)"
		done
	done
	: >"$dir/ids"
	# Docker runs the image's HEALTHCHECK itself; podman has no systemd here
	# to time it, so `up` runs it (podman healthcheck run) and nothing else.
	local -a health=(--health-cmd '/usr/local/bin/zk-server.sh health' --health-retries 30)
	if [ "$engine" = podman ]; then health+=(--health-interval disable); else health+=(--health-interval 2s); fi
	for ((i = 1; i <= members; i++)); do
		name=$prefix-${net//./-}-zk$i
		id=$("$engine" run -d --network host --name "$name" \
			--ulimit nofile=10000:10000 --ulimit nproc=4096:4096 \
			-e ZK_ID="$i" -e ZK_NET="$net" -e ZK_PORT="$port" -e ZK_MEMBERS="$members" \
			"${health[@]}" "$prefix-zookeeper") ||
			die "$engine run of member $i ($name) failed; left: $(paste -sd' ' "$dir/ids")"
		printf '%s\n' "$id" >>"$dir/ids"
	done
	local -a ids
	mapfile -t ids <"$dir/ids"
	end=$((SECONDS + timeout))
	while :; do
		ok=0
		for id in "${ids[@]}"; do
			running "$id" || {
				"$engine" logs --tail 20 "$id" >&2 || true
				die "container $id exited during startup (logs above)"
			}
			! healthy "$id" || ok=$((ok + 1))
		done
		((ok < members)) || break
		((SECONDS < end)) || die "$ok of $members members healthy after ${timeout}s"
		sleep 0.2
	done
	# Healthy members serve; now exactly one must lead.
	ZKR_TEST_ENSEMBLE=$(hosts) ZKR_TEST_TIMEOUT=$timeout bash "$top/tests/harness/ensemble.sh" wait-leader "$dir" >/dev/null
	echo "$PROG: ensemble up in $((SECONDS - t0)) s: $(hosts) (containers $(cut -c1-12 "$dir/ids" | paste -sd" "))" >&2
	hosts
}

stop_service() {
	local dir=$1 pid
	[[ -s $dir/service.pid ]] || return 0
	pid=$(<"$dir/service.pid")
	# Only our own service process: its command line names our socket.
	if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "unix://$dir/engine.sock"; then
		kill "$pid" 2>/dev/null || true
		local end=$((SECONDS + 10))
		while kill -0 "$pid" 2>/dev/null && ((SECONDS < end)); do sleep 0.1; done
	fi
	rm -f "$dir/service.pid" "$dir/engine.sock"
}

cmd_down() {
	local dir=$1 id rc=0
	[[ -d $dir ]] || return 0
	dir=$(cd "$dir" && pwd -P)
	stop_service "$dir"
	if [[ -s $dir/test.cid ]]; then
		"$engine" rm -f "$(<"$dir/test.cid")" >/dev/null 2>&1 || true
		rm -f "$dir/test.cid"
	fi
	[[ -f $dir/ids ]] || return 0
	local -a ids
	mapfile -t ids <"$dir/ids"
	for id in "${ids[@]}"; do
		[[ -n $id ]] || continue
		# The JVM exits on SIGTERM at once; a paused member is removed too.
		if [ "$engine" = podman ]; then
			podman rm -f -t 2 "$id" </dev/null >/dev/null || rc=1
		else
			docker rm -f "$id" </dev/null >/dev/null || rc=1
		fi
	done
	((rc)) || rm -f "$dir/ids"
	return $rc
}

cmd_env() {
	local dir=$1
	dir=$(cd "$dir" && pwd -P)
	printf 'ZKR_TEST_ENSEMBLE=%s\nZKR_TEST_CONTAINERS=%s\nZKR_TEST_ENGINE=%s\n' \
		"$(hosts)" "$(ids_of "$dir")" "$engine"
	[ "$engine" != podman ] || printf 'CONTAINERS_CONF=%s\n' "$CONTAINERS_CONF"
}

# ---- test ----

cmd_test() {
	local dir=$1 sock end rc=0 v
	shift
	dir=$(cd "$dir" && pwd -P)
	local ids
	ids=$(ids_of "$dir")
	"$engine" image inspect "$prefix-test" >/dev/null 2>&1 ||
		die "no image $prefix-test (run: docker/build-image.sh)"
	if [ "$engine" = podman ]; then
		sock=$dir/engine.sock
		stop_service "$dir"
		podman system service --time=0 "unix://$sock" </dev/null >"$dir/service.log" 2>&1 &
		printf '%s\n' "$!" >"$dir/service.pid"
		end=$((SECONDS + 20))
		until curl -sf --unix-socket "$sock" http://engine/_ping >/dev/null 2>&1; do
			((SECONDS < end)) || { cat "$dir/service.log" >&2; stop_service "$dir"; die "podman system service did not answer on $sock"; }
			sleep 0.1
		done
	else
		sock=${ZKR_DOCKER_SOCKET:-/var/run/docker.sock}
	fi
	local -a envs=(-e "ZKR_TEST_ENSEMBLE=$(hosts)" -e "ZKR_TEST_CONTAINERS=$ids"
		-e ZKR_TEST_ENGINE_SOCKET=/run/engine.sock)
	for v in $(compgen -e | grep -E '^(ZKR_IT_|ZKR_LOCK_|ZKR_HISTORY_|CK_)' || true); do envs+=(-e "$v"); done
	(($# > 0)) || set -- make check TESTS=tests/integration/integration.sh VERBOSE=1
	rm -f "$dir/test.cid"
	"$engine" run --rm --network host --cidfile "$dir/test.cid" \
		--ulimit nofile=10000:10000 --ulimit nproc=4096:4096 \
		-v "$sock:/run/engine.sock" "${envs[@]}" "$prefix-test" "$@" || rc=$?
	rm -f "$dir/test.cid"
	stop_service "$dir"
	return $rc
}

(($# >= 1)) || usage
cmd=$1
shift
case $cmd in
check) (($# == 0)) || usage; cmd_check ;;
up) (($# == 1)) || usage; cmd_up "$1" ;;
down) (($# == 1)) || usage; cmd_down "$1" ;;
env) (($# == 1)) || usage; cmd_env "$1" ;;
test) (($# >= 1)) || usage; cmd_test "$@" ;;
*) usage ;;
esac
