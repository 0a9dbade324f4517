from django.apps import AppConfig


class ZeroMemoryConfig(AppConfig):
    name = "zeromemory"
    verbose_name = "zero-memory"
