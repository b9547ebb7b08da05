"""What the rewrite passes share: the text being rewritten, the notes, the port-header sections asked for.

Passes never add or remove a line break (a multi-line construct keeps its line count), so a position in
the text always has the line it had in the original: every note and inventory entry is on the CUDA side.
"""
from __future__ import annotations

from translator.account import Finding, RewriteNote
from translator.options import TranslateOptions
from translator.rules import Rule

__all__ = ["RewriteContext", "RewriteNote"]


class RewriteContext:
    """Plain class, not a dataclass: building a dataclass costs a fresh process milliseconds at import."""

    __slots__ = ("text", "path", "options", "rules", "notes", "sections", "handled", "unconverted", "warnings", "side",
                 "disabled")

    def __init__(self, text: str, path: str, options: TranslateOptions, rules: dict[str, Rule]) -> None:
        self.text = text
        self.path = path
        self.options = options
        self.rules = rules
        self.notes: list[RewriteNote] = []
        self.sections: set[str] = set()  # hip_port header sections the file needs
        self.handled: set[str] = set()  # CUDA names a rewrite took care of: not reported
        self.unconverted: list[Finding] = []  # constructs left for a person, with the reason
        self.warnings: list[str] = []
        self.side = "left"  # "right" once the passes run on the translated text
        self.disabled: list[tuple[int, int]] = []  # original lines a rewrite took out of the build

    def is_disabled(self, line: int) -> bool:
        return any(first <= line <= last for first, last in self.disabled)

    def line(self, position: int) -> int:
        return self.text.count("\n", 0, position) + 1

    def note(self, rule: str, position: int, message: str) -> None:
        self.notes.append(RewriteNote(rule=rule, side=self.side, line=self.line(position), message=message))

    def insert(self, position: int, new: str) -> None:
        """Insert ``new`` (after the scan only): the translated-side notes below it move down."""
        if self.side != "right":
            raise ValueError("lines are inserted only into the translated text")
        line, added = self.line(position), new.count("\n")
        for note in self.notes:
            if note["side"] == "right" and note["line"] >= line:
                note["line"] += added
        self.text = self.text[:position] + new + self.text[position:]

    def leave(self, name: str, position: int, reason: str) -> None:
        line = self.line(position)
        column = position - self.text.rfind("\n", 0, position)
        self.unconverted.append(Finding(name=name, line=line, column=column, reason=reason))

    def replace(self, start: int, end: int, new: str) -> int:
        """Put ``new`` in place of ``text[start:end]``, padded with the line breaks it removed; returns
        the end of the replacement."""
        lost = self.text.count("\n", start, end) - new.count("\n")
        if lost < 0:
            raise ValueError("a rewrite may not add lines")
        new += "\n" * lost
        self.text = self.text[:start] + new + self.text[end:]
        return start + len(new)

    @property
    def is_c(self) -> bool:
        return self.path.endswith(".c")
