"""A project's integration settings page: webhook secrets and the host token for posting back."""
from __future__ import annotations

import secrets

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from migrator.integrations.models import ProjectIntegration
from migrator.projects.access import get_project_or_404

SECRET_FIELDS = ("webhook_secret", "gitlab_token", "host_token")


class IntegrationForm(forms.ModelForm[ProjectIntegration]):
    """Secret fields are never shown back; leaving one empty keeps the stored value."""

    generate_webhook_secret = forms.BooleanField(required=False, label="Generate a new GitHub webhook secret")

    class Meta:
        model = ProjectIntegration
        fields = ("host_kind", "host_api_url", "repository", "webhook_secret", "gitlab_token", "host_token",
                  "post_statuses", "post_comments")
        widgets = {name: forms.PasswordInput(render_value=False) for name in SECRET_FIELDS}

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        for name in SECRET_FIELDS:
            if not data.get(name):
                data[name] = self.initial.get(name, "")
        if data.get("generate_webhook_secret"):
            data["webhook_secret"] = secrets.token_hex(24)
        return data


@login_required
@require_http_methods(["GET", "POST"])
def integration_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    project = get_project_or_404(request.user, project_id)
    integration = ProjectIntegration.objects.filter(project=project).first() or ProjectIntegration(project=project)
    form = IntegrationForm(request.POST or None, instance=integration)
    if request.method == "POST" and form.is_valid():
        saved = form.save()
        if form.cleaned_data.get("generate_webhook_secret"):
            messages.success(request, f"New webhook secret (shown once): {saved.webhook_secret}")
        else:
            messages.success(request, "Integration saved.")
        return redirect(reverse("integrations:settings", args=[project.pk]))
    hooks = {
        "github": request.build_absolute_uri(reverse("integrations:github", args=[project.pk])),
        "gitlab": request.build_absolute_uri(reverse("integrations:gitlab", args=[project.pk])),
    }
    return render(request, "integrations/settings.html", {"project": project, "form": form, "hooks": hooks,
                                                          "integration": integration})
