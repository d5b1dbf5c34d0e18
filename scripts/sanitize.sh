#!/usr/bin/env bash
# CI stage (scripts/test.sh): builds a copy of the tree with sanitizers and
# runs its tests there, so the in-tree build a user has is never touched.
#
#   scripts/sanitize.sh asan   ./configure --enable-sanitizers (ASan+UBSan),
#                              then `make check`: unit and integration tests
#   scripts/sanitize.sh tsan   ./configure --enable-tsan (ThreadSanitizer),
#                              then the unit tests but faultproxy-bench (a
#                              timing benchmark of a single-threaded tool)
#                              and the integration tests
#   Both leave out the drop-in test (it_dropin.sh): it preloads the
#   interposer into programs built without the sanitizer, which the
#   sanitizer runtimes refuse.
#
# The copy holds the files git knows plus untracked, unignored ones (so
# uncommitted work is tested too); without git, the whole tree after a
# `make distclean` in the copy.  Suppressions and sanitizer options come
# from Makefile.am (AM_TESTS_ENVIRONMENT) and tests/harness/*.supp.  Set
# ZKR_KEEP_BUILD=1 to keep the copy (its path is printed).
set -euo pipefail
mode=${1:?usage: scripts/sanitize.sh asan|tsan}
cd "$(dirname "$0")/.."
case $mode in
asan) flags=--enable-sanitizers ;;
tsan) flags=--enable-tsan ;;
*) echo "sanitize.sh: unknown mode $mode" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/zkr-$mode.XXXXXX")
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() { [ "${ZKR_KEEP_BUILD:-0}" = 1 ] && echo "sanitize: kept $work" || rm -rf "$work"; }
trap cleanup EXIT
if git rev-parse --git-dir >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar -cf - --null -T - | tar -xf - -C "$work"
else
  cp -a . "$work"
  if [ -f "$work/Makefile" ]; then make -C "$work" distclean >/dev/null; fi
fi

cd "$work"
echo "sanitize: $mode build in $work"
autoreconf -fi >/dev/null 2>&1
./configure -q $flags ${ZKR_CONFIGURE_FLAGS:-}
make -j"$(nproc)" >/dev/null
# Sanitized code is slower: Check's per-test timeouts stretch to match.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-3}
# The drop-in test preloads the (now sanitized) interposer into programs
# built without a sanitizer, which its runtime refuses ("ASan runtime does
# not come first"); it runs in the normal build and under valgrind.
export ZKR_IT_SKIP="${ZKR_IT_SKIP:-} it_dropin.sh"
# For the same reason the lock-recipe test's routed fault run uses its
# compat build instead of zkroute-run.
export ZKR_IT_NO_PRELOAD=1
status=0
if [ "$mode" = asan ]; then
  make -j"$(nproc)" check TESTS= TEST_SUITE_LOG=build.log >/dev/null
  # The unit tests, lints and simulator regressions (CPU only, no clock
  # they depend on) share the cores; then faultproxy-bench and the
  # integration tests one at a time: faultproxy-bench measures delays, and
  # sharing two cores with the integration tests under ASan makes those
  # measurements (not the code) miss.
  # shellcheck disable=SC2016 # expanded by make, not the shell
  make -j"$(nproc)" check TESTS='$(UNIT_TESTS) $(LINTS) tests/sim/regressions.sh' \
    TEST_SUITE_LOG=unit-suite.log || status=$?
  make check TESTS='tests/harness/faultproxy-bench tests/integration/integration.sh' || status=$?
else
  # shellcheck disable=SC2016 # expanded by make, not the shell
  make -j"$(nproc)" check TESTS= TEST_SUITE_LOG=build.log >/dev/null
  # Under TSan (5-15x slower) the fault tests' time targets (eject within
  # 2 s, expiry, the history schedule) cannot hold: TSan runs the routing,
  # robustness, hedging (the hedge thread; its one time check has a 10x
  # margin) and read-selector integration tests; the fault tests run in
  # the normal and ASan builds.
  # The unit tests share the cores; the integration tests run after them.
  make -j"$(nproc)" check TESTS='$(UNIT_TESTS)' TEST_SUITE_LOG=unit-suite.log || status=$?
  ZKR_IT_TESTS=${ZKR_IT_TESTS:-it_routing it_robust it_hedge it_select} \
    make check TESTS='tests/integration/integration.sh' || status=$?
fi

# What the sanitizers said, whatever the outcome.  (grep finds nothing in
# a clean run: every grep here is allowed to fail.)
logs=()
# Every test's log, in tests/ and its subfolders (tests/unit/...).
while IFS= read -r -d '' f; do logs+=("$f"); done < <(find tests -name '*.log' ! -name test-suite.log ! -name build.log -print0 | sort -z)
reports=$(cat "${logs[@]}" 2>/dev/null |
  grep -c -E '^(==[0-9]+==ERROR: |WARNING: ThreadSanitizer)|runtime error: ' || true)
echo "sanitize: $mode: ${reports:-0} sanitizer report(s) in ${#logs[@]} test logs"
# LSan lists "count bytes template", TSan "count template": summed per
# template over every process.
cat "${logs[@]}" 2>/dev/null | grep -A4 -E 'Suppressions used|Matched [0-9]+ suppressions' |
  grep -E '^ *[0-9]+ +[0-9]* *[a-z_]+' |
  awk '{ n[$NF] += $1 } END { for (t in n) printf "sanitize: suppressed %d times: %s\n", n[t], t }' || true
grep -h "Checks" "${logs[@]}" 2>/dev/null | sed 's/^/sanitize: /' || true
if [ "$status" -ne 0 ]; then
  # The failed checks first (the logs' tails below may not reach them).
  grep -h -a -E ':[0-9]+:[EF]:' "${logs[@]}" 2>/dev/null | sed 's/^/sanitize: failed: /' || true
  for f in "${logs[@]}"; do
    if grep -q ":test-result: \(FAIL\|ERROR\)" "${f%.log}.trs" 2>/dev/null; then
      echo "==== $f"
      grep -v "ZOO_" "$f" | tail -n 120
      # The failed integration tests' own sections (the tail above is
      # usually the last test's).
      bash scripts/failed-sections.sh "$f" || true
    fi
  done
fi
[ "${reports:-0}" -eq 0 ] || status=1
exit $status
