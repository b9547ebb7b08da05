"""Python, training-config and launch-command rules; their safe fixes; the scan and hipify stages
on a fine-tuning project."""
from __future__ import annotations

import ast
import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.scanning.python_touchpoints import fix_touchpoints, scan_touchpoints
from worker.scanning.rules_llm_config import scan_launch_lines, scan_training_yaml
from worker.scanning.rules_pysource import scan_python_source
from worker.stages import hipify, scan


def _rules(code: str) -> list[tuple[str, str]]:
    return [(f.rule_id, f.text) for f in scan_python_source("m.py", textwrap.dedent(code))]


def test_a_truth_test_of_torch_version_cuda_gets_a_fix_and_a_comparison_does_not() -> None:
    findings = scan_python_source("m.py", "import torch\nif torch.version.cuda is None:\n    pass\n"
                                          "major = int(torch.version.cuda.split('.')[0])\n")
    assert [(f.line, f.column, f.replacement) for f in findings] == [
        (2, 3, "(torch.version.cuda or torch.version.hip)"), (4, 12, None)]
    assert findings[1].suggestion == "torch.version.hip"


@pytest.mark.parametrize(("code", "expected"), [
    ("import torch\ntorch.cuda.get_device_capability()\n", ("python.compute-capability", "torch.cuda.get_device_capability")),
    ("import torch\ntorch.backends.cudnn.benchmark = True\n", ("python.cudnn-flag", "torch.backends.cudnn.benchmark")),
    ("from torch.cuda.amp import autocast\nwith autocast(dtype=torch.float16):\n    pass\n",
     ("python.autocast-fp16", "torch.float16")),
    ("import torch\nscaler = torch.cuda.amp.GradScaler()\n", ("python.grad-scaler", "torch.cuda.amp.GradScaler")),
    ("import os\nos.environ['NCCL_IB_DISABLE'] = '1'\n", ("python.nccl-variable", "")),
    ("import os\nos.environ.setdefault('CUDA_VISIBLE_DEVICES', '0')\n", ("python.cuda-visible-devices", "")),
    ("import torch.distributed as d\nd.init_process_group(backend='nccl')\n", ("python.nccl-backend", "'nccl'")),
    ("import subprocess\nsubprocess.check_output(['nvcc', '--version'])\n", ("python.nvidia-tool", "")),
    ("import os\nos.system('nvidia-smi -L')\n", ("python.nvidia-tool", "")),
    ("import pynvml\n", ("python.pynvml", "")),
    ("from flash_attn import flash_attn_func\n", ("python.cuda-only-import", "")),
    ("from numba import cuda\n", ("python.numba-cuda", "")),
    ("ARCHS = ['sm_80', 'sm_90a']\n", ("python.sm-arch-string", "'sm_80'")),
    ("import triton.language as tl\ny = tl.inline_asm_elementwise('cvt.rn.f16.f32 $0, $1;', '=h,r', [x], "
     "dtype=tl.float16, is_pure=True, pack=1)\n", ("python.triton-inline-ptx", "")),
    ("import cupy as cp\nk = cp.RawKernel('extern \"C\" __global__ void f() { asm(\"trap;\"); }', 'f')\n",
     ("python.cupy-raw-kernel", "cp.RawKernel")),
])
def test_each_python_rule(code: str, expected: tuple[str, str]) -> None:
    assert expected in _rules(code)


def test_columns_are_characters_not_bytes() -> None:
    finding = scan_python_source("m.py", "x = 'é'; import torch; y = torch.version.cuda\n")[0]
    line = "x = 'é'; import torch; y = torch.version.cuda"
    assert line[finding.column:].startswith("torch.version.cuda")


def test_unparsable_python_gives_no_findings() -> None:
    assert scan_python_source("m.py", "def (:\n") == []


def test_fp16_in_a_fine_tuning_yaml_becomes_bf16_but_not_elsewhere() -> None:
    config = "stage: sft\nper_device_train_batch_size: 1\nfp16: true  # fast\n"
    [finding] = scan_training_yaml("train.yaml", config)
    assert (finding.line, finding.text, finding.replacement) == (3, "fp16: true", "bf16: true")
    assert scan_training_yaml("other.yaml", "fp16: true\nname: x\n") == []  # not a training config


def test_launch_flags_without_a_rocm_implementation() -> None:
    script = "python -m sglang.launch_server --model m --attention-backend fa3 \\\n  --mem-fraction-static 0.95\n"
    assert [(f.rule_id, f.suggestion) for f in scan_launch_lines("run.sh", script)] == [
        ("llm-config.sglang-backend", "--attention-backend triton"),
        ("llm-config.sglang-mem-fraction", "--mem-fraction-static 0.8")]
    assert scan_launch_lines("run.sh", "python train.py --attention-backend fa3\n") == []  # not an SGLang command


def test_safe_fixes_apply_once_and_leave_valid_python(project_tree: Callable[[str], Path]) -> None:
    tree = project_tree("finetune")
    fixes = fix_touchpoints(tree, (), set())
    assert sorted(f.rule_id for f in fixes) == ["llm-config.fp16-to-bf16", "python.torch-version-cuda"]
    train = (tree / "src/tunekit/train.py").read_text()
    assert "if (torch.version.cuda or torch.version.hip) is None:" in train
    ast.parse(train)
    assert "bf16: true" in (tree / "examples/train_lora/llama3_lora_sft.yaml").read_text()
    assert fix_touchpoints(tree, (), set()) == []  # nothing left to fix
    assert all(f.replacement is None for f in scan_touchpoints(tree, ()))


def test_a_disabled_rule_is_not_applied(project_tree: Callable[[str], Path]) -> None:
    fixes = fix_touchpoints(project_tree("finetune"), (), {"llm-config.fp16-to-bf16"})
    assert [f.rule_id for f in fixes] == ["python.torch-version-cuda"]


def _context(root: Path, previous: dict[str, dict[str, object]] | None = None) -> StageContext:
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root), settings=ProjectSettings(),
                        cache_dir=root / "cache", source_spec={"kind": "archive"}, previous=previous or {})


def test_scan_then_hipify_on_a_fine_tuning_project(
    project_tree: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGRATOR_RESOLVE_DEPENDENCIES", "off")
    root = tmp_path / "ws"
    root.mkdir()
    project_tree("finetune").rename(root / "source")
    scanned = scan.run(_context(root))
    data = json.loads(json.dumps(scanned.data))
    assert scanned.summary.startswith("python-app; ") and "CUDA references translatable" not in scanned.summary
    assert "14 GPU touchpoints in Python and configs (2 fixed automatically" in scanned.summary
    assert "already ships docker/docker-rocm/Dockerfile" in scanned.summary
    assert data["dependencies"]["resolve"] == "off" and data["dependency_requests"] == {}
    assert set(data["dependencies"]["cuda_packages"]) >= {"torch", "flash-attn", "nvidia-ml-py"}
    translated = hipify.run(_context(root, {"scan": data}))
    assert translated.outcome == "passed"
    assert translated.data["generated_files"] == ["requirements-rocm.txt"]
    assert "torch==2.14.1+rocm7.2" in (root / "hip/requirements-rocm.txt").read_text()
    rules = {fix["rule_id"] for fix in translated.data["build_fixes"]}
    assert {"llm-config.fp16-to-bf16", "python.torch-version-cuda"} <= rules
    assert "fp16: true" in (root / "source/examples/train_lora/llama3_lora_sft.yaml").read_text()  # source untouched
