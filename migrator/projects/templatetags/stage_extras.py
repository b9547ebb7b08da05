"""Small filters for the run page's stage panels (durations, shares, dict keys with dashes)."""
from __future__ import annotations

from collections.abc import Mapping

from django import template

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
