"""Find what existing memories are about, again: the detector and each scope's dictionary over
its valid memories, in batches.

Every write records its memory's entities as it is written, by the names its scope knows then.
A name that becomes known later (a new entity, an alias someone adds, a merge) does not reach
back to the memories written before it, nor do memories written before entities existed have
any: this pass gives them theirs. Mentions already recorded stay as they are, so it can run
again, or be stopped and run again, at any time. It gives the CPU back between batches
(memories.background), so it can run beside a serving web server."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from tqdm import tqdm

from memories.background import breathe
from memories.canonical.content import Mentioned, derived_copy, mentions_saved
from memories.models import EntityMention, Memory
from scopes.models import Scope

# What the scan reads of a memory: its text and language (never its embedding).
TEXT_FIELDS = (
    "id",
    "scope_id",
    "content",
    "content_lang",
    "content_original",
    "translation_status",
)


class Command(BaseCommand):
    help = "Record what existing memories are about by the names their scopes know now."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--scope", help="Only this scope's memories (its id).")
        parser.add_argument("--batch-size", type=int, default=500)

    def handle(self, *args, scope: str | None, batch_size: int, **options) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        memories = Memory.objects.filter(valid=True).order_by("id")
        if scope:
            found = Scope.objects.filter(public_id=scope).first()
            if found is None:
                raise CommandError(f"No scope with the id {scope!r}.")
            memories = memories.filter(scope=found)
        before = EntityMention.objects.filter(memory__in=memories).count()
        last_id = 0
        with tqdm(total=memories.count(), unit="memory", disable=options["verbosity"] == 0) as bar:
            while True:
                batch = list(memories.filter(id__gt=last_id).only(*TEXT_FIELDS)[:batch_size])
                if not batch:
                    break
                with transaction.atomic():
                    mentions_saved([Mentioned(memory, derived_copy(memory)) for memory in batch])
                last_id = batch[-1].id
                bar.update(len(batch))
                breathe()
        added = EntityMention.objects.filter(memory__in=memories).count() - before
        self.stdout.write(f"Recorded {added} new mentions.")
