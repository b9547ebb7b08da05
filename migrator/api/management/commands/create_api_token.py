"""``manage.py create_api_token <team> [--name N]``: make an API token and print it once."""
from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand, CommandError

from migrator.accounts.models import Team
from migrator.api.models import create_token


class Command(BaseCommand):
    help = "Create an API token for a team and print it (only its hash is stored)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("team", help="team name or slug")
        parser.add_argument("--name", default="", help="a label to tell tokens apart")

    def handle(self, *args: object, **options: object) -> None:
        wanted = str(options["team"])
        team = Team.objects.filter(name=wanted).first() or Team.objects.filter(slug=wanted).first()
        if team is None:
            raise CommandError(f"no team named {wanted!r}")
        _, value = create_token(team, str(options["name"]))
        self.stdout.write(value)
