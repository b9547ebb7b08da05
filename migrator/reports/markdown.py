"""Markdown for a report, sized for a pull-request comment.

Each part is a collapsible ``<details>`` block. GitHub refuses comments over 65,536 characters,
so parts that do not fit are left out, with a link to the full report page in their place.
"""
from __future__ import annotations

from migrator.reports.compare import MAX_LISTED_FINDINGS
from migrator.reports.jsondata import (
    JsonDict,
    as_dict,
    as_dicts,
    as_float,
    as_int,
    as_list,
    as_str,
)
from worker.wording import counted

GITHUB_COMMENT_LIMIT = 65_536
EXPORT_LIMIT = 50 * 1024 * 1024  # exports are whole; only PR comments are cut to the host's limit
ICONS = {"passed": "✅", "partial": "🟡", "failed": "❌", "skipped": "⏭️", "cancelled": "⛔", "running": "⏳", "queued": "🕒",
         "not_applicable": "➖"}
TRUNCATION_NOTE = "\n\n> ✂️ This report is longer than a comment allows; parts are left out. [Full report]({url})\n"


def cell(value: object) -> str:
    """Text safe inside a table cell: no HTML, no pipes, one line."""
    text = as_str(value, 300).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def code(value: object) -> str:
    text = as_str(value, 300).replace("`", "'").replace("|", "\\|").replace("\n", " ")
    return f"`{text}`" if text else ""


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def details(summary: str, body: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{cell(summary)}</summary>\n\n{body}\n\n</details>"


def _seconds(value: object) -> str:
    number = as_float(value)
    return f"{number:.1f} s" if number is not None else ""


def _header(report: JsonDict) -> str:
    run, source, project = as_dict(report.get("run")), as_dict(report.get("source")), as_dict(report.get("project"))
    state = as_str(report.get("state"))
    lines = [f"## {ICONS.get(state, '')} Migrator: {cell(project.get('name'))} run #{as_int(run.get('number'))} {cell(state)}", ""]
    if source.get("archive_sha256"):
        lines.append(f"**Source:** archive {code(source.get('archive_name'))}, sha256 {code(source.get('archive_sha256'))}")
    else:
        ref = f" at {code(source.get('ref'))}" if source.get("ref") else ""
        commit = f", commit {code(source.get('commit'))}" if source.get("commit") else ""
        lines.append(f"**Source:** {code(source.get('git_url'))}{ref}{commit}")
    pr = as_dict(report.get("pull_request"))
    if pr.get("url"):
        lines.append(f"**Pull request:** {cell(pr.get('url'))}")
    lines.append(f"**Full report:** [{cell(run.get('url'))}]({as_str(run.get('url'))})")
    lines += _verdict_lines(as_dict(report.get("verdict")))
    causes = as_dict(report.get("causes"))
    if causes.get("summary"):
        lines.append(f"**Why it failed:** {cell(causes.get('summary'))}")
    steps = as_dicts(report.get("next_steps"))
    if steps:
        lines.append("**Next steps:**\n\n" + "\n".join(
            f"{index}. {cell(step.get('text'))}" + (f" ([{cell(step.get('link_text'))}]({as_str(step.get('href'), 1000)}))"
                                                    if step.get("href") else "")
            for index, step in enumerate(steps, start=1)))
    rows = [[cell(s.get("name")), f"{ICONS.get(as_str(s.get('state')), '')} {cell(s.get('shown_state') or s.get('state'))}",
             _seconds(s.get("duration_s")), cell(s.get("summary"))] for s in as_dicts(report.get("stages"))]
    # One paragraph per line: a single newline is a line break in a GitHub comment but runs the lines
    # together in a Markdown file and on the report page.
    return "\n\n".join(line for line in lines if line) + "\n\n" + table(["Stage", "State", "Time", "Summary"], rows)


def _verdict_lines(verdict: JsonDict) -> list[str]:
    """What a partial run did not check, and a warning when results came from a fake GPU."""
    lines = []
    unchecked = as_dicts(verdict.get("unchecked"))
    if unchecked:
        items = "; ".join(f"{cell(u.get('label') or u.get('stage'))}: {cell(u.get('reason'))}" for u in unchecked)
        lines.append(f"**Verdict:** {cell(verdict.get('state'))}, not checked: {items}")
    if verdict.get("fake_gpu"):
        lines.append("> ⚠️ **Fake GPU:** some results come from devices faked with `MIGRATOR_FAKE_GPUS` (test/demo mode); "
                     "they say nothing about real hardware.")
    return lines


def _comparison(report: JsonDict) -> str:
    comparison = as_dict(report.get("comparison"))
    if not comparison:
        return ""
    marks = {"better": "🟢 better", "worse": "🔴 worse", "same": "same", "settings": "⚙️ settings changed"}
    rows = [[cell(c.get("what")), cell(c.get("before")), cell(c.get("after")), marks.get(as_str(c.get("direction")), "")]
            for c in as_dicts(comparison.get("changes")) if c.get("direction") != "same"]
    body = table(["What", "Before", "After", ""], rows) if rows else "No stage state or count changed."
    settings = as_dicts(comparison.get("settings_changes"))
    if settings:
        body += "\n\n**Settings changed:** " + "; ".join(
            f"{code(s.get('setting'))} {code(s.get('before'))} → {code(s.get('after'))}" for s in settings)
    for label, key in (("New findings", "new_findings"), ("Resolved findings", "resolved_findings")):
        items = as_list(comparison.get(key))
        if items:
            more = f" and {len(items) - MAX_LISTED_FINDINGS} more" if len(items) > MAX_LISTED_FINDINGS else ""
            body += f"\n\n**{label} ({len(items)}):** " + ", ".join(code(i) for i in items[:MAX_LISTED_FINDINGS]) + more
    previous = as_dict(comparison.get("previous_run"))
    title = f"Compared with run #{as_int(previous.get('number'))}: {as_str(comparison.get('verdict'))}"
    return details(title, body, open_=as_int(comparison.get("worse")) > 0)


def _translation(report: JsonDict) -> str:
    t = as_dict(report.get("translation"))
    if not t:
        return ""
    families = sorted(set(as_dict(t.get("converted_by_family"))) | set(as_dict(t.get("unconverted_by_family"))))
    converted, unconverted = as_dict(t.get("converted_by_family")), as_dict(t.get("unconverted_by_family"))
    body = table(["Family", "Converted", "Unconverted"],
                 [[cell(f), str(as_int(converted.get(f))), str(as_int(unconverted.get(f)))] for f in families])
    top = as_dicts(t.get("top_unconverted"))
    if top:
        rows = [[code(u.get("name")), str(as_int(u.get("count"))), cell(u.get("family")),
                 ", ".join(code(loc) for loc in as_list(u.get("locations")))] for u in top]
        body += "\n\n**Top unconverted APIs**\n\n" + table(["API", "Count", "Family", "Where"], rows)
    title = (f"Translation ({cell(t.get('engine'))}): {as_int(t.get('changed'))} of {counted(as_int(t.get('files')), 'file')} changed, "
             f"{as_int(t.get('converted_total'))} converted, {as_int(t.get('unconverted_total'))} unconverted")
    return details(title, body)


def _findings(report: JsonDict) -> str:
    f = as_dict(report.get("findings"))
    if not f:
        return ""
    severity = as_dict(f.get("by_severity"))
    rows = [[cell(r.get("severity")), code(r.get("rule_id")), f"{code(r.get('file'))}:{as_int(r.get('line'))}",
             code(r.get("text")), "yes" if r.get("fixable") else "", cell(r.get("notebook_slug"))]
            for r in as_dicts(f.get("top"))]
    body = table(["Severity", "Rule", "Where", "Text", "Fixable", "Notebook"], rows) if rows else "No findings."
    readiness = as_dict(f.get("readiness"))
    share = as_float(readiness.get("translatable_share"))
    if share is not None:
        left = as_dict(readiness.get("hand_work_by_kind"))
        kinds = ", ".join(f"{as_int(n)} {_HAND_WORK_WORDS.get(str(k), str(k))}" for k, n in left.items())
        body += (f"\n\n**Readiness:** {share:.0%} of {as_int(readiness.get('items_total'))} items translate automatically "
                 f"({as_int(readiness.get('references_total'))} CUDA references, inline-PTX, WMMA and wave-size sites); "
                 f"hand work {as_int(readiness.get('hand_work'))}" + (f" ({kinds})" if kinds else ""))
        needed = as_list(readiness.get("rocm_libraries_needed"))
        body += f"; ROCm libraries needed: {', '.join(code(x) for x in needed)}" if needed else ""
    title = (f"Build-file findings: {as_int(f.get('total'))} ({as_int(severity.get('error'))} errors, "
             f"{as_int(severity.get('warning'))} warnings, {as_int(f.get('fixable'))} fixable)")
    return details(title, body)


_HAND_WORK_WORDS = {"api": "API references", "inline-ptx": "inline PTX", "tensor-cores": "WMMA", "wavefront": "wave-size"}
TOP_HAZARDS = 40


def _wavefront(report: JsonDict) -> str:
    w = as_dict(report.get("wavefront"))
    if not w or not as_int(w.get("total")):
        return ""
    kinds = as_dict(w.get("by_kind"))
    body = table(["Kind", "Found", "Fixed", "Suggested"],
                 [[code(kind), str(as_int(as_dict(n).get("total"))), str(as_int(as_dict(n).get("fixed"))),
                   str(as_int(as_dict(n).get("suggested")))] for kind, n in kinds.items()])
    hazards = as_dicts(w.get("hazards"))
    rows = [[f"{code(h.get('file'))}:{as_int(h.get('line'))}", code(h.get("kind")), code(h.get("expression")),
             (f"fixed {code(h.get('rule'))}: {code(h.get('fix'))}" if h.get("applied") else f"suggested: {cell(h.get('fix'))}")]
            for h in hazards[:TOP_HAZARDS]]
    body += "\n\n" + table(["Where", "Kind", "Code", "Fix"], rows)
    if len(hazards) > TOP_HAZARDS:
        body += f"\n\n… {len(hazards) - TOP_HAZARDS} more in the JSON report."
    title = (f"Wavefront hazards (code that assumes 32-lane warps; gfx90a/gfx942 run 64): {as_int(w.get('total'))}, "
             f"{as_int(w.get('fixed'))} fixed automatically, {as_int(w.get('suggested'))} to check by hand")
    return details(title, body, open_=as_int(w.get("suggested")) > 0)


def _fixes(report: JsonDict) -> str:
    fixes = as_dicts(report.get("build_fixes"))
    if not fixes:
        return ""
    rows = [[code(x.get("rule_id")), f"{code(x.get('file'))}:{as_int(x.get('line'))}", code(x.get("before")), code(x.get("after"))]
            for x in fixes[:50]]
    return details(f"Applied build fixes: {len(fixes)}", table(["Rule", "Where", "Before", "After"], rows))


def _compile(report: JsonDict) -> str:
    c = as_dict(report.get("compile"))
    if not c:
        return ""
    rows = [[cell(d.get("severity")), f"{code(d.get('file'))}:{as_int(d.get('line'))}", cell(d.get("message")), code(d.get("flag"))]
            for d in as_dicts(c.get("top_diagnostics"))]
    body = table(["Severity", "Where (original source)", "Message", "Flag"], rows) if rows else "No diagnostics."
    failed = as_list(c.get("failed_files"))
    if failed:
        body = "**Failed files:** " + ", ".join(code(x) for x in failed[:30]) + "\n\n" + body
    if c.get("project_build_error"):
        body = f"**Project build:** {cell(c.get('project_build_error'))}\n\n" + body
    parts = as_dicts(c.get("parts"))
    if parts:
        body = table(["Part", "Result", "Summary"], [[cell(p.get("name")), cell(p.get("state")), cell(p.get("summary"))]
                                                    for p in parts]) + "\n\n" + body
    if c.get("checked"):
        runner = "; ".join(code(x) for x in as_list(c.get("would_run"))[:5])
        body = f"**Checked:** {cell(c.get('checked'))}." + (f" A ROCm PyTorch runner would run: {runner}" if runner
                                                            else "") + "\n\n" + body
    body = _compiled_with(c) + body
    title = (f"Compile: {counted(as_int(c.get('files')), 'file')}, {counted(as_int(c.get('errors')), 'error')}, "
             f"{counted(as_int(c.get('warnings')), 'warning')} "
             f"(cache {as_int(c.get('cache_hits'))} hits)")
    return details(title, body, open_=as_int(c.get("errors")) > 0)


def _compiled_with(c: JsonDict) -> str:
    """``**Toolchain:** rocm-7.2 (HIP 7.2.53211, clang 22.1.8) · **Targets:** gfx90a, gfx942, gfx1100 ...``."""
    tc = as_dict(c.get("toolchain"))
    parts = []
    if tc.get("name"):
        parts.append(f"**Toolchain:** {code(tc.get('name'))} (HIP {code(tc.get('hip_version'))}, clang {code(tc.get('clang_version'))})")
    if as_list(c.get("offload_archs")):
        parts.append("**Targets:** " + ", ".join(code(a) for a in as_list(c.get("offload_archs"))))
    if as_list(c.get("hip_defines")):
        parts.append("**Defined for this HIP:** " + ", ".join(code(d) for d in as_list(c.get("hip_defines"))))
    line = " · ".join(parts)
    failing = {f: as_list(t) for f, t in as_dict(c.get("failed_by_target")).items() if as_list(t)}
    if failing:
        rows = [[code(f), ", ".join(code(a) for a in archs)] for f, archs in list(failing.items())[:30]]
        line += ("\n\n**Fails for:** " + ", ".join(code(a) for a in as_list(c.get("failed_targets"))) + "\n\n"
                 + table(["File", "Failing targets"], rows))
    archs = [str(a) for a in as_list(c.get("offload_archs"))]
    held = {o: [str(a) for a in as_list(t)] for o, t in as_dict(c.get("outputs_by_target")).items()}
    if held and archs:  # a project's own build: the device code each output holds
        rows = [[code(o), *("yes" if a in found else "**missing**" for a in archs)] for o, found in list(held.items())[:30]]
        line += "\n\n**Device code in the build's outputs:**\n\n" + table(["Output", *archs], rows)
    return line + "\n\n" if line else ""


def _link(report: JsonDict) -> str:
    link = as_dict(report.get("link"))
    if not link:
        return ""
    targets = ", ".join(f"{code(t.get('name'))} {cell(t.get('status'))}" for t in as_dicts(link.get("targets")))
    rows = [[cell(p.get("kind")), code(p.get("symbol") or p.get("library")), code(p.get("replacement")), cell(p.get("message"))]
            for p in as_dicts(link.get("problems"))]
    body = f"**Targets:** {targets or 'none'}" + ("\n\n" + table(["Problem", "Symbol/library", "ROCm replacement", "Message"], rows) if rows else "")
    return details(f"Link: {as_int(link.get('problems_total'))} problems", body, open_=bool(rows))


def _smoke(report: JsonDict) -> str:
    s = as_dict(report.get("smoke"))
    if not s:
        return ""
    lines = [f"**Exit:** {cell(s.get('signal') or s.get('exit_code'))} in {_seconds(s.get('duration_s'))}" if s.get("ran")
             else f"**{_sentence(cell(s.get('not_run') or 'not run'))}.**"]
    if s.get("fake_gpu"):
        lines.insert(0, "⚠️ **Ran on a fake GPU** (`MIGRATOR_FAKE_GPUS`): this result says nothing about real hardware.")
    if s.get("classification"):
        lines.append(f"**Classified as:** {code(s.get('classification'))}: {cell(s.get('evidence'))}")
    checks = as_dicts(s.get("checks"))
    if checks:
        rows = [[cell(c.get("name")), "skipped" if c.get("skipped") else "✅" if c.get("passed") else "❌", cell(c.get("detail"))] for c in checks]
        lines.append(table(["Check", "Result", "Detail"], rows))
    reference = as_dict(s.get("reference"))
    if reference:
        if reference.get("reuse_note"):
            lines.append(f"**CUDA reference reuse:** {cell(reference.get('reuse_note'))}")
        lines.append(f"**CUDA reference:** {cell(reference.get('summary') or 'not available')}; "
                     f"comparison {cell(reference.get('comparison') or 'not made')} {cell(reference.get('comparison_detail'))}")
    reference_run = as_dict(report.get("reference"))
    if reference_run:
        state = as_str(reference_run.get("shown_state") or reference_run.get("state"))
        summary = as_str(reference_run.get("summary"))
        lines.append(f"**CUDA reference run:** {cell(summary if summary.startswith(state) else f'{state}: {summary}')}")
    title = f"Smoke{' [fake GPU]' if s.get('fake_gpu') else ''}: {cell(s.get('classification') or ('ran' if s.get('ran') else s.get('not_run') or 'not run'))}"
    return details(title, "\n\n".join(lines))


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _notebook(report: JsonDict) -> str:
    matches = as_dicts(report.get("notebook_matches"))
    if not matches:
        return ""
    rows = [[cell(m.get("stage")), f"[{cell(m.get('title') or m.get('slug'))}]({as_str(m.get('url'))})" if m.get("url")
             else cell(m.get("title") or m.get("slug")), code(m.get("line"))] for m in matches[:30]]
    return details(f"Error notebook matches: {len(matches)}", table(["Stage", "Entry", "Matched line"], rows), open_=True)


def _python(report: JsonDict) -> str:
    py = as_dict(report.get("python"))
    if not py:
        return ""
    rows = [[cell(f.get("severity")), code(f.get("rule_id")), f"{code(f.get('file'))}:{as_int(f.get('line'))}",
             code(f.get("text")), code(f.get("replacement")) if f.get("fixable") else "by hand"]
            for f in as_dicts(py.get("findings"))[:60]]
    body = table(["Severity", "Rule", "Where", "Text", "Fix"], rows) if rows else "No GPU touchpoints found."
    if as_int(py.get("listed")) > len(rows):
        body += f"\n\n{as_int(py.get('listed')) - len(rows)} more in the JSON report."
    title = (f"Python and configuration findings: {as_int(py.get('total'))} ({as_int(py.get('fixed_automatically'))} "
             f"fixed automatically, {as_int(py.get('hand_work'))} by hand, {as_int(py.get('informational'))} to check)")
    return details(title, body)


def _dependency_set(item: JsonDict) -> str:
    resolution = as_dict(item.get("resolution"))
    torch = as_dict(item.get("torch"))
    own = ", the project's ROCm file" if item.get("rocm_file") else ""
    lines = [f"**{code(item.get('id'))}** ({cell(item.get('kind'))}{own}): {cell(resolution.get('state'))}"
             f"{' / ' + cell(resolution.get('status')) if resolution.get('status') else ''} — {cell(resolution.get('message'))}"]
    if torch:
        lines.append(f"torch {code(torch.get('build'))}: {cell(torch.get('note'))}")
    rows = [[code(e.get("name")), cell(e.get("action")), code(e.get("rocm_requirement")), cell(e.get("note"))]
            for e in as_dicts(item.get("changes"))]
    if rows:
        lines.append(table(["Package", "On ROCm", "Requirement", "How"], rows))
    lines += [f"- ⚠️ {cell(p)}" for p in [*as_list(item.get("problems")), *as_list(resolution.get("problems"))]]
    lines += [f"- {cell(n)}" for n in [*as_list(item.get("notes")), *as_list(resolution.get("notes"))]]
    if resolution.get("no_wheel"):
        lines.append("No wheel on the index: " + ", ".join(code(r) for r in as_list(resolution.get("no_wheel"))))
    return "\n\n".join(lines)


def _dependencies(report: JsonDict) -> str:
    deps = as_dict(report.get("dependencies"))
    if not deps:
        return ""
    parts = [cell(deps.get("summary"))]
    if deps.get("state") == "resolving":
        parts.append(f"⏳ Resolving… {as_int(deps.get('resolving'))} install set(s) still queued or running.")
    files = as_dicts(deps.get("rocm_files"))
    if files:
        parts.append("**The project's own ROCm files (used as they are):** " + "; ".join(
            f"{code(f.get('file'))}: {cell(f.get('detail'))}" for f in files))
    if deps.get("cuda_packages"):
        parts.append("**CUDA-only or CUDA-built:** " + ", ".join(code(n) for n in as_list(deps.get("cuda_packages"))))
    parts += [_dependency_set(item) for item in as_dicts(deps.get("sets"))]
    title = f"Dependencies for ROCm {cell(deps.get('rocm_version'))}: {len(as_list(deps.get('sets')))} install sets" + (
        ", resolving…" if deps.get("state") == "resolving" else f", {as_int(deps.get('problems'))} problems")
    return details(title, "\n\n".join(parts), open_=as_int(deps.get("problems")) > 0)


SECTIONS = (_comparison, _translation, _findings, _wavefront, _python, _dependencies, _fixes, _compile, _link, _smoke, _notebook)


def render_markdown(report: JsonDict, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """The report as Markdown of at most ``limit`` characters (parts that do not fit are left out)."""
    url = as_str(as_dict(report.get("run")).get("url"), 1000)
    note = TRUNCATION_NOTE.format(url=url)
    parts = [_header(report)] + [text for text in (section(report) for section in SECTIONS) if text]
    full = "\n\n".join(parts) + "\n"
    if len(full) <= limit:
        return full
    kept: list[str] = []
    budget = limit - len(note)
    for part in parts:
        if sum(len(p) + 2 for p in kept) + len(part) + 2 <= budget:
            kept.append(part)
    text = "\n\n".join(kept)
    if not kept:
        text = parts[0][: max(0, budget)]
    return (text + note)[:limit]


def export_markdown(report: JsonDict) -> str:
    """The whole report as Markdown, for the report page and the downloads (not cut to a comment)."""
    return render_markdown(report, limit=EXPORT_LIMIT)
