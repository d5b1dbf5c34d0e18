#!/usr/bin/env bash
# Builds the Debian packages (docs/release.md) the way a Debian source
# package is built: the release tarball (make dist, in this configured
# tree) becomes zkroute_VERSION.orig.tar.gz, debian/ from this tree goes
# on top, and `dpkg-buildpackage -us -uc` makes the source package and the
# three binary packages (libzkroute0, libzkroute-dev, zkroute-tools), whose
# dh_auto_test runs the unit tests only.  Then lintian checks all of it:
# any error fails; its tags are printed (docs/release.md lists them).
#
#   scripts/deb.sh [OUTDIR]     (default deb-out/; the .deb, .dsc, ... land there)
#
# Needs dpkg-dev, debhelper, lintian and the Build-Depends of
# debian/control (scripts/test.sh installs them); no root.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
out=${1:-deb-out}
case $out in /*) ;; *) out=$top/$out ;; esac

version=$(sed -n 's/^AC_INIT(\[zkroute\], \[\([^]]*\)\].*/\1/p' configure.ac)
debversion=$(dpkg-parsechangelog -S Version)
# The changelog's upstream version must be the tarball's.
if [ "${debversion%-*}" != "$version" ]; then
	echo "deb: debian/changelog says $debversion, configure.ac $version" >&2
	exit 1
fi
[ -f Makefile ] || { echo "deb: configure this tree first (scripts/setup.sh)" >&2; exit 1; }
dpkg-checkbuilddeps debian/control

make dist >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/zkr-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "zkroute-$version.tar.gz" "$work/zkroute_$version.orig.tar.gz"
tar -xzf "$work/zkroute_$version.orig.tar.gz" -C "$work"
cp -a debian "$work/zkroute-$version/"

cd "$work/zkroute-$version"
echo "deb: dpkg-buildpackage -us -uc in $work/zkroute-$version"
DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc >"$work/build.log" 2>&1 || {
	tail -n 80 "$work/build.log"
	echo "deb: dpkg-buildpackage failed (log above)" >&2
	exit 1
}
grep -E '^(# (TOTAL|PASS|SKIP|FAIL|ERROR):|dpkg-gensymbols|dpkg-source: (info|warning))' "$work/build.log" || true
cd "$work"

changes=zkroute_${debversion}_$(dpkg-architecture -qDEB_HOST_ARCH).changes
echo "deb: lintian $changes"
lintian_status=0
lintian --info --display-info --pedantic --tag-display-limit 0 "$changes" >"$work/lintian.txt" 2>&1 || lintian_status=$?
sed 's/^/  /' "$work/lintian.txt"
errors=$(grep -c '^E: ' "$work/lintian.txt" || true)
echo "deb: lintian: $errors errors, $(grep -c '^W: ' "$work/lintian.txt" || true) warnings, $(grep -c '^I: ' "$work/lintian.txt" || true) info, $(grep -c '^P: ' "$work/lintian.txt" || true) pedantic (exit $lintian_status)"

mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.dsc "$out"/*.changes "$out"/*.buildinfo "$out"/*.tar.*
cp ./*.deb ./*.dsc ./*.changes ./*.buildinfo ./*.tar.* "$out/"
cp "$work/build.log" "$work/lintian.txt" "$out/"
ls -1 "$out"
[ "$errors" = 0 ]
