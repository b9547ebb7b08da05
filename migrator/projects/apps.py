from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "migrator.projects"
    label = "projects"
