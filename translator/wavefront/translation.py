"""The hazard scan as one step of a translation: scan the original text, apply the certain fixes whose
rule is not disabled, and hand back the fixed text (same lines: fixes never add or remove one) and the
hazards for the file's account, at their original lines."""
from __future__ import annotations

from translator.options import TranslateOptions
from translator.wavefront.constants import NO_FACTS
from translator.wavefront.fix import apply_fixes
from translator.wavefront.model import HazardData
from translator.wavefront.scan import scan_source


def prepare(text: str, options: TranslateOptions) -> tuple[str, list[HazardData]]:
    if not options.wavefront_scan:
        return text, []
    hazards = scan_source(text, options.wavefront_facts or NO_FACTS)
    if not hazards:
        return text, []
    fixed, hazards = apply_fixes(text, hazards, options.disabled_rules)
    return fixed, [hazard.to_dict() for hazard in hazards]
