"""How an export is written: the stream writer gives zipfile's bytes, the manifest streamed is
the manifest written whole, the front matter is JSON per line, entries come in path order."""

from __future__ import annotations

import io
import json
import re
import zipfile

from memories.portability import format as fmt
from memories.portability.zipstream import ZipStream
from tests.factories import make_scope

TEXTS = [
    "",
    "plain",
    "quotes \" ' \\ and\ttabs",
    "lines\nand\r\nbreaks\r",
    "日本語 émoji 🎉 \u00a0",
    "YAML's own breaks: \x85 \u2028 \u2029 \ufeff \x7f \x9f",
    "---\nfront: matter\n---",
    "x" * 70_000,
]


def _zipfile_bytes(entries: list[tuple[str, bytes]]) -> bytes:
    """What Python's zipfile writes of these entries to a stream it cannot seek."""

    class Sink(io.RawIOBase):
        def __init__(self) -> None:
            self.parts: list[bytes] = []

        def write(self, data) -> int:
            self.parts.append(bytes(data))
            return len(data)

    sink = Sink()
    with zipfile.ZipFile(sink, "w") as archive:
        for path, data in entries:
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o100644 << 16
            archive.writestr(info, data, compresslevel=6)
    return b"".join(sink.parts)


def _stream_bytes(entries: list[tuple[str, bytes]], *, pieces: int = 1) -> bytes:
    writer = ZipStream()
    out = []
    for path, data in entries:
        out.append(writer.begin(path))
        step = max(1, -(-len(data) // pieces))
        out.extend(writer.feed(data[start : start + step]) for start in range(0, len(data), step))
        out.append(writer.end())
    out.extend(writer.finish())
    return b"".join(out)


def test_the_stream_writer_writes_what_zipfile_writes():
    entries = [
        (f"memories/team/fact/mem_{n:026d}.md", text.encode()) for n, text in enumerate(TEXTS)
    ]
    entries.append(("memories/ünï/fact/名前.md", b"a path zipfile marks UTF-8"))
    assert _stream_bytes(entries) == _zipfile_bytes(entries)
    # An entry fed in parts (the manifest is) deflates to the same bytes as in one piece.
    assert _stream_bytes(entries, pieces=13) == _zipfile_bytes(entries)
    with zipfile.ZipFile(io.BytesIO(_stream_bytes(entries))) as archive:
        assert archive.testzip() is None
        assert [archive.read(path) for path, _ in entries] == [data for _, data in entries]


def test_past_65535_entries_the_stream_writer_writes_zipfiles_zip64_end_records():
    entries = [(f"a/{n:05x}", b"") for n in range(65_536)]
    assert _stream_bytes(entries) == _zipfile_bytes(entries)


def test_the_streamed_manifest_is_the_manifest_written_whole():
    manifest = {"format": fmt.FORMAT_NAME, "scopes": [{"name": 'Équipe "A"\n'}]}
    for files in (
        {},
        {"conflicts.json": "0" * 64},
        {f"memories/s/{n}.md": "ab" * 32 for n in "xyz"},
    ):
        lines = [
            fmt.manifest_line(path, digest, first=n == 0)
            for n, (path, digest) in enumerate(files.items())
        ]
        streamed = b"".join(fmt.manifest_parts(manifest, lines))
        assert streamed == fmt.json_file({**manifest, "files": files})


def test_the_front_matter_is_one_json_value_per_line_with_yamls_breaks_escaped():
    fields = {
        "text": TEXTS,
        "none": None,
        "flag_on": True,
        "flag_off": False,
        "number": 3,
        "ratio": 0.25,
        "nested": {"list": [{"a": text} for text in TEXTS], "empty": []},
        **{f"text_{n}": text for n, text in enumerate(TEXTS)},
    }
    breaks = re.compile("[\x7f-\x9f\u2028\u2029\ufeff]")
    expected = "".join(
        f"{key}: {json.dumps(value, ensure_ascii=False, separators=(', ', ': '))}\n"
        for key, value in fields.items()
    )
    expected = breaks.sub(lambda m: f"\\u{ord(m.group()):04x}", expected)
    assert fmt.dump_front_matter(fields) == expected
    parsed, body = fmt.split_memory_file(fmt.memory_file(fields, "the body\n---\n"))
    assert parsed == fields and body == "the body\n---\n"


def test_entries_are_in_path_order_when_one_scope_slug_starts_another(db, tenancy, api):
    owner = api(tenancy.owner)
    for slug in ("acme", "acme-web"):
        scope = make_scope(owner=tenancy.owner, slug=slug)
        response = owner.post(
            "/api/v1/memories",
            {
                "content": f"The {slug} build runs on push.",
                "kind": "fact",
                "scope": scope.public_id,
            },
            format="json",
        )
        assert response.status_code < 300, response.json()
    data = b"".join(owner.get("/api/v1/export").streaming_content)
    assert b"".join(owner.get("/api/v1/export").streaming_content) == data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = [info.filename for info in archive.infolist()]
        manifest = json.loads(archive.read(fmt.MANIFEST))
    assert any(name.startswith("memories/acme-web/") for name in names)
    # "acme-web/" sorts before "acme/" ("-" before "/"), so its files come first.
    assert names[-1] == fmt.MANIFEST and names[:-1] == sorted(names[:-1])
    assert list(manifest["files"]) == names[:-1]
