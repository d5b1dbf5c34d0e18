#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs every test: the unit tests,
# the integration tests against a real 3-node ZooKeeper ensemble that the
# harness starts and stops itself, and the validation of docker/.
set -euo pipefail
cd "$(dirname "$0")/.."
ZKR_EXTRA_PACKAGES="docker-compose ${ZKR_EXTRA_PACKAGES:-}" scripts/setup.sh

status=0
make -j"$(nproc)" check || status=$?
if [ $status -ne 0 ]; then
  # Show what failed: the harness keeps each test's output in its log.
  for f in tests/*.log; do
    [ "$f" = tests/test-suite.log ] && continue
    grep -q "^FAIL\|^ERROR" "${f%.log}.trs" 2>/dev/null && { echo "==== $f"; tail -n 80 "$f"; }
  done
fi

echo "==== docker/docker-compose.yml"
compose=1
if docker-compose -f docker/docker-compose.yml config -q; then
  echo "docker-compose config: ok"
  compose=0
else
  echo "docker-compose config: FAILED"
  status=1
fi

# Closing lines: every Check suite's checks (unit and integration), then
# the test programs as the harness counted them (TAP scripts included) and
# the compose validation.
grep -h "^[0-9]*%: Checks:" tests/*.log 2>/dev/null | awk -F'[:,] *' '
  { print; checks += $3; bad += $5 + $7 }
  END { printf "checks: %d passed, %d failed\n", checks - bad, bad }'
awk -v c="$compose" '/^# PASS:/ { p = $3 } /^# (FAIL|ERROR|XPASS):/ { f += $3 }
  END { printf "programs: %d passed, %d failed\n", p + (c == 0), f + (c != 0) }' \
  test-suite.log 2>/dev/null || true
exit $status
