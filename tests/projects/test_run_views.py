"""The run page and its live partials: 204 when nothing changed, 286 once the run is final."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from django.test import Client
from django.urls import reverse

from migrator.projects import transitions
from migrator.projects.constants import StageState
from migrator.projects.models import Run

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse  # what Client's methods return

pytestmark = pytest.mark.django_db



def _status(client: Client, run: Run, **params: str | int) -> TestResponse:
    return client.get(reverse("projects:run-status", args=[run.pk]), params, HTTP_HX_REQUEST="true")


def test_the_run_page_shows_every_stage(alice_client: Client, run: Run) -> None:
    page = alice_client.get(reverse("projects:run", args=[run.pk])).content.decode()
    for name in ("fetch", "scan", "hipify", "compile", "link", "smoke"):
        assert f'id="stage-{name}"' in page
    assert 'hx-trigger="every 1s"' in page and "htmx" in page


def test_the_partial_answers_204_until_something_changes(alice_client: Client, run: Run) -> None:
    run.refresh_from_db()
    assert _status(alice_client, run, v=run.version).status_code == 204
    fetch = run.stages.get(name="fetch")
    transitions.claim_stage(fetch.pk, "w")
    transitions.record_progress(fetch.pk, run.pk, 3, 10)
    response = _status(alice_client, run, v=run.version)
    body = response.content.decode()
    assert response.status_code == 200 and 'data-state="running"' in body and "3/10" in body
    found = re.search(r"v=(\d+)", body)
    assert found is not None
    new_version = int(found.group(1))
    assert new_version > run.version


def test_the_partial_stops_polling_when_the_run_is_final(alice_client: Client, run: Run) -> None:
    for stage in run.stages.all():
        transitions.claim_stage(stage.pk, "w")
        transitions.finish_stage(stage.pk, StageState.PASSED, "ok")
    response = _status(alice_client, run, v=0)
    assert response.status_code == 286
    assert "hx-trigger" not in response.content.decode().split("</ol>")[0]


def test_the_log_appends_from_an_offset_and_escapes_html(alice_client: Client, run: Run) -> None:
    fetch = run.stages.get(name="fetch")
    transitions.claim_stage(fetch.pk, "w")
    transitions.append_log(fetch.pk, run.pk, "line one\n<script>alert(1)</script>\n")
    url = reverse("projects:stage-log", args=[run.pk, "fetch"])
    first = alice_client.get(url, {"offset": 0})
    body = first.content.decode()
    assert "line one" in body and "&lt;script&gt;" in body and "<script>alert" not in body
    found = re.search(r"offset=(\d+)", body)
    assert found is not None
    offset = int(found.group(1))
    assert alice_client.get(url, {"offset": offset}).status_code == 204
    transitions.append_log(fetch.pk, run.pk, "line two\n")
    assert alice_client.get(url, {"offset": offset}).content.decode().startswith("line two")


def test_following_a_run_switches_the_log_to_the_running_stage(alice_client: Client, run: Run) -> None:
    fetch, scan = run.stages.get(name="fetch"), run.stages.get(name="scan")
    transitions.claim_stage(fetch.pk, "w")
    transitions.finish_stage(fetch.pk, StageState.PASSED, "ok")
    transitions.claim_stage(scan.pk, "w")
    transitions.append_log(scan.pk, run.pk, "scanning now\n")
    body = _status(alice_client, run, v=0, log="fetch").content.decode()
    assert 'hx-swap-oob="true"' in body and "scanning now" in body


def test_cancel_from_the_page(alice_client: Client, run: Run) -> None:
    response = alice_client.post(reverse("projects:run-cancel", args=[run.pk]))
    run.refresh_from_db()
    assert response.status_code == 302 and run.state == "cancelled"
    assert set(run.stages.values_list("state", flat=True)) == {"cancelled"}
