"""A project's progress over its runs as an inline SVG: one small line chart per measure.

Each measure has its own scale (translated files and unconverted references differ by orders of
magnitude), so the chart is a column of sparklines sharing the run axis. Pure: no Django; the
caller marks the returned text safe. Every number reaching the SVG is formatted by us, every
label escaped.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH, ROW_HEIGHT, VALUE_WIDTH, LEFT = 760, 62, 60, 8
LABEL_BASELINE, PLOT_TOP, PLOT_BOTTOM = 14, 22, 54  # label above each row's plot band


@dataclass(frozen=True)
class Series:
    label: str
    values: tuple[int | None, ...]  # one per run; None where the run did not get that far
    better: str  # "up" or "down": which way is progress


def _points(values: Sequence[int | None], top: float, plot_width: float) -> list[tuple[float, float, int]]:
    step = plot_width / max(1, len(values) - 1)
    span = max(1.0, top)
    band = PLOT_BOTTOM - PLOT_TOP
    return [(LEFT + i * step, PLOT_TOP + band * (1 - v / span), v) for i, v in enumerate(values) if v is not None]


def _row(series: Series, runs: Sequence[int], y0: int) -> str:
    plot_width = WIDTH - LEFT - VALUE_WIDTH - 10
    known = [v for v in series.values if v is not None]
    points = _points(series.values, float(max(known, default=0)), plot_width)
    direction = "higher" if series.better == "up" else "lower"
    parts = [f'<g transform="translate(0,{y0})" class="series">',
             f'<text x="{LEFT}" y="{LABEL_BASELINE}" class="label">{escape(series.label)}'
             f'<tspan class="muted"> · {direction} is better</tspan></text>',
             f'<line x1="{LEFT}" x2="{LEFT + plot_width}" y1="{PLOT_BOTTOM}" y2="{PLOT_BOTTOM}" class="axis"/>']
    if len(points) > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
        parts.append(f'<polyline points="{path}" class="line"/>')
    index = [i for i, v in enumerate(series.values) if v is not None]
    for (x, y, value), i in zip(points, index, strict=True):
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5"><title>run #{runs[i]}: {value}</title></circle>')
    last = f"{known[-1]}" if known else "–"
    parts.append(f'<text x="{WIDTH - VALUE_WIDTH + 8}" y="{(PLOT_TOP + PLOT_BOTTOM) // 2 + 5}" class="value">{last}</text></g>')
    return "".join(parts)


def render_progress_svg(runs: Sequence[int], series: Sequence[Series]) -> str:
    """An SVG (as text) with one row per series over ``runs`` (run numbers, oldest first)."""
    height = ROW_HEIGHT * len(series) + 24
    rows = "".join(_row(s, runs, i * ROW_HEIGHT) for i, s in enumerate(series))
    first, last = (runs[0], runs[-1]) if runs else (0, 0)
    axis = (f'<text x="{LEFT}" y="{height - 6}" class="muted">run #{first}</text>'
            f'<text x="{WIDTH - VALUE_WIDTH - 10}" y="{height - 6}" text-anchor="end" class="muted">run #{last}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
            f'aria-label="Progress over {len(runs)} runs" class="progress-chart">{rows}{axis}</svg>')
