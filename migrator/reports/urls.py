from django.urls import path

from migrator.reports import delivery_views, views

app_name = "reports"

urlpatterns = [
    path("runs/<int:run_id>/report", views.run_report, name="run"),
    path("runs/<int:run_id>/report.md", views.run_report_markdown, name="run-markdown"),
    path("runs/<int:run_id>/report.json", views.run_report_json, name="run-json"),
    path("runs/<int:run_id>/delivery", delivery_views.run_delivery, name="delivery"),
    path("runs/<int:run_id>/delivery/deliver", delivery_views.deliver, name="deliver"),
    path("runs/<int:run_id>/delivery/<int:attempt_id>/bundle", delivery_views.delivery_bundle, name="delivery-bundle"),
]
