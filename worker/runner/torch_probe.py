"""Does this runner have a ROCm PyTorch? Detected in the sandbox over each toolchain root, never claimed.

A root has one when its ``python3`` imports ``torch`` and ``torch.version.hip`` is set (what the official
``rocm/pytorch`` image registered as a root gives). The probe also reads what the extension builds need
from that Python: pip and setuptools (which command builds a ``setup.py``), and torch's CMake prefix
(for a ``find_package(Torch)`` build). Importing torch reads no user content; it runs in a sandbox over
the root all the same, so that what is found is what the builds will see.

``MIGRATOR_FAKE_ROCM_TORCH`` (a version, e.g. ``2.9.1+rocm7.2``; test and demo mode only, like
``MIGRATOR_FAKE_GPUS``) declares a fake ROCm torch on the default root: pip, setuptools and the CMake prefix
are still probed for real, so a fake runner's build runs the same commands and fails where its root lacks
what they need. Every result obtained with it is labelled fake.
"""
from __future__ import annotations

import functools
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from worker.toolchain.roots import ToolchainRoot, discover_roots
from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxUnavailable

FAKE_TORCH_ENV = "MIGRATOR_FAKE_ROCM_TORCH"
PROBE_LIMITS = SandboxLimits(timeout_s=120, memory_mb=0)
# Printed as one JSON line; a missing module is a None, never an exception.
_SCRIPT = """
import importlib.util, json, sys
found = {"python": "%d.%d.%d" % sys.version_info[:3],
         "pip": importlib.util.find_spec("pip") is not None,
         "setuptools": importlib.util.find_spec("setuptools") is not None,
         "version": None, "hip": None, "cmake_prefix": None, "error": ""}
try:
    import torch
    found.update(version=torch.__version__, hip=getattr(torch.version, "hip", None),
                 cmake_prefix=getattr(torch.utils, "cmake_prefix_path", None))
except Exception as exc:
    found["error"] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(found))
"""


@dataclass(frozen=True)
class TorchProbe:
    """What a root's Python offers the extension builds; ``available`` when it is a ROCm torch."""

    root: str  # the toolchain root's name ("" when none was probed)
    version: str = ""
    hip: str = ""  # torch.version.hip; "" for a CPU or CUDA build, or no torch
    python: str = ""
    pip: bool = False
    setuptools: bool = False
    cmake_prefix: str = ""
    fake: bool = False
    reason: str = ""  # why there is none, or that it is fake

    @property
    def available(self) -> bool:
        return bool(self.hip)

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "available": self.available}

    @property
    def label(self) -> str:
        """``PyTorch 2.9.1+rocm7.2 (HIP 7.2.1) in rocm-pytorch-image``."""
        hip = "fake" if self.fake else f"HIP {self.hip}"
        return f"PyTorch {self.version} ({hip}) in {self.root}"


def parse_probe(root: str, output: str) -> TorchProbe:
    """The probe script's JSON line (the last one printed), as a ``TorchProbe`` of ``root``."""
    lines = [line for line in output.strip().splitlines() if line.startswith("{")]
    try:
        found = json.loads(lines[-1]) if lines else {}
    except ValueError:
        found = {}
    if not isinstance(found, dict) or not found:
        return TorchProbe(root, reason=f"the root's python3 did not answer: {output.strip()[-200:]}")
    hip = str(found.get("hip") or "")
    version = str(found.get("version") or "")
    reason = ("" if hip else str(found.get("error") or "") or
              (f"torch {version} is not a ROCm build (torch.version.hip is None)" if version else "no torch"))
    return TorchProbe(root, version, hip, str(found.get("python") or ""), bool(found.get("pip")),
                      bool(found.get("setuptools")), str(found.get("cmake_prefix") or ""), reason=reason)


def probe_root(root: ToolchainRoot) -> TorchProbe:
    """Run the probe in a sandbox over ``root`` (its own scratch workspace, removed after)."""
    with tempfile.TemporaryDirectory(prefix="torch-probe-") as scratch:
        try:
            done = Sandbox(root, Path(scratch), read_only=()).run(["python3", "-I", "-c", _SCRIPT], limits=PROBE_LIMITS)
        except (OSError, SandboxUnavailable) as exc:
            return TorchProbe(root.name, reason=f"could not run the root's python3: {exc}")
    if not done.process.ok:
        return TorchProbe(root.name, reason=f"the root's python3 failed (exit {done.process.returncode}): "
                                            f"{done.process.output.strip()[-200:]}")
    return parse_probe(root.name, done.process.output)


def fake_probe(version: str, root: ToolchainRoot) -> TorchProbe:
    """A declared fake ROCm torch on ``root``; everything else of the root's Python probed for real."""
    real = probe_root(root)
    return TorchProbe(root.name, version, "fake", real.python, real.pip, real.setuptools, real.cmake_prefix,
                      fake=True, reason=f"fake ROCm PyTorch from {FAKE_TORCH_ENV}={version!r}")


@functools.cache
def probe_torch() -> TorchProbe:
    """This runner's ROCm PyTorch: the first root (newest HIP first) whose python3 has one; the fake one
    when ``MIGRATOR_FAKE_ROCM_TORCH`` is set. Cached for the process: roots change only with a restart."""
    roots = discover_roots()
    fake = os.environ.get(FAKE_TORCH_ENV, "").strip()
    if fake:
        return fake_probe(fake, roots[0]) if roots else TorchProbe("", reason="no toolchain root installed")
    reasons = []
    for root in roots:
        found = probe_root(root)
        if found.available:
            return found
        reasons.append(f"{root.name}: {found.reason}")
    return TorchProbe("", reason="; ".join(reasons) or "no toolchain root installed")
