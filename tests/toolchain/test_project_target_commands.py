"""How a project build's compile commands are read and compiled again per target (no compiles here)."""
from __future__ import annotations

from worker.toolchain.make_build import single_target_environment
from worker.toolchain.make_db import DryRunCommand, MakeDryRun
from worker.toolchain.project_targets import make_compiles, parse_compile, probe_argv, tree_relative

ARCHS = "--offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100".split()


def test_a_cmake_hip_compile_is_compiled_again_for_one_target_into_nothing() -> None:
    words = ["/usr/lib/llvm-22/bin/clang++", "-I/workspace/hip/src", *ARCHS, "-x", "hip", "-MD", "-MT", "x.o",
             "-MF", "x.o.d", "-o", "CMakeFiles/vote_app.dir/src/vote.cu.o", "-c", "/workspace/hip/src/vote.cu"]
    found = parse_compile(words, "/workspace/build")
    assert found is not None and found.device and found.sources == ("/workspace/hip/src/vote.cu",)
    assert found.output == "/workspace/build/CMakeFiles/vote_app.dir/src/vote.cu.o"
    assert probe_argv(found, found.sources[0], "gfx1100") == [
        "/usr/lib/llvm-22/bin/clang++", "-I/workspace/hip/src", "--offload-arch=gfx1100", "-x", "hip", "-MD", "-MT",
        "x.o", "-MF", "x.o.d", "-c", "/workspace/hip/src/vote.cu", "-o", "/dev/null"]
    assert tree_relative(found.sources[0], found.cwd) == "src/vote.cu"


def test_make_commands_keep_their_folder_and_a_compile_and_link_line_is_probed_per_source() -> None:
    dry = MakeDryRun(commands=[
        DryRunCommand("/workspace/hip/app", "hipcc -O2 -c vote.cu"),
        DryRunCommand("/workspace/hip/app", "hipcc -O2 -o app main.cu util.cu -lm"),
        DryRunCommand("/workspace/hip", "cd app && hipcc -c scale.cu -o scale.o"),
        DryRunCommand("/workspace/hip", "echo done > log.txt"),
        DryRunCommand("/workspace/hip", "g++ -c host.cpp -o host.o"),
    ])
    vote, link, scale = make_compiles(dry)
    assert (vote.output, vote.device) == ("/workspace/hip/app/vote.o", True)
    assert (scale.cwd, scale.output) == ("/workspace/hip/app", "/workspace/hip/app/scale.o")
    assert tree_relative("util.cu", link.cwd) == "app/util.cu"
    # hipcc names no target: the probe names the one it checks (and hipcc's environment says it too)
    assert probe_argv(link, "util.cu", "gfx942") == ["hipcc", "--offload-arch=gfx942", "-O2", "util.cu", "-lm",
                                                      "-c", "-o", "/dev/null"]
    env = single_target_environment({"HCC_AMDGPU_TARGET": "gfx90a,gfx942,gfx1100",
                                     "HIPFLAGS": " ".join(ARCHS) + " -DX=1"}, "gfx1100")
    assert env["HCC_AMDGPU_TARGET"] == "gfx1100" and env["HIPFLAGS"] == "--offload-arch=gfx1100 -DX=1"


def test_commands_that_are_not_a_plain_compile_are_left_alone() -> None:
    assert parse_compile(["hipcc", "-c", "a.cu", "&&", "rm", "b"], "/workspace/hip") is None
    assert parse_compile(["ar", "rcs", "lib.a", "a.o"], "/workspace/hip") is None
    assert parse_compile(["hipcc", "-o", "app", "a.o", "b.o"], "/workspace/hip") is None  # a link: no source
    host = parse_compile(["g++", "-c", "host.cpp"], "/workspace/hip")
    assert host is None  # not a ROCm compiler
    cpp = parse_compile(["hipcc", "-c", "host.cpp"], "/workspace/hip")
    assert cpp is not None and not cpp.device  # hipcc on a C++ source without offload targets: host code
