"""Rules added so converted build files build: nvcc flags, paths, setup.py probes, CI inputs."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from worker.project_settings import ProjectSettings
from worker.scanning.findings import fix_tree, scan_build_files
from worker.scanning.model import Finding, RocmRelease

Scan = Callable[[dict[str, str]], list[Finding]]
WriteTree = Callable[[dict[str, str]], Path]


def _rules(findings: list[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.rule_id, []).append(finding)
    return grouped


def test_nvcc_only_flags_are_mapped_or_dropped(write_tree: WriteTree) -> None:
    tree = write_tree({"build.sh": (
        "nvcc -t=4 --threads 8 -gencode arch=compute_80,code=sm_80 --cuda-gpu-arch=sm_90 -Xcompiler -fopenmp,-Wall "
        "-Xptxas -v -rdc=true -lineinfo --expt-extended-lambda -x cu -c a.cu -lnvidia-ml\n")})
    fixes = fix_tree(tree, (), set(), ("gfx90a", "gfx942"))
    line = (tree / "build.sh").read_text().split()
    assert line[:1] == ["hipcc"] and "-t=4" not in line and "--threads" not in line and "-Xptxas" not in line
    assert line.count("--offload-arch=gfx942") == 2 and "-fopenmp" in line and "-Wall" in line
    assert {"-fgpu-rdc", "-gline-tables-only", "-lrocm_smi64", "hip"} <= set(line)
    assert all(fix.rule_id.startswith("shell.") for fix in fixes)


def test_ptx_has_no_automatic_path_and_fatbin_becomes_a_code_object(scan: Scan) -> None:
    rules = _rules(scan({"Makefile": "k.ptx: k.cu\n\tnvcc -ptx k.cu\nk.fatbin: k.cu\n\tnvcc -fatbin k.cu\n"}))
    flags = {f.text: f for f in rules["make.nvcc-only-flag"]}
    assert flags["-ptx"].replacement is None and flags["-ptx"].severity == "error"
    assert flags["-fatbin"].replacement == "--genco"


def test_toolkit_paths_rocm_lacks_are_reported_not_rewritten(scan: Scan) -> None:
    rules = _rules(scan({"Makefile": "INC = -I/usr/local/cuda/targets/x86_64-linux/include\n"
                                     "LIB = -L$(CUDA_HOME)/lib64 -L/usr/local/cuda-12.2/lib64\n"}))
    deeper = [f for f in rules["make.cuda-path"] if f.line == 1]
    assert [(f.text, f.replacement) for f in deeper] == [("/usr/local/cuda/targets/x86_64-linux/include", None)]
    assert {(f.text, f.replacement) for f in rules["make.cuda-path"] if f.line == 2} == {
        ("$(CUDA_HOME)/lib64", "$(CUDA_HOME)/lib"), ("/usr/local/cuda-12.2/lib64", "/opt/rocm/lib")}


def test_included_makefiles_and_configs_are_read(scan: Scan) -> None:
    files = {name: "CUDA_DIR = /usr/local/cuda\n" for name in
             ("common/make.config", "Makefile_nvidia", "build/common.mk", "README.md", "Makefile.md")}
    assert {f.file for f in scan(files)} == {"common/make.config", "Makefile_nvidia", "build/common.mk"}


def test_setup_py_without_a_hip_branch_gets_probes_reported_and_arch_lists_fixed(scan: Scan) -> None:
    setup = (
        "import os, shutil, subprocess, torch\n"
        "if shutil.which('nvcc') is None:\n"
        "    raise RuntimeError('install torch==2.3.0+cu121 first')\n"
        "out = subprocess.check_output(['nvcc', '-V'])\n"
        "major = int(torch.version.cuda.split('.')[0])\n"
        "os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0'\n"
        "flags = ['-gencode', 'arch=compute_80,code=sm_80']\n"
    )
    rules = _rules(scan({"setup.py": setup}))
    assert [f.severity for f in rules["python-build.nvcc-probe"]] == ["error", "error"]
    assert rules["python-build.cuda-version-probe"][0].text == "torch.version.cuda"
    assert rules["dependencies.cuda-local-version"][0].severity == "info"  # inside a message, not a pin
    arch = {f.text: f.replacement for f in rules["python-build.nvidia-arch-flag"]}
    first, *_ = archs = ProjectSettings().offload_archs  # the scan's default targets
    assert arch == {"TORCH_CUDA_ARCH_LIST": "PYTORCH_ROCM_ARCH", "-gencode": f"--offload-arch={first}",
                    "arch=compute_80,code=sm_80": f"--offload-arch={','.join(archs)}"}  # two list items: all targets


def test_ci_action_inputs_are_never_rewritten(write_tree: WriteTree) -> None:
    workflow = (
        "on: push\n"
        "jobs:\n"
        "  build:\n"
        "    runs-on: ubuntu-22.04\n"
        "    strategy:\n"
        "      matrix:\n"
        "        cuda-version: ['11.8', '12.1']\n"
        "    steps:\n"
        "      - uses: Jimver/cuda-toolkit@v0.2.16\n"
        "        with:\n"
        "          cuda: ${{ matrix.cuda-version }}\n"
        "          sub-packages: '[\"nvcc\", \"cudart\"]'\n"
        "      - run: nvcc -o app app.cu\n"
        "      - run: echo C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1\n"
    )
    tree = write_tree({".github/workflows/ci.yml": workflow})
    release = RocmRelease("7.2", "rocm/dev-ubuntu-24.04:7.2")
    rules = _rules(scan_build_files(tree, (), rocm=release))
    fix_tree(tree, (), set(), rocm=release)
    text = (tree / ".github/workflows/ci.yml").read_text()
    assert "sub-packages: '[\"nvcc\", \"cudart\"]'" in text and "- run: hipcc -o app app.cu" in text
    assert rules["ci.cuda-toolkit-install"][0].suggestion == "container: rocm/dev-ubuntu-24.04:7.2"
    assert rules["ci.cuda-version-matrix"] and rules["ci.windows-toolkit-path"]


def test_cmake_with_cu_sources_but_no_gpu_language_enables_hip(write_tree: WriteTree) -> None:
    tree = write_tree({"CMakeLists.txt": "project(app CXX)\nadd_executable(app main.cu)\n"})
    fix_tree(tree, (), set())
    assert (tree / "CMakeLists.txt").read_text() == (
        "project(app CXX)\nenable_language(HIP)\nadd_executable(app main.cu)\n"
        "set_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)\n")
    assert fix_tree(tree, (), set()) == []


def test_findcuda_projects_convert_macros_variables_and_arch_loops(write_tree: WriteTree) -> None:
    cmake = (
        "project(k LANGUAGES CXX CUDA)\n"
        "find_package(CUDA REQUIRED)\n"
        "set(CMAKE_CUDA_ARCHITECTURES 80)\n"
        "foreach(arch ${CMAKE_CUDA_ARCHITECTURES})\n"
        "  list(APPEND GENCODE \"-gencode=arch=compute_${arch},code=sm_${arch}\")\n"
        "endforeach()\n"
        "cuda_add_executable(k k.cu)\n"
        "cuda_add_cublas_to_target(k)\n"
        "target_include_directories(k PRIVATE ${CUDA_INCLUDE_DIRS})\n"
    )
    tree = write_tree({"CMakeLists.txt": cmake})
    fix_tree(tree, (), set())
    text = (tree / "CMakeLists.txt").read_text()
    assert "find_package(hip REQUIRED)\nfind_package(hipblas REQUIRED)" in text
    assert "foreach(arch ${CMAKE_HIP_ARCHITECTURES})" in text and '"--offload-arch=${arch}"' in text
    assert "add_executable(k k.cu)\nset_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)" in text
    assert "target_link_libraries(k roc::hipblas)" in text and "${hip_INCLUDE_DIRS}" in text


def test_severities_follow_what_hipcc_does_with_the_flag(scan: Scan) -> None:
    rules = _rules(scan({"build.sh": "nvcc --expt-relaxed-constexpr -Wno-deprecated-gpu-targets -c a.cu\n"}))
    severity = {f.text: f.severity for f in rules["shell.nvcc-only-flag"]}
    assert severity == {"--expt-relaxed-constexpr": "error", "-Wno-deprecated-gpu-targets": "info"}


def test_program_arguments_that_look_like_nvcc_flags_are_left_alone(scan: Scan) -> None:
    findings = scan({"run.sh": "./bench -cuda -t 4 --threads=8 -G\nnvcc -cuda nn.cu\n"})
    assert [(f.line, f.text) for f in findings if f.rule_id == "shell.nvcc-only-flag"] == [(2, "-cuda")]


def test_built_in_make_rules_get_the_platform_define_where_host_code_needs_it(write_tree: WriteTree) -> None:
    makefile = "app: main.o kernel.o\n\tnvcc main.o kernel.o -o app\nkernel.o: kernel.cu\n\tnvcc -c kernel.cu\n"
    tree = write_tree({"Makefile": makefile, "main.cpp": "#include <cuda_runtime.h>\nint main() { return 0; }\n",
                       "kernel.cu": "__global__ void k() {}\n", "tools/Makefile": "all:\n\tg++ tool.cpp\n",
                       "tools/tool.cpp": "int main() { return 0; }\n"})
    fix_tree(tree, (), set())
    assert (tree / "Makefile").read_text().endswith("\thipcc -c kernel.cu\nCPPFLAGS += -D__HIP_PLATFORM_AMD__\n")
    assert "CPPFLAGS" not in (tree / "tools/Makefile").read_text()  # no CUDA headers there
    assert fix_tree(tree, (), set()) == []
