from importlib import import_module

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

# The modules that declare a background job (`memories.jobs`): importing one registers its job.
JOB_MODULES = (
    "memories.canonical.service",
    "memories.capture.service",
    "memories.hygiene.service",
)


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = _("Memories")

    def ready(self) -> None:
        from django_q.signals import post_spawn

        from memories import checks  # noqa: F401 - registers the embedding dimension check
        from memories.background import task_process_started
        from memories.portability import erasure  # noqa: F401 - receives the erasure signals

        post_spawn.connect(task_process_started, dispatch_uid="zeromemory-task-process")

        from memories.jobs import jobs_configure

        for module in JOB_MODULES:
            import_module(module)
        jobs_configure()  # each job's settings, from the environment
