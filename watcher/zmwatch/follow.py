"""Following transcripts: read the complete lines added since last time, keep their user and
assistant text, and spool the chunks they fill (or all of it after `idle_flush` seconds without
a new line, or at once when asked to flush).

Only complete lines are read: a torn last line (the agent is still writing it) is read again,
whole, on a later pass. No line stops reading: a bad byte is replaced, padding is taken off, a
line that is not JSON is counted and skipped (its position kept for `zm-watch status`), and a
transcript whose entries are mostly of kinds its adapter does not know (a new format version)
is reported instead of sending nothing without a word.

Where reading starts is derived from what is durable: the offset the server acknowledged, or
the end of the last chunk still waiting in the spool. A transcript that shrank below that
point, or whose path now names another file, starts again from 0.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from zmwatch import consent
from zmwatch.adapters import ADAPTERS, adapter_for, claude_code
from zmwatch.adapters.common import Context, Reader, parse_line
from zmwatch.chunker import Chunker, Line, capped
from zmwatch.config import Config
from zmwatch.spool import Spool
from zmwatch.state import State

log = logging.getLogger("zm-watch")
READ_BYTES = 8 * 1024 * 1024  # at most this much of one transcript per pass
RECHECK = 30.0  # seconds after which an unchanged transcript's consent is asked again
FORMAT_CHECK_AFTER = 10  # entries read before the format check gives a verdict


@dataclass
class Followed:
    """A transcript being read in this process: where, and what waits to fill a chunk."""

    path: Path
    adapter: ModuleType
    context: Context
    inode: int
    generation: int
    position: int
    chunker: Chunker
    reader: Reader
    lines: list[Line] = field(default_factory=list)
    last_line_at: float = field(default_factory=time.monotonic)
    entries: int = 0  # entries read since the start (or the restart) of this process
    unknown: int = 0  # of which of a kind the adapter does not know
    warned: bool = False  # the log said this transcript's format looks unknown


class Follower:
    def __init__(self, *, config: Config, state: State, spool: Spool, home: Path) -> None:
        self.config = config
        self.state = state
        self.spool = spool
        self.home = home
        self.followed: dict[str, Followed] = {}
        # The last chunk spooled for each transcript and generation: where reading resumes.
        self._spooled = spool.last_chunks()
        # Transcripts with nothing waiting, by (inode, size) when last looked at: skipped while
        # they stay so (forgotten every RECHECK seconds, so consent given meanwhile is seen).
        self._quiet: dict[str, tuple[int, int]] = {}
        self._quiet_since = time.monotonic()

    def poll(self, *, flush: bool = False) -> None:
        """One pass over every agent's transcripts."""
        if time.monotonic() - self._quiet_since > RECHECK:
            self._quiet, self._quiet_since = {}, time.monotonic()
        for adapter in ADAPTERS:
            for path in adapter.transcripts(self.home):
                self.step(path, flush=flush)

    def step(self, path: Path, *, flush: bool = False) -> None:
        key = str(path)
        try:
            info = os.stat(path)
            if not flush and self._quiet.get(key) == (info.st_ino, info.st_size):
                return
            self._step(path, flush=flush)
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            return
        except Exception:  # a surprise in one transcript must not stop the others
            log.exception("%s: reading stopped on an unexpected error", path)
            return
        followed = self.followed.get(key)
        if followed is None or not followed.lines:
            self._quiet[key] = (info.st_ino, info.st_size)
        else:
            self._quiet.pop(key, None)

    def _step(self, path: Path, *, flush: bool) -> None:
        key = str(path)
        followed = self.followed.get(key) or self._open(path)
        if followed is None or not self._consented(followed.context):
            self.followed.pop(key, None)  # nothing read is kept, nothing is sent
            return
        self.followed[key] = followed
        info = os.stat(path)
        if info.st_ino != followed.inode or info.st_size < followed.position:
            log.info("%s was truncated or replaced: reading it again from the start", path)
            followed = self._restart(followed, info.st_ino)
        if self._read(followed):
            followed.last_line_at = time.monotonic()
        idle = time.monotonic() - followed.last_line_at >= self.config.idle_flush
        chunks, followed.lines = followed.chunker.cut(followed.lines, flush=flush or idle)
        if chunks:
            project = consent.project_of(followed.context.cwd)
            spooled = [
                {"content": c.content, "hash": c.hash, "end": c.end, "tail": c.tail} for c in chunks
            ]
            self.spool.put(
                transcript=key,
                generation=followed.generation,
                meta={
                    "client": followed.adapter.NAME,
                    "conversation_id": followed.context.conversation_id,
                    "project": str(project),
                },
                chunks=spooled,
            )
            self._spooled[(key, followed.generation)] = spooled[-1]
            log.info("%s: %d chunk(s) spooled", path, len(chunks))

    def _open(self, path: Path) -> Followed | None:
        adapter = adapter_for(path, self.home) or claude_code
        context = adapter.context(path)
        if context is None or not self._consented(context):
            return None  # no project known yet, or not one to capture
        inode = os.stat(path).st_ino
        key = str(path)
        record = self.state.record(key)
        if record is None or record["inode"] != inode:
            generation = record["generation"] + 1 if record else 0
            record = self.state.start(key, inode=inode, generation=generation)
        position, carry = record["offset"], record["tail"]
        waiting = self._spooled.get((key, record["generation"]))
        if waiting is not None and waiting["end"] >= position:
            position, carry = waiting["end"], waiting["tail"]
        chunker = Chunker(size=self.config.chunk_chars, overlap=self.config.overlap_chars)
        chunker.carry = carry
        return Followed(
            path,
            adapter,
            context,
            inode,
            record["generation"],
            position,
            chunker,
            adapter.reader(path),
        )

    def _consented(self, context: Context) -> bool:
        return consent.allowed(consent.project_of(context.cwd), self.config)

    def _restart(self, followed: Followed, inode: int) -> Followed:
        generation = followed.generation + 1
        self.state.start(str(followed.path), inode=inode, generation=generation)
        followed.inode, followed.generation, followed.position = inode, generation, 0
        followed.lines = []
        followed.chunker.carry = ""
        followed.reader = followed.adapter.reader(followed.path)
        followed.entries = followed.unknown = 0
        followed.warned = False
        return followed

    def _read(self, followed: Followed) -> bool:
        """Read the complete lines after `position`; whether there was any."""
        with followed.path.open("rb") as transcript:
            transcript.seek(followed.position)
            data = transcript.read(READ_BYTES)
            while data and b"\n" not in data:  # one line longer than a read
                more = transcript.read(READ_BYTES)
                if not more:
                    break
                data += more
        complete = data[: data.rfind(b"\n") + 1]
        offset = followed.position
        unreadable: list[int] = []
        for raw in complete.splitlines(keepends=True):
            start, offset = offset, offset + len(raw)
            texts = self._turns(followed, raw, start, unreadable)
            if texts:
                limit = self.config.max_turn_chars
                text = "\n\n".join(capped(turn, limit) for turn in texts)
                followed.lines.append(Line(text, start, offset))
        followed.position = offset
        if unreadable:
            self.state.unreadable(str(followed.path), unreadable)
        self._check_format(followed)
        return bool(complete)

    def _turns(
        self, followed: Followed, raw: bytes, start: int, unreadable: list[int]
    ) -> list[str]:
        """The turns of one line; a line that is not JSON (or that its reader cannot take) is
        noted in `unreadable`."""
        if not raw.strip(b" \t\r\n\x00"):
            return []
        try:
            entry = parse_line(raw)
        except ValueError:
            log.warning("%s: skipped a line that is not JSON at byte %d", followed.path, start)
            unreadable.append(start)
            return []
        followed.entries += 1
        try:
            texts = followed.reader.turns(entry) if isinstance(entry, dict) else None
        except Exception:  # the reader's mistake: this line is skipped, never the transcript
            log.exception(
                "%s: skipped a line that could not be read at byte %d", followed.path, start
            )
            unreadable.append(start)
            return []
        if texts is None:
            followed.unknown += 1
            return []
        return texts

    def _check_format(self, followed: Followed) -> None:
        """Most entries of kinds the adapter does not know: a format it was not written for.
        Said in the log once a run, and in `zm-watch status` while it lasts."""
        unknown, seen = followed.unknown, followed.entries
        verdict = [unknown, seen] if seen >= FORMAT_CHECK_AFTER and unknown * 2 > seen else None
        if verdict and not followed.warned:
            followed.warned = True
            log.warning(
                "%s: %d of %d entries are of kinds the %s reader does not know (a new format "
                "version?); their text is not sent",
                followed.path,
                unknown,
                seen,
                followed.adapter.NAME,
            )
        self.state.format_checked(str(followed.path), verdict)
