"""`make run`: migrate, create the first admin, then run the web server and the worker together.

Ctrl-C (or SIGTERM) stops both children, then the embedded database if this process started it.
"""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from memories.embeddings import check_dimension, declared_dimension
from zeromemory import embedded_db
from zeromemory.dbcheck import MissingExtension, require_extensions

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
        children = self._start(host, port, no_worker)
        url = f"http://{host}:{port}/"
        self.stdout.write(self.style.SUCCESS(f"zero-memory is running at {url}"))
        self.stdout.write(f"  API docs: {url}api/docs/   health: {url}healthz   Ctrl-C stops it.")
        code = self._supervise(children)
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

    def _start(self, host: str, port: int, no_worker: bool) -> list[subprocess.Popen]:
        web = [
            sys.executable,
            "-m",
            "uvicorn",
            "zeromemory.asgi:application",
            "--host",
            host,
            "--port",
            str(port),
            "--no-access-log",
        ]
        children = [subprocess.Popen(web, cwd=settings.BASE_DIR)]
        if not no_worker:
            worker = [sys.executable, str(settings.BASE_DIR / "manage.py"), "qcluster"]
            children.append(subprocess.Popen(worker, cwd=settings.BASE_DIR))
        return children

    def _supervise(self, children: list[subprocess.Popen]) -> int:
        stopping = False

        def request_stop(signum, frame) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        code = 0
        while not stopping:
            exited = [child for child in children if child.poll() is not None]
            if exited:
                code = exited[0].returncode or 1
                self.stderr.write(f"{exited[0].args[2:4]} exited with {exited[0].returncode}.")
                break
            time.sleep(0.3)
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for child in children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        return code
