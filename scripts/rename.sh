#!/usr/bin/env bash
# Applies rename maps to the tree: each map line is "old new" (# starts a
# comment), and every whole-word occurrence of old - an identifier, or a
# file name such as hedge_apply.h inside route/hedge_apply.h - becomes new
# in every file git tracks (but debian/, docs/bench/, the dated
# docs/benchmarks-log.md, this script and the maps).  Re-runnable: a
# tree already renamed is left as it is, so a branch made before the
# rename can run the same maps over its own changes when it merges:
#
#   scripts/rename.sh scripts/rename-files.txt scripts/rename-map.txt
#
# It renames names only; files themselves are moved with git mv (the
# "files" map says which), and a name no longer in the code is harmless.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: scripts/rename.sh MAP..." >&2; exit 2; }
prog=$(mktemp)
trap 'rm -f "$prog"' EXIT
for map in "$@"; do
  while read -r old new rest; do
    case $old in '' | '#'*) continue ;; esac
    [ -n "$new" ] && [ -z "${rest:-}" ] || { echo "rename.sh: $map: bad line: $old $new $rest" >&2; exit 2; }
    # Regex-quote old; dots and slashes are the only specials names hold.
    q=$(printf '%s' "$old" | sed 's/[.\/]/\\&/g')
    printf 's/\\b%s\\b/%s/g\n' "$q" "$(printf '%s' "$new" | sed 's/[\/&]/\\&/g')" >>"$prog"
  done <"$map"
done
git ls-files -z | grep -zvE '^(debian|docs/bench)/|^docs/benchmarks-log\.md$|^scripts/rename(-[a-z]+\.txt|\.sh)$' |
  xargs -0 grep -lIZ -E "$(awk '!/^(#|$)/ {print $1}' "$@" | sed 's/[.]/\\./g' | paste -sd'|')" 2>/dev/null |
  xargs -0 -r sed -i -E -f "$prog"
