from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "migrator.projects"
    label = "projects"

    def ready(self) -> None:
        from migrator import checks  # noqa: F401  (registers the deployment checks)
