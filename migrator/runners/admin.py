from django.contrib import admin

from migrator.runners.models import Runner


@admin.register(Runner)
class RunnerAdmin(admin.ModelAdmin[Runner]):
    list_display = ("name", "profile", "last_seen")
