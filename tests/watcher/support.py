"""What the watcher's tests share: a home folder with a project and agent transcripts in it, and
the watcher as a real program, run with the system's python3 (standard library only)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from memories.models import Chunk

SCRIPT = Path(settings.BASE_DIR) / "watcher" / "zm_watch.py"
PYTHON3 = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else shutil.which("python3")


@dataclass(frozen=True)
class Home:
    """A user's home: ~/src/shop is a git project; transcripts go where the agents write them."""

    root: Path

    @classmethod
    def make(cls, tmp_path: Path) -> Home:
        home = cls(tmp_path / "home")
        (home.project / ".git").mkdir(parents=True)
        return home

    @property
    def project(self) -> Path:
        return self.root / "src" / "shop"

    def repo(self, name: str) -> Path:
        path = self.root / "src" / name
        (path / ".git").mkdir(parents=True, exist_ok=True)
        return path

    def claude_transcript(self, project: Path | None = None, session: str = "s-1") -> Path:
        path = self.claude_folder(project) / f"{session}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def claude_folder(self, project: Path | None = None) -> Path:
        """Claude Code's folder of a project: its path with every character other than a
        letter or digit as `-`."""
        slug = re.sub(r"[^A-Za-z0-9]", "-", str(project or self.project))
        return self.root / ".claude" / "projects" / slug

    @property
    def state_dir(self) -> Path:
        return self.root / ".local" / "state" / "zero-memory" / "watcher"

    @property
    def config_file(self) -> Path:
        return self.root / ".config" / "zero-memory" / "watcher.json"


def claude_line(role: str, text: str, *, cwd: Path, session: str = "s-1") -> str:
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    entry = {
        "type": role,
        "message": {"role": role, "content": content},
        "cwd": str(cwd),
        "sessionId": session,
    }
    return json.dumps(entry) + "\n"


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as transcript:
        transcript.write(text)
        transcript.flush()


def said(number: int) -> str:
    """A distinct turn of about 300 characters: longer than the tests' overlap, so a turn
    appears whole in exactly one chunk when nothing is lost or sent twice."""
    words = " ".join(f"w{number}x{i}" for i in range(40))
    return f"Turn {number}: we keep the billing queue because retries pile up; {words}."


def write_turns(home: Home, turns: range, pause: float = 0.0) -> None:
    """Turns `said(n)` appended to the project's Claude Code session, user and assistant in
    turn, one line at a time."""
    transcript = home.claude_transcript()
    for n in turns:
        append(transcript, claude_line("user" if n % 2 else "assistant", said(n), cwd=home.project))
        time.sleep(pause)


def stored_chunks() -> list[Chunk]:
    return list(Chunk.objects.order_by("id"))


def times_stored(text: str) -> int:
    return sum(chunk.content.count(text) for chunk in stored_chunks())


class Watch:
    """The watcher with its config file (0600) written for a server URL and token."""

    def __init__(self, *, home: Home, url: str, token: str, log: Path, **config: Any) -> None:
        self.home = home
        self.log_path = log
        self.processes: list[subprocess.Popen] = []
        data = {
            "url": url,
            "token": token,
            "allow": [str(home.project)],
            "idle_flush": 1,
            "chunk_chars": 1000,  # several chunks from a few turns
            "overlap_chars": 150,
            "poll": 0.1,
            **config,
        }
        home.config_file.parent.mkdir(parents=True, exist_ok=True)
        home.config_file.write_text(json.dumps(data))
        home.config_file.chmod(0o600)
        self.env = {
            "HOME": str(home.root),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "PYTHONUNBUFFERED": "1",
        }

    def command(self, *args: str) -> list[str]:
        return [PYTHON3, str(SCRIPT), *args]

    def start(self) -> subprocess.Popen:
        with self.log_path.open("a") as log:
            process = subprocess.Popen(
                self.command("run"), env=self.env, stdout=log, stderr=log, start_new_session=True
            )
        self.processes.append(process)
        return process

    def kill(self, process: subprocess.Popen) -> None:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def run(self, *args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.command(*args),
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)
