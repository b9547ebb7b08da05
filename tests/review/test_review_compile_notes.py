"""Compile diagnostics from a real hipcc run show in the margin of the translated line."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from migrator.projects.models import Project
from tests.conftest import pipeline_run
from tests.review.conftest import row_with

pytestmark = pytest.mark.django_db

BAD_CU = """#include <cuda_runtime.h>
__global__ void k(float* p) {
  p[threadIdx.x] = missing_value;
}
"""


def test_a_compile_error_is_noted_on_its_translated_line(
    alice_client: Client, only_stages: Callable[..., None], project: Project
) -> None:
    only_stages("fetch", "scan", "hipify", "compile")
    run = pipeline_run(project, {"src/bad.cu": BAD_CU})
    compile_stage = run.stages.get(name="compile")
    assert compile_stage.state == "failed", compile_stage.summary
    html = alice_client.get(reverse("review:file", args=[run.pk, "src/bad.cu"])).content.decode()
    note = row_with(html, "t3")
    assert "note-diagnostic sev-error" in note and "missing_value" in note and 'id="o3"' in note
    assert "note-diagnostic" not in row_with(html, "t2")
    listing = alice_client.get(reverse("review:files", args=[run.pk]), {"show": "errors"}).content.decode()
    assert 'data-path="src/bad.cu"' in listing and "1 error" in listing
