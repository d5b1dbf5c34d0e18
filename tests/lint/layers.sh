#!/usr/bin/env bash
# The library's shape (DESIGN.md section 9): no call goes to an upper
# layer, no include line breaks the folder rule, and the largest circle of
# files calling each other is at most 6 - scripts/layers.py --check, which
# prints the figures either way.  A lower layer that must tell an upper one
# does so through a table of callbacks (hooks.h) or a registered hook.
# TAP output; skips (77) only without python3.
set -u
top_srcdir=${top_srcdir:-.}
if ! command -v python3 >/dev/null; then
  echo "1..0 # SKIP python3 is not installed"
  exit 77
fi
echo "1..1"
if out=$(cd "$top_srcdir" && python3 scripts/layers.py --check 2>&1); then
  echo "ok 1 - scripts/layers.py --check"
  printf '%s\n' "$out" | grep -v '^  ' | sed 's/^/# /'
else
  echo "not ok 1 - scripts/layers.py --check"
  printf '%s\n' "$out" | sed 's/^/# /'
  exit 1
fi
