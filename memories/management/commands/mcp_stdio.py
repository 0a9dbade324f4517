"""`python manage.py mcp_stdio`: the MCP tools over stdin/stdout for one local client (an agent
that starts its MCP servers as child processes).

The token comes from the environment variable ZM_TOKEN or from a file (`--token-file PATH`,
the first line), never from the command line: a process's arguments are visible to every local
user in /proc/<pid>/cmdline. `--token` still works for old configurations, with a warning.

Every call runs as the token's user, exactly as over HTTP; the token is checked once at start
(an invalid one exits with an error before any protocol traffic) and again on every call, so
revoking it takes effect at once. Standard output carries only the protocol: while serving, the
SDK points file descriptor 1 at stderr for anything else that writes there.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import anyio
from django.core.management.base import BaseCommand, CommandError

from memories.mcp.auth import current_credential, lookup_token
from memories.mcp.tools import build_server

TOKEN_VARIABLE = "ZM_TOKEN"  # noqa: S105 - the name of a variable, not a secret


def _secret(*, token: str | None, token_file: str | None) -> str:
    if token_file:
        try:
            return Path(token_file).read_text(encoding="utf-8").strip().splitlines()[0].strip()
        except (OSError, UnicodeDecodeError, IndexError) as exc:
            raise CommandError(f"Cannot read a token from {token_file}: {exc}") from None
    if token:
        sys.stderr.write(
            "warning: --token shows the secret to every local user (in the process list); "
            f"set {TOKEN_VARIABLE} or use --token-file instead.\n"
        )
        return token.strip()
    return os.environ.get(TOKEN_VARIABLE, "").strip()


class Command(BaseCommand):
    help = (
        "Serve the zero-memory MCP tools over stdio, as the user of the API token in "
        f"${TOKEN_VARIABLE} or in --token-file."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--token-file", help="A file whose first line is an API token.")
        parser.add_argument(
            "--token", help=f"Deprecated: visible to other users; use ${TOKEN_VARIABLE}."
        )

    def handle(self, *args, token: str | None, token_file: str | None, **options) -> None:
        secret = _secret(token=token, token_file=token_file)
        if not secret:
            raise CommandError(f"No token: set {TOKEN_VARIABLE} or pass --token-file PATH.")
        if lookup_token(secret) is None:
            raise CommandError("The token is not valid: unknown, revoked or expired.")
        server = build_server()
        # Context variables set here are inherited by every task the server starts.
        current_credential.set(partial(lookup_token, secret))
        anyio.run(server.run_stdio_async)
