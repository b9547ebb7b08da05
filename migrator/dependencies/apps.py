from django.apps import AppConfig


class DependenciesConfig(AppConfig):
    name = "migrator.dependencies"
    label = "dependencies"

    def ready(self) -> None:
        from migrator.dependencies import receivers  # noqa: F401  (connects them)
