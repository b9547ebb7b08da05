from django.urls import path, register_converter

from migrator.review import downloads, views


class FilePathConverter:
    """Like Django's `path` converter, but a file name may also hold a newline (git allows it, and a
    repository's names must never make the file list fail to reverse its links)."""

    regex = r"[\s\S]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(FilePathConverter, "reviewpath")

app_name = "review"

# The chunk and fold endpoints come before the file page, whose path would swallow them.
urlpatterns = [
    path("runs/<int:run_id>/files/", views.run_files, name="files"),
    path("runs/<int:run_id>/files/<reviewpath:path>/chunk", views.file_chunk, name="chunk"),
    path("runs/<int:run_id>/files/<reviewpath:path>/fold", views.file_fold, name="fold"),
    path("runs/<int:run_id>/files/<reviewpath:path>", views.file_view, name="file"),
    path("runs/<int:run_id>/patch", downloads.run_patch, name="patch"),
    path("runs/<int:run_id>/hip.tar.gz", downloads.run_archive, name="archive"),
    path("review/pygments.css", downloads.pygments_stylesheet, name="pygments-css"),
]
