from django.urls import path

from migrator.dependencies import views

app_name = "dependencies"

urlpatterns = [
    path("runs/<int:run_id>/dependencies", views.run_dependencies, name="run"),
]
