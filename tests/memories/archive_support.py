"""Archives written by hand for the import tests and the security matrices: one memory file, or
any files, zipped with a manifest that lists them."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

from memories.models import ImportedMemory, Memory
from memories.portability import format as fmt

ID = "mem_01jd0000000000000000000001"
OTHER_ID = "mem_01jd0000000000000000000002"
CLAIMED = "2024-01-02T00:00:00.000000+00:00"
TEXT = "The staging database is rebuilt every Monday at six."


def fields(**changes) -> dict:
    base = {
        "id": ID,
        "kind": "fact",
        "scope": "scp_01jd0000000000000000000000",
        "state": "valid",
        "author": {"kind": "human", "client": "", "user": "somebody"},
        "created": CLAIMED,
        "updated": CLAIMED,
        "language": "en",
        "translation": "skipped",
        "original": "",
        "forgotten": None,
        "restored": None,
        "superseded_by": None,
        "superseded_at": None,
        "supersedes": [],
        "disputed": [],
        "provenance": [],
        "versions": [],
        "validity": [],
    }
    return {**base, **changes}


def path_of(memory_id: str = ID, kind: str = "fact") -> str:
    return f"memories/team/{kind}/{memory_id}.md"


def memory_bytes(content: str = TEXT, **changes) -> bytes:
    return fmt.memory_file(fields(**changes), content)


def raw_file(front_matter: str, body: str = TEXT) -> bytes:
    return f"---\n{front_matter}---\n{body}".encode()


def archive(files: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as out:
        for name, body in files.items():
            out.writestr(name, body)
        manifest = {
            "format": fmt.FORMAT_NAME,
            "format_version": fmt.FORMAT_VERSION,
            "files": {name: hashlib.sha256(body).hexdigest() for name, body in files.items()},
        }
        out.writestr(fmt.MANIFEST, json.dumps(manifest))
    return buffer.getvalue()


def one(data: bytes | None = None, **changes) -> bytes:
    return archive({path_of(): data if data is not None else memory_bytes(**changes)})


def post(client, scope_id: str, data: bytes, query: str = ""):
    return client.post(
        f"/api/v1/scopes/{scope_id}/import-export{query}", data, content_type="application/zip"
    )


def refused(response, *names: str) -> str:
    assert response.status_code == 400, response.content[:500]
    error = response.json()["error"]
    assert error["code"] == "validation_failed" and "archive" in error["details"], error
    for name in names:
        assert name in error["message"], (name, error["message"])
    assert not Memory.objects.exists() and not ImportedMemory.objects.exists()
    return error["message"]


AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
PASSWORD = "password: Qx7hunter2vLm"

# Every malformed memory file: each must answer 400 naming the file.
FRONT = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields().items())
MALFORMED = {
    "yaml syntax error": raw_file(FRONT + "original: [unclosed\n"),
    "nul in the body": memory_bytes("Deploys\x00 run nightly."),
    "escaped nul \\0": raw_file(FRONT.replace('original: ""', 'original: "a\\0b"')),
    "escaped nul \\x00": raw_file(FRONT.replace('original: ""', 'original: "a\\x00b"')),
    "escaped nul \\u0000": raw_file(FRONT.replace('original: ""', 'original: "a\\u0000b"')),
    "lone surrogate": raw_file(FRONT.replace('original: ""', 'original: "a\\ud800b"')),
    "version beyond int4": memory_bytes(
        versions=[{"number": 2**31, "kind": "fact", "content": "Old.", "created": CLAIMED}]
    ),
    "empty body": memory_bytes(""),
    "blank body": memory_bytes("  \n\t "),
    "time before 2000": memory_bytes(created="1970-01-01T00:00:00+00:00"),
    "time in year 9999": memory_bytes(updated="9999-12-31T23:59:59+00:00"),
    "body not utf-8": raw_file(FRONT, "") + b"\xff\xfe",
    "front matter not a mapping": raw_file("[1, 2]\n"),
    "nested too deep": raw_file(FRONT + "original: " + "[" * 50 + "]" * 50 + "\n"),
}


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def comparable(data: bytes) -> dict[str, object]:
    """An archive's content without the fields its manifest names as the server's (its ids
    named by the memory's text, which the server assigns on import)."""
    files = entries(data)
    labels = {}
    for name, body in files.items():
        if name.endswith(".md"):
            fields, content = fmt.split_memory_file(body)
            labels[fields["id"]] = f"<{content}>"
        elif name == fmt.CONFLICTS:
            labels |= {item["id"]: f"<conflict {n}>" for n, item in enumerate(json.loads(body))}
    manifest = json.loads(files.pop(fmt.MANIFEST))
    assigned = set(manifest["server_assigned"])
    out: dict[str, object] = {}
    for name, body in files.items():
        if name == fmt.ENTITIES:
            entities = json.loads(body)
            for entity in entities:
                assert "entity.scope" in assigned
                entity.pop("scope")
            out[name] = entities
            continue
        if name == fmt.CONFLICTS:
            conflicts = json.loads(body)
            for conflict in conflicts:
                for key in ("id", "scope", "resolved_by", "challenged_by"):
                    assert f"conflict.{key}" in assigned
                    conflict.pop(key)
                for action in conflict["actions"]:
                    action.pop("by"), action.pop("undone_by")
            out[name] = conflicts
            continue
        fields, content = fmt.split_memory_file(body)
        for key in ("scope",):
            assert f"memory.{key}" in assigned
            fields.pop(key)
        # The author is whoever wrote the memory here (an importer); the archive's is a claim in
        # the import's provenance row.
        fields.pop("author")
        fields["provenance"] = [
            {key: value for key, value in row.items() if key != "claims"}
            for row in fields["provenance"]
            if row["source"] != "import"
        ]
        if fields["forgotten"]:
            fields["forgotten"].pop("by")
        for version in fields["versions"]:
            version.pop("edited_by")
        for period in fields["validity"]:
            period.pop("started_by"), period.pop("ended_by")
        for typed_link in fields.get("links", []):
            assert "memory.links[].author" in assigned
            typed_link.pop("author"), typed_link.pop("removed_by")
        out[name] = (fields, content)
    for scope in manifest["scopes"]:
        scope.pop("id")
    manifest.pop("files"), manifest.pop("server_version")
    out[fmt.MANIFEST] = manifest
    text = json.dumps(out, sort_keys=True)
    for public_id, label in labels.items():
        text = text.replace(public_id, label)
    return json.loads(text)
