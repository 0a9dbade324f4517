from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = _("Memories")

    def ready(self) -> None:
        from django_q.signals import post_spawn

        from memories import checks  # noqa: F401 - registers the embedding dimension check
        from memories.background import task_process_started
        from memories.portability import erasure  # noqa: F401 - receives the erasure signals

        post_spawn.connect(task_process_started, dispatch_uid="zeromemory-task-process")
