from django.urls import path

from migrator.projects import run_views, views

app_name = "projects"

urlpatterns = [
    path("", views.project_list, name="list"),
    path("projects/new", views.project_create, name="create"),
    path("projects/<int:project_id>/", views.project_detail, name="detail"),
    path("projects/<int:project_id>/settings", views.project_settings, name="settings"),
    path("projects/<int:project_id>/runs/new", views.run_start, name="run-start"),
    path("runs/<int:run_id>/", run_views.run_detail, name="run"),
    path("runs/<int:run_id>/status", run_views.run_status, name="run-status"),
    path("runs/<int:run_id>/cancel", run_views.run_cancel, name="run-cancel"),
    path("runs/<int:run_id>/rerun", run_views.run_rerun, name="run-rerun"),
    path("runs/<int:run_id>/stages/<slug:stage_name>/log", run_views.stage_log, name="stage-log"),
    path("runs/<int:run_id>/stages/<slug:stage_name>/log.txt", run_views.stage_log_raw, name="stage-log-raw"),
    path("runs/<int:run_id>/reference/log.txt", run_views.reference_log_raw, name="reference-log-raw"),
]
