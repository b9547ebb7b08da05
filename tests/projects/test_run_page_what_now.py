"""The run page answers "what now?": why a queued stage waits and where, live timers, one next step per
cause, failing lines without the warnings, "not run" for a stage no runner took, and the missing-library
box only where a failure needs the library."""
from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from migrator.accounts.models import Team
from migrator.projects import actions, transitions
from migrator.projects.constants import StageState
from migrator.projects.errorlines import failing_lines, is_warning
from migrator.projects.models import Project, Run, Stage
from migrator.projects.nextsteps import Place, cause_step
from migrator.projects.stage_panels import compile_context
from migrator.projects.templatetags.stage_extras import clock, since_s, state_label
from migrator.projects.waiting import stage_waiting
from migrator.runners import presence
from tests.conftest import make_tar_gz
from worker.toolchain.causes import CauseGroup

pytestmark = pytest.mark.django_db


def _queued(run: Run, name: str, task: str, minutes_ago: float = 0) -> Stage:
    stage = run.stages.get(name=name)
    transitions.mark_enqueued(stage, task, "cpu")
    Stage.objects.filter(pk=stage.pk).update(queued_at=timezone.now() - timedelta(minutes=minutes_ago))
    return Stage.objects.get(pk=stage.pk)


def test_a_queued_stage_knows_its_place_and_names_only_its_own_teams_work(
    archive_project: Project, team_user: tuple[User, Team], other_team_user: tuple[User, Team]
) -> None:
    other = actions.create_project(other_team_user[1], "theirs", user=None)
    actions.store_archive(other, io.BytesIO(make_tar_gz({"a.cu": "int x;\n"})), "a.tgz", None)
    theirs = actions.create_run(other, user=None)
    _queued(theirs, "fetch", "t-theirs", minutes_ago=5)
    mine_first = actions.create_run(archive_project, user=None)
    _queued(mine_first, "fetch", "t-mine", minutes_ago=2)
    waiting_run = actions.create_run(archive_project, user=None)
    stage = _queued(waiting_run, "fetch", "t-waiting")
    later = actions.create_run(archive_project, user=None)
    _queued(later, "fetch", "t-later")  # queued after it: not ahead
    presence.register("cpu-1@h", "cpu", ["cpu", "hooks"], {})

    waiting = stage_waiting(stage, [team_user[1].pk])
    assert waiting is not None and waiting.reason == "waiting for a CPU worker"
    assert (waiting.position, waiting.queued, waiting.runners_online, waiting.others_ahead) == (3, 4, 1, 1)
    assert [a.run for a in waiting.listed] == [mine_first]  # another team's run is counted, never named
    assert stage_waiting(later.stages.get(name="scan"), [team_user[1].pk]).reason == "waiting for fetch to finish"  # type: ignore[union-attr]


def test_the_status_partial_is_rendered_on_every_poll_while_the_run_waits_in_a_queue(
    alice_client: Client, run: Run
) -> None:
    status = reverse("projects:run-status", args=[run.pk])
    run.refresh_from_db()
    assert alice_client.get(status, {"v": run.version}, HTTP_HX_REQUEST="true").status_code == 204
    _queued(run, "fetch", "t-1")
    run.refresh_from_db()
    body = alice_client.get(status, {"v": run.version}, HTTP_HX_REQUEST="true").content.decode()  # its place may move
    assert 'class="queue-position">number 1 of 1</span> in queue <code>cpu</code>' in body
    assert "No worker online takes this queue." in body


def test_running_and_queued_times_count_on_in_the_browser(alice_client: Client, run: Run) -> None:
    fetch = run.stages.get(name="fetch")
    transitions.claim_stage(fetch.pk, "w")
    Stage.objects.filter(pk=fetch.pk).update(started_at=timezone.now() - timedelta(seconds=125))
    page = alice_client.get(reverse("projects:run", args=[run.pk])).content.decode()
    assert '<span class="elapsed" id="stage-elapsed" data-elapsed-s="12' in page and ">2 min 0" in page
    assert '<script src="/static/js/elapsed.js" defer></script>' in page
    assert clock(59) == "59 s" and clock(125) == "2 min 05 s" and clock(3 * 3600 + 120) == "3 h 02 min"
    assert since_s(timezone.now() - timedelta(seconds=30)) in (30, 31) and since_s("x") is None


def _group(kind: str, key: str, reason: str, names: list[str] | None = None) -> CauseGroup:
    return CauseGroup(kind, key, reason, files=["src/a.cu", "src/b.cu"], example="the first error", names=names or [])  # type: ignore[arg-type]


def test_each_cause_gets_its_own_next_step_and_an_unknown_key_its_kinds() -> None:
    place = Place("src/a.cu", 12, "/runs/1/files/src/a.cu#o12")
    data = {"toolchain": {"name": "rocm-6.4", "libraries": [{"name": "hipBLAS", "package": "libhipblas-dev"}]}}
    steps = {
        "missing-library:hipBLAS": cause_step(_group("environment", "missing-library:hipBLAS", "hipBLAS is not in toolchain rocm-6.4"), place, data),
        "flag:-Xcompiler": cause_step(_group("build_configuration", "flag:-Xcompiler", "flag -Xcompiler ..."), place, data),
        "cuda-names": cause_step(_group("translation", "cuda-names", "CUDA names left", ["cudaFoo"]), place, data),
        "a-key-from-later": cause_step(_group("translation", "dropped-sources:app", "sources dropped by the conversion"), place, data),
    }
    assert steps["missing-library:hipBLAS"] == ("Install hipBLAS (Debian package libhipblas-dev) in toolchain rocm-6.4, or choose "
                                                "a toolchain that has it (setting toolchain); needed by src/a.cu:12 (and 1 more file)")
    assert steps["flag:-Xcompiler"].startswith("src/a.cu:12 (and 1 more file): remove -Xcompiler from the build file")
    assert "translate the CUDA names left (cudaFoo)" in steps["cuda-names"]
    assert steps["a-key-from-later"] == ("src/a.cu:12 (and 1 more file): sources dropped by the conversion: "
                                         "fix the translated code (or the mapping) at that line")


def test_failing_lines_are_errors_and_the_warnings_are_only_counted(alice_client: Client, run: Run) -> None:
    compile_stage = run.stages.get(name="compile")
    transitions.claim_stage(compile_stage.pk, "w")
    transitions.append_log(compile_stage.pk, run.pk, (
        "src/a.hip:3:3: warning: ignoring return value of type 'hipError_t' [-Wunused-value]\n" * 3
        + "src/a.hip:9:1: warning: 'error' is deprecated [-Wdeprecated]\n"
        + "src/b.hip:4:2: error: use of undeclared identifier 'cudaFoo'\n"
        + "CMake Warning at CMakeLists.txt:3 (message):\n"
    ))
    transitions.finish_stage(compile_stage.pk, StageState.FAILED, "Compile failed")
    found = failing_lines(Stage.objects.get(pk=compile_stage.pk))
    assert found.errors == ["src/b.hip:4:2: error: use of undeclared identifier 'cudaFoo'"]
    assert found.warning_count == 5 and len(found.warnings) == 3
    assert is_warning("ld.lld: warning: x") and not is_warning("a.cu:1:1: error: x (warning: y)")
    page = alice_client.get(reverse("projects:run", args=[run.pk]), {"stage": "compile"}).content.decode()
    assert "Failing log lines (1 error)" in page and "5 warning lines in the log (not the failure)" in page
    assert '<details class="warning-lines" id="warning-lines">' in page  # folded


def test_a_stage_no_runner_took_reads_not_run_never_skipped(run: Run) -> None:
    smoke = run.stages.get(name="smoke")
    transitions.mark_enqueued(smoke, "t", "rocm.gfx90a")
    smoke = Stage.objects.get(pk=smoke.pk)
    transitions.skip_waiting_stage(smoke, "not run: no ROCm runner within 30 min", {"no_runner": True, "wait_limit_s": 1800})
    assert state_label(Stage.objects.get(pk=smoke.pk)) == "Not run"
    link = run.stages.get(name="link")
    transitions.skip_stage(link.pk, "nothing to link")
    assert state_label(Stage.objects.get(pk=link.pk)) == "Skipped"


def test_the_missing_library_box_shows_only_where_a_failure_needs_the_library(run: Run) -> None:
    toolchain = {"name": "rocm-6.4", "libraries": [
        {"name": "RCCL", "header": "rccl/rccl.h", "installed": False, "package": "librccl-dev"},
        {"name": "hipBLAS", "header": "hipblas/hipblas.h", "installed": False, "package": "libhipblas-dev"}]}
    passing = {"files": [{"path": "a.hip", "status": "passed"}], "diagnostics": [], "toolchain": toolchain}
    assert compile_context(run, passing)["missing_libraries"] == []
    failing = {"files": [{"path": "n.hip", "original_path": "n.cu", "status": "failed"}], "toolchain": toolchain,
               "diagnostics": [{"tu": "n.hip", "severity": "fatal", "message": "'rccl/rccl.h' file not found"}]}
    missing = compile_context(run, failing)["missing_libraries"]
    assert isinstance(missing, list) and [lib["name"] for lib in missing] == ["RCCL"]


def test_the_reference_log_is_served_only_for_a_run_with_a_reference(alice_client: Client, run: Run) -> None:
    url = reverse("projects:reference-log-raw", args=[run.pk])
    assert alice_client.get(url).status_code == 404
    transitions.create_reference(run.pk)
    response = alice_client.get(url)
    assert response.status_code == 200 and response.content == b"(no log yet)\n"
    assert response["X-Content-Type-Options"] == "nosniff"
