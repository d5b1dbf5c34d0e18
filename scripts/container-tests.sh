#!/usr/bin/env bash
# CI stage (scripts/test.sh, after the others): zkroute's integration tests
# against the dockerized 3-node ensemble, with Debian's podman
# (docker/README.md).  On this machine, as root:
#   1. installs what is missing of podman, runc, mmdebstrap and curl
#      (Debian's archive only);
#   2. docker/containers.sh check: can podman run, pause, unpause and kill a
#      container here?
#   3. docker/build-image.sh all: the images, from Debian packages only (no
#      image registry), each time from nothing;
#   4. docker/containers.sh up: members on ZKR_CONTAINER_NET.1-3 (default
#      127.0.50.x), host networking, healthy on srvr, one leader;
#   5. docker/containers.sh test: tests/integration/integration.sh in the test image,
#      ZKR_TEST_ENSEMBLE at the containers; kill, restart, pause and resume
#      of a member go through the engine's API (tests/harness/ensemble.sh,
#      "Containers").  Tests that need the fault proxy, or ensembles of
#      their own, say in one line that they are left out;
#   6. down (always), and removes the images it built (ZKR_KEEP_IMAGES=1
#      keeps them).
# Output also goes to tests/container-tests.log (the console leaves out
# libzookeeper's own log lines), whose Check counts scripts/test.sh adds to
# the others.  The last line says what happened:
#   exit 0   "containers: ok (...)"
#   exit 1   "containers: FAILED (...)"
#   exit 3   "containers: NOT RUN: WHY" when the engine cannot work here
#            (packages not installable, or podman cannot run a container):
#            the stage did not run, and scripts/test.sh counts it neither as
#            passed nor as failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
top=$PWD
log=$top/tests/container-tests.log
rm -f "$log"
t0=$SECONDS
export ZKR_ENGINE=podman
export CONTAINERS_CONF=${CONTAINERS_CONF:-$top/docker/containers.conf}

not_run() {
	echo "containers: NOT RUN: $*; the container stage did not run"
	exit 3
}

need=()
for p in podman runc mmdebstrap curl; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "containers: installing ${need[*]}"
	if ! { $sudo apt-get update -q >/dev/null &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${need[@]}" >/dev/null; }; then
		not_run "apt-get install ${need[*]} failed"
	fi
	echo "containers: packages installed in $((SECONDS - t0)) s"
fi
if ! why=$(bash docker/containers.sh check 2>&1); then
	not_run "$(tail -n 1 <<<"$why")"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-containers.XXXXXX")
built=0
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	bash docker/containers.sh down "$dir" || echo "containers: down failed: see $dir/ids"
	if [ $built = 1 ] && [ "${ZKR_KEEP_IMAGES:-0}" != 1 ]; then
		bash docker/build-image.sh remove >/dev/null || echo "containers: could not remove the images"
	fi
	[ -s "$dir/ids" ] || rm -rf "$dir"
}
trap cleanup EXIT

# The stage proper; its times go to $dir/times (it runs in a pipeline).
stage() {
	local rc=0 t t_img=0 t_up=0 t_test=0
	t=$SECONDS
	bash docker/build-image.sh all || rc=1
	t_img=$((SECONDS - t))
	if [ $rc = 0 ]; then
		t=$SECONDS
		bash docker/containers.sh up "$dir" >/dev/null || rc=1
		t_up=$((SECONDS - t))
	fi
	if [ $rc = 0 ]; then
		t=$SECONDS
		bash docker/containers.sh test "$dir" bash tests/integration/integration.sh || rc=1
		t_test=$((SECONDS - t))
	fi
	echo "images $t_img s, ensemble up $t_up s, tests $t_test s" >"$dir/times"
	return $rc
}
built=1
# The console gets everything but the client library's own log lines
# (thousands per run, all of them in the log file).
stage 2>&1 | tee "$log" | grep -a -v --line-buffered 'ZOO_'
rc=${PIPESTATUS[0]}
# What did not run inside the stage, from the tests' own lines (their
# reasons are in the output above): whole programs, then cases.
progs=$(grep -a -E '^=== [^ ]+ SKIPPED' "$log" | awk '{ print $2 }' | sort -u)
cases=$(grep -a -E '^[A-Za-z0-9_.]+: case [A-Za-z0-9_]+ .*: left out: ' "$log" |
	awk -F': ' '{ print $1 " " $2 }' | awk '{ print $1, $2, $3 }' | sort -u |
	while read -r prog _ name; do grep -qx "$prog" <<<"$progs" || echo "$prog case $name"; done)
# shellcheck disable=SC2086 # one program a word
left=$(printf '%s\n' $progs | paste -sd, - | sed 's/,/, /g')
[ -z "$cases" ] || left+="${left:+, }$(paste -sd, - <<<"$cases" | sed 's/,/, /g')"
times="$(cat "$dir/times" 2>/dev/null || echo "no times"), stage $((SECONDS - t0)) s"
if [ "$rc" = 0 ]; then
	echo "containers: ok ($times)${left:+; left out: $left}"
else
	echo "containers: FAILED ($times)${left:+; left out: $left}"
fi
[ "$rc" = 0 ]
