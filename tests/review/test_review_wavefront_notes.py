"""Wave-size hazards and the inline PTX a translation left show in the diff margin, on the original line."""
from __future__ import annotations

import html as html_lib
from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from migrator.projects.models import Project
from tests.conftest import pipeline_run
from tests.review.conftest import row_with

pytestmark = pytest.mark.django_db

VOTE_CU = """#include <cuda_runtime.h>
__global__ void vote(const int* x, int* out) {
  unsigned m = __ballot_sync(0xffffffff, x[threadIdx.x] > 0);
  int lane = threadIdx.x % 32;
  asm volatile("prefetch.global.L2 [%0];" :: "l"(x + threadIdx.x));  // no HIP rewrite (membar.gl has one)
  if (lane == 0) out[blockIdx.x] = __popc(m);
}
"""


def test_wavefront_fixes_and_suggestions_are_noted_on_their_original_lines(
    alice_client: Client, only_stages: Callable[..., None], project: Project
) -> None:
    only_stages("fetch", "scan", "hipify")
    run = pipeline_run(project, {"src/vote.cu": VOTE_CU})
    assert run.stages.get(name="hipify").state == "passed"
    page = html_lib.unescape(alice_client.get(reverse("review:file", args=[run.pk, "src/vote.cu"])).content.decode())
    fixed = row_with(page, "o3")
    assert "note-wavefront sev-info" in fixed and "fixed [wavefront.widen-ballot]" in fixed
    assert "fixed [wavefront.full-mask-64]" in fixed and "0xffffffffffffffffull" in fixed
    suggestion = row_with(page, "o4")
    assert "note-wavefront sev-warning" in suggestion and "lane-id-32" in suggestion
    assert "Suggested: __lane_id()" in suggestion
    assert "note-hand-work" in row_with(page, "o5") and "inline-ptx" in row_with(page, "o5")
    assert "wavefront.popcll-ballot" in row_with(page, "o6")
    assert "note-wavefront" not in row_with(page, "o2")
