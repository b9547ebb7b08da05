"""A project's own build (make, kept going past the first failure) with many failing files: the compile
page lists one group per cause, each with its files and where each file's first error is."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from tests.conftest import VADD_CU
from tests.outcomes.real_toolchain import require_root
from tests.stage_panels.panel_project import panel_of, run_project, stage_page

pytestmark = pytest.mark.django_db

MAKEFILE = """NVCC ?= nvcc
OBJS = vadd.o contract.o contract_batched.o occupancy.o loader.o parser.o

app: $(OBJS)
\t$(NVCC) -o $@ $(OBJS)

%.o: %.cu
\t$(NVCC) -c $< -o $@
"""
TENSOR = "#include <cuda_runtime.h>\n#include <hiptensor/hiptensor.h>\nint contract{n}() {{ return 0; }}\n"
OCCUPANCY = ("#include <cuda_runtime.h>\nint blocks() {\n  int b = 0;\n"
             "  cudaDeviceGetAttribute(&b, cudaDevAttrMaxBlocksPerMultiprocessor, 0);\n  return b;\n}\n")
LOADER = "#include <cstdio>\n\nint load_{name}(const char* path) {{\n  FILE* f = std::fopen(path, \"r\");\n  return read_{name}(f);\n}}\n"
FILES = {"Makefile": MAKEFILE, "vadd.cu": VADD_CU, "contract.cu": TENSOR.format(n=""),
         "contract_batched.cu": TENSOR.format(n="_batched"), "occupancy.cu": OCCUPANCY,
         "loader.cu": LOADER.format(name="header"), "parser.cu": LOADER.format(name="table")}


def test_each_cause_is_one_group_listing_its_files_and_their_first_errors(
    alice_client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None]
) -> None:
    require_root()
    only_stages("fetch", "hipify", "compile")
    run = run_project(team_user, FILES, {"build_mode": "project"})
    compile_stage = run.stages.get(name="compile")
    assert compile_stage.state == "failed" and compile_stage.data["mode"] == "project", compile_stage.summary
    panel = panel_of(stage_page(alice_client, run, "compile"))
    section = panel[panel.index('id="compile-causes"'):panel.index("</section>", panel.index('id="compile-causes"'))]
    groups = section.split('<details class="cause-group')[1:]
    assert [g.split('"', 1)[0].strip() for g in groups] == ["cause-environment", "cause-translation", "cause-project_code"], section
    environment, translation, project = groups
    assert "2 files · hipTensor is not in toolchain" in environment
    assert "<code>contract.cu</code>" in environment and "<code>contract_batched.cu</code>" in environment
    assert "1 file · CUDA names left untranslated" in translation and "<code>occupancy.cu</code>" in translation
    assert "2 files · C++ errors in the project&#x27;s code" in project
    for name, line in (("loader.cu", 5), ("parser.cu", 5)):  # each file's own first error, linked into the diff
        row = project[project.index(f"<code>{name}</code>"):]
        row = row[:row.index("</li>")]
        assert f'href="/runs/{run.pk}/files/{name}#o{line}">line {line}</a>' in row
        assert "read_" in row
