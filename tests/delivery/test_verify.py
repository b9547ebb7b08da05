"""The CUDA side of a delivered tree: built with nvcc in the sandbox exactly as the team builds it;
a tree that breaks it is reported failed from make's exit status."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from worker.context import Workspace
from worker.delivery.singlesource import single_source
from worker.delivery.verify import verify_cuda
from worker.project_settings import ProjectSettings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "delivery" / "make_histogram"
pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc on this machine (CI has it)")


def _delivered(tmp_path: Path, edit: tuple[str, str] | None = None) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURE, tree)
    for change in single_source(tree, None).files:
        (tree / change.path).parent.mkdir(parents=True, exist_ok=True)
        (tree / change.path).write_bytes(change.data or b"")
    if edit is not None:
        makefile = tree / "Makefile"
        makefile.write_text(makefile.read_text().replace(*edit))
    return tree


def test_the_cuda_build_of_a_delivered_makefile_is_the_original_one(tmp_path: Path) -> None:
    result = verify_cuda(_delivered(tmp_path), "make", Workspace(tmp_path / "run"), ProjectSettings(), lambda _: None)
    assert result.status == "passed", result.output_tail
    assert "nvcc -O2 -std=c++17 -arch=sm_80 -c histogram.cu -o histogram.o" in result.output_tail
    assert "hipcc" not in result.output_tail and "hipify" not in result.output_tail


def test_a_tree_that_breaks_the_cuda_build_fails_verification(tmp_path: Path) -> None:
    tree = _delivered(tmp_path, ("ARCH ?= -arch=sm_80", "ARCH ?= -arch=sm_1"))  # a hand edit nvcc refuses
    result = verify_cuda(tree, "make", Workspace(tmp_path / "run"), ProjectSettings(), lambda _: None)
    assert result.status == "failed" and result.reason.startswith("make exited with status")
