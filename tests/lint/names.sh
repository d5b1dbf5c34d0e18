#!/usr/bin/env bash
# A function lives in the file its name says (STYLE.md, "Lessons from our
# own tree, second read"): every non-static function a library file
# zkroute/<layer>/<file>.c defines under the internal prefix is named
# zkr__<file> or zkr__<file>_*, as rd_kafka_broker_* lives in
# rdkafka_broker.c.  Public zkr_* functions (the API, kept as ZooKeeper's
# names) and static functions are not checked; nor are inline helpers in
# headers.  A name that must stay elsewhere goes in
# tests/lint/names-allow.txt ("file name  # why"), which is kept short.
# Renames are done with scripts/rename.sh and a map (scripts/rename-map.txt).
# TAP output; skips (77) only without python3.
set -u
top_srcdir=${top_srcdir:-.}
if ! command -v python3 >/dev/null; then
  echo "1..0 # SKIP python3 is not installed"
  exit 77
fi
cd "$top_srcdir" || exit 1
python3 - <<'PY'
import glob, os, re
allow = set()
if os.path.exists('tests/lint/names-allow.txt'):
    for line in open('tests/lint/names-allow.txt'):
        line = line.split('#', 1)[0].split()
        if len(line) == 2:
            allow.add(tuple(line))
files = sorted(glob.glob('zkroute/*/*.c'))
print('1..%d' % len(files))
bad_total = 0
for n, f in enumerate(files, 1):
    src = open(f).read()
    stem = os.path.basename(f)[:-2]
    bad = []
    # A definition: a line starting with the return type (not static), the
    # name, its parameters, and a body before any ';'.
    for m in re.finditer(r'^(?!static\b)[A-Za-z_][\w \*]*?\b(zkr__\w+)\(', src, re.M):
        rest = src[m.end():]
        brace, semi = rest.find('{'), rest.find(';')
        if brace < 0 or (0 <= semi < brace):
            continue
        name = m.group(1)
        if name == 'zkr__' + stem or name.startswith('zkr__' + stem + '_'):
            continue
        if (f, name) in allow:
            continue
        bad.append(name)
    bad_total += len(bad)
    if bad:
        print('not ok %d - %s: %s (want zkr__%s_*)' % (n, f, ' '.join(bad), stem))
    else:
        print('ok %d - %s' % (n, f))
raise SystemExit(1 if bad_total else 0)
PY
