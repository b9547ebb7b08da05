from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "migrator.reports"
    label = "reports"

    def ready(self) -> None:
        from migrator.reports import receivers  # noqa: F401  (connects them)
