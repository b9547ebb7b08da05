"""Forms for projects and runs; every query parameter and POST body goes through one of these."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django import forms
from django.conf import settings as django_settings

from migrator.accounts.models import Team
from migrator.projects.actions import settings_to_store
from migrator.projects.constants import REUSABLE_STAGE_STATES, STAGE_NAMES
from migrator.projects.models import Stage
from worker.project_settings import SettingsError, check_source_subdir
from worker.sources.gitsource import GitSourceError, check_git_url, check_ref
from worker.sources.hostguard import HostPolicy


def git_url_policy() -> HostPolicy:
    """The addresses a git URL may name: public ones, plus the networks an operator trusts."""
    return HostPolicy.build([], django_settings.MIGRATOR_GIT_TRUSTED_NETWORKS)


def _check_url(url: str, allow_local: bool) -> str:
    try:
        return check_git_url(url, allow_local=allow_local, policy=git_url_policy())
    except GitSourceError as exc:
        raise forms.ValidationError(str(exc)) from exc


def _check_ref(ref: str) -> str:
    try:
        return check_ref(ref)
    except GitSourceError as exc:
        raise forms.ValidationError(str(exc)) from exc


class NewProjectForm(forms.Form):
    name = forms.CharField(max_length=120)
    team = forms.ModelChoiceField(queryset=Team.objects.none())
    archive = forms.FileField(required=False, help_text=".zip, .tar, .tar.gz or .tgz")
    git_url = forms.CharField(required=False, max_length=500, label="Git URL")
    git_ref = forms.CharField(required=False, max_length=200, label="Branch, tag or commit")
    source_subdir = forms.CharField(required=False, max_length=300, label="Only this directory",
                                    help_text="e.g. sgl-kernel: a large repository is fetched as a sparse clone")

    def __init__(self, *args: Any, teams: Any, allow_local_git: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams  # type: ignore[attr-defined]
        first = teams.first()
        if first is not None:
            self.fields["team"].initial = first.pk
        self.allow_local_git = allow_local_git

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        has_archive, has_git = bool(data.get("archive")), bool(data.get("git_url"))
        if has_archive == has_git:
            raise forms.ValidationError("Upload an archive or give a git URL (one of the two).")
        if has_git:
            data["git_url"] = _check_url(data["git_url"], self.allow_local_git)
            data["git_ref"] = _check_ref(data.get("git_ref", ""))
        return data

    def clean_source_subdir(self) -> str:
        value = str(self.cleaned_data.get("source_subdir") or "").strip()
        try:
            return check_source_subdir(value)
        except SettingsError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def project_settings(self) -> dict[str, object]:
        """The settings the new project starts with (only what differs from the defaults)."""
        subdir = self.cleaned_data.get("source_subdir")
        return {"source_subdir": subdir} if subdir else {}


class StartRunForm(forms.Form):
    ref = forms.CharField(required=False, max_length=200, label="Branch, tag or commit")
    archive = forms.FileField(required=False, help_text="a new archive for this run")
    pr_url = forms.URLField(required=False, max_length=500, label="Pull request URL", assume_scheme="https")

    def clean_ref(self) -> str:
        return _check_ref(self.cleaned_data.get("ref", ""))


class RerunForm(forms.Form):
    from_stage = forms.ChoiceField(choices=[(n, n) for n in STAGE_NAMES], initial="fetch")

    @classmethod
    def for_run(cls, stages: Sequence[Stage]) -> RerunForm:
        """Only stages whose earlier stages all passed can be re-run from; the first failed one is the default."""
        form = cls(initial={"from_stage": default_rerun_stage(stages)})
        form.fields["from_stage"].choices = [(n, n) for n in rerunnable_stages(stages)]  # type: ignore[attr-defined]
        return form


def rerunnable_stages(stages: Sequence[Stage]) -> list[str]:
    names = []
    for stage in sorted(stages, key=lambda s: s.position):
        names.append(stage.name)
        if stage.state not in REUSABLE_STAGE_STATES:
            break
    return names


def default_rerun_stage(stages: Sequence[Stage]) -> str:
    """The first stage that did not pass (failed, skipped, cancelled), else fetch."""
    allowed = rerunnable_stages(stages)
    last = next((s for s in stages if s.name == allowed[-1]), None) if allowed else None
    return last.name if last is not None and last.state not in REUSABLE_STAGE_STATES else "fetch"


class LiveForm(forms.Form):
    v = forms.IntegerField(required=False, min_value=0)


class LogForm(forms.Form):
    offset = forms.IntegerField(required=False, min_value=0)


class StageChoiceForm(forms.Form):
    stage = forms.ChoiceField(required=False, choices=[(n, n) for n in STAGE_NAMES])


class SettingsForm(forms.Form):
    """The whole settings object as JSON, validated by ProjectSettings (one source of truth)."""

    settings_json = forms.CharField(widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false"}), label="Settings")

    def clean_settings_json(self) -> dict[str, Any]:
        try:
            raw = json.loads(self.cleaned_data["settings_json"] or "{}")
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not valid JSON: {exc}") from exc
        if not isinstance(raw, dict):
            raise forms.ValidationError("settings must be a JSON object")
        try:
            return settings_to_store(raw)
        except SettingsError as exc:
            raise forms.ValidationError(str(exc)) from exc
