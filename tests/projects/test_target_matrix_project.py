"""The per-target matrix, report section and Markdown for a project's own build (its ``project_targets``),
from stage data: the same matrix as per-file runs, with the outputs' device code, and a wave-size failure
linking to the wavefront finding at its place."""
from __future__ import annotations

from typing import Any

from migrator.projects.target_matrix import target_matrix
from migrator.reports.markdown import _compiled_with
from migrator.reports.sections import compile_section

ARCHS = ["gfx90a", "gfx942", "gfx1100"]


def _target(arch: str, status: str, message: str = "", line: int = 0) -> dict[str, Any]:
    return {"arch": arch, "status": status, "message": message, "original_file": "src/vote.cu" if line else "",
            "original_line": line, "wave_size": "wavefront size" in message}


def _data() -> dict[str, Any]:
    wave = "vote kernels need a wavefront size of 64 (CDNA); RDNA targets run 32 lanes"
    units = [
        {"path": "src/scale.cu", "original_path": "src/scale.cu", "status": "passed",
         "targets": [_target(a, "passed") for a in ARCHS]},
        {"path": "src/vote.cu", "original_path": "src/vote.cu", "status": "failed",
         "targets": [_target("gfx90a", "passed"), _target("gfx942", "passed"), _target("gfx1100", "failed", wave, 8)]},
    ]
    outputs = [{"path": "scale_app", "owner": "scale_app", "targets": ["gfx1100", "gfx90a", "gfx942"], "missing": []},
               {"path": "lib/libold.so", "owner": "old", "targets": ["gfx90a"], "missing": ["gfx942", "gfx1100"]}]
    return {"mode": "project", "files": [], "offload_archs": ARCHS, "failed_targets": ["gfx942", "gfx1100"],
            "project_targets": {"commands_from": "compile_commands.json", "units": units, "units_total": 2,
                                "outputs": outputs, "failed_targets": ["gfx942", "gfx1100"]}}


def test_the_matrix_of_a_project_build_lists_failing_units_and_outputs_by_target() -> None:
    hipify = {"wavefront_hazards": [{"file": "src/other.cu", "line": 3, "kind": "lane-math"},
                                    {"file": "src/vote.cu", "line": 8, "kind": "wave64-assumption"}]}
    matrix = target_matrix(7, _data(), hipify)
    assert matrix is not None and matrix["project"] and matrix["commands_from"] == "compile_commands.json"
    assert matrix["archs"] == ARCHS and matrix["total"] == 2 and matrix["passed"] == [2, 2, 1]
    [row] = matrix["rows"]
    assert row["file"] == "src/vote.cu" and [c["status"] for c in row["cells"]] == ["passed", "passed", "failed"]
    wrong = row["cells"][2]
    assert wrong["wave_size"] and wrong["finding_url"] == "/runs/7/?stage=hipify#hipify-wavefront-hazards-2"
    assert wrong["finding_kind"] == "wave64-assumption"
    assert [(o["path"], [c["held"] for c in o["cells"]]) for o in matrix["outputs"]] == [
        ("scale_app", [True, True, True]), ("lib/libold.so", [True, False, False])]


def test_a_project_build_without_per_target_data_has_no_matrix() -> None:
    assert target_matrix(7, {"mode": "project", "files": [], "offload_archs": ARCHS}, {}) is None


def test_the_report_names_the_failing_targets_of_a_project_build_and_its_outputs() -> None:
    section = compile_section(_data())
    assert section is not None
    assert section["failed_targets"] == ["gfx942", "gfx1100"]
    assert section["failed_by_target"] == {"src/vote.cu": ["gfx1100"]}
    assert section["outputs_by_target"] == {"scale_app": ["gfx1100", "gfx90a", "gfx942"], "lib/libold.so": ["gfx90a"]}
    text = _compiled_with(section)
    assert "**Fails for:** `gfx942`, `gfx1100`" in text and "| `src/vote.cu` | `gfx1100` |" in text
    assert "| Output | gfx90a | gfx942 | gfx1100 |" in text
    assert "| `lib/libold.so` | yes | **missing** | **missing** |" in text
