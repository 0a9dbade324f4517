"""`scripts/cluster up` refuses a cluster whose hosts are up, and clears the files of one whose
hosts are gone (a run killed before its `down`, or a machine restarted: the namespaces do not
outlive it), so that a stale folder never blocks the next `up` or drill."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from scripts.zmcluster import cluster as deployment
from scripts.zmcluster import services

MISSING = services.missing_packages("redis-server", "haproxy", "pgbouncer")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the cluster's namespaces need root"),
    pytest.mark.skipif(bool(MISSING), reason=f"missing {MISSING}: sh scripts/cluster-deps.sh"),
]


def test_stale_files_are_cleared_and_a_cluster_whose_hosts_are_up_is_refused():
    # A name of this process's own: never the drill's or the full cluster's, nor another run's.
    probe = deployment.Cluster(prefix=f"zt{os.getpid() % 1000}", subnet="198.18.9", full=False)
    lock = Path(tempfile.gettempdir()) / f"zmcluster-{probe.prefix}.lock"
    namespace = f"{probe.prefix}-db1"
    try:
        (probe.state_dir / "db1").mkdir(parents=True)
        probe.save()
        with deployment.claimed(probe):
            deployment.preflight(probe)
        assert not probe.state_dir.exists()

        probe.state_dir.mkdir()
        probe.save()
        subprocess.run(["ip", "netns", "add", namespace], check=True)
        with pytest.raises(SystemExit, match=f"a cluster '{probe.prefix}' is up"):
            deployment.preflight(probe)
        assert (probe.state_dir / "cluster.json").exists()
    finally:
        subprocess.run(["ip", "netns", "delete", namespace], check=False, capture_output=True)
        assert deployment.down(probe) == []
        lock.unlink(missing_ok=True)
