"""Consent, fail-closed: a project is captured only when the allowlist or a
`.zero-memory-allow` file says so, never under a `.zero-memory-ignore`, never without a
project; and the configuration file is refused when others can read it."""

from __future__ import annotations

import json

import pytest
from zmwatch.config import ConfigError, load
from zmwatch.consent import allowed, project_of, scope_for


def config(tmp_path, **data):
    path = tmp_path / "watcher.json"
    path.write_text(json.dumps({"url": "http://zm", "token": "t", **data}))
    path.chmod(0o600)
    return load({"ZM_WATCH_CONFIG": str(path)})


def test_the_project_is_the_git_repository_enclosing_the_working_directory(tmp_path):
    (tmp_path / "shop" / ".git").mkdir(parents=True)
    (tmp_path / "shop" / "billing" / "api").mkdir(parents=True)
    assert project_of(str(tmp_path / "shop" / "billing" / "api")) == tmp_path / "shop"
    assert project_of(str(tmp_path)) is None  # no repository
    assert project_of(str(tmp_path / "gone")) is None
    assert project_of("relative/path") is None


def test_an_allowlist_glob_or_an_allow_file_admits_a_project(tmp_path):
    shop, blog, notes = (tmp_path / "work" / "shop", tmp_path / "blog", tmp_path / "notes")
    for project in (shop, blog, notes):
        (project / ".git").mkdir(parents=True)
    settings = config(tmp_path, allow=[str(tmp_path / "work" / "*")])
    assert allowed(shop, settings)
    assert not allowed(blog, settings)  # unlisted
    (tmp_path / "blog" / ".zero-memory-allow").touch()
    assert allowed(blog, settings)
    assert allowed(notes, config(tmp_path, allow=[str(tmp_path)]))  # a folder above it
    assert not allowed(None, config(tmp_path, allow=["*"]))


def test_an_ignore_file_anywhere_above_wins(tmp_path):
    shop = tmp_path / "work" / "shop"
    (shop / ".git").mkdir(parents=True)
    (shop / ".zero-memory-allow").touch()
    settings = config(tmp_path, allow=["*"])
    assert allowed(shop, settings)
    (tmp_path / "work" / ".zero-memory-ignore").touch()
    assert not allowed(shop, settings)


def test_projects_map_to_scopes_and_default_to_the_personal_one(tmp_path):
    settings = config(tmp_path, scopes={str(tmp_path / "work" / "*"): "scp_team"})
    assert scope_for(tmp_path / "work" / "shop", settings) == "scp_team"
    assert scope_for(tmp_path / "blog", settings) is None


def test_a_config_file_others_can_read_is_refused(tmp_path):
    path = tmp_path / "watcher.json"
    path.write_text('{"url": "http://zm", "token": "t"}')
    for mode in (0o644, 0o640, 0o604):
        path.chmod(mode)
        with pytest.raises(ConfigError, match="chmod 600"):
            load({"ZM_WATCH_CONFIG": str(path)})
    path.chmod(0o600)
    assert load({"ZM_WATCH_CONFIG": str(path)}).token == "t"


def test_the_environment_wins_over_the_file_and_the_defaults(tmp_path):
    settings = config(tmp_path)
    assert (settings.url, settings.idle_flush, settings.chunk_chars) == ("http://zm", 60, 16_000)
    assert settings.max_turn_chars == 20_000
    env = {
        "ZM_WATCH_CONFIG": str(tmp_path / "watcher.json"),
        "ZM_URL": "https://memory.example.com/",
        "ZM_TOKEN": "zm_env",
        "ZM_WATCH_IDLE_FLUSH": "5",
        "ZM_WATCH_MAX_TURN_CHARS": "4000",
    }
    settings = load(env)
    assert settings.max_turn_chars == 4000
    assert (settings.url, settings.token, settings.idle_flush) == (
        "https://memory.example.com",
        "zm_env",
        5,
    )
    with pytest.raises(ConfigError, match="zm-watch login"):
        load({"ZM_WATCH_CONFIG": str(tmp_path / "none.json")})
