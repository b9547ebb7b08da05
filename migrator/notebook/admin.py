from django.contrib import admin

from migrator.notebook.models import Entry, Signature


class SignatureInline(admin.TabularInline[Signature, Entry]):
    model = Signature
    extra = 0


@admin.register(Entry)
class EntryAdmin(admin.ModelAdmin[Entry]):
    list_display = ("title", "slug", "origin", "matched_runs", "fixed_count", "updated_at")
    search_fields = ("title", "symptom")
    inlines = [SignatureInline]
