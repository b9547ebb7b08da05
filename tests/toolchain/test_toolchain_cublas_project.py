"""A CUDA program using cuBLAS, with a Makefile that says /usr/local/cuda and -lcublas, passes compile and
link with default settings: translated for the toolchain's HIP 6.4 (ROCm 6 header folders), compiled and
linked with hipBLAS in the sandbox over the default toolchain root."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from migrator.projects.models import Run
from worker.pipeline import workspace_for

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vecadd_cublas"


def test_a_cublas_program_passes_compile_and_link_with_default_settings(tmp_path: Path) -> None:
    project = tmp_path / "vecadd"
    shutil.copytree(FIXTURE, project)
    out = io.StringIO()
    try:
        call_command("migrate_repo", str(project), stdout=out)
    except SystemExit:
        pass  # a non-zero exit says the run was not fully validated (no smoke command here); the stages decide
    run = Run.objects.get()
    stages = {stage.name: stage for stage in run.stages.all()}
    assert [stages[n].state for n in ("fetch", "scan", "hipify", "compile", "link")] == ["passed"] * 5, out.getvalue()
    translated = (workspace_for(run.pk).hip / "src" / "vecadd.cu").read_text()
    assert "#include <hipblas/hipblas.h>" in translated and "hipblasSasum" in translated
    assert stages["compile"].data["toolchain"]["name"] == "rocm-6.4"
    [target] = stages["link"].data["targets"]
    assert "-lhipblas" in target["command"] and target["status"] == "passed"

