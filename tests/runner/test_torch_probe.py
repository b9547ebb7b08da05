"""A runner's ROCm PyTorch is detected in the sandbox over its toolchain roots, never claimed; a fake one is
declared only in test and demo mode, and what the builds need of the root's Python is still probed for real."""
from __future__ import annotations

import json

import pytest
from django.core.exceptions import ImproperlyConfigured

from migrator.envconf import env_fake_torch
from worker.runner import torch_probe
from worker.runner.torch_probe import FAKE_TORCH_ENV, parse_probe, probe_root, probe_torch
from worker.toolchain.roots import select_root


@pytest.fixture(autouse=True)
def _fresh_probe() -> None:
    probe_torch.cache_clear()


def _answer(**found: object) -> str:
    base: dict[str, object] = {"python": "3.12.3", "pip": True, "setuptools": True, "version": None, "hip": None,
                               "cmake_prefix": None, "error": ""}
    return "some import noise\n" + json.dumps({**base, **found}) + "\n"


def test_a_rocm_build_of_torch_is_a_rocm_pytorch() -> None:
    found = parse_probe("rocm-pytorch-image", _answer(version="2.9.1+rocm7.2.0", hip="7.2.26015",
                                                      cmake_prefix="/opt/venv/lib/python3.12/site-packages/torch/share/cmake"))
    assert found.available and not found.fake and found.reason == ""
    assert found.label == "PyTorch 2.9.1+rocm7.2.0 (HIP 7.2.26015) in rocm-pytorch-image"
    assert found.cmake_prefix.endswith("torch/share/cmake") and found.pip and found.python == "3.12.3"


def test_a_cpu_or_cuda_torch_and_no_torch_are_not() -> None:
    cpu = parse_probe("r", _answer(version="2.13.0+cpu"))
    assert not cpu.available and cpu.reason == "torch 2.13.0+cpu is not a ROCm build (torch.version.hip is None)"
    missing = parse_probe("r", _answer(error="ModuleNotFoundError: No module named 'torch'"))
    assert not missing.available and missing.reason == "ModuleNotFoundError: No module named 'torch'"
    assert not parse_probe("r", "Segmentation fault").available


def test_the_toolchain_root_is_probed_in_the_sandbox() -> None:
    root = select_root()
    found = probe_root(root)  # the roots built here carry python3, but neither torch nor pip
    assert found.root == root.name and not found.available
    assert found.reason == "ModuleNotFoundError: No module named 'torch'"
    assert found.python.startswith("3.") and (found.pip, found.setuptools) == (False, False)
    assert not probe_torch().available  # no root here has a ROCm PyTorch


def test_a_fake_rocm_pytorch_is_declared_and_labelled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAKE_TORCH_ENV, "2.9.1+rocm7.2")
    found = probe_torch()
    assert found.available and found.fake and found.version == "2.9.1+rocm7.2"
    assert found.root == select_root().name and found.label.endswith(f"(fake) in {found.root}")
    assert found.reason == "fake ROCm PyTorch from MIGRATOR_FAKE_ROCM_TORCH='2.9.1+rocm7.2'"
    assert (found.pip, found.setuptools) == (False, False)  # the root's Python, probed for real
    assert found.to_dict()["available"] is True and found.to_dict()["fake"] is True


def test_production_refuses_a_fake_rocm_pytorch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_ROCM_TORCH", "2.9.1+rocm7.2")
    with pytest.raises(ImproperlyConfigured, match="only for tests and demos"):
        env_fake_torch("production")
    assert env_fake_torch("demo") == "2.9.1+rocm7.2"
    assert torch_probe.FAKE_TORCH_ENV == "MIGRATOR_FAKE_ROCM_TORCH"
