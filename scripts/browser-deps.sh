#!/bin/sh
# What the browser tests need from the system: Debian's chromium (Playwright drives it; its own
# browser download is never used) and a CJK font, so Japanese pages in screenshots show glyphs.
# `make test` runs this first. Elsewhere than Debian, install them by hand and set ZM_CHROMIUM to
# the chromium binary if it is not at /usr/bin/chromium.
exec sh "$(dirname "$0")/system-deps.sh" "The browser tests" \
  "chromium=${ZM_CHROMIUM:-/usr/bin/chromium}" \
  "fonts-ipafont-gothic=/usr/share/fonts/opentype/ipafont-gothic"
