from django.contrib import admin

from migrator.reports.models import PrComment, StatusPost


@admin.register(StatusPost)
class StatusPostAdmin(admin.ModelAdmin[StatusPost]):
    list_display = ("run", "kind", "phase", "ok", "http_status", "attempts", "created_at")
    list_filter = ("kind", "ok")


@admin.register(PrComment)
class PrCommentAdmin(admin.ModelAdmin[PrComment]):
    list_display = ("pr_url", "project", "comment_id", "run_number", "updated_at")
