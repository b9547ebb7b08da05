from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "migrator.pipeline"
    label = "pipeline"
    verbose_name = "Pipeline"

    def ready(self) -> None:
        # Register the tasks in every process, not only in workers that autodiscover them: dispatch
        # looks them up by name in the Celery app.
        from migrator.pipeline import tasks  # noqa: F401
