"""The file list of a run: change counts, marks, filters, and a clear notice when nothing was translated."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from migrator.projects.models import Project, Run
from tests.conftest import pipeline_run
from tests.review.conftest import NEWLINE_NAME, review_files

pytestmark = pytest.mark.django_db


def file_rows(html: str) -> dict[str, str]:
    """data-path -> row HTML of the listed files."""
    rows = {}
    for chunk in html.split('<tr class="file ')[1:]:
        path = chunk.split('data-path="', 1)[1].split('"', 1)[0]
        rows[path] = chunk.split("</tr>")[0]
    return rows


def listing(client: Client, run: Run, **params: str) -> str:
    response = client.get(reverse("review:files", args=[run.pk]), params)
    assert response.status_code == 200
    return response.content.decode()


def test_it_lists_changed_files_with_counts_and_marks(alice_client: Client, translated_run: Run) -> None:
    rows = file_rows(listing(alice_client, translated_run))
    assert set(rows) == {"src/vadd.cu", "CMakeLists.txt", "src/long.cu", "src/latin.cu",
                         "src/&lt;script&gt;alert(&#x27;name&#x27;)&lt;script&gt;.cu"}
    # +9/-9: the translation also widens the 32-bit full mask of its __shfl_sync (wavefront.full-mask-64)
    assert "+9" in rows["src/vadd.cu"] and "−9" in rows["src/vadd.cu"] and "1 unconverted" in rows["src/vadd.cu"]
    assert "+2" in rows["CMakeLists.txt"] and "2 build fixes" in rows["CMakeLists.txt"]
    assert f'href="{reverse("review:file", args=[translated_run.pk, "src/vadd.cu"])}"' in rows["src/vadd.cu"]


def test_filters_narrow_the_list(alice_client: Client, translated_run: Run) -> None:
    assert set(file_rows(listing(alice_client, translated_run, show="unconverted"))) == {"src/vadd.cu"}
    every = file_rows(listing(alice_client, translated_run, show="all"))
    assert "README.md" in every and "assets/blob.bin" in every and "status-unchanged" in every["README.md"]
    link = reverse("review:file", args=[translated_run.pk, NEWLINE_NAME])
    assert f'href="{link}"' in every[NEWLINE_NAME] and alice_client.get(link).status_code == 200
    errors = listing(alice_client, translated_run, show="errors")
    assert file_rows(errors) == {} and "No files match this filter." in errors
    assert 'value="errors" checked' in errors
    bogus = listing(alice_client, translated_run, show="nonsense")
    assert "src/vadd.cu" in file_rows(bogus) and "Unknown filter" in bogus


def test_the_run_page_links_to_the_file_list(alice_client: Client, translated_run: Run) -> None:
    html = alice_client.get(reverse("projects:run", args=[translated_run.pk])).content.decode()
    assert f'href="{reverse("review:files", args=[translated_run.pk])}" id="files-changed-link">Files changed' in html


def test_a_run_without_hipify_says_there_is_no_translation(
    alice_client: Client, only_stages: Callable[..., None], project: Project
) -> None:
    only_stages("fetch", "scan")
    run = pipeline_run(project, review_files())
    html = listing(alice_client, run)
    assert 'id="no-translation"' in html and "hipify stage did not run" in html and file_rows(html) == {}
    page = alice_client.get(reverse("review:file", args=[run.pk, "src/vadd.cu"])).content.decode()
    assert 'id="no-translation"' in page
    assert alice_client.get(reverse("review:patch", args=[run.pk])).status_code == 404
    assert alice_client.get(reverse("review:archive", args=[run.pk])).status_code == 404
