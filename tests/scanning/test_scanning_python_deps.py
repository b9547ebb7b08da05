from __future__ import annotations

from collections.abc import Callable

from worker.scanning.model import Finding

Scan = Callable[[dict[str, str]], list[Finding]]

SETUP_PY = """
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

setup(
    name="fused_ops",
    ext_modules=[
        CUDAExtension(
            name="fused_ops._C",
            sources=["csrc/ops.cpp", "csrc/ops_kernel.cu"],
            include_dirs=["/usr/local/cuda/include"],
            libraries=["cublas", "curand"],
            extra_link_args=["-lcudnn", "-L/usr/local/cuda/lib64"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math", "-gencode=arch=compute_80,code=sm_80"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    install_requires=["cupy-cuda12x>=12"],
)
"""

REQUIREMENTS = """
--extra-index-url https://download.pytorch.org/whl/cu121
torch==2.3.1+cu121
torchvision==0.18.1+cu121
nvidia-cublas-cu12==12.1.3.1
cupy-cuda12x
numpy>=1.24  # plain dependency
"""

ENVIRONMENT_YML = """
name: train
channels:
  - pytorch
  - nvidia
  - conda-forge
dependencies:
  - python=3.11
  - pytorch=2.1
  - pytorch-cuda=12.1
  - cudatoolkit=11.8
  - pip
  - pip:
      - nvidia-cudnn-cu11==8.9.2.26
"""

PYPROJECT = """
[project]
name = "app"
dependencies = ["torch==2.2.0+cu118", "cupy-cuda11x", "numpy"]

[[tool.uv.index]]
name = "pytorch-cu118"
url = "https://download.pytorch.org/whl/cu118"
"""


def _rules(findings: list[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.rule_id, []).append(finding)
    return grouped


def test_it_reads_setup_py_with_exact_positions(scan: Scan) -> None:
    rules = _rules(scan({"setup.py": SETUP_PY}))
    assert [f.line for f in rules["python-build.cuda-extension"]] == [2, 7]  # the import and the call
    libraries = [(f.line, f.column, f.text, f.replacement) for f in rules["python-build.cuda-link-library"]]
    assert libraries == [(11, 24, "cublas", "hipblas"), (11, 34, "curand", "hiprand"), (12, 30, "-lcudnn", "-lMIOpen")]
    assert [f.replacement for f in rules["python-build.cuda-path"]] == ["/opt/rocm/include", "/opt/rocm/lib"]
    assert rules["python-build.nvcc-compile-args"][0].text == '"nvcc"'
    assert rules["python-build.nvcc-only-flag"][0].replacement == "-ffast-math"
    assert rules["python-build.nvidia-arch-flag"][0].text == "-gencode=arch=compute_80,code=sm_80"
    assert rules["python-build.nvidia-arch-flag"][0].replacement == "--offload-arch=gfx90a,gfx942,gfx1100"  # one list item
    assert [f.line for f in rules["python-build.cuda-home"]] == [2]
    assert rules["dependencies.cupy-cuda"][0].suggestion == "cupy-rocm-5-0"


def test_it_flags_cuda_wheels_in_requirements(scan: Scan) -> None:
    rules = _rules(scan({"requirements.txt": REQUIREMENTS}))
    assert rules["dependencies.cuda-wheel-index"][0].suggestion == "download.pytorch.org/whl/rocm6.2"
    assert [f.line for f in rules["dependencies.cuda-local-version"]] == [2, 3]
    assert rules["dependencies.nvidia-wheel"][0].text == "nvidia-cublas-cu12"
    assert rules["dependencies.cupy-cuda"][0].line == 5
    assert all(f.notebook_slug == "cuda-python-wheels" for f in rules["dependencies.cuda-local-version"])
    assert "parse.error" not in rules


def test_it_flags_conda_cuda_packages_and_the_nvidia_channel(scan: Scan) -> None:
    rules = _rules(scan({"environment.yml": ENVIRONMENT_YML}))
    assert [f.text for f in rules["dependencies.conda-cuda-package"]] == ["pytorch-cuda", "cudatoolkit"]
    assert rules["dependencies.nvidia-channel"][0].line == 4
    assert rules["dependencies.nvidia-wheel"][0].line == 13


def test_it_reads_dependencies_from_pyproject(scan: Scan) -> None:
    rules = _rules(scan({"pyproject.toml": PYPROJECT}))
    assert rules["dependencies.cuda-local-version"][0].line == 3
    assert rules["dependencies.cupy-cuda"][0].text == "cupy-cuda11x"
    assert rules["dependencies.cuda-wheel-index"][0].line == 7


def test_it_ignores_clean_python_dependencies(scan: Scan) -> None:
    files = {"requirements-dev.txt": "pytest>=8\nruff\n", "pyproject.toml": '[project]\nname = "x"\n'}
    assert scan(files) == []
