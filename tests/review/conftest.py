"""Runs of a small CUDA project through the real pipeline (fetch, scan, hipify; compile where asked)."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from migrator.accounts.models import Team
from migrator.projects import actions
from migrator.projects.models import Project, Run
from tests.conftest import CUDA_CMAKE, SHFL_CU, pipeline_run

HOSTILE_NAME = "src/<script>alert('name')<script>.cu"
NEWLINE_NAME = "docs/line\nbreak.txt"
HOSTILE_CU = """// </td></tr><script>alert("content")</script>
#include <cuda_runtime.h>
const char* banner = "<script>alert('string')</script>";
__global__ void k(int* p) { p[threadIdx.x] = 1; }
void go(int* p) { cudaMalloc(&p, 4); k<<<1, 1>>>(p); cudaFree(p); }
"""
BINARY = bytes(range(256)) * 4
LONG_CU = "".join(f"int plain_{n} = {n};\n" for n in range(40)) + "void f(void** p) { cudaMalloc(p, 4); }\n" + "".join(
    f"int tail_{n} = {n};\n" for n in range(40)
)
LATIN1_CU = b"// caf\xe9 au lait\n#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n"


def big_cu(lines: int) -> str:
    """A CUDA file of `lines` lines where every 7th line has something hipify converts."""
    body = [
        f"  cudaDeviceSynchronize(); // step {n}" if n % 7 == 0 else f"  int v{n} = {n} * 3; // plain line {n}"
        for n in range(lines - 2)
    ]
    return "void big() {\n" + "\n".join(body) + "\n}\n"


def review_files() -> dict[str, str | bytes]:
    return {
        "src/vadd.cu": SHFL_CU,
        "CMakeLists.txt": CUDA_CMAKE,
        HOSTILE_NAME: HOSTILE_CU,
        "assets/blob.bin": BINARY,
        "src/latin.cu": LATIN1_CU,
        "src/long.cu": LONG_CU,
        "README.md": "# demo\n",
        NEWLINE_NAME: "a file name with a line break\n",
        "tools/chunk": "#!/bin/sh\necho a file named like the chunk endpoint\n",
    }



@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    return actions.create_project(team_user[1], "review", user=team_user[0])


@pytest.fixture
def translated_run(only_stages: Callable[..., None], project: Project) -> Run:
    only_stages("fetch", "scan", "hipify")
    return pipeline_run(project, review_files())


def row_with(html: str, anchor: str) -> str:
    """The table row holding the element with id `anchor` ("o12", "t7"); AssertionError if none."""
    for row in html.split("<tr")[1:]:
        if f'id="{anchor}"' in row.split("</tr>")[0]:
            return row.split("</tr>")[0]
    raise AssertionError(f"no row with id {anchor}")


def line_rows(html: str) -> int:
    """Rows of code lines and folds in a page or fragment (sentinel rows not counted)."""
    return html.count('<tr class="line ') + html.count('<tr class="row-fold"')
