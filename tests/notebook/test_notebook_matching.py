"""What the notebook matches a stage on: the structured problems where the stages keep them (worker/payloads.py)."""
from __future__ import annotations

from migrator.notebook.matching import diagnostic_lines, worth_matching
from migrator.projects.constants import StageState
from migrator.projects.models import Stage
from translator.account import FileAccount, TreeAccount
from worker.payloads import CompileData, HipifyData, ProjectBuildData
from worker.toolchain.diagnostics import parse_linker_output

LD_OUTPUT = ("/usr/bin/ld: cannot find -lcublas: No such file or directory\n"
             "/usr/bin/ld: main.o: in function `main':\nmain.cpp:(.text+0x1a): undefined reference to `cublasCreate_v2'\n")


def project_build_compile_data() -> CompileData:
    """As worker/stages/compile.py's ``_project_build`` stores a project build whose link step failed."""
    build = ProjectBuildData(system="make", steps=[], ok=False, error="build step failed (exit status 2)",
                             violations=[], sandbox="bwrap", duration_s=1.0, run_dir="hip",
                             link_problems=[p.to_dict() for p in parse_linker_output(LD_OUTPUT)])
    return CompileData(toolchain={}, mode="project", files=[], diagnostics=[], summary={},
                       cache={"hits": 0, "misses": 0}, project_build=build, mode_reason="make")


def test_a_project_build_s_link_problems_are_matched_on_the_compile_stage() -> None:
    lines = diagnostic_lines(dict(project_build_compile_data()), errors_only=True)
    assert lines == ["/usr/bin/ld: cannot find -lcublas: No such file or directory",
                     "main.cpp:(.text+0x1a): undefined reference to `cublasCreate_v2'"]


def test_a_passed_translation_with_unconverted_names_is_worth_matching() -> None:
    entry = FileAccount(path="a.cu", unconverted=[{"name": "cudaThing", "line": 1, "column": 0, "reason": "unsupported"}])
    account = TreeAccount(source="source", destination="hip", files=[entry])
    data = HipifyData(**account.to_dict(), account_artifact="translation.json", notebook_slugs=["hipify-unconverted"],
                      build_fixes=[], generated_files=[], wavefront_hazards=[])
    assert worth_matching(Stage(name="hipify", state=StageState.PASSED, data=dict(data)))
    clean = TreeAccount(source="source", destination="hip").to_dict()  # the account alone, as HipifyData's base
    assert not worth_matching(Stage(name="hipify", state=StageState.PASSED, data=dict(clean)))
