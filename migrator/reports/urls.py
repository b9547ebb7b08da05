from django.urls import path

from migrator.reports import views

app_name = "reports"

urlpatterns = [
    path("runs/<int:run_id>/report", views.run_report, name="run"),
    path("runs/<int:run_id>/report.md", views.run_report_markdown, name="run-markdown"),
    path("runs/<int:run_id>/report.json", views.run_report_json, name="run-json"),
]
