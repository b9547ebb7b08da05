"""Realistic CUDA projects for the stage panel tests, and a helper that runs one through the pipeline."""
from __future__ import annotations

from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.models import Run
from tests.conftest import VADD_CU, make_tar_gz

HOSTILE_NAME = "<img src=x onerror=alert(1)>.cu"
HOSTILE_TEXT = "</pre><script>alert(1)</script>"

GRAPH_CU = """#include <cuda_runtime.h>

__global__ void reduce(float* x) {
  float v = x[threadIdx.x];
  v += __shfl_down_sync(0xffffffff, v, 16);
  asm volatile("brkpt;");  // no HIP spelling: left as hand work
  x[threadIdx.x] = v;
}

void launch_graph(cudaGraph_t graph, cudaGraphExec_t* exec, cudaGraphInstantiateParams* params) {
  cudaGraphInstantiateWithParams(exec, graph, params);
  cudaFooBar(exec);  // </pre><script>alert(1)</script>
}
"""

# cudaFooBar( on line 9 does not exist: hipcc reports an undeclared identifier there.
BROKEN_CU = """#include <cuda_runtime.h>

__global__ void scale(float* x, float s) {
  x[threadIdx.x] *= s;
}

void run_scaled(float* x) {
  scale<<<1, 32>>>(x, 2.0f);
  cudaFooBar(x);  // </pre><script>alert(2)</script>
}
"""

# Declared, never defined: compiles, then the link stage reports an undefined reference.
UNDEFINED_CU = """#include <cuda_runtime.h>

void normalise_rows(float* data, int rows);

int main() {
  float* data = nullptr;
  cudaMalloc(&data, 64 * sizeof(float));
  normalise_rows(data, 8);
  return 0;
}
"""

CMAKE = """cmake_minimum_required(VERSION 3.18)
project(demo LANGUAGES CXX CUDA)
find_package(CUDA REQUIRED)
cuda_add_executable(vadd src/vadd.cu)
target_link_libraries(vadd cublas)
"""
BUILD_FILES = {
    "CMakeLists.txt": CMAKE,
    "requirements.txt": "torch==2.1.0+cu118\nnumpy\n",
    "Dockerfile": "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nRUN nvcc --version\n",
}


def translation_project() -> dict[str, str]:
    """For scan and hipify: kernels, launches, an unconverted API, hostile names and text."""
    return {"src/vadd.cu": VADD_CU, "src/graph.cu": GRAPH_CU, f"src/{HOSTILE_NAME}": f"// {HOSTILE_TEXT}\n" + VADD_CU,
            **BUILD_FILES}


def start_run(team_user: tuple[User, Team], files: dict[str, str], settings: dict[str, object] | None = None) -> Run:
    user, team = team_user
    project = actions.create_project(team, "panels", user=user, settings=settings or {})
    actions.store_archive(project, SimpleUploadedFile("p.tgz", make_tar_gz(files)), "p.tgz", user)
    return actions.create_run(project, user=user)


def run_project(team_user: tuple[User, Team], files: dict[str, str], settings: dict[str, object] | None = None) -> Run:
    return run_sync(start_run(team_user, files, settings))


def stage_page(client: Client, run: Run, stage: str) -> str:
    response = client.get(reverse("projects:run", args=[run.pk]), {"stage": stage})
    assert response.status_code == 200
    return response.content.decode()


def panel_of(page: str) -> str:
    """The stage panel section of the run page (without the log pane)."""
    start = page.index('id="stage-panel"')
    return page[start:page.index('id="log-section"', start)]


def assert_no_raw_hostile(page: str) -> None:
    assert "<img src=x" not in page
    assert "<script>alert" not in page
    assert "</pre><script>" not in page
