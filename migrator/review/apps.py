from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "migrator.review"
    label = "review"

    def ready(self) -> None:
        from migrator.review import receivers  # noqa: F401  (connects them)
