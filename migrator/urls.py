from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from migrator.accounts.login import ThrottledAdminAuthenticationForm, login
from migrator.api.endpoints import api

admin.site.login_form = ThrottledAdminAuthenticationForm

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", login, name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("migrator.runners.urls")),
    path("", include("migrator.notebook.urls")),
    path("", include("migrator.projects.urls")),
    path("", include("migrator.reports.urls")),
    path("", include("migrator.integrations.urls")),
    path("", include("migrator.review.urls")),
    path("", include("migrator.dependencies.urls")),
    path("api/v1/", api.urls),
]
