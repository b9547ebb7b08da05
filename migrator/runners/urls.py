from django.urls import path

from migrator.runners import views

app_name = "runners"

urlpatterns = [path("runners/", views.runner_list, name="list")]
