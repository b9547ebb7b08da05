"""First start: make sure someone can sign in, and load the notebook's seed entries."""
from __future__ import annotations

import os
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from migrator.accounts.actions import create_user_and_team


class Command(BaseCommand):
    help = "Create the first user and team when none exists; load seed data. Safe to run at every start."

    def handle(self, *args: Any, **options: Any) -> None:
        if not get_user_model().objects.exists():
            username = os.environ.get("MIGRATOR_USER", "admin")
            password = os.environ.get("MIGRATOR_PASSWORD") or secrets.token_urlsafe(12)
            team = os.environ.get("MIGRATOR_TEAM", "My team")
            create_user_and_team(username, password, team, superuser=True)
            note = settings.VAR_DIR / "first-login.txt"
            note.write_text(f"username: {username}\npassword: {password}\n")
            note.chmod(0o600)
            self.stdout.write(f"first user created: {username} / {password} (also in {note}), team {team!r}")
        else:
            self.stdout.write("users exist already; sign in with yours (create more: manage.py create_team_user)")
        call_command("seed_notebook", verbosity=0)
