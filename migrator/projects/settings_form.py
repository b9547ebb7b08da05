"""Project settings as a form: one field per setting, with help, checked field by field.

The fields are built from ``ProjectSettings`` itself (so a new setting appears here), each value is
validated alone so every bad field shows its own message, then the whole object once more. Values
equal to the defaults are not stored (``actions.settings_to_store``).
"""
from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any

from django import forms
from django.conf import settings as django_settings

from migrator.projects.actions import settings_to_store
from migrator.projects.settings_help import GROUPS, HELP
from worker.project_settings import ProjectSettings, SettingsError

LIST_HELP = " One per line."
JSON_SETTINGS = ("smoke_checks", "smoke_preset")  # structured values, edited as JSON


def _empty_json(name: str) -> Any:
    return {} if isinstance(getattr(ProjectSettings(), name), dict) else []


def _field_for(name: str, hint: Any, default: Any) -> forms.Field:
    help_text = HELP.get(name, "")
    if typing.get_origin(hint) is typing.Literal:
        return forms.ChoiceField(choices=[(v, v) for v in typing.get_args(hint)], help_text=help_text)
    if name in JSON_SETTINGS or isinstance(default, dict):
        return forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}), help_text=help_text)
    if isinstance(default, bool):
        return forms.BooleanField(required=False, help_text=help_text)
    if isinstance(default, int):
        return forms.IntegerField(help_text=help_text)
    if isinstance(default, tuple):
        return forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false"}),
                               help_text=help_text + LIST_HELP)
    return forms.CharField(required=False, help_text=help_text)


def initial_values(settings: ProjectSettings) -> dict[str, Any]:
    values = settings.to_dict()
    for name, value in values.items():
        if name in JSON_SETTINGS or isinstance(value, dict):
            values[name] = json.dumps(value, indent=1) if value else ""
        elif isinstance(value, (list, tuple)):
            values[name] = "\n".join(str(v) for v in value)
    return values


class ProjectSettingsForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        hints = typing.get_type_hints(ProjectSettings)
        defaults = ProjectSettings()
        for field in dataclasses.fields(ProjectSettings):
            self.fields[field.name] = _field_for(field.name, hints[field.name], getattr(defaults, field.name))

    def groups(self) -> list[tuple[str, list[forms.BoundField]]]:
        named = {name for _, names in GROUPS for name in names}
        grouped = [(title, [self[n] for n in names if n in self.fields]) for title, names in GROUPS]
        others = [self[n] for n in self.fields if n not in named]
        return grouped + ([("Other", others)] if others else [])

    def _raw_value(self, name: str, value: Any) -> Any:
        if name in JSON_SETTINGS or isinstance(getattr(ProjectSettings(), name), dict):
            try:
                return json.loads(value) if value and value.strip() else _empty_json(name)
            except json.JSONDecodeError as exc:
                raise SettingsError(f"{name}: not valid JSON: {exc}") from exc
        if isinstance(getattr(ProjectSettings(), name), tuple):
            return [line.strip() for line in (value or "").splitlines() if line.strip()]  # flags may hold commas
        return value

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        raw: dict[str, Any] = {}
        for name in self.fields:
            if name not in data:
                continue  # the field's own type check failed and said so
            try:
                raw[name] = self._raw_value(name, data[name])
                ProjectSettings.from_dict({name: raw[name]}, caps=django_settings.MIGRATOR_SETTING_CAPS)
            except SettingsError as exc:
                self.add_error(name, str(exc).removeprefix(f"{name}: "))
        if not self.errors:
            try:
                data["settings"] = settings_to_store(raw)
            except SettingsError as exc:
                self.add_error(None, str(exc))
        return data
