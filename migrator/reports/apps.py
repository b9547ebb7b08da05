from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "migrator.reports"
    label = "reports"

    def ready(self) -> None:
        # Register the posting task with Celery (the worker autodiscovers only ``worker``).
        from migrator.reports import tasks  # noqa: F401
