from django.contrib import admin

from migrator.projects.models import Project, Run, SourceArchive, Stage


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin[Project]):
    list_display = ("name", "team", "source_kind", "created_at")
    list_filter = ("team", "source_kind")


class StageInline(admin.TabularInline[Stage, Run]):
    model = Stage
    fields = ("name", "state", "started_at", "finished_at", "summary")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin[Run]):
    list_display = ("__str__", "state", "trigger", "created_at")
    list_filter = ("state", "trigger")
    inlines = [StageInline]


@admin.register(SourceArchive)
class SourceArchiveAdmin(admin.ModelAdmin[SourceArchive]):
    list_display = ("original_name", "project", "sha256", "size", "uploaded_at")
