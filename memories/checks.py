"""System check: the embedding model's dimension matches the memory embedding column."""

from __future__ import annotations

from django.core import checks
from django.core.exceptions import ImproperlyConfigured


@checks.register()
def embedding_dimension(app_configs, **kwargs) -> list[checks.CheckMessage]:
    from memories.embeddings import check_dimension, declared_dimension

    try:
        check_dimension(declared_dimension())
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="memories.E001")]
    return []
