"""Notebook forms: signatures are written one per line, ``regex: <pattern>`` or plain text."""
from __future__ import annotations

from typing import Any

from django import forms

from migrator.notebook.actions import EntryData, NotebookError
from migrator.projects.constants import STAGE_NAMES

STAGE_CHOICES = [(name, name) for name in STAGE_NAMES]


def parse_signature_lines(text: str) -> list[tuple[str, str]]:
    signatures = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.lower().startswith("regex:"):
            signatures.append(("regex", line[6:].strip()))
        elif line.lower().startswith("text:"):
            signatures.append(("text", line[5:].strip()))
        else:
            signatures.append(("text", line))
    return signatures


def signature_lines(signatures: list[tuple[str, str]]) -> str:
    return "\n".join(f"regex: {p}" if k == "regex" else f"text: {p}" for k, p in signatures)


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.replace("\n", ",").split(",") if item.strip()]


class EntryForm(forms.Form):
    title = forms.CharField(max_length=200)
    symptom = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    signatures = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text="One per line. Plain text (matched ignoring case, paths and numbers) or 'regex: <pattern>'.",
    )
    stages = forms.MultipleChoiceField(choices=STAGE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple)
    cause = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}), help_text="Markdown")
    fix = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 8}), help_text="Markdown")
    tags = forms.CharField(required=False, max_length=500, help_text="comma-separated")
    links = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text="one URL per line")
    note = forms.CharField(required=False, max_length=200, label="Edit note")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        entry = EntryData(
            title=data["title"], symptom=data["symptom"], signatures=parse_signature_lines(data["signatures"]),
            cause=data.get("cause", ""), fix=data.get("fix", ""), stages=list(data.get("stages", [])),
            tags=_split(data.get("tags", "")), links=[u.strip() for u in data.get("links", "").splitlines() if u.strip()],
        )
        try:
            entry.validate()
        except NotebookError as exc:
            raise forms.ValidationError(str(exc)) from exc
        data["entry"] = entry
        return data


class SearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=2000)
    stage = forms.ChoiceField(required=False, choices=[("", "any stage"), *STAGE_CHOICES])
    tag = forms.CharField(required=False, max_length=60)


class PrefillForm(forms.Form):
    line = forms.CharField(required=False, max_length=4000)
    stage = forms.ChoiceField(required=False, choices=[("", ""), *STAGE_CHOICES])
    run = forms.IntegerField(required=False, min_value=1)


class ImportForm(forms.Form):
    file = forms.FileField()
