"""One setting, one set of files: scan, hipify, compile and link unit discovery and the CUDA reference
build leave out exactly the same sources for the same ``exclude_globs``."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from translator import TranslateOptions, translate_tree
from worker.project_settings import ProjectSettings, SettingsError
from worker.runner.reference import find_translation_units
from worker.scanning.files import walk_tree
from worker.scanning.inventory import build_inventory
from worker.toolchain.sources import build_units, scan_tree

KERNEL = "#include <cuda_runtime.h>\n__global__ void k(float* a) { a[0] = 1.0f; }\nvoid go() { cudaDeviceSynchronize(); }\n"
HOST = "#include <cuda_runtime.h>\nvoid host() { cudaDeviceSynchronize(); }\n"
TREE = {
    "main.cpp": "#include <cuda_runtime.h>\nint main() { cudaDeviceSynchronize(); return 0; }\n",
    "src/a.cu": KERNEL,  # excluded by *.cu although it is not at the top
    "src/b.cpp": HOST,
    "src/generated.cpp": HOST,  # generated/ names folders only
    "tools/generated/g.cpp": HOST,  # ... at any depth
    "third_party/dep/dep.cpp": HOST,  # excluded: third_party/** is anchored at the root
    "lib/third_party/own.cpp": HOST,  # kept, for the same reason
    "CMakeLists.txt": "project(p LANGUAGES CXX CUDA)\nadd_executable(app main.cpp src/a.cu src/b.cpp src/generated.cpp"
                      " tools/generated/g.cpp third_party/dep/dep.cpp lib/third_party/own.cpp)\n",
}
SETTINGS = ProjectSettings(exclude_globs=("*.cu", "third_party/**", "generated/"))
KEPT = {"main.cpp", "src/b.cpp", "src/generated.cpp", "lib/third_party/own.cpp"}
SOURCES = (".cu", ".cpp")


def _sources(paths: object) -> set[str]:
    assert isinstance(paths, (list, set, tuple))
    return {str(p) for p in paths if str(p).endswith(SOURCES)}


def scanned(tree: Path, tmp: Path) -> set[str]:
    inventory = build_inventory(tree, SETTINGS.exclude_globs)
    assert "src/a.cu" not in inventory.cuda_files
    return _sources([f.rel for f in walk_tree(tree, SETTINGS.exclude_globs)])


def hipified(tree: Path, tmp: Path) -> set[str]:
    account = translate_tree(tree, tmp / "hip", TranslateOptions(exclude_globs=SETTINGS.exclude_globs))
    return _sources([f.path for f in account.files if f.status not in ("skipped", "copied")])


def compile_units(tree: Path, tmp: Path) -> set[str]:
    return _sources(scan_tree(tree, SETTINGS.exclude_globs).translation_units)


def target_sources(tree: Path, tmp: Path) -> set[str]:
    return _sources([s for unit in build_units(tree, SETTINGS.exclude_globs) for s in unit.sources])


def reference_units(tree: Path, tmp: Path) -> set[str]:
    return _sources([p.as_posix() for p in find_translation_units(tree, SETTINGS.exclude_globs)])


@pytest.mark.parametrize("stage_view", [scanned, hipified, compile_units, target_sources, reference_units])
def test_every_stage_excludes_the_same_sources(tmp_path: Path, stage_view: Callable[[Path, Path], set[str]]) -> None:
    tree = tmp_path / "source"
    for rel, text in TREE.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    assert stage_view(tree, tmp_path) == KEPT


def test_settings_refuse_a_glob_that_would_re_include_or_match_nothing() -> None:
    for bad in (["!vendor/keep.cu"], ["./vendor/**"], [""]):
        with pytest.raises(SettingsError, match="exclude_globs"):
            ProjectSettings.from_dict({"exclude_globs": bad})
    assert ProjectSettings.from_dict({"exclude_globs": ["*.cu", "build/"]}).exclude_globs == ("*.cu", "build/")
