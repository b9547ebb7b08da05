from django.urls import path

from migrator.integrations import settings_views, views

app_name = "integrations"

urlpatterns = [
    path("hooks/github/<int:project_id>", views.github_hook, name="github"),
    path("hooks/gitlab/<int:project_id>", views.gitlab_hook, name="gitlab"),
    path("projects/<int:project_id>/integration", settings_views.integration_settings, name="settings"),
]
