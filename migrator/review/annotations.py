"""Margin notes of one file's diff, collected from the run's stage data.

- Unconverted CUDA identifiers (hipify account): on the original (left) side, at the line
  the translator found them; reason "unsupported", "newer-than-target", ...
- Rewrites of constructs without a one-to-one HIP counterpart (``translator.rewrites``): with their
  rule id, on the side the account names (the original's line, or the translated one's for fixes made
  after the scan).
- Wavefront hazards (code that assumes 32-lane warps) and the inline PTX / WMMA the translation
  left (hipify account): on the original side, at their line, with the fix applied or suggested.
- Build-file fixes the hipify stage applied: on the translated (right) side, with their rule.
- Compile diagnostics: on the translated (right) side, at the compiler's line.

Findings without a usable line (an external engine reports line 0, a driver error has no
file line) come back as notes the page lists above the diff.
"""
from __future__ import annotations

from migrator.lib.diffview.models import Annotation, Side
from migrator.projects.models import Run
from migrator.review.stagedata import JsonDict, account_entries, as_int, build_fixes, diagnostics
from migrator.review.tree import FilePair, ReviewTree

KIND_UNCONVERTED = "unconverted"
KIND_DEPRECATED = "deprecated"
KIND_FIX = "fix"
KIND_REWRITE = "rewrite"
KIND_DIAGNOSTIC = "diagnostic"
KIND_WAVEFRONT = "wavefront"
KIND_HAND_WORK = "hand-work"


def file_annotations(run: Run, tree: ReviewTree, pair: FilePair) -> list[Annotation]:
    """Every note for `pair`, the identifier ones from the whole translation account."""
    notes = translation_notes(account_entries(run, tree.records, full=True), pair.original_path)
    notes += fix_notes(build_fixes(run), pair.translated_path)
    notes += diagnostic_notes(diagnostics(run, tree.records), pair.translated_path)
    return notes


def translation_notes(entries: list[JsonDict], original_path: str) -> list[Annotation]:
    entry = next((e for e in entries if e.get("path") == original_path), None)
    if entry is None:
        return []
    notes = [
        _note("left", f.get("line"), KIND_UNCONVERTED, "warning",
              f"{f.get('name', '?')} not converted ({f.get('reason', 'unsupported')})")
        for f in _findings(entry.get("unconverted"))
    ]
    notes += [
        _note("left", f.get("line"), KIND_DEPRECATED, "note", f"{f.get('name', '?')}: {f.get('reason', 'deprecated')}")
        for f in _findings(entry.get("deprecated"))
    ]
    notes += [
        _note("right" if f.get("side") == "right" else "left", f.get("line"), KIND_REWRITE, "info",
              f"rewrite [{f.get('rule', '?')}]: {f.get('message', '')}")
        for f in _findings(entry.get("rewrites"))
    ]
    notes += [_wavefront_note(h) for h in _findings(entry.get("wavefront"))]
    notes += [
        _note("left", site.get("line"), KIND_HAND_WORK, "warning", f"hand work [{site.get('kind', '?')}]: left as "
              "written; " + ("rewrite it with HIP builtins or AMDGCN assembly" if site.get("kind") == "inline-ptx"
                             else "port it to rocWMMA or MFMA builtins"))
        for site in _findings(entry.get("hand_work"))
    ]
    return notes


def _wavefront_note(hazard: JsonDict) -> Annotation:
    """A wave-size hazard: what is wrong on 64-lane wavefronts and the fix the translation applied or suggests."""
    kind = str(hazard.get("kind", "?"))
    where = "also on wave32; " if hazard.get("wave32") else ""
    if hazard.get("applied"):
        return _note("left", hazard.get("line"), KIND_WAVEFRONT, "info",
                     f"wavefront [{kind}] fixed [{hazard.get('rule', '')}]: {hazard.get('expression', '')} → "
                     f"{hazard.get('fix', '')} ({where}{hazard.get('why', '')})")
    return _note("left", hazard.get("line"), KIND_WAVEFRONT, "warning",
                 f"wavefront [{kind}]: {hazard.get('expression', '')}: {where}{hazard.get('why', '')}. "
                 f"Suggested: {hazard.get('fix', '')}")


def fix_notes(fixes: list[JsonDict], translated_path: str) -> list[Annotation]:
    return [
        _note("right", fix.get("line"), KIND_FIX, "info",
              f"build fix [{fix.get('rule_id', '?')}]: {str(fix.get('before', '')).strip()} "
              f"→ {str(fix.get('after', '')).strip()}")
        for fix in fixes
        if fix.get("file") == translated_path
    ]


def diagnostic_notes(items: list[JsonDict], translated_path: str) -> list[Annotation]:
    notes: list[Annotation] = []
    for item in items:
        if item.get("file") != translated_path:
            continue
        column = as_int(item.get("column"))
        where = f"col {column}: " if column else ""
        severity = str(item.get("severity", "error"))
        notes.append(_note("right", item.get("line"), KIND_DIAGNOSTIC, severity,
                           f"{severity}: {where}{item.get('message', '')}"))
    return notes


def _findings(value: object) -> list[JsonDict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _note(side: Side, line: object, kind: str, severity: str, message: str) -> Annotation:
    return Annotation(side=side, line=as_int(line), kind=kind, severity=severity, message=message)
