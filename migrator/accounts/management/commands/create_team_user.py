"""First start: create a user and their team in one go."""
from __future__ import annotations

import os
import secrets
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from migrator.accounts.actions import create_user_and_team


class Command(BaseCommand):
    help = "Create a user (or reset their password) and make them owner of a team."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("team")
        parser.add_argument("--password", help="default: $MIGRATOR_PASSWORD, else a generated one (printed)")
        parser.add_argument("--email", default="")
        parser.add_argument("--superuser", action="store_true", help="also give access to the admin")

    def handle(self, *args: Any, **options: Any) -> None:
        password = options["password"] or os.environ.get("MIGRATOR_PASSWORD") or secrets.token_urlsafe(12)
        user, team, created = create_user_and_team(
            options["username"], password, options["team"], email=options["email"], superuser=options["superuser"]
        )
        verb = "created" if created else "updated"
        self.stdout.write(f"user {user.get_username()} {verb}, owner of team {team.name}")
        if not options["password"] and not os.environ.get("MIGRATOR_PASSWORD"):
            self.stdout.write(f"password: {password}")
