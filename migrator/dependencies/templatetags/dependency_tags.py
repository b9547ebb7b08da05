"""``{% run_dependencies run %}``: the run's dependency section, for pages of other apps (the scan panel)."""
from __future__ import annotations

from django import template

from migrator.dependencies.views import run_section

register = template.Library()


@register.inclusion_tag("dependencies/_run_dependencies.html")
def run_dependencies(run: object) -> dict[str, object]:
    run_id = getattr(run, "pk", None)
    return {"run": run, "deps": run_section(run_id) if isinstance(run_id, int) else None}
