"""Demangling link errors' names with the toolchain root's c++filt in the sandbox: real names, hostile names."""
from __future__ import annotations

from pathlib import Path

import pytest

from worker.toolchain.demangle import LIMITS, MAX_NAME, MAX_NAMES, demangle, sandboxed_demangler
from worker.toolchain.diagnostics import parse_linker_output
from worker.toolchain.roots import select_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits

# A program of our own calling what it never defines, in the shapes real projects' link errors take:
# function templates, a member operator, a static member, and std containers of std::string.
UNDEFINED_CPP = """\
#include <map>
#include <string>
#include <vector>
namespace blas { template <typename T> void gemm(const T*, const T*, T*, int); }
namespace kern {
struct Launcher { void operator()(int) const; static Launcher& instance(); };
void fill(std::vector<float>&, std::map<std::string, int> const&);
}
int main() {
  float a[4]{}, c[4]{};
  blas::gemm<float>(a, a, c, 2);
  kern::Launcher::instance()(3);
  std::vector<float> v;
  std::map<std::string, int> m;
  kern::fill(v, m);
}
"""
READABLE = {
    "void blas::gemm<float>(float const*, float const*, float*, int)",
    "kern::Launcher::instance()",
    "kern::Launcher::operator()(int) const",
    "kern::fill(std::vector<float, std::allocator<float> >&, std::map<std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> >, int, std::less<std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> > >, std::allocator<std::pair<std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> > const, int> > > const&)",
}


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox(select_root(), tmp_path)


def _b36(number: int) -> str:
    digits, text = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""
    while True:
        text = digits[number % 36] + text
        number //= 36
        if number == 0:
            return text


def substitution_bomb(levels: int) -> str:
    """Each template argument list names the previous one twice: output doubles per level, input grows by ~8 bytes."""
    return "_Z1f1a1pIS_S_E" + "".join(f"S0_IS{_b36(k - 1)}_S{_b36(k - 1)}_E" for k in range(1, levels))


@pytest.mark.parametrize("linker", ["bfd", "lld"])
def test_real_link_errors_printed_mangled_are_made_readable(sandbox: Sandbox, linker: str) -> None:
    (sandbox.workspace / "app.cpp").write_text(UNDEFINED_CPP)
    root = select_root()
    linked = sandbox.run([root.clang, f"-fuse-ld={linker}", "-Wl,--no-demangle", "app.cpp", "-o", "app"])
    assert linked.process.returncode != 0
    problems = parse_linker_output(linked.process.output, sandboxed_demangler(sandbox))
    undefined = {p.symbol: p.mangled for p in problems if p.kind == "undefined_reference"}
    assert set(undefined) == READABLE
    assert all(mangled.startswith("_Z") for mangled in undefined.values())


def test_names_that_are_not_one_itanium_word_are_never_sent(sandbox: Sandbox) -> None:
    names = ["_Z1fv\n_Z1gv", "_Z1f v", "_Zé1fv", "x" + "_Z1fv", "_Z" + "a" * MAX_NAME, "_Z1hv"]
    assert demangle(names, sandbox) == {**{name: name for name in names}, "_Z1hv": "h()"}


def test_a_batch_past_the_name_limit_demangles_the_first_and_keeps_the_rest(sandbox: Sandbox) -> None:
    names = [f"_Z6f{index:05d}v" for index in range(MAX_NAMES + 10)]
    plain = demangle(names, sandbox)
    readable = [name for name, text in plain.items() if text != name]
    assert len(readable) == MAX_NAMES and plain["_Z6f00000v"] == "f00000()"


def test_a_recursion_bomb_leaves_the_names_as_printed(sandbox: Sandbox) -> None:
    deep = ["_Z1fP" + "P" * 12_000 + "i", "_Z1f" + "I1a" * 4_000 + "E" * 4_000 + "v"]
    plain = demangle([*deep, "_Z1hv"], sandbox)
    assert [plain[name] for name in deep] == deep
    assert plain["_Z1hv"] == "h()"  # GNU c++filt refuses the deep ones itself and goes on


def test_a_name_whose_output_explodes_is_stopped_by_the_output_limit(sandbox: Sandbox) -> None:
    bomb = substitution_bomb(40)  # 449 bytes in, 27 MB out
    assert len(bomb) < 500
    plain = demangle([bomb, "_Z1hv"], sandbox)
    assert plain == {bomb: bomb, "_Z1hv": "_Z1hv"}  # the whole batch is kept as printed


def test_a_name_that_makes_cxxfilt_spin_is_stopped_by_the_time_limit(sandbox: Sandbox) -> None:
    bomb = substitution_bomb(60)  # GNU c++filt works on it for minutes (237 s here under 512 MB)
    limits = SandboxLimits(timeout_s=3, memory_mb=LIMITS.memory_mb, cpu_seconds=3, file_size_mb=1, processes=256,
                           output_bytes=LIMITS.output_bytes)
    assert demangle([bomb, "_Z1hv"], sandbox, limits) == {bomb: bomb, "_Z1hv": "_Z1hv"}
