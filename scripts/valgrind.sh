#!/usr/bin/env bash
# CI stage (scripts/test.sh): valgrind memcheck over test_badinput, the
# integration tests and the zkroute CLI, in the in-tree (normal) build.
# Passes when every process reports 0 errors and 0 bytes definitely or
# indirectly lost, apart from libzookeeper_mt's own leaks that
# tests/harness/valgrind.supp names (docs/robustness.md).  Logs: tests/valgrind/.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind: not installed" >&2; exit 1; }
logs=$PWD/tests/valgrind
rm -rf "$logs"
mkdir -p "$logs"
make -j"$(nproc)" >/dev/null
# Builds the test programs and runs none; the harness's summary goes aside,
# so the in-tree test-suite.log of the last `make check` stays.
make -j"$(nproc)" check TESTS= TEST_SUITE_LOG=tests/valgrind/build.log >/dev/null
rm -f "$logs/build.log"
# --fair-sched: valgrind runs one thread at a time; without a fair lock the
# busy completion threads starve the srvr poll threads past their timeout,
# and the routing view (not the code under test) changes.
VG="valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect
 --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --num-callers=40
 --fair-sched=yes --suppressions=$PWD/tests/harness/valgrind.supp --log-file=$logs/%q{ZKR_VG_NAME}.%p.log"
# Check forks a process per test; valgrind follows the fork and writes one
# log per process (%p), so a test that fails or leaks is named by its log,
# and Check's timeout (stretched for valgrind) ends a test that hangs.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-4} ZKR_VG_NAME
status=0

vg() { # vg NAME EXPECTED_EXIT CMD...: runs CMD under memcheck
  local name=$1 want=$2 rc=0
  shift 2
  ZKR_VG_NAME=$name
  ./libtool --mode=execute $VG "$@" >"$logs/$name.out" 2>&1 || rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "valgrind: $name: exit $rc, expected $want (tests/valgrind/$name.out)"
    tail -n 20 "$logs/$name.out"
    status=1
  fi
}

echo "valgrind: test_badinput"
vg badinput 0 tests/unit/test_badinput

echo "valgrind: integration tests"
ZKR_VG_NAME=it
# Under memcheck (20-50x slower) the fault tests' time targets cannot
# hold: it runs the routing and robustness integration tests.
if ! ZKR_IT_TESTS=${ZKR_IT_TESTS:-it_routing it_robust} \
  ZKR_IT_RUNNER="./libtool --mode=execute $VG" top_srcdir=. top_builddir=. \
  FAULTPROXY=$PWD/tests/harness/faultproxy bash tests/integration/integration.sh >"$logs/integration.out" 2>&1; then
  echo "valgrind: integration tests failed (tests/valgrind/integration.out)"
  grep -v "ZOO_" "$logs/integration.out" | tail -n 40
  status=1
fi

echo "valgrind: zkroute CLI"
dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-vg.XXXXXX")
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  bash tests/harness/ensemble.sh stop "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
hosts=$(bash tests/harness/ensemble.sh start "$dir")
node=/zkr-vg-cli-$$
cli=tools/zkroute
vg cli-options 0 $cli options
vg cli-status 0 $cli status "$hosts"
vg cli-status-json 0 $cli status "$hosts" --json --ops 50
vg cli-create 0 $cli create "$hosts" $node v1
vg cli-set 0 $cli --stats set "$hosts" $node v2
vg cli-get 0 $cli -o policy=round_robin get "$hosts" $node
vg cli-ls 0 $cli ls "$hosts" /
vg cli-delete 0 $cli delete "$hosts" $node
vg cli-get-gone 1 $cli get "$hosts" $node
vg cli-bad-hosts 1 $cli get "h1:70000" /x
vg cli-bad-path 1 $cli get "$hosts" a/b
vg cli-bad-option 2 $cli -o nope=1 get "$hosts" /
vg cli-unreachable 1 $cli --timeout 300 get "127.0.9.254:1" /

# One line per process: errors and leaks.
printf '%-28s %8s %12s %12s %10s\n' process errors definitely indirectly suppressed
for f in "$logs"/*.log; do
  name=$(basename "$f" .log)
  # A child that exec'd another program (system(), the fault proxy) left
  # valgrind before its summary: nothing to count.
  grep -q "ERROR SUMMARY" "$f" || continue
  errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$f" | tr -d , | tail -1)
  def=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$f" | tr -d , | tail -1)
  ind=$(sed -n 's/.*indirectly lost: \([0-9,]*\) bytes.*/\1/p' "$f" | tr -d , | tail -1)
  sup=$(sed -n 's/.*suppressed: \([0-9,]*\) bytes.*/\1/p' "$f" | tr -d , | tail -1)
  printf '%-28s %8s %12s %12s %10s\n' "$name" "${errors:-?}" "${def:-0}" "${ind:-0}" "${sup:-0}"
  if [ "${errors:-1}" != 0 ] || [ "${def:-0}" != 0 ] || [ "${ind:-0}" != 0 ]; then
    status=1
    # What memcheck said, for the run's closing lines (scripts/test.sh
    # prints tests/valgrind/excerpts.txt last): the errors and the lost
    # blocks with their stacks, without the banner and the summaries.
    { echo "valgrind: $name: $(sed -n 's/^==[0-9]*== Command: //p' "$f" | head -1)"
      sed -e 's/^==[0-9]*== \{0,1\}//' "$f" | awk '
        /^(HEAP|LEAK|ERROR) SUMMARY|^Memcheck,|^Copyright|^Using Valgrind|^Command:|^Parent PID:/ { skip = 1; next }
        /^$/ { if (!skip && n) print "  |"; skip = 0; next }
        !skip { print "  | " $0; n++ }' | head -n 60
    } >>"$logs/excerpts.txt"
  fi
done
[ "$status" -eq 0 ] && echo "valgrind: 0 errors, 0 bytes lost in zkroute's code" ||
  echo "valgrind: FAILED"
exit $status
