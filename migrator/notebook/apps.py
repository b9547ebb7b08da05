from django.apps import AppConfig


class NotebookConfig(AppConfig):
    name = "migrator.notebook"
    label = "notebook"
