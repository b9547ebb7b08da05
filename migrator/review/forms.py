"""Query parameters of the review pages (every one goes through a Form)."""
from __future__ import annotations

from typing import Literal

from django import forms

from migrator.review.filelist import FILTER_CHOICES, FileFilter
from worker.delivery.model import MODES

ViewKind = Literal["split", "unified"]


class FileFilterForm(forms.Form):
    show = forms.ChoiceField(choices=FILTER_CHOICES, required=False, label="Show")

    def which(self) -> FileFilter:
        value = self.cleaned_data.get("show") if self.is_valid() else ""
        return value or "changed"  # type: ignore[return-value]


class DeliveryModeForm(forms.Form):
    """Which delivery's files the run's diff view shows ("" = the translation, file by file)."""

    delivery = forms.ChoiceField(choices=[(m, m) for m in MODES], required=False)

    def mode(self) -> str:
        return str(self.cleaned_data.get("delivery") or "") if self.is_valid() else ""


class DiffViewForm(forms.Form):
    """How a file's diff is shown: side by side or unified, folded or whole, from which row."""

    view = forms.ChoiceField(choices=[("split", "Side by side"), ("unified", "Unified")], required=False)
    full = forms.BooleanField(required=False)
    start = forms.IntegerField(min_value=0, required=False)

    def view_kind(self) -> ViewKind:
        return "unified" if self.cleaned_data.get("view") == "unified" else "split"

    def start_row(self) -> int:
        return self.cleaned_data.get("start") or 0


class FoldForm(DiffViewForm):
    fold = forms.IntegerField(min_value=0)
