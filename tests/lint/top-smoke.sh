#!/usr/bin/env bash
# Smoke test of `zkroute top` (docs/cli.md) without a server: handles on
# closed local ports.  Not a terminal: one line per refresh, from its own
# handle and from another process's metrics endpoint (a second `zkroute
# top` whose handle serves -o metrics=...); an endpoint that is not there
# is an error line and exit 1; on a pseudo-terminal (script(1)) the table
# is drawn on the alternate screen and `q` leaves and restores it.  TAP
# output.
set -u
top_builddir=${top_builddir:-.}
zkroute=$top_builddir/tools/zkroute
hosts=127.0.0.1:9,127.0.0.2:9
port=$((20000 + $$ % 20000))
echo "1..5"
bad=0
ok() { # ok N TEXT RESULT [DETAIL]
  if [ "$3" = 0 ]; then echo "ok $1 - $2"; else
    bad=1
    echo "not ok $1 - $2"
    [ -z "${4:-}" ] || printf '%s\n' "$4" | sed 's/^/# /'
  fi
}
out=$("$zkroute" --timeout 100 top "$hosts" --count 2 2>/dev/null)
ok 1 "top HOSTS, not a terminal: one line per second" \
  "$([ "$(printf '%s\n' "$out" | grep -c ' members=2 leader=- pool=0 reads/s=0.0 ')" = 2 ]; echo $?)" "$out"

"$zkroute" -o "metrics=127.0.0.1:$port" --timeout 100 top "$hosts" --count 8 >/dev/null 2>&1 &
server=$!
sleep 1
out=$("$zkroute" top --metrics "http://127.0.0.1:$port/metrics" --count 2 2>&1)
ok 2 "top --metrics URL of another process: one line per second" \
  "$([ "$(printf '%s\n' "$out" | grep -c ' members=2 leader=- ')" = 2 ]; echo $?)" "$out"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null

out=$("$zkroute" top --metrics "http://127.0.0.1:$port/metrics" --count 1 2>&1)
rc=$?
ok 3 "top --metrics with nothing listening: exit 1 and the reason" \
  "$([ $rc = 1 ] && printf '%s\n' "$out" | grep -q "^zkroute: top: http://127.0.0.1:$port/metrics: Connection refused"; echo $?)" "$out"

"$zkroute" top >/dev/null 2>&1
ok 4 "top without HOSTS or --metrics: usage error (exit 2)" "$([ $? = 2 ]; echo $?)"

if command -v script >/dev/null && command -v timeout >/dev/null; then
  out=$( (sleep 2; printf q) | timeout 20 script -qec "$zkroute --timeout 100 top $hosts" /dev/null 2>&1)
  rc=$?
  esc=$(printf '\033')
  good=1
  [ $rc = 0 ] && case $out in
    *"${esc}[?1049h"*"reads/s"*"${esc}[?25h${esc}[?1049l"*) good=0 ;;
  esac
  ok 5 "on a terminal: a table on the alternate screen; q restores the terminal (exit $rc)" $good \
    "$(printf '%s' "$out" | cat -v | tail -c 400)"
else
  echo "ok 5 - on a terminal # SKIP script(1) or timeout(1) not installed"
fi
exit $bad
