"""`make run`: migrate, create the first admin, then run the web server and the worker together.

The web server is ZM_WEB_PROCESSES processes on one listening socket (`zeromemory.web`). The
children are supervised (`zeromemory.supervisor`): one that dies is restarted while the
others keep serving. Ctrl-C (or SIGTERM) stops every child and everything they started, then the
embedded database if this process started it.
"""

from __future__ import annotations

import secrets
import socket
import sys

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from memories.background import worker_environment
from memories.embeddings import check_dimension, declared_dimension
from zeromemory import embedded_db
from zeromemory.conductor import Conductor
from zeromemory.dbcheck import MissingExtension, require_extensions
from zeromemory.supervisor import ChildSpec, Supervisor
from zeromemory.web import listen

ADMIN_USERNAME = "admin"


class Command(BaseCommand):
    help = "Run zero-memory: migrations, the ASGI web server and the django-q2 worker."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default=settings.SERVE_HOST)
        parser.add_argument("--port", type=int, default=settings.SERVE_PORT)
        parser.add_argument("--no-worker", action="store_true", help="Run the web server only.")

    def handle(self, *args, host: str, port: int, no_worker: bool, **options) -> None:
        try:
            require_extensions(connection)
            check_dimension(declared_dimension())
        except (MissingExtension, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from None
        call_command("migrate", interactive=False, verbosity=0)
        self._first_admin()
        if settings.METRICS:
            # Counts of an earlier run's processes would be added to this run's.
            for stale in settings.METRICS_DIR.glob("*.db"):
                stale.unlink(missing_ok=True)
        try:
            listener = listen(host=host, port=port)
        except OSError as exc:
            raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        # The bulk processes' own socket, reached by the web processes only (127.0.0.1).
        bulk = listen(host="127.0.0.1", port=0) if settings.BULK_PROCESSES else None
        conductor = (
            Conductor(
                longest=settings.FOREGROUND_STOP_MS / 1000, share=settings.BACKGROUND_SHARE / 100
            )
            if settings.FOREGROUND_STOP_MS
            else None
        )
        supervisor = Supervisor(
            self._children(listener, bulk, conductor, no_worker),
            cwd=settings.BASE_DIR,
            conductor=conductor,
        )
        connection.close()  # the children open their own; this process only waits
        url = f"http://{host}:{port}/"
        self.stdout.write(self.style.SUCCESS(f"zero-memory is running at {url}"))
        self.stdout.write(
            f"  API docs: {url}api/docs/   health: {url}healthz   ready: {url}readyz"
            "   Ctrl-C stops it."
        )
        try:
            code = supervisor.run()
        finally:
            listener.close()
            if bulk is not None:
                bulk.close()
            if conductor is not None:
                conductor.close()
            if embedded_db.stop_if_started_here():
                self.stdout.write("Stopped the embedded database.")
        sys.exit(code)

    def _first_admin(self) -> None:
        """On the first start only (no superuser yet), create one and print its password once."""
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            return
        password = secrets.token_urlsafe(12)
        users.objects.create_superuser(username=ADMIN_USERNAME, email="", password=password)
        self.stdout.write(self.style.WARNING("Created the first admin account (shown only once):"))
        self.stdout.write(f"  username: {ADMIN_USERNAME}\n  password: {password}")

    def _children(
        self,
        listener: socket.socket,
        bulk: socket.socket | None,
        conductor: Conductor | None,
        no_worker: bool,
    ) -> list[ChildSpec]:
        """ZM_WEB_PROCESSES web processes sharing the listening socket, the ZM_BULK_PROCESSES
        they hand bulk requests to at ZM_BULK_NICE (zeromemory.core.bulk), and the worker at
        ZM_WORKER_NICE with its thread pools bounded (memories.background); the last two are
        stopped while the first have requests in flight (zeromemory.conductor)."""
        fd = listener.fileno()
        web = [sys.executable, "-m", "zeromemory.web", "--fd", str(fd)]
        web_env = {"ZM_BULK_PORT": str(bulk.getsockname()[1]) if bulk is not None else "0"}
        web_fds: tuple[int, ...] = (fd,)
        if conductor is not None:
            web_env["ZM_CONDUCTOR_FD"] = str(conductor.sender_fd)
            web_fds += (conductor.sender_fd,)
        children = [
            ChildSpec(name=f"web-{n}", argv=web, pass_fds=web_fds, env=web_env)
            for n in range(1, settings.WEB_PROCESSES + 1)
        ]
        if bulk is not None:
            bulk_fd = bulk.fileno()
            children += [
                ChildSpec(
                    name=f"bulk-{n}",
                    argv=[*web[:-1], str(bulk_fd), "--bulk"],
                    pass_fds=(bulk_fd,),
                    nice=settings.BULK_NICE,
                    background=True,
                )
                for n in range(1, settings.BULK_PROCESSES + 1)
            ]
        if not no_worker:
            worker = [sys.executable, str(settings.BASE_DIR / "manage.py"), "qcluster"]
            children.append(
                ChildSpec(
                    name="worker",
                    argv=worker,
                    nice=settings.WORKER_NICE,
                    env=worker_environment(),
                    background=True,
                )
            )
        return children
