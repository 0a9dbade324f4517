"""One web process: uvicorn serving `zeromemory.asgi:application`.

    python -m zeromemory.web --fd N          # on a listening socket it inherited (`make run`)
    python -m zeromemory.web --port 8000     # on its own socket, alone
    python -m zeromemory.web --fd N --bulk   # a bulk process (zeromemory.core.bulk)

`manage.py serve` opens the listening socket once and starts ZM_WEB_PROCESSES of these on it:
the kernel hands each new connection to whichever process accepts first, so every process
serves the one port, and one that dies leaves its queued connections to the others. uvloop and
httptools keep the event loop and the HTTP parsing in C.
"""

from __future__ import annotations

import argparse
import os
import socket

import uvicorn

APPLICATION = "zeromemory.asgi:application"


def config(*, log_level: str) -> dict[str, object]:
    return {
        "loop": "uvloop",
        "http": "httptools",
        "lifespan": "on",
        "access_log": False,
        "log_level": log_level.lower(),
        # Clients that keep their connection open between calls (agents, the watcher, load
        # balancers) are not made to reconnect every few seconds.
        "timeout_keep_alive": 30,
        "server_header": False,
        # The client's address is the socket's peer. X-Forwarded-For is read by Django (sign-in
        # lockout) only with ZM_PROXY_COUNT set; uvicorn would otherwise take it from any
        # client on 127.0.0.1, so a local user could pose as another address.
        "proxy_headers": False,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fd", type=int, help="an inherited listening socket")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--bulk", action="store_true", help="serve the bulk requests web processes hand over"
    )
    args = parser.parse_args(argv)
    if args.bulk:  # what it is handed it serves itself
        os.environ.update(ZM_SERVES_BULK="true", ZM_BULK_PORT="0")
    log_level = os.environ.get("ZM_LOG_LEVEL", "INFO")
    if args.fd is None:
        uvicorn.run(APPLICATION, host=args.host, port=args.port, **config(log_level=log_level))
        return
    listener = socket.socket(fileno=args.fd)  # family and type are read from the socket
    server = uvicorn.Server(uvicorn.Config(APPLICATION, **config(log_level=log_level)))
    server.run(sockets=[listener])


def listen(*, host: str, port: int, backlog: int = 2048) -> socket.socket:
    """The listening socket the web processes share (inheritable, so children receive it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


if __name__ == "__main__":
    main()
