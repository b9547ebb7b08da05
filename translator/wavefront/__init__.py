"""Wavefront hazards: CUDA device code that assumes 32-lane warps and so compiles, yet is wrong, on the
64-lane wavefronts of AMD's data-centre GPUs (gfx90a, gfx942; RDNA's gfx1100 runs 32 lanes).

``scan_source(text, facts)`` finds them in the bodies of ``__global__`` and
``__device__`` functions (and in macro bodies, for masks), each with its kind (``model.KINDS``), line,
expression, why and fix. ``apply_fixes`` applies the fixes whose meaning is certain (``model.FIX_RULES``:
full masks become 64-bit, ballots counted with ``__popcll`` and kept in 64 bits); a project can
disable each rule. ``file_facts`` gives a file's constants and device macros, ``TreeFacts.of`` merges them for a tree.
Standard library only; see docs/wavefront.md.
"""
from __future__ import annotations

from translator.wavefront.constants import TreeFacts
from translator.wavefront.fix import apply_fixes
from translator.wavefront.model import FIX_RULES, KINDS, Hazard, HazardData
from translator.wavefront.scan import file_facts, scan_source

__all__ = ["FIX_RULES", "KINDS", "Hazard", "HazardData", "TreeFacts", "apply_fixes", "file_facts", "scan_source"]
