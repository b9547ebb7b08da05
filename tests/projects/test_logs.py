"""Stage logs: appended in chunks, read back from any byte offset (migrator.projects.logs)."""
from __future__ import annotations

import pytest

from migrator.projects import actions, transitions
from migrator.projects.logs import read_log_from
from migrator.projects.models import Project

pytestmark = pytest.mark.django_db


def test_logs_stream_in_chunks_with_byte_offsets(archive_project: Project) -> None:
    run = actions.create_run(archive_project, user=None)
    fetch = run.stages.get(name="fetch")
    transitions.claim_stage(fetch.pk, "w")
    transitions.append_log(fetch.pk, run.pk, "héllo\n")
    transitions.append_log(fetch.pk, run.pk, "x" * 200_000)
    fetch.refresh_from_db()
    assert fetch.log_size == len("héllo\n".encode()) + 200_000
    assert fetch.log_chunks.count() >= 4
    text, end = read_log_from(fetch, 0, limit=10**9)
    assert text.startswith("héllo\n") and end == fetch.log_size
    tail, end2 = read_log_from(fetch, fetch.log_size - 5)
    assert tail == "xxxxx" and end2 == fetch.log_size

