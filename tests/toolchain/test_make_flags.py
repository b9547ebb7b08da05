"""Per-file compilation takes a Makefile's flags from make's own dry run (``make -pn`` in the sandbox), so
definitions that come through variables and make's functions reach each file's compile command."""
from __future__ import annotations

from pathlib import Path

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.toolchain.sources import build_units

MAKEFILE = """\
N = 8192
BLOCKS = $(N)
PRECISION ?= double
DEFS := -DNUM_BLOCKS=$(BLOCKS) $(if $(filter double,$(PRECISION)),-DPRECISION=double,-DPRECISION=float)
LOCAL_FLAGS = $(DEFS) -std=c++$(STD) -I$(INC)
INC = include
STD = 14

reduce: reduce.hip
\thipcc $(LOCAL_FLAGS) -o $@ $<
"""
SOURCE = """\
#include <hip/hip_runtime.h>
#include "sizes.h"
#if NUM_BLOCKS != 8192
#error "NUM_BLOCKS comes from the Makefile"
#endif
__global__ void reduce(PRECISION *out) { out[blockIdx.x] = (PRECISION)NUM_BLOCKS * STRIDE; }
int main() { return __cplusplus == 201402L ? 0 : 1; }
"""


def _tree(root: Path) -> None:
    for rel, text in {"Makefile": MAKEFILE, "reduce.hip": SOURCE, "include/sizes.h": "#define STRIDE 4\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_definitions_through_variables_reach_the_per_file_compile_command(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "run")
    _tree(workspace.source)
    _tree(workspace.hip)
    [static] = build_units(workspace.hip)
    assert "PRECISION=double" not in static.defines  # the static reader expands no $(if ...)
    log: list[str] = []
    settings = ProjectSettings(build_mode="per_tu", offload_archs=("gfx90a",))
    result = compile_stage.run(StageContext(1, 1, workspace, settings, tmp_path / "cache", {"kind": "archive"},
                                            log=log.append))
    assert result.outcome == "passed", "".join(log)[-3000:]
    [compiled] = result.data["files"]
    assert compiled["path"] == "reduce.hip"
    command = compiled["command"]
    assert {"-DNUM_BLOCKS=8192", "-DPRECISION=double", "-Iinclude", "-std=c++14"} <= set(command)
    assert command.index("-std=c++14") > command.index("-std=c++17")  # the Makefile's standard wins
    assert "per-file flags: flags of 1 Makefile folder(s) from make's dry run (make -pn): ." in "".join(log)
