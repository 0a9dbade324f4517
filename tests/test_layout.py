"""The house plan, checked: tenant models are queried only where tenancy is decided, and no
module grows past the size at which it is two modules. (Import directions are checked by
import-linter in `make lint`.)"""

from __future__ import annotations

import ast
from pathlib import Path

from django.conf import settings

BASE = Path(settings.BASE_DIR)
APPS = ("zeromemory", "scopes", "memories", "dashboard")
TENANT_MODELS = {
    "Scope",
    "Membership",
    "ApiToken",
    "Memory",
    "Provenance",
    "MemoryVersion",
    "MemoryWindow",
    "IdempotencyRecord",
    "ActivityLog",
    "Conflict",
    "ConflictAction",
    "ValidityPeriod",
    "MemoryLink",
    "Entity",
    "EntityAlias",
    "EntityMention",
    "EntityMerge",
    "EntitySplit",
}
# Where tenant data may be queried: the one door, and the reads and writes behind it.
ALLOWED = (
    "scopes/access.py",
    "scopes/authentication.py",  # finds the token of a bearer secret: who the actor is
    "scopes/selectors.py",
    "scopes/services.py",
    "scopes/erasure.py",  # a scope or an account removed with its rows
    "memories/selectors.py",
    "memories/services/",
    "memories/recall/",
    "memories/activity/",  # the activity log's own selector and writes
    "memories/state_rows.py",  # validity periods and moved provenance, written by the services
    "memories/canonical/content.py",  # the one owner of what a memory derives: its windows
    "memories/canonical/service.py",  # the background pass, by memory id
    "memories/capture/",  # ingest's ledger and extraction, as the chunk's user
    "memories/hygiene/",  # the scan over every scope, the judge by pair id, the review queue
    "memories/insights/",  # the fold over every scope; answers of a scope the door gave
    "memories/management/commands/",  # operators' commands over every memory
    "memories/portability/",  # export and import of scopes from the door, erasure by id
    # Entities and typed links: written on memories and entities the door gave, read through it.
    "memories/entities/",
)


def python_files():
    for app in APPS:
        for path in sorted((BASE / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def tenant_queries(path: Path) -> list[str]:
    """`Model.objects` uses of a tenant model in this file, as "line: Model"."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ("objects", "_default_manager")
            and isinstance(node.value, ast.Name)
            and node.value.id in TENANT_MODELS
        ):
            found.append(f"{node.lineno}: {node.value.id}")
    return found


def test_tenant_models_are_queried_only_behind_the_door():
    stray = {}
    for path in python_files():
        relative = path.relative_to(BASE).as_posix()
        if relative.startswith(ALLOWED):
            continue
        if found := tenant_queries(path):
            stray[relative] = found
    assert not stray, f"tenant models queried outside scopes/access and the selectors: {stray}"


def test_the_check_sees_a_query():
    sample = BASE / "scopes" / "access.py"
    assert tenant_queries(sample), "the scan found no query in scopes/access.py"
