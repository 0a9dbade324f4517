#!/bin/sh
# What the browser tests need from the system: Debian's chromium (Playwright drives it; its own
# browser download is never used) and a CJK font, so Japanese pages in screenshots show glyphs.
# `make test` runs this first. Missing pieces are installed with apt-get when this user can
# (root, or sudo without a password); otherwise it stops at once and prints the command to run.
set -eu

chromium=${ZM_CHROMIUM:-/usr/bin/chromium}
font_dir=/usr/share/fonts/opentype/ipafont-gothic

missing=""
[ -x "$chromium" ] || missing="chromium"
[ -d "$font_dir" ] || missing="$missing fonts-ipafont-gothic"
missing=$(echo "$missing" | sed 's/^ *//')
[ -z "$missing" ] && exit 0

command="apt-get update && apt-get install -y --no-install-recommends $missing"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "The browser tests need chromium and a CJK font (missing: $missing)." >&2
  echo "This is not a Debian or Ubuntu system: install them with its package manager," >&2
  echo "then set ZM_CHROMIUM to the chromium binary if it is not at /usr/bin/chromium." >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo -n"
else
  echo "The browser tests need: $missing. Install them once, then run make test again:" >&2
  echo "  sudo sh -c '$command'" >&2
  exit 1
fi

echo "Installing what the browser tests need: $missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# shellcheck disable=SC2086 # one word per package
$sudo apt-get install -y -q --no-install-recommends $missing
