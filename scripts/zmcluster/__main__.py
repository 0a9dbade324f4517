"""scripts/cluster up|down|status|drill: see scripts/zmcluster/cluster.py for the hosts."""

from __future__ import annotations

import argparse
import json
import sys

from scripts.zmcluster import cluster as deployment

FULL = deployment.Cluster(prefix="zmc", subnet="198.18.0", full=True)
REDUCED = deployment.Cluster(prefix="zmr", subnet="198.18.1", full=False)


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/cluster", description=__doc__)
    parser.add_argument("command", choices=["up", "down", "status", "drill"])
    parser.add_argument("--reduced", action="store_true", help="db1, redis, web1/2, wk1, lb")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30, help="load per drill (at most 120)")
    args = parser.parse_args()
    chosen = REDUCED if args.reduced else FULL
    if not (1 <= args.clients <= 200 and 5 <= args.seconds <= 120):
        parser.error("--clients 1..200, --seconds 5..120")
    if args.command == "up":
        try:
            deployment.up(chosen)
        except BaseException:
            print("up failed; taking down what started", file=sys.stderr)
            deployment.down(chosen)
            raise
        return 0
    if args.command == "down":
        existing = deployment.load(chosen.prefix) or chosen
        left = deployment.down(existing)
        print(json.dumps({"left_behind": left}))
        return 1 if left else 0
    if args.command == "status":
        existing = deployment.load(chosen.prefix)
        print(json.dumps(deployment.status(existing) if existing else {"up": False}, indent=1))
        return 0
    return drill(chosen, args.clients, args.seconds)


def drill(chosen: deployment.Cluster, clients: int, seconds: float) -> int:
    """up, the load and the four drills, down; the last line is the JSON of every drill."""
    results: dict[str, object] = {}
    try:
        deployment.up(chosen)
        from scripts.zmcluster import drills

        if chosen.full:
            results = drills.run_all(chosen, clients, seconds)
        else:
            results = {"web_kill": drills.web_kill(drills.Bench(chosen, clients), seconds)}
    finally:
        left = deployment.down(chosen)
    print(json.dumps({"drills": results, "left_behind": left}))
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
