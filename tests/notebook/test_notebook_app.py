"""The error notebook: seeds, search on real error lines, matching stages, authoring, history, export."""
from __future__ import annotations

import html
import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.lib.signatures.proposal import signature_from_log_line
from migrator.lib.signatures.seed import NOTEBOOK_SLUGS
from migrator.notebook import actions
from migrator.notebook.matching import match_stage
from migrator.notebook.models import Entry, EntryRevision, StageMatch
from migrator.notebook.search import search_entries
from migrator.pipeline.orchestrator import announce_stage
from migrator.projects import actions as project_actions
from migrator.projects import transitions
from migrator.projects.constants import StageState
from migrator.projects.models import Stage

pytestmark = pytest.mark.django_db

HIPCC_MISSING_HEADER = "/home/ci/work/proj-7/src/kernels/saxpy.cu:2:10: fatal error: 'cuda_runtime.h' file not found"
LD_CUBLAS = "/usr/bin/ld: cannot find -lcublas: No such file or directory"


@pytest.fixture
def seeded() -> None:
    actions.load_seed()


@pytest.fixture
def failed_compile(team_user: tuple[User, Team], cuda_archive: bytes) -> Stage:
    user, team = team_user
    project = project_actions.create_project(team, "nb", user=user)
    project_actions.store_archive(project, SimpleUploadedFile("n.tgz", cuda_archive), "n.tgz", user)
    run = project_actions.create_run(project, user=user)
    stage = run.stages.get(name="compile")
    transitions.claim_stage(stage.pk, "w")
    transitions.append_log(stage.pk, run.pk, "hipcc -c src/x.cu\n" + HIPCC_MISSING_HEADER + "\n1 error generated.\n")
    finished = transitions.finish_stage(stage.pk, StageState.FAILED, "1 of 1 files failed")
    assert finished is not None
    stage = finished
    announce_stage(stage)  # what the pipeline does after every stage
    return stage


def test_seeding_is_idempotent_and_keeps_user_edits(seeded: None, team_user: tuple[User, Team]) -> None:
    assert Entry.objects.count() == len(NOTEBOOK_SLUGS) == 66
    assert actions.load_seed() == {"created": 0, "updated": 0, "unchanged": len(NOTEBOOK_SLUGS), "kept_user_edits": 0}
    entry = Entry.objects.get(slug="cuda-link-libraries")
    data = actions.entry_data_from_dict(actions.snapshot(entry))
    data.symptom = "edited by a person"
    actions.save_entry(data, user=team_user[0], entry=entry)
    assert actions.load_seed()["kept_user_edits"] == 1
    assert Entry.objects.get(slug="cuda-link-libraries").symptom == "edited by a person"


@pytest.mark.parametrize(
    "line, slug",
    [
        (HIPCC_MISSING_HEADER, "cuda-header-not-found"),
        (LD_CUBLAS, "cuda-link-libraries"),
        ("nvcc fatal   : Unknown option '--offload-arch=gfx90a'", "hipcc-nvidia-platform"),
        ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", "no-binary-for-gpu"),
        ("RuntimeError: CUDA error: an illegal memory access was encountered", "illegal-memory-access"),
    ],
)
def test_pasting_a_raw_error_line_finds_the_right_entry_first(seeded: None, line: str, slug: str) -> None:
    hits = search_entries(line)
    assert hits and hits[0].entry.slug == slug


def test_words_rank_by_full_text_with_highlighted_snippets(seeded: None) -> None:
    hits = search_entries("nan loss bf16")
    assert hits[0].entry.slug == "fp16-nan-use-bf16"
    assert "<mark>" in hits[0].snippet


def test_filters_by_stage_and_tag(seeded: None) -> None:
    assert all("smoke" in h.entry.stages for h in search_entries("", stage="smoke"))
    tag = Entry.objects.get(slug="cuda-link-libraries").tags[0]
    assert all(tag in h.entry.tags for h in search_entries("", tag=tag))


def test_snippets_escape_hostile_entry_text(team_user: tuple[User, Team]) -> None:
    data = actions.EntryData(
        title="Hostile <script>", symptom="linker <script>alert('x')</script> explodes loudly",
        signatures=[("text", "linker explodes loudly")],
    )
    actions.save_entry(data, user=team_user[0])
    snippet = str(search_entries("linker explodes")[0].snippet)
    assert "<script" not in snippet and "alert(" in snippet


def test_a_failed_stage_is_matched_with_its_lines(seeded: None, failed_compile: Stage) -> None:
    match = StageMatch.objects.filter(stage=failed_compile).first()
    assert match is not None and match.entry.slug == "cuda-header-not-found"
    assert match.lines == [HIPCC_MISSING_HEADER] and match.line_numbers == [2]
    entry = Entry.objects.get(slug="cuda-header-not-found")
    assert entry.matched_runs == 1
    match_stage(failed_compile)  # matching again does not count the run twice
    entry.refresh_from_db()
    assert entry.matched_runs == 1


def test_the_run_page_shows_the_match_and_offers_add_to_notebook(
    alice_client: Client, seeded: None, failed_compile: Stage
) -> None:
    url = reverse("projects:run", args=[failed_compile.run_id]) + "?stage=compile"
    page = alice_client.get(url).content.decode()
    assert "CUDA header not found" in page and "saxpy.cu" in page
    assert reverse("notebook:new") + "?line=" in page


def test_adding_an_entry_from_a_failing_line_prefills_the_signature(
    alice_client: Client, failed_compile: Stage
) -> None:
    line = "/tmp/x/a.hip:9:1: error: use of undeclared identifier 'cudaFooBar'"
    page = alice_client.get(reverse("notebook:new"), {"line": line, "stage": "compile", "run": str(failed_compile.run_id)})
    body = page.content.decode()
    assert "text: error: use of undeclared identifier &#x27;cudaFooBar&#x27;" in body
    form = {
        "title": "cudaFooBar has no HIP equivalent", "symptom": line,
        "signatures": "text: error: use of undeclared identifier 'cudaFooBar'", "stages": ["compile"],
        "fix": "Replace it with **hipBar**.", "tags": "api, manual", "links": "", "cause": "", "note": "",
    }
    response = alice_client.post(reverse("notebook:new"), form)
    entry = Entry.objects.get(title=form["title"])
    assert response.status_code == 302 and entry.tags == ["api", "manual"]
    assert search_entries("/other/path/b.hip:3:7: error: use of undeclared identifier 'cudaFooBar'")[0].entry == entry


def test_prefill_refuses_a_run_of_another_team(
    client: Client, other_team_user: tuple[User, Team], failed_compile: Stage
) -> None:
    client.force_login(other_team_user[0])
    response = client.get(reverse("notebook:new"), {"line": "x error y", "run": str(failed_compile.run_id)})
    assert response.status_code == 404


def test_invalid_signatures_are_refused_on_save(alice_client: Client) -> None:
    form = {"title": "t", "symptom": "s", "signatures": "regex: (unclosed", "tags": "", "links": ""}
    response = alice_client.post(reverse("notebook:new"), form)
    assert response.status_code == 200 and b"signature 1" in response.content
    assert not Entry.objects.exists()


def test_editing_keeps_history(alice_client: Client, seeded: None) -> None:
    entry = Entry.objects.get(slug="rccl-hang")
    edit = alice_client.get(reverse("notebook:edit", args=[entry.slug])).context["form"].initial
    edit = {**edit, "fix": "Set NCCL_TIMEOUT higher.", "note": "shorter fix", "stages": edit["stages"]}
    assert alice_client.post(reverse("notebook:edit", args=[entry.slug]), edit).status_code == 302
    revisions = EntryRevision.objects.filter(entry=entry)
    latest = revisions.first()
    assert revisions.count() == 2 and latest is not None and latest.note == "shorter fix"
    assert b"shorter fix" in alice_client.get(reverse("notebook:history", args=[entry.slug])).content


def test_this_fixed_it_counts_once_per_user(alice_client: Client, seeded: None) -> None:
    url = reverse("notebook:fixed", args=["rccl-hang"])
    alice_client.post(url)
    alice_client.post(url)
    assert Entry.objects.get(slug="rccl-hang").fixed_count == 1


def test_fix_markdown_is_rendered_and_sanitised(alice_client: Client, team_user: tuple[User, Team]) -> None:
    data = actions.EntryData(title="md", symptom="symptom text here", signatures=[("text", "markdown test line")],
                             fix="**bold** <script>alert(1)</script> [x](javascript:alert(1))")
    entry = actions.save_entry(data, user=team_user[0])
    body = alice_client.get(entry.get_absolute_url()).content.decode()
    assert "<strong>bold</strong>" in body and "<script>alert(1)" not in body and 'href="javascript' not in body


def test_export_and_import_round_trip(alice_client: Client, seeded: None, team_user: tuple[User, Team]) -> None:
    exported = alice_client.get(reverse("notebook:export")).json()
    assert len(exported["entries"]) == len(NOTEBOOK_SLUGS)
    exported["entries"][0]["symptom"] = "changed elsewhere"
    exported["entries"].append({**exported["entries"][1], "slug": "brand-new", "title": "Brand new"})
    counts = actions.import_notebook(exported, user=team_user[0])
    assert counts == {"created": 1, "updated": 1, "unchanged": len(NOTEBOOK_SLUGS) - 1}
    bad = {"format": "migrator-notebook/1", "entries": [{"title": "x", "symptom": "y", "signatures": [{"kind": "regex", "pattern": "("}]}]}
    with pytest.raises(actions.NotebookError):
        actions.import_notebook(bad, user=None)
    assert Entry.objects.count() == len(NOTEBOOK_SLUGS) + 1


def test_import_page_is_for_staff(alice_client: Client) -> None:
    upload = io.BytesIO(json.dumps({"format": "x"}).encode())
    assert alice_client.post(reverse("notebook:import"), {"file": upload}).status_code == 302  # to the admin login


def test_a_word_most_entries_hold_orders_by_what_helped_others(seeded: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from migrator.notebook import search

    monkeypatch.setattr(search, "BROAD_MIN_ENTRIES", 10)
    counts, total = search.document_frequencies()
    word = max(counts, key=counts.__getitem__)  # the lexeme most entries hold
    assert counts[word] > search.BROAD_SHARE * total and search._is_broad(word)
    hits = search_entries(word)
    favourite = hits[-1].entry
    Entry.objects.filter(pk=favourite.pk).update(matched_runs=50)
    assert search_entries(word)[0].entry == favourite
    assert not search._is_broad("sglang")  # a rare word is still ranked by relevance


def test_prefill_from_a_line_that_only_reports_the_failure_takes_the_line_that_states_it(
    alice_client: Client, failed_compile: Stage
) -> None:
    page = alice_client.get(reverse("notebook:new"),
                            {"line": "1 error generated.", "stage": "compile", "run": str(failed_compile.run_id)})
    assert f"text: {html.escape(signature_from_log_line(HIPCC_MISSING_HEADER))}" in page.content.decode()
