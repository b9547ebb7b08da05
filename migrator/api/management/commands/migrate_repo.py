"""Run the migration pipeline on a path or git URL, synchronously, printing one line per stage."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from migrator.api.cli import choose_team, exit_code, format_stage_line, migrate_repo, run_link, write_report
from migrator.projects.actions import ActionError
from migrator.projects.models import Run
from migrator.projects.verdict import run_verdict
from migrator.reports.delivery import OFFERED, deliver_run
from migrator.reports.delivery_text import delivery_lines
from migrator.reports.models import PortState
from worker.delivery.model import MODES
from worker.project_settings import SettingsError
from worker.sources.gitsource import GitSourceError


class Command(BaseCommand):
    help = (
        "Migrate a CUDA repository (archive, directory or git URL) and print per-stage results. "
        "Exit status: 0 passed, 3 partial (nothing failed, some stage not checked), 1 failed or cancelled."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", metavar="PATH_OR_URL")
        parser.add_argument("--ref", default="", help="branch, tag or commit (git sources)")
        parser.add_argument("--report", type=Path, help="write a report: .json (default) or .md")
        parser.add_argument(
            "--team", default="", help="team owning the project (created if missing); default: the first user's team"
        )
        parser.add_argument("--project", default="", help="project name (default: from the path or URL)")
        parser.add_argument("--project-settings", dest="project_settings", default=None, help="project settings as a JSON object")
        parser.add_argument("--deliver", metavar="BRANCH", default="",
                            help="after the run, verify the port on both sides and push it to the git source as BRANCH "
                                 "(with a host token: open or update its pull request)")
        parser.add_argument("--delivery", choices=MODES, default="single-source",
                            help="single-source (default): CUDA stays the source, HIP is made at build time; "
                                 "copy: the translated tree as its own branch")

    def handle(self, *args: Any, **options: Any) -> None:
        settings = json.loads(options["project_settings"]) if options["project_settings"] else None
        try:
            team = choose_team(options["team"])
            run = migrate_repo(
                options["source"], ref=options["ref"], team=team, project_name=options["project"],
                settings=settings, on_stage=lambda stage: None,
            )
        except (ActionError, GitSourceError, SettingsError) as exc:
            raise CommandError(str(exc)) from exc
        if not team.memberships.exists():
            self.stderr.write(f"team {team.name!r} has no members: add one to open its runs "
                              f"(manage.py create_team_user USER {team.name!r})")
        for stage in run.stages.all():
            self.stdout.write(format_stage_line(stage))
        verdict = run_verdict(run)
        self.stdout.write(f"run #{run.number} of {run.project.name} (team {team.name}): {verdict.headline()} (run id {run.pk})")
        self.stdout.write(f"report: {run_link(run)}")
        if options["report"]:
            write_report(run, options["report"])
            self.stdout.write(f"report written to {options['report']}")
        code = exit_code(run.state)
        if options["deliver"]:
            code = self._deliver(run, options["deliver"], options["delivery"]) or code
        if code:
            raise SystemExit(code)


    def _deliver(self, run: Run, branch: str, mode: str) -> int:
        """Print the delivery's outcome; 1 when nothing was offered (nor handed to a CUDA runner to finish)."""
        try:
            attempt = deliver_run(run, branch, mode)
        except ActionError as exc:
            raise CommandError(f"delivery: {exc}") from exc
        assert attempt is not None  # only a redelivery that requires the branch head skips
        for line in delivery_lines(attempt):
            self.stdout.write(line)
        return 0 if attempt.state in OFFERED or attempt.state == PortState.VERIFYING else 1
