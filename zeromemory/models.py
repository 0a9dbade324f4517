from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """The last sign of life of one django-q2 worker process (host:pid), for /readyz."""

    worker = models.CharField(max_length=200, primary_key=True)
    seen_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.worker} at {self.seen_at:%Y-%m-%d %H:%M:%S}"
