"""Small filters for the run page's stage panels (durations, waits, shares, dict keys with dashes)."""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from django import template
from django.utils import timezone

from migrator.projects.models import ReferenceRun, Stage
from migrator.projects.verdict import shown_state
from worker.wording import wait_text

register = template.Library()


@register.filter
def duration(seconds: object) -> str:
    """``3.341`` -> ``3.3 s``; ``125`` -> ``2 min 5 s``; anything else -> ``""``."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


@register.filter
def state_label(row: Stage | ReferenceRun) -> str:
    """A stage's or CUDA reference's state as the page words it ("Not run" for one no runner took)."""
    return shown_state(row, str(row.get_state_display()))


@register.filter
def wait(seconds: object) -> str:
    """A wait limit in seconds as people say it: ``1800`` -> ``30 min``."""
    return wait_text(int(seconds)) if isinstance(seconds, int) and not isinstance(seconds, bool) else ""


@register.filter
def since_s(moment: object) -> int | None:
    """Whole seconds from ``moment`` (a datetime) to now; None for anything else. What a live timer
    (``static/js/elapsed.js``) starts counting from."""
    if not isinstance(moment, datetime):
        return None
    return max(0, int((timezone.now() - moment).total_seconds()))


@register.filter
def clock(seconds: object) -> str:
    """Elapsed whole seconds as a timer shows them: ``42 s``, ``3 min 05 s``, ``1 h 02 min``
    (``static/js/elapsed.js`` writes the same)."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return ""
    total = max(0, int(seconds))
    if total < 60:
        return f"{total} s"
    if total < 3600:
        return f"{total // 60} min {total % 60:02d} s"
    return f"{total // 3600} h {total % 3600 // 60:02d} min"


@register.filter
def percent(share: object, digits: int = 0) -> str:
    """A share between 0 and 1 as a percentage: ``0.9091`` -> ``91%``."""
    if isinstance(share, bool) or not isinstance(share, (int, float)):
        return ""
    return f"{share * 100:.{int(digits)}f}%"


@register.filter
def get(mapping: object, key: object) -> object:
    """``mapping|get:key`` for keys a template cannot spell (``kernel-launch``), ``""`` when absent."""
    if isinstance(mapping, Mapping):
        return mapping.get(key, "")
    return ""


@register.filter
def by_count(mapping: object, field: str = "") -> list[tuple[object, object]]:
    """A dict's items, largest count first (PostgreSQL's jsonb does not keep key order).

    ``counts|by_count`` sorts by the values; ``languages|by_count:"lines"`` by a field of each value.
    """
    if not isinstance(mapping, Mapping):
        return []

    def count(item: tuple[object, object]) -> float:
        value = item[1].get(field, 0) if field and isinstance(item[1], Mapping) else item[1]
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0

    return sorted(mapping.items(), key=lambda item: (-count(item), str(item[0])))
