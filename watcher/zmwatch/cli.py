"""`zm-watch`: login, run, hook, import, status."""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import os
import sys
import time
from pathlib import Path

from zmwatch import service
from zmwatch.api import Client, Refused, Unreachable
from zmwatch.config import ConfigError, config_path, load, read_file, write_file
from zmwatch.files import Lock
from zmwatch.imports import import_projects, known_projects
from zmwatch.spool import Spool
from zmwatch.state import State


def _login(args: argparse.Namespace) -> int:
    path = config_path(os.environ)
    data = read_file(path)
    token = args.token or os.environ.get("ZM_TOKEN") or getpass.getpass("API token: ")
    try:
        me = Client(url=args.url, token=token).me().body
    except Refused as exc:
        print(f"{args.url} did not accept the token ({exc}). Nothing was written.")
        return 1
    except Unreachable as exc:
        print(f"The token could not be checked: {exc}. Nothing was written.")
        return 1
    data.update(url=args.url.rstrip("/"), token=token)
    write_file(path, data)
    print(f"Signed in to {args.url} as {me.get('username')}; configuration in {path} (0600).")
    if not data.get("allow"):
        print(
            "No project is captured yet: add path globs to `allow`, or a .zero-memory-allow file."
        )
    return 0


def _status(env: dict[str, str]) -> int:
    config = load(env, need_server=False)
    state, spool = State(config.state_dir), Spool(config.state_dir)
    holder = Lock(config.state_dir).holder() if _locked(config.state_dir) else {}
    print(f"server: {config.url or '(not configured)'}")
    running = f"pid {holder.get('pid')} ({holder.get('role')})" if holder else "no"
    print(f"running: {running}")
    print(f"files followed: {len(state.files)}")
    for path, record in sorted(state.files.items()):
        size = os.stat(path).st_size if os.path.exists(path) else None
        shown = f"{size} bytes" if size is not None else "gone"
        print(f"  {path}: offset {record['offset']} of {shown}")
        if record.get("unreadable"):
            where = ", ".join(str(position) for position in record["unreadable_at"])
            print(
                f"    {record['unreadable']} unreadable line(s) skipped (the last at byte {where})"
            )
        if record.get("unknown_format"):
            unknown, seen = record["unknown_format"]
            print(
                f"    unknown format: {unknown} of {seen} entries are of kinds the watcher does "
                "not know (a new version of the agent?); their text is not sent"
            )
    rejected = len(list(spool.rejected.glob("*.json"))) if spool.rejected.exists() else 0
    print(f"spool: {spool.length()} chunk(s) waiting, {rejected} refused by the server")
    delivery = state.delivery
    if delivery.get("last_error"):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(delivery["last_error_at"]))
        print(f"last error ({when}): {delivery['last_error']}")
        wait = float(delivery.get("next_attempt", 0)) - time.time()
        if wait > 0:
            print(f"next attempt in {wait:.0f} s")
    else:
        print("last error: none")
    return 0


def _locked(state_dir: Path) -> bool:
    if not state_dir.is_dir():
        return False
    probe = Lock(state_dir)
    if probe.acquire("status"):
        probe.release()
        return False
    return True


def _hook(args: argparse.Namespace, env: dict[str, str], home: Path) -> int:
    """Never blocks or fails the agent: whatever goes wrong, the hook answers 0 (a Stop hook
    that answers 2 would keep Claude Code from stopping)."""
    try:
        config = load(env)
    except ConfigError as exc:
        print(f"zm-watch: {exc}", file=sys.stderr)
        return 0
    if args.send:
        return service.hook_send(config, home)
    try:
        event = json.load(sys.stdin)
    except ValueError:
        event = {}
    transcript = event.get("transcript_path") if isinstance(event, dict) else None
    try:
        if isinstance(transcript, str) and transcript:
            service.request_flush(config.state_dir, os.path.expanduser(transcript))
        service.start_hook_child(config.state_dir)
    except OSError as exc:
        print(f"zm-watch: {exc}", file=sys.stderr)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="zm-watch", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    login = commands.add_parser("login", help="check a token against the server and save it")
    login.add_argument("url", help="the server, e.g. https://memory.example.com")
    login.add_argument("--token", help="the API token (else ZM_TOKEN, else asked)")
    run = commands.add_parser("run", help="follow transcripts and send them (foreground)")
    run.add_argument("--once", action="store_true", help="one pass, everything flushed, then exit")
    hook = commands.add_parser("hook", help="for Claude Code's Stop and PreCompact hooks")
    hook.add_argument("--send", action="store_true", help=argparse.SUPPRESS)
    project = commands.add_parser("import", help="send CLAUDE.md, AGENTS.md, rules, memory files")
    project.add_argument("projects", nargs="*", type=Path, help="default: the projects known")
    commands.add_parser(
        "status", help="files followed, offsets, unreadable lines, spool, last error"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("ZM_WATCH_LOG_LEVEL", "INFO").upper(),
        format="%(asctime)s zm-watch %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    env, home = dict(os.environ), Path.home()
    try:
        if args.command == "login":
            return _login(args)
        if args.command == "status":
            return _status(env)
        if args.command == "hook":
            return _hook(args, env, home)
        config = load(env)
        if args.command == "run":
            return service.run(config, home, once=args.once)
        client = Client(url=config.url, token=config.token)
        projects = [p.resolve() for p in args.projects] or known_projects(
            config, State(config.state_dir), home
        )
        return import_projects(client=client, config=config, projects=projects, home=home)
    except ConfigError as exc:
        print(f"zm-watch: {exc}", file=sys.stderr)
        return 2
