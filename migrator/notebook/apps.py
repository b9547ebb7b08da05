from django.apps import AppConfig


class NotebookConfig(AppConfig):
    name = "migrator.notebook"
    label = "notebook"

    def ready(self) -> None:
        from migrator.notebook import receivers  # noqa: F401  (connects them)
