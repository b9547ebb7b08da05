from django.urls import path

from migrator.notebook import views

app_name = "notebook"

urlpatterns = [
    path("notebook/", views.notebook_index, name="index"),
    path("notebook/new", views.entry_new, name="new"),
    path("notebook/export.json", views.notebook_export, name="export"),
    path("notebook/import", views.notebook_import, name="import"),
    path("notebook/<slug:slug>/", views.entry_detail, name="entry"),
    path("notebook/<slug:slug>/edit", views.entry_edit, name="edit"),
    path("notebook/<slug:slug>/history", views.entry_history, name="history"),
    path("notebook/<slug:slug>/fixed", views.entry_fixed, name="fixed"),
]
