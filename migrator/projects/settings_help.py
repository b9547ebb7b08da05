"""What each project setting does, shown beside its field on the settings page (all keys documented)."""
from __future__ import annotations

GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Translation", ("source_subdir", "hipify_engine", "launch_style", "roc_libraries", "rename_cu_to_hip", "exclude_globs",
                     "target_hip_version", "disabled_fix_rules")),
    ("Build", ("toolchain", "build_mode", "build_command", "offload_archs", "cxx_std", "include_dirs", "defines", "extra_flags",
               "link_libraries", "link_target", "compile_timeout_s", "build_timeout_s", "build_memory_mb",
               "workspace_mb")),
    ("Smoke test", ("smoke_preset", "smoke_command", "smoke_timeout_s", "smoke_expected_exit", "smoke_checks", "smoke_compare_reference",
                    "smoke_wait_timeout_s", "smoke_output_limit_bytes")),
)

HELP: dict[str, str] = {
    "source_subdir": "The part of the repository to migrate, as a relative directory (e.g. cuda/); empty: the whole tree. "
                     "Paths its build files name beside it (-I../common, include ../common/make.config, "
                     "add_subdirectory(../x)) are kept too.",
    "hipify_engine": "Which translator rewrites CUDA into HIP: our builtin engine, or the toolchain's hipify-perl / "
                     "hipify-clang (run in the sandbox; the Debian toolchains have no hipify-clang).",
    "launch_style": "How kernel launches are written: kept as <<<grid, block>>> (chevron) or hipLaunchKernelGGL (ggl).",
    "roc_libraries": "Translate library calls to the roc* libraries (rocBLAS, rocFFT...) instead of the hip* wrappers.",
    "rename_cu_to_hip": "Rename translated .cu files to .hip (build files are updated to match).",
    "exclude_globs": ("Paths every stage leaves alone (scanned, translated and compiled by none), one glob per line, "
                      "with .gitignore rules: a pattern without / matches a file or folder name at any depth (*.cu, "
                      "build/); one with / matches from the tree's root (third_party/**, src/*.cu); ** spans "
                      "folders (**/.git/**); a trailing / means folders only; no ! to take a path back."),
    "target_hip_version": "The HIP version the translation writes for, e.g. 6.4; empty: the installed one.",
    "disabled_fix_rules": "Build-file fix rules not to apply, by rule id (one per line).",
    "toolchain": "The ROCm toolchain root to build and run with, by name (e.g. rocm-6.4); empty: the newest installed.",
    "build_mode": "auto (default) runs the project's own build whenever it has one (a top-level CMakeLists.txt with targets, or Makefiles at the top or beside the CUDA sources, each folder its own unit), else compiles each file and says why; per_tu compiles file by file with the sources, include dirs and libraries of each target of the build files; project always runs the project's own build (CMake, make or a command).",
    "build_command": "For build_mode project: the command that builds the translated tree; empty: detect CMake or make.",
    "offload_archs": "AMD GPU targets to compile for, one per line (gfx90a = MI200, gfx942 = MI300). Smoke runs on a runner with one of them.",
    "cxx_std": "C++ dialect, e.g. c++17; empty: read from the CUDA build files, else c++17.",
    "include_dirs": "Extra include directories (relative to the tree), one per line; added before the ones Migrator finds.",
    "defines": "Preprocessor definitions, one per line (NAME or NAME=value).",
    "extra_flags": "Extra hipcc flags, one per line (e.g. -fgpu-rdc, -O3).",
    "link_libraries": "Libraries to link, without -l, one per line (e.g. hipblas, rocrand).",
    "link_target": "What the link stage builds: auto (executables for files with main, else a shared library), executable, shared, or none.",
    "compile_timeout_s": "Seconds one translation unit may compile before it is killed.",
    "build_timeout_s": "Seconds the whole project build may take (build_mode project).",
    "build_memory_mb": "Memory limit of the sandboxed project build, in MB: all of its processes together where the "
                       "worker can give each job a cgroup, else each process. The server's operator sets a maximum.",
    "workspace_mb": "Size of the run's writable work area, in MB (a build writing more fails with \"workspace limit "
                    "reached\"). The server's operator sets a maximum.",
    "smoke_preset": 'A validation preset run instead of a command, as JSON (e.g. {"preset": "train-steps", ...}); empty: use smoke_command.',
    "smoke_command": "The command run on a ROCm runner's GPU after linking (in build/bin). Empty: smoke is not run and the run can only be partial.",
    "smoke_timeout_s": "Seconds the smoke command may run before its process group is killed.",
    "smoke_expected_exit": "The exit status that counts as success.",
    "smoke_checks": 'Checks on the output, as JSON: [{"kind": "text"|"regex"|"numeric", "pattern": "...", "expected": "...", "rel_tol": 1e-5}].',
    "smoke_compare_reference": "Compare the output with a CUDA reference run of the original code on a CUDA runner; when none "
                               "runs it, the run is partial (needs a CUDA runner). Off: no comparison is asked for.",
    "smoke_wait_timeout_s": "Seconds smoke waits for a ROCm runner (or a free GPU), and the CUDA reference for a CUDA runner, "
                            "before it is recorded as not run (the run is then partial, never failed).",
    "smoke_output_limit_bytes": "Output kept from the smoke command; beyond it the output is cut with a marker.",
}
