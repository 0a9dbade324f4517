"""The basic-memory reader: notes basic-memory wrote (its repository's fixtures and docs, see
tests/data/basic_memory/SOURCES.txt), its parser's own edge cases, and hostile folders."""

from __future__ import annotations

import io
import os
import shutil
import stat
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memories.portability.sources import basic_memory
from memories.portability.sources.folder import DirectoryFolder, ZipFolder
from memories.portability.sources.records import (
    BadSource,
    SkippedRecord,
    SourceEntity,
    SourceRecord,
    SourceRelation,
)

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "basic_memory"


def _zip(files: dict[str, bytes | str]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    buffer.seek(0)
    return buffer


def _zip_of(directory: Path) -> io.BytesIO:
    return _zip(
        {
            path.relative_to(directory).as_posix(): path.read_bytes()
            for path in sorted(directory.rglob("*"))
            if path.is_file()
        }
    )


def _records(source) -> list[SourceRecord | SkippedRecord]:
    return list(basic_memory.read(source))


def _by_id(records) -> dict[str, SourceRecord | SkippedRecord]:
    return {record.source_id: record for record in records}


def _note(text: str, name: str = "note.md") -> list[SourceRecord | SkippedRecord]:
    return _records(_zip({name: text}))


def test_the_repository_notes_record_by_record():
    records = _records(FIXTURES)
    observations = [r for r in records if isinstance(r, SourceRecord)]
    ada = [r for r in observations if r.attributes["permalink"] == "people/ada-lovelace"]
    # basic-memory's own reading of the note: six observations, one relation, the title.
    assert [(r.attributes["category"], r.content, r.kind) for r in ada] == [
        ("name", "Ada Lovelace", "fact"),
        ("role", "Mathematician and writer", "fact"),
        ("born", "1815", "fact"),
        (
            "fact",
            "Wrote the first computer program for Charles Babbage's Analytical Engine",
            "fact",
        ),
        ("fact", "Was the daughter of poet Lord Byron", "fact"),
        (
            "achievement",
            "Recognized as the first person to see the potential of computers beyond calculation",
            "fact",
        ),
        (
            None,
            "Mathematician and writer, often regarded as the first computer programmer.",
            "fact",
        ),
    ]
    assert ada[-1].source_id == "people/ada-lovelace#text"
    for record in ada:
        assert record.system == "basic-memory"
        assert record.entities == (SourceEntity("Ada Lovelace", "person"),)
        assert record.relations == (
            SourceRelation("collaborated_with", "Charles Babbage", target_is_record=False),
        )
        assert record.tags == ("mathematics", "computing", "history")
        assert record.attributes["path"] == "people/ada-lovelace.md"
        assert record.attributes["type"] == "Person"

    coffee = [r for r in observations if r.attributes["permalink"] == "coffee-brewing-methods"]
    assert [(r.content, r.kind, r.tags, r.attributes["context"]) for r in coffee] == [
        (
            "Pour over provides more flavor clarity than French press",
            "fact",
            ("coffee", "brewing"),
            None,
        ),
        (
            "Water temperature at 205°F extracts optimal compounds #brewing",
            "fact",
            ("brewing", "coffee"),
            None,
        ),
        (
            "Ethiopian beans work well with lighter roasts",
            "preference",
            ("coffee", "brewing"),
            "personal experience",
        ),
    ]
    assert coffee[0].entities == (SourceEntity("Coffee Brewing Methods", ""),)
    assert [(r.type, r.target) for r in coffee[0].relations] == [
        ("relates_to", "Coffee Bean Origins"),
        ("requires", "Proper Grinding Technique"),
        ("contrasts_with", "Tea Brewing Methods"),
    ]

    # A note without front matter takes its title and permalink from its path.
    plain = [r for r in observations if r.attributes["path"] == "edge-cases/no-frontmatter.md"]
    assert {r.attributes["title"] for r in plain} == {"no-frontmatter"}
    assert [r.content for r in plain][:2] == ["Some observation here", "Another observation"]
    assert plain[0].source_id.startswith("edge-cases/no-frontmatter#")

    # A note of relations and one sentence keeps the sentence, with the relations.
    (links,) = [r for r in observations if r.attributes["path"] == "edge-cases/relation-only.md"]
    assert links.content == "A note with relations but no observations at all."
    assert links.entities == (SourceEntity("Architecture Links", "repository"),)
    assert [r.target for r in links.relations] == ["Pedro Hernandez", "FastAPI", "SQLite", "Python"]

    unicode_note = [
        r for r in observations if r.attributes["path"] == "edge-cases/unicode-fields.md"
    ]
    assert unicode_note[0].content == "まつもと ゆきひろ"
    assert unicode_note[0].attributes["context"] == "Yukihiro Matsumoto"

    skipped = _by_id(r for r in records if isinstance(r, SkippedRecord))
    assert "no observation" in skipped["edge-cases/empty-note"].reason
    assert "Not a markdown note" in skipped["SOURCES.txt"].reason


def test_basic_memorys_own_expectations_of_its_parser():
    """tests/markdown/test_entity_parser.py's complete file, with what that test asserts."""
    records = _records(_zip({"auth.md": (FIXTURES / "auth-service.md").read_bytes()}))
    observations = [r for r in records if r.attributes["category"]]
    assert [
        (r.attributes["category"], r.content, set(r.tags), r.attributes["context"])
        for r in observations
    ] == [
        (
            "design",
            "Stateless authentication #security #architecture",
            {"security", "architecture", "authentication", "core"},
            "JWT based",
        ),
        (
            "feature",
            "Mobile client support #mobile #oauth",
            {"mobile", "oauth", "authentication", "security", "core"},
            "Required for App Store",
        ),
        (
            "tech",
            "Caching layer #performance",
            {"performance", "authentication", "security", "core"},
            "Redis implementation",
        ),
    ]
    first = observations[0]
    assert first.attributes["permalink"] == "auth_service"
    assert first.source_id.startswith("auth_service#")
    assert first.attributes["type"] == "component"
    assert first.attributes["note_tags"] == ["authentication", "security", "core"]
    assert first.created_at == datetime(2024, 12, 21, 14, 0, tzinfo=UTC)
    assert first.updated_at == datetime(2024, 12, 21, 14, 0, tzinfo=UTC)
    assert set((r.type, r.target) for r in first.relations) == {
        ("implements", "OAuth Implementation"),
        ("uses", "Redis Cache"),
        ("specified_by", "Auth API Spec"),
        ("links_to", "Random Link"),
        ("links_to", "Random Link with Title|Titled Link"),
    }
    contexts = {r["target"]: r["context"] for r in first.attributes["relations"]}
    assert contexts["OAuth Implementation"] == "Core auth flows"
    (text,) = [r for r in records if r.source_id == "auth_service#text"]
    assert text.content.startswith("Core authentication service that handles user authentication.")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # From basic-memory's tests/markdown/test_observation_edge_cases.py
        ("- [test] Content (unclosed", ("test", "Content (unclosed", None)),
        ("- [test] Content (with) extra) parens)", ("test", "Content", "with) extra) parens")),
        (
            "- [complex test] This is #tag1#tag2 with #tag3 content",
            ("complex test", "This is #tag1#tag2 with #tag3 content", None),
        ),
        # The plugin's test calls parse_observation directly; through the plugin an empty
        # category with no tag is not an observation.
        ("- [] Empty category", None),
        ("- [] Empty category #tag", (None, "Empty category #tag", None)),
        ("- a line with a #hashtag only", (None, "a line with a #hashtag only", None)),
        # Not observations: task boxes, links, wiki links, timecodes, a callout.
        ("- [ ] Todo item", None),
        ("- [x] Done", None),
        ("- [/] In progress", None),
        ("- [text](https://example.com)", None),
        ("- [[Target]]", None),
        ("- [00:00:11] spoken line", None),
        ("> [!info] Callout #tag", None),
    ],
)
def test_observation_syntax(line, expected):
    records = [r for r in _note(f"# T\n\n{line}\n") if isinstance(r, SourceRecord)]
    found = [
        (r.attributes["category"], r.content, r.attributes["context"])
        for r in records
        if not r.source_id.endswith("#text")
    ]
    assert found == ([] if expected is None else [expected])


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("- implements [[Target]]", [("implements", "Target")]),
        ('- "depends on" [[Target]] (since v2)', [("depends on", "Target")]),
        ("- proj::note [[Other]]", [("proj::note", "Other")]),
        ("- uses [[proj::Note]]", [("uses", "proj/Note")]),
        # A prose tail makes it a sentence: every link is links_to (basic-memory #1260).
        ("- Added [[Target Note]] to the roster", [("links_to", "Target Note")]),
        ("- type [[Target]] (context) and more", [("links_to", "Target")]),
        ("- type [[Outer [[Inner]] ]]", [("links_to", "Outer [[Inner]]")]),
        ("Text with [[Link1]] and [[Link2]]", [("links_to", "Link1"), ("links_to", "Link2")]),
        ("- type [[]]", []),
        ("- type [[Target", []),
    ],
)
def test_relation_syntax(line, expected):
    records = [r for r in _note(f"- [fact] anchor\n\n{line}\n") if isinstance(r, SourceRecord)]
    assert [(r.type, r.target) for r in records[0].relations] == expected


@pytest.mark.parametrize(
    ("category", "kind"),
    [
        ("decision", "decision"),
        ("Decision", "decision"),
        ("convention", "convention"),
        ("preference", "preference"),
        ("gotcha", "gotcha"),
        ("issue", "gotcha"),
        ("problem", "gotcha"),
        ("todo", "task"),
        ("task", "task"),
        ("tech", "fact"),
        ("name", "fact"),
    ],
)
def test_kinds_by_category(category, kind):
    (record,) = _note(f"- [{category}] Selected bcrypt for passwords #security (OWASP)\n")
    assert record.kind == kind
    assert record.tags == ("security",)


def test_front_matter_as_basic_memory_reads_it():
    text = (
        "---\ntitle:\n  - Two\n  - Parts\ntype: Meeting\ntags: '#alpha, beta'\n"
        "created: 2025-10-24\nstatus: active\ncount: 3\n---\n- [fact] one\n"
    )
    (record,) = _note(text, "notes/Weekly Sync_Notes.md")
    assert record.attributes["title"] == "Two, Parts"
    assert record.entities == (SourceEntity("Two, Parts", "event"),)
    assert record.tags == ("alpha", "beta")
    assert record.created_at == datetime(2025, 10, 24, tzinfo=UTC)
    assert record.updated_at is None
    assert record.attributes["metadata"] == {"status": "active", "count": "3"}
    # No permalink in the front matter: basic-memory's, made from the path.
    assert record.attributes["permalink"] == "notes/weekly-sync-notes"
    # YAML that does not parse: a note without front matter, as basic-memory reads it.
    (broken,) = _note("---\ntitle: [unclosed\n---\n- [fact] two\n", "b.md")
    assert broken.attributes["title"] == "b"


def test_stable_ids_and_a_second_read():
    text = "---\npermalink: p\n---\n- [fact] one\n- [fact] two\n- [fact] one\n"
    first = [r.source_id for r in _note(text)]
    assert first == [r.source_id for r in _note(text)]
    assert len(set(first)) == 3 and first[2] == f"{first[0]}-2"
    # An observation added above the others leaves their ids as they were.
    edited = [r.source_id for r in _note(text.replace("---\n- ", "---\n- [fact] zero\n- "))]
    assert set(first) <= set(edited)


def test_a_zip_and_a_directory_read_alike(tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(FIXTURES, folder)
    from_directory = _records(folder)
    from_zip = _records(_zip_of(folder))
    zip_path = tmp_path / "project.zip"
    zip_path.write_bytes(_zip_of(folder).getvalue())
    assert from_directory == from_zip == _records(zip_path)
    hidden = tmp_path / "project" / ".obsidian"
    hidden.mkdir()
    (hidden / "app.json").write_text("{}")
    (folder / "image.png").write_bytes(b"\x89PNG")
    skipped = _by_id(r for r in _records(folder) if isinstance(r, SkippedRecord))
    assert skipped[".obsidian/app.json"].reason and skipped["image.png"].reason


# --- hostile folders: refused whole, before the first record ---------------------------------


@pytest.mark.parametrize(
    "name", ["../escape.md", "notes/../../escape.md", "/etc/escape.md", "C:/escape.md", "a\\b.md"]
)
def test_a_path_out_of_the_folder_is_refused(name):
    with pytest.raises(BadSource):
        basic_memory.read(_zip({"ok.md": "- [fact] fine\n", name: "- [fact] out\n"}))


def test_a_symlink_entry_in_a_zip_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ok.md", "- [fact] fine\n")
        link = zipfile.ZipInfo("link.md")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    buffer.seek(0)
    with pytest.raises(BadSource, match="link.md is a symbolic link"):
        basic_memory.read(buffer)


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_a_symlink_in_a_directory_is_refused(tmp_path, target):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "ok.md").write_text("- [fact] fine\n")
    (tmp_path / "secret.md").write_text("- [fact] secret\n")
    pointed = tmp_path / "secret.md" if target == "outside" else folder / "ok.md"
    os.symlink(pointed, folder / "link.md")
    with pytest.raises(BadSource, match="link.md is a symbolic link"):
        basic_memory.read(folder)
    # A linked directory is refused too, and so is a project folder that is itself a link.
    (folder / "link.md").unlink()
    os.symlink(tmp_path, folder / "up")
    with pytest.raises(BadSource, match="up is a symbolic link"):
        DirectoryFolder(folder)
    os.symlink(folder, tmp_path / "alias")
    with pytest.raises(BadSource):
        DirectoryFolder(tmp_path / "alias")


def test_invalid_utf8_is_refused_naming_the_file(tmp_path):
    files = {"a.md": "- [fact] fine\n", "notes/b.md": b"- [fact] caf\xe9\n"}
    with pytest.raises(BadSource, match="notes/b.md is not UTF-8"):
        basic_memory.read(_zip(files))
    (tmp_path / "notes").mkdir()
    for name, data in files.items():
        (tmp_path / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    with pytest.raises(BadSource, match="notes/b.md is not UTF-8"):
        basic_memory.read(tmp_path)


def test_oversized_folders_are_refused(settings, tmp_path):
    files = {f"n{i}.md": "- [fact] " + "x" * 600 + "\n" for i in range(4)}
    with pytest.raises(BadSource, match="more than the limit in all"):
        basic_memory.read(_zip(files), max_total=2000)
    for name, data in files.items():
        (tmp_path / name).write_text(data)
    with pytest.raises(BadSource, match="more than the limit in all"):
        basic_memory.read(tmp_path, max_total=2000)
    settings.IMPORT_MAX_ENTRY_BYTES = 500
    with pytest.raises(BadSource, match="larger than the limit per file"):
        basic_memory.read(_zip(files))
    with pytest.raises(BadSource, match="larger than the limit per file"):
        basic_memory.read(tmp_path)


def test_a_zip_bomb_and_a_lying_header_are_refused():
    with pytest.raises(BadSource, match="compressed beyond"):
        basic_memory.read(_zip({"bomb.md": "a" * 1_000_000}))
    # A header that declares less than the entry holds: the read stops at the declared size.
    buffer = _zip({"n.md": "- [fact] " + "y" * 100})
    data = bytearray(buffer.getvalue())
    central = data.rfind(b"PK\x01\x02")
    declared = central + 24  # the uncompressed size in the central directory record
    data[declared : declared + 4] = (10).to_bytes(4, "little")
    with pytest.raises(BadSource, match="not the size its header declares|damaged"):
        basic_memory.read(io.BytesIO(bytes(data)))


def test_too_many_files_are_refused(tmp_path):
    # The limit is a million files by default; the check is the same at any number.
    files = {f"n{i}.md": "- [fact] n\n" for i in range(4)}
    with pytest.raises(BadSource, match="too many files"):
        ZipFolder(_zip(files), max_entries=3)
    for name, data in files.items():
        (tmp_path / name).write_text(data)
    with pytest.raises(BadSource, match="too many files"):
        DirectoryFolder(tmp_path, max_entries=3)


@pytest.mark.parametrize(
    ("front_matter", "message"),
    [
        ("a: &x [1]\nb: *x\n", "anchor or alias"),
        ("a: !!python/object:os.system x\n", "tag"),
        ("a: " + "[" * 40 + "]" * 40 + "\n", "nested too deep"),
    ],
)
def test_hostile_front_matter_is_refused(front_matter, message):
    with pytest.raises(BadSource, match=message):
        basic_memory.read(
            _zip({"ok.md": "- [fact] fine\n", "bad.md": f"---\n{front_matter}---\nx\n"})
        )


def test_not_a_zip_is_refused(tmp_path):
    with pytest.raises(BadSource, match="not a zip"):
        basic_memory.read(io.BytesIO(b'{"results": []}'))
    with pytest.raises(BadSource):
        basic_memory.read(tmp_path / "missing")


def test_names_with_colons_and_spaces_are_notes(tmp_path):
    files = {"Meeting: notes 2024.md": "- [decision] Ship on Friday\n"}
    (from_zip,) = _records(_zip(files))
    (tmp_path / "Meeting: notes 2024.md").write_text(files["Meeting: notes 2024.md"])
    assert _records(tmp_path) == [from_zip]
    assert from_zip.attributes["permalink"] == "meeting-notes-2024"
    assert from_zip.kind == "decision"
