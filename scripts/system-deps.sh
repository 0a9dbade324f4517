#!/bin/sh
# Installs Debian packages a part of the test suite needs, when they are missing and this user
# can (root, or sudo without a password); otherwise stops at once and prints the command to run.
# Usage: system-deps.sh "what needs them" PACKAGE=CHECK...
# CHECK is an absolute path that must exist, or a command that must be on PATH (or in /usr/sbin).
set -eu

purpose=$1
shift
missing=""
for pair in "$@"; do
  package=${pair%%=*}
  check=${pair#*=}
  case "$check" in
    /*) [ -e "$check" ] || missing="$missing $package" ;;
    *) command -v "$check" >/dev/null 2>&1 || [ -x "/usr/sbin/$check" ] || missing="$missing $package" ;;
  esac
done
missing=$(echo "$missing" | sed 's/^ *//')
[ -z "$missing" ] && exit 0

command="apt-get update && apt-get install -y --no-install-recommends $missing"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$purpose need: $missing." >&2
  echo "This is not a Debian or Ubuntu system: install them with its package manager." >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo -n"
else
  echo "$purpose need: $missing. Install them once, then run make test again:" >&2
  echo "  sudo sh -c '$command'" >&2
  exit 1
fi

echo "$purpose need $missing: installing them"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# Where an init system runs, Debian may also start a package's own service on 127.0.0.1; the
# tests never use those: they start their own.
# shellcheck disable=SC2086 # one word per package
$sudo apt-get install -y -q --no-install-recommends $missing
