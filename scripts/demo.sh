#!/usr/bin/env bash
# The main job on a fresh machine: sets everything up (scripts/setup.sh),
# starts a local 3-node ZooKeeper ensemble on 127.0.0.1-3, runs a routed
# 80/20 read/write workload through zkroute, prints `zkroute status` (where
# the writes and reads went, per member) and each server's own counters,
# then stops the ensemble.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null

dir=$(mktemp -d "${TMPDIR:-/tmp}/zkr-demo.XXXXXX")
trap 'bash tests/harness/ensemble.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
echo "== starting a 3-node ensemble"
hosts=$(bash tests/harness/ensemble.sh start "$dir")
echo "   $hosts (leader: member $(bash tests/harness/ensemble.sh leader "$dir"))"

echo "== routed workload: ${ZKR_DEMO_OPS:-5000} operations, 80% reads, 20% writes, 8 threads"
./tools/zkroute workload "$hosts" --ops "${ZKR_DEMO_OPS:-5000}" --threads 8 --read-ratio 0.8

echo "== each server's own srvr counters"
IFS=, read -ra members <<<"$hosts"
for m in "${members[@]}"; do
  printf '   %-16s %s, %s\n' "$m" \
    "$(bash tests/harness/ensemble.sh srvr "${m%:*}" "${m##*:}" | grep -E '^Mode' | tr -d '\r')" \
    "$(bash tests/harness/ensemble.sh srvr "${m%:*}" "${m##*:}" | grep -E '^Received' | tr -d '\r')"
done
