"""Defensive readers for stage data: stored JSON written by stage modules that may change or be absent."""
from __future__ import annotations

JsonDict = dict[str, object]


def as_dict(value: object) -> JsonDict:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else []


def as_dicts(value: object) -> list[JsonDict]:
    return [as_dict(item) for item in as_list(value) if isinstance(item, dict)]


def as_int(value: object) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def as_float(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def as_str(value: object, limit: int = 500) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def counts(value: object) -> dict[str, int]:
    """A name -> count mapping, sorted by count, largest first."""
    items = [(str(k), as_int(v)) for k, v in as_dict(value).items()]
    return dict(sorted(items, key=lambda item: (-item[1], item[0])))
