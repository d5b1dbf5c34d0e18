#!/usr/bin/env bash
# CI stage (scripts/test.sh, after the others): every integration test of
# tests/integration/integration.sh, the fault proxy's included, against
# ZooKeeper members that run in containers, with Debian's podman
# (docker/README.md).  On this machine, as root:
#   1. installs what is missing of podman, runc, mmdebstrap and curl
#      (Debian's archive only);
#   2. docker/containers.sh check: can podman run, pause, unpause and kill a
#      container here?
#   3. docker/build-image.sh base, then server: the base and ZooKeeper
#      images, from Debian packages only (no image registry), each time
#      from nothing (or before the stage, see `images` below).  The test
#      image (docker/Dockerfile) is not built: the tests run on the host;
#   4. builds the host tree's test programs (make check TESTS=: what is
#      out of date, running none);
#   5. tests/integration/integration.sh on the host with
#      ZKR_TEST_BACKEND=containers (tests/harness/ensemble.sh, "Container
#      backend"): wherever the harness would start a ZooKeeper server
#      process it starts the same server as a container of the ZooKeeper
#      image (host network; its zoo.cfg and data bind-mounted from the
#      harness's directory), on ZKR_CONTAINER_NET.1-3 (default 127.0.50),
#      behind the fault proxy on the host as in `make check`; it_membership's
#      own ensembles (on the next network) are containers too.  Members are
#      killed, restarted, paused and resumed through podman, by the ids
#      recorded; after each test a line lists them as podman sees them;
#   6. fails when any test was left out or skipped (a "SKIPPED" program, a
#      "left out" or "skipped" line, a TAP "# SKIP"), or when a test ran with
#      no member in a container;
#   7. removes what is left of its containers (by their label, only its
#      own) and the images it built (ZKR_KEEP_IMAGES=1 keeps them).
# Output also goes to tests/container-tests.log (the console leaves out
# libzookeeper's own log lines), whose Check counts scripts/test.sh adds to
# the others.  The last line says what happened:
#   exit 0   "containers: ok (...)"
#   exit 1   "containers: FAILED (...)"
#   exit 3   "containers: NOT RUN: WHY" when the engine cannot work here
#            (packages not installable, or podman cannot run a container):
#            the stage did not run, and scripts/test.sh counts it neither as
#            passed nor as failed.
# ZKR_IMAGE_PREFIX names the images (default zkroute: zkroute-debian:12,
# zkroute-zookeeper), so that two stages on one machine do not share them.
#
# `scripts/container-tests.sh images` does steps 1-3 only and ends with
# "containers: images ok (N s)" (exit 0), "containers: images FAILED"
# (exit 1) or the NOT RUN line (exit 3).  scripts/test.sh runs it in the
# background during the simulator's stage, whose length is fixed, and then
# the stage with ZKR_CONTAINER_PREBUILT naming that run's output: the stage
# shows it and, when it ended "images ok", builds no image (a failed or
# unfinished build is done again here; NOT RUN ends the stage the same way).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
top=$PWD
what=${1:-all}
case $what in all | images) ;; *)
	echo "usage: scripts/container-tests.sh [images]" >&2
	exit 2
	;;
esac
log=$top/tests/container-tests.log
[ "$what" = images ] || rm -f "$log"
t0=$SECONDS
export ZKR_ENGINE=podman
export CONTAINERS_CONF=${CONTAINERS_CONF:-$top/docker/containers.conf}
prefix=${ZKR_IMAGE_PREFIX:-zkroute}
net=${ZKR_CONTAINER_NET:-127.0.50}

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
prebuilt=
if [ "$what" = all ] && [ -n "${ZKR_CONTAINER_PREBUILT:-}" ]; then
	cat "$ZKR_CONTAINER_PREBUILT" 2>/dev/null
	last=$(tail -n 1 "$ZKR_CONTAINER_PREBUILT" 2>/dev/null)
	case $last in
	"containers: images ok ("*" s)")
		prebuilt=${last#containers: images ok (}
		prebuilt=${prebuilt% s)}
		;;
	"containers: NOT RUN: "*)
		echo "$last"
		exit 3
		;;
	*) echo "containers: the images built before are not complete (${last:-no output}): building them again" ;;
	esac
fi
if ! why=$(bash docker/containers.sh check 2>&1); then
	not_run "$(tail -n 1 <<<"$why")"
fi
if [ "$what" = images ]; then
	t=$SECONDS
	if bash docker/build-image.sh base && bash docker/build-image.sh server; then
		echo "containers: images ok ($((SECONDS - t)) s)"
		exit 0
	fi
	echo "containers: images FAILED ($((SECONDS - t)) s)"
	exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-containers.XXXXXX")
# Every member container of the run carries this label: the sampler counts
# them, and cleanup removes what a crashed harness left (and nothing else).
label=zkroute.stage=${dir##*/}
built=0
sampler=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local ids
	[ -z "$sampler" ] || { kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; }
	ids=$(podman ps -a -q --filter "label=$label" 2>/dev/null) || true
	if [ -n "$ids" ]; then
		echo "containers: removing containers left behind: $(paste -sd' ' - <<<"$ids")"
		# shellcheck disable=SC2086 # one id a word
		podman rm -f -t 2 $ids >/dev/null || echo "containers: could not remove $ids"
	fi
	if [ $built = 1 ] && [ "${ZKR_KEEP_IMAGES:-0}" != 1 ]; then
		bash docker/build-image.sh remove >/dev/null || echo "containers: could not remove the images"
	fi
	rm -rf "$dir"
}
trap cleanup EXIT

# sample: every 10 s, how many of the run's containers are running (the
# most is in the closing line: it_membership's ensembles count too).
sample() {
	local n
	while sleep 10 && [ -d "$dir" ]; do
		n=$(podman ps -q --filter "label=$label" 2>/dev/null | wc -l)
		printf '%s\n' "$n" >>"$dir/samples"
	done
}

# The stage proper; its times go to $dir/times (it runs in a pipeline).
stage() {
	local rc=0 t t_img=0 t_test=0 when=''
	if [ -n "$prebuilt" ] && podman image inspect "$prefix-zookeeper" >/dev/null 2>&1; then
		t_img=$prebuilt when=' before the stage'
	else
		t=$SECONDS
		{ bash docker/build-image.sh base && bash docker/build-image.sh server; } || rc=1
		t_img=$((SECONDS - t))
	fi
	if [ $rc = 0 ]; then
		if [ ! -f Makefile ]; then
			echo "containers: no Makefile: configure the tree first (./configure)"
			rc=1
		elif ! make -j"$(nproc)" check TESTS= >"$dir/make.log" 2>&1; then
			tail -n 30 "$dir/make.log"
			echo "containers: building the test programs failed"
			rc=1
		fi
	fi
	if [ $rc = 0 ]; then
		t=$SECONDS
		sample &
		sampler=$!
		env -u ZKR_IT_TESTS -u ZKR_IT_SKIP -u ZKR_IT_PROXIED -u ZKR_INTEGRATION \
			-u ZKR_TEST_ENSEMBLE -u ZKR_TEST_CONTAINERS \
			ZKR_TEST_BACKEND=containers ZKR_TEST_ENGINE=podman \
			ZKR_TEST_IMAGE="$prefix-zookeeper" ZKR_TEST_NET="$net" \
			ZKR_TEST_CONTAINER_LABEL="$label" top_srcdir=. top_builddir=. \
			bash tests/integration/integration.sh || rc=1
		t_test=$((SECONDS - t))
		kill "$sampler" 2>/dev/null
		wait "$sampler" 2>/dev/null
		sampler=
	fi
	echo "images $t_img s$when, tests $t_test s" >"$dir/times"
	return $rc
}
built=1
# The console gets everything but the client library's own log lines
# (thousands per run, all of them in the log file).
stage 2>&1 | tee "$log" | grep -a -v --line-buffered -E 'ZOO_(INFO|WARN|ERROR|DEBUG)@'
rc=${PIPESTATUS[0]}

# What ran: the programs integration.sh started ("=== NAME"), each followed
# by its members line once it is done.  What was left out: programs that
# skipped, and cases that said so in a line of their own.
ran=$(grep -a -E '^=== [^ ]+$' "$log" | awk '{ print $2 }')
failed=$(grep -a -E '^=== [^ ]+ FAILED$' "$log" | awk '{ print $2 }' | paste -sd, - | sed 's/,/, /g')
left=$(grep -a -n -E '^=== [^ ]+ SKIPPED|: left out: |[:;] skipped\b|# SKIP|no test left to run' "$log" | grep -a -v -E 'ZOO_(INFO|WARN|ERROR|DEBUG)@' || true)
noctr=
for p in $ran; do
	grep -a -q -E "^=== $p: [0-9]+ s; members: .*container [^ ]+ [0-9a-f]{12} running pid [0-9]" "$log" || noctr+="${noctr:+, }$p"
done
n=$(wc -w <<<"$ran")
most=$(sort -n "$dir/samples" 2>/dev/null | tail -n 1)
summary="$n programs$([ -z "$most" ] || echo ", up to $most containers running at once")"
if [ -n "$left" ]; then
	echo "containers: left out or skipped, which this stage does not allow:"
	awk '{ print "  " $0 }' <<<"$left"
	rc=1
fi
if [ -n "$noctr" ]; then
	echo "containers: no member ran in a container after: $noctr"
	rc=1
fi
times="$(cat "$dir/times" 2>/dev/null || echo "no times"), stage $((SECONDS - t0)) s"
if [ "$rc" = 0 ]; then
	echo "containers: ok ($times; $summary, none left out)"
else
	echo "containers: FAILED ($times; $summary${failed:+; failed: $failed}${left:+; some left out})"
fi
[ "$rc" = 0 ]
