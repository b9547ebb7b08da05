"""The hipify stage's part for PyTorch projects, run on the translated copy ``workspace.hip``:
the safe Python and configuration fixes (``python.*``, ``llm-config.*`` rules, opt-out through
``disabled_fix_rules``) and the generated ``requirements-rocm.txt`` (written by the scan stage's
dependency report; never over a file of that name the project ships). Other kinds get nothing from here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from worker.context import StageContext
from worker.scanning.model import AppliedFix
from worker.scanning.python_touchpoints import fix_touchpoints
from worker.scanning.pytorch_scan import PYTHON_KINDS
from worker.stages.applicability import project_kind


@dataclass
class PythonPortResult:
    fixes: list[AppliedFix] = field(default_factory=list)
    generated: list[str] = field(default_factory=list)


def apply_python_port(ctx: StageContext) -> PythonPortResult:
    result = PythonPortResult()
    kind = project_kind(ctx)
    if kind not in PYTHON_KINDS:
        return result
    hip = ctx.workspace.hip
    result.fixes = fix_touchpoints(hip, ctx.settings.exclude_globs, set(ctx.settings.disabled_fix_rules))
    for fix in result.fixes:
        ctx.log(f"fixed     {fix.file}:{fix.line} [{fix.rule_id}] {fix.before.strip()} -> {fix.after.strip()}\n")
    generated = ctx.scan_data().get("generated_files") or {}
    for name, text in sorted(generated.items()) if isinstance(generated, dict) else []:
        if name == "requirements-rocm.txt" and isinstance(text, str):
            if (hip / name).exists() or (hip / name).is_symlink():
                ctx.log(f"kept      {name}: the project's own\n")
                continue
            (hip / name).write_text(text, encoding="utf-8")
            result.generated.append(name)
            ctx.log(f"generated {name}\n")
    return result
