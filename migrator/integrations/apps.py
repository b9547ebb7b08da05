from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "migrator.integrations"
    label = "integrations"
