"""Build files follow ``rename_cu_to_hip``: when the translation wrote ``x.hip`` in place of ``x.cu``,
every reference to ``x.cu`` (and ``%.cu``/``*.cu`` patterns where renamed files live) names ``.hip``."""
from __future__ import annotations

import posixpath
import re

from worker.scanning.model import RuleHit, ScanContext, make_hit

_CU_REFERENCE = re.compile(r"(?<![\w.-])([\w./${}()*%+-]*?)\.cu(?![\w.])")


def renamed_source_hits(rel: str, line: str, ctx: ScanContext) -> list[RuleHit]:
    if not ctx.renamed_cu or line.lstrip().startswith("#"):
        return []
    folder = posixpath.dirname(rel)
    below = [p for p in ctx.renamed_cu if not folder or p.startswith(folder + "/")]
    hits = []
    for m in _CU_REFERENCE.finditer(line):
        stem = m.group(1)
        name = stem.rsplit("/", 1)[-1]
        if any(c in name for c in "*%$") or not name:
            renamed = bool(below)
        else:
            renamed = any(p.rsplit("/", 1)[-1] == f"{name}.cu" for p in ctx.renamed_cu)
        if renamed:
            hits.append(make_hit(m, "renamed-source", "error", "The translation renamed this CUDA source to .hip "
                                 "(rename_cu_to_hip); the build must name the new file.", replacement=f"{stem}.hip"))
    return hits
