from django.contrib import admin, messages
from django.http import HttpRequest

from migrator.api.models import ApiToken, hash_token, new_token_value


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin[ApiToken]):
    """Saving a new token shows its value once, in a message; only the hash is stored."""

    list_display = ("name", "team", "hint", "revoked", "created_at", "last_used_at")
    list_filter = ("team", "revoked")
    fields = ("team", "name", "revoked", "hint", "created_at", "last_used_at")
    readonly_fields = ("hint", "created_at", "last_used_at")

    def save_model(self, request: HttpRequest, obj: ApiToken, form: object, change: bool) -> None:
        if not change:
            value = new_token_value()
            obj.token_hash, obj.hint = hash_token(value), value[:12]
            messages.warning(request, f"API token (copy it now, it is not shown again): {value}")
        super().save_model(request, obj, form, change)
