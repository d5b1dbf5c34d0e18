#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs every test: the unit tests,
# lints and simulator regressions, and the validation of docker/; then the
# release stages of docs/release.md: make distcheck, the tarball's file
# list against git, the Debian packages built and linted, installed, used
# and purged; then the robustness stages of docs/robustness.md: ASan+UBSan
# (with every integration test against a real 3-node ZooKeeper ensemble
# that the harness starts and stops itself) and TSan builds with their
# tests (each in a copy of the tree), valgrind over the integration tests
# and the CLI, every fuzz target for ZKR_FUZZ_SECONDS (60) each and the
# simulator's fixed budget of new seeds (docs/simulation.md) side by side;
# last, every integration test of the normal build, the fault proxy's
# included, with the ZooKeeper members in podman containers
# (scripts/container-tests.sh, docker/README.md; its images build during
# the simulator's stage).  Every stage can fail the run; ZKR_SKIP_RELEASE=1
# and ZKR_SKIP_ROBUSTNESS=1 skip them, ZKR_SKIP_CONTAINERS=1 the container
# stage (said in one line; the integration tests then run against member
# processes after the unit tests).  When the container engine cannot work
# on the machine, that stage says why in one line and counts neither as
# passed nor as failed, and the integration tests run against member
# processes instead.
set -euo pipefail
cd "$(dirname "$0")/.."
# clang and its runtime for the fuzz targets, valgrind, and git, from whose
# file list the sanitizer stages copy the tree; clang-format for
# tests/lint/format.sh; debhelper and lintian for
# the Debian packages.
ZKR_EXTRA_PACKAGES="docker-compose clang clang-format libclang-rt-14-dev valgrind git debhelper lintian ${ZKR_EXTRA_PACKAGES:-}" \
  scripts/setup.sh
# Each part of the run is timed, and the closing "stages:" line lists them
# (CI has a time budget of 55 minutes: docs/robustness.md).
setup_s=$SECONDS

# Everything the stages print also goes to $out, from which the closing
# lines pick what failed (CI shows the end of the output).
out=$(mktemp "${TMPDIR:-/tmp}/zkr-test.XXXXXX")
trap 'rm -f "$out" "${suite:-}"' EXIT
status=0
# Show what failed: the harness keeps each test's output in its log.
show_failed() {
  while IFS= read -r f; do
    if grep -q ":test-result: \(FAIL\|ERROR\)" "${f%.log}.trs" 2>/dev/null; then
      echo "==== $f"
      grep -a -E ':[0-9]+:[EF]:|^=== .* FAILED' "$f" || true
      grep -a -v "ZOO_" "$f" | tail -n 80
      # The failed integration tests' own sections (the tail above is
      # usually the last test's).
      scripts/failed-sections.sh "$f" || true
    fi
  done < <(find tests -name '*.log' ! -name test-suite.log | sort)
}
# The normal build's integration tests (tests/integration/integration.sh)
# run once in a run: against members in containers, in the container stage
# at the end, when that stage runs; against member processes here when it
# is skipped (ZKR_SKIP_CONTAINERS=1), or at the end when the container
# engine cannot work on the machine (its NOT RUN).  The ASan stage runs
# every one of them against member processes (docs/robustness.md, "CI's
# time").
check_tests=
if [ "${ZKR_SKIP_CONTAINERS:-0}" != 1 ]; then
  # shellcheck disable=SC2016 # expanded by make, not the shell
  check_tests='TESTS=$(NO_SERVER_TESTS)'
fi
check_t0=$SECONDS
make -j"$(nproc)" check ${check_tests:+"$check_tests"} 2>&1 | tee -a "$out" || status=${PIPESTATUS[0]}
check_s=$((SECONDS - check_t0))
# The harness's count of these programs, kept for the closing lines: the
# container stage's `make check TESTS=` (it builds the test programs)
# writes test-suite.log again, with no test in it.
suite=$(mktemp "${TMPDIR:-/tmp}/zkr-suite.XXXXXX")
cp test-suite.log "$suite" 2>/dev/null || true
[ "$status" -eq 0 ] || show_failed

echo "==== docker/docker-compose.yml"
compose=1
if docker-compose -f docker/docker-compose.yml config -q; then
  echo "docker-compose config: ok"
  compose=0
else
  echo "docker-compose config: FAILED"
  status=1
fi

# Release and robustness stages (docs/release.md, docs/robustness.md),
# each timed.
stages=" setup ($setup_s s), check $([ $status = 0 ] && echo ok || echo FAILED) ($check_s s),"
stage() { # stage NAME CMD...  (stage_t0=S: timed from S, not from now)
  local name=$1 t0=${stage_t0:-$SECONDS} rc=0
  shift
  echo "==== $name"
  "$@" 2>&1 | tee -a "$out" || rc=${PIPESTATUS[0]}
  if [ $rc -eq 0 ]; then
    stages+=" $name ok ($((SECONDS - t0)) s),"
  else
    stages+=" $name FAILED ($((SECONDS - t0)) s),"
    status=1
  fi
}
if [ "${ZKR_SKIP_RELEASE:-0}" != 1 ]; then
  # The tarball's own tests: unit tests and no-server checks only.
  stage distcheck make -j"$(nproc)" distcheck
  stage dist-files scripts/dist-files.sh
  # The packages' own build runs no tests here (DEB_BUILD_OPTIONS=nocheck):
  # dh_auto_test would run distcheck's set again, from the same tarball,
  # minutes later (docs/robustness.md, "CI's time"); scripts/deb.sh run by
  # hand still runs them.
  stage deb env DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" scripts/deb.sh deb-out
  stage deb-install bash tests/integration/deb-install.sh deb-out
fi
if [ "${ZKR_SKIP_ROBUSTNESS:-0}" != 1 ]; then
  stage asan+ubsan scripts/sanitize.sh asan
  stage tsan scripts/sanitize.sh tsan
  stage valgrind scripts/valgrind.sh
fi
# The fuzz stage: every target for ZKR_FUZZ_SECONDS.  It runs beside the
# simulator's stage when both run (each has a fixed length in wall time:
# they share the cores, and the run is shorter by the fuzz stage's length;
# docs/decisions.md), in the foreground otherwise.
fuzz_bg=
if [ "${ZKR_SKIP_ROBUSTNESS:-0}" != 1 ]; then
  if [ "${ZKR_SKIP_SIM:-0}" != 1 ]; then
    fuzz_bg=$(mktemp "${TMPDIR:-/tmp}/zkr-fuzz.XXXXXX")
    fuzz_t0=$SECONDS
    (
      rc=0
      make fuzz FUZZ_SECONDS="${ZKR_FUZZ_SECONDS:-60}" >"$fuzz_bg" 2>&1 || rc=$?
      exit $rc
    ) &
    fuzz_pid=$!
  else
    stage fuzz make fuzz FUZZ_SECONDS="${ZKR_FUZZ_SECONDS:-60}"
  fi
fi

# The simulator (docs/simulation.md): a fixed budget of new seeds per mode
# (ZKR_SIM_SECONDS each, 300 by default), printing how many schedules ran
# and each failing seed with the command that replays it.  ZKR_SIM_MODES
# lists the modes (default "stock"; "stock routed" judges the library
# too); ZKR_SKIP_SIM=1 skips the stage.
# The container stage's images build meanwhile: the simulator's stage lasts
# as long whatever else runs (it runs fewer schedules), so they cost it no
# time (scripts/container-tests.sh, ZKR_CONTAINER_PREBUILT).
images=
if [ "${ZKR_SKIP_SIM:-0}" != 1 ] && [ "${ZKR_SKIP_CONTAINERS:-0}" != 1 ]; then
  images=$(mktemp "${TMPDIR:-/tmp}/zkr-images.XXXXXX")
  trap 'rm -f "$out" "$suite" "$images"' EXIT
  scripts/container-tests.sh images >"$images" 2>&1 &
  images_pid=$!
fi
if [ "${ZKR_SKIP_SIM:-0}" != 1 ]; then
  for m in ${ZKR_SIM_MODES:-stock}; do
    stage "sim-$m" make sim SIM_MODE="$m" SIM_SECONDS="${ZKR_SIM_SECONDS:-300}"
  done
  # Routed mode is not clean on new seeds yet (with the checker's
  # first-creation rule, 2 of seeds 10001-30000 fail, 19467 and 28264:
  # docs/simulation.md, "Fifteenth session"), so new routed seeds do not
  # gate a run.
  # What does: fixed ranges that pass - deterministic, the same schedules
  # on any machine - as a regression set beside tests/sim/regressions.txt:
  # routed seeds 1-10000, 1-5000 with consistency=session (the first
  # 20000 pass there), 1-1000 with idle parking, 1-3000 with time inside
  # calls and 1-10000 with connections lost between requests.
  stage sim-routed-1-10000 make sim SIM_MODE=routed SEEDS=10000 SIM_START=1
  stage sim-session-1-5000 make sim SIM_MODE=routed SEEDS=5000 SIM_START=1 \
    SIM_ARGS="--consistency session"
  stage sim-idle-park-1-1000 make sim SIM_MODE=routed SEEDS=1000 SIM_START=1 \
    SIM_ARGS="--idle-park 300"
  stage sim-slow-calls-1-3000 make sim SIM_MODE=routed SEEDS=3000 SIM_START=1 \
    SIM_ARGS="--slow-calls"
  stage sim-io-loss-1-10000 make sim SIM_MODE=routed SEEDS=10000 SIM_START=1 \
    SIM_ARGS="--io-loss 5"
fi
if [ -n "$fuzz_bg" ]; then
  # Its output; the stage's line says how long it ran, its own last line
  # how long the run waited for it after the simulator's stage.
  fuzz_rc=0 fuzz_w0=$SECONDS
  wait "$fuzz_pid" || fuzz_rc=$?
  echo "fuzz: the run waited $((SECONDS - fuzz_w0)) s for it after the simulator's stage" >>"$fuzz_bg"
  fuzz_show() { cat "$fuzz_bg"; return "$fuzz_rc"; }
  stage_t0=$fuzz_t0 stage fuzz fuzz_show
  rm -f "$fuzz_bg"
fi

# The integration tests with the members in containers, after the others
# (the images built above, waited for).  scripts/container-tests.sh ends
# with one "containers: ok|FAILED|NOT RUN ..." line; exit 3 is NOT RUN
# (no working container engine here): neither a pass nor a failure.
crc=3
if [ "${ZKR_SKIP_CONTAINERS:-0}" = 1 ]; then
  containers="containers: NOT RUN: ZKR_SKIP_CONTAINERS=1; the container stage did not run"
  echo "$containers"
else
  echo "==== containers"
  crc=0 containers_t0=$SECONDS
  [ -z "$images" ] || wait "$images_pid" || true
  ZKR_CONTAINER_PREBUILT=$images scripts/container-tests.sh 2>&1 | tee -a "$out" || crc=${PIPESTATUS[0]}
  containers=$(grep -a -E '^containers: (ok|FAILED|NOT RUN)' "$out" | tail -n 1 || true)
  [ -n "$containers" ] || containers="containers: FAILED (exit $crc, no closing line)"
  [ $crc = 0 ] || [ $crc = 3 ] || status=1
  stages+=" containers ($((SECONDS - containers_t0)) s),"
  if [ $crc = 3 ]; then
    # The container engine cannot work here: the integration tests run
    # against member processes instead, so they never go unrun.
    echo "==== integration (member processes: the container stage did not run)"
    irc=0 it_t0=$SECONDS
    make check TESTS=tests/integration/integration.sh TEST_SUITE_LOG=integration-suite.log 2>&1 |
      tee -a "$out" || irc=${PIPESTATUS[0]}
    if [ $irc = 0 ]; then
      stages+=" integration ok ($((SECONDS - it_t0)) s),"
    else
      stages+=" integration FAILED ($((SECONDS - it_t0)) s),"
      status=1
      show_failed
    fi
  fi
fi

# Closing lines: the release and robustness stages, the container stage,
# every Check suite's checks (unit and integration, the container stage's
# included: tests/container-tests.log), then the test programs as the
# harness counted them (TAP scripts included), the compose validation and
# the container stage (one program each).
echo "stages:${stages%,}; the run: $SECONDS s"
echo "$containers"
find tests -name '*.log' ! -name test-suite.log -exec grep -h "^[0-9]*%: Checks:" {} + 2>/dev/null | awk -F'[:,] *' '
  { print; checks += $3; bad += $5 + $7 }
  END { printf "checks: %d passed, %d failed\n", checks - bad, bad }'
awk -v c="$compose" -v k="$crc" '/^# PASS:/ { p += $3 } /^# (FAIL|ERROR|XPASS):/ { f += $3 }
  END { printf "programs: %d passed, %d failed\n", p + (c == 0) + (k == 0), f + (c != 0) + (k != 0 && k != 3) }' \
  "$suite" $([ ! -f integration-suite.log ] || echo integration-suite.log) 2>/dev/null || true
if [ $status -ne 0 ]; then
  # What failed, from every stage: Check assertions, TAP checks, sanitizer
  # and valgrind verdicts.
  echo "failures:"
  grep -a -E ':[0-9]+:[EF]:|^not ok|^==[0-9]+==ERROR: |WARNING: ThreadSanitizer|runtime error: |^(FAIL|ERROR): |^valgrind: .*(exit|failed)|^FAIL seed |^sanitize: .*[1-9][0-9]* sanitizer report|FAILED' \
    "$out" | sort | uniq -c | sort -rn | head -n 40 || true
  # What memcheck said of each failing process (scripts/valgrind.sh).
  [ ! -s tests/valgrind/excerpts.txt ] || head -n 120 tests/valgrind/excerpts.txt
fi
exit $status
