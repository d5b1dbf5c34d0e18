#!/usr/bin/env bash
# make check: replays every seed of tests/sim/regressions.txt (each seed
# that ever failed stays there) and fails if any has a violation.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
exec "$top_builddir/tests/sim/zkroute-sim" --regressions "$top_srcdir/tests/sim/regressions.txt"
