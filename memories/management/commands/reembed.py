"""Re-embed every memory (and its windows) with the configured model, in batches.

A long pass beside a serving web server: it gives the CPU back between batches
(memories.background); run it under `nice` to yield the cores as the worker does."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db import transaction
from tqdm import tqdm

from memories.background import breathe
from memories.canonical.content import embedding_saved
from memories.embeddings import embed_contents
from memories.models import Memory


class Command(BaseCommand):
    help = "Recompute the embedding and windows of every memory with ZM_EMBEDDING_MODEL."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument(
            "--only-missing", action="store_true", help="Only memories without one."
        )

    def handle(self, *args, batch_size: int, only_missing: bool, **options) -> None:
        memories = Memory.objects.order_by("id")
        if only_missing:
            memories = memories.filter(embedding__isnull=True)
        total = memories.count()
        last_id = 0
        done = 0
        with tqdm(total=total, unit="memory", disable=options["verbosity"] == 0) as bar:
            while True:
                batch = list(memories.filter(id__gt=last_id).only("id", "content")[:batch_size])
                if not batch:
                    break
                embedded = embed_contents([memory.content for memory in batch])
                with transaction.atomic():
                    for memory, vectors in zip(batch, embedded, strict=True):
                        embedding_saved(memory=memory, embedded=vectors)
                last_id = batch[-1].id
                done += len(batch)
                bar.update(len(batch))
                breathe()
        self.stdout.write(f"Re-embedded {done} memories.")
