from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "migrator.accounts"
    label = "accounts"
