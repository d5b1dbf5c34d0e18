#!/usr/bin/env bash
# Bad input to tools/zkroute-fleet gets one clear line and exit code 2
# (usage, an option the library rejects) or 1 (no ensemble there), within
# a few seconds: never a hang, never a run on half-understood arguments.
# And the tool adds no memory of its own to the threads it measures: its
# thread-local storage (which every thread of the process gets, the
# libraries' threads included) stays under 4 KiB - a 64 KiB __thread buffer
# once counted as 128 KiB of every stock handle.  No server is needed.
# TAP output.
set -u
top_builddir=${top_builddir:-.}
fleet=${ZKR_FLEET:-$top_builddir/tools/zkroute-fleet}
if [[ ! -x $fleet ]]; then
	echo "1..0 # SKIP $fleet not built"
	exit 77
fi
h=127.0.0.1:2181
# expect WANT_RC PATTERN ARGS...: zkroute-fleet ARGS exits WANT_RC within
# 20 s and its stderr contains PATTERN.
n=0 bad=0
expect() {
	local want=$1 pat=$2 err rc
	shift 2
	n=$((n + 1))
	err=$(timeout 20 "$fleet" "$@" 2>&1 >/dev/null)
	rc=$?
	if ((rc == want)) && [[ $err == *"$pat"* ]]; then
		echo "ok $n - $* -> $rc"
	else
		bad=1
		echo "not ok $n - $* -> exit $rc (want $want), stderr: $err"
	fi
}
echo "1..10"
expect 2 "'no_such_option=1' rejected by the library: unknown option" -o no_such_option=1 "$h"
expect 2 "'policy=bogus' rejected by the library: bad option value" -m stock,routed+policy=bogus "$h"
expect 2 "unknown variant 'sticky'" -m stock,sticky "$h"
expect 2 "stock takes no options" -m stock+policy=hybrid "$h"
expect 2 "--handles: expected a number from 1 to 5000" -n 0 "$h"
expect 2 "expected one HOSTS operand" -n 10
expect 2 "host list '127.0.0.1:x'" 127.0.0.1:x
expect 2 "--server-pids names 1 processes for 2 servers" --server-pids 1 "$h,127.0.0.2:2181"
# Nothing listens on port 1: the setup session never connects.
expect 1 "no session to 127.0.0.1:1 within 1 s" --connect-timeout 1 127.0.0.1:1
# The binary itself (libtool puts it in .libs/ behind a wrapper script).
bin=$fleet
d=$(dirname "$fleet")
[[ -x $d/.libs/$(basename "$fleet") ]] && bin=$d/.libs/$(basename "$fleet")
tls=$(readelf -lW "$bin" 2>/dev/null | awk '$1 == "TLS" { print $6 }')
[[ -n $tls ]] && tls=$((tls))
n=$((n + 1))
if [[ -n $tls ]] && ((tls > 4096)); then
	bad=1
	echo "not ok $n - $bin: thread-local storage $tls bytes per thread (at most 4096)"
else
	echo "ok $n - $bin: thread-local storage ${tls:-0} bytes per thread"
fi
exit $bad
