from django.contrib import admin

from migrator.accounts.models import Membership, Team


class MembershipInline(admin.TabularInline[Membership, Team]):
    model = Membership
    extra = 1


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin[Team]):
    list_display = ("name", "slug", "created_at")
    prepopulated_fields = {"slug": ("name",)}
    inlines = [MembershipInline]
