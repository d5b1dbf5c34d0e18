#!/usr/bin/env bash
# Builds the images of docker/ from Debian packages only, no image registry:
#
#   docker/build-image.sh [base|server|test|all]      (default: all)
#
#   base    ${ZKR_IMAGE_PREFIX}-debian:12: a Debian 12 root filesystem made by
#           mmdebstrap (variant minbase: the packages of priority required
#           and apt, as in Docker's debian:12) and imported with `ENGINE
#           import`; the FROM of both Dockerfiles
#   server  ${ZKR_IMAGE_PREFIX}-zookeeper: docker/zookeeper.Dockerfile
#           (OpenJDK 17 headless, Debian's ZooKeeper 3.8 jars, zk-server.sh)
#   test    ${ZKR_IMAGE_PREFIX}-test: docker/Dockerfile (build tools, zkroute
#           built with its test programs)
#   all     the three: the base first, then the other two at once (each
#           build's output goes to a log that is shown when it fails)
#   remove  remove the three images (by these exact names)
#
# The Dockerfiles say `ARG BASE=debian:12` / `FROM $BASE`: with Docker and a
# registry they build as they are; here BASE is the mmdebstrap image.  The
# build context is a copy of the files git knows plus untracked, unignored
# ones (as scripts/sanitize.sh copies the tree), so an in-tree build of the
# host never ends up in the image.
#
# Environment:
#   ZKR_ENGINE         podman (default) or docker
#   ZKR_IMAGE_PREFIX   image name prefix (default zkroute)
#   ZKR_DEBIAN_MIRROR  mmdebstrap's MIRROR argument (default: none, i.e.
#                      mmdebstrap's own default with the updates and security
#                      suites); a file of apt sources works too
#   CONTAINERS_CONF    podman's settings (default docker/containers.conf:
#                      runc, explicit ulimits; see that file)
# Every step runs under nice (the machines have 2 shared cores) and prints
# its time.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
what=${1:-all}
engine=${ZKR_ENGINE:-podman}
prefix=${ZKR_IMAGE_PREFIX:-zkroute}
base=$prefix-debian:12
case $engine in
podman) export CONTAINERS_CONF=${CONTAINERS_CONF:-$top/docker/containers.conf} ;;
docker) ;;
*) echo "build-image: ZKR_ENGINE must be podman or docker, got '$engine'" >&2; exit 2 ;;
esac
case $what in base | server | test | all | remove) ;; *)
	echo "usage: docker/build-image.sh [base|server|test|all|remove]" >&2
	exit 2
	;;
esac

say() { printf 'build-image: %s\n' "$*"; }
timed() { # timed WHAT CMD...: run, then say how long it took
	local what=$1 t0=$SECONDS rc=0
	shift
	"$@" || rc=$?
	if [ $rc = 0 ]; then say "$what: $((SECONDS - t0)) s"; else say "$what: FAILED after $((SECONDS - t0)) s"; fi
	return $rc
}

build_base() {
	command -v mmdebstrap >/dev/null || { say "mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; return 1; }
	local tar log
	tar=$(mktemp "${TMPDIR:-/tmp}/zkr-base.XXXXXX.tar")
	log=${tar%.tar}.log
	# Documentation and translations are left out (path-exclude); man pages
	# stay: update-alternatives of OpenJDK needs /usr/share/man/man1.  dpkg
	# does not fsync every file (force-unsafe-io: a half-written image is
	# thrown away anyway).  mmdebstrap keeps these dpkg options in the image
	# (/etc/dpkg/dpkg.cfg.d), so the Dockerfiles' apt-get runs use them too.
	# shellcheck disable=SC2086 # no mirror argument when unset
	if ! nice mmdebstrap --variant=minbase \
		--dpkgopt=force-unsafe-io \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		bookworm "$tar" ${ZKR_DEBIAN_MIRROR:+"$ZKR_DEBIAN_MIRROR"} >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		rm -f "$tar" "$log"
		say "mmdebstrap failed" >&2
		return 1
	fi
	local rc=0
	nice "$engine" import -q "$tar" "$base" >/dev/null || rc=$?
	rm -f "$tar" "$log"
	return $rc
}

# The build context: the tree's source files only.
context() {
	local dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-ctx.XXXXXX")
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
			tar -cf - --null -T - | tar -xf - -C "$dir"
	else
		cp -a . "$dir"
		[ ! -f "$dir/Makefile" ] || make -C "$dir" distclean >/dev/null
	fi
	printf '%s\n' "$dir"
}

build_one() { # build_one DOCKERFILE IMAGE
	local ctx rc=0
	"$engine" image inspect "$base" >/dev/null 2>&1 ||
		{ say "no $base image: run docker/build-image.sh base first" >&2; return 1; }
	ctx=$(context) || return 1
	local -a args=(build -q --network host -f "$ctx/$1" -t "$2" --build-arg "BASE=$base")
	# No registry (--pull=never); no intermediate images: nothing is cached
	# for a next build (--layers=false).
	[ "$engine" != podman ] || args+=(--pull=never --layers=false)
	nice "$engine" "${args[@]}" "$ctx" >/dev/null || rc=$?
	rm -rf "$ctx"
	return $rc
}

server() { timed "server image $prefix-zookeeper" build_one docker/zookeeper.Dockerfile "$prefix-zookeeper"; }
testimg() { timed "test image $prefix-test" build_one docker/Dockerfile "$prefix-test"; }
t0=$SECONDS
case $what in
remove)
	rc=0
	for img in "$prefix-test" "$prefix-zookeeper" "$base"; do
		! "$engine" image inspect "$img" >/dev/null 2>&1 || "$engine" rmi "$img" >/dev/null || rc=1
	done
	exit $rc
	;;
base) timed "base image $base (mmdebstrap + import)" build_base ;;
server) server ;;
test) testimg ;;
all)
	timed "base image $base (mmdebstrap + import)" build_base
	# The two builds overlap well on two cores: the server's is mostly
	# dpkg and OpenJDK's setup, the test image's mostly the compiler.
	logs=$(mktemp -d "${TMPDIR:-/tmp}/zkr-build.XXXXXX")
	server >"$logs/server" 2>&1 &
	spid=$!
	rc=0 src=0
	testimg >"$logs/test" 2>&1 || rc=$?
	wait "$spid" || src=$?
	grep -h '^build-image: ' "$logs/server" "$logs/test" || true
	[ $src = 0 ] || { tail -n 40 "$logs/server" >&2; say "server image FAILED" >&2; }
	[ $rc = 0 ] || { tail -n 40 "$logs/test" >&2; say "test image FAILED" >&2; }
	rm -rf "$logs"
	[ $src = 0 ] && [ $rc = 0 ] || exit 1
	say "all images: $((SECONDS - t0)) s"
	;;
esac
