"""`scripts/cluster up` refuses a cluster whose hosts are up, and clears the files of one whose
hosts are gone (a run killed before its `down`, or a machine restarted: the namespaces do not
outlive it), so that a stale folder never blocks the next `up` or drill."""

from __future__ import annotations

import os
import subprocess

import pytest

from scripts.zmcluster import cluster as deployment
from scripts.zmcluster import services

MISSING = services.missing_packages("redis-server", "haproxy", "pgbouncer")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the cluster's namespaces need root"),
    pytest.mark.skipif(bool(MISSING), reason=f"missing {MISSING}: sh scripts/cluster-deps.sh"),
]

# A cluster of its own name, so that the drill's and the full cluster's are never touched.
PROBE = deployment.Cluster(prefix="zmt", subnet="198.18.9", full=False)


@pytest.fixture
def stale_files():
    (PROBE.state_dir / "db1").mkdir(parents=True)
    PROBE.save()
    yield PROBE.state_dir
    deployment.down(PROBE)


def test_the_files_of_a_cluster_whose_hosts_are_gone_are_cleared(stale_files):
    with deployment.claimed(PROBE):
        deployment.preflight(PROBE)
    assert not stale_files.exists()


def test_a_cluster_whose_hosts_are_up_is_refused_and_kept(stale_files):
    subprocess.run(["ip", "netns", "add", "zmt-db1"], check=True)
    try:
        with pytest.raises(SystemExit, match="a cluster 'zmt' is up"):
            deployment.preflight(PROBE)
        assert (stale_files / "cluster.json").exists()
    finally:
        subprocess.run(["ip", "netns", "delete", "zmt-db1"], check=True)
