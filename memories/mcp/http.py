"""/mcp: the streamable-HTTP MCP endpoint, served by the project's ASGI application.

`with_mcp(django_app)` answers /mcp itself and hands every other request to Django, so the
dashboard, the REST API and MCP share one process and one port. The SDK's session manager keeps
a task group for the sessions; it runs for the life of the server, started by the ASGI lifespan
protocol (uvicorn's default "auto" mode sends it; Django alone would refuse it). A server started
without lifespan (`--lifespan off`, or one that does not speak it) still works: the first request
to /mcp starts the manager on the running event loop.

The endpoint is stateless (the SDK's stateless streamable-HTTP mode, answers as JSON): every
request carries its own bearer token and holds no session, so any web process answers any MCP
request and no load balancer needs sticky sessions.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import AsyncExitStack

from django.conf import settings
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memories.mcp.auth import BearerTokenMiddleware
from memories.mcp.tools import build_server
from zeromemory.core.metrics import observe_request

logger = logging.getLogger(__name__)

MCP_PATHS = ("/mcp", "/mcp/")


class McpEndpoint:
    """The session manager behind the bearer-token door, with its lifetime."""

    def __init__(self) -> None:
        server = build_server()
        mcp_app = server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=True,
            json_response=True,
            # Host and Origin are checked by BearerTokenMiddleware against ALLOWED_HOSTS.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=settings.MAX_BODY_BYTES,
        )
        self.session_manager: StreamableHTTPSessionManager = server.session_manager
        self.app = BearerTokenMiddleware(mcp_app)
        self._stack: AsyncExitStack | None = None
        self._start_lock = asyncio.Lock()
        self._background: asyncio.Task | None = None

    @property
    def running(self) -> bool:
        return self._stack is not None or self._background is not None

    async def start(self) -> None:
        stack = AsyncExitStack()
        await stack.enter_async_context(self.session_manager.run())
        self._stack = stack

    async def stop(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def _run_in_background(self, started: asyncio.Event) -> None:
        async with self.session_manager.run():
            started.set()
            await asyncio.Event().wait()  # until the event loop shuts down

    async def ensure_running(self) -> None:
        """Start the manager on first use when no lifespan started it."""
        if self.running:
            return
        async with self._start_lock:
            if self.running:
                return
            logger.info("no ASGI lifespan: starting the MCP session manager on first use")
            started = asyncio.Event()
            self._background = asyncio.get_running_loop().create_task(
                self._run_in_background(started)
            )
            await started.wait()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.ensure_running()
        await self.app(scope, receive, send)


class WithMcp:
    """Route /mcp to the MCP endpoint and everything else to Django; answer the lifespan."""

    def __init__(self, django_app: ASGIApp, endpoint: McpEndpoint | None = None) -> None:
        self.django_app = django_app
        self.endpoint = endpoint or McpEndpoint()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http" and scope["path"] in MCP_PATHS:
            # /mcp/ is served as /mcp rather than redirected: not every client follows a redirect.
            await self._measured({**scope, "path": "/mcp"}, receive, send)
        else:
            await self.django_app(scope, receive, send)

    async def _measured(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve /mcp, counted in the request metrics like Django's routes (route `mcp`)."""
        started, status = time.perf_counter(), 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.endpoint(scope, receive, send_and_note)
        finally:
            observe_request(
                method=scope.get("method", ""),
                route="mcp",
                status=status,
                seconds=time.perf_counter() - started,
            )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.endpoint.start()
                except Exception as exc:
                    logger.exception("the MCP session manager did not start")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    await self.endpoint.stop()
                finally:
                    await send({"type": "lifespan.shutdown.complete"})
                return


def with_mcp(django_app: ASGIApp) -> WithMcp:
    return WithMcp(django_app)
