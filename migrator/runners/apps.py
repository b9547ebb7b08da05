from django.apps import AppConfig


class RunnersConfig(AppConfig):
    name = "migrator.runners"
    label = "runners"
