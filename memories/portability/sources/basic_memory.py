"""basic-memory: a project folder of markdown notes, as a zip or a directory.

A note is what basic-memory's `EntityParser` reads, parsed here the way it parses it: front
matter split as python-frontmatter splits it (`title` falling back to the file's stem, `type`
to "note", `tags` a list or a comma-separated string, `permalink` falling back to one made from
the path), then the body tokenized by markdown-it (CommonMark) and read by the rules of
basic-memory's `observation_plugin` and `relation_plugin`:

- an observation is a block whose text is `[category] content #tag (context)` (or carries a
  `#tag` with no category), outside a blockquote, not a task box `[ ]`/`[x]`/`[-]`, a link
  `[text](url)`, a bare `[[link]]`, a timecode or a one-character task marker;
- an explicit relation is a list item `type [[Target]]` (or `"two words" [[Target]]`), with at
  most a `(context)` after the target; every other `[[Target]]` is a `links_to` relation.

The mapping (docs/import.md shows it):

- each observation is one memory: its content as basic-memory keeps it (tags inline, the
  context apart), its kind from its category (`KIND_BY_CATEGORY`, else fact), its tags and the
  note's tags, the note's title as an entity (its kind from the note's type,
  `ENTITY_KIND_BY_TYPE`), and the note's relations;
- the note's text outside observations and relations (its paragraphs, list items and quotes;
  not headings or code) is one more memory of kind fact, so a note of prose is not lost;
- a relation points at an entity: `target_is_record=False`, the target named as the note names
  it (a title or a permalink). A target note may be missing from the folder, and a note is not
  one record but several, so naming the entity is the one reading that always holds;
- a note with no observation and no text is skipped, and so is a file that is not a `.md` note
  or sits under a hidden directory (`.git`, `.obsidian`), each with its reason.

A record's `source_id` is the note's permalink, `#`, and a digest of the observation's category
and content (`#text` for the prose), so an edit elsewhere in the note keeps the others' ids and a
second import of the folder writes nothing.

The whole folder is read once to check it (every file UTF-8, every front matter plain YAML)
before the first record is yielded, so a bad file refuses the import before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any

import yaml
from django.utils.translation import gettext as _
from markdown_it import MarkdownIt

from memories.portability.format import plain_yaml
from memories.portability.sources.folder import (
    DirectoryFolder,
    Folder,
    ZipFolder,
    decoded,
    open_folder,
    refused,
)
from memories.portability.sources.jsonfile import in_utc
from memories.portability.sources.records import (
    SkippedRecord,
    SourceEntity,
    SourceRecord,
    SourceRelation,
)

SYSTEM = "basic-memory"

# An observation's category → our kind; any other category is a fact.
KIND_BY_CATEGORY = {
    "decision": "decision",
    "convention": "convention",
    "preference": "preference",
    "gotcha": "gotcha",
    "issue": "gotcha",
    "problem": "gotcha",
    "todo": "task",
    "task": "task",
}

# A note's `type` → the kind of the entity its title names; any other type says no kind.
ENTITY_KIND_BY_TYPE = {
    "person": "person",
    "team": "team",
    "organization": "organisation",
    "organisation": "organisation",
    "company": "organisation",
    "project": "repository",
    "softwareproject": "repository",
    "repository": "repository",
    "service": "service",
    "tool": "tool",
    "library": "tool",
    "product": "product",
    "place": "place",
    "location": "place",
    "event": "event",
    "meeting": "event",
}

# basic-memory's parser: markdown-it's default (CommonMark) preset. Its rules read each block's
# `inline` token's text, never the token's children, so the inline pass (which builds the
# children, 40% of the parse) is left out; the blocks, and so every token read here, are the same.
_md = MarkdownIt().disable(["inline", "text_join"])

# python-frontmatter's YAML boundary: a line of three or more dashes.
_FM_BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)
_TIMESTAMP_VALUE = r"\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?"
_TIMESTAMP_CATEGORY = re.compile(rf"^{_TIMESTAMP_VALUE}(?:\s+-\s+{_TIMESTAMP_VALUE})?$")
_CATEGORY = re.compile(r"^\[([^\[\]()]+)\]\s+(.+)")


# --- basic-memory's syntax, rule by rule (src/basic_memory/markdown/plugins.py) -------------


def _category_match(text: str) -> re.Match[str] | None:
    match = _CATEGORY.match(text)
    if not match:
        return None
    category = match.group(1).strip()
    if _TIMESTAMP_CATEGORY.match(category):
        return None
    if len(category) == 1 and (category in {"x", "X"} or not category.isalnum()):
        return None  # a task box's marker, not a category
    return match


def _is_observation(text: str) -> bool:
    if not text or text.startswith(("[ ]", "[x]", "[-]")):
        return False
    if re.match(r"^\[.*?\]\(.*?\)$", text) or re.match(r"^\[\[.*?\]\]$", text):
        return False
    return bool(_category_match(text)) or any(part.startswith("#") for part in text.split())


def _observation(text: str) -> dict[str, Any]:
    match = _category_match(text)
    category = None
    content = text
    if match:
        category = match.group(1).strip()
        content = match.group(2).strip()
    else:
        empty = re.match(r"^\[\]\s+(.+)", content)
        if empty:
            content = empty.group(1).strip()
    context = None
    if content.endswith(")"):
        start = content.rfind("(")
        if start != -1:
            context = content[start + 1 : -1].strip()
            content = content[:start].strip()
    tags: list[str] = []
    for part in content.split():
        if part.startswith("#"):
            if "#" in part[1:]:
                tags.extend(tag for tag in part.split("#") if tag)
            else:
                tags.append(part[1:])
    return {"category": category, "content": content, "tags": tags, "context": context}


def _project_reference(identifier: str) -> str:
    if "::" not in identifier:
        return identifier
    project, remainder = identifier.split("::", 1)
    return f"{project}/{remainder.lstrip('/')}"


def _single_parenthesized(text: str) -> bool:
    if not text.startswith("("):
        return False
    depth = 0
    for position, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return position == len(text) - 1
    return False


def _explicit_relation(text: str) -> dict[str, Any] | None:
    if "[[" not in text or "]]" not in text:
        return None
    before = text.partition("[[")[0].strip()
    if not before:
        return None
    if before[0] in {"'", '"'} and before.endswith(before[0]):
        relation_type = before[1:-1].strip() or None
    elif any(char.isspace() for char in before):
        relation_type = None
    else:
        relation_type = before
    if relation_type is None:
        return None
    start = text.find("[[")
    end = text.find("]]", start + 2)
    if start == -1 or end == -1:
        return None
    target = _project_reference(text[start + 2 : end].strip())
    if not target:
        return None
    after = text[end + 2 :].strip()
    context = None
    if after:
        if not _single_parenthesized(after):
            return None
        context = after[1:-1].strip() or None
    return {"type": relation_type, "target": target, "context": context}


def _inline_relations(text: str) -> list[dict[str, Any]]:
    relations = []
    start = 0
    while True:
        start = text.find("[[", start)
        if start == -1:
            break
        depth, position, end = 1, start + 2, -1
        while position < len(text):
            if text[position : position + 2] == "[[":
                depth += 1
                position += 2
            elif text[position : position + 2] == "]]":
                depth -= 1
                if depth == 0:
                    end = position
                    break
                position += 2
            else:
                position += 1
        if end == -1:
            break
        target = _project_reference(text[start + 2 : end].strip())
        if target:
            relations.append({"type": "links_to", "target": target, "context": None})
        start = end + 2
    return relations


# --- a note ----------------------------------------------------------------------------------


def _normalized(value: Any) -> Any:
    """Front matter values as basic-memory normalizes them: times as ISO text, numbers and
    booleans as text, lists and mappings item by item."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, list):
        return [_normalized(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _normalized(item) for key, item in value.items()}
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def _tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [
            tag.strip().lstrip("#")
            for raw in value
            if raw is not None
            for tag in str(raw).split(",")
            if tag and tag.strip()
        ]
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            try:
                parsed = json.loads(stripped)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                return _tags(parsed)
        return [tag.strip().lstrip("#") for tag in value.split(",") if tag and tag.strip()]
    return _tags(str(value))


def permalink_for(path: str) -> str:
    """basic-memory's `generate_permalink` for a note without one (its ASCII path: accents
    folded, camelCase split, lower case, anything else a hyphen)."""
    import unicodedata

    base = path[:-3] if path.lower().endswith(".md") else path
    ascii_text = unicodedata.normalize("NFKD", base).encode("ascii", "ignore").decode()
    ascii_text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", ascii_text).lower()
    ascii_text = ascii_text.replace("_", "-").replace("'", "")
    clean = re.sub(r"-+", "-", re.sub(r"[^a-z0-9/\-\.]", "-", ascii_text))
    return "/".join(segment.strip("-") for segment in clean.split("/"))


def _front_matter(path: str, text: str) -> tuple[dict[str, Any], str]:
    """python-frontmatter's split of a note: YAML that does not parse leaves the note without
    front matter (as basic-memory reads it); YAML with anchors, aliases or tags is refused."""
    text = text.strip()
    if not _FM_BOUNDARY.match(text):
        return {}, text
    try:
        _before, head, body = _FM_BOUNDARY.split(text, 2)
    except ValueError:
        return {}, text
    try:
        fields = plain_yaml(head)
    except yaml.YAMLError:
        return {}, text
    except (ValueError, RecursionError) as exc:
        raise refused(_("%(p)s: %(e)s") % {"p": path[:200], "e": str(exc)[:200]}) from None
    return (fields if isinstance(fields, dict) else {}), body.strip()


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    # basic-memory reads a time without an offset in the writer's local zone, which the file
    # does not say: UTC is the one reading every server agrees on. Out of UTC's range: absent.
    return in_utc(moment)


def _note_text(path: str, data: bytes) -> str:
    text = decoded(path, data)
    return text.lstrip("\ufeff").replace("\x00", "")


class Note:
    """One note as basic-memory parses it."""

    def __init__(self, path: str, text: str) -> None:
        fields, body = _front_matter(path, text)
        metadata = {str(key): _normalized(value) for key, value in fields.items()}
        title = metadata.get("title")
        title = _as_text(title) if title is not None else ""
        self.path = path
        self.title = title if title and title != "None" else PurePosixPath(path).stem
        note_type = metadata.get("type")
        self.type = _as_text(note_type) if note_type is not None else "note"
        self.tags = _tags(metadata.get("tags", []))
        permalink = metadata.get("permalink")
        self.permalink = permalink if isinstance(permalink, str) else permalink_for(path)
        self.created = _when(metadata.get("created"))
        self.modified = _when(metadata.get("modified"))
        known = {"title", "type", "tags", "permalink", "created", "modified"}
        self.metadata = {key: value for key, value in metadata.items() if key not in known}
        self.observations: list[dict[str, Any]] = []
        self.relations: list[dict[str, Any]] = []
        self.text_blocks: list[str] = []
        self._parse(body)

    def _parse(self, body: str) -> None:
        tokens = _md.parse(body) if body else []
        blockquote_depth = 0
        in_list_item = False
        for index, token in enumerate(tokens):
            if token.type == "blockquote_open":
                blockquote_depth += 1
            elif token.type == "blockquote_close":
                blockquote_depth -= 1
            elif token.type == "list_item_open":
                in_list_item = True
            elif token.type == "list_item_close":
                in_list_item = False
            if token.type != "inline":
                continue
            content = token.content
            text = content.strip()
            observed = blockquote_depth == 0 and _is_observation(text)
            if observed:
                observation = _observation(text)
                if observation["content"]:
                    self.observations.append(observation)
                else:
                    observed = False
            explicit = _explicit_relation(text) if in_list_item else None
            if explicit:
                self.relations.append(explicit)
            elif "[[" in content:
                self.relations.extend(_inline_relations(content))
            in_paragraph = index > 0 and tokens[index - 1].type == "paragraph_open"
            if in_paragraph and not observed and not explicit:
                self.text_blocks.append(text)

    def entity(self) -> SourceEntity:
        kind = ENTITY_KIND_BY_TYPE.get(self.type.replace(" ", "").replace("_", "").lower(), "")
        return SourceEntity(name=self.title, kind=kind)

    def source_relations(self) -> tuple[SourceRelation, ...]:
        seen: dict[tuple[str, str], SourceRelation] = {}
        for relation in self.relations:
            key = (relation["type"], relation["target"])
            seen.setdefault(key, SourceRelation(*key, target_is_record=False))
        return tuple(seen.values())

    def attributes(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "permalink": self.permalink,
            "title": self.title,
            "type": self.type,
            "note_tags": self.tags,
            "relations": self.relations,
            **({"metadata": self.metadata} if self.metadata else {}),
        }


def _digest(*parts: str | None) -> str:
    return hashlib.sha256("\x1f".join(part or "" for part in parts).encode()).hexdigest()[:16]


def note_records(note: Note) -> Iterator[SourceRecord | SkippedRecord]:
    """The records of one parsed note."""
    entity = note.entity()
    relations = note.source_relations()
    common = {
        "system": SYSTEM,
        "created_at": note.created,
        "updated_at": note.modified,
        "entities": (entity,),
        "relations": relations,
    }
    seen: dict[str, int] = {}
    for observation in note.observations:
        category = observation["category"]
        digest = _digest(category, observation["content"])
        seen[digest] = seen.get(digest, 0) + 1
        suffix = "" if seen[digest] == 1 else f"-{seen[digest]}"
        tags = tuple(dict.fromkeys([*observation["tags"], *note.tags]))
        yield SourceRecord(
            source_id=f"{note.permalink}#{digest}{suffix}",
            content=observation["content"],
            kind=KIND_BY_CATEGORY.get((category or "").strip().lower(), "fact"),
            tags=tags,
            attributes={
                **note.attributes(),
                "category": category,
                "context": observation["context"],
            },
            **common,
        )
    if note.text_blocks:
        yield SourceRecord(
            source_id=f"{note.permalink}#text",
            content="\n\n".join(note.text_blocks),
            kind="fact",
            tags=tuple(note.tags),
            attributes={**note.attributes(), "category": None, "context": None},
            **common,
        )
    elif not note.observations:
        yield SkippedRecord(
            system=SYSTEM,
            source_id=note.permalink,
            reason=_("The note holds no observation and no text."),
        )


def _is_note(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return path.lower().endswith(".md") and not any(part.startswith(".") for part in parts)


def read(
    source: Folder | Path | str | IO[bytes], *, max_total: int | None = None
) -> Iterator[SourceRecord | SkippedRecord]:
    """The records of a basic-memory project folder: a `Folder`, a directory's path, or a zip
    (its path or the file). Checked whole before the first record."""
    folder = (
        source
        if isinstance(source, ZipFolder | DirectoryFolder)
        else open_folder(source, max_total=max_total)
    )
    notes = [path for path in folder.paths() if _is_note(path)]
    for path in notes:  # the check: every note decodes and its front matter is plain YAML
        _front_matter(path, _note_text(path, folder.read_bytes(path)))
    return _records(folder, notes)


def _records(folder: Folder, notes: list[str]) -> Iterator[SourceRecord | SkippedRecord]:
    for path in folder.paths():
        if not _is_note(path):
            yield SkippedRecord(
                system=SYSTEM,
                source_id=path,
                reason=_("Not a markdown note of the project."),
            )
    for path in notes:
        yield from note_records(Note(path, _note_text(path, folder.read_bytes(path))))
