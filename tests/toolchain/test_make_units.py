"""The compile stage on a translated tree of several Makefile folders, each its own unit with its own result:
make reads each Makefile first (one it cannot read is not built), builds with ``-k`` (every failing file in one
run), passes a unit only if it built something, and compiles C without ``-std`` as gnu17. One stage run for
the module; the Makefiles build C only, so no GPU code is compiled."""
from __future__ import annotations

from typing import Any

import pytest

from worker.context import StageContext, StageResult, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.toolchain.causes import compile_causes
from worker.toolchain.make_db import parse_dry_run

KERNEL = "#include <hip/hip_runtime.h>\n__global__ void k() {}\n"  # marks the folder as one with CUDA code
TREE = {
    "builds/Makefile": "CFLAGS = -O2\nprog: prog.o\n\t$(CC) -o $@ $^\n",
    "builds/prog.c": "int main(void) { return 0; }\n",
    "echoes/Makefile": "all:\n\t@echo nothing to do\n",
    "phony/Makefile": ".PHONY: all\nall:\n\t@echo nothing to do\n",
    "pretends/Makefile": "CC = gcc\nrelease: app.c\n\t$(CC) -fsyntax-only app.c\n",
    "delegates/Makefile": "all: app\napp:\n\tcd src; make\n",  # a sub-make that make -n does not follow
    "delegates/src/Makefile": "app: app.c\n\t$(CC) -o app app.c\n",
    "delegates/src/app.c": "int main(void) { return 0; }\n",
    "pretends/app.c": "int main(void) { return 0; }\n",
    "broken/Makefile": "objects: first.o second.o\n\ttrue\n",
    "broken/first.c": "int first(void) { return missing_one; }\n",
    "broken/second.c": "int second(void) { return missing_two; }\n",
    "unreadable/Makefile": "prog: prog.c\n    cc -o prog prog.c\n",
    "wronggpu/Makefile": "k.o: kernel.cu\n\thipcc --offload-arch=gfx906 -x hip -c kernel.cu -o k.o\n",
    "oldc/Makefile": "old: old.c\n\tcc -O2 -o old old.c\n",
    "oldc/old.c": "#include <stdio.h>\nint twice(x)\nint x;\n{ return 2 * x; }\n"
                  "main() { printf(\"%d\\n\", twice(21)); return triple(1); }\nint triple(int x) { return 3 * x; }\n",
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[StageResult, dict[str, dict[str, Any]], str]:
    root = tmp_path_factory.mktemp("units")
    workspace = Workspace(root)
    for name, text in {**TREE, **{f"{folder}/kernel.cu": KERNEL for folder in
                                  ("builds", "delegates", "echoes", "phony", "pretends", "broken", "unreadable", "oldc",
                                   "wronggpu")}}.items():
        (workspace.hip / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace.hip / name).write_text(text)
    logs: list[str] = []
    ctx = StageContext(1, 1, workspace, ProjectSettings(), root / "cache", {"kind": "archive"}, log=logs.append)
    result = compile_stage.run(ctx)
    units = {u["folder"]: u for u in result.data["project_build"]["units"]}
    return result, units, "".join(logs)


def test_each_folder_is_a_unit_with_its_own_result(compiled: tuple[StageResult, dict[str, dict[str, Any]], str]) -> None:
    result, units, log = compiled
    assert sorted(units) == ["broken", "builds", "delegates", "echoes", "oldc", "phony", "pretends", "unreadable",
                            "wronggpu"]
    assert units["builds"]["ok"] and units["builds"]["built"] == ["builds/prog", "builds/prog.o"]
    assert result.outcome == "failed" and result.summary.startswith("Project build failed: 6 of 9 build folders failed")
    assert "$ make -pn -j1 -C /workspace/hip/builds" in log and "$ make -k -j" in log


def test_a_build_that_made_nothing_is_nothing_built(compiled: tuple[StageResult, dict[str, dict[str, Any]], str]) -> None:
    _, units, _ = compiled
    assert units["echoes"]["returncode"] == 0 and not units["echoes"]["ok"]
    assert units["echoes"]["error"] == ("nothing built in echoes: make exited 0 but none of the 1 file(s) its data base "
                                        "names (echoes/all) exists and the build wrote no file")
    assert units["phony"]["error"] == ("nothing built in phony: make's data base names no file for its default goal "
                                       "'all' and the build wrote none")
    assert units["delegates"]["ok"] and units["delegates"]["expected"] == []  # `cd src; make`: no data base for it
    assert units["delegates"]["built"] == ["delegates/src/app"]  # what the build wrote
    assert units["pretends"]["returncode"] == 0 and units["pretends"]["missing"] == ["pretends/release"]
    assert units["pretends"]["error"].startswith("nothing built in pretends: make exited 0 but none of the 1 file(s)")


def test_make_keeps_going_and_every_failing_file_is_reported(
    compiled: tuple[StageResult, dict[str, dict[str, Any]], str]
) -> None:
    result, units, _ = compiled
    assert units["broken"]["returncode"] == 2 and units["broken"]["error"] == "make failed in broken (exit status 2)"
    failing = {d["file"] for d in result.data["diagnostics"] if d["severity"] == "error"}
    assert {"broken/first.c", "broken/second.c"} <= {f.removeprefix("/workspace/hip/") for f in failing} | {
        "broken/" + f for f in failing}


def test_a_makefile_make_cannot_read_is_not_built(compiled: tuple[StageResult, dict[str, dict[str, Any]], str]) -> None:
    _, units, log = compiled
    assert units["unreadable"]["returncode"] == 2 and units["unreadable"]["built"] == []
    assert units["unreadable"]["error"] == "make could not read the Makefile in unreadable (make -pn exit status 2); not built"
    assert not [line for line in log.splitlines() if line.startswith("$ make -k") and line.endswith("/unreadable")]
    assert "$ make -pn -j1 -C /workspace/hip/unreadable" in log


def test_code_for_another_gpu_than_the_runs_fails_the_unit(
    compiled: tuple[StageResult, dict[str, dict[str, Any]], str]
) -> None:
    _, units, _ = compiled
    assert units["wronggpu"]["device_targets"] == {"wronggpu/k.o": ["gfx906"]}
    targets = ", ".join(ProjectSettings().offload_archs)  # the run's (default) targets
    assert units["wronggpu"]["error"] == ("built for the wrong GPU in wronggpu: wronggpu/k.o holds code for gfx906, "
                                          f"not for {targets}")
    assert units["builds"]["device_targets"] == {}  # host-only C: nothing to check


def test_old_c_without_a_standard_builds_as_gnu17(compiled: tuple[StageResult, dict[str, dict[str, Any]], str]) -> None:
    result, units, _ = compiled
    assert units["oldc"]["ok"] and units["oldc"]["built"] == ["oldc/old"]
    assert result.data["project_build"]["c_std"] == "gnu17"


def test_the_dry_run_names_where_sub_makes_run_and_what_they_write() -> None:
    output = "\n".join([
        "make -C app", "# make[1]: Entering directory '/workspace/hip/app'", "nvcc -o heat main.cu",
        "# make[1]: Leaving directory '/workspace/hip/app'", "# Make data base, printed on Wed Dec  2 04:19:29 2026",
        "# Variables", "# makefile (from 'Makefile', line 2)", "ARCH = sm_60", "# makefile", "CURDIR := /workspace/hip",
        "# default", ".DEFAULT_GOAL := all", "# Files", "", "all:", "#  recipe to execute (from 'Makefile', line 4):",
        "\t$(MAKE) -C app", "", "# Finished Make data base on Wed Dec  2 04:19:29 2026"])
    dry = parse_dry_run(output, "/workspace/hip")
    assert [(c.folder, c.command) for c in dry.commands] == [
        ("/workspace/hip", "make -C app"), ("/workspace/hip/app", "nvcc -o heat main.cu")]
    [database] = dry.databases
    assert database.variables["ARCH"].line == 2 and database.default_goal == "all"
    assert dry.expected_files() == ["/workspace/hip/app/heat"]  # all: only recurses; the sub-make writes heat


def test_units_that_failed_without_a_compiler_error_are_build_configuration_causes(
    compiled: tuple[StageResult, dict[str, dict[str, Any]], str]
) -> None:
    result, units, _ = compiled
    assert [units[f]["cause"] for f in ("builds", "broken", "echoes", "unreadable", "wronggpu")] == [
        "", "make-failed", "nothing-built", "make-unreadable", "wrong-gpu"]
    by_key = {cause.key: cause for cause in compile_causes(result.data) if cause.kind == "build_configuration"}
    assert by_key["make:nothing-built"].reason == "the build exited 0 but made nothing"
    assert by_key["make:wrong-gpu"].file == "wronggpu/Makefile"
    assert by_key["make:make-unreadable"].message == units["unreadable"]["error"]
