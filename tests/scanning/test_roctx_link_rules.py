"""NVTX over roctx links roctx64: cmake.nvtx-roctx-link and make.nvtx-roctx-link on a translated tree."""
from __future__ import annotations

from pathlib import Path

from worker.scanning.findings import fix_tree, scan_build_files

CALLER = '#include "hip_port/cuda_port.h"\nint main() { roctxRangePushA("run"); roctxRangePop(); }\n'
PLAIN = "int helper() { return 1; }\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _rules(root: Path) -> list[tuple[str, str, int]]:
    return [(f.rule_id, f.file, f.line) for f in scan_build_files(root, ()) if "nvtx-roctx" in f.rule_id]


def test_cmake_links_roctx64_to_the_targets_whose_sources_call_roctx(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "CMakeLists.txt": "project(p LANGUAGES CXX HIP)\nadd_executable(app src/app.hip)\n"
                          "target_link_libraries(app PRIVATE hip::host)\nadd_library(util STATIC src/util.cpp)\n"
                          "add_subdirectory(tools)\n",
        "src/app.hip": CALLER, "src/util.cpp": PLAIN,
        "tools/CMakeLists.txt": "set(TOOL_SOURCES probe.cpp)\nadd_executable(probe ${TOOL_SOURCES})\n",
        "tools/probe.cpp": CALLER})
    fixes = fix_tree(root, (), set())
    assert [(f.rule_id, f.file, f.after.strip()) for f in fixes if "roctx" in f.rule_id] == [
        ("cmake.nvtx-roctx-link", "CMakeLists.txt", "add_executable(app src/app.hip)\n"
                                                    "target_link_libraries(app PRIVATE roctx64)"),
        ("cmake.nvtx-roctx-link", "tools/CMakeLists.txt", "add_executable(probe ${TOOL_SOURCES})\n"
                                                          "target_link_libraries(probe PRIVATE roctx64)")]
    assert "target_link_libraries(util" not in (root / "CMakeLists.txt").read_text()
    assert [f for f in fix_tree(root, (), set()) if "roctx" in f.rule_id] == []  # applied twice: nothing more


def test_a_cmake_target_with_the_plain_signature_keeps_it(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"CMakeLists.txt": "add_executable(app main.cu)\ntarget_link_libraries(app m)\n",
                            "main.cu": CALLER})
    fix_tree(root, (), set())
    assert "target_link_libraries(app roctx64)" in (root / "CMakeLists.txt").read_text()


def test_make_appends_the_library_to_each_link_command_not_to_compiles(tmp_path: Path) -> None:
    makefile = ("HIPCC = hipcc\nFLAGS = -O2 $(if $(DEBUG),-g,)\n\n"
                "timeline: timeline.o util.o\n\t$(HIPCC) $(FLAGS) -o $@ $^ \\\n\t\t-L${LIBDIR}\n\n"
                "%.o: %.hip\n\t$(HIPCC) $(FLAGS) -c $< -o $@\n\nclean:\n\trm -f timeline *.o\n")
    root = _tree(tmp_path, {"app/Makefile": makefile, "app/timeline.hip": CALLER, "app/util.hip": PLAIN,
                            "other/Makefile": "x: x.hip\n\thipcc -o x x.hip\n", "other/x.hip": PLAIN})
    assert _rules(root) == [("make.nvtx-roctx-link", "app/Makefile", 6)]
    fix_tree(root, (), set())
    text = (root / "app/Makefile").read_text()
    assert "\t\t-L${LIBDIR} -lroctx64\n" in text and "-c $< -o $@\n" in text
    assert fix_tree(root, (), set()) == []  # applied twice: nothing more


def test_a_makefile_relying_on_built_in_rules_gets_ldlibs(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"Makefile": "CXX = hipcc\nCXXFLAGS = -O2\nprobe: probe.o\n", "probe.cpp": CALLER})
    fix_tree(root, (), set())
    assert (root / "Makefile").read_text().endswith("probe: probe.o\nLDLIBS += -lroctx64\n")


def test_nothing_is_added_without_roctx_calls_or_when_the_build_names_roctx64(tmp_path: Path) -> None:
    plain = _tree(tmp_path / "plain", {"Makefile": "a: a.hip\n\thipcc -o a a.hip\n", "a.hip": PLAIN,
                                       "CMakeLists.txt": "add_executable(a a.hip)\n"})
    assert _rules(plain) == []
    named = _tree(tmp_path / "named", {"Makefile": "a: a.hip\n\thipcc -o a a.hip -lroctx64\n", "a.hip": CALLER,
                                       "CMakeLists.txt": "add_executable(a a.hip)\ntarget_link_libraries(a roctx64)\n"})
    assert _rules(named) == []


def test_the_rules_can_be_turned_off(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"Makefile": "a: a.hip\n\thipcc -o a a.hip\n", "a.hip": CALLER})
    assert fix_tree(root, (), {"make.nvtx-roctx-link"}) == []
