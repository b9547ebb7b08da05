from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "migrator.api"
    label = "api"
