"""`python manage.py mcp_stdio --token <token>`: the MCP tools over stdin/stdout for one local
client (an agent that starts its MCP servers as child processes).

Every call runs as the token's user, exactly as over HTTP; the token is checked once at start
(an invalid one exits with an error before any protocol traffic) and again on every call, so
revoking it takes effect at once. Standard output carries only the protocol: while serving, the
SDK points file descriptor 1 at stderr for anything else that writes there.
"""

from __future__ import annotations

from functools import partial

import anyio
from django.core.management.base import BaseCommand, CommandError

from memories.mcp.auth import current_credential, lookup_token
from memories.mcp.tools import build_server


class Command(BaseCommand):
    help = "Serve the zero-memory MCP tools over stdio, as the user of the given API token."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--token", required=True, help="An API token of zero-memory.")

    def handle(self, *args, token: str, **options) -> None:
        secret = token.strip()
        if not secret or lookup_token(secret) is None:
            raise CommandError("The token is not valid: unknown, revoked or expired.")
        server = build_server()
        # Context variables set here are inherited by every task the server starts.
        current_credential.set(partial(lookup_token, secret))
        anyio.run(server.run_stdio_async)
