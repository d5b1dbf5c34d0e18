#!/usr/bin/env bash
# Installs the Debian packages scripts/deb.sh built into this system, uses
# them as a user would - two small programs built with `pkg-config
# --cflags --libs zkroute` against the installed headers (the zkr_ API,
# and an unmodified zookeeper.h program through <zkroute/compat.h>), run
# against ports where nothing listens; the installed tools and man pages -
# then removes (purges) the packages and checks nothing is left.  Run by
# CI as a stage (scripts/test.sh), not by make check: it changes the
# system.  Needs root (or sudo) and apt; no server.  TAP output.
#
#   tests/integration/deb-install.sh [DIR]     (default deb-out/, where scripts/deb.sh puts them)
set -u
cd "$(dirname "$0")/../.." || exit 2
dir=${1:-deb-out}
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
pkgs=(libzkroute0 libzkroute-dev zkroute-tools)
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
debs=()
for p in "${pkgs[@]}"; do
	f=$(find "$dir" -maxdepth 1 -name "${p}_*.deb" | head -n 1)
	[ -n "$f" ] || { echo "deb-install: no ${p}_*.deb in $dir (run scripts/deb.sh first)" >&2; exit 2; }
	debs+=("$f")
done
# Never remove what this script did not install, nor test against a copy
# of zkroute installed elsewhere.
for p in "${pkgs[@]}"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		echo "deb-install: $p is installed already: not touching it" >&2
		exit 2
	fi
done
if [ -e /usr/local/include/zkroute.h ] || ls /usr/local/lib/libzkroute.so* >/dev/null 2>&1; then
	echo "deb-install: a zkroute in /usr/local would shadow the packages' (make uninstall it first)" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/zkr-debtest.XXXXXX")
installed=0
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	[ $installed = 0 ] || $sudo dpkg --purge "${pkgs[@]}" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

n=0 bad=0
ok() { # ok TEXT STATUS [DETAIL]
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n - $1"; else
		bad=1
		echo "not ok $n - $1"
		[ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/# /'
	fi
}
echo "1..12"

out=$(DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${debs[@]}" 2>&1)
rc=$?
[ $rc != 0 ] || installed=1
ok "apt-get install ${debs[*]##*/}" $rc "$(printf '%s\n' "$out" | tail -n 15)"
[ $installed = 1 ] || exit 1

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
lib=/usr/lib/$multiarch/libzkroute.so.0
soname=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
# libzkroute.so.N belongs in libzkroute<N>: the package name follows the SONAME.
want=$(echo "$soname" | sed -n 's/^libzkroute\.so\.\([0-9]*\)$/libzkroute\1/p')
ok "$lib has SONAME $soname, in package $(dpkg -S "$lib" 2>/dev/null | cut -d: -f1)" \
	"$([ -n "$want" ] && dpkg -S "$lib" 2>/dev/null | grep -q "^$want:"; echo $?)"

version=$(dpkg-query -W -f='${Version}' libzkroute-dev)
have=$(pkg-config --modversion zkroute 2>&1)
ok "pkg-config --modversion zkroute: $have (package $version)" "$([ "$have" = "${version%-*}" ]; echo $?)"

# The zkr_ API: names, options, a bad host list, and a handle on two
# ports where nothing listens: the read fails cleanly after the session
# timeout, the close succeeds.
cat > "$work/api.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <zkroute.h>

int main(void) {
  zoo_set_debug_level(0);
  zkr_options_t o = ZKR_OPTIONS_INIT;
  zkr_t *z = NULL;
  struct Stat st;
  printf("strerror: %s\n", zkr_strerror(ZKR_EHOSTS_BAD_PORT));
  printf("set policy: %s\n", zkr_err_name(zkr_options_set(&o, "policy", "round_robin")));
  printf("set nope: %s\n", zkr_err_name(zkr_options_set(&o, "nope", "1")));
  printf("init bad port: %s\n",
         zkr_err_name(zkr_init_opts(&z, "127.0.0.1:99999", NULL, 2000, NULL, NULL, 0, &o)));
  int rc = zkr_init_opts(&z, "127.0.0.1:1,127.0.0.2:1", NULL, 2000, NULL, NULL, 0, &o);
  printf("init: %s, state %s\n", zkr_err_name(rc), zkr_state_name(zkr_state(z)));
  if (rc != ZOK) return 1;
  printf("exists: %s\n", zkr_err_name(zkr_exists(z, "/", 0, &st)));
  printf("close: %s\n", zkr_err_name(zkr_close(z)));
  return 0;
}
EOF
want='strerror: port is not a number from 1 to 65535
set policy: ZOK
set nope: ZKR_EOPTION
init bad port: ZKR_EHOSTS_BAD_PORT
init: ZOK, state connecting
exists: ZCONNECTIONLOSS
close: ZOK'
# shellcheck disable=SC2046 # pkg-config's words
out=$(cc -Wall -Wextra -Werror -o "$work/api" "$work/api.c" $(pkg-config --cflags --libs zkroute) 2>&1)
ok "cc api.c \$(pkg-config --cflags --libs zkroute)" $? "$out"
out=$(timeout 30 "$work/api" 2>&1)
ok "api: the zkr_ calls give clean codes on unreachable hosts" "$([ "$out" = "$want" ]; echo $?)" \
	"$(diff <(echo "$want") <(echo "$out"))"

# An unmodified zookeeper.h program, routed by one include line.
cat > "$work/compat.c" <<'EOF'
#include <stdio.h>
#include <zookeeper/zookeeper.h>
#include <zkroute/compat.h>

int main(void) {
  zoo_set_debug_level(0);
  zhandle_t *zh = zookeeper_init("127.0.0.1:1,127.0.0.2:1", NULL, 2000, NULL, NULL, 0);
  if (!zh) return 1;
  char buf[16];
  int len = sizeof buf;
  printf("routed: %s\n", zkr_compat_routed(zh) ? "yes" : "no");
  printf("get: %s\n", zerror(zoo_get(zh, "/", 0, buf, &len, NULL)));
  printf("close: %d\n", zookeeper_close(zh));
  return 0;
}
EOF
want='routed: yes
get: connection loss
close: 0'
# shellcheck disable=SC2046
out=$(cc -DTHREADED -Wall -Wextra -Werror -o "$work/compat" "$work/compat.c" $(pkg-config --cflags --libs zkroute) 2>&1)
ok "cc -DTHREADED compat.c \$(pkg-config --cflags --libs zkroute)" $? "$out"
out=$(timeout 30 "$work/compat" 2>&1)
ok "compat: zoo_get on a routed handle" "$([ "$out" = "$want" ]; echo $?)" "$(diff <(echo "$want") <(echo "$out"))"

out=$(zkroute options 2>&1)
ok "zkroute options (/usr/bin/zkroute on $(ldd /usr/bin/zkroute | awk '/libzkroute/ { print $3 }'))" \
	"$(printf '%s\n' "$out" | grep -q '^| `policy` | hybrid'; echo $?)" "$out"

preload=/usr/lib/$multiarch/zkroute/libzkroute_preload.so
out=$(zkroute-run --help 2>&1)
ok "zkroute-run names $preload, which exists" \
	"$(printf '%s\n' "$out" | grep -qF "(now: $preload)" && [ -f "$preload" ]; echo $?)" "$out"
out=$(zkroute-run sh -c 'echo "$LD_PRELOAD"' 2>&1)
ok "zkroute-run sh: LD_PRELOAD=$out" "$([ "$out" = "$preload" ]; echo $?)"

# The pages are in the packages; man finds them installed, unless this
# system keeps no manual pages (dpkg path-exclude, as Debian's container
# images have) or has no man.
pages="zkroute.1 zkroute-run.1 zkroute-bench.1 zkroute-fleet.1 zkroute.3 zkroute-compat.3"
contents=$(dpkg-deb -c "${debs[1]}"; dpkg-deb -c "${debs[2]}")
missing=
for p in $pages; do
	printf '%s\n' "$contents" | grep -q "/usr/share/man/man${p##*.}/$p.gz\$" || missing+="$p "
done
if ! command -v man >/dev/null; then
	ok "the six man pages # SKIP no man here" 0
elif grep -qs '^path-exclude=/usr/share/man' /etc/dpkg/dpkg.cfg.d/*; then
	ok "the six man pages are in the packages (dpkg here excludes /usr/share/man)" "$([ -z "$missing" ]; echo $?)" "missing: $missing"
else
	for p in $pages; do man -w "${p##*.}" "${p%.*}" >/dev/null 2>&1 || missing+="$p "; done
	ok "the six man pages are in the packages and man -w finds them" "$([ -z "$missing" ]; echo $?)" "missing: $missing"
fi

$sudo dpkg --purge "${pkgs[@]}" >/dev/null 2>&1
rc=$?
installed=0
left=$(ls -d /usr/include/zkroute.h /usr/include/zkroute "$lib" "$preload" /usr/bin/zkroute /usr/bin/zkroute-run \
	/usr/share/man/man3/zkroute.3.gz /usr/lib/"$multiarch"/pkgconfig/zkroute.pc 2>/dev/null)
ok "dpkg --purge ${pkgs[*]}: nothing left" "$([ $rc = 0 ] && [ -z "$left" ]; echo $?)" "$left"
exit $bad
