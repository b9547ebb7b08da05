"""Verdicts and causes on whole real runs: the real pipeline, hipcc and the linker in the sandbox
over the ROCm toolchain root."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User

from migrator.accounts.models import Team
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.causes import run_causes
from migrator.projects.constants import RunState
from migrator.projects.models import Run
from migrator.projects.verdict import NO_SMOKE_COMMAND, run_verdict
from tests.conftest import VADD_CU, make_tar_gz
from tests.outcomes.real_toolchain import require_root

pytestmark = pytest.mark.django_db

TENSOR_CU = "#include <cuda_runtime.h>\n#include <hiptensor/hiptensor.h>\nint contract() { return 0; }\n"
LEFT_CU = "#include <cuda_runtime.h>\nint blocks() { int b = 0; cudaDeviceGetAttribute(&b, cudaDevAttrMaxBlocksPerMultiprocessor, 0); return b; }\n"


def run_project(team: Team, name: str, files: dict[str, str]) -> Run:
    require_root()
    project = actions.create_project(team, name, user=None)
    actions.store_archive(project, io.BytesIO(make_tar_gz(files)), f"{name}.tar.gz", None)
    return run_sync(actions.create_run(project, user=None))


def test_a_run_that_compiles_and_links_but_has_no_smoke_command_is_partial(team_user: tuple[User, Team]) -> None:
    run = run_project(team_user[1], "vadd", {"src/vadd.cu": VADD_CU})
    states = {s.name: s.state for s in run.stages.all()}
    assert states["compile"] == states["link"] == "passed", [s.summary for s in run.stages.all()]
    assert run.state == RunState.PARTIAL
    assert [(u.stage, u.reason) for u in run_verdict(run).unchecked] == [("smoke", NO_SMOKE_COMMAND)]


def test_a_real_compile_failure_is_classified_by_cause(team_user: tuple[User, Team]) -> None:
    run = run_project(team_user[1], "mixed", {"src/vadd.cu": VADD_CU, "src/contract.cu": TENSOR_CU, "src/left.cu": LEFT_CU})
    compile_stage = run.stages.get(name="compile")
    assert compile_stage.state == "failed" and run.state == RunState.FAILED
    causes = run_causes(run)
    by_kind = {g.kind: g for g in causes.groups}
    assert set(by_kind) == {"environment", "translation"}
    assert by_kind["environment"].files == ["src/contract.cu"] and "hipTensor is not in toolchain" in by_kind["environment"].reason
    assert by_kind["translation"].names == ["cudaDevAttrMaxBlocksPerMultiprocessor"]
    assert causes.summary.startswith("1 file fails because hipTensor is not in toolchain")
    commands = {f["original_path"]: f["command"] for f in compile_stage.data["files"]}
    assert any("--offload-arch=gfx90a" in arg for arg in commands["src/contract.cu"])
