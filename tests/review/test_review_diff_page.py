"""One file's diff page: aligned and folded rows, margin notes, escaping, unified view, notices."""
from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from migrator.projects.models import Project, Run
from tests.conftest import pipeline_run
from tests.review.conftest import HOSTILE_NAME, line_rows, review_files, row_with

pytestmark = pytest.mark.django_db


def page(client: Client, run: Run, path: str, **params: str) -> str:
    response = client.get(reverse("review:file", args=[run.pk, path]), params)
    assert response.status_code == 200
    return response.content.decode()


def test_it_aligns_changed_lines_side_by_side_with_changed_words_marked(
    alice_client: Client, translated_run: Run
) -> None:
    html = page(alice_client, translated_run, "src/vadd.cu")
    malloc = row_with(html, "o12")
    assert 'class="line row-replace"' in malloc and 'id="t12"' in malloc
    assert "cuda" in malloc and "hip" in malloc and 'class="wd"' in malloc and 'class="wi"' in malloc
    assert '<span class="' in malloc  # Pygments token classes
    assert 'class="line row-equal"' in row_with(html, "o5") and 'id="t5"' in row_with(html, "o5")
    shifted = page(alice_client, translated_run, "src/long.cu")
    assert 'class="line row-insert"' in row_with(shifted, "t1")  # the added hip include has no original line
    assert 'id="t42"' in row_with(shifted, "o41")


def test_it_folds_unchanged_stretches_and_opens_them_on_demand(alice_client: Client, translated_run: Run) -> None:
    html = page(alice_client, translated_run, "src/long.cu")
    folds = re.findall(r'hx-get="([^"]*fold=\d+&amp;start=0)"', html)
    assert len(folds) == 2 and "Show 34 unchanged lines (4–37)" in html and "Show 37 unchanged lines" in html
    assert 'id="o20"' not in html and 'id="o41"' in html  # line 41 is the changed one, 20 is folded away
    fragment = alice_client.get(folds[0].replace("&amp;", "&"))
    body = fragment.content.decode()
    assert fragment.status_code == 200 and line_rows(body) == 34
    assert 'id="o20"' in body and 'id="t21"' in body and "<html" not in body
    assert 'class="line row-equal"' in row_with(body, "o20")


def test_the_whole_file_view_has_no_folds(alice_client: Client, translated_run: Run) -> None:
    html = page(alice_client, translated_run, "src/long.cu", full="1")
    assert "row-fold" not in html and 'id="o20"' in html and line_rows(html) == 82


def test_margin_notes_sit_on_their_lines(alice_client: Client, translated_run: Run) -> None:
    vadd = page(alice_client, translated_run, "src/vadd.cu")
    unconverted = row_with(vadd, "o6")
    assert "note-unconverted" in unconverted and "__shfl_sync not converted (unsupported)" in unconverted
    assert vadd.count("note-unconverted") == 1
    cmake = page(alice_client, translated_run, "CMakeLists.txt")
    fix = row_with(cmake, "t3")
    assert "note-fix" in fix and "cmake.find-package-cuda" in fix and "find_package(hip REQUIRED)" in fix
    assert "cmake.project-language-cuda" in row_with(cmake, "t2")


def test_hostile_names_and_contents_are_escaped(alice_client: Client, translated_run: Run) -> None:
    html = page(alice_client, translated_run, HOSTILE_NAME)
    assert "<script>alert" not in html and "</td></tr><script>" not in html
    assert "&lt;script&gt;alert(&quot;content&quot;)" in html or "&lt;script&gt;alert(&#x27;string&#x27;)" in html
    assert "&lt;script&gt;alert(&#x27;name&#x27;)&lt;script&gt;.cu" in html
    files = alice_client.get(reverse("review:files", args=[translated_run.pk])).content.decode()
    assert "<script>alert" not in files and "/files/src/%3Cscript%3Ealert" in files


def test_the_unified_view_lists_deletions_before_insertions(alice_client: Client, translated_run: Run) -> None:
    split = page(alice_client, translated_run, "src/vadd.cu")
    assert 'id="toggle-unified"' in split and "?view=unified" in split
    html = page(alice_client, translated_run, "src/vadd.cu", view="unified")
    assert 'class="diff diff-code diff-unified"' in html and 'id="toggle-split"' in html
    deleted, inserted = row_with(html, "o12"), row_with(html, "t12")
    assert 'class="line row-delete"' in deleted and 'class="line row-insert"' in inserted
    assert html.index('id="o12"') < html.index('id="o14"') < html.index('id="t12"') < html.index('id="t14"')
    assert "__shfl_sync not converted" in row_with(html, "o6")


def test_binary_and_non_utf8_files_get_a_notice(alice_client: Client, translated_run: Run) -> None:
    binary = page(alice_client, translated_run, "assets/blob.bin")
    assert 'class="notice notice-binary"' in binary and "binary" in binary and 'id="diff"' not in binary
    latin = page(alice_client, translated_run, "src/latin.cu")
    assert 'class="notice notice-encoding"' in latin and "not valid UTF-8" in latin


def test_unknown_and_escaping_paths_are_404(alice_client: Client, translated_run: Run) -> None:
    for path in ("src/missing.cu", "../artifacts/translation.json", "src/../../hip/README.md", "src/"):
        assert alice_client.get(f"/runs/{translated_run.pk}/files/{path}").status_code == 404


def test_renamed_files_are_found_by_their_original_path(
    alice_client: Client, only_stages: Callable[..., None], project: Project
) -> None:
    only_stages("fetch", "scan", "hipify")
    project.settings = {"rename_cu_to_hip": True}
    project.save()
    run = pipeline_run(project, review_files())
    html = page(alice_client, run, "src/vadd.cu")
    assert "<code>src/vadd.cu</code> → <code>src/vadd.hip</code>" in html and 'id="t12"' in html
    assert "__shfl_sync not converted" in row_with(html, "o6")
    files = alice_client.get(reverse("review:files", args=[run.pk])).content.decode()
    assert reverse("review:file", args=[run.pk, "src/vadd.cu"]) in files and "→ src/vadd.hip" in files


def test_a_file_named_like_an_endpoint_still_opens(alice_client: Client, translated_run: Run) -> None:
    html = page(alice_client, translated_run, "tools/chunk")
    assert "<code>tools/chunk</code>" in html and "named like the chunk endpoint" in html


def test_notes_follow_a_later_compile_without_stale_cache(alice_client: Client, translated_run: Run) -> None:
    assert "note-diagnostic" not in page(alice_client, translated_run, "src/vadd.cu")
    diagnostic = {"file": "src/vadd.cu", "line": 6, "column": 21, "severity": "error", "original_file": "src/vadd.cu",
                  "original_line": 6, "message": "use of undeclared identifier '__shfl_sync'"}
    translated_run.stages.filter(name="compile").update(
        state="failed", finished_at=timezone.now(), data={"diagnostics": [diagnostic], "summary": {}}
    )
    note = row_with(page(alice_client, translated_run, "src/vadd.cu"), "t6")
    assert "note-diagnostic sev-error" in note and "error: col 21: use of undeclared identifier" in note
    assert "__shfl_sync not converted" in note  # the left side's note on the same row
