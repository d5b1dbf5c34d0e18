#!/usr/bin/env bash
# Every C source and header of the tree is as clang-format (.clang-format)
# writes it: STYLE.md, "clang-format decides formatting".  TAP output; skips
# (77) only where clang-format is not installed (scripts/test.sh installs
# it, so CI never skips).
set -u
top_srcdir=${top_srcdir:-.}
cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null; then
  echo "1..0 # SKIP $cf is not installed"
  exit 77
fi
cd "$top_srcdir" || exit 1
files=()
if git rev-parse --git-dir >/dev/null 2>&1; then
  while IFS= read -r f; do files+=("$f"); done < <(git ls-files '*.c' '*.h')
else
  while IFS= read -r f; do files+=("$f"); done < <(find include zkroute tools tests examples -name '*.[ch]' ! -path '*/corpus/*' | sort)
fi
echo "1..${#files[@]}"
n=0 bad=0
for f in "${files[@]}"; do
  n=$((n + 1))
  if "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "ok $n - $f"
  else
    bad=1
    echo "not ok $n - $f (clang-format -i $f)"
  fi
done
exit $bad
