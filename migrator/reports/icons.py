"""Our own SVG icons in place of the emoji of the Markdown report, for the report page.

The Markdown keeps its emoji (a pull-request comment shows them with the host's fonts), but a browser
without a colour-emoji font (Debian's Chromium with only DejaVu) draws them as empty boxes. The report
page swaps each for a small inline SVG drawn here, with its word as the accessible name. Inline markup
with presentation attributes only: nothing the page's Content-Security-Policy would block.
"""
from __future__ import annotations

import re

from django.utils.html import escape

_SHAPES = {
    "passed": ('<circle cx="8" cy="8" r="7" fill="#1f7a3a"/>'
               '<path d="M4.5 8.3l2.3 2.3 4.7-4.9" fill="none" stroke="#fff" stroke-width="1.8"/>'),
    "failed": ('<circle cx="8" cy="8" r="7" fill="#b3262d"/>'
               '<path d="M5.3 5.3l5.4 5.4M10.7 5.3l-5.4 5.4" stroke="#fff" stroke-width="1.8"/>'),
    "partial": '<circle cx="8" cy="8" r="6.2" fill="none" stroke="#b7791f" stroke-width="1.6"/><path d="M8 1.8a6.2 6.2 0 0 1 0 12.4z" fill="#b7791f"/>',
    "skipped": '<path d="M3 3.5l6 4.5-6 4.5zM9 3.5l5 4.5-5 4.5z" fill="#8a8f96"/>',
    "cancelled": '<circle cx="8" cy="8" r="7" fill="#5b6168"/><path d="M4.5 8h7" stroke="#fff" stroke-width="2"/>',
    "running": '<circle cx="8" cy="8" r="6.2" fill="none" stroke="#1f5fa8" stroke-width="1.6"/><path d="M8 4v4l3 2" fill="none" stroke="#1f5fa8" stroke-width="1.6"/>',
    "queued": '<circle cx="8" cy="8" r="6.2" fill="none" stroke="#9aa5b1" stroke-width="1.6"/><path d="M8 4v4h3" fill="none" stroke="#9aa5b1" stroke-width="1.6"/>',
    "not applicable": '<path d="M3.5 8h9" stroke="#8a94a0" stroke-width="2"/>',
    "warning": ('<path d="M8 1.5l7 12.5H1z" fill="#9a6700"/>'
                '<path d="M8 6v4" stroke="#fff" stroke-width="1.6"/><circle cx="8" cy="12" r=".9" fill="#fff"/>'),
    "better": '<circle cx="8" cy="8" r="5.5" fill="#1f7a3a"/>',
    "worse": '<circle cx="8" cy="8" r="5.5" fill="#b3262d"/>',
    "settings": ('<circle cx="8" cy="8" r="4.2" fill="none" stroke="#5b6168" stroke-width="2.4" stroke-dasharray="2.2 1.1"/>'
                 '<circle cx="8" cy="8" r="1.6" fill="#5b6168"/>'),
    "cut": '<path d="M3 3l10 10M13 3L3 13" stroke="#5b6168" stroke-width="1.6"/>',
}
# Each emoji the Markdown uses (markdown.py), with or without the emoji presentation selector.
EMOJI = {
    "✅": "passed", "❌": "failed", "🟡": "partial", "⏭": "skipped", "⛔": "cancelled", "⏳": "running",
    "🕒": "queued", "➖": "not applicable", "⚠": "warning", "🟢": "better", "🔴": "worse", "⚙": "settings",
    "✂": "cut",
}
_PATTERN = re.compile("(" + "|".join(re.escape(e) for e in EMOJI) + ")\ufe0f?")


def icon(name: str) -> str:
    return (f'<svg class="icon icon-{name.replace(" ", "-")}" viewBox="0 0 16 16" width="16" height="16" '
            f'role="img" aria-label="{escape(name)}">{_SHAPES[name]}</svg>')


def with_icons(html: str) -> str:
    """``html`` (already sanitised) with every report emoji replaced by its SVG icon."""
    return _PATTERN.sub(lambda found: icon(EMOJI[found.group(1)]), html)
