"""The single-source change of a PyTorch extension built by setup.py: CUDAExtension's own ROCm path.

The delivered setup.py is executed as setuptools would run it, with a stand-in ``torch`` that is either
a CUDA or a ROCm build and a ``setup()`` that records what it is given: on CUDA it hands setuptools
exactly what the original did, on ROCm hipcc-ready flags and no nvcc check. The guarded wave-size fix is
preprocessed both ways."""
from __future__ import annotations

import runpy
import shutil
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from worker.delivery.buildedits import NotUnderstood
from worker.delivery.setupedits import edit_setup_py
from worker.delivery.singlesource import build_system, single_source
from worker.delivery.waveguards import GUARD_OPEN, guard_wave_fixes, tree_facts
from worker.scanning.extension_units import extension_units

FIXTURE = Path(__file__).parent.parent / "fixtures" / "delivery" / "setup_rowsum"


def _delivered(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURE, tree)
    for change in single_source(tree, None).files:
        (tree / change.path).parent.mkdir(parents=True, exist_ok=True)
        (tree / change.path).write_bytes(change.data or b"")
    return tree


class _Recorded:
    def __init__(self) -> None:
        self.setup: dict[str, object] = {}


@pytest.fixture
def fake_torch(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[types.ModuleType, _Recorded]]:
    """``torch``, ``torch.utils.cpp_extension`` and ``setuptools`` as a setup.py sees them, recording."""
    recorded = _Recorded()
    torch = types.ModuleType("torch")
    torch.version = types.SimpleNamespace(hip=None, cuda="12.4")  # type: ignore[attr-defined]
    cpp = types.ModuleType("torch.utils.cpp_extension")
    cpp.CUDAExtension = lambda name, sources, **kw: {"name": name, "sources": sources, **kw}  # type: ignore[attr-defined]
    cpp.BuildExtension = object  # type: ignore[attr-defined]
    setuptools = types.ModuleType("setuptools")
    setuptools.setup = lambda **kw: recorded.setup.update(kw)  # type: ignore[attr-defined]
    for name, module in {"torch": torch, "torch.utils": types.ModuleType("torch.utils"),
                         "torch.utils.cpp_extension": cpp, "setuptools": setuptools}.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(sys.modules, "torch_rocm", raising=False)
    monkeypatch.delitem(sys.modules, "nvcc_as_hipcc", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield torch, recorded


def _run_setup(tree: Path) -> None:
    runpy.run_path(str(tree / "setup.py"), run_name="__main__")


def test_on_a_cuda_pytorch_the_delivered_setup_py_gives_setuptools_what_the_original_did(
    tmp_path: Path, fake_torch: tuple[types.ModuleType, _Recorded], monkeypatch: pytest.MonkeyPatch
) -> None:
    _torch, recorded = fake_torch
    monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda")  # the original's own check passes either way
    _run_setup(FIXTURE)
    original = dict(recorded.setup)
    recorded.setup.clear()
    sys.modules.pop("torch_rocm", None)
    _run_setup(_delivered(tmp_path))
    assert recorded.setup == original
    extensions = original["ext_modules"]
    assert isinstance(extensions, list) and "-gencode" in extensions[0]["extra_compile_args"]["nvcc"]


def test_on_a_rocm_pytorch_it_needs_no_nvcc_and_gives_hipcc_its_own_flags(
    tmp_path: Path, fake_torch: tuple[types.ModuleType, _Recorded], monkeypatch: pytest.MonkeyPatch
) -> None:
    torch, recorded = fake_torch
    torch.version.hip = "7.2.0"
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no nvcc anywhere
    monkeypatch.delenv("CUDA_HOME", raising=False)
    with pytest.raises(RuntimeError, match="nvcc was not found"):
        _run_setup(FIXTURE)  # the original stops a ROCm build
    delivered = _delivered(tmp_path)
    _run_setup(delivered)
    extensions = recorded.setup["ext_modules"]
    assert isinstance(extensions, list) and len(extensions) == 1
    assert extensions[0]["sources"] == ["csrc/rowsum.cpp", "csrc/rowsum_kernel.cu"]  # BuildExtension hipifies these
    assert extensions[0]["extra_compile_args"] == {"cxx": ["-O3"], "nvcc": ["-O3", "-ffast-math"]}


def test_the_change_adds_the_helper_and_guards_only_what_differs_on_amd() -> None:
    change = single_source(FIXTURE, None)
    assert change.build_system == build_system(FIXTURE) == "setuptools"
    assert sorted(f.path for f in change.files) == ["csrc/rowsum_kernel.cu", "rocm/nvcc_as_hipcc.py",
                                                   "rocm/torch_rocm.py", "setup.py"]
    setup = change.by_path()["setup.py"].data.decode()  # type: ignore[union-attr]
    assert "extra_compile_args=torch_rocm.compile_args({\"cxx\": [\"-O3\"], \"nvcc\": NVCC_FLAGS})" in setup
    assert 'if not torch_rocm.ROCM and (shutil.which("nvcc") is None' in setup
    assert edit_setup_py(setup).text == setup  # idempotent


def test_the_scanner_reads_the_delivered_setup_py_as_the_original(tmp_path: Path) -> None:
    [original] = extension_units(FIXTURE, (), [])
    [delivered] = extension_units(_delivered(tmp_path), (), [])
    assert (delivered.sources, delivered.nvcc_flags, delivered.cxx_flags) == \
        (original.sources, original.nvcc_flags, original.cxx_flags)
    assert delivered.nvcc_flags[:2] == ["-O3", "--use_fast_math"] and not delivered.notes


def test_a_setup_py_without_cuda_extension_is_not_understood() -> None:
    with pytest.raises(NotUnderstood, match="no CUDAExtension"):
        edit_setup_py("from setuptools import setup\nsetup(name='x')\n")


def test_nvcc_run_at_start_up_is_named_for_the_team() -> None:
    text = ("import subprocess\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            "OUT = subprocess.check_output(['nvcc', '-V'])\nCUDAExtension('a', ['a.cu'])\n")
    edit = edit_setup_py(text)
    assert edit.notes == ["setup.py:3 runs nvcc when the script starts; a ROCm build has none: guard it with "
                          "`if not torch_rocm.ROCM:` by hand"]


@pytest.mark.skipif(shutil.which("cpp") is None, reason="no C preprocessor on this machine")
@pytest.mark.parametrize(("defines", "mask"), [([], "FULL_MASK"), (["-D__HIP_PLATFORM_AMD__"], "0xffffffffffffffffull")])
def test_the_guarded_wave_size_fix_is_seen_only_by_the_amd_compile(tmp_path: Path, defines: list[str], mask: str) -> None:
    original = (FIXTURE / "csrc" / "rowsum_kernel.cu").read_text()
    guarded = guard_wave_fixes("csrc/rowsum_kernel.cu", original, tree_facts(FIXTURE, ["csrc/rowsum_kernel.cu"]))
    assert guarded is not None and guarded.fixes == 1 and GUARD_OPEN in guarded.text

    def preprocess(text: str) -> str:
        source = tmp_path / "k.cu"
        source.write_text(text.replace('#include "rowsum.h"', ""))
        done = subprocess.run(["cpp", "-P", "-x", "c++", *defines, str(source)], capture_output=True, text=True,
                              check=True)
        return " ".join(done.stdout.split())

    expected = original if not defines else original.replace("__shfl_down_sync(FULL_MASK", f"__shfl_down_sync({mask}")
    assert preprocess(guarded.text) == preprocess(expected)
    assert guard_wave_fixes("csrc/rowsum_kernel.cu", guarded.text, tree_facts(FIXTURE, [])) is None  # idempotent


def test_a_fix_inside_a_continued_macro_is_left_with_a_note() -> None:
    text = ("#define REDUCE(v) \\\n    v += __shfl_down_sync(0xffffffff, v, 1)\n"
            "__global__ void k(float *x) { float v = x[0]; REDUCE(v); x[0] = v; }\n")
    guarded = guard_wave_fixes("k.cu", text, tree_facts(Path("."), []))
    if guarded is None:
        pytest.fail("the scan should fix the mask in the macro body")
    assert guarded.fixes == 0 and guarded.text == text
    assert guarded.notes and "macro continued over lines" in guarded.notes[0]
