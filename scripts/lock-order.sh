#!/usr/bin/env bash
# Prints the lock nestings the library really performs, to check the
# lock-order table in core/handle.h's first comment against: every pair
# "held lock -> lock taken", by source line and lock expression, seen while
# the unit tests and SEEDS routed simulator seeds (default 300) ran under
# scripts/lock-order/lockrec.c.  Run from a built tree (make check builds
# the tests and tests/sim/zkroute-sim first).  Pairs whose second lock is
# ZooKeeper's or a test fake's show which library locks are held across a
# zoo_* call.
#
#   scripts/lock-order.sh            (SEEDS=N to change the seed count)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/zkr-lockrec.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O1 -shared -fPIC -o "$work/lockrec.so" scripts/lock-order/lockrec.c -ldl -lpthread
export LOCKREC_DIR=$work
(
  export LD_PRELOAD=$work/lockrec.so
  ulimit -v 3000000
  tests/sim/zkroute-sim --seeds "${SEEDS:-300}" --start 1 --mode routed --jobs 2 >/dev/null 2>&1 || true
  for t in tests/unit/test_*; do
    case $t in *.c | *.o | *.log | *.trs) continue ;; esac
    [ -x "$t" ] && timeout 300 "$t" >/dev/null 2>&1 || true
  done
)
cat "$work"/out.* 2>/dev/null | sort -u >"$work/pairs"
python3 - "$work/pairs" "$PWD" <<'PY'
import collections, os, re, subprocess, sys
top = sys.argv[2]
pairs = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 5]
sites = collections.defaultdict(set)
for p in pairs:
    sites[p[0]].add(p[1]); sites[p[3]].add(p[4])
name = {}
for obj, offs in sites.items():
    offs = sorted(offs)
    out = subprocess.run(['addr2line', '-e', obj] + offs, capture_output=True, text=True).stdout.split('\n') if os.path.exists(obj) else []
    for i, o in enumerate(offs):
        m = re.match(r'(.*):(\d+)', out[i]) if i < len(out) else None
        if m and os.path.exists(m.group(1)):
            src = open(m.group(1)).read().split('\n')
            k = int(m.group(2)) - 1
            lk = re.search(r'pthread_\w+\(&?([^)]*)\)', src[k])
            fn = next((l for l in reversed(src[:k + 1]) if re.match(r'^\w.*\(.*\{\s*$', l)), '')
            name[(obj, o)] = '%s:%s %s%s' % (os.path.relpath(m.group(1), top), m.group(2), lk.group(1) if lk else '?',
                                             ' (prefork)' if 'prefork' in fn else '')
        else:
            name[(obj, o)] = os.path.basename(obj)
res = set()
for p in pairs:
    a, b = name[(p[0], p[1])], name[(p[3], p[4])]
    if 'atfork' in a or 'prefork' in a or not a.startswith('zkroute/'):
        continue
    res.add(re.sub(r':\d+ ', ' ', a) + '  ->  ' + re.sub(r':\d+ ', ' ', b))
print('\n'.join(sorted(res)))
PY
