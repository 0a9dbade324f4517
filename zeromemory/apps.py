from django.apps import AppConfig


class ZeroMemoryConfig(AppConfig):
    name = "zeromemory"
    verbose_name = "zero-memory"

    def ready(self) -> None:
        from django_q.signals import post_spawn

        from zeromemory.heartbeat import start_beating

        post_spawn.connect(start_beating, dispatch_uid="zeromemory.heartbeat")
