"""Where the watcher keeps its configuration and state, and what the configuration says.

The configuration is JSON, mode 0600, under the user's config directory; ZM_URL and ZM_TOKEN in
the environment win over the file. A file others can read is refused: it holds a token.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_IDLE_FLUSH = 60.0
DEFAULT_CHUNK_CHARS = 16_000
DEFAULT_OVERLAP_CHARS = 1_500
DEFAULT_POLL = 1.0
DEFAULT_MAX_TURN_CHARS = 20_000  # a pasted log keeps its head and tail, not megabytes


class ConfigError(Exception):
    """The configuration cannot be used; the message says what to do."""


def _app_dir(env: Mapping[str, str], xdg_name: str, fallback: str) -> Path:
    if env.get(xdg_name):
        return Path(env[xdg_name]) / "zero-memory"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "zero-memory"
    return Path.home() / fallback / "zero-memory"


def config_path(env: Mapping[str, str]) -> Path:
    if env.get("ZM_WATCH_CONFIG"):
        return Path(env["ZM_WATCH_CONFIG"])
    return _app_dir(env, "XDG_CONFIG_HOME", ".config") / "watcher.json"


def state_dir(env: Mapping[str, str]) -> Path:
    if env.get("ZM_WATCH_STATE_DIR"):
        return Path(env["ZM_WATCH_STATE_DIR"])
    return _app_dir(env, "XDG_STATE_HOME", ".local/state") / "watcher"


@dataclass(frozen=True)
class Config:
    url: str
    token: str
    allow: list[str] = field(default_factory=list)  # path globs of projects to capture
    scopes: dict[str, str] = field(default_factory=dict)  # project glob -> scope id
    idle_flush: float = DEFAULT_IDLE_FLUSH
    chunk_chars: int = DEFAULT_CHUNK_CHARS
    overlap_chars: int = DEFAULT_OVERLAP_CHARS
    poll: float = DEFAULT_POLL
    max_turn_chars: int = DEFAULT_MAX_TURN_CHARS
    state_dir: Path = Path(".")


def read_file(path: Path) -> dict[str, Any]:
    """The configuration file's JSON ({} when there is none); refused when others can read it."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return {}
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"{path} can be read by other users and holds a token: run `chmod 600 {path}`."
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object.")
    return data


def write_file(path: Path, data: dict[str, Any]) -> None:
    """Write the configuration as 0600 from the start (never readable by others, not even
    for a moment), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=2)
        out.write("\n")
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


def _positive(raw: object, what: str, default: float) -> float:
    """A number above 0 from the environment or the file (the default when unset)."""
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a number, not {raw!r}.") from None
    if value <= 0:
        raise ConfigError(f"{what} must be above 0.")
    return value


def load(env: Mapping[str, str], *, need_server: bool = True) -> Config:
    data = read_file(config_path(env))
    url = (env.get("ZM_URL") or data.get("url") or "").rstrip("/")
    token = env.get("ZM_TOKEN") or data.get("token") or ""
    if need_server and not (url and token):
        raise ConfigError(
            "No server configured: run `zm-watch login URL` or set ZM_URL and ZM_TOKEN."
        )
    allow = data.get("allow", [])
    scopes = data.get("scopes", {})
    if not isinstance(allow, list) or not all(isinstance(item, str) for item in allow):
        raise ConfigError("`allow` must be a list of path globs.")
    if not isinstance(scopes, dict) or not all(isinstance(v, str) for v in scopes.values()):
        raise ConfigError("`scopes` must map project path globs to scope ids.")
    chunk_chars = int(_positive(data.get("chunk_chars"), "chunk_chars", DEFAULT_CHUNK_CHARS))
    overlap = int(_positive(data.get("overlap_chars"), "overlap_chars", DEFAULT_OVERLAP_CHARS))
    if overlap * 2 > chunk_chars:
        raise ConfigError("`overlap_chars` must be at most half of `chunk_chars`.")
    return Config(
        url=url,
        token=token,
        allow=allow,
        scopes=scopes,
        idle_flush=_positive(
            env.get("ZM_WATCH_IDLE_FLUSH") or data.get("idle_flush"),
            "ZM_WATCH_IDLE_FLUSH",
            DEFAULT_IDLE_FLUSH,
        ),
        chunk_chars=chunk_chars,
        overlap_chars=overlap,
        poll=_positive(env.get("ZM_WATCH_POLL") or data.get("poll"), "ZM_WATCH_POLL", DEFAULT_POLL),
        max_turn_chars=int(
            _positive(
                env.get("ZM_WATCH_MAX_TURN_CHARS") or data.get("max_turn_chars"),
                "ZM_WATCH_MAX_TURN_CHARS",
                DEFAULT_MAX_TURN_CHARS,
            )
        ),
        state_dir=state_dir(env),
    )
