from django.apps import AppConfig


class RunnersConfig(AppConfig):
    name = "migrator.runners"
    label = "runners"

    def ready(self) -> None:
        # Celery's worker signals: a worker registers itself and keeps its heartbeat while it lives.
        from migrator.runners import signals  # noqa: F401
