from django.contrib import admin

from migrator.integrations.models import ProjectIntegration, WebhookDelivery


@admin.register(ProjectIntegration)
class ProjectIntegrationAdmin(admin.ModelAdmin[ProjectIntegration]):
    list_display = ("project", "host_kind", "api_url", "post_statuses", "post_comments", "updated_at")
    list_filter = ("host_kind",)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin[WebhookDelivery]):
    list_display = ("delivery_id", "provider", "project", "event", "action", "run", "skipped", "received_at")
    list_filter = ("provider", "event", "skipped")
    readonly_fields = ("provider", "delivery_id", "project", "event", "action", "run", "skipped", "skip_reason",
                       "received_at")
