"""The notebook's precision on real failures, and what it learns from failures no entry explains."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.notebook import actions
from migrator.notebook.matching import match_stage
from migrator.notebook.models import Entry, StageMatch, UnmatchedFailure
from migrator.notebook.search import search_entries
from migrator.projects import actions as project_actions
from migrator.projects import transitions
from migrator.projects.constants import StageState
from migrator.projects.models import Stage
from tests.outcomes.real_toolchain import hipcc_output, run_in_root

pytestmark = pytest.mark.django_db
RT = "#include <hip/hip_runtime.h>\n"
# What rocm_agent_enumerator of an older ROCm printed while CMake probed for GPUs on a machine
# without /sys/class/kfd: harmless, the configure step went on.
ENUMERATOR_TRACEBACK = """Traceback (most recent call last):
  File "/opt/rocm/bin/rocm_agent_enumerator", line 268, in <module>
    main()
  File "/opt/rocm/bin/rocm_agent_enumerator", line 252, in main
    target_list = readFromKFD()
  File "/opt/rocm/bin/rocm_agent_enumerator", line 212, in readFromKFD
    for node in sorted(os.listdir(topology_dir)):
FileNotFoundError: [Errno 2] No such file or directory: '/sys/class/kfd/kfd/topology/nodes/'
"""


@pytest.fixture
def seeded() -> None:
    actions.load_seed()


def failed_stage(team: Team, name: str, log: str, stage_name: str = "compile") -> Stage:
    """A run of ``name`` whose ``stage_name`` failed with ``log``, matched as the pipeline does."""
    project = project_actions.create_project(team, name, user=None, git_url=f"https://example.com/{name}.git")
    run = project_actions.create_run(project, user=None)
    stage = run.stages.get(name=stage_name)
    transitions.claim_stage(stage.pk, "w")
    transitions.append_log(stage.pk, run.pk, log)
    finished = transitions.finish_stage(stage.pk, StageState.FAILED, "Project build failed")
    assert finished is not None
    stage = finished
    match_stage(stage)
    return stage


def test_a_probing_tools_traceback_never_outranks_the_real_cmake_error(
    seeded: None, team_user: tuple[User, Team], tmp_path: Path
) -> None:
    (tmp_path / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.21)\nproject(demo LANGUAGES CXX HIP)\nadd_executable(demo main.cu)\n")
    (tmp_path / "main.cu").write_text("int main() { return 0; }\n")
    _, cmake_output = run_in_root(tmp_path, ["cmake", "-S", ".", "-B", "/tmp/build"])
    head, _, tail = cmake_output.partition("-- Detecting HIP compiler ABI info\n")
    log = head + ENUMERATOR_TRACEBACK + "-- Detecting HIP compiler ABI info\n" + tail
    stage = failed_stage(team_user[1], "demo", log)
    slugs = list(StageMatch.objects.filter(stage=stage).values_list("entry__slug", flat=True))
    assert slugs[0] == "cmake-cannot-determine-link-language"
    assert "no-amd-gpu-visible" not in slugs


def test_a_pasted_line_does_not_match_on_path_words(seeded: None) -> None:
    hits = [h.entry.slug for h in search_entries("/home/dev/proj/extensions/muladd.cpp: 'Python.h' file not found")]
    assert hits[0] == "pytorch-extension-headers"
    assert "warp-size-32" not in hits and "no-binary-for-gpu" not in hits


def test_an_intrinsic_name_finds_the_entry_about_its_family(seeded: None) -> None:
    hits = [h.entry.slug for h in search_entries("__shfl_xor_sync")]
    assert "warp-size-32" in hits[:2]  # beside the entry on 64-bit masks, which names __shfl_xor_sync itself


def test_unmatched_failures_cluster_across_two_teams_and_an_entry_resolves_them(
    seeded: None, team_user: tuple[User, Team], other_team_user: tuple[User, Team], tmp_path: Path, client: Client,
) -> None:
    _, first = hipcc_output(tmp_path / "a", "src/ops/convert.hip", RT + "struct Foo {}; struct Bar {};\nBar make() { return Foo(); }\n")
    _, second = hipcc_output(tmp_path / "b", "kernels/pack.hip", RT + "struct Half {}; struct Wide {};\n\n\nWide pack() { return Half(); }\n")
    assert "no viable conversion from returned value of type 'Foo' to function return type 'Bar'" in first
    alice_stage = failed_stage(team_user[1], "alpha-port", first)
    failed_stage(other_team_user[1], "beta-port", second)
    failure = UnmatchedFailure.objects.get(normalised__contains="no viable conversion")
    assert failure.occurrences == 2 and failure.sightings.values("team").distinct().count() == 2
    assert failure.normalised == "error: no viable conversion from returned value of type '<id>' to function return type '<id>'"
    assert not UnmatchedFailure.objects.filter(normalised__contains="errors generated").exists()

    client.force_login(team_user[0])
    page = client.get(reverse("notebook:index")).content.decode()
    row = page[page.index(f'id="fp-{failure.fingerprint}"'):].split("</tr>")[0]
    assert '<td class="num">2</td><td class="num">2</td><td class="num">2</td>' in row
    assert "convert.hip" in row and "pack.hip" not in row  # alice sees her own line, never the other team's
    assert "write an entry" in row and "stage=compile" in row

    response = client.post(reverse("notebook:new"), {
        "title": "Returning one struct where another is expected", "symptom": "no viable conversion on return",
        "signatures": "text: no viable conversion from returned value of type", "stages": ["compile"],
        "cause": "Two types that were one typedef in the CUDA headers are distinct in HIP.", "fix": "Convert explicitly.",
    })
    assert response.status_code == 302
    entry = Entry.objects.get(title="Returning one struct where another is expected")
    assert entry.matched_runs == 2
    assert StageMatch.objects.filter(entry=entry).count() == 2
    failure.refresh_from_db()
    assert failure.resolved_by == entry
    run_page = client.get(reverse("projects:run", args=[alice_stage.run_id]) + "?stage=compile").content.decode()
    assert "Returning one struct where another is expected" in run_page
    assert f'id="fp-{failure.fingerprint}"' not in client.get(reverse("notebook:index")).content.decode()
