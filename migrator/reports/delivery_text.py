"""The words of a delivery: the pull request's title and body (the run's report in Markdown with both
builds' results first), and the git commands that apply a bundle by hand."""
from __future__ import annotations

import shlex

from migrator.projects.models import Run
from migrator.reports.build import build_report
from migrator.reports.links import absolute_url
from migrator.reports.markdown import export_markdown
from migrator.reports.models import PortAttempt

_MARK = {"passed": "passed", "failed": "**FAILED**", "skipped": "not checked"}
MODE_WORDS = {"single-source": "single source: CUDA stays the source, HIP is made from it at build time",
              "copy": "converted copy: the translated tree as its own branch"}


def pull_request_title(run: Run, attempt: PortAttempt) -> str:
    return f"Build for AMD GPUs (ROCm/HIP) beside CUDA: Migrator run #{run.number} of {run.project.name}"


def verification_section(attempt: PortAttempt) -> str:
    lines = ["## Verified on both sides", "", "| Build | Result | Checked by | Details |", "|---|---|---|---|"]
    for label, side in (("ROCm (`GPU_PLATFORM=amd`)", attempt.rocm), ("CUDA (nvcc, unchanged)", attempt.cuda)):
        status = str(side.get("status", "skipped")) if isinstance(side, dict) else "skipped"
        reason = str(side.get("reason", "")) if isinstance(side, dict) else ""
        via = str(side.get("via") or "the delivering worker, in the sandbox") if isinstance(side, dict) else ""
        lines.append(f"| {label} | {_MARK.get(status, status)} | {via} | {reason.replace('|', '/')} |")
    lines.append("")
    lines += smoke_section(attempt)
    mode = attempt.delivery.mode
    lines.append(f"Mode: {MODE_WORDS.get(mode, mode)}. Commit `{attempt.commit[:12]}`.")
    if isinstance(attempt.lines, dict) and attempt.lines:
        lines.append(f"Change against the CUDA branch: {attempt.lines.get('files', 0)} files, "
                     f"+{attempt.lines.get('added', 0)} -{attempt.lines.get('removed', 0)} lines.")
    if attempt.kept_hand:
        lines.append(f"Kept as you changed them on this branch: {', '.join(f'`{p}`' for p in attempt.kept_hand)}.")
    for conflict in attempt.conflicts:
        if isinstance(conflict, dict):
            lines.append(f"- **Conflict** in `{conflict.get('path')}`: your edit is kept; the "
                         f"{conflict.get('against')} differs (both versions are on the run page).")
    return "\n".join(lines) + "\n"


def smoke_of(attempt: PortAttempt) -> dict[str, object]:
    """The CUDA runner's smoke comparison of the delivered build with the original ({} when none ran)."""
    smoke = attempt.cuda.get("smoke") if isinstance(attempt.cuda, dict) else None
    return smoke if isinstance(smoke, dict) and "comparison" in smoke else {}


def smoke_section(attempt: PortAttempt) -> list[str]:
    smoke = smoke_of(attempt)
    if not smoke:
        return []
    fake = " (on a fake GPU: MIGRATOR_FAKE_GPUS)" if smoke.get("fake_gpu") else ""
    return [f"Smoke command `{smoke.get('command')}` on the CUDA runner{fake}: {smoke.get('comparison')} "
            f"({smoke.get('detail')}), compared with {smoke.get('original_from')}.", "",
            "| Original (CUDA branch) | Delivered branch |", "|---|---|",
            f"| {_cell(smoke.get('original'))} | {_cell(smoke.get('delivered'))} |", ""]


def _cell(text: object) -> str:
    shown = str(text or "(no output)").strip()[-600:]
    return "<br>".join(f"`{line.replace('`', chr(39))}`" for line in shown.splitlines()) or "(no output)"


def pull_request_body(run: Run, attempt: PortAttempt) -> str:
    report = export_markdown(build_report(run))
    return f"{verification_section(attempt)}\nRun page: {absolute_url(run.get_absolute_url())}\n\n{report}"


def apply_commands(bundle_name: str, branch: str, target: str) -> str:
    """The commands a maintainer runs in their clone, with the downloaded bundle beside it."""
    quoted_branch = shlex.quote(branch)
    return "\n".join([
        f"git fetch {shlex.quote('./' + bundle_name)} {quoted_branch}:{quoted_branch}",
        f"git log --oneline {shlex.quote(target)}..{quoted_branch}",
        f"git push origin {quoted_branch}",
    ])


def delivery_lines(attempt: PortAttempt) -> list[str]:
    """What the command line prints: state, both builds, the branch, the pull request or the commands."""
    record = attempt.delivery
    lines = [f"delivery ({record.mode}): {attempt.get_state_display()}"]
    for side in (attempt.rocm, attempt.cuda):
        if isinstance(side, dict) and side:
            via = f" [{side.get('via')}]" if side.get("via") else ""
            lines.append(f"  {side.get('side')} build: {side.get('status')} ({side.get('reason')}){via}")
    smoke = smoke_of(attempt)
    if smoke:
        lines.append(f"  smoke on the CUDA runner: {smoke.get('comparison')} with {smoke.get('original_from')}")
    if isinstance(attempt.lines, dict) and attempt.lines:
        lines.append(f"  change: {attempt.lines.get('files')} files, +{attempt.lines.get('added')} "
                     f"-{attempt.lines.get('removed')} lines against {record.target_branch}")
    for conflict in attempt.conflicts:
        if isinstance(conflict, dict):
            lines.append(f"  conflict: {conflict.get('path')} (your edit kept; the {conflict.get('against')} differs)")
    if attempt.state in ("proposed", "pushed"):
        lines.append(f"  branch: {record.branch} at {attempt.commit[:12]} on {attempt.run.git_url}")
    if record.pr_url and attempt.state == "proposed":
        lines.append(f"  pull request: {record.pr_url}")
    if attempt.bundle:
        lines.append(f"  bundle: {attempt.bundle}")
        lines += [f"    {command}" for command in attempt.commands.splitlines()]
    if attempt.error:
        lines.append(f"  error: {attempt.error}")
    lines += [f"  note: {note}" for note in attempt.notes if isinstance(note, str)]
    return lines
