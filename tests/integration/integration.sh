#!/usr/bin/env bash
# Runs every integration test binary against one real 3-node ensemble that
# it starts (tests/harness/ensemble.sh) and always stops.  Skips (exit 77) when
# Java or the ZooKeeper server is truly absent (.ci/run installs both), or
# when told to (ZKR_INTEGRATION=no, below).  With ZKR_TEST_BACKEND=containers
# the members (and those of it_membership's own ensembles) are containers of
# the zookeeper image (ensemble.sh, "Container backend"; the CI stage
# scripts/container-tests.sh): no Java is needed here, and after each test a
# line lists the members as the engine sees them.
set -euo pipefail
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}

# configure --disable-integration-tests (make distcheck, the Debian build)
# or `make check ZKR_INTEGRATION=no`: the unit tests and the no-server
# checks only (docs/release.md).
if [ "${ZKR_INTEGRATION:-yes}" = no ]; then
  echo "integration: ZKR_INTEGRATION=no (configure --disable-integration-tests): skipped" >&2
  exit 77
fi
if [ -z "${ZKR_TEST_ENSEMBLE:-}" ] && [ "${ZKR_TEST_BACKEND:-processes}" != containers ]; then
  if ! command -v java >/dev/null || [ ! -e /usr/share/java/zookeeper.jar ]; then
    echo "integration: Java or the ZooKeeper server is not installed: skipped" >&2
    exit 77
  fi
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-it.XXXXXX")
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  bash "$top_srcdir/tests/harness/ensemble.sh" stop "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
# Behind the fault proxy (docs/faultproxy.md) unless ZKR_IT_PROXIED=0: every
# test goes through it, and it_health injects its faults there.
export FAULTPROXY=${FAULTPROXY:-$top_builddir/tests/harness/faultproxy}
mode=--proxied
[ "${ZKR_IT_PROXIED:-1}" != 0 ] || mode=
hosts=$(bash "$top_srcdir/tests/harness/ensemble.sh" start "$dir" $mode)
# An external ensemble (ZKR_TEST_ENSEMBLE) has no proxy: start ignores --proxied.
[ -z "${ZKR_TEST_ENSEMBLE:-}" ] || mode=
in_ctr=${ZKR_TEST_CONTAINERS:+, in containers}
[ "${ZKR_TEST_BACKEND:-processes}" != containers ] || in_ctr=", members in containers"
echo "integration: ensemble $hosts (dir $dir${mode:+, proxied}$in_ctr)"
export ZKR_TEST_HOSTS=$hosts ZKR_TEST_DIR=$dir
export ZKR_TEST_ENSEMBLE_SH=$top_srcdir/tests/harness/ensemble.sh
export ZKR_TEST_FAULTPROXY=$top_builddir/tests/harness/faultproxy

failed=0
# ZKR_IT_RUNNER prefixes each test program (scripts/valgrind.sh: libtool
# --mode=execute valgrind ...).
# ZKR_IT_SKIP names tests to leave out (scripts/sanitize.sh: the drop-in
# test, whose uninstrumented programs cannot preload a sanitized library).
# it_membership starts ensembles of its own, on ZKR_TEST_NET's next network.
for t in ${ZKR_IT_TESTS:-it_routing it_session it_calls it_failover it_health it_history it_robust it_hedge it_select it_dropin.sh it_lock.sh it_prometheus.sh soak-zkconfd.sh it_membership}; do
  echo "=== $t"
  case " ${ZKR_IT_SKIP:-} " in *" $t "*) echo "=== $t SKIPPED (ZKR_IT_SKIP)"; continue ;; esac
  rc=0 t0=$SECONDS
  case $t in
  *.sh) bash "$top_srcdir/tests/integration/$t" || rc=$? ;; # scripts live in the source tree
  *) ${ZKR_IT_RUNNER:-} "$top_builddir/tests/integration/$t" || rc=$? ;;
  esac
  if [ "$rc" = 77 ]; then
    echo "=== $t SKIPPED"
  elif [ "$rc" != 0 ]; then
    echo "=== $t FAILED"
    failed=$((failed + 1))
  fi
  # Every test must leave a working ensemble behind for the next one.
  bash "$top_srcdir/tests/harness/ensemble.sh" wait-leader "$dir" >/dev/null
  if [ "${ZKR_TEST_BACKEND:-processes}" = containers ]; then
    echo "=== $t: $((SECONDS - t0)) s; members: $(bash "$top_srcdir/tests/harness/ensemble.sh" ps "$dir" | paste -sd';' - | sed 's/;/; /g')"
  fi
done
exit $((failed > 0))
