#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine to build and test zkroute: installs the
# Debian packages that are missing (nothing is downloaded from elsewhere),
# then configures and builds in the source tree.  Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck disable=SC2206 # ZKR_EXTRA_PACKAGES is a word list on purpose
# mandoc: make check lints the man pages with it (tests/lint/man-lint.sh).
# libmicrohttpd-dev: the metrics endpoint (docs/operations.md); prometheus:
# promtool checks the library's Prometheus text in make check, and the
# server scrapes a routed program in tests/integration/it_prometheus.sh;
# jq: tests/lint/grafana-doc.sh checks the Grafana dashboard with it.
packages=(build-essential autoconf automake libtool pkg-config
  libzookeeper-mt-dev libzookeeper-st2 zookeeper zookeeper-bin check default-jre-headless
  mandoc libmicrohttpd-dev prometheus jq python3 ${ZKR_EXTRA_PACKAGES:-})
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
  autoreconf -fi
fi
# shellcheck disable=SC2086 # ZKR_CONFIGURE_FLAGS is a word list on purpose
[ -f Makefile ] || ./configure ${ZKR_CONFIGURE_FLAGS:-}
make -j"$(nproc)"
