from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "migrator.review"
    label = "review"
