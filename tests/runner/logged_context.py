"""A stage context that keeps what the stage logged, for the stage tests to read back."""
from __future__ import annotations

from dataclasses import dataclass, field

from worker.context import StageContext


@dataclass
class LoggedContext(StageContext):
    """``log`` appends to ``lines`` unless a test sets another: stages only ever call ``ctx.log``."""

    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.log = self.lines.append
