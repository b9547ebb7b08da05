"""Large files are sent in pages: 200 rows first, then 500 a chunk through an htmx sentinel row."""
from __future__ import annotations

import html as html_lib
import re
from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from migrator.projects.models import Project, Run
from tests.conftest import pipeline_run
from tests.review.conftest import big_cu, line_rows, row_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def big_run(only_stages: Callable[..., None], project: Project) -> Run:
    only_stages("fetch", "scan", "hipify")
    return pipeline_run(project, {"src/big.cu": big_cu(20_000)})


def sentinel_url(fragment: str) -> str:
    match = re.search(r'<tr class="row-more" hx-get="([^"]+)" hx-trigger="revealed" hx-swap="outerHTML">', fragment)
    assert match, "no lazy-load sentinel"
    return html_lib.unescape(match.group(1))


def test_a_20000_line_file_arrives_in_chunks(alice_client: Client, big_run: Run) -> None:
    first = alice_client.get(reverse("review:file", args=[big_run.pk, "src/big.cu"])).content.decode()
    assert line_rows(first) == 200 and 'id="o200"' not in first
    url = sentinel_url(first)
    assert url == reverse("review:chunk", args=[big_run.pk, "src/big.cu"]) + "?start=200"
    second = alice_client.get(url, HTTP_HX_REQUEST="true")
    body = second.content.decode()
    assert second.status_code == 200 and "<html" not in body and line_rows(body) == 500
    assert 'id="o200"' in body and 'id="o699"' in body and 'id="o700"' not in body  # row 0 is the added include
    assert 'class="line row-replace"' in row_with(body, "o212")  # every 7th body line is converted
    assert sentinel_url(body).endswith("?start=700")
    last = alice_client.get(reverse("review:chunk", args=[big_run.pk, "src/big.cu"]), {"start": 19_800}).content.decode()
    assert 'id="o19997"' in last and "Show 3 unchanged lines (19998–20000)" in last and "row-more" not in last


def test_the_unified_view_pages_too(alice_client: Client, big_run: Run) -> None:
    first = alice_client.get(reverse("review:file", args=[big_run.pk, "src/big.cu"]), {"view": "unified"}).content.decode()
    assert line_rows(first) == 200
    url = sentinel_url(first)
    assert "view=unified" in url and "start=200" in url
    body = alice_client.get(url).content.decode()
    assert line_rows(body) == 500 and "row-delete" in body and "row-insert" in body


def test_bad_chunk_requests_are_rejected(alice_client: Client, big_run: Run) -> None:
    chunk = reverse("review:chunk", args=[big_run.pk, "src/big.cu"])
    assert alice_client.get(chunk).status_code == 400
    assert alice_client.get(chunk, {"start": "-5"}).status_code == 400
    assert alice_client.get(chunk, {"start": 10**7}).status_code == 404
    assert alice_client.get(reverse("review:fold", args=[big_run.pk, "src/big.cu"]), {"fold": 0}).status_code == 404
