from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "migrator.integrations"
    label = "integrations"

    def ready(self) -> None:
        # The hand-off task is looked up by name when a delivery is queued: register it everywhere.
        from migrator.integrations import tasks  # noqa: F401
